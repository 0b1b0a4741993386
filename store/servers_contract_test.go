package store

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func serverUpsert(name string, parts ...Part) ServerUpsert {
	return ServerUpsert{
		SlugBase: strings.ToLower(strings.ReplaceAll(strings.ReplaceAll(name, "/", "-"), ".", "-")),
		Name:     name, Source: "registry",
		Listing: Listing{ServerName: name, Title: "Title of " + name, Description: "What " + name + " does",
			Website: "https://" + name, Version: "1.0.0", Document: []byte(`{"name":"` + name + `"}`),
			RegistryMeta: []byte(`{"isLatest":true}`), Status: StatusActive},
		Parts: parts,
		Due:   []Due{{Reason: ReasonCadence, At: t0}},
	}
}

var (
	remoteA = Part{Kind: KindRemote, Locator: "https://a.example.com/mcp", Transport: "streamable-http"}
	npmA    = Part{Kind: KindNPM, Locator: "pkg:npm/a-mcp", Version: "1.0.0"}
	repoA   = Part{Kind: KindGitHub, Locator: "https://github.com/acme/a"}
	ociA    = Part{Kind: PartOCI, Locator: "docker.io/acme/a:1.0.0"}
)

// TestUpsertServer: a server is one entry with its parts; re-importing it changes
// nothing; a changed listing or part set updates the entry, never its slug or history;
// parts held by another entry are reported, not moved; a bare reference of a part
// finds the server's entry; a one-part entry becomes the server's entry.
func TestUpsertServer(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		u := serverUpsert("com.example/a", remoteA, npmA, repoA, ociA)
		res, err := s.UpsertServer(ctx, u)
		if err != nil || !res.Created || res.Updated || len(res.Conflicts) != 0 {
			t.Fatalf("UpsertServer = %+v, %v", res, err)
		}
		e := res.Entry
		if e.Kind != KindRemote || e.Locator != remoteA.Locator || e.ServerName != "com.example/a" || !e.Listed || e.Title != "Title of com.example/a" {
			t.Errorf("entry = %+v", e)
		}
		l, parts, err := s.EntryListing(ctx, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		if want := []Part{remoteA, npmA, repoA, ociA}; !reflect.DeepEqual(parts, want) {
			t.Errorf("parts = %+v, want %+v", parts, want)
		}
		if l.Description != u.Listing.Description || string(l.Document) != string(u.Listing.Document) ||
			string(l.RegistryMeta) != `{"isLatest":true}` || l.Status != StatusActive || l.UpdatedAt.IsZero() {
			t.Errorf("listing = %+v", l)
		}
		if ds, err := s.DueTimes(ctx, e.ID); err != nil || len(ds) != 1 {
			t.Errorf("due times = %+v, %v", ds, err)
		}

		// Again: nothing changes.
		again, err := s.UpsertServer(ctx, u)
		if err != nil || again.Created || again.Updated || again.Entry.ID != e.ID {
			t.Errorf("UpsertServer again = %+v, %v", again, err)
		}
		// A bare reference of one of its parts is the server's entry.
		got, created, err := s.AddEntry(ctx, NewEntry{SlugBase: "a-mcp", Kind: KindNPM, Locator: npmA.Locator, Name: "a-mcp", Source: "import"})
		if err != nil || created || got.ID != e.ID {
			t.Errorf("AddEntry of a server's package = %+v, %v, %v", got, created, err)
		}

		// A new version: the listing and parts change, the slug stays.
		u2 := u
		u2.Listing.Version, u2.Listing.Description = "1.1.0", "Now better"
		u2.Parts = []Part{remoteA, repoA}
		up, err := s.UpsertServer(ctx, u2)
		if err != nil || up.Created || !up.Updated || up.Entry.Slug != e.Slug {
			t.Fatalf("UpsertServer of a new version = %+v, %v", up, err)
		}
		if l, parts, _ := s.EntryListing(ctx, e.ID); l.Version != "1.1.0" || len(parts) != 2 || !l.UpdatedAt.After(time.Time{}) {
			t.Errorf("after the update: %+v %+v", l, parts)
		}

		// Another server listing the same repository and its own remote: the repository
		// stays with the first, reported.
		b := serverUpsert("com.example/b", Part{Kind: KindRemote, Locator: "https://b.example.com/mcp"}, repoA)
		rb, err := s.UpsertServer(ctx, b)
		if err != nil || !rb.Created || len(rb.Conflicts) != 1 || rb.Conflicts[0].Part != repoA || rb.Conflicts[0].EntrySlug != e.Slug {
			t.Fatalf("UpsertServer with a taken part = %+v, %v", rb, err)
		}
		// A server whose every checked part is taken makes no entry.
		if _, err := s.UpsertServer(ctx, serverUpsert("com.example/c", remoteA)); !errors.Is(err, ErrPartsTaken) {
			t.Errorf("UpsertServer with every part taken: %v, want ErrPartsTaken", err)
		}
		// The primary part taken: the next checked part leads.
		rd, err := s.UpsertServer(ctx, serverUpsert("com.example/d", remoteA, Part{Kind: KindPyPI, Locator: "pkg:pypi/d"}))
		if err != nil || rd.Entry.Kind != KindPyPI || len(rd.Conflicts) != 1 {
			t.Errorf("UpsertServer with its remote taken = %+v, %v", rd, err)
		}

		// A one-part entry from a bare reference becomes the server's entry.
		bare, _, err := s.AddEntry(ctx, NewEntry{SlugBase: "bare", Kind: KindRemote, Locator: "https://bare.example.com/mcp", Name: "bare", Source: "import"})
		if err != nil {
			t.Fatal(err)
		}
		adopt, err := s.UpsertServer(ctx, serverUpsert("com.example/bare", Part{Kind: KindRemote, Locator: "https://bare.example.com/mcp"}, Part{Kind: KindNPM, Locator: "pkg:npm/bare"}))
		if err != nil || adopt.Created || !adopt.Updated || adopt.Entry.ID != bare.ID || adopt.Entry.ServerName != "com.example/bare" {
			t.Errorf("UpsertServer over a bare entry = %+v, %v", adopt, err)
		}

		// Deleted: unlisted, out of the directory and the schedule; active again: back.
		del := u2
		del.Listing.Status = StatusDeleted
		if r, err := s.UpsertServer(ctx, del); err != nil || !r.Updated || r.Entry.Listed {
			t.Fatalf("UpsertServer deleted = %+v, %v", r, err)
		}
		inDirectory := func() bool {
			page, err := s.Directory(ctx, DirectoryQuery{Limit: 100, CountEntries: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range page.Rows {
				if r.Entry.ID == e.ID {
					return true
				}
			}
			return false
		}
		scheduled := func() bool {
			ds, err := s.DueBefore(ctx, t0.Add(time.Hour), 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range ds {
				if d.EntryID == e.ID {
					return true
				}
			}
			return false
		}
		if inDirectory() || scheduled() {
			t.Error("a deleted listing is still in the directory or the schedule")
		}
		if en, err := s.EntryByID(ctx, e.ID); err != nil || en.Listed {
			t.Errorf("EntryByID of an unlisted entry = %+v, %v", en, err)
		}
		if r, err := s.UpsertServer(ctx, u2); err != nil || !r.Updated || !r.Entry.Listed {
			t.Fatalf("UpsertServer active again = %+v, %v", r, err)
		}
		if !inDirectory() || !scheduled() {
			t.Error("a listing active again is not back in the directory and the schedule")
		}

		// Bad input is refused with nothing stored.
		for _, bad := range []ServerUpsert{
			{SlugBase: "x", Parts: nil},
			{SlugBase: "x", Parts: []Part{ociA}},
			{SlugBase: "x", Parts: []Part{{Kind: "ftp", Locator: "x"}}},
			{SlugBase: "x", Parts: []Part{{Kind: KindRemote, Locator: ""}}},
			{SlugBase: "x", Parts: []Part{{Kind: KindRemote, Locator: "https://x.example.com"}}, Listing: Listing{Status: "gone"}},
			{SlugBase: "x", Parts: []Part{{Kind: KindRemote, Locator: "https://x.example.com"}}, Listing: Listing{Title: strings.Repeat("t", 201)}},
			{SlugBase: "X!", Parts: []Part{{Kind: KindRemote, Locator: "https://x.example.com"}}},
		} {
			if _, err := s.UpsertServer(ctx, bad); err == nil {
				t.Errorf("UpsertServer(%+v) accepted", bad)
			}
		}
		if _, err := s.Entry(ctx, "x"); !errors.Is(err, ErrNotFound) {
			t.Errorf("a refused server was stored: %v", err)
		}
	})
}

// TestListings: servers in name order, paged, filtered by update time, search and
// listing status, each with its parts.
func TestListings(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		names := []string{"io.github.z/last", "com.example/b", "com.example/a", "ai.other/Mixed"}
		for i, n := range names {
			p := Part{Kind: KindRemote, Locator: "https://" + strings.ReplaceAll(n, "/", ".") + ".example.com/mcp"}
			u := serverUpsert(n, p, Part{Kind: KindNPM, Locator: "pkg:npm/p" + string(rune('a'+i))})
			if _, err := s.UpsertServer(ctx, u); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := s.AddEntry(ctx, NewEntry{SlugBase: "unnamed", Kind: KindRemote, Locator: "https://unnamed.example.com", Name: "u", Source: "import"}); err != nil {
			t.Fatal(err)
		}
		list := func(q ListingQuery) []string {
			t.Helper()
			sls, err := s.Listings(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, sl := range sls {
				if len(sl.Parts) != 2 || sl.Parts[0].Kind != KindRemote || sl.Listing.ServerName != sl.Entry.ServerName {
					t.Errorf("listing %+v", sl)
				}
				out = append(out, sl.Entry.ServerName)
			}
			return out
		}
		if got, want := list(ListingQuery{}), []string{"ai.other/Mixed", "com.example/a", "com.example/b", "io.github.z/last"}; !reflect.DeepEqual(got, want) {
			t.Errorf("Listings = %v, want %v", got, want)
		}
		if got := list(ListingQuery{AfterName: "com.example/a", Limit: 1}); !reflect.DeepEqual(got, []string{"com.example/b"}) {
			t.Errorf("page after com.example/a = %v", got)
		}
		if got := list(ListingQuery{Name: "com.example/b"}); len(got) != 1 {
			t.Errorf("by name = %v", got)
		}
		if got := list(ListingQuery{Search: "MIXED"}); !reflect.DeepEqual(got, []string{"ai.other/Mixed"}) {
			t.Errorf("search = %v", got)
		}
		if got := list(ListingQuery{UpdatedSince: time.Now().Add(time.Hour)}); len(got) != 0 {
			t.Errorf("updated since the future = %v", got)
		}
		if got := list(ListingQuery{UpdatedSince: time.Now().Add(-time.Hour)}); len(got) != 4 {
			t.Errorf("updated since an hour ago = %v", got)
		}
		u := serverUpsert("com.example/a", Part{Kind: KindRemote, Locator: "https://com.example.a.example.com/mcp"}, Part{Kind: KindNPM, Locator: "pkg:npm/pc"})
		u.Listing.Status = StatusDeprecated
		if _, err := s.UpsertServer(ctx, u); err != nil {
			t.Fatal(err)
		}
		if got := list(ListingQuery{}); len(got) != 3 {
			t.Errorf("listed after deprecating one = %v", got)
		}
		if got := list(ListingQuery{IncludeUnlisted: true}); len(got) != 4 {
			t.Errorf("with the unlisted = %v", got)
		}
	})
}

func TestRegistrySyncState(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		const base = "https://registry.example.com"
		if r, err := s.RegistrySyncState(ctx, base); err != nil || r != (RegistrySync{BaseURL: base}) {
			t.Fatalf("no state = %+v, %v", r, err)
		}
		want := RegistrySync{BaseURL: base, Since: ms(t0), WalkSince: ms(t0.Add(-time.Hour)), Cursor: "c/2",
			WalkNewest: ms(t0.Add(time.Minute)), WalkStarted: ms(t0.Add(2 * time.Minute)), Servers: 42}
		for range 2 {
			if err := s.SaveRegistrySync(ctx, want); err != nil {
				t.Fatal(err)
			}
			if got, err := s.RegistrySyncState(ctx, base); err != nil || got != want {
				t.Errorf("state = %+v, %v; want %+v", got, err, want)
			}
			want.Cursor, want.WalkSince, want.WalkNewest, want.WalkStarted, want.Finished = "", time.Time{}, time.Time{}, time.Time{}, ms(t0.Add(time.Hour))
		}
		if err := s.SaveRegistrySync(ctx, RegistrySync{BaseURL: base, Cursor: strings.Repeat("c", 4097)}); err == nil {
			t.Error("a cursor over 4096 bytes was saved")
		}
	})
}

