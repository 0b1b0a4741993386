package regsync

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/probity-dev/probity/checks/probe/egress"
	"github.com/probity-dev/probity/registry"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/targets"
)

// syncer returns a Syncer of f into st, pages of 100 as the official registry's.
func syncer(t testing.TB, f *fakeRegistry, st SyncStore, overlap time.Duration) *Syncer {
	t.Helper()
	sy, err := NewSyncer(SyncConfig{Store: st, Client: f.client(t, 100), Overlap: overlap,
		Due: func(e store.Entry, now time.Time) []store.Due {
			return []store.Due{{Reason: store.ReasonStatus, At: now.Add(time.Hour)}}
		}})
	if err != nil {
		t.Fatal(err)
	}
	return sy
}

// checkOneEntryEach checks that every active latest server of the registry is one
// entry holding exactly the parts targets reads from its server.json, listed, with the
// latest version's listing; and that there are no other entries.
func checkOneEntryEach(t *testing.T, f *fakeRegistry, st *fakeStore) {
	t.Helper()
	want := 0
	for _, it := range f.items {
		if !it.latest {
			continue
		}
		e := st.byName(it.name)
		if e == nil {
			if it.status == "active" {
				t.Errorf("%s: no entry", it.name)
			}
			continue
		}
		want++
		raw, _ := jsonMarshal(it.server)
		s, _, err := targets.ParseServerJSON(raw)
		if err != nil {
			t.Fatalf("%s: %v", it.name, err)
		}
		var parts []store.Part
		for _, p := range s.Parts {
			parts = append(parts, store.Part{Kind: p.Kind, Locator: p.Locator, Transport: p.Transport, Version: p.Version})
		}
		if !slices.Equal(e.parts, parts) || e.entry.Kind != parts[0].Kind || e.entry.Locator != parts[0].Locator {
			t.Errorf("%s: parts %+v, want %+v", it.name, e.parts, parts)
		}
		if e.listing.Version != it.version || e.listing.Listed() != (it.status == "active") || e.entry.Source != "registry" {
			t.Errorf("%s: listing %+v, want version %s status %s", it.name, e.listing, it.version, it.status)
		}
	}
	if len(st.entries) != want {
		t.Errorf("%d entries, want %d", len(st.entries), want)
	}
}

