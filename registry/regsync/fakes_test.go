package regsync

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/probity-dev/probity/checks/probe/egress"
	"github.com/probity-dev/probity/registry"
	"github.com/probity-dev/probity/store"
)

// ---- servers in the registry's shape, synthesized from real server.json examples ----

// exampleFiles are real server.json documents: the registry's own valid examples and
// the targets package's fixtures (written after the registry's published servers).
var exampleFiles = []string{
	"../testdata/examples/minimal.json",
	"../testdata/examples/with-package.json",
	"../testdata/examples/with-remote.json",
	"../../targets/testdata/good_server_remotes.json",
	"../../targets/testdata/good_server_packages.json",
}

// examples returns the example documents, decoded.
func examples(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, f := range exampleFiles {
		b, err := os.ReadFile(filepath.FromSlash(f))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, m)
	}
	return out
}

// synthServer is server i: example i%5 under the name io.github.probity-test/s-NNNN,
// with every identifier made its own (remote hosts, package names, repository), the
// templated remote filled in, and a repository added to the minimal example, so each
// server's parts are its own and it is one entry.
func synthServer(t testing.TB, ex []map[string]any, i int, version string) map[string]any {
	t.Helper()
	b, err := json.Marshal(ex[i%len(ex)])
	if err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprintf("s-%04d", i)
	s := string(b)
	s = strings.NewReplacer(
		"{host}", id+".hosts.example.com",
		"{region}.", "eu.",
		"api.example.com", id+".api.example.com",
		"mcp.tidewater.example.com", id+".tidewater.example.com",
		"@modelcontextprotocol/server-weather", "@probity-test/"+id,
		"@lumen-notes/mcp-server", "@probity-test/"+id+"-notes",
		"Lumen_Notes.MCP", "Probity_Test."+id,
		"ghcr.io/lumen-notes/mcp-server", "ghcr.io/probity-test/"+id,
		"github.com/modelcontextprotocol/servers", "github.com/probity-test/"+id,
		"github.com/Tidewater-Labs/forecast-mcp", "github.com/probity-test/"+id+"-forecast",
		"github.com/lumen-notes/notes-server", "github.com/probity-test/"+id+"-notes",
	).Replace(s)
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	m["name"] = "io.github.probity-test/" + id
	m["version"] = version
	if _, ok := m["repository"]; !ok && m["packages"] == nil && m["remotes"] == nil {
		m["repository"] = map[string]any{"url": "https://github.com/probity-test/" + id, "source": "github"}
	}
	return m
}

// regItem is one version of one server in the fake registry.
type regItem struct {
	name, version string
	server        map[string]any
	status        string
	latest        bool
	updatedAt     time.Time
}

// t0 is when the synthesized registry's history starts.
var t0 = time.Date(2025, 10, 1, 0, 0, 0, 0, time.UTC)

// synthRegistry returns n servers, each listed once (isLatest, active), and every
// tenth with an older version before it, updated a minute apart in name order.
func synthRegistry(t testing.TB, n int) []*regItem {
	t.Helper()
	ex := examples(t)
	var items []*regItem
	for i := range n {
		at := t0.Add(time.Duration(i) * time.Minute)
		if i%10 == 0 {
			items = append(items, &regItem{name: fmt.Sprintf("io.github.probity-test/s-%04d", i), version: "0.9.0",
				server: synthServer(t, ex, i, "0.9.0"), status: "active", updatedAt: at})
		}
		items = append(items, &regItem{name: fmt.Sprintf("io.github.probity-test/s-%04d", i), version: "1.0.0",
			server: synthServer(t, ex, i, "1.0.0"), status: "active", latest: true, updatedAt: at})
	}
	return items
}

// ---- a registry on loopback that answers GET /v0.1/servers as the official one ----

// fakeRegistry serves its items in (name, version) order, limit per page, with the
// official registry's cursor ("name:version" of the last item of the page before),
// updated_since (updatedAt after it) and include_deleted. fault, when set, may answer a
// request itself (n counts requests from 1).
type fakeRegistry struct {
	t  testing.TB
	mu sync.Mutex
	// items are the registry's contents; tests change them between syncs.
	items    []*regItem
	requests []string
	fault    func(w http.ResponseWriter, r *http.Request, n int) bool
	srv      *httptest.Server
}