func TestHTTPCache(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		if _, err := s.HTTPCache(ctx, "GET https://registry.npmjs.org/x"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("HTTPCache of nothing: %v", err)
		}
		e := HTTPCacheEntry{Key: "GET https://registry.npmjs.org/x", Status: 200, ETag: `"abc"`,
			LastModified: "Tue, 01 Dec 2026 10:00:00 GMT", Header: []byte(`{"Content-Type":["application/json"]}`),
			Body: []byte(`{"name":"x"}`), StoredAt: ms(t0)}
		for range 2 {
			if err := s.PutHTTPCache(ctx, e); err != nil {
				t.Fatal(err)
			}
			got, err := s.HTTPCache(ctx, e.Key)
			if err != nil || !reflect.DeepEqual(got, e) {
				t.Errorf("HTTPCache = %+v, %v; want %+v", got, err, e)
			}
			e.ETag, e.Body, e.Header, e.StoredAt = `"def"`, []byte{}, nil, ms(t0.Add(time.Hour))
		}
		old := HTTPCacheEntry{Key: "GET https://old.example/", Status: 200, Body: []byte("x"), StoredAt: ms(t0.Add(-48 * time.Hour))}
		if err := s.PutHTTPCache(ctx, old); err != nil {
			t.Fatal(err)
		}
		if n, err := s.PruneHTTPCache(ctx, t0.Add(-24*time.Hour)); err != nil || n != 1 {
			t.Errorf("PruneHTTPCache = %d, %v; want 1", n, err)
		}
		if _, err := s.HTTPCache(ctx, old.Key); !errors.Is(err, ErrNotFound) {
			t.Errorf("a pruned response is still kept: %v", err)
		}
		if _, err := s.HTTPCache(ctx, e.Key); err != nil {
			t.Errorf("a recent response was pruned: %v", err)
		}
		for _, bad := range []HTTPCacheEntry{
			{Key: "", Status: 200, StoredAt: t0},
			{Key: "k", Status: 0, StoredAt: t0},
			{Key: "k", Status: 200},
			{Key: "k", Status: 200, StoredAt: t0, Body: make([]byte, MaxHTTPCacheBody+1)},
		} {
			if err := s.PutHTTPCache(ctx, bad); err == nil {
				t.Errorf("PutHTTPCache(%q, %d, %d bytes) accepted", bad.Key, bad.Status, len(bad.Body))
			}
		}
	})
}

