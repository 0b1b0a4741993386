package web_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
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

// dirRows returns the directory rows of a page's HTML by slug, in order.
func dirRows(t *testing.T, body string) ([]string, map[string]string) {
	t.Helper()
	slugs, rows := []string{}, map[string]string{}
	for _, m := range regexp.MustCompile(`(?s)<tr>\s*<td><a href="/s/([a-z0-9-]+)">.*?</tr>`).FindAllStringSubmatch(body, -1) {
		slugs = append(slugs, m[1])
		rows[m[1]] = m[0]
	}
	return slugs, rows
}

// TestDirectoryColumns: each row shows its findings by status (none, or – without a
// signed round), Verified with its score or why not, its tool count, 30-day uptime, last
// change, coverage, kind, and beside its name its verdict (the badge's and the card's).
func TestDirectoryColumns(t *testing.T) {
	d := newDirectorySite(t, 60)
	get := func(path string) string {
		t.Helper()
		rec := httptest.NewRecorder()
		d.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %.300s", path, rec.Code, rec.Body)
		}
		return rec.Body.String()
	}
	body := get("/")
	if !strings.Contains(body, `<div class="table-wrap" tabindex="0" role="region" aria-label="Servers">`) || !strings.Contains(body, `<th scope="col">Findings</th>`) {
		t.Errorf("the table is not wrapped in .table-wrap with column headers")
	}
	if !strings.Contains(body, "<p class=\"count\">60 servers match</p>") {
		t.Errorf("no count of 60 servers")
	}
	_, rows := dirRows(t, body)
	for slug, want := range map[string][]string{
		// 1 FAILED, 2 OBSERVED_RISK; no supply run; 2025-06-18. The verdict (beside the
		// name, as the badge and the card say it) and the findings counted by status.
		"server-4": {`</a> <span class="status status-failed">1 failed, 2 risks</span>`,
			`<td><span class="status status-failed">1 failed</span> <span class="status status-risk">2 risks</span></td>`,
			"no supply checks", `<td class="num">1</td>`, "100.0 %", "full", "<td>remote</td>"},
		"server-8": {`</a> <span class="status status-risk">1 risk</span>`, `<td><span class="status status-risk">1 risk</span></td>`},
		// No findings; passed unsigned.
		"server-12": {`</a> <span class="status status-ok">no findings</span>`, `<td><span class="muted">none</span></td>`, "score 62, passed but unsigned"},
		// Verified.
		"server-36": {`</a> <span class="status status-verified">Verified 86</span>`, `<td><span class="muted">none</span></td>`},
		// Offline (the verdict, over Verified), no signed round, Verified; a change a day ago.
		"server-0": {`</a> <span class="status status-offline">offline</span>`, "<td>remote</td>\n<td>–</td>",
			`<span class="status status-verified">Verified 50</span>`, "0.0 %", "2026-11-30"},
		// A package without a round or supply run.
		"server-1": {"npm package", `</a> <span class="status status-none">not yet checked</span>`, "no supply checks", `<td class="num">–</td>`, `<span class="muted">none</span>`},
		// A repository whose supply run failed.
		"server-3": {"GitHub repository", "score 53, not verified"},
	} {
		row, ok := rows[slug]
		if !ok {
			t.Errorf("no row for %s", slug)
			continue
		}
		for _, w := range want {
			if !strings.Contains(row, w) {
				t.Errorf("%s's row lacks %q:\n%s", slug, w, row)
			}
		}
	}
	if strings.Contains(rows["server-12"], "offline") || strings.Contains(rows["server-4"], "status-offline") {
		t.Errorf("an answering server is marked offline")
	}
	// The protocol filter offers the versions seen, newest first.
	if !regexp.MustCompile(`(?s)<select id="dir-protocol" name="protocol">\s*<option value="" selected>any</option>\s*<option value="2025-11-25">2025-11-25</option><option value="2025-06-18">2025-06-18</option>`).MatchString(body) {
		t.Errorf("the protocol select does not offer 2025-11-25 and 2025-06-18")
	}
}