func newFakeRegistry(t testing.TB, items []*regItem) *fakeRegistry {
	f := &fakeRegistry{t: t, items: items}
	f.srv = httptest.NewServer(f)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeRegistry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r.URL.RawQuery)
	if f.fault != nil && f.fault(w, r, len(f.requests)) {
		return
	}
	if r.URL.Path != "/v0.1/servers" {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	limit, _ := strconv.Atoi(q.Get("limit"))
	if limit <= 0 || limit > 100 {
		limit = 30
	}
	var since time.Time
	if s := q.Get("updated_since"); s != "" {
		var err error
		if since, err = time.Parse(time.RFC3339Nano, s); err != nil {
			http.Error(w, "bad updated_since", http.StatusBadRequest)
			return
		}
	}
	deleted := q.Get("include_deleted") == "true" || !since.IsZero()
	items := slices.Clone(f.items)
	slices.SortFunc(items, func(a, b *regItem) int { return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.version, b.version)) })
	var out []map[string]any
	next := ""
	cursor := q.Get("cursor")
	for _, it := range items {
		if cursor != "" && it.name+":"+it.version <= cursor {
			continue
		}
		if !since.IsZero() && !it.updatedAt.After(since) || it.status == "deleted" && !deleted {
			continue
		}
		if len(out) == limit {
			next = out[len(out)-1]["server"].(map[string]any)["name"].(string) + ":" + out[len(out)-1]["server"].(map[string]any)["version"].(string)
			break
		}
		at := it.updatedAt.Format(time.RFC3339Nano)
		out = append(out, map[string]any{"server": it.server, "_meta": map[string]any{registry.OfficialMetaKey: map[string]any{
			"status": it.status, "isLatest": it.latest, "publishedAt": t0.Format(time.RFC3339Nano), "updatedAt": at}}})
	}
	meta := map[string]any{"count": len(out)}
	if next != "" {
		meta["nextCursor"] = next
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"servers": out, "metadata": meta})
}

// find returns the item of name and version.
func (f *fakeRegistry) find(name, version string) *regItem {
	for _, it := range f.items {
		if it.name == name && it.version == version {
			return it
		}
	}
	f.t.Fatalf("no item %s %s", name, version)
	return nil
}