// TestServerRemotes: a server's second remote is an entry of its own (Parent), probed
// on its own schedule without a supply run, shown in its server's digest, not in the
// directory; unlisted when no longer listed, listed again when it comes back; deleted
// with its server.
func TestServerRemotes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		sse := Part{Kind: KindRemote, Locator: "https://a.example.com/sse", Transport: "sse"}
		u := serverUpsert("com.example/a", remoteA, sse, npmA)
		u.Due = []Due{{Reason: ReasonCadence, At: t0}, {Reason: ReasonSupply, At: t0}}
		res, err := s.UpsertServer(ctx, u)
		if err != nil || !res.Created {
			t.Fatalf("UpsertServer = %+v, %v", res, err)
		}
		server := res.Entry
		d, err := s.EntryDigest(ctx, server.Slug, EntryQuery{})
		if err != nil || len(d.Remotes) != 1 {
			t.Fatalf("EntryDigest remotes = %+v, %v", d.Remotes, err)
		}
		child := d.Remotes[0]
		if child.Parent != server.ID || child.Locator != sse.Locator || child.Kind != KindRemote || !child.Listed ||
			child.Slug != server.Slug+"-remote" || child.Name != server.Name+" (sse)" {
			t.Errorf("the second remote's entry = %+v", child)
		}
		if cd, err := s.EntryDigest(ctx, child.Slug, EntryQuery{}); err != nil || cd.Server == nil || cd.Server.ID != server.ID || d.Server != nil {
			t.Errorf("the second remote's digest names its server %+v, %v (the server's digest: %+v)", cd.Server, err, d.Server)
		}
		if ds, err := s.DueTimes(ctx, child.ID); err != nil || len(ds) != 1 || ds[0].Reason != ReasonCadence {
			t.Errorf("the second remote's due times = %+v, %v (want the cadence only)", ds, err)
		}
		page, err := s.Directory(ctx, DirectoryQuery{Limit: 10, CountEntries: true})
		if err != nil || len(page.Rows) != 1 || page.Entries != 1 || page.Rows[0].Entry.ID != server.ID {
			t.Errorf("directory = %+v, %v: want the server alone", page, err)
		}
		if e, created, err := s.AddEntry(ctx, NewEntry{SlugBase: "sse", Kind: KindRemote, Locator: sse.Locator, Name: "x", Source: "import"}); err != nil || created || e.ID != server.ID {
			t.Errorf("AddEntry of the second remote = %+v, %v, %v: want the server", e, created, err)
		}
		// Again: nothing changes.
		if r, err := s.UpsertServer(ctx, u); err != nil || r.Updated || r.Created {
			t.Errorf("UpsertServer again = %+v, %v", r, err)
		}

		// The sse remote no longer listed: its entry is kept, unlisted; back: listed.
		u2 := u
		u2.Parts = []Part{remoteA, npmA}
		if r, err := s.UpsertServer(ctx, u2); err != nil || !r.Updated {
			t.Fatalf("UpsertServer without the sse remote = %+v, %v", r, err)
		}
		if c, err := s.EntryByID(ctx, child.ID); err != nil || c.Listed {
			t.Errorf("a remote no longer listed = %+v, %v", c, err)
		}
		if d, _ := s.EntryDigest(ctx, server.Slug, EntryQuery{}); len(d.Remotes) != 0 {
			t.Errorf("digest remotes after unlisting = %+v", d.Remotes)
		}
		// Unlisted, its entry still holds the remote: a bare reference finds it, and
		// another server listing it is told so (no unique-key error).
		if e, created, err := s.AddEntry(ctx, NewEntry{SlugBase: "sse", Kind: KindRemote, Locator: sse.Locator, Name: "x", Source: "import"}); err != nil || created || e.ID != child.ID {
			t.Errorf("AddEntry of an unlisted later remote = %+v, %v, %v: want its entry", e, created, err)
		}
		other, err := s.UpsertServer(ctx, serverUpsert("com.example/other", Part{Kind: KindRemote, Locator: "https://other.example.com/mcp"}, sse))
		if err != nil || len(other.Conflicts) != 1 || other.Conflicts[0].EntrySlug != child.Slug {
			t.Errorf("another server listing the remote = %+v, %v", other, err)
		}
		if _, err := s.UpsertServer(ctx, serverUpsert("com.example/third", sse)); !errors.Is(err, ErrPartsTaken) {
			t.Errorf("a server whose only part is the remote: %v, want ErrPartsTaken", err)
		}
		if r, err := s.UpsertServer(ctx, u); err != nil || !r.Updated {
			t.Fatalf("UpsertServer with the sse remote again = %+v, %v", r, err)
		}
		if c, err := s.EntryByID(ctx, child.ID); err != nil || !c.Listed {
			t.Errorf("a remote listed again = %+v, %v", c, err)
		}
		// The first remote no longer listed (and the server deleted): the sse remote,
		// which has an entry of its own, cannot become the server's entry. The listing
		// is updated (the server unlisted), the parts stay, the move is a conflict
		// naming the remote's entry.
		moved := u
		moved.Parts = []Part{sse, npmA}
		moved.Listing.Status, moved.Listing.Title = StatusDeleted, "Gone"
		mv, err := s.UpsertServer(ctx, moved)
		if err != nil || !mv.Updated || len(mv.Conflicts) != 1 || mv.Conflicts[0].EntrySlug != child.Slug || mv.Entry.Listed {
			t.Errorf("UpsertServer moving onto a remote's entry = %+v, %v; want updated, unlisted, a conflict naming %s", mv, err, child.Slug)
		}
		if e, err := s.EntryByID(ctx, server.ID); err != nil || e.Locator != remoteA.Locator || e.Title != "Gone" {
			t.Errorf("the server after a refused move = %+v, %v", e, err)
		}
		if _, parts, _ := s.EntryListing(ctx, server.ID); len(parts) != 3 {
			t.Errorf("parts after a refused move = %+v, want them as they were", parts)
		}
		if _, err := s.UpsertServer(ctx, u); err != nil {
			t.Fatal(err)
		}
		// The server deprecated: its remote follows.
		dep := u
		dep.Listing.Status = StatusDeprecated
		if _, err := s.UpsertServer(ctx, dep); err != nil {
			t.Fatal(err)
		}
		if c, err := s.EntryByID(ctx, child.ID); err != nil || c.Listed {
			t.Errorf("the remote of a deprecated server = %+v, %v", c, err)
		}

		// Deleting the server deletes its remote, each with a tombstone.
		if err := s.DeleteEntry(ctx, server.Slug, "removed by its operator"); err != nil {
			t.Fatal(err)
		}
		for _, id := range []int64{server.ID, child.ID} {
			if _, err := s.EntryByID(ctx, id); !errors.Is(err, ErrNotFound) {
				t.Errorf("entry %d after deleting the server: %v", id, err)
			}
		}
		if ts, err := s.Tombstones(ctx, 0); err != nil || len(ts) != 2 {
			t.Errorf("tombstones = %+v, %v; want the remote's and the server's", ts, err)
		}
	})
}

