package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"go.yaml.in/yaml/v3"

	"github.com/probity-dev/probity/checks/probe/egress"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/registry"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/web"
)

// resultsKey is the _meta key of Probity's results.
const resultsKey = "dev.probity/results"

// --- The registry's schemas ---

// regSchemas are the registry's shipped schemas, resolved: the OpenAPI description's
// response schemas (registry/schema/openapi.yaml, its components turned into $defs of
// one JSON Schema each, in the description's jsonSchemaDialect) and the server.json
// JSON Schema (registry/schema/server.schema.json, draft-07).
type regSchemas struct {
	// responses maps "path template status" to the answer's schema.
	responses map[string]*jsonschema.Resolved
	// errorShape is the registry's error answer ({"error": "…"}), for statuses the
	// description does not list for a path (400: it lists none for the list).
	errorShape *jsonschema.Resolved
	server     *jsonschema.Resolved
	// documented are this site's own descriptions of the answers (openapi.json:
	// RegistryServerList, RegistryServerResponse, RegistryError), which say what
	// dev.probity/results holds (ProbityResults).
	documented map[string]*jsonschema.Resolved
}

// The three read paths of the registry's API.
const (
	pathList     = "/v0.1/servers"
	pathVersions = "/v0.1/servers/{serverName}/versions"
	pathVersion  = "/v0.1/servers/{serverName}/versions/{version}"
)

var (
	schemasOnce sync.Once
	schemas     *regSchemas
	schemasErr  error
)

// loadRegSchemas reads and resolves the shipped schemas once per test binary.
func loadRegSchemas(t testing.TB) *regSchemas {
	t.Helper()
	schemasOnce.Do(func() { schemas, schemasErr = readRegSchemas() })
	if schemasErr != nil {
		t.Fatal(schemasErr)
	}
	return schemas
}

func readRegSchemas() (*regSchemas, error) {
	raw, err := os.ReadFile("../registry/schema/openapi.yaml")
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	dialect, _ := doc["jsonSchemaDialect"].(string)
	if dialect != "https://json-schema.org/draft/2020-12/schema" {
		return nil, fmt.Errorf("openapi.yaml: jsonSchemaDialect %q, want draft 2020-12", dialect)
	}
	comps, _ := dig(doc, "components", "schemas").(map[string]any)
	if comps["ServerList"] == nil || comps["ServerResponse"] == nil {
		return nil, fmt.Errorf("openapi.yaml: no ServerList or ServerResponse schema")
	}
	resolve, err := schemaResolver(dialect, comps)
	if err != nil {
		return nil, err
	}
	rs := &regSchemas{responses: map[string]*jsonschema.Resolved{}, documented: map[string]*jsonschema.Resolved{}}
	for _, p := range []string{pathList, pathVersions, pathVersion} {
		answers, _ := dig(doc, "paths", p, "get", "responses").(map[string]any)
		if len(answers) == 0 {
			return nil, fmt.Errorf("openapi.yaml: GET %s has no responses", p)
		}
		for status := range answers {
			s := dig(answers, status, "content", "application/json", "schema")
			if s == nil {
				return nil, fmt.Errorf("openapi.yaml: GET %s %s has no JSON schema", p, status)
			}
			if rs.responses[p+" "+status], err = resolve(s); err != nil {
				return nil, fmt.Errorf("GET %s %s: %w", p, status, err)
			}
		}
	}
	if rs.errorShape, err = resolve(dig(doc, "paths", pathVersions, "get", "responses", "404", "content", "application/json", "schema")); err != nil {
		return nil, err
	}
	b, err := os.ReadFile("../registry/schema/server.schema.json")
	if err != nil {
		return nil, err
	}
	var ss jsonschema.Schema
	if err := json.Unmarshal(b, &ss); err != nil {
		return nil, err
	}
	if ss.Schema != "http://json-schema.org/draft-07/schema#" {
		return nil, fmt.Errorf("server.schema.json is %q, not draft-07", ss.Schema)
	}
	if rs.server, err = ss.Resolve(nil); err != nil {
		return nil, err
	}
	var own map[string]any
	if b, err = os.ReadFile("openapi.json"); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &own); err != nil {
		return nil, err
	}
	ownComps, _ := dig(own, "components", "schemas").(map[string]any)
	resolveOwn, err := schemaResolver(dialect, ownComps)
	if err != nil {
		return nil, err
	}
	for _, name := range []string{"RegistryServerList", "RegistryServerResponse", "RegistryError"} {
		if ownComps[name] == nil {
			return nil, fmt.Errorf("openapi.json has no %s", name)
		}
		if rs.documented[name], err = resolveOwn(map[string]any{"$ref": "#/components/schemas/" + name}); err != nil {
			return nil, fmt.Errorf("openapi.json %s: %w", name, err)
		}
	}
	return rs, nil
}

// schemaResolver returns a function that resolves one schema of an OpenAPI
// description as JSON Schema in dialect, with the description's components as $defs.
func schemaResolver(dialect string, comps map[string]any) (func(any) (*jsonschema.Resolved, error), error) {
	defs, err := rewriteRefs(comps)
	if err != nil {
		return nil, err
	}
	return func(s any) (*jsonschema.Resolved, error) {
		s, err := rewriteRefs(s)
		if err != nil {
			return nil, err
		}
		m, ok := s.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("a schema is a %T", s)
		}
		root := map[string]any{"$schema": dialect, "$defs": defs}
		for k, v := range m {
			root[k] = v
		}
		b, err := json.Marshal(root)
		if err != nil {
			return nil, err
		}
		var js jsonschema.Schema
		if err := json.Unmarshal(b, &js); err != nil {
			return nil, err
		}
		return js.Resolve(nil)
	}, nil
}