// TestSync500OneEntryEach: 500 servers (50 of them with an older version too) in 6
// pages become 500 entries, one each, with the isLatest version listed; the walk ends
// with the mark at the newest updatedAt.
func TestSync500OneEntryEach(t *testing.T) {
	f := newFakeRegistry(t, synthRegistry(t, 500))
	st := newFakeStore()
	sum, err := syncer(t, f, st, 0).Sync(context.Background(), SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Pages != 6 || sum.Items != 550 || sum.Servers != 500 || sum.Created != 500 || sum.Updated+sum.Unchanged+sum.Invalid+sum.Conflicts != 0 {
		t.Errorf("summary %+v", sum)
	}
	checkOneEntryEach(t, f, st)
	state := st.state[f.srv.URL]
	if newest := t0.Add(499 * time.Minute); !state.Since.Equal(newest) || !sum.Newest.Equal(newest) || !state.WalkStarted.IsZero() || state.Cursor != "" || state.Servers != 550 {
		t.Errorf("state %+v", state)
	}
	// Every request asked for deleted servers too; the first had no updated_since.
	for i, q := range f.requests {
		v, _ := url.ParseQuery(q)
		if v.Get("include_deleted") != "true" || v.Has("updated_since") || (i == 0) == v.Has("cursor") {
			t.Errorf("request %d: %s", i+1, q)
		}
	}
	// A new entry got its first due times.
	if e := st.byName("io.github.probity-test/s-0007"); e == nil || len(e.due) != 1 {
		t.Errorf("due %+v", e)
	}
	// Again, everything: nothing changes.
	sum, err = syncer(t, f, st, 0).Sync(context.Background(), SyncOptions{Full: true})
	if err != nil || sum.Created+sum.Updated != 0 || sum.Unchanged != 500 || len(st.entries) != 500 {
		t.Errorf("second full sync: %+v %v", sum, err)
	}
}

// TestIncrementalSyncTouchesOnlyChanges: after a sync, a second one asks for what was
// updated since the mark (less the overlap) and updates exactly the servers that
// changed: a new version, a deprecated and a deleted server (unlisted, not deleted),
// and a deleted one listed again by the sync after.
func TestIncrementalSyncTouchesOnlyChanges(t *testing.T) {
	f := newFakeRegistry(t, synthRegistry(t, 500))
	st := newFakeStore()
	if _, err := syncer(t, f, st, 0).Sync(context.Background(), SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	mark := st.state[f.srv.URL].Since
	ex := examples(t)
	later := mark.Add(time.Hour)
	// s-0003 publishes 1.1.0: the old latest loses isLatest, both are updated.
	old := f.find("io.github.probity-test/s-0003", "1.0.0")
	old.latest, old.updatedAt = false, later
	f.items = append(f.items, &regItem{name: old.name, version: "1.1.0", server: synthServer(t, ex, 3, "1.1.0"), status: "active", latest: true, updatedAt: later})
	// s-0100 is deprecated, s-0200 deleted; s-0300's older version is deleted, which
	// changes no listing.
	dep := f.find("io.github.probity-test/s-0100", "1.0.0")
	dep.status, dep.updatedAt = "deprecated", later
	del := f.find("io.github.probity-test/s-0200", "1.0.0")
	del.status, del.updatedAt = "deleted", later
	older := f.find("io.github.probity-test/s-0300", "0.9.0")
	older.status, older.updatedAt = "deleted", later
	before := st.upserts
	f.requests = nil

	sum, err := syncer(t, f, st, 0).Sync(context.Background(), SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v, _ := url.ParseQuery(f.requests[0])
	if v.Get("updated_since") != mark.Add(-DefaultOverlap).Format(time.RFC3339Nano) || v.Get("include_deleted") != "true" || len(f.requests) != 1 {
		t.Errorf("requests %q", f.requests)
	}
	// Read: the 5 changed items (4 names, one of them an older version only) and the 5
	// servers updated within the overlap, the 5 minutes before the mark (a minute
	// apart): those are upserted and unchanged.
	if sum.Updated != 3 || sum.Created != 0 || sum.Unlisted != 2 || sum.Unchanged != 5 || sum.Items != 10 || sum.Servers != 8 {
		t.Errorf("summary %+v", sum)
	}
	if n := st.upserts - before; n != sum.Updated+sum.Unchanged {
		t.Errorf("%d upserts for %d updated and %d unchanged servers", n, sum.Updated, sum.Unchanged)
	}
	checkOneEntryEach(t, f, st)
	if e := st.byName(del.name); e == nil || e.entry.Listed || e.listing.Status != "deleted" {
		t.Errorf("deleted server: %+v", e)
	}
	if e := st.byName("io.github.probity-test/s-0003"); e.listing.Version != "1.1.0" {
		t.Errorf("new version: %+v", e.listing)
	}
	if st.state[f.srv.URL].Since != later {
		t.Errorf("mark %v, want %v", st.state[f.srv.URL].Since, later)
	}

	// The deleted server comes back, under the same entry.
	slug := st.byName(del.name).entry.Slug
	del.status, del.updatedAt = "active", later.Add(time.Hour)
	sum, err = syncer(t, f, st, 0).Sync(context.Background(), SyncOptions{})
	if e := st.byName(del.name); err != nil || !e.entry.Listed || e.entry.Slug != slug || sum.Updated != 1 || len(st.entries) != 500 {
		t.Errorf("relisted: %+v %+v %v", e, sum, err)
	}
}

// TestUnlistedNewServerNotAdded: a deprecated or deleted server Probity never listed
// is not added.
func TestUnlistedNewServerNotAdded(t *testing.T) {
	items := synthRegistry(t, 3)
	items[1].status, items[2].status = "deleted", "deprecated"
	f := newFakeRegistry(t, items)
	st := newFakeStore()
	sum, err := syncer(t, f, st, 0).Sync(context.Background(), SyncOptions{})
	if err != nil || sum.Created != 1 || sum.Skipped != 2 || len(st.entries) != 1 {
		t.Errorf("%+v %v", sum, err)
	}
}

// TestSyncResumesAfterCrash: a sync that stops in the middle of page 3 (the store
// fails, as a killed process would stop) has stored pages 1 and 2 and their cursor; the
// next sync continues the walk there, not at the start, and ends with one entry each.
func TestSyncResumesAfterCrash(t *testing.T) {
	f := newFakeRegistry(t, synthRegistry(t, 500))
	st := newFakeStore()
	boom := errors.New("disk on fire")
	st.failUpsert = func(n int) error {
		if n == 230 {
			return boom
		}
		return nil
	}
	sum, err := syncer(t, f, st, 0).Sync(context.Background(), SyncOptions{})
	if !errors.Is(err, boom) || sum.Pages != 3 {
		t.Fatalf("%+v %v", sum, err)
	}
	state := st.state[f.srv.URL]
	if state.WalkStarted.IsZero() || state.Cursor == "" || !state.Since.IsZero() {
		t.Fatalf("state %+v", state)
	}
	stored := len(st.entries)
	if stored < 200 || stored >= 300 {
		t.Errorf("%d entries after the crash", stored)
	}
	f.requests = nil
	st.failUpsert = nil
	sum, err = syncer(t, f, st, 0).Sync(context.Background(), SyncOptions{})
	if err != nil || !sum.Resumed || sum.Pages != 4 {
		t.Fatalf("%+v %v", sum, err)
	}
	if v, _ := url.ParseQuery(f.requests[0]); v.Get("cursor") != state.Cursor {
		t.Errorf("resumed at %q, want cursor %q", f.requests[0], state.Cursor)
	}
	checkOneEntryEach(t, f, st)
	if s := st.state[f.srv.URL]; !s.WalkStarted.IsZero() || !s.Since.Equal(t0.Add(499*time.Minute)) {
		t.Errorf("state %+v", s)
	}
}

// TestMarkNotPastWalkStart: a walk resumed after a crash that reads, on a later page,
// a server updated after the walk began sets the next sync's mark no later than the
// walk's start, so a server on an early page updated meanwhile is read by the next sync.
func TestMarkNotPastWalkStart(t *testing.T) {
	f := newFakeRegistry(t, synthRegistry(t, 500))
	st := newFakeStore()
	boom := errors.New("disk on fire")
	st.failUpsert = func(n int) error {
		if n == 230 {
			return boom
		}
		return nil
	}
	if _, err := syncer(t, f, st, 0).Sync(context.Background(), SyncOptions{}); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	started := st.state[f.srv.URL].WalkStarted
	// While the walk waits, the last server (a later page) is updated after its start.
	f.mu.Lock()
	last := f.items[len(f.items)-1]
	last.updatedAt = started.Add(2 * time.Hour)
	f.mu.Unlock()
	st.failUpsert = nil
	if _, err := syncer(t, f, st, 0).Sync(context.Background(), SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := st.state[f.srv.URL].Since; !got.Equal(started.UTC()) {
		t.Errorf("mark %v after the walk, want its start %v (the newest read was %v)", got, started, last.updatedAt)
	}
}

// TestRefusedPagesKeepWhatWasImported: a page too large, a page that is not a server
// list and a cursor loop each stop the sync with their error; the pages before stay
// imported, and the sync after (the registry mended) resumes and completes.
func TestRefusedPagesKeepWhatWasImported(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault func(w http.ResponseWriter, r *http.Request, n int) bool
		want  error
		pages int // pages stored before the refusal
	}{
		{"page too large", func(w http.ResponseWriter, r *http.Request, n int) bool {
			if n != 3 {
				return false
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"servers":[],"x":"` + strings.Repeat("x", registry.DefaultMaxPageBytes) + `"}`))
			return true
		}, registry.ErrPageTooLarge, 2},
		{"not a server list", func(w http.ResponseWriter, r *http.Request, n int) bool {
			if n != 3 {
				return false
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"servers":[{"_meta":{}}],"metadata":{"count":1}}`))
			return true
		}, registry.ErrMalformedPage, 2},
		{"cursor loop", func(w http.ResponseWriter, r *http.Request, n int) bool {
			if n != 3 {
				return false
			}
			// Page 3 is served with the cursor of page 2 as its next.
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"servers":[],"metadata":{"count":0,"nextCursor":` + fmt.Sprintf("%q", r.URL.Query().Get("cursor")) + `}}`))
			return true
		}, registry.ErrCursorLoop, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeRegistry(t, synthRegistry(t, 500))
			f.fault = tc.fault
			st := newFakeStore()
			sum, err := syncer(t, f, st, 0).Sync(context.Background(), SyncOptions{})
			var pe *registry.PageError
			if !errors.Is(err, tc.want) || !errors.As(err, &pe) || sum.Pages != tc.pages || !strings.Contains(err.Error(), "resumes") {
				t.Fatalf("%+v %v", sum, err)
			}
			// Pages 1 and 2: 200 items, 181 servers (every tenth has two versions).
			if len(st.entries) != 181 || sum.Created != 181 || sum.Items != 200 {
				t.Errorf("%d entries kept, summary %+v", len(st.entries), sum)
			}
			f.fault = nil
			sum, err = syncer(t, f, st, 0).Sync(context.Background(), SyncOptions{})
			if err != nil || !sum.Resumed || sum.Created != 500-181 {
				t.Fatalf("%+v %v", sum, err)
			}
			checkOneEntryEach(t, f, st)
		})
	}
}

// TestFullDiscardsWalkInProgress: --full starts over even when a walk is in progress.
func TestFullDiscardsWalkInProgress(t *testing.T) {
	f := newFakeRegistry(t, synthRegistry(t, 150))
	st := newFakeStore()
	st.state[f.srv.URL] = store.RegistrySync{BaseURL: f.srv.URL, Cursor: "zzz:1", WalkStarted: t0, WalkSince: t0}
	sum, err := syncer(t, f, st, 0).Sync(context.Background(), SyncOptions{Full: true})
	if err != nil || sum.Resumed || sum.Created != 150 || strings.Contains(f.requests[0], "cursor") || strings.Contains(f.requests[0], "updated_since") {
		t.Errorf("%+v %v %q", sum, err, f.requests)
	}
}

// TestInvalidServersAreCountedNotFatal: a server.json with nothing to check, and one
// whose parts another entry holds, are counted and named; the rest is imported.
func TestInvalidServersAreCountedNotFatal(t *testing.T) {
	f := newFakeRegistry(t, synthRegistry(t, 4))
	noParts := f.find("io.github.probity-test/s-0001", "1.0.0")
	noParts.server = map[string]any{"name": noParts.name, "version": "1.0.0", "description": "no parts",
		"packages": []any{map[string]any{"registryType": "oci", "identifier": "ghcr.io/x/y:1"}}}
	taken := f.find("io.github.probity-test/s-0003", "1.0.0")
	taken.server = synthServer(t, examples(t), 2, "1.0.0") // server 2's parts, under the name of server 3
	taken.server["name"] = taken.name
	st := newFakeStore()
	sum, err := syncer(t, f, st, 0).Sync(context.Background(), SyncOptions{})
	if err != nil || sum.Created != 2 || sum.Invalid != 2 || len(sum.Problems) != 2 {
		t.Fatalf("%+v %v", sum, err)
	}
	if !strings.Contains(sum.Problems[0], noParts.name) || !strings.Contains(sum.Problems[1], "belongs to another entry") {
		t.Errorf("%q", sum.Problems)
	}
}

// TestSyncWorker: the River job syncs the registry its args name; PeriodicSync
// enqueues it.
func TestSyncWorker(t *testing.T) {
	f := newFakeRegistry(t, synthRegistry(t, 120))
	st := newFakeStore()
	w, err := NewSyncWorker(WorkerConfig{Store: st, Client: registry.Config{HTTPClient: registry.GuardedHTTPClient(egress.Config{AllowLoopback: true})}})
	if err != nil {
		t.Fatal(err)
	}
	job := &river.Job[SyncArgs]{Args: SyncArgs{BaseURL: f.srv.URL}}
	if err := w.Work(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	if len(st.entries) != 120 || w.Timeout(job) != 0 {
		t.Errorf("%d entries, timeout %s", len(st.entries), w.Timeout(job))
	}
	// A failing registry fails the job (River retries it); a bad URL cancels it.
	f.fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		http.Error(w, "down", http.StatusBadGateway)
		return true
	}
	if err := w.Work(context.Background(), job); err == nil {
		t.Error("a failed sync succeeded")
	}
	var cancel *river.JobCancelError
	if err := w.Work(context.Background(), &river.Job[SyncArgs]{Args: SyncArgs{BaseURL: "ftp://x"}}); !errors.As(err, &cancel) {
		t.Errorf("bad URL: %v", err)
	}
	// The guard refuses loopback to a worker built without AllowLoopback.
	w2, _ := NewSyncWorker(WorkerConfig{Store: newFakeStore()})
	f.fault = nil
	if err := w2.Work(context.Background(), job); err == nil {
		t.Error("the default client reached loopback")
	}
	if PeriodicSync(f.srv.URL, 0) == nil {
		t.Error("no periodic job")
	}
	if (SyncArgs{}).Kind() != "probity_registry_sync" {
		t.Error("kind")
	}
}

// TestSyncRecordedPage replays the recorded page of the official registry
// (registry/testdata/good_page_official.json) and an empty last page: the isLatest
// version of remote-weather is listed with the registry's metadata as sent, the
// deprecated local-weather (never listed) is not added, and weather, which lists
// nothing Probity can check, is refused by name.
func TestSyncRecordedPage(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "testdata", "good_page_official.json"))
	if err != nil {
		t.Fatal(err)
	}
	f := newFakeRegistry(t, nil)
	f.fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("cursor") == "" {
			w.Write(page)
		} else {
			w.Write([]byte(`{"servers":[],"metadata":{"count":0}}`))
		}
		return true
	}
	st := newFakeStore()
	sum, err := syncer(t, f, st, 0).Sync(context.Background(), SyncOptions{})
	if err != nil || sum.Pages != 2 || sum.Items != 4 || sum.Created != 1 || sum.Skipped != 1 || sum.Invalid != 1 ||
		len(sum.Problems) != 1 || !strings.HasPrefix(sum.Problems[0], "io.github.user/weather: nothing to import") {
		t.Fatalf("%+v %v", sum, err)
	}
	e := st.byName("io.github.user/remote-weather")
	if e == nil || e.listing.Version != "2.1.0" || e.listing.Title != "Remote Weather" || e.listing.Website != "https://modelcontextprotocol.io/examples" ||
		!strings.Contains(string(e.listing.Document), `"icons"`) ||
		string(e.listing.RegistryMeta) != `{"status":"active","publishedAt":"2025-10-03T10:00:00Z","updatedAt":"2025-10-03T10:00:00Z","isLatest":true}` {
		t.Fatalf("%+v", e)
	}
	if !st.state[f.srv.URL].Since.Equal(time.Date(2025, 11, 20, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("mark %v", st.state[f.srv.URL].Since)
	}
}