// TestDirectoryFiltersAndSorts: each filter and order of the page, its count, and
// pagination that keeps every parameter.
func TestDirectoryFiltersAndSorts(t *testing.T) {
	d := newDirectorySite(t, 60)
	get := func(path string) string {
		t.Helper()
		rec := httptest.NewRecorder()
		d.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %.300s", path, rec.Code, rec.Body)
		}
		return rec.Body.String()
	}
	slugs := func(ns ...int) []string {
		out := []string{}
		for _, n := range ns {
			out = append(out, "server-"+strconv.Itoa(n))
		}
		return out
	}
	for path, want := range map[string][]string{
		"/?findings=1":                      slugs(4, 8, 16, 20, 28, 32, 44, 52, 56),
		"/?protocol=2025-06-18":             slugs(4, 12, 20, 28, 36, 44, 52),
		"/?protocol=2025-06-18&findings=1":  slugs(4, 20, 28, 44, 52),
		"/?protocol=1999-01-01":             {},
		"/?offline=1":                       slugs(0, 40),
		"/?changed=7d&kind=remote":          slugs(0, 20, 40),
		"/?verified=1&findings=1":           {},
		"/?sort=findings&findings=1":        slugs(4, 16, 28, 52, 8, 20, 32, 44, 56),
		"/?sort=findings&kind=remote":       slugs(4, 16, 28, 52, 8, 20, 32, 44, 56, 12, 24, 36, 48, 0, 40),
		"/?sort=uptime&kind=remote":         slugs(4, 8, 12, 16, 20, 24, 28, 32, 36, 44, 48, 52, 56, 0, 40),
		"/?sort=change&kind=remote":         slugs(0, 20, 40, 4, 8, 12, 16, 24, 28, 32, 36, 44, 48, 52, 56),
		"/?sort=name&q=server-1":            slugs(1, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19),
		"/?sort=name&kind=npm&q=server-2":   slugs(21, 25, 29),
		"/?sort=uptime&kind=npm&q=server-2": slugs(21, 25, 29),
	} {
		body := get(path)
		got, _ := dirRows(t, body)
		if !slices.Equal(got, want) {
			t.Errorf("GET %s rows = %v, want %v", path, got, want)
		}
		count := strconv.Itoa(len(want)) + " servers match"
		if len(want) == 1 {
			count = "1 server matches"
		}
		if !strings.Contains(body, count) {
			t.Errorf("GET %s does not say %q", path, count)
		}
	}
	if body := get("/?q=server-59"); !strings.Contains(body, "1 server matches") {
		t.Errorf("one match is not counted in the singular")
	}
	// The sort links keep the filters and drop the page; the current one is marked.
	body := get("/?findings=1&sort=uptime&page=1")
	for _, link := range []string{`<a href="/?findings=1&amp;sort=name">name</a>`, `<a href="/?findings=1&amp;sort=uptime" aria-current="true">uptime</a>`,
		`<a href="/?findings=1">added</a>`, `<input type="hidden" name="sort" value="uptime">`, `<input id="dir-findings" type="checkbox" name="findings" value="1" checked>`} {
		if !strings.Contains(body, link) {
			t.Errorf("GET /?findings=1&sort=uptime lacks %s", link)
		}
	}

	// Pagination keeps every parameter: 250 entries by name, 100 a page.
	d = newDirectorySite(t, 250)
	body = get("/?sort=name&kind=&protocol=")
	next := regexp.MustCompile(`<a href="/\?([^"]*)" rel="next">`).FindStringSubmatch(body)
	if next == nil || next[1] != "page=2&amp;sort=name" {
		t.Fatalf("next link = %v, want ?page=2&sort=name", next)
	}
	first, _ := dirRows(t, body)
	second, _ := dirRows(t, get("/?page=2&sort=name"))
	body = get("/?page=3&sort=name")
	third, _ := dirRows(t, body)
	if len(first) != 100 || len(second) != 100 || len(third) != 50 || first[0] != "server-0" || first[1] != "server-1" || first[2] != "server-10" {
		t.Errorf("pages by name: %d, %d, %d rows, starting %v", len(first), len(second), len(third), first[:3])
	}
	if prev := regexp.MustCompile(`<a href="/\?([^"]*)" rel="prev">`).FindStringSubmatch(body); prev == nil || prev[1] != "page=2&amp;sort=name" {
		t.Errorf("previous link of page 3 = %v", prev)
	}
	if strings.Contains(body, `rel="next"`) {
		t.Errorf("the last page links a next page")
	}
	all := append(append(first, second...), third...)
	seen := map[string]bool{}
	for _, s := range all {
		seen[s] = true
	}
	if len(seen) != 250 {
		t.Errorf("the three pages by name hold %d distinct entries, want 250", len(seen))
	}
}