// client returns a registry client for f through the egress guard, loopback allowed.
func (f *fakeRegistry) client(t testing.TB, limit int) *registry.Client {
	t.Helper()
	c, err := registry.New(registry.Config{BaseURL: f.srv.URL, Limit: limit,
		HTTPClient: registry.GuardedHTTPClient(egress.Config{AllowLoopback: true})})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ---- a store that keeps store.Store's contract for servers, in memory ----

// fakeStore implements SyncStore as store.Store documents it (servers.go): entries
// found by server name or, for a server without an entry, by the nameless entry that
// holds its primary part; parts unique across entries; Updated only on a change;
// listing status lists and unlists. It counts calls and can fail the n-th upsert.
type fakeStore struct {
	mu      sync.Mutex
	entries []*fakeEntry
	state   map[string]store.RegistrySync
	upserts int
	saves   int
	// failUpsert, when set, is asked before each upsert (n counts from 1).
	failUpsert func(n int) error
}

type fakeEntry struct {
	entry   store.Entry
	listing store.Listing
	parts   []store.Part
	due     []store.Due
}

func newFakeStore() *fakeStore { return &fakeStore{state: map[string]store.RegistrySync{}} }

func (s *fakeStore) holder(p store.Part) *fakeEntry {
	for _, e := range s.entries {
		for _, q := range e.parts {
			if q.Kind == p.Kind && q.Locator == p.Locator {
				return e
			}
		}
	}
	return nil
}

func (s *fakeStore) UpsertServer(ctx context.Context, u store.ServerUpsert) (store.UpsertResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.upserts++
	if s.failUpsert != nil {
		if err := s.failUpsert(s.upserts); err != nil {
			return store.UpsertResult{}, err
		}
	}
	if len(u.Parts) == 0 || !slices.Contains([]string{store.KindRemote, store.KindNPM, store.KindPyPI, store.KindGitHub}, u.Parts[0].Kind) {
		return store.UpsertResult{}, fmt.Errorf("fake store: bad parts %+v", u.Parts)
	}
	if u.Listing.Status == "" {
		u.Listing.Status = store.StatusActive
	}
	var found *fakeEntry
	for _, e := range s.entries {
		if u.Listing.ServerName != "" && e.listing.ServerName == u.Listing.ServerName {
			found = e
		}
	}
	if found == nil {
		if h := s.holder(u.Parts[0]); h != nil {
			if u.Listing.ServerName == "" {
				return store.UpsertResult{Entry: h.entry}, nil
			}
			if h.listing.ServerName == "" {
				found = h
			}
		}
	}
	var res store.UpsertResult
	var keep []store.Part
	for _, p := range u.Parts {
		if h := s.holder(p); h != nil && h != found {
			res.Conflicts = append(res.Conflicts, store.PartConflict{Part: p, EntrySlug: h.entry.Slug})
			continue
		}
		keep = append(keep, p)
	}
	i := slices.IndexFunc(keep, func(p store.Part) bool {
		return slices.Contains([]string{store.KindRemote, store.KindNPM, store.KindPyPI, store.KindGitHub}, p.Kind)
	})
	if i < 0 {
		return res, store.ErrPartsTaken
	}
	ordered := []store.Part{keep[i]}
	ordered = append(ordered, keep[:i]...)
	keep = append(ordered, keep[i+1:]...)
	l := u.Listing
	if found == nil {
		slug := u.SlugBase
		for n := 2; slices.ContainsFunc(s.entries, func(e *fakeEntry) bool { return e.entry.Slug == slug }); n++ {
			slug = fmt.Sprintf("%s-%d", u.SlugBase, n)
		}
		e := &fakeEntry{entry: store.Entry{ID: int64(len(s.entries) + 1), Slug: slug, Kind: keep[0].Kind, Locator: keep[0].Locator,
			Name: u.Name, Source: u.Source, ServerName: l.ServerName, Title: l.Title, Listed: l.Listed()}, listing: l, parts: keep, due: u.Due}
		s.entries = append(s.entries, e)
		res.Entry, res.Created = e.entry, true
		return res, nil
	}
	old := found.listing
	old.UpdatedAt = time.Time{}
	if !sameListing(old, l) || !slices.Equal(found.parts, keep) || found.entry.Name != u.Name {
		found.listing, found.parts = l, keep
		found.entry.Kind, found.entry.Locator, found.entry.Name = keep[0].Kind, keep[0].Locator, u.Name
		found.entry.ServerName, found.entry.Title, found.entry.Listed = l.ServerName, l.Title, l.Listed()
		res.Updated = true
	}
	res.Entry = found.entry
	return res, nil
}

func sameListing(a, b store.Listing) bool {
	return a.ServerName == b.ServerName && a.Title == b.Title && a.Description == b.Description && a.Website == b.Website &&
		a.Version == b.Version && bytes.Equal(a.Document, b.Document) && bytes.Equal(a.RegistryMeta, b.RegistryMeta) && a.Status == b.Status
}

func (s *fakeStore) Listings(ctx context.Context, q store.ListingQuery) ([]store.ServerListing, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []store.ServerListing
	for _, e := range s.entries {
		if e.listing.ServerName == "" || q.Name != "" && e.listing.ServerName != q.Name || !q.IncludeUnlisted && !e.listing.Listed() {
			continue
		}
		out = append(out, store.ServerListing{Entry: e.entry, Listing: e.listing, Parts: e.parts})
	}
	return out, nil
}

func (s *fakeStore) RegistrySyncState(ctx context.Context, base string) (store.RegistrySync, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.state[base]
	if !ok {
		st.BaseURL = base
	}
	return st, nil
}

func (s *fakeStore) SaveRegistrySync(ctx context.Context, st store.RegistrySync) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.BaseURL == "" {
		return errors.New("fake store: no base URL")
	}
	s.saves++
	s.state[st.BaseURL] = st
	return nil
}

// byName returns the entry of a server name, or nil.
func (s *fakeStore) byName(name string) *fakeEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.entries {
		if e.listing.ServerName == name {
			return e
		}
	}
	return nil
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