// dig walks nested maps by keys; nil when a key is missing.
func dig(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// rewriteRefs copies an OpenAPI schema into JSON Schema: a reference to
// #/components/schemas/X becomes #/$defs/X; any other reference is refused.
func rewriteRefs(v any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if k == "$ref" {
				s, _ := e.(string)
				name, ok := strings.CutPrefix(s, "#/components/schemas/")
				if !ok {
					return nil, fmt.Errorf("unsupported reference %q", s)
				}
				out[k] = "#/$defs/" + name
				continue
			}
			r, err := rewriteRefs(e)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			r, err := rewriteRefs(e)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	return v, nil
}

// TestRegistrySchemasAreEnforced shows the converted schemas hold: a good page passes,
// and a page without servers, an item without its server, a bad official status, a
// server.json without a description, fail.
func TestRegistrySchemasAreEnforced(t *testing.T) {
	rs := loadRegSchemas(t)
	good := readJSON(t, "../registry/testdata/good_page_official.json")
	list := rs.responses[pathList+" 200"]
	if err := list.Validate(good); err != nil {
		t.Fatalf("the registry's own good page: %v", err)
	}
	for name, spoil := range map[string]func(m map[string]any){
		"no servers": func(m map[string]any) { delete(m, "servers") },
		"no server":  func(m map[string]any) { delete(item0(m), "server") },
		"bad status": func(m map[string]any) {
			dig(item0(m), "_meta", registry.OfficialMetaKey).(map[string]any)["status"] = "gone"
		},
		"unknown official": func(m map[string]any) { dig(item0(m), "_meta", registry.OfficialMetaKey).(map[string]any)["extra"] = 1 },
		"count a string":   func(m map[string]any) { m["metadata"].(map[string]any)["count"] = "4" },
		"name pattern":     func(m map[string]any) { item0(m)["server"].(map[string]any)["name"] = "no-slash" },
	} {
		bad := readJSON(t, "../registry/testdata/good_page_official.json")
		spoil(bad)
		if err := list.Validate(bad); err == nil {
			t.Errorf("%s: the page validates", name)
		}
	}
	srv := item0(good)["server"].(map[string]any)
	delete(srv, "description")
	if err := rs.server.Validate(srv); err == nil {
		t.Error("a server.json without description validates")
	}
	if err := rs.errorShape.Validate(map[string]any{"error": 1}); err == nil {
		t.Error(`{"error": 1} validates as an error`)
	}
}

func item0(m map[string]any) map[string]any { return m["servers"].([]any)[0].(map[string]any) }

func readJSON(t testing.TB, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// --- Checking every answer ---

// regResults is the part of Probity's results the tests read.
type regResults struct {
	Slug     string         `json:"slug"`
	Status   string         `json:"status"`
	State    string         `json:"state"`
	Verified bool           `json:"verified"`
	Score    *int           `json:"score"`
	Coverage *string        `json:"coverage"`
	Findings map[string]int `json:"findings"`
	// LastRound, Supply and LastConfirmedChange are null or objects.
	LastRound *struct {
		RoundID   string    `json:"roundId"`
		StartedAt time.Time `json:"startedAt"`
		Signed    bool      `json:"signed"`
		Coverage  string    `json:"coverage"`
		Envelope  string    `json:"envelope"`
	} `json:"lastRound"`
	Supply *struct {
		Score    int            `json:"score"`
		Verified bool           `json:"verified"`
		Signed   bool           `json:"signed"`
		Findings map[string]int `json:"findings"`
	} `json:"supply"`
	LastConfirmedChange *struct {
		Number int64  `json:"number"`
		Kind   string `json:"kind"`
		Link   string `json:"link"`
	} `json:"lastConfirmedChange"`
	Links struct {
		Page      string `json:"page"`
		Envelopes string `json:"envelopes"`
		Keys      string `json:"keys"`
	} `json:"links"`
}

type regItemJSON struct {
	Server json.RawMessage            `json:"server"`
	Meta   map[string]json.RawMessage `json:"_meta"`
}

// checker validates every answer of the subregistry it passes on against the
// registry's schemas, and reads every list with the registry package's strict
// decoder.
type checker struct {
	t  testing.TB
	rs *regSchemas
	h  http.Handler
	mu sync.Mutex
	n  int // answers checked
}

func (c *checker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	c.h.ServeHTTP(rec, r)
	c.check(r.Method, r.URL, rec)
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
}

// get sends one request to the subregistry through the checker.
func (c *checker) get(t testing.TB, method, target string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	c.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return rec
}

// regTemplate names the registry path an address is.
func regTemplate(p string) string {
	switch {
	case p == pathList:
		return pathList
	case strings.HasSuffix(p, "/versions"):
		return pathVersions
	}
	return pathVersion
}

func (c *checker) check(method string, u *url.URL, rec *httptest.ResponseRecorder) {
	t := c.t
	t.Helper()
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	where := method + " " + u.String()
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s: %d with Content-Type %q", where, rec.Code, ct)
		return
	}
	if method == http.MethodHead {
		return
	}
	body := rec.Body.Bytes()
	// Nothing in an answer can hide: no raw markup, no invisible characters.
	if bytes.ContainsAny(body, "<>") || strings.ContainsFunc(string(body), invisible) {
		t.Errorf("%s: the answer holds markup or an invisible character: %.300s", where, body)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Errorf("%s: not JSON: %v", where, err)
		return
	}
	tmpl := regTemplate(u.Path)
	rs := c.rs.responses[fmt.Sprintf("%s %d", tmpl, rec.Code)]
	if rs == nil {
		if rec.Code == http.StatusOK {
			t.Errorf("%s: 200 is not an answer the registry describes", where)
			return
		}
		rs = c.rs.errorShape
	}
	if err := rs.Validate(v); err != nil {
		t.Errorf("%s: %d answer does not validate against the registry's OpenAPI schema: %v\n%.500s", where, rec.Code, err, body)
		return
	}
	own := map[string]string{pathList: "RegistryServerList", pathVersions: "RegistryServerList", pathVersion: "RegistryServerResponse"}[tmpl]
	if rec.Code != http.StatusOK {
		own = "RegistryError"
	}
	if err := c.rs.documented[own].Validate(v); err != nil {
		t.Errorf("%s: %d answer does not validate against openapi.json's %s: %v\n%.500s", where, rec.Code, own, err, body)
	}
	if rec.Code != http.StatusOK {
		if msg, _ := dig(v, "error").(string); msg == "" {
			t.Errorf("%s: %d without an error message: %s", where, rec.Code, body)
		}
		return
	}
	var items []regItemJSON
	if tmpl == pathVersion {
		var it regItemJSON
		if err := json.Unmarshal(body, &it); err != nil {
			t.Errorf("%s: %v", where, err)
			return
		}
		items = append(items, it)
	} else {
		if _, _, err := registry.DecodePage(body, registry.DefaultMaxServers); err != nil {
			t.Errorf("%s: the registry client refuses the page: %v", where, err)
		}
		var l struct {
			Servers []regItemJSON `json:"servers"`
		}
		if err := json.Unmarshal(body, &l); err != nil {
			t.Errorf("%s: %v", where, err)
			return
		}
		items = l.Servers
	}
	for i, it := range items {
		var s any
		if err := json.Unmarshal(it.Server, &s); err != nil {
			t.Errorf("%s: item %d: %v", where, i, err)
			continue
		}
		if err := c.rs.server.Validate(s); err != nil {
			t.Errorf("%s: item %d: server.json does not validate against server.schema.json: %v", where, i, err)
		}
		var res regResults
		if err := strictDecode(it.Meta[resultsKey], &res); err != nil {
			t.Errorf("%s: item %d: _meta[%q]: %v", where, i, resultsKey, err)
			continue
		}
		if res.Slug == "" || res.Findings == nil || res.Links.Keys != "https://probity.test/.well-known/probity-keys.json" ||
			res.Links.Envelopes != "https://probity.test/s/"+res.Slug+"/envelopes.jsonl" {
			t.Errorf("%s: item %d: results %+v", where, i, res)
		}
	}
}

// invisible is what must not appear raw in an answer: the zero-width space, the
// right-to-left override and the tag block this test's listings use.
func invisible(r rune) bool { return r == 0x200B || r == 0x202E || r >= 0xE0000 && r <= 0xE007F }

// strictDecode decodes JSON into v; members v does not name are allowed (the results
// hold more than the tests read), a missing object is an error.
func strictDecode(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return fmt.Errorf("missing")
	}
	return json.Unmarshal(raw, v)
}

