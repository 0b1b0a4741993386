package supply

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The source fixtures live in testdata/fixtures/<service>/: NAME.meta.json describes one
// recorded or documented response (method, path relative to the service, status,
// headers, body file, and optionally the request body it answers), NAME.<ext> is the
// body. See testdata/fixtures/README.md.

// fixtureServices are the services with fixtures; each is served under /<service>.
var fixtureServices = []string{"npm", "pypi", "github", "depsdev", "osv", "scorecard"}

// fixtureMeta is one NAME.meta.json.
type fixtureMeta struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"` // escaped path and query, relative to the service
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`    // file in the same directory; "" for none
	Request string            `json:"request"` // file: the JSON request body this answers
	Times   int               `json:"times"`   // served this many times, then the next; 0: always
	Order   int               `json:"order"`   // order among fixtures of one route
	Source  string            `json:"source"`  // recorded, derived or documented
	Note    string            `json:"note"`
}

type fixture struct {
	service string
	name    string
	meta    fixtureMeta
	body    []byte
	request any // decoded request body to match; nil for any
	served  int
}

// loadFixtures reads every fixture of the services.
func loadFixtures(t testing.TB) []*fixture {
	t.Helper()
	var out []*fixture
	for _, svc := range fixtureServices {
		dir := filepath.Join("testdata", "fixtures", svc)
		metas, err := filepath.Glob(filepath.Join(dir, "*.meta.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, mp := range metas {
			data, err := os.ReadFile(mp)
			if err != nil {
				t.Fatal(err)
			}
			f := &fixture{service: svc, name: strings.TrimSuffix(filepath.Base(mp), ".meta.json")}
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&f.meta); err != nil {
				t.Fatalf("%s: %v", mp, err)
			}
			if f.meta.Body != "" {
				if f.body, err = os.ReadFile(filepath.Join(dir, f.meta.Body)); err != nil {
					t.Fatalf("%s: %v", mp, err)
				}
			}
			if f.meta.Request != "" {
				rb, err := os.ReadFile(filepath.Join(dir, f.meta.Request))
				if err != nil {
					t.Fatalf("%s: %v", mp, err)
				}
				if err := json.Unmarshal(rb, &f.request); err != nil {
					t.Fatalf("%s: request: %v", mp, err)
				}
			}
			out = append(out, f)
		}
	}
	return out
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
	for _, f := range loadFixtures(t) {
		key := f.meta.Method + " /" + f.service + f.meta.Path
		fs.routes[key] = append(fs.routes[key], f)
	}
	for _, l := range fs.routes {
		slices.SortStableFunc(l, func(a, b *fixture) int { return a.meta.Order - b.meta.Order })
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
		if c.request != nil && !reflect.DeepEqual(c.request, reqBody) {
			continue
		}
		if c.meta.Times > 0 && c.served >= c.meta.Times {
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
	for k, v := range f.meta.Headers {
		w.Header().Set(k, v)
	}
	if etag := f.meta.Headers["ETag"]; etag != "" && r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.WriteHeader(f.meta.Status)
	_, _ = w.Write(f.body)
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

// testClient returns a Client for the fixture server with a fixed clock and sleeps
// recorded instead of slept.
func testClient(t testing.TB, cfg ClientConfig) (*Client, *[]time.Duration) {
	t.Helper()
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
		m := f.meta
		switch m.Source {
		case "recorded", "derived", "documented":
		default:
			t.Errorf("%s/%s: source %q", f.service, f.name, m.Source)
		}
		if m.Method != "GET" && m.Method != "POST" || !strings.HasPrefix(m.Path, "/") || m.Status < 100 || m.Note == "" {
			t.Errorf("%s/%s: bad meta %+v", f.service, f.name, m)
		}
		if m.Status == http.StatusOK && len(f.body) == 0 {
			t.Errorf("%s/%s: 200 without a body", f.service, f.name)
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
