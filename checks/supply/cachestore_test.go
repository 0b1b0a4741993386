package supply

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeStore is a CacheStore in memory that enforces the contract: it keeps copies
// (so a caller modifying a body afterwards is caught by a later comparison), refuses
// keys and bodies beyond the store's limits, and can inject errors.
type fakeStore struct {
	mu      sync.Mutex
	entries map[string]CachedResponse
	gets    int
	puts    int
	failGet error
	failPut error
}

func newFakeStore() *fakeStore { return &fakeStore{entries: map[string]CachedResponse{}} }

func (f *fakeStore) Get(ctx context.Context, key string) (CachedResponse, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets++
	if err := ctx.Err(); err != nil {
		return CachedResponse{}, false, err
	}
	if f.failGet != nil {
		return CachedResponse{}, false, f.failGet
	}
	e, ok := f.entries[key]
	if !ok {
		return CachedResponse{}, false, nil
	}
	e.Body = bytes.Clone(e.Body)
	e.Header = e.Header.Clone()
	return e, true, nil
}

func (f *fakeStore) Put(ctx context.Context, r CachedResponse) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.puts++
	if err := ctx.Err(); err != nil {
		return err
	}
	if f.failPut != nil {
		return f.failPut
	}
	if r.Key == "" || len(r.Key) > 4096 || len(r.Body) > MaxStoredBody || r.Status < 100 || r.Status > 599 || r.StoredAt.IsZero() {
		return fmt.Errorf("fakeStore: refused %q (%d bytes, status %d)", r.Key, len(r.Body), r.Status)
	}
	r.Body = bytes.Clone(r.Body)
	r.Header = r.Header.Clone()
	f.entries[r.Key] = r
	return nil
}

func (f *fakeStore) get(t *testing.T, key string) CachedResponse {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.entries[key]
	if !ok {
		t.Fatalf("store holds no %q; it holds %q", key, slices.Sorted(maps.Keys(f.entries)))
	}
	return e
}

// etagServer answers GET /… with the body of the path, ETag `"v<version>"` and
// Last-Modified, 304 to a matching If-None-Match, and records every request.
type etagServer struct {
	*httptest.Server
	mu       sync.Mutex
	version  int
	status   int // answer instead of 200 (e.g. 404), 0: 200
	requests []http.Header
}