// --- The listings ---

// listingStore is a store whose Listings answers from a fixed list of servers, as
// store.Store.Listings promises (ListingQuery): entries with a server name only, in
// byte order of the name, after AfterName, the exact Name, listings updated at or
// after UpdatedSince, listed ones unless IncludeUnlisted, a case-insensitive substring
// of the name, at most Limit. Everything else is the real store under it. fault, when
// set, fails Listings.
type listingStore struct {
	store.Store
	mu       sync.Mutex
	listings []store.ServerListing
	fault    error
	queries  []store.ListingQuery
	// delay, when set, holds each Listings call of a list (no Name) that long,
	// counting the calls inside at once (maxInside).
	delay             time.Duration
	inside, maxInside int
}

func (s *listingStore) Listings(ctx context.Context, q store.ListingQuery) ([]store.ServerListing, error) {
	s.mu.Lock()
	if d := s.delay; d > 0 && q.Name == "" {
		s.inside++
		s.maxInside = max(s.maxInside, s.inside)
		s.mu.Unlock()
		time.Sleep(d)
		s.mu.Lock()
		s.inside--
	}
	defer s.mu.Unlock()
	s.queries = append(s.queries, q)
	if s.fault != nil {
		return nil, s.fault
	}
	var out []store.ServerListing
	for _, l := range s.listings {
		li := l.Listing
		switch {
		case li.ServerName == "",
			q.Name != "" && li.ServerName != q.Name,
			q.AfterName != "" && li.ServerName <= q.AfterName,
			!q.UpdatedSince.IsZero() && li.UpdatedAt.Before(q.UpdatedSince),
			!q.IncludeUnlisted && !li.Listed(),
			q.Search != "" && !strings.Contains(strings.ToLower(li.ServerName), strings.ToLower(q.Search)):
			continue
		}
		out = append(out, l)
		if q.Limit > 0 && len(out) == q.Limit {
			break
		}
	}
	return out, nil
}

// listedServer is one server of the test: its server.json, its registry metadata and status.
type listedServer struct {
	doc    map[string]any
	status string // "" active
	// official is the registry's metadata, nil for a listing imported from a file.
	official map[string]any
	updated  time.Time
	entry    *store.Entry // nil: a new entry
}

// example reads one of the registry's example server.json files under a new name.
func example(t testing.TB, file, name string) map[string]any {
	t.Helper()
	m := readJSON(t, "../registry/testdata/examples/"+file)
	if name != "" {
		m["name"] = name
	}
	return m
}