// TestDeleteServerWhileARemoteIsAdded: a remote added to a server (a registry sync)
// while the server is being deleted is deleted too, with its tombstone.
func TestDeleteServerWhileARemoteIsAdded(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		sse := Part{Kind: KindRemote, Locator: "https://a.example.com/sse", Transport: "sse"}
		u := serverUpsert("com.example/a", remoteA, sse)
		res, err := s.UpsertServer(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		added := false
		setTestBeforeDelete(s, func(slug string) {
			if slug != res.Entry.Slug || added {
				return
			}
			added = true
			more := u
			more.Parts = append(more.Parts, Part{Kind: KindRemote, Locator: "https://a.example.com/ws"})
			if r, err := s.UpsertServer(ctx, more); err != nil || !r.Updated {
				t.Errorf("adding a remote meanwhile: %+v, %v", r, err)
			}
		})
		defer setTestBeforeDelete(s, nil)
		if err := s.DeleteEntry(ctx, res.Entry.Slug, "removed by its operator"); err != nil {
			t.Fatalf("DeleteEntry with a remote added meanwhile: %v", err)
		}
		if !added {
			t.Fatal("the hook did not run")
		}
		if es, err := s.Entries(ctx, 0, 0); err != nil || len(es) != 0 {
			t.Errorf("entries left: %+v, %v", es, err)
		}
		// The sync in between listed the sse remote again (its entry was gone) and the
		// new one: four entries went, each with its tombstone.
		if ts, err := s.Tombstones(ctx, 0); err != nil || len(ts) != 4 {
			t.Errorf("%d tombstones (%v), want the sse remote's twice, the new remote's and the server's", len(ts), err)
		}
	})
}

