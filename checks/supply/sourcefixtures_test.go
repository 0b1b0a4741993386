package supply

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/probity-dev/probity/checks/supply/sourcefixtures"
)

// The source fixtures (package sourcefixtures) served on loopback.

// fixture is a source fixture and how often the fixture server has served it.
type fixture struct {
	*sourcefixtures.Fixture
	served int
}

// loadFixtures reads every fixture of the services.
func loadFixtures(t testing.TB) []*sourcefixtures.Fixture {
	t.Helper()
	fs, err := sourcefixtures.Load(filepath.Join("testdata", "fixtures"))
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// recordedRequest is one request the fixture server received.
type recordedRequest struct {
	Method string
	Path   string // /<service>/… with the query
	Header http.Header
}

// fixtureServer serves the fixtures from httptest on loopback, routing by method, path
// and query (and request body where a fixture names one). It answers 304 to an
// If-None-Match equal to the fixture's ETag, records every request, and answers 404 to
// requests no fixture matches (recorded as unmatched).
type fixtureServer struct {
	*httptest.Server
	mu        sync.Mutex
	routes    map[string][]*fixture
	requests  []recordedRequest
	unmatched []string
}

func startFixtureServer(t testing.TB) *fixtureServer {
	t.Helper()
	fs := &fixtureServer{routes: map[string][]*fixture{}}
	for route, l := range sourcefixtures.Routes(loadFixtures(t)) {
		for _, f := range l {
			fs.routes[route] = append(fs.routes[route], &fixture{Fixture: f})
		}
	}
	fs.Server = httptest.NewServer(http.HandlerFunc(fs.serve))
	t.Cleanup(fs.Close)
	return fs
}

func (fs *fixtureServer) serve(w http.ResponseWriter, r *http.Request) {
	path := r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		path += "?" + r.URL.RawQuery
	}
	var reqBody any
	if r.Body != nil {
		if b, err := readAllLimited(r, 1<<20); err == nil && len(b) > 0 {
			_ = json.Unmarshal(b, &reqBody)
		}
	}
	fs.mu.Lock()
	fs.requests = append(fs.requests, recordedRequest{Method: r.Method, Path: path, Header: r.Header.Clone()})
	var f *fixture
	for _, c := range fs.routes[r.Method+" "+path] {
		if c.Request != nil && !reflect.DeepEqual(c.Request, reqBody) {
			continue
		}
		if c.Meta.Times > 0 && c.served >= c.Meta.Times {
			continue
		}
		f = c
		break
	}
	if f == nil {
		fs.unmatched = append(fs.unmatched, r.Method+" "+path)
		fs.mu.Unlock()
		http.Error(w, `{"error":"no fixture"}`, http.StatusNotFound)
		return
	}
	f.served++
	fs.mu.Unlock()
	for k, v := range f.Meta.Headers {
		w.Header().Set(k, v)
	}
	if etag := f.Meta.Headers["ETag"]; etag != "" && r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.WriteHeader(f.Meta.Status)
	_, _ = w.Write(f.Body)
}

func readAllLimited(r *http.Request, n int64) ([]byte, error) {
	var buf bytes.Buffer
	_, err := buf.ReadFrom(http.MaxBytesReader(nil, r.Body, n))
	return buf.Bytes(), err
}

// base is the base URL of a service.
func (fs *fixtureServer) base(service string) string { return fs.URL + "/" + service }

// hits counts the requests whose path (without /<service>) is path, any method.
func (fs *fixtureServer) hits(service, path string) int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n := 0
	for _, r := range fs.requests {
		if r.Path == "/"+service+path {
			n++
		}
	}
	return n
}

// received returns the requests received so far.
func (fs *fixtureServer) received() []recordedRequest {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return slices.Clone(fs.requests)
}

// misses returns the requests no fixture matched.
func (fs *fixtureServer) misses() []string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return slices.Clone(fs.unmatched)
}

// fixtureNow is the clock of the source tests: after every fixture was written, half an
// hour before the GitHub quota reset in the fixtures (2026-11-30T12:30:00Z).
var fixtureNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// testClient returns a Client for the fixture server (on loopback, so with
// AllowLoopback) with a fixed clock and sleeps recorded instead of slept.
func testClient(t testing.TB, cfg ClientConfig) (*Client, *[]time.Duration) {
	t.Helper()
	cfg.AllowLoopback = true
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return fixtureNow }
	}
	c := NewClient(cfg)
	var mu sync.Mutex
	slept := &[]time.Duration{}
	c.sleep = func(_ context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		*slept = append(*slept, d)
		return nil
	}
	return c, slept
}

// TestFixtures checks the fixture set itself: at least 40 responses, every one with a
// known provenance, a status, a route, and the body the README promises.
func TestFixtures(t *testing.T) {
	fixtures := loadFixtures(t)
	if len(fixtures) < 40 {
		t.Fatalf("%d fixture responses, want at least 40", len(fixtures))
	}
	count := map[string]int{}
	statuses := map[int]bool{}
	for _, f := range fixtures {
		m := f.Meta
		switch m.Source {
		case "recorded", "derived", "documented":
		default:
			t.Errorf("%s/%s: source %q", f.Service, f.Name, m.Source)
		}
		if m.Method != "GET" && m.Method != "POST" || !strings.HasPrefix(m.Path, "/") || m.Status < 100 || m.Note == "" {
			t.Errorf("%s/%s: bad meta %+v", f.Service, f.Name, m)
		}
		if m.Status == http.StatusOK && len(f.Body) == 0 {
			t.Errorf("%s/%s: 200 without a body", f.Service, f.Name)
		}
		count[m.Source]++
		statuses[m.Status] = true
	}
	for _, s := range []int{200, 403, 404, 429, 503} {
		if !statuses[s] {
			t.Errorf("no fixture answers %d", s)
		}
	}
	if count["recorded"] < 10 {
		t.Errorf("%d recorded fixtures, want at least 10", count["recorded"])
	}
	t.Logf("%d fixture responses: %v", len(fixtures), count)
}