func official(status string, at time.Time) map[string]any {
	return map[string]any{"status": status, "isLatest": true, "publishedAt": at.Add(-time.Hour).Format(time.RFC3339Nano), "updatedAt": at.Format(time.RFC3339Nano)}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// subregistryFixture is the site of setup() (a remote entry with rounds, a supply
// run and changes) serving listings of it and of eleven more servers.
type subregistryFixture struct {
	*fixture
	st       *listingStore
	c        *checker
	listings []store.ServerListing // every listing, name order
	base     time.Time
}

const hostileDescription = "Weather <b>now</b> & zero\u200bwidth \u202eevil\U000E0041"

func setupSubregistry(t *testing.T) *subregistryFixture {
	t.Helper()
	f := setup(t, generous)
	ctx := context.Background()
	base := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	main, err := f.st.Entry(ctx, f.slug)
	if err != nil {
		t.Fatal(err)
	}
	hostile := example(t, "minimal.json", "io.github.probity-test/hostile")
	hostile["description"] = hostileDescription
	hostile["title"] = "Hostile \u200b<script>alert(1)</script>"
	servers := []listedServer{
		{doc: example(t, "with-remote.json", "io.github.probity-test/search"), official: official("active", base), updated: base, entry: &main},
		{doc: example(t, "minimal.json", ""), updated: base.Add(time.Hour)}, // imported from a file: no registry metadata
		{doc: example(t, "with-package.json", ""), status: store.StatusDeprecated, official: official("deprecated", base), updated: base.Add(2 * time.Hour)},
		{doc: example(t, "minimal.json", "io.github.probity-test/gone"), status: store.StatusDeleted, official: official("deleted", base), updated: base.Add(3 * time.Hour)},
		{doc: hostile, official: official("active", base), updated: base.Add(4 * time.Hour)},
	}
	for i := range 7 {
		servers = append(servers, listedServer{doc: example(t, []string{"minimal.json", "with-package.json", "with-remote.json"}[i%3], fmt.Sprintf("com.example.fleet/server-%02d", i)),
			official: official("active", base), updated: base.Add(time.Duration(5+i) * time.Hour)})
	}
	st := &listingStore{Store: f.st}
	for i, s := range servers {
		name := s.doc["name"].(string)
		e := s.entry
		if e == nil {
			ne, _, err := f.st.AddEntry(ctx, store.NewEntry{SlugBase: fmt.Sprintf("listed-%02d", i), Kind: store.KindNPM,
				Locator: fmt.Sprintf("pkg:npm/listed-%02d", i), Name: name, Source: "registry"})
			if err != nil {
				t.Fatal(err)
			}
			e = &ne
		}
		l := store.ServerListing{Entry: *e, Listing: store.Listing{ServerName: name, Description: s.doc["description"].(string),
			Version: s.doc["version"].(string), Document: mustJSON(t, s.doc), Status: s.status, UpdatedAt: s.updated}}
		if s.official != nil {
			l.Listing.RegistryMeta = mustJSON(t, s.official)
		}
		st.listings = append(st.listings, l)
	}
	// Listings never published: a server name without a document, and a document
	// naming another server.
	for i, bad := range []store.Listing{
		{ServerName: "io.github.probity-test/no-document", Version: "1.0.0", UpdatedAt: base},
		{ServerName: "io.github.probity-test/other-name", Version: "1.0.2", Document: mustJSON(t, example(t, "minimal.json", "")), UpdatedAt: base},
	} {
		e, _, err := f.st.AddEntry(ctx, store.NewEntry{SlugBase: fmt.Sprintf("unpublished-%d", i), Kind: store.KindNPM, Locator: fmt.Sprintf("pkg:npm/unpublished-%d", i), Source: "registry"})
		if err != nil {
			t.Fatal(err)
		}
		st.listings = append(st.listings, store.ServerListing{Entry: e, Listing: bad})
	}
	slices.SortFunc(st.listings, func(a, b store.ServerListing) int { return strings.Compare(a.Listing.ServerName, b.Listing.ServerName) })
	kd, err := keys.Parse(f.get(t, "GET", "/.well-known/probity-keys.json").Body.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	h, err := web.New(web.Config{Store: st, Keys: kd, BaseURL: "https://probity.test", Now: func() time.Time { return f.now }, RateLimit: generous})
	if err != nil {
		t.Fatal(err)
	}
	return &subregistryFixture{fixture: f, st: st, c: &checker{t: t, rs: loadRegSchemas(t), h: h}, listings: st.listings, base: base}
}

// published returns the names the subregistry publishes: with a document naming
// the same server, listed, or any with includeDeleted.
func (sf *subregistryFixture) published(includeDeleted bool) []string {
	var out []string
	for _, l := range sf.listings {
		li := l.Listing
		if li.Document == nil || strings.Contains(li.ServerName, "other-name") || !includeDeleted && !li.Listed() {
			continue
		}
		out = append(out, li.ServerName)
	}
	return out
}

// doc returns a listing's document as a JSON value.
func (sf *subregistryFixture) doc(t testing.TB, name string) any {
	t.Helper()
	for _, l := range sf.listings {
		if l.Listing.ServerName == name {
			var v any
			if err := json.Unmarshal(l.Listing.Document, &v); err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	t.Fatalf("no listing %s", name)
	return nil
}

type listPage struct {
	Servers  []regItemJSON `json:"servers"`
	Metadata struct {
		NextCursor string `json:"nextCursor"`
		Count      int    `json:"count"`
	} `json:"metadata"`
}

// walk reads every page of /v0.1/servers?query, following nextCursor, and returns
// the names in order.
func (sf *subregistryFixture) walk(t *testing.T, query url.Values) []string {
	t.Helper()
	var names []string
	cursor := ""
	for range 100 {
		q := url.Values{}
		for k, v := range query {
			q[k] = v
		}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		rec := sf.c.get(t, "GET", "/v0.1/servers?"+q.Encode())
		if rec.Code != 200 {
			t.Fatalf("?%s: %d %s", q.Encode(), rec.Code, rec.Body)
		}
		var p listPage
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		if p.Metadata.Count != len(p.Servers) {
			t.Fatalf("count %d for %d servers", p.Metadata.Count, len(p.Servers))
		}
		for _, it := range p.Servers {
			var s struct{ Name string }
			json.Unmarshal(it.Server, &s)
			names = append(names, s.Name)
		}
		if cursor = p.Metadata.NextCursor; cursor == "" {
			return names
		}
	}
	t.Fatal("more than 100 pages")
	return nil
}

// --- Tests ---

// TestSubregistry runs the subregistry's tests on one site (setup's entry with
// rounds, a supply run and changes, listed with eleven more servers): each subtest
// leaves the fixture as it found it, but the last, which grows the documents.
func TestSubregistry(t *testing.T) {
	sf := setupSubregistry(t)
	for _, c := range []struct {
		name string
		fn   func(*testing.T, *subregistryFixture)
	}{
		{"List", testSubregistryList},
		{"BadParameters", testSubregistryBadParameters},
		{"Server", testSubregistryServer},
		{"Results", testSubregistryResults},
		{"HostileText", testSubregistryHostileText},
		{"RoundTrip", testSubregistryRoundTrip},
		{"CapturesAResponse", testSubregistryCapturesAResponse},
		{"Admission", testSubregistryAdmission},
		{"PageBound", testSubregistryPageBound},
	} {
		t.Run(c.name, func(t *testing.T) {
			sf.c.t = t // the checker reports on the subtest
			c.fn(t, sf)
		})
	}
}

func testSubregistryList(t *testing.T, sf *subregistryFixture) {
	listed, all := sf.published(false), sf.published(true)

	// Every page size gives the same servers in name order.
	for _, limit := range []string{"1", "2", "5", "30", "100", ""} {
		q := url.Values{}
		if limit != "" {
			q.Set("limit", limit)
		}
		if got := sf.walk(t, q); !slices.Equal(got, listed) {
			t.Errorf("limit %q: %q, want %q", limit, got, listed)
		}
		q.Set("include_deleted", "true")
		if got := sf.walk(t, q); !slices.Equal(got, all) {
			t.Errorf("limit %q with deleted: %q, want %q", limit, got, all)
		}
	}
	// The default page is 30, as the registry's.
	sf.st.mu.Lock()
	sf.st.queries = nil
	sf.st.mu.Unlock()
	sf.c.get(t, "GET", "/v0.1/servers")
	sf.st.mu.Lock()
	q := sf.st.queries
	sf.st.mu.Unlock()
	if len(q) != 1 || q[0].Limit != 31 {
		t.Errorf("the default list asked the store %+v, want one query of 31", q)
	}

	for _, c := range []struct {
		query string
		want  []string
	}{
		{"search=FLEET/SERVER-0", listed[:7]},
		{"search=weather", []string{"io.github.user/weather"}},
		{"search=weather&include_deleted=true", []string{"io.github.user/local-weather", "io.github.user/weather"}},
		{"search=nothing-like-it", nil},
		{"version=latest", listed},
		{"version=2.1.0", []string{"com.example.fleet/server-02", "com.example.fleet/server-05", "io.github.probity-test/search"}},
		{"version=9.9.9", nil},
		{"updated_since=" + sf.base.Add(3*time.Hour).Format(time.RFC3339), after(sf, sf.base.Add(3*time.Hour))},
		{"updated_since=" + sf.base.Add(3*time.Hour).Format(time.RFC3339) + "&include_deleted=true", after(sf, sf.base.Add(3*time.Hour))},
		{"updated_since=2026-11-20T04:00:00.000%2B00:00", after(sf, sf.base.Add(4*time.Hour))},
		{"cursor=io.github.probity-test/hostile", []string{"io.github.probity-test/search", "io.github.user/weather"}},
		{"cursor=io.github.probity-test/hostile&include_deleted=true", []string{"io.github.probity-test/search", "io.github.user/local-weather", "io.github.user/weather"}},
		{"include_deleted=false", listed},
		{"include_deleted=1", all},
	} {
		q, err := url.ParseQuery(c.query)
		if err != nil {
			t.Fatal(err)
		}
		if got := sf.walk(t, q); !slices.Equal(got, c.want) {
			t.Errorf("?%s: %q, want %q", c.query, got, c.want)
		}
	}
	// updated_since implies include_deleted, as the registry: the deleted server
	// updated at 03:00 is there.
	if got := sf.walk(t, url.Values{"updated_since": {"2026-11-20T03:00:00Z"}}); !slices.Contains(got, "io.github.probity-test/gone") {
		t.Errorf("updated_since without include_deleted: %q lacks the deleted server", got)
	}
}

// after is every published name, deleted ones too, updated at or after since.
func after(sf *subregistryFixture, since time.Time) []string {
	var out []string
	for _, l := range sf.listings {
		if slices.Contains(sf.published(true), l.Listing.ServerName) && !l.Listing.UpdatedAt.Before(since) {
			out = append(out, l.Listing.ServerName)
		}
	}
	return out
}

func testSubregistryBadParameters(t *testing.T, sf *subregistryFixture) {
	for _, q := range []string{
		"limit=0", "limit=101", "limit=-1", "limit=ten", "limit=1.5", "limit=",
		"cursor=not-a-name", "cursor=" + strings.Repeat("a", 200) + "/b",
		"updated_since=yesterday", "updated_since=2026-11-20", "updated_since=2026-11-20T00:00:00",
		"include_deleted=maybe",
		"include_deleted=false&updated_since=2026-11-20T00:00:00Z",
		"search=" + strings.Repeat("x", 201), "search=%ff",
		"version=" + strings.Repeat("1", 256),
	} {
		rec := sf.c.get(t, "GET", "/v0.1/servers?"+q)
		want := http.StatusBadRequest
		if q == "limit=" {
			want = http.StatusOK // empty is absent, as the registry reads it
		}
		if rec.Code != want {
			t.Errorf("?%s: %d %s, want %d", q, rec.Code, rec.Body, want)
		}
	}
	for _, p := range []string{
		"/v0.1/servers/io.github.user%2Fweather/versions?include_deleted=perhaps",
		"/v0.1/servers/io.github.user%2Fweather/versions/latest?include_deleted=2",
	} {
		if rec := sf.c.get(t, "GET", p); rec.Code != http.StatusBadRequest {
			t.Errorf("%s: %d %s", p, rec.Code, rec.Body)
		}
	}
	// A path under /v0.1/ the subregistry does not serve, and a method it does not
	// take, are answered in the registry's error shape too, not as an HTML page.
	for _, c := range []struct{ method, path string }{{"GET", "/v0.1/nothing"}, {"POST", "/v0.1/servers"}} {
		rec := sf.c.get(t, c.method, c.path)
		var e struct {
			Error string `json:"error"`
		}
		if rec.Code < 400 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") || json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Error == "" {
			t.Errorf("%s %s: %d %s %s, want the registry's error shape", c.method, c.path, rec.Code, rec.Header().Get("Content-Type"), rec.Body)
		}
	}
	// A store that fails is a 500 in the registry's shape, its detail only in the log.
	sf.st.mu.Lock()
	sf.st.fault = fmt.Errorf("injected: secret detail")
	sf.st.mu.Unlock()
	defer func() {
		sf.st.mu.Lock()
		sf.st.fault = nil
		sf.st.mu.Unlock()
	}()
	for _, p := range []string{"/v0.1/servers", "/v0.1/servers/io.github.user%2Fweather/versions", "/v0.1/servers/io.github.user%2Fweather/versions/latest"} {
		rec := sf.c.get(t, "GET", p)
		if rec.Code != http.StatusInternalServerError || strings.Contains(rec.Body.String(), "secret") {
			t.Errorf("%s with a failing store: %d %s", p, rec.Code, rec.Body)
		}
	}
	if sf.c.n < 20 {
		t.Errorf("only %d answers checked", sf.c.n)
	}
}

func testSubregistryServer(t *testing.T, sf *subregistryFixture) {
	for _, c := range []struct {
		path   string
		status int
		name   string
	}{
		{"/v0.1/servers/io.github.user%2Fweather/versions", 200, "io.github.user/weather"},
		{"/v0.1/servers/io.github.user%2Fweather/versions/latest", 200, "io.github.user/weather"},
		{"/v0.1/servers/io.github.user%2Fweather/versions/1.0.2", 200, "io.github.user/weather"},
		{"/v0.1/servers/io.github.user/weather/versions/1.0.2", 200, "io.github.user/weather"}, // the slash unescaped
		{"/v0.1/servers/io.github.user%2Fweather/versions/1.0.3", 404, ""},
		{"/v0.1/servers/io.github.user%2Fweather/versions/", 404, ""},
		{"/v0.1/servers/io.github.user%2Fweather", 404, ""},
		{"/v0.1/servers/io.github.user%2Fweather/versions/1.0.2/more", 404, ""},
		{"/v0.1/servers/io.github.user%2Fnone/versions", 404, ""},
		{"/v0.1/servers/no-slash/versions", 404, ""},
		{"/v0.1/servers/", 404, ""},
		// Deprecated and deleted servers only with include_deleted.
		{"/v0.1/servers/io.github.user%2Flocal-weather/versions", 404, ""},
		{"/v0.1/servers/io.github.user%2Flocal-weather/versions?include_deleted=true", 200, "io.github.user/local-weather"},
		{"/v0.1/servers/io.github.probity-test%2Fgone/versions/latest", 404, ""},
		{"/v0.1/servers/io.github.probity-test%2Fgone/versions/latest?include_deleted=true", 200, "io.github.probity-test/gone"},
		// Never published: no document, a document naming another server.
		{"/v0.1/servers/io.github.probity-test%2Fno-document/versions", 404, ""},
		{"/v0.1/servers/io.github.probity-test%2Fother-name/versions/latest", 404, ""},
	} {
		for _, m := range []string{"GET", "HEAD"} {
			rec := sf.c.get(t, m, c.path)
			if rec.Code != c.status {
				t.Errorf("%s %s: %d %s, want %d", m, c.path, rec.Code, rec.Body, c.status)
			}
			if m != "GET" || c.status != 200 {
				continue
			}
			var it regItemJSON
			if strings.Contains(c.path, "/versions/") && !strings.HasSuffix(c.path, "/versions/") {
				json.Unmarshal(rec.Body.Bytes(), &it)
			} else {
				var p listPage
				json.Unmarshal(rec.Body.Bytes(), &p)
				if len(p.Servers) != 1 || p.Metadata.Count != 1 || p.Metadata.NextCursor != "" {
					t.Errorf("%s: %s", c.path, rec.Body)
					continue
				}
				it = p.Servers[0]
			}
			var got any
			json.Unmarshal(it.Server, &got)
			if !reflect.DeepEqual(got, sf.doc(t, c.name)) {
				t.Errorf("%s: server %s, want the document as listed", c.path, it.Server)
			}
		}
	}
}

// testSubregistryResults reads Probity's results of the server with rounds, a supply
// run and changes, follows its links, and checks the registry's metadata is kept as
// received beside them.
func testSubregistryResults(t *testing.T, sf *subregistryFixture) {
	rec := sf.c.get(t, "GET", "/v0.1/servers/io.github.probity-test%2Fsearch/versions/latest")
	if rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	var it regItemJSON
	if err := json.Unmarshal(rec.Body.Bytes(), &it); err != nil {
		t.Fatal(err)
	}
	var off map[string]any
	json.Unmarshal(it.Meta[registry.OfficialMetaKey], &off)
	if !reflect.DeepEqual(off, official("active", sf.base)) {
		t.Errorf("official metadata %v, want it as received", off)
	}
	var res regResults
	if err := json.Unmarshal(it.Meta[resultsKey], &res); err != nil {
		t.Fatal(err)
	}
	if res.Slug != sf.slug || res.Status != "active" || res.State != "signed" || res.Verified || res.Coverage == nil || *res.Coverage != "full" {
		t.Errorf("results: %+v", res)
	}
	d, err := sf.st.EntryDigest(context.Background(), sf.slug, store.EntryQuery{Changes: 10})
	if err != nil {
		t.Fatal(err)
	}
	// The newest round, with its findings per status, and its envelope.
	if r := res.LastRound; r == nil || r.RoundID != d.Round.RoundID || !r.Signed || r.Coverage != "full" ||
		r.Envelope != "https://probity.test/s/"+sf.slug+"/r/"+d.Round.RoundID+".json" {
		t.Fatalf("lastRound %+v, want round %s", r, d.Round.RoundID)
	}
	raw, err := sf.st.RoundResults(context.Background(), d.Round.ID)
	if err != nil {
		t.Fatal(err)
	}
	var results []struct{ Status string }
	json.Unmarshal(raw, &results)
	want := map[string]int{"VERIFIED": 0, "FAILED": 0, "OBSERVED_RISK": 0, "UNVERIFIED": 0}
	for _, r := range results {
		want[r.Status]++
	}
	if !reflect.DeepEqual(res.Findings, want) || len(results) == 0 {
		t.Errorf("findings %v, want %v", res.Findings, want)
	}
	// The supply run: its score and findings, not Verified (the canned facts lack a
	// package); score at top level too.
	if s := res.Supply; s == nil || res.Score == nil || *res.Score != s.Score || s.Verified || !s.Signed || len(s.Findings) < 4 {
		t.Errorf("supply %+v, score %v", s, res.Score)
	} else {
		n := 0
		for _, v := range s.Findings {
			n += v
		}
		if n != 11 {
			t.Errorf("supply findings count %d checks, want the eleven: %v", n, s.Findings)
		}
	}
	// The last confirmed change is the tools change (the operator edit after it is
	// hidden), linked to its history anchor.
	if c := res.LastConfirmedChange; c == nil || c.Number != sf.toolsChange || c.Kind != "tools" ||
		c.Link != fmt.Sprintf("https://probity.test/s/%s/history#ch-%d", sf.slug, c.Number) {
		t.Errorf("lastConfirmedChange %+v, want number %d", c, sf.toolsChange)
	}
	// The links lead to the envelopes and the key document that verify it all.
	for _, link := range []string{res.LastRound.Envelope, res.Links.Envelopes, res.Links.Keys, res.Links.Page} {
		p := strings.TrimPrefix(link, "https://probity.test")
		if r := sf.get(t, "GET", p); r.Code != 200 {
			t.Errorf("%s: %d", link, r.Code)
		}
	}

	// A listed server with no rounds: unsigned, nulls, zero findings, no official
	// metadata when imported from a file.
	rec = sf.c.get(t, "GET", "/v0.1/servers/io.github.user%2Fweather/versions/latest")
	it = regItemJSON{}
	json.Unmarshal(rec.Body.Bytes(), &it)
	if _, ok := it.Meta[registry.OfficialMetaKey]; ok {
		t.Errorf("a listing without registry metadata has %s", it.Meta[registry.OfficialMetaKey])
	}
	var bare map[string]any
	json.Unmarshal(it.Meta[resultsKey], &bare)
	for _, k := range []string{"score", "coverage", "lastRound", "supply", "lastConfirmedChange"} {
		if v, ok := bare[k]; !ok || v != nil {
			t.Errorf("%s of a server never checked: %v (present %v), want null", k, v, ok)
		}
	}
	if bare["state"] != "unsigned" || bare["verified"] != false {
		t.Errorf("a server never checked: %v", bare)
	}
}

// testSubregistryHostileText: a listed document's markup and invisible characters
// come out escaped (the checker refuses them raw) yet as the same JSON value.
func testSubregistryHostileText(t *testing.T, sf *subregistryFixture) {
	rec := sf.c.get(t, "GET", "/v0.1/servers/io.github.probity-test%2Fhostile/versions/latest")
	if rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	body := rec.Body.String()
	for _, want := range []string{`\u003cb\u003e`, `\u0026`, `\u200b`, `\u202e`, `\udb40\udc41`} {
		if !strings.Contains(body, want) {
			t.Errorf("the answer lacks %s: %s", want, body)
		}
	}
	var it regItemJSON
	json.Unmarshal(rec.Body.Bytes(), &it)
	var got any
	json.Unmarshal(it.Server, &got)
	if !reflect.DeepEqual(got, sf.doc(t, "io.github.probity-test/hostile")) || dig(got, "description") != hostileDescription {
		t.Errorf("the hostile document came back as %s", it.Server)
	}
}

// testSubregistryRoundTrip reads the subregistry with the registry package's client,
// over HTTP on loopback through the egress guard, two servers a page: the same
// servers, the same documents, the same registry metadata; with include_deleted the
// unlisted ones come back unlisted.
func testSubregistryRoundTrip(t *testing.T, sf *subregistryFixture) {
	srv := httptest.NewServer(sf.c)
	t.Cleanup(srv.Close)
	for _, deleted := range []bool{false, true} {
		cl, err := registry.New(registry.Config{BaseURL: srv.URL, Limit: 2, HTTPClient: registry.GuardedHTTPClient(egress.Config{AllowLoopback: true})})
		if err != nil {
			t.Fatal(err)
		}
		var (
			names  []string
			latest registry.Latest
			pages  int
		)
		for p, err := range cl.Pages(context.Background(), registry.ListOptions{IncludeDeleted: deleted}) {
			if err != nil {
				t.Fatal(err)
			}
			pages++
			latest.Add(p.Entries)
			for _, e := range p.Entries {
				names = append(names, e.Server.Name)
				var got any
				json.Unmarshal(e.Raw, &got)
				if !reflect.DeepEqual(got, sf.doc(t, e.Server.Name)) {
					t.Errorf("%s: %s, want the document as listed", e.Server.Name, e.Raw)
				}
				for _, l := range sf.listings {
					if l.Listing.ServerName != e.Server.Name {
						continue
					}
					var want, got any
					json.Unmarshal(l.Listing.RegistryMeta, &want)
					if e.Official != nil {
						b, _ := json.Marshal(e.Official)
						json.Unmarshal(b, &got)
					}
					if !reflect.DeepEqual(got, want) {
						t.Errorf("%s: official %v, want %v", e.Server.Name, got, want)
					}
				}
			}
		}
		want := sf.published(deleted)
		if !slices.Equal(names, want) || pages != (len(want)+1)/2 {
			t.Errorf("include_deleted %v: %d pages of %q, want %q", deleted, pages, names, want)
		}
		for _, l := range latest.Listings() {
			wantListed := !slices.Contains([]string{"io.github.user/local-weather", "io.github.probity-test/gone"}, l.Name)
			if l.Listed != wantListed || l.Latest == nil {
				t.Errorf("%s: listed %v, want %v", l.Name, l.Listed, wantListed)
			}
		}
	}
}

// testSubregistryAdmission: at most half the CPUs (at least one) build list pages at
// once; the others wait their turn and are answered in full.
func testSubregistryAdmission(t *testing.T, sf *subregistryFixture) {
	sf.st.mu.Lock()
	sf.st.delay, sf.st.maxInside = 20*time.Millisecond, 0
	sf.st.mu.Unlock()
	defer func() {
		sf.st.mu.Lock()
		sf.st.delay = 0
		sf.st.mu.Unlock()
	}()
	turns := max(1, runtime.GOMAXPROCS(0)/2)
	var wg sync.WaitGroup
	for range turns + 4 {
		wg.Go(func() {
			if rec := sf.c.get(t, "GET", "/v0.1/servers?limit=100"); rec.Code != 200 {
				t.Errorf("%d %s", rec.Code, rec.Body)
			}
		})
	}
	// Single versions are not held back.
	if rec := sf.c.get(t, "GET", "/v0.1/servers/io.github.user%2Fweather/versions/latest"); rec.Code != 200 {
		t.Errorf("a version: %d", rec.Code)
	}
	wg.Wait()
	sf.st.mu.Lock()
	defer sf.st.mu.Unlock()
	if sf.st.maxInside > turns {
		t.Errorf("%d pages were built at once, at most %d allowed", sf.st.maxInside, turns)
	}
}

// testSubregistryPageBound: a page stops at the byte bound, with a nextCursor, and
// the walk still reads every server.
func testSubregistryPageBound(t *testing.T, sf *subregistryFixture) {
	// Make every fleet document about 300 KB: seven of them pass the 2 MiB bound.
	sf.st.mu.Lock()
	for i := range sf.st.listings {
		l := &sf.st.listings[i]
		if !strings.HasPrefix(l.Listing.ServerName, "com.example.fleet/") {
			continue
		}
		var doc map[string]any
		json.Unmarshal(l.Listing.Document, &doc)
		doc["_meta"] = map[string]any{"io.modelcontextprotocol.registry/publisher-provided": map[string]any{"padding": strings.Repeat("p", 300<<10)}}
		l.Listing.Document = mustJSON(t, doc)
	}
	sf.listings = sf.st.listings
	sf.st.mu.Unlock()
	rec := sf.c.get(t, "GET", "/v0.1/servers?limit=100")
	var p listPage
	json.Unmarshal(rec.Body.Bytes(), &p)
	if rec.Body.Len() > 2<<20 || p.Metadata.NextCursor == "" || p.Metadata.Count >= len(sf.published(false)) {
		t.Errorf("a page of %d bytes, %d servers, next %q", rec.Body.Len(), p.Metadata.Count, p.Metadata.NextCursor)
	}
	if got := sf.walk(t, url.Values{"limit": {"100"}}); !slices.Equal(got, sf.published(false)) {
		t.Errorf("walk: %q", got)
	}
}

// testSubregistryCapturesAResponse writes one real answer to
// $PROBITY_SUBREGISTRY_SAMPLE when set (for the documentation), and otherwise only
// checks it is there.
func testSubregistryCapturesAResponse(t *testing.T, sf *subregistryFixture) {
	rec := sf.c.get(t, "GET", "/v0.1/servers?limit=1&search=probity-test/search")
	if rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if out := os.Getenv("PROBITY_SUBREGISTRY_SAMPLE"); out != "" {
		if err := os.WriteFile(out, rec.Body.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSubregistrySQLite publishes servers the real SQLite store holds, imported with
// store.UpsertServer: the remote entry with rounds, a supply run and changes becomes
// a registry server (its remote part is the entry's locator), beside new servers, a
// deprecated and a deleted one. Every page size and include_deleted give what
// Listings holds, updated_since what was imported since, and the registry client
// reads the same servers and documents back.
func TestSubregistrySQLite(t *testing.T) {
	f := setup(t, generous)
	ctx := context.Background()
	main, err := f.st.Entry(ctx, f.slug)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	search := example(t, "with-remote.json", "io.github.probity-test/search")
	search["remotes"].([]any)[0].(map[string]any)["url"] = main.Locator
	type server struct {
		doc    map[string]any
		status string
		parts  []store.Part
	}
	npm := func(name string) []store.Part { return []store.Part{{Kind: store.KindNPM, Locator: "pkg:npm/" + name}} }
	servers := []server{
		{doc: search, parts: []store.Part{{Kind: store.KindRemote, Locator: main.Locator, Transport: "streamable-http"}}},
		{doc: example(t, "minimal.json", ""), parts: npm("probity-test-weather")},
		{doc: example(t, "with-package.json", ""), status: store.StatusDeprecated, parts: []store.Part{{Kind: store.KindNPM, Locator: "pkg:npm/%40modelcontextprotocol/server-weather", Version: "1.0.0"}}},
		{doc: example(t, "minimal.json", "io.github.probity-test/gone"), status: store.StatusDeleted, parts: npm("probity-test-gone")},
	}
	for i := range 5 {
		servers = append(servers, server{doc: example(t, "minimal.json", fmt.Sprintf("com.example.fleet/server-%02d", i)), parts: npm(fmt.Sprintf("probity-test-fleet-%02d", i))})
	}
	var mark time.Time
	for i, s := range servers {
		if i == len(servers)-2 {
			time.Sleep(5 * time.Millisecond) // the store keeps milliseconds
			mark = time.Now()
			time.Sleep(5 * time.Millisecond)
		}
		st := s.status
		if st == "" {
			st = "active"
		}
		u := store.ServerUpsert{SlugBase: fmt.Sprintf("server-%02d", i), Name: s.doc["name"].(string), Source: "registry",
			Listing: store.Listing{ServerName: s.doc["name"].(string), Description: s.doc["description"].(string), Version: s.doc["version"].(string),
				Document: mustJSON(t, s.doc), RegistryMeta: mustJSON(t, official(st, at)), Status: s.status},
			Parts: s.parts}
		res, err := f.st.UpsertServer(ctx, u)
		if err != nil {
			t.Fatalf("%s: %v", u.Listing.ServerName, err)
		}
		if i == 0 && (res.Created || res.Entry.ID != main.ID || len(res.Conflicts) > 0) {
			t.Fatalf("the search server did not become the remote entry: %+v", res)
		}
	}
	all, err := f.st.Listings(ctx, store.ListingQuery{IncludeUnlisted: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(servers) {
		t.Fatalf("Listings: %d servers, want %d", len(all), len(servers))
	}
	kd, err := keys.Parse(f.get(t, "GET", "/.well-known/probity-keys.json").Body.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	h, err := web.New(web.Config{Store: f.st, Keys: kd, BaseURL: "https://probity.test", Now: func() time.Time { return f.now }, RateLimit: generous})
	if err != nil {
		t.Fatal(err)
	}
	sf := &subregistryFixture{fixture: f, c: &checker{t: t, rs: loadRegSchemas(t), h: h}, listings: all}
	listed, every := sf.published(false), sf.published(true)
	if len(listed) != len(servers)-2 || len(every) != len(servers) {
		t.Fatalf("published %q of %d", every, len(servers))
	}
	for _, limit := range []string{"1", "3", "100"} {
		if got := sf.walk(t, url.Values{"limit": {limit}}); !slices.Equal(got, listed) {
			t.Errorf("limit %s: %q, want %q", limit, got, listed)
		}
		if got := sf.walk(t, url.Values{"limit": {limit}, "include_deleted": {"true"}}); !slices.Equal(got, every) {
			t.Errorf("limit %s with deleted: %q, want %q", limit, got, every)
		}
	}
	if got := sf.walk(t, url.Values{"search": {"FLEET"}}); len(got) != 5 {
		t.Errorf("search: %q", got)
	}
	if got := sf.walk(t, url.Values{"updated_since": {mark.UTC().Format(time.RFC3339Nano)}}); !slices.Equal(got, []string{"com.example.fleet/server-03", "com.example.fleet/server-04"}) {
		t.Errorf("updated_since the mark: %q", got)
	}

	// The search server carries the entry's results.
	rec := sf.c.get(t, "GET", "/v0.1/servers/io.github.probity-test%2Fsearch/versions/latest")
	var it regItemJSON
	json.Unmarshal(rec.Body.Bytes(), &it)
	var res regResults
	if err := json.Unmarshal(it.Meta[resultsKey], &res); err != nil {
		t.Fatalf("%d %s: %v", rec.Code, rec.Body, err)
	}
	if res.Slug != f.slug || res.LastRound == nil || !res.LastRound.Signed || res.Supply == nil || res.LastConfirmedChange == nil {
		t.Errorf("results of the search server: %+v", res)
	}

	// The registry client reads it back: the same servers, documents and statuses.
	srv := httptest.NewServer(sf.c)
	t.Cleanup(srv.Close)
	cl, err := registry.New(registry.Config{BaseURL: srv.URL, Limit: 3, HTTPClient: registry.GuardedHTTPClient(egress.Config{AllowLoopback: true})})
	if err != nil {
		t.Fatal(err)
	}
	var latest registry.Latest
	for p, err := range cl.Pages(ctx, registry.ListOptions{IncludeDeleted: true}) {
		if err != nil {
			t.Fatal(err)
		}
		latest.Add(p.Entries)
		for _, e := range p.Entries {
			var got any
			json.Unmarshal(e.Raw, &got)
			if !reflect.DeepEqual(got, sf.doc(t, e.Server.Name)) {
				t.Errorf("%s: %s, want the document as listed", e.Server.Name, e.Raw)
			}
		}
	}
	var names []string
	for _, l := range latest.Listings() {
		names = append(names, l.Name)
		wantListed := !slices.Contains([]string{"io.github.user/local-weather", "io.github.probity-test/gone"}, l.Name)
		if l.Listed != wantListed {
			t.Errorf("%s: listed %v, want %v", l.Name, l.Listed, wantListed)
		}
	}
	if !slices.Equal(names, every) {
		t.Errorf("the client read %q, want %q", names, every)
	}
}

// BenchmarkSubregistryPage serves a full page (limit=100) of 300 servers imported into
// a SQLite store, and one server version: one Listings query per page, then an
// EntryDigest per server (results of rounds and supply runs are remembered by id, so
// a steady-state page costs the digests).
func BenchmarkSubregistryPage(b *testing.B) {
	ctx := context.Background()
	at := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	st, kd, _ := openStore(b, at)
	for i := range 300 {
		doc := example(b, []string{"minimal.json", "with-package.json", "with-remote.json"}[i%3], fmt.Sprintf("com.example.bench/server-%03d", i))
		_, err := st.UpsertServer(ctx, store.ServerUpsert{SlugBase: fmt.Sprintf("bench-%03d", i), Name: doc["name"].(string), Source: "registry",
			Listing: store.Listing{ServerName: doc["name"].(string), Description: doc["description"].(string), Version: doc["version"].(string),
				Document: mustJSON(b, doc), RegistryMeta: mustJSON(b, official("active", at))},
			Parts: []store.Part{{Kind: store.KindNPM, Locator: fmt.Sprintf("pkg:npm/bench-%03d", i)}}})
		if err != nil {
			b.Fatal(err)
		}
	}
	h, err := web.New(web.Config{Store: st, Keys: kd, BaseURL: "https://probity.test", RateLimit: web.RateLimit{PerSecond: 1e9, Burst: 1e9}})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, path string }{
		{"list100", "/v0.1/servers?limit=100&cursor=com.example.bench/server-099"},
		{"version", "/v0.1/servers/com.example.bench%2Fserver-150/versions/latest"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var n int
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("GET", c.path, nil))
				if rec.Code != 200 {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
				n = rec.Body.Len()
			}
			b.ReportMetric(float64(n), "bytes/answer")
		})
	}
}

// TestOpenAPIDescribesSubregistry holds openapi.json's x-subregistry to the
// registry's API: the same three GET paths, each with the registry's parameters.
func TestOpenAPIDescribesSubregistry(t *testing.T) {
	own := readJSON(t, "openapi.json")
	reg := map[string]any{}
	b, err := os.ReadFile("../registry/schema/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &reg); err != nil {
		t.Fatal(err)
	}
	params := func(op any) []string {
		var out []string
		for _, p := range dig(op, "parameters").([]any) {
			out = append(out, dig(p, "in").(string)+":"+dig(p, "name").(string))
		}
		slices.Sort(out)
		return out
	}
	paths, _ := dig(own, "x-subregistry", "paths").(map[string]any)
	if len(paths) != 3 {
		t.Fatalf("x-subregistry documents %d paths", len(paths))
	}
	for _, p := range []string{pathList, pathVersions, pathVersion} {
		ops, _ := paths[p].(map[string]any)
		if len(ops) != 1 || ops["get"] == nil {
			t.Errorf("%s: %v, want get only", p, ops)
			continue
		}
		if got, want := params(ops["get"]), params(dig(reg, "paths", p, "get")); !slices.Equal(got, want) {
			t.Errorf("%s: parameters %q, the registry's %q", p, got, want)
		}
	}
}

// TestSubregistryRateLimited: the subregistry shares the site's per-client rate limit,
// and its 429 has the registry's error shape.
func TestSubregistryRateLimited(t *testing.T) {
	f := setup(t, web.RateLimit{PerSecond: 0.5, Burst: 2})
	for i := range 2 {
		if rec := f.get(t, "GET", "/v0.1/servers"); rec.Code != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, rec.Code, rec.Body)
		}
	}
	rec := f.get(t, "GET", "/v0.1/servers")
	var e struct {
		Error string `json:"error"`
	}
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" ||
		json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Error == "" {
		t.Errorf("third request: %d, Retry-After %q, %s; want 429 in the registry's shape", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
}
