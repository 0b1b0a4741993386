package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/probity-dev/probity/checks/supply"
	"github.com/probity-dev/probity/store"
)

// TestHTTPCacheRestart: two supply clients over one real store (a restart, or the next
// "probity round"): the second sends a conditional request and serves the 304 from
// the store, with the same facts, and the kept entry's StoredAt is refreshed. SQLite
// always; PostgreSQL with PROBITY_TEST_DATABASE_URL (or under CI).
func TestHTTPCacheRestart(t *testing.T) {
	packument, err := os.ReadFile(filepath.Join("..", "..", "checks", "supply", "testdata", "fixtures", "npm", "left-pad.json"))
	if err != nil {
		t.Fatal(err)
	}
	backends := map[string]func(t *testing.T) store.Config{
		"sqlite": func(t *testing.T) store.Config {
			return store.Config{SQLitePath: filepath.Join(t.TempDir(), "probity.db")}
		},
		"postgres": func(t *testing.T) store.Config { return store.Config{DatabaseURL: testDatabase(t)} },
	}
	for name, cfg := range backends {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			st, err := store.Open(ctx, cfg(t))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if err := st.Migrate(ctx); err != nil {
				t.Fatal(err)
			}

			var (
				mu   sync.Mutex
				seen []http.Header
			)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				seen = append(seen, r.Header.Clone())
				mu.Unlock()
				w.Header().Set("ETag", `"left-pad-1.3.0"`)
				w.Header().Set("Content-Type", "application/json")
				if r.Header.Get("If-None-Match") == `"left-pad-1.3.0"` {
					w.WriteHeader(http.StatusNotModified)
					return
				}
				w.Write(packument)
			}))
			defer srv.Close()

			now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
			read := func(at time.Time) supply.NPMPackage {
				c := supply.NewClient(supply.ClientConfig{AllowLoopback: true, Store: httpCache{st: st}, Now: func() time.Time { return at }})
				return supply.NewNPM(supply.NPMConfig{BaseURL: srv.URL, Client: c}).Package(ctx, "left-pad")
			}
			first := read(now)
			later := now.Add(2 * time.Hour)
			second := read(later)

			if len(seen) != 2 || seen[0].Get("If-None-Match") != "" || seen[1].Get("If-None-Match") != `"left-pad-1.3.0"` {
				t.Fatalf("requests %v: want the second with If-None-Match", seen)
			}
			if first.Facts.Source.Outcome != supply.SourceOK || second.Facts.Source.Outcome != supply.SourceOK ||
				second.Facts.Latest != "1.3.0" || second.Facts.Latest != first.Facts.Latest || second.Facts.RepositoryURL != first.Facts.RepositoryURL {
				t.Errorf("first %+v\nsecond %+v", first.Facts, second.Facts)
			}
			if !second.Facts.Source.FetchedAt.Equal(later) {
				t.Errorf("revalidated FetchedAt %v, want %v", second.Facts.Source.FetchedAt, later)
			}
			key := "GET " + srv.URL + "/left-pad accept=application/json"
			kept, err := st.HTTPCache(ctx, key)
			if err != nil {
				t.Fatalf("kept entry %q: %v", key, err)
			}
			if kept.Status != 200 || kept.ETag != `"left-pad-1.3.0"` || string(kept.Body) != string(packument) ||
				!kept.StoredAt.Equal(later) || string(kept.Header) != `{"Content-Type":["application/json"]}` {
				t.Errorf("kept %d %q %d bytes, stored %v, header %s", kept.Status, kept.ETag, len(kept.Body), kept.StoredAt, kept.Header)
			}

			// Within MaxAge of the revalidation a third client sends nothing.
			read(later.Add(30 * time.Minute))
			if len(seen) != 2 {
				t.Errorf("%d requests, want none more within MaxAge", len(seen))
			}
		})
	}
}

// fakeHTTPCacheStore is an httpCacheStore in memory that can fail.
type fakeHTTPCacheStore struct {
	entries map[string]store.HTTPCacheEntry
	err     error
	puts    int
}

func (f *fakeHTTPCacheStore) HTTPCache(_ context.Context, key string) (store.HTTPCacheEntry, error) {
	if f.err != nil {
		return store.HTTPCacheEntry{}, f.err
	}
	e, ok := f.entries[key]
	if !ok {
		return store.HTTPCacheEntry{}, fmt.Errorf("cached response: %w", store.ErrNotFound)
	}
	return e, nil
}

func (f *fakeHTTPCacheStore) PutHTTPCache(_ context.Context, e store.HTTPCacheEntry) error {
	f.puts++
	if f.err != nil {
		return f.err
	}
	f.entries[e.Key] = e
	return nil
}

