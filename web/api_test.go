package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/store"
)

type apiServer struct {
	Slug, Name, Kind, Locator, State, Coverage string
	Verified                                   bool
	SupplyScore                                *int
	LastRoundAt                                *time.Time
	Findings                                   *struct{ Failed, ObservedRisk int }
	ToolCount                                  *int
	ProtocolVersion                            string
	Uptime30                                   struct{ OnlineDays, CountedDays int }
	LastChangeAt                               *time.Time
	Offline                                    bool
	Links                                      struct{ Page, JSON, API, History, Feed, Badge string }
}

type apiServerList struct {
	Servers    []apiServer
	NextCursor *string
}

type apiChange struct {
	Slug       string
	Number     int64
	RecordedAt time.Time
	Origin     string
	Kind       string
	Summary    string
	Badges     []string
	Link       string
}

type apiHistory struct {
	Slug, Page string
	Changes    []apiChange
	NextBefore *int64
}

// apiGet fetches path, checks its status, that it is JSON with the site's headers and
// no trace of the hidden change, and decodes it into v (strictly).
func (f *fixture) apiGet(t *testing.T, path string, status int, v any) []byte {
	t.Helper()
	rec := f.get(t, "GET", path)
	if rec.Code != status || rec.Header().Get("Content-Type") != "application/json; charset=utf-8" {
		t.Fatalf("%s: %d %q, want %d JSON", path, rec.Code, rec.Header().Get("Content-Type"), status)
	}
	checkHeaders(t, path, rec)
	if strings.Contains(rec.Body.String(), hiddenText) {
		t.Errorf("%s shows the hidden change", path)
	}
	if v != nil {
		dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			t.Fatalf("%s: %v\n%s", path, err, rec.Body.String())
		}
	}
	return rec.Body.Bytes()
}

func TestAPIServers(t *testing.T) {
	f := setup(t, generous)
	other, _, err := f.st.AddEntry(context.Background(), store.NewEntry{SlugBase: "other", Kind: store.KindNPM, Locator: "pkg:npm/other-mcp", Name: "Other", Source: "import"})
	if err != nil {
		t.Fatal(err)
	}

	var all apiServerList
	f.apiGet(t, "/api/v1/servers", 200, &all)
	if len(all.Servers) != 2 || all.NextCursor != nil {
		t.Fatalf("servers: %+v", all)
	}
	s := all.Servers[0]
	base := "https://probity.test"
	if s.Slug != f.slug || s.Name != "Search <b>server</b>" || s.Kind != "remote" || !strings.HasPrefix(s.Locator, "http://127.0.0.1:") ||
		s.State != "signed" || s.Coverage != "full" || s.Verified || s.SupplyScore == nil || s.LastRoundAt == nil ||
		s.Links.API != base+"/api/v1/servers/"+f.slug || s.Links.Page != base+"/s/"+f.slug || s.Links.Badge != base+"/badge/"+f.slug+".svg" {
		t.Errorf("server: %+v", s)
	}
	if o := all.Servers[1]; o.Slug != other.Slug || o.State != "unsigned" || o.Coverage != "" || o.SupplyScore != nil || o.LastRoundAt != nil {
		t.Errorf("other server: %+v", o)
	}

	// Filters.
	for q, want := range map[string][]string{
		"?q=SEARCH":          {f.slug},
		"?q=other-mcp":       {other.Slug},
		"?q=nothing-like-it": nil,
		"?kind=npm":          {other.Slug},
		"?kind=remote":       {f.slug},
		"?verified=true":     nil, // the supply run did not verify it
		"?verified=false":    {f.slug, other.Slug},
		"?verified=0":        {f.slug, other.Slug},
	} {
		var l apiServerList
		f.apiGet(t, "/api/v1/servers"+q, 200, &l)
		var got []string
		for _, s := range l.Servers {
			got = append(got, s.Slug)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") || l.Servers == nil {
			t.Errorf("%s: %v, want %v", q, got, want)
		}
	}

	// Pages follow the cursor to the end.
	var p1, p2 apiServerList
	f.apiGet(t, "/api/v1/servers?limit=1", 200, &p1)
	if len(p1.Servers) != 1 || p1.Servers[0].Slug != f.slug || p1.NextCursor == nil {
		t.Fatalf("first page: %+v", p1)
	}
	f.apiGet(t, "/api/v1/servers?limit=1&cursor="+*p1.NextCursor, 200, &p2)
	if len(p2.Servers) != 1 || p2.Servers[0].Slug != other.Slug || p2.NextCursor != nil {
		t.Fatalf("second page: %+v", p2)
	}

	// Out of bounds is refused, not clamped.
	for _, q := range []string{"limit=0", "limit=500", "limit=101", "limit=-1", "limit=x", "cursor=x", "cursor=0", "cursor=99999999999999999999",
		"verified=maybe", "kind=bogus", "q=" + strings.Repeat("a", 201)} {
		var e struct{ Error string }
		f.apiGet(t, "/api/v1/servers?"+q, 400, &e)
		if e.Error == "" {
			t.Errorf("%s: empty error", q)
		}
	}
	var full apiServerList
	f.apiGet(t, "/api/v1/servers?limit=100", 200, &full)
}

