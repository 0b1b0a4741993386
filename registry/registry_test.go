package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/probity-dev/probity/checks/probe/egress"
)

// validExamples are the registry's docs/reference/server-json/examples/valid files
// (testdata/examples, see SOURCES.md).
var validExamples = []string{"minimal.json", "with-package.json", "with-remote.json"}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// serverSchema resolves the shipped server.json schema.
func serverSchema(t testing.TB) *jsonschema.Resolved {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal(readFile(t, "schema/server.schema.json"), &s); err != nil {
		t.Fatalf("couldn't parse the shipped schema: %v", err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("couldn't resolve the shipped schema: %v", err)
	}
	return rs
}

// validate validates a server object's bytes against the schema.
func validate(rs *jsonschema.Resolved, raw []byte) error {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	return rs.Validate(v)
}

// exampleServers returns the valid examples as decoded JSON objects.
func exampleServers(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, name := range validExamples {
		var m map[string]any
		if err := json.Unmarshal(readFile(t, filepath.Join("testdata/examples", name)), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// synthItems builds n list items in the registry's shape from the real examples: the
// examples in turn, each under its own name, every fifth name with an older version
// (isLatest false) before its latest.
func synthItems(t testing.TB, n int) []map[string]any {
	t.Helper()
	ex := exampleServers(t)
	base := time.Date(2025, 10, 1, 0, 0, 0, 0, time.UTC)
	var items []map[string]any
	for i := 0; len(items) < n; i++ {
		s := clone(t, ex[i%len(ex)])
		name := fmt.Sprintf("io.github.probity-test/server-%04d", i)
		s["name"] = name
		at := base.Add(time.Duration(i) * time.Minute).Format(time.RFC3339Nano)
		if i%5 == 0 && len(items)+1 < n {
			old := clone(t, s)
			old["version"] = "0.9.0"
			items = append(items, item(old, "active", false, at))
		}
		items = append(items, item(s, "active", true, at))
	}
	return items
}

func clone(t testing.TB, m map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func item(server map[string]any, status string, latest bool, at string) map[string]any {
	return map[string]any{"server": server, "_meta": map[string]any{OfficialMetaKey: map[string]any{
		"status": status, "isLatest": latest, "publishedAt": at, "updatedAt": at}}}
}

// pageBody is a list response of items with nextCursor next ("" for none).
func pageBody(t testing.TB, items []map[string]any, next string) []byte {
	t.Helper()
	meta := map[string]any{"count": len(items)}
	if next != "" {
		meta["nextCursor"] = next
	}
	b, err := json.Marshal(map[string]any{"servers": items, "metadata": meta})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fakeRegistry answers GET /v0.1/servers from pages keyed by cursor ("" first),
// records every query, and lets a test replace the answer of one request.
type fakeRegistry struct {
	t     testing.TB
	pages map[string][]byte

	mu      sync.Mutex
	queries []string
	// hook, when set, may answer a request itself (returning true).
	hook func(w http.ResponseWriter, r *http.Request, n int) bool
}

func (f *fakeRegistry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || r.URL.Path != "/v0.1/servers" {
		http.NotFound(w, r)
		return
	}
	if r.Header.Get("Authorization") != "" || r.Header.Get("Cookie") != "" {
		f.t.Errorf("request carried credentials: %v", r.Header)
	}
	f.mu.Lock()
	f.queries = append(f.queries, r.URL.RawQuery)
	n := len(f.queries)
	hook := f.hook
	body, ok := f.pages[r.URL.Query().Get("cursor")]
	f.mu.Unlock()
	if hook != nil && hook(w, r, n) {
		return
	}
	if !ok {
		http.Error(w, `{"error":"bad cursor"}`, http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

// setPage replaces the page at cursor; setHook the hook. Both are safe while serving.
func (f *fakeRegistry) setPage(cursor string, body []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pages[cursor] = body
}

func (f *fakeRegistry) setHook(hook func(w http.ResponseWriter, r *http.Request, n int) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hook = hook
}

func (f *fakeRegistry) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.queries...)
}

// paginate splits items into pages of size per, chained by cursors "c1", "c2", ...
func paginate(t testing.TB, items []map[string]any, per int) map[string][]byte {
	pages := map[string][]byte{}
	cursor := ""
	for i := 0; i < len(items); i += per {
		end := min(i+per, len(items))
		next := ""
		if end < len(items) {
			next = "c" + strconv.Itoa(end)
		}
		pages[cursor] = pageBody(t, items[i:end], next)
		cursor = next
	}
	return pages
}

// start serves f on loopback and returns a client for it behind the egress guard
// (loopback allowed), with sleeps recorded instead of slept.
func start(t *testing.T, f *fakeRegistry, cfg Config) (*Client, *[]time.Duration) {
	t.Helper()
	f.t = t
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cfg.BaseURL = srv.URL
	cfg.HTTPClient = GuardedHTTPClient(egress.Config{AllowLoopback: true})
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var slept []time.Duration
	c.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		slept = append(slept, d)
		mu.Unlock()
		return ctx.Err()
	}
	return c, &slept
}

// walk collects a walk's pages and its error.
func walk(c *Client, ctx context.Context, opts ListOptions) ([]*Page, error) {
	var pages []*Page
	for p, err := range c.Pages(ctx, opts) {
		if err != nil {
			return pages, err
		}
		pages = append(pages, p)
	}
	return pages, nil
}

func TestSchemaIsDraft07AndResolves(t *testing.T) {
	rs := serverSchema(t)
	if got := rs.Schema().Schema; got != "http://json-schema.org/draft-07/schema#" {
		t.Fatalf("$schema = %q; the test assumes draft-07, which jsonschema-go v0.4.3 supports", got)
	}
}

func TestExamplesValidateAgainstSchema(t *testing.T) {
	rs := serverSchema(t)
	for _, name := range validExamples {
		if err := validate(rs, readFile(t, filepath.Join("testdata/examples", name))); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := validate(rs, readFile(t, "testdata/examples/invalid-bad-name-pattern.json")); err == nil {
		t.Error("invalid-bad-name-pattern.json validated; the schema's name pattern is not enforced")
	}
}

func TestRecordedPageServersValidate(t *testing.T) {
	rs := serverSchema(t)
	entries, _, err := DecodePage(readFile(t, "testdata/good_page_official.json"), 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := validate(rs, e.Raw); err != nil {
			t.Errorf("%s %s: %v", e.Server.Name, e.Server.Version, err)
		}
	}
	for i, it := range synthItems(t, 500) {
		b, _ := json.Marshal(it["server"])
		if err := validate(rs, b); err != nil {
			t.Fatalf("synthesized item %d: %v", i, err)
		}
	}
}

func TestDecodeRecordedPage(t *testing.T) {
	entries, next, err := DecodePage(readFile(t, "testdata/good_page_official.json"), 100)
	if err != nil {
		t.Fatal(err)
	}
	if next != "io.github.user/remote-weather:2.1.0" || len(entries) != 4 {
		t.Fatalf("next %q, %d entries", next, len(entries))
	}
	pkg := entries[1]
	if pkg.Server.Name != "io.github.user/local-weather" || len(pkg.Server.Packages) != 1 {
		t.Fatalf("entry 1: %+v", pkg.Server)
	}
	p := pkg.Server.Packages[0]
	if p.RegistryType != "npm" || p.Identifier != "@modelcontextprotocol/server-weather" || p.Version != "1.0.0" ||
		p.Transport.Type != "stdio" || p.RuntimeHint != "npx" || len(p.PackageArguments) != 2 ||
		p.PackageArguments[1].Name != "--port" || p.PackageArguments[1].Value != "8080" ||
		p.EnvironmentVariables[0].Name != "API_KEY" || !p.EnvironmentVariables[0].IsSecret {
		t.Errorf("package: %+v", p)
	}
	if pkg.Official == nil || pkg.Official.Status != StatusDeprecated || !pkg.Official.IsLatest ||
		pkg.Official.StatusMessage == "" || pkg.Official.PublishedAt.Nanosecond() != 123e6 || pkg.Listed() {
		t.Errorf("official: %+v", pkg.Official)
	}
	r := entries[3].Server
	if r.Title != "Remote Weather" || r.WebsiteURL != "https://modelcontextprotocol.io/examples" ||
		r.Repository == nil || r.Repository.Subfolder != "src/weather" || len(r.Icons) != 1 || r.Icons[0].Sizes[1] != "96x96" ||
		len(r.Remotes) != 1 || r.Remotes[0].Type != "streamable-http" || r.Remotes[0].URL != "https://{host}/mcp" ||
		r.Remotes[0].Headers[0].Name != "Authorization" || r.Remotes[0].Variables["host"].Default != "api.example.com" {
		t.Errorf("remote server: %+v", r)
	}
	if !strings.Contains(string(entries[3].Raw), `"subfolder": "src/weather"`) || !strings.Contains(string(entries[3].Meta), OfficialMetaKey) {
		t.Errorf("raw bytes not kept: %s / %s", entries[3].Raw, entries[3].Meta)
	}
}

func TestDecodeToleratesUnknownFields(t *testing.T) {
	body := `{"servers":[{"server":{"name":"com.example/x","description":"d","version":"1.0.0","futureField":{"a":[1]},
		"remotes":[{"type":"streamable-http","url":"https://x.example/mcp","futureRemote":true}]},
		"_meta":{"io.modelcontextprotocol.registry/official":{"status":"active","isLatest":true,"newOfficialField":1},
		"com.example.other":{"x":1}}}],"metadata":{"count":1,"futureMeta":"x"},"futureTop":[]}`
	entries, next, err := DecodePage([]byte(body), 10)
	if err != nil || next != "" || len(entries) != 1 || entries[0].Server.Remotes[0].URL != "https://x.example/mcp" ||
		!strings.Contains(string(entries[0].Raw), "futureField") || !strings.Contains(string(entries[0].Meta), "com.example.other") {
		t.Fatalf("entries %+v, next %q, err %v", entries, next, err)
	}
}

func TestDecodeRefusesGarbage(t *testing.T) {
	srv := func(s string) string { return `{"servers":[{"server":` + s + `}]}` }
	cases := map[string]string{
		"fail_empty":           ``,
		"fail_not_json":        `<html>oops</html>`,
		"fail_array":           `[]`,
		"fail_trailing":        `{"servers":[]} {}`,
		"fail_no_servers":      `{"metadata":{}}`,
		"fail_servers_null":    `{"servers":null}`,
		"fail_servers_object":  `{"servers":{}}`,
		"fail_item_not_object": `{"servers":[1]}`,
		"fail_no_server":       `{"servers":[{"_meta":{}}]}`,
		"fail_server_string":   srv(`"x"`),
		"fail_name_missing":    srv(`{"description":"d","version":"1"}`),
		"fail_name_pattern":    srv(`{"name":"no-slash","description":"d","version":"1"}`),
		"fail_name_two_slash":  srv(`{"name":"a/b/c","description":"d","version":"1"}`),
		"fail_name_long":       srv(`{"name":"a/` + strings.Repeat("b", 200) + `","description":"d","version":"1"}`),
		"fail_version_missing": srv(`{"name":"a.b/c","description":"d"}`),
		"fail_version_long":    srv(`{"name":"a.b/c","description":"d","version":"` + strings.Repeat("1", 256) + `"}`),
		"fail_name_number":     srv(`{"name":5,"description":"d","version":"1"}`),
		"fail_remotes_object":  srv(`{"name":"a.b/c","description":"d","version":"1","remotes":{}}`),
		"fail_meta_array":      `{"servers":[{"server":{"name":"a.b/c","version":"1"},"_meta":[]}]}`,
		"fail_status_unknown":  `{"servers":[{"server":{"name":"a.b/c","version":"1"},"_meta":{"io.modelcontextprotocol.registry/official":{"status":"gone"}}}]}`,
		"fail_islatest_string": `{"servers":[{"server":{"name":"a.b/c","version":"1"},"_meta":{"io.modelcontextprotocol.registry/official":{"isLatest":"yes"}}}]}`,
		"fail_updated_bad":     `{"servers":[{"server":{"name":"a.b/c","version":"1"},"_meta":{"io.modelcontextprotocol.registry/official":{"updatedAt":"yesterday"}}}]}`,
		"fail_count_mismatch":  `{"servers":[],"metadata":{"count":3}}`,
		"fail_cursor_number":   `{"servers":[],"metadata":{"nextCursor":7}}`,
		"fail_cursor_long":     `{"servers":[],"metadata":{"nextCursor":"` + strings.Repeat("c", 1025) + `"}}`,
	}
	for name, body := range cases {
		_, _, err := DecodePage([]byte(body), 10)
		if !errors.Is(err, ErrMalformedPage) {
			t.Errorf("%s: err = %v, want ErrMalformedPage", name, err)
		}
	}
	many := pageBody(t, synthItems(t, 11), "")
	if _, _, err := DecodePage(many, 10); !errors.Is(err, ErrTooManyServers) {
		t.Errorf("11 items with a cap of 10: err = %v", err)
	}
}

func TestPaginationThroughEveryPage(t *testing.T) {
	items := synthItems(t, 250)
	f := &fakeRegistry{pages: paginate(t, items, 60)}
	c, _ := start(t, f, Config{Limit: 60})
	var progress []Progress
	pages, err := walk(c, context.Background(), ListOptions{Progress: func(p Progress) { progress = append(progress, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != 5 {
		t.Fatalf("%d pages, want 5", len(pages))
	}
	total := 0
	for i, p := range pages {
		if p.Number != i+1 {
			t.Errorf("page %d numbered %d", i+1, p.Number)
		}
		total += len(p.Entries)
		if progress[i].Pages != i+1 || progress[i].Servers != total || progress[i].NextCursor != p.NextCursor {
			t.Errorf("progress %d = %+v, want pages %d servers %d", i, progress[i], i+1, total)
		}
	}
	if total != len(items) || pages[4].NextCursor != "" || pages[1].Cursor != "c60" {
		t.Errorf("%d servers, last cursor %q, page 2 cursor %q", total, pages[4].NextCursor, pages[1].Cursor)
	}
	q := f.seen()
	if q[0] != "limit=60" || q[1] != "cursor=c60&limit=60" {
		t.Errorf("queries %q", q)
	}
}

func TestUpdatedSinceAndIncludeDeletedPassedThrough(t *testing.T) {
	f := &fakeRegistry{pages: paginate(t, synthItems(t, 3), 2)}
	c, _ := start(t, f, Config{Limit: 2})
	since := time.Date(2025, 11, 3, 10, 12, 44, 118e6, time.FixedZone("CET", 3600))
	if _, err := walk(c, context.Background(), ListOptions{UpdatedSince: since, IncludeDeleted: true}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"include_deleted=true&limit=2&updated_since=2025-11-03T09%3A12%3A44.118Z",
		"cursor=c2&include_deleted=true&limit=2&updated_since=2025-11-03T09%3A12%3A44.118Z",
	}
	if got := f.seen(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("queries\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestResumeFromCursor(t *testing.T) {
	f := &fakeRegistry{pages: paginate(t, synthItems(t, 9), 3)}
	c, _ := start(t, f, Config{Limit: 3})
	pages, err := walk(c, context.Background(), ListOptions{Cursor: "c6"})
	if err != nil || len(pages) != 1 || pages[0].Cursor != "c6" || pages[0].Number != 1 {
		t.Fatalf("pages %d, err %v", len(pages), err)
	}
}

// refusedAfterTwo serves two good pages and answers the third with fault; the walk
// must yield both pages, then a *PageError naming page 3 and its cursor, and resuming
// from that cursor once the fault is gone reads the rest.
func refusedAfterTwo(t *testing.T, cfg Config, fault func(w http.ResponseWriter)) error {
	t.Helper()
	items := synthItems(t, 12)
	f := &fakeRegistry{pages: paginate(t, items, 3)}
	var healed atomic.Bool
	f.hook = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if !healed.Load() && r.URL.Query().Get("cursor") == "c6" {
			fault(w)
			return true
		}
		return false
	}
	cfg.Limit = 3
	c, _ := start(t, f, cfg)
	pages, err := walk(c, context.Background(), ListOptions{})
	if len(pages) != 2 {
		t.Fatalf("%d pages before the refusal, want 2 (err %v)", len(pages), err)
	}
	var pe *PageError
	if !errors.As(err, &pe) || pe.Page != 3 || pe.Cursor != "c6" {
		t.Fatalf("err = %#v, want a *PageError for page 3 at cursor c6", err)
	}
	healed.Store(true)
	rest, rerr := walk(c, context.Background(), ListOptions{Cursor: pe.Cursor})
	if rerr != nil {
		t.Fatalf("resume: %v", rerr)
	}
	n := 0
	for _, p := range append(pages, rest...) {
		n += len(p.Entries)
	}
	if n != len(items) {
		t.Fatalf("%d servers after resuming, want %d", n, len(items))
	}
	return err
}

func TestRefusePageTooLarge(t *testing.T) {
	err := refusedAfterTwo(t, Config{MaxPageBytes: 64 << 10}, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"servers":[],"pad":"%s"}`, strings.Repeat("x", 64<<10))
	})
	if !errors.Is(err, ErrPageTooLarge) {
		t.Fatalf("err = %v", err)
	}
}

func TestRefuseTooManyServers(t *testing.T) {
	err := refusedAfterTwo(t, Config{MaxServersPerPage: 5}, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(pageBody(t, synthItems(t, 6), ""))
	})
	if !errors.Is(err, ErrTooManyServers) {
		t.Fatalf("err = %v", err)
	}
}

func TestRefuseNon200WithExcerpt(t *testing.T) {
	err := refusedAfterTwo(t, Config{}, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, "{\"error\":\"database\\u0000 down\"}\n%s", strings.Repeat("y", 1000))
	})
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 500 || !strings.HasPrefix(se.Excerpt, `{"error":"database\u0000 down"}`) || len(se.Excerpt) > maxExcerpt {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), "HTTP 500") {
		t.Errorf("message %q does not name the status", err)
	}
}

func TestRefuseNonJSON(t *testing.T) {
	err := refusedAfterTwo(t, Config{}, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("<html><body>\x01Maintenance</body></html>"))
	})
	var se *StatusError
	if !errors.Is(err, ErrMalformedPage) || !errors.As(err, &se) || se.Status != 200 || se.Excerpt != "<html><body>\uFFFDMaintenance</body></html>" {
		t.Fatalf("err = %v", err)
	}
	err = refusedAfterTwo(t, Config{}, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"servers": [`))
	})
	if !errors.Is(err, ErrMalformedPage) {
		t.Fatalf("truncated JSON: err = %v", err)
	}
}

func TestRefuseCursorLoop(t *testing.T) {
	items := synthItems(t, 6)
	f := &fakeRegistry{pages: map[string][]byte{
		"":   pageBody(t, items[:2], "c2"),
		"c2": pageBody(t, items[2:4], "c4"),
		"c4": pageBody(t, items[4:], "c2"),
	}}
	c, _ := start(t, f, Config{Limit: 2})
	pages, err := walk(c, context.Background(), ListOptions{})
	var pe *PageError
	if len(pages) != 3 || !errors.Is(err, ErrCursorLoop) || !errors.As(err, &pe) || pe.Cursor != "c2" || pe.Page != 4 {
		t.Fatalf("%d pages, err %v", len(pages), err)
	}
	if n := len(f.seen()); n != 3 {
		t.Errorf("%d requests, want 3 (the looping cursor is never requested)", n)
	}
	// A page pointing at the start cursor is a loop too.
	f.setPage("c2", pageBody(t, items[2:4], ""))
	if _, err := walk(c, context.Background(), ListOptions{Cursor: "c2"}); err != nil {
		t.Fatalf("resume at c2: %v", err)
	}
	f.setPage("c2", pageBody(t, items[2:4], "c2"))
	if _, err := walk(c, context.Background(), ListOptions{Cursor: "c2"}); !errors.Is(err, ErrCursorLoop) {
		t.Fatalf("self-loop: err = %v", err)
	}
}

func TestRefuseTooManyPages(t *testing.T) {
	f := &fakeRegistry{pages: paginate(t, synthItems(t, 10), 2)}
	c, _ := start(t, f, Config{Limit: 2, MaxPages: 3})
	pages, err := walk(c, context.Background(), ListOptions{})
	var pe *PageError
	if len(pages) != 3 || !errors.Is(err, ErrTooManyPages) || !errors.As(err, &pe) || pe.Cursor != "c6" {
		t.Fatalf("%d pages, err %v", len(pages), err)
	}
	if n := len(f.seen()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	f := &fakeRegistry{pages: paginate(t, synthItems(t, 4), 2)}
	f.hook = func(w http.ResponseWriter, r *http.Request, n int) bool {
		switch n {
		case 2:
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
			return true
		case 3:
			w.Header().Set("Retry-After", time.Now().Add(3*time.Second).UTC().Format(http.TimeFormat))
			w.WriteHeader(http.StatusServiceUnavailable)
			return true
		}
		return false
	}
	c, slept := start(t, f, Config{Limit: 2})
	pages, err := walk(c, context.Background(), ListOptions{})
	if err != nil || len(pages) != 2 {
		t.Fatalf("%d pages, err %v", len(pages), err)
	}
	if len(*slept) != 2 || (*slept)[0] != 7*time.Second || (*slept)[1] < 2*time.Second || (*slept)[1] > 3*time.Second {
		t.Fatalf("slept %v, want [7s ~3s]", *slept)
	}
}

func TestRetryAfterBounded(t *testing.T) {
	err := refusedAfterTwo(t, Config{MaxRetryWait: 10 * time.Second}, func(w http.ResponseWriter) {
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	var se *StatusError
	if !errors.Is(err, ErrRateLimited) || !errors.As(err, &se) || se.RetryAfter != time.Hour {
		t.Fatalf("err = %v", err)
	}
	err = refusedAfterTwo(t, Config{MaxRetries: 2}, func(w http.ResponseWriter) {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	if !errors.Is(err, ErrRateLimited) {
		t.Fatalf("retries exhausted: err = %v", err)
	}
	// A 503 without Retry-After is an error at once, not a retry.
	err = refusedAfterTwo(t, Config{}, func(w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) })
	if !errors.As(err, &se) || se.Status != 503 || errors.Is(err, ErrRateLimited) {
		t.Fatalf("503: err = %v", err)
	}
}

// A Retry-After date centuries ahead is a long wait like any other, even after a
// first wait: refused, never slept (nor added up past the largest Duration).
func TestRetryAfterFarDateBounded(t *testing.T) {
	f := &fakeRegistry{pages: paginate(t, synthItems(t, 2), 2)}
	f.hook = func(w http.ResponseWriter, r *http.Request, n int) bool {
		w.Header().Set("Retry-After", "1")
		if n == 2 {
			w.Header().Set("Retry-After", "Fri, 31 Dec 9999 23:59:59 GMT")
		}
		w.WriteHeader(http.StatusTooManyRequests)
		return true
	}
	c, slept := start(t, f, Config{Limit: 2})
	_, err := walk(c, context.Background(), ListOptions{})
	var se *StatusError
	if !errors.Is(err, ErrRateLimited) || !errors.As(err, &se) || se.RetryAfter != 24*time.Hour {
		t.Fatalf("err = %v", err)
	}
	if len(*slept) != 1 || (*slept)[0] != time.Second {
		t.Fatalf("slept %v, want [1s]", *slept)
	}
}

// A wait the page's timeout would cut is refused at once as rate limiting, not slept
// into a deadline error.
func TestRetryAfterPastPageTimeout(t *testing.T) {
	f := &fakeRegistry{pages: paginate(t, synthItems(t, 2), 2)}
	f.hook = func(w http.ResponseWriter, r *http.Request, n int) bool {
		w.Header().Set("Retry-After", "5")
		w.WriteHeader(http.StatusTooManyRequests)
		return true
	}
	c, slept := start(t, f, Config{Limit: 2, PageTimeout: 2 * time.Second})
	_, err := walk(c, context.Background(), ListOptions{})
	var se *StatusError
	if !errors.Is(err, ErrRateLimited) || !errors.As(err, &se) || se.RetryAfter != 5*time.Second {
		t.Fatalf("err = %v", err)
	}
	if len(*slept) != 0 || len(f.seen()) != 1 {
		t.Fatalf("slept %v over %d requests, want no wait and one request", *slept, len(f.seen()))
	}
}

func TestCancellation(t *testing.T) {
	items := synthItems(t, 6)
	f := &fakeRegistry{pages: paginate(t, items, 2)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	release := make(chan struct{})
	f.hook = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if n == 2 {
			cancel()
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return true
		}
		return false
	}
	defer close(release)
	c, _ := start(t, f, Config{Limit: 2})
	pages, err := walk(c, ctx, ListOptions{})
	if len(pages) != 1 || !errors.Is(err, context.Canceled) {
		t.Fatalf("%d pages, err %v", len(pages), err)
	}
	// Cancelled while waiting on Retry-After.
	ctx2, cancel2 := context.WithCancel(context.Background())
	c.sleep = func(ctx context.Context, d time.Duration) error { cancel2(); return sleepCtx(ctx, d) }
	f.setHook(func(w http.ResponseWriter, r *http.Request, n int) bool {
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(http.StatusTooManyRequests)
		return true
	})
	if _, err := walk(c, ctx2, ListOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled in Retry-After: err %v", err)
	}
}

func TestStopIteratingStopsRequests(t *testing.T) {
	f := &fakeRegistry{pages: paginate(t, synthItems(t, 10), 2)}
	c, _ := start(t, f, Config{Limit: 2})
	for range c.Pages(context.Background(), ListOptions{}) {
		break
	}
	if n := len(f.seen()); n != 1 {
		t.Fatalf("%d requests after break on the first page", n)
	}
}

func TestDefaultClientRefusesLoopback(t *testing.T) {
	f := &fakeRegistry{t: t, pages: paginate(t, synthItems(t, 2), 2)}
	srv := httptest.NewServer(f)
	defer srv.Close()
	c, err := New(Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = walk(c, context.Background(), ListOptions{})
	if !errors.Is(err, egress.ErrBlocked) || len(f.seen()) != 0 {
		t.Fatalf("err = %v, %d requests reached the server", err, len(f.seen()))
	}
	if n := strings.Count(err.Error(), "/v0.1/servers"); n != 1 {
		t.Errorf("the message names the URL %d times: %v", n, err)
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	for _, base := range []string{"ftp://x.example", "https://u:p@x.example", "https://x.example/?a=1", "https://x.example/#f", "/relative", "https://"} {
		if _, err := New(Config{BaseURL: base}); err == nil {
			t.Errorf("New accepted base %q", base)
		}
	}
	if _, err := New(Config{Limit: 200, MaxServersPerPage: 100}); err == nil {
		t.Error("New accepted a limit above MaxServersPerPage")
	}
	c, err := New(Config{BaseURL: "https://mirror.example/prefix/"})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.pageURL("a b", ListOptions{}); got != "https://mirror.example/prefix/v0.1/servers?cursor=a+b&limit=100" {
		t.Errorf("page URL %q", got)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := map[string]time.Duration{
		"": 0, "0": 0, "-5": 0, "12": 12 * time.Second, "999999999999": 24 * time.Hour, "soon": 0,
		now.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
		now.Add(-time.Minute).Format(http.TimeFormat):     0,
		now.Add(48 * time.Hour).Format(http.TimeFormat):   24 * time.Hour,
		"Fri, 31 Dec 9999 23:59:59 GMT":                   24 * time.Hour,
	}
	for in, want := range cases {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestLatest(t *testing.T) {
	at := func(s string) string { return "2025-11-0" + s + "T00:00:00Z" }
	srv := func(name, version string) map[string]any {
		return map[string]any{"name": name, "description": "d", "version": version}
	}
	page1 := []map[string]any{
		item(srv("com.example/a", "1.0.0"), "active", false, at("1")),
		item(srv("com.example/a", "2.0.0"), "active", true, at("2")),
		item(srv("com.example/b", "1.0.0"), "deprecated", true, at("1")),
		item(srv("com.example/c", "1.0.0"), "active", false, at("1")),
	}
	page2 := []map[string]any{
		item(srv("com.example/c", "2.0.0"), "deleted", true, at("3")),
		item(srv("com.example/d", "0.1.0"), "active", false, at("3")),
		item(srv("com.example/e", "1.0.0"), "active", true, at("1")),
		item(srv("com.example/e", "1.1.0"), "active", true, at("4")),
		{"server": srv("com.example/f", "1.0.0")},
		{"server": srv("com.example/g", "1.0.0")},
		{"server": srv("com.example/g", "2.0.0")},
	}
	var l Latest
	for _, p := range [][]map[string]any{page1, page2} {
		entries, _, err := DecodePage(pageBody(t, p, ""), 100)
		if err != nil {
			t.Fatal(err)
		}
		l.Add(entries)
		clear(entries) // Latest keeps what it lists, not the caller's slice
	}
	type want struct {
		version       string
		listed        bool
		versions, con int
	}
	wants := map[string]want{
		"com.example/a": {"2.0.0", true, 2, 0},
		"com.example/b": {"1.0.0", false, 1, 0},
		"com.example/c": {"2.0.0", false, 2, 0},
		"com.example/d": {"", false, 1, 0},
		"com.example/e": {"1.1.0", true, 2, 1},
		"com.example/f": {"1.0.0", true, 1, 0},
		"com.example/g": {"", false, 2, 0},
	}
	got := l.Listings()
	if len(got) != len(wants) {
		t.Fatalf("%d listings, want %d", len(got), len(wants))
	}
	for i, li := range got {
		w := wants[li.Name]
		v := ""
		if li.Latest != nil {
			v = li.Latest.Server.Version
		}
		if v != w.version || li.Listed != w.listed || li.Versions != w.versions || li.Conflicts != w.con {
			t.Errorf("%s: latest %q listed %v versions %d conflicts %d; want %+v", li.Name, v, li.Listed, li.Versions, li.Conflicts, w)
		}
		if i > 0 && got[i-1].Name >= li.Name {
			t.Errorf("not sorted at %s", li.Name)
		}
	}
}

// BenchmarkDecodePages500 decodes 500 servers (plus older versions) in the registry's
// shape, in pages of 100, as a full sync of that size reads them.
func BenchmarkDecodePages500(b *testing.B) {
	items := synthItems(b, 500)
	var pages [][]byte
	size := 0
	for i := 0; i < len(items); i += 100 {
		p := pageBody(b, items[i:min(i+100, len(items))], "next")
		pages = append(pages, p)
		size += len(p)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range pages {
			if _, _, err := DecodePage(p, DefaultMaxServers); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkWalk500 walks 500 servers in pages of 100 from a loopback registry through
// the egress guard.
func BenchmarkWalk500(b *testing.B) {
	f := &fakeRegistry{t: b, pages: paginate(b, synthItems(b, 500), 100)}
	srv := httptest.NewServer(f)
	defer srv.Close()
	c, err := New(Config{BaseURL: srv.URL, HTTPClient: GuardedHTTPClient(egress.Config{AllowLoopback: true})})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		n := 0
		for p, err := range c.Pages(context.Background(), ListOptions{}) {
			if err != nil {
				b.Fatal(err)
			}
			n += len(p.Entries)
		}
		if n != 500 {
			b.Fatalf("%d servers", n)
		}
	}
}

func FuzzDecodePage(f *testing.F) {
	f.Add(readFile(f, "testdata/good_page_official.json"))
	f.Add([]byte(`{"servers":[],"metadata":{"nextCursor":"x","count":0}}`))
	f.Add([]byte(`{"servers":[{"server":{"name":"a.b/c","version":"1"},"_meta":{"io.modelcontextprotocol.registry/official":{"status":"deleted"}}}]}`))
	f.Add([]byte(`{"servers":[{"server":"x"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		entries, next, err := DecodePage(body, 50)
		if err != nil {
			if entries != nil || next != "" {
				t.Fatal("a refused page returned entries")
			}
			return
		}
		if len(entries) > 50 || len(next) > maxCursorLength {
			t.Fatalf("%d entries, cursor of %d bytes", len(entries), len(next))
		}
		for _, e := range entries {
			if !namePattern.MatchString(e.Server.Name) || e.Server.Version == "" || !json.Valid(e.Raw) {
				t.Fatalf("accepted entry %+v", e.Server)
			}
		}
	})
}

// TestShippedOpenAPIMatchesClient ties the shipped API description to what the client
// sends and the decoder accepts: the list path and parameters, the official metadata
// member, its fields and the status values. (No YAML parser is a dependency, so the
// check reads the YAML as text; a refresh that changes these lines fails here.)
func TestShippedOpenAPIMatchesClient(t *testing.T) {
	spec := string(readFile(t, "schema/openapi.yaml"))
	for _, want := range []string{
		"\n  " + serversPath + ":\n    get:",
		"- name: cursor\n          in: query",
		"- name: limit\n          in: query",
		"- name: updated_since\n          in: query",
		"- name: include_deleted\n          in: query",
		"            nextCursor:\n              type: string",
		"            count:\n              type: integer",
		"            " + OfficialMetaKey + ":",
		`enum: ["` + string(StatusActive) + `", "` + string(StatusDeprecated) + `", "` + string(StatusDeleted) + `"]`,
		"                statusMessage:", "                statusChangedAt:", "                publishedAt:",
		"                updatedAt:", "                isLatest:\n                  type: boolean",
	} {
		if !strings.Contains(spec, want) {
			t.Errorf("schema/openapi.yaml no longer says %q", want)
		}
	}
}

func TestPageTimeout(t *testing.T) {
	f := &fakeRegistry{pages: paginate(t, synthItems(t, 4), 2)}
	release := make(chan struct{})
	defer close(release)
	f.hook = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if n == 2 {
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return true
		}
		return false
	}
	c, _ := start(t, f, Config{Limit: 2, PageTimeout: 200 * time.Millisecond})
	pages, err := walk(c, context.Background(), ListOptions{})
	var pe *PageError
	if len(pages) != 1 || !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &pe) || pe.Cursor != "c2" {
		t.Fatalf("%d pages, err %v", len(pages), err)
	}
}

func TestRedirectToMetadataRefused(t *testing.T) {
	f := &fakeRegistry{pages: paginate(t, synthItems(t, 2), 2)}
	f.hook = func(w http.ResponseWriter, r *http.Request, n int) bool {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		return true
	}
	c, _ := start(t, f, Config{Limit: 2})
	if _, err := walk(c, context.Background(), ListOptions{}); !errors.Is(err, egress.ErrBlocked) {
		t.Fatalf("err = %v, want the egress guard's refusal", err)
	}
}

func TestIncludeDeletedAlone(t *testing.T) {
	items := synthItems(t, 2)
	items[1]["_meta"].(map[string]any)[OfficialMetaKey].(map[string]any)["status"] = "deleted"
	f := &fakeRegistry{pages: paginate(t, items, 2)}
	c, _ := start(t, f, Config{Limit: 2})
	pages, err := walk(c, context.Background(), ListOptions{IncludeDeleted: true})
	if err != nil || len(pages) != 1 {
		t.Fatalf("%d pages, err %v", len(pages), err)
	}
	if q := f.seen(); len(q) != 1 || q[0] != "include_deleted=true&limit=2" {
		t.Errorf("queries %q", q)
	}
	e := pages[0].Entries
	if !e[0].Listed() || e[1].Listed() || e[1].Official.Status != StatusDeleted {
		t.Errorf("listed: %v %v (%+v)", e[0].Listed(), e[1].Listed(), e[1].Official)
	}
}

func TestDecodedEntriesDoNotAliasBody(t *testing.T) {
	body := readFile(t, "testdata/good_page_official.json")
	entries, _, err := DecodePage(body, 100)
	if err != nil {
		t.Fatal(err)
	}
	want := string(entries[3].Raw) + string(entries[3].Meta)
	for i := range body {
		body[i] = 'x'
	}
	if got := string(entries[3].Raw) + string(entries[3].Meta); got != want || entries[3].Server.Name != "io.github.user/remote-weather" {
		t.Fatalf("entries changed with the body: %s", got)
	}
}