// TestDirectoryBadParameters: a parameter the page does not understand is a 400 that
// names it, never a 500.
func TestDirectoryBadParameters(t *testing.T) {
	d := newDirectorySite(t, 4)
	for path, says := range map[string]string{
		"/?sort=stars":                          "order",
		"/?sort=name&sort=uptime":               "once",
		"/?findings=yes":                        `&#34;findings&#34;`,
		"/?verified=true":                       `&#34;verified&#34;`,
		"/?changed=30d":                         `&#34;changed&#34;`,
		"/?offline=0":                           `&#34;offline&#34;`,
		"/?page=0":                              "page",
		"/?page=x":                              "page",
		"/?page=99999999999999999999":           "page",
		"/?kind=cargo":                          "kind",
		"/?protocol=%3Cscript%3E":               "protocol",
		"/?protocol=" + strings.Repeat("1", 65): "protocol",
		"/?q=" + strings.Repeat("a", 300):       "search",
	} {
		rec := httptest.NewRecorder()
		d.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), says) {
			t.Errorf("GET %.60s: %d, body mentions %q: %v", path, rec.Code, says, strings.Contains(rec.Body.String(), says))
		}
		if strings.Contains(rec.Body.String(), "<script>") {
			t.Errorf("GET %.60s echoes markup", path)
		}
	}
}

// TestDirectoryAPIFacts: /api/v1/servers says what the directory page shows of a row.
func TestDirectoryAPIFacts(t *testing.T) {
	d := newDirectorySite(t, 8)
	rec := httptest.NewRecorder()
	d.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/servers", nil))
	var out struct {
		Servers []struct {
			Slug     string `json:"slug"`
			Findings *struct {
				Failed       int `json:"failed"`
				ObservedRisk int `json:"observedRisk"`
			} `json:"findings"`
			ToolCount       *int   `json:"toolCount"`
			ProtocolVersion string `json:"protocolVersion"`
			Uptime30        struct {
				OnlineDays  int `json:"onlineDays"`
				CountedDays int `json:"countedDays"`
			} `json:"uptime30"`
			LastChangeAt *string `json:"lastChangeAt"`
			Offline      bool    `json:"offline"`
		} `json:"servers"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || len(out.Servers) != 8 {
		t.Fatalf("/api/v1/servers: %v, %d servers", err, len(out.Servers))
	}
	s0, s1, s4 := out.Servers[0], out.Servers[1], out.Servers[4]
	if !s0.Offline || s0.Findings != nil || s0.ToolCount != nil || s0.Uptime30.CountedDays != 1 || s0.Uptime30.OnlineDays != 0 ||
		s0.LastChangeAt == nil || *s0.LastChangeAt != "2026-11-30T12:00:00Z" {
		t.Errorf("server-0 = %+v", s0)
	}
	if s1.Offline || s1.Findings != nil || s1.Uptime30.CountedDays != 0 || s1.LastChangeAt != nil {
		t.Errorf("server-1 = %+v", s1)
	}
	if s4.Findings == nil || s4.Findings.Failed != 1 || s4.Findings.ObservedRisk != 2 || s4.ToolCount == nil || *s4.ToolCount != 1 ||
		s4.ProtocolVersion != "2025-06-18" || s4.Uptime30.OnlineDays != 1 || s4.Uptime30.CountedDays != 1 || s4.Offline {
		t.Errorf("server-4 = %+v", s4)
	}
}