func TestAPIEntryAndHistory(t *testing.T) {
	f := setup(t, generous)
	s := "/api/v1/servers/" + f.slug
	body := f.apiGet(t, s, 200, nil)
	if want := f.get(t, "GET", "/s/"+f.slug+".json").Body.Bytes(); !bytes.Equal(body, want) {
		t.Error("the API's entry differs from /s/{slug}.json")
	}

	var h apiHistory
	f.apiGet(t, s+"/history", 200, &h)
	if h.Slug != f.slug || h.Page != "https://probity.test/s/"+f.slug+"/history" || len(h.Changes) != 2 ||
		h.Changes[0].Number != 2 || h.Changes[1].Number != 1 || h.NextBefore != nil {
		t.Fatalf("history: %+v", h)
	}
	if c := h.Changes[0]; c.Kind != "tools" || c.Origin != "automatic check" || c.Link != h.Page+"#ch-2" || c.Badges == nil {
		t.Errorf("change: %+v", c)
	}
	var p1, p2 apiHistory
	f.apiGet(t, s+"/history?limit=1", 200, &p1)
	if len(p1.Changes) != 1 || p1.Changes[0].Number != 2 || p1.NextBefore == nil || *p1.NextBefore != 2 {
		t.Fatalf("first page: %+v", p1)
	}
	f.apiGet(t, s+"/history?limit=1&before=2", 200, &p2)
	if len(p2.Changes) != 1 || p2.Changes[0].Number != 1 || p2.NextBefore != nil {
		t.Fatalf("second page: %+v", p2)
	}
	// The hidden change (number 3) is not there, even asked for from above it.
	var above apiHistory
	f.apiGet(t, s+"/history?before=4", 200, &above)
	if len(above.Changes) != 2 || above.Changes[0].Number != 2 {
		t.Errorf("before=4: %+v", above)
	}

	for _, q := range []string{"limit=0", "limit=500", "before=0", "before=x"} {
		f.apiGet(t, s+"/history?"+q, 400, &struct{ Error string }{})
	}
	for _, p := range []string{"/api/v1/servers/nope", "/api/v1/servers/nope/history", "/api/v1/servers/Bad%20Slug", "/api/v1/servers/-x", "/api/v1/nothing"} {
		var e struct{ Error string }
		f.apiGet(t, p, 404, &e)
		if e.Error == "" {
			t.Errorf("%s: empty error", p)
		}
	}
}

func TestAPIChanges(t *testing.T) {
	f := setup(t, generous)
	var l struct{ Changes []apiChange }
	f.apiGet(t, "/api/v1/changes", 200, &l)
	if len(l.Changes) != 2 || l.Changes[0].Slug != f.slug || l.Changes[0].Number != 2 || l.Changes[1].Number != 1 {
		t.Fatalf("changes: %+v", l)
	}
	f.apiGet(t, "/api/v1/changes?limit=1", 200, &l)
	if len(l.Changes) != 1 || l.Changes[0].Number != 2 {
		t.Fatalf("limit=1: %+v", l)
	}
	for _, q := range []string{"limit=0", "limit=101", "limit=500"} {
		f.apiGet(t, "/api/v1/changes?"+q, 400, &struct{ Error string }{})
	}
}

func TestAPIMethodsAndOpenAPI(t *testing.T) {
	f := setup(t, generous)
	var doc struct {
		OpenAPI string `json:"openapi"`
	}
	rec := f.get(t, "GET", "/api/v1/openapi.json")
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json; charset=utf-8" {
		t.Fatalf("openapi.json: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil || !strings.HasPrefix(doc.OpenAPI, "3.1.") {
		t.Fatalf("openapi.json: %v %q", err, doc.OpenAPI)
	}
	for _, p := range []string{"/api/v1/servers", "/api/v1/servers/" + f.slug, "/api/v1/changes", "/api/v1/stats"} {
		if rec := f.get(t, "HEAD", p); rec.Code != 200 {
			t.Errorf("HEAD %s: %d", p, rec.Code)
		}
		rec := f.get(t, http.MethodPost, p)
		var e struct{ Error string }
		if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Content-Type") != "application/json; charset=utf-8" ||
			json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Error == "" {
			t.Errorf("POST %s: %d %q %s", p, rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
		}
	}
}
