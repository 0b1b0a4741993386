package web_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"testing"

	"github.com/probity-dev/probity/store"
)

// TestDirectoryReadModel holds the directory page and /api/v1/servers to the one
// directory read model: a search matches %, _ and \ literally, the filters and pages
// agree with each other, and an entry whose newest supply run passed but is not signed
// is not Verified anywhere.
func TestDirectoryReadModel(t *testing.T) {
	d := newDirectorySite(t, 60)
	for _, name := range []string{`100% Pure`, `under_score`, `back\slash`} {
		if _, _, err := d.st.AddEntry(t.Context(), store.NewEntry{SlugBase: "special", Kind: store.KindNPM,
			Locator: "pkg:npm/" + regexp.MustCompile(`[^a-z]`).ReplaceAllString(name, ""), Name: name, Source: "import"}); err != nil {
			t.Fatal(err)
		}
	}
	get := func(path string) string {
		t.Helper()
		rec := httptest.NewRecorder()
		d.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %.300s", path, rec.Code, rec.Body)
		}
		return rec.Body.String()
	}
	rowLink := regexp.MustCompile(`<td><a href="/s/([a-z0-9-]+)">`)
	page := func(path string) []string {
		t.Helper()
		slugs := []string{}
		for _, m := range rowLink.FindAllStringSubmatch(get(path), -1) {
			slugs = append(slugs, m[1])
		}
		return slugs
	}
	type server struct {
		Slug     string `json:"slug"`
		State    string `json:"state"`
		Verified bool   `json:"verified"`
	}
	api := func(path string) ([]server, string) {
		t.Helper()
		var out struct {
			Servers    []server `json:"servers"`
			NextCursor string   `json:"nextCursor"`
		}
		if err := json.Unmarshal([]byte(get(path)), &out); err != nil {
			t.Fatal(err)
		}
		return out.Servers, out.NextCursor
	}
	slugsOf := func(ss []server) []string {
		out := []string{}
		for _, s := range ss {
			out = append(out, s.Slug)
		}
		return out
	}

	for path, want := range map[string][]string{
		"/?q=%25":            {"special"},   // %
		"/?q=_":              {"special-2"}, // _
		"/?q=%5C":            {"special-3"}, // \
		"/?q=0%25+p":         {"special"},   // case ignored
		"/?q=server-5":       {"server-5", "server-50", "server-51", "server-52", "server-53", "server-54", "server-55", "server-56", "server-57", "server-58", "server-59"},
		"/?verified=1":       {"server-0", "server-18", "server-36", "server-54"},
		"/?changed=7d":       {"server-0", "server-20", "server-40"},
		"/?offline=1":        {"server-0", "server-40"},
		"/?kind=npm&q=r-1":   {"server-1", "server-13", "server-17"},
		"/?q=nothing+at+all": {},
	} {
		if got := page(path); !slices.Equal(got, want) {
			t.Errorf("GET %s rows = %v, want %v", path, got, want)
		}
	}
	// The pages of the unfiltered directory: 63 entries, 50 a page on the API, 100 on the
	// page.
	if got := page("/"); len(got) != 63 || got[0] != "server-0" || got[62] != "special-3" {
		t.Errorf("GET / = %d rows %v", len(got), got)
	}
	first, cursor := api("/api/v1/servers")
	rest, end := api("/api/v1/servers?cursor=" + cursor)
	if len(first) != 50 || len(rest) != 13 || end != "" || !slices.Equal(append(slugsOf(first), slugsOf(rest)...), page("/")) {
		t.Errorf("API pages = %d + %d (cursor %q, then %q), want 50 + 13 in the page's order", len(first), len(rest), cursor, end)
	}

	verified, _ := api("/api/v1/servers?verified=true")
	if got := slugsOf(verified); !slices.Equal(got, []string{"server-0", "server-18", "server-36", "server-54"}) {
		t.Errorf("API verified=true = %v", got)
	}
	others, _ := api("/api/v1/servers?verified=false&limit=100")
	for _, s := range append(verified, others...) {
		if s.Verified != (s.State == "Verified") {
			t.Errorf("%s: verified %v, state %q", s.Slug, s.Verified, s.State)
		}
	}
	if len(others) != 59 {
		t.Errorf("API verified=false = %d servers, want 59", len(others))
	}
	// server-6 (pypi) and server-12 (remote) passed their supply checks unsigned.
	for _, s := range others {
		if (s.Slug == "server-6" || s.Slug == "server-12") && (s.Verified || s.State == "Verified") {
			t.Errorf("%s, whose supply run passed unsigned, is %+v", s.Slug, s)
		}
	}
	// The entry page and its JSON apply the same rule and say why.
	var entry struct {
		Supply *struct {
			Verified bool `json:"verified"`
			Signed   bool `json:"signed"`
		} `json:"supply"`
	}
	if err := json.Unmarshal([]byte(get("/s/server-6.json")), &entry); err != nil || entry.Supply == nil {
		t.Fatalf("/s/server-6.json: %v, supply %+v", err, entry.Supply)
	}
	if entry.Supply.Verified || entry.Supply.Signed {
		t.Errorf("/s/server-6.json: supply %+v, want neither verified nor signed", *entry.Supply)
	}
	if body := get("/s/server-6"); !regexp.MustCompile(`not Verified \(unsigned: its checks passed, but only a signed run counts\)`).MatchString(body) {
		t.Errorf("/s/server-6 does not say its passed run is not Verified because it is unsigned")
	}
}