// TestHTTPCacheAdapter: the adapter maps ErrNotFound to a miss, wraps other errors,
// keeps headers as JSON, and drops what the table cannot hold without asking it.
func TestHTTPCacheAdapter(t *testing.T) {
	ctx := context.Background()
	f := &fakeHTTPCacheStore{entries: map[string]store.HTTPCacheEntry{}}
	h := httpCache{st: f}
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

	if _, ok, err := h.Get(ctx, "GET https://registry.npmjs.org/x accept="); ok || err != nil {
		t.Errorf("missing key: ok %v, err %v", ok, err)
	}
	r := supply.CachedResponse{Key: "k", Status: 200, ETag: `"e"`, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte("{}"), StoredAt: at}
	if err := h.Put(ctx, r); err != nil {
		t.Fatal(err)
	}
	got, ok, err := h.Get(ctx, "k")
	if !ok || err != nil || got.ETag != `"e"` || got.Header.Get("Content-Type") != "application/json" || string(got.Body) != "{}" || !got.StoredAt.Equal(at) {
		t.Errorf("round trip: %+v, %v, %v", got, ok, err)
	}
	// A negative answer has no body; the column is NOT NULL.
	if err := h.Put(ctx, supply.CachedResponse{Key: "gone", Status: 404, StoredAt: at}); err != nil || f.entries["gone"].Body == nil || f.entries["gone"].Header != nil {
		t.Errorf("404: %v, %+v", err, f.entries["gone"])
	}
	// Beyond the table's limits: not kept, the store not asked.
	puts := f.puts
	for _, r := range []supply.CachedResponse{
		{Key: strings.Repeat("k", maxHTTPCacheKey+1), Status: 200, StoredAt: at},
		{Key: "big", Status: 200, Body: make([]byte, store.MaxHTTPCacheBody+1), StoredAt: at},
	} {
		if err := h.Put(ctx, r); err != nil {
			t.Errorf("%.20s: %v", r.Key, err)
		}
	}
	if _, ok, _ := h.Get(ctx, strings.Repeat("k", maxHTTPCacheKey+1)); ok || f.puts != puts {
		t.Errorf("oversized entries reached the store (%d puts)", f.puts-puts)
	}
	// A header column that is not JSON reads as no headers.
	f.entries["bad"] = store.HTTPCacheEntry{Key: "bad", Status: 200, Header: []byte("not json"), Body: []byte("x"), StoredAt: at}
	if got, ok, err := h.Get(ctx, "bad"); !ok || err != nil || got.Header != nil {
		t.Errorf("bad header: %+v, %v, %v", got, ok, err)
	}
	// The store's trouble is an error (the client logs it and goes on).
	f.err = errors.New("database is locked")
	if _, _, err := h.Get(ctx, "k"); err == nil || !strings.Contains(err.Error(), "database is locked") {
		t.Errorf("Get error: %v", err)
	}
	if err := h.Put(ctx, r); err == nil || !strings.Contains(err.Error(), "database is locked") {
		t.Errorf("Put error: %v", err)
	}
}

// BenchmarkHTTPCacheWarmStart measures what a restart costs with the cache in the
// store: 1,000 npm packuments (11 KB each) kept in SQLite, read by a new client (cold
// memory) within MaxAge, so every read comes from the store and nothing is sent.
//
//	go test ./cmd/probity -run X -bench HTTPCacheWarmStart -benchtime 3x
func BenchmarkHTTPCacheWarmStart(b *testing.B) {
	packument, err := os.ReadFile(filepath.Join("..", "..", "checks", "supply", "testdata", "fixtures", "npm", "left-pad.json"))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{SQLitePath: filepath.Join(b.TempDir(), "probity.db")})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent.Add(1)
		name := strings.TrimPrefix(r.URL.Path, "/")
		w.Header().Set("ETag", `"`+name+`"`)
		w.Write(bytes.Replace(packument, []byte(`"_id": "left-pad", "name": "left-pad"`), []byte(`"_id": "`+name+`", "name": "`+name+`"`), 1))
	}))
	defer srv.Close()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	client := func() *supply.NPM {
		c := supply.NewClient(supply.ClientConfig{AllowLoopback: true, Store: httpCache{st: st}, Now: func() time.Time { return now }})
		return supply.NewNPM(supply.NPMConfig{BaseURL: srv.URL, Client: c})
	}
	const n = 1000
	warm := client()
	for i := range n {
		if p := warm.Package(ctx, fmt.Sprintf("left-pad-%d", i)); p.Facts.Source.Outcome != supply.SourceOK {
			b.Fatalf("warming: %+v", p.Facts.Source)
		}
	}
	sent.Store(0)
	for b.Loop() {
		cold := client()
		for i := range n {
			if p := cold.Package(ctx, fmt.Sprintf("left-pad-%d", i)); p.Facts.Source.Outcome != supply.SourceOK {
				b.Fatalf("from the store: %+v", p.Facts.Source)
			}
		}
	}
	if sent.Load() != 0 {
		b.Fatalf("%d requests sent from a warm store", sent.Load())
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/1000-packuments")
}

type pruneRecorder struct{ before time.Time }

func (p *pruneRecorder) PruneHTTPCache(ctx context.Context, before time.Time) (int64, error) {
	p.before = before
	return 3, nil
}

// TestPruneHTTPCacheJob: serve's daily job prunes responses not revalidated for 30 days.
func TestPruneHTTPCacheJob(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	rec := &pruneRecorder{}
	w := &pruneWorker{st: rec, now: func() time.Time { return now }, log: slog.New(slog.DiscardHandler)}
	if err := w.Work(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if want := now.Add(-30 * 24 * time.Hour); !rec.before.Equal(want) {
		t.Errorf("pruned before %v, want %v", rec.before, want)
	}
	if prunePeriodic() == nil {
		t.Error("no periodic job")
	}
}