// TestMigrateServers migrates a store of migration 0007 holding entries of every kind,
// with due times and rounds, to 0008: what it held is unchanged; every entry has its
// primary part, is listed, has no listing and no server; a bare reference of one finds
// it; a server.json naming one as its primary part takes it over.
func TestMigrateServers(t *testing.T) {
	for _, b := range testBackends {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			s := b.openEmpty(t)
			if err := s.(testMigrator).migrateForTest(ctx, 7); err != nil {
				t.Fatalf("migrating through 0007: %v", err)
			}
			var old []Entry
			for i, ne := range []NewEntry{
				{SlugBase: "remote", Kind: KindRemote, Locator: "https://a.example.com/mcp", Name: "a", Source: "import",
					Due: []Due{{Reason: ReasonCadence, At: t0}, {Reason: ReasonStatus, At: t0.Add(time.Hour)}}},
				{SlugBase: "npm", Kind: KindNPM, Locator: "pkg:npm/a", Name: "a", Source: "registry", Cadence: time.Hour},
				{SlugBase: "pypi", Kind: KindPyPI, Locator: "pkg:pypi/a", Name: "a", Source: "import"},
				{SlugBase: "github", Kind: KindGitHub, Locator: "https://github.com/a/a", Name: "a", Source: "import"},
			} {
				e, err := InsertEntryForTest(ctx, s, ne, ne.SlugBase == "npm") // claimed, as an import could before 0016
				if err != nil {
					t.Fatalf("entry %d: %v", i, err)
				}
				old = append(old, e)
			}
			mustSave(t, s, unsignedRound(old[0].ID, t0, t0))
			snapshot := func() [][][]string {
				var out [][][]string
				for _, q := range []struct {
					sql  string
					cols int
				}{
					{`SELECT id, slug, kind, locator, name, source, claimed, cadence_ms, created_at, last_round_at,
						uptime_online_days, uptime_counted_days FROM entries ORDER BY id`, 12},
					{`SELECT entry_id, reason, at FROM due ORDER BY entry_id, reason`, 3},
					{`SELECT id, entry_id, round_id, started_at, coverage FROM rounds ORDER BY id`, 5},
					{`SELECT entry_id, day, status FROM uptime_days ORDER BY entry_id, day`, 3},
				} {
					rows, err := QueryForTest(ctx, s, q.sql, q.cols)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, rows)
				}
				return out
			}
			before := snapshot()
			if err := s.Migrate(ctx); err != nil {
				t.Fatalf("migrating to the newest: %v", err)
			}
			if after := snapshot(); !reflect.DeepEqual(after, before) {
				t.Errorf("0008 changed what the store held:\n got %v\nwant %v", after, before)
			}
			for _, o := range old {
				e, err := s.EntryByID(ctx, o.ID)
				if err != nil || !e.Listed || e.ServerName != "" || e.Parent != 0 || e.Title != "" {
					t.Errorf("entry %s after 0008 = %+v, %v", o.Slug, e, err)
				}
				l, parts, err := s.EntryListing(ctx, o.ID)
				if err != nil || len(parts) != 1 || parts[0] != (Part{Kind: o.Kind, Locator: o.Locator}) ||
					l.Status != StatusActive || l.Document != nil || !l.UpdatedAt.IsZero() {
					t.Errorf("listing of %s after 0008 = %+v %+v, %v", o.Slug, l, parts, err)
				}
				again, created, err := s.AddEntry(ctx, NewEntry{SlugBase: "again", Kind: o.Kind, Locator: o.Locator, Name: "x", Source: "import"})
				if err != nil || created || again.ID != o.ID {
					t.Errorf("AddEntry of %s after 0008 = %+v, %v, %v", o.Slug, again, created, err)
				}
			}
			if ds, err := s.DueBefore(ctx, t0.Add(2*time.Hour), 0); err != nil || len(ds) != 2 {
				t.Errorf("due times after 0008 = %+v, %v", ds, err)
			}
			res, err := s.UpsertServer(ctx, serverUpsert("com.example/a", Part{Kind: KindRemote, Locator: old[0].Locator}, Part{Kind: KindNPM, Locator: "pkg:npm/b"}))
			if err != nil || res.Created || res.Entry.ID != old[0].ID || res.Entry.ServerName != "com.example/a" {
				t.Errorf("a server naming a migrated entry's part = %+v, %v: want that entry taken over", res, err)
			}
			if rs, err := s.Rounds(ctx, old[0].ID, 0); err != nil || len(rs) != 1 {
				t.Errorf("the taken-over entry's rounds = %d, %v", len(rs), err)
			}
		})
	}
}