func newETagServer(t *testing.T) *etagServer {
	s := &etagServer{version: 1}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.requests = append(s.requests, r.Header.Clone())
		if s.status != 0 {
			w.WriteHeader(s.status)
			return
		}
		etag := fmt.Sprintf(`"v%d"`, s.version)
		w.Header().Set("ETag", etag)
		w.Header().Set("Last-Modified", "Sun, 29 Nov 2026 10:00:00 GMT")
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Set-Cookie", "session=secret")
		w.Header().Set("X-RateLimit-Remaining", "59")
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		fmt.Fprintf(w, `{"path":%q,"version":%d}`, r.URL.Path, s.version)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *etagServer) sent() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// storeClient is a Client over store, on clk, with recorded sleeps.
func storeClient(t *testing.T, store CacheStore, clk *clock, logs *bytes.Buffer) *Client {
	t.Helper()
	cfg := ClientConfig{AllowLoopback: true, Store: store, Now: clk.now}
	if logs != nil {
		cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	c := NewClient(cfg)
	c.sleep = func(context.Context, time.Duration) error { return nil }
	return c
}

// TestClientStoreRestart: a second Client over the same store (a restart, or the next
// "probity round") does not start cold. Within MaxAge it serves the kept response
// without a request; after it, it sends a conditional request and serves the kept body
// on 304, refreshing StoredAt.
func TestClientStoreRestart(t *testing.T) {
	srv := newETagServer(t)
	store := newFakeStore()
	clk := &clock{t: fixtureNow}
	req := request{service: "test", url: srv.URL + "/pkg", accept: "application/json"}
	key := cacheKey(request{method: http.MethodGet, service: "test", url: srv.URL + "/pkg", accept: "application/json"})

	first, err := storeClient(t, store, clk, nil).do(context.Background(), req)
	if err != nil || first.status != 200 {
		t.Fatalf("first: %+v, %v", first, err)
	}
	kept := store.get(t, key)
	if kept.ETag != `"v1"` || kept.LastModified == "" || string(kept.Body) != string(first.body) || !kept.StoredAt.Equal(fixtureNow) {
		t.Fatalf("kept %+v", kept)
	}
	if !slices.Equal(slices.Sorted(maps.Keys(kept.Header)), []string{"Content-Type"}) {
		t.Errorf("kept headers %v, want Content-Type only (never Set-Cookie or quota headers)", kept.Header)
	}

	// A restart 10 minutes later: fresh from the store, nothing sent.
	clk.advance(10 * time.Minute)
	second, err := storeClient(t, store, clk, nil).do(context.Background(), req)
	if err != nil || !second.cached || string(second.body) != string(first.body) || !second.fetchedAt.Equal(fixtureNow) {
		t.Fatalf("second: %+v, %v", second, err)
	}
	if n := len(srv.sent()); n != 1 {
		t.Fatalf("%d requests after a restart within MaxAge, want 1", n)
	}

	// A restart two hours later: a conditional request, answered 304 from the store.
	clk.advance(2 * time.Hour)
	var logs bytes.Buffer
	third, err := storeClient(t, store, clk, &logs).do(context.Background(), req)
	if err != nil || third.cached || third.status != 200 || string(third.body) != string(first.body) {
		t.Fatalf("third: %+v, %v", third, err)
	}
	sent := srv.sent()
	if len(sent) != 2 || sent[1].Get("If-None-Match") != `"v1"` || sent[1].Get("If-Modified-Since") != "Sun, 29 Nov 2026 10:00:00 GMT" {
		t.Fatalf("requests %v, want a second one with If-None-Match and If-Modified-Since", sent)
	}
	if h := store.get(t, key).Header; h.Get("Content-Type") != "application/json" {
		t.Errorf("kept headers after the 304: %v (a 304 carries no Content-Type; the kept one stays)", h)
	}
	if !third.fetchedAt.Equal(clk.now()) || !store.get(t, key).StoredAt.Equal(clk.now()) {
		t.Errorf("after the 304: FetchedAt %v, StoredAt %v, want %v", third.fetchedAt, store.get(t, key).StoredAt, clk.now())
	}
	if !strings.Contains(logs.String(), "cache=revalidated-store") {
		t.Errorf("log does not say the entry came from the store: %s", logs.String())
	}

	// Changed at the source: a new 200 replaces the kept response.
	clk.advance(2 * time.Hour)
	srv.mu.Lock()
	srv.version = 2
	srv.mu.Unlock()
	fourth, err := storeClient(t, store, clk, nil).do(context.Background(), req)
	if err != nil || !strings.Contains(string(fourth.body), `"version":2`) || store.get(t, key).ETag != `"v2"` {
		t.Fatalf("fourth: %+v, %v; kept %+v", fourth, err, store.get(t, key))
	}
}

// TestClientStoreNPMRestart runs the restart through a source: the npm packument of
// the fixtures, read by a second Client two hours later, revalidated with the
// fixture's ETag and answered 304, gives the same facts.
func TestClientStoreNPMRestart(t *testing.T) {
	const name = "@modelcontextprotocol/server-filesystem"
	srv := startFixtureServer(t)
	store := newFakeStore()
	clk := &clock{t: fixtureNow}
	first := NewNPM(NPMConfig{BaseURL: srv.base("npm"), Client: storeClient(t, store, clk, nil)}).Package(context.Background(), name)
	clk.advance(2 * time.Hour)
	second := NewNPM(NPMConfig{BaseURL: srv.base("npm"), Client: storeClient(t, store, clk, nil)}).Package(context.Background(), name)
	reqs := srv.received()
	if len(reqs) != 2 || reqs[1].Header.Get("If-None-Match") != `"sfs-2026.8.31"` {
		t.Fatalf("requests %+v, want the second conditional", reqs)
	}
	if first.Facts.Source.Outcome != SourceOK || second.Facts.Latest != first.Facts.Latest || second.Facts.RepositoryURL != first.Facts.RepositoryURL {
		t.Errorf("first %+v, second %+v", first.Facts, second.Facts)
	}
}

// TestClientStoreErrorsNeverFailAFetch: a store that fails every call is logged and
// otherwise ignored.
func TestClientStoreErrorsNeverFailAFetch(t *testing.T) {
	srv := newETagServer(t)
	store := newFakeStore()
	store.failGet = errors.New("database is locked")
	store.failPut = errors.New("disk full")
	clk := &clock{t: fixtureNow}
	var logs bytes.Buffer
	c := storeClient(t, store, clk, &logs)
	for range 2 {
		resp, err := c.do(context.Background(), request{service: "test", url: srv.URL + "/x"})
		if err != nil || resp.status != 200 {
			t.Fatalf("resp %+v, err %v", resp, err)
		}
	}
	if len(srv.sent()) != 1 {
		t.Errorf("%d requests, want 1 (the memory level still works)", len(srv.sent()))
	}
	if !strings.Contains(logs.String(), "database is locked") || !strings.Contains(logs.String(), "disk full") {
		t.Errorf("store errors not logged: %s", logs.String())
	}
}

// TestClientStoreKeepsNoCredential: an authenticated response may be kept (public
// repository data), but the token is in no key, header or body the store sees.
func TestClientStoreKeepsNoCredential(t *testing.T) {
	const token = "ghp_FIXTUREtokenNeverStored0123456789"
	srv := startFixtureServer(t)
	store := newFakeStore()
	clk := &clock{t: fixtureNow}
	g := NewGitHub(GitHubConfig{BaseURL: srv.base("github"), Token: token, Client: storeClient(t, store, clk, nil)})
	if r := g.Repository(context.Background(), "modelcontextprotocol", "servers"); !r.Exists {
		t.Fatalf("repository not read: %+v", r.Source)
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	if len(store.entries) == 0 {
		t.Fatal("nothing kept")
	}
	for key, e := range store.entries {
		all := key + fmt.Sprint(e.Header) + string(e.Body) + e.ETag + e.LastModified
		if strings.Contains(all, token) || strings.Contains(all, "Bearer") {
			t.Errorf("%q: the credential reached the store", key)
		}
		if !strings.HasSuffix(key, " auth") || !strings.Contains(key, "X-Github-Api-Version=") {
			t.Errorf("key %q: want the authenticated marker and the API version", key)
		}
		for h := range e.Header {
			if h != "Content-Type" {
				t.Errorf("%q: kept header %s", key, h)
			}
		}
	}
}

// TestClientStoreWhatIsKept: 200s with validators, and 404s as negative answers (so a
// restart does not serve a withdrawn package's kept 200); not errors, not bodies beyond
// MaxStoredBody.
func TestClientStoreWhatIsKept(t *testing.T) {
	srv := newETagServer(t)
	store := newFakeStore()
	clk := &clock{t: fixtureNow}
	req := request{service: "test", url: srv.URL + "/pkg"}
	key := cacheKey(request{method: http.MethodGet, service: "test", url: srv.URL + "/pkg"})
	if _, err := storeClient(t, store, clk, nil).do(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	// Withdrawn: the next run gets 404, which replaces the kept 200.
	clk.advance(2 * time.Hour)
	srv.mu.Lock()
	srv.status = http.StatusNotFound
	srv.mu.Unlock()
	resp, err := storeClient(t, store, clk, nil).do(context.Background(), req)
	if err != nil || resp.status != 404 {
		t.Fatalf("resp %+v, %v", resp, err)
	}
	if kept := store.get(t, key); kept.Status != 404 || len(kept.Body) != 0 || kept.ETag != "" {
		t.Errorf("kept %+v, want a negative answer", kept)
	}
	// A restart within MaxAge serves the 404, not the old 200, without a request.
	clk.advance(time.Minute)
	n := len(srv.sent())
	if resp, err := storeClient(t, store, clk, nil).do(context.Background(), req); err != nil || resp.status != 404 || len(srv.sent()) != n {
		t.Errorf("after restart: %+v, %v, %d requests (want %d)", resp, err, len(srv.sent()), n)
	}

	// A 500 is not kept.
	srv.mu.Lock()
	srv.status = http.StatusInternalServerError
	srv.mu.Unlock()
	puts := store.puts
	if resp, err := storeClient(t, store, clk, nil).do(context.Background(), request{service: "test", url: srv.URL + "/other"}); err != nil || resp.status != 500 {
		t.Fatalf("500: %+v, %v", resp, err)
	}
	if store.puts != puts {
		t.Errorf("a 500 reached the store")
	}

	// A body beyond MaxStoredBody stays in memory only.
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"big"`)
		w.Write(bytes.Repeat([]byte("x"), MaxStoredBody+1))
	}))
	defer big.Close()
	c := NewClient(ClientConfig{AllowLoopback: true, Store: store, Now: clk.now, MaxBody: 2 * MaxStoredBody})
	puts = store.puts
	if resp, err := c.do(context.Background(), request{service: "test", url: big.URL}); err != nil || len(resp.body) != MaxStoredBody+1 {
		t.Fatalf("big: %v", err)
	}
	if store.puts != puts {
		t.Errorf("a body beyond MaxStoredBody was handed to the store")
	}
}

// TestClientStoreNewerWins: a stale memory entry is not revalidated when the store
// holds a newer one (another worker refreshed it): the newer is served.
func TestClientStoreNewerWins(t *testing.T) {
	srv := newETagServer(t)
	store := newFakeStore()
	clk := &clock{t: fixtureNow}
	req := request{service: "test", url: srv.URL + "/pkg"}
	a := storeClient(t, store, clk, nil)
	if _, err := a.do(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	clk.advance(2 * time.Hour)
	// Worker b revalidates (304) and refreshes the store.
	if _, err := storeClient(t, store, clk, nil).do(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	n := len(srv.sent())
	// Worker a's memory entry is stale; the store's is fresh.
	resp, err := a.do(context.Background(), req)
	if err != nil || !resp.cached || len(srv.sent()) != n {
		t.Errorf("resp %+v, %v; %d requests, want %d", resp, err, len(srv.sent()), n)
	}
}

// TestWithRevalidate: within the cache's max age a read is served without a request,
// but a read WithRevalidate (a cadence read, a confirming re-read) is sent,
// conditionally, and a 304 gives the same facts.
func TestWithRevalidate(t *testing.T) {
	const name = "@modelcontextprotocol/server-filesystem"
	srv := startFixtureServer(t)
	clk := &clock{t: fixtureNow}
	npm := NewNPM(NPMConfig{BaseURL: srv.base("npm"), Client: storeClient(t, newFakeStore(), clk, nil)})
	first := npm.Package(context.Background(), name)
	clk.advance(time.Minute)
	npm.Package(context.Background(), name)
	if n := len(srv.received()); n != 1 {
		t.Fatalf("%d requests for a read a minute later, want it served from the cache", n)
	}
	again := npm.Package(WithRevalidate(context.Background()), name)
	reqs := srv.received()
	if len(reqs) != 2 || reqs[1].Header.Get("If-None-Match") != `"sfs-2026.8.31"` {
		t.Fatalf("requests %+v, want a second, conditional one", reqs)
	}
	if again.Facts.Source.Outcome != SourceOK || again.Facts.Latest != first.Facts.Latest {
		t.Errorf("revalidated facts %+v", again.Facts)
	}
}

// TestWithRevalidateThrottledServesFresh: a read asked to revalidate that Probity's
// own limit keeps from the source still has the fresh cached answer.
func TestWithRevalidateThrottledServesFresh(t *testing.T) {
	const name = "@modelcontextprotocol/server-filesystem"
	srv := startFixtureServer(t)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: fixtureNow}
	c := NewClient(ClientConfig{AllowLoopback: true, Store: newFakeStore(), Now: clk.now, MaxThrottleWait: -1,
		Limits: map[string]HostLimit{u.Host: {Anonymous: Limit{Requests: 1, Per: time.Hour, Burst: 1}}}})
	c.sleep = func(context.Context, time.Duration) error { return nil }
	npm := NewNPM(NPMConfig{BaseURL: srv.base("npm"), Client: c})
	first := npm.Package(context.Background(), name)
	clk.advance(time.Minute)
	again := npm.Package(WithRevalidate(context.Background()), name)
	if n := len(srv.received()); n != 1 {
		t.Errorf("%d requests, want the throttled second one not sent", n)
	}
	if again.Facts.Source.Outcome != SourceOK || again.Facts.Latest != first.Facts.Latest {
		t.Errorf("throttled revalidation: %+v, want the fresh cached answer", again.Facts.Source)
	}
}
