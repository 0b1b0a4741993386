package web_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/probity-dev/probity/history/diff"
	"github.com/probity-dev/probity/store"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// maxAnswer is the most any answer about an entry may take, whatever its tools.
const maxAnswer = 1 << 20

// An entry with many long tool descriptions full of characters that need escaping is
// paged: every page, JSON and Markdown answer stays under 1 MB, the pages link each
// other, and together they list every tool once, the same tools in every format.
func TestToolsPaged(t *testing.T) {
	const n = 1500
	be := newBigEntry(t, n)
	h := be.new()
	get := func(path string) *httptest.ResponseRecorder {
		t.Helper()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code == http.StatusOK && rec.Body.Len() > maxAnswer {
			t.Errorf("GET %s: %d bytes, want at most %d", path, rec.Body.Len(), maxAnswer)
		}
		return rec
	}

	first := get("/s/big")
	if first.Code != http.StatusOK {
		t.Fatalf("GET /s/big: %d", first.Code)
	}
	body := first.Body.String()
	pagesRE := regexp.MustCompile(`Tools 1 to (\d+), page 1 of (\d+)\.`)
	m := pagesRE.FindStringSubmatch(body)
	if m == nil || !strings.Contains(body, "<h2>Tools (1500)</h2>") || !strings.Contains(body, `<a href="?tools=2#tools" rel="next">`) || strings.Contains(body, `rel="prev"`) {
		t.Fatalf("the first page lacks its heading or its links:\n%.2000s", body[strings.Index(body, `id="tools"`):])
	}
	var pages int
	fmt.Sscan(m[2], &pages)

	type page struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
		ToolsPage struct {
			Page, Pages, Total, First int
			Prev, Next                string
		} `json:"toolsPage"`
	}
	seen := map[string]int{}
	next := "/s/big.json"
	for k := 1; next != ""; k++ {
		if k > pages {
			t.Fatalf("more than %d pages", pages)
		}
		rec := get(strings.TrimPrefix(next, "https://probity.test"))
		var p page
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || rec.Code != http.StatusOK {
			t.Fatalf("page %d: %d %v", k, rec.Code, err)
		}
		tp := p.ToolsPage
		if tp.Page != k || tp.Pages != pages || tp.Total != n || tp.First != len(seen)+1 || len(p.Tools) == 0 || len(p.Tools) > 100 {
			t.Fatalf("page %d: toolsPage %+v with %d tools after %d", k, tp, len(p.Tools), len(seen))
		}
		if (k == 1) != (tp.Prev == "") || (k > 1 && tp.Prev != fmt.Sprintf("https://probity.test/s/big.json?tools=%d", k-1)) {
			t.Errorf("page %d: prev %q", k, tp.Prev)
		}
		for _, tl := range p.Tools {
			seen[tl.Name]++
		}
		// The page and the Markdown show the same tools.
		html := get(fmt.Sprintf("/s/big?tools=%d", k)).Body.String()
		md := get(fmt.Sprintf("/s/big.md?tools=%d", k)).Body.String()
		if c := strings.Count(html, "<dt>"); c != len(p.Tools) || !strings.Contains(html, "<code>"+p.Tools[0].Name+"</code>") {
			t.Errorf("page %d: the HTML shows %d tools, the JSON %d", k, c, len(p.Tools))
		}
		if !strings.Contains(md, fmt.Sprintf("page %d of %d", k, pages)) || !strings.Contains(md, p.Tools[len(p.Tools)-1].Name) {
			t.Errorf("page %d: the Markdown lacks its page or its last tool", k)
		}
		next = tp.Next
	}
	if len(seen) != n {
		t.Errorf("the pages list %d tools, want %d", len(seen), n)
	}
	for name, c := range seen {
		if c != 1 {
			t.Errorf("%s listed %d times", name, c)
		}
	}
	// The API pages the same way.
	api, page2 := get("/api/v1/servers/big?tools=2"), get("/s/big.json?tools=2")
	if api.Body.String() != page2.Body.String() {
		t.Errorf("/api/v1/servers/big?tools=2 differs from /s/big.json?tools=2")
	}
	// Past the end, and what is not a page number.
	for path, want := range map[string]int{
		fmt.Sprintf("/s/big?tools=%d", pages+1):      http.StatusNotFound,
		fmt.Sprintf("/s/big.json?tools=%d", pages+1): http.StatusNotFound,
		"/s/big?tools=0":               http.StatusBadRequest,
		"/s/big.md?tools=x":            http.StatusBadRequest,
		"/api/v1/servers/big?tools=-1": http.StatusBadRequest,
		"/s/big?tools=100001":          http.StatusBadRequest,
	} {
		if rec := get(path); rec.Code != want {
			t.Errorf("GET %s: %d, want %d", path, rec.Code, want)
		}
	}
}

// The entry page of 7,000 tools of 3 KB stays under 1 MB.
func TestHugeEntryPageBounded(t *testing.T) {
	be := newBigEntry(t, 7000)
	h := be.new()
	for _, path := range []string{"/s/big", "/s/big.json", "/s/big.md", "/api/v1/servers/big"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusOK || rec.Body.Len() > maxAnswer {
			t.Errorf("GET %s: %d, %d bytes; want 200 and at most %d", path, rec.Code, rec.Body.Len(), maxAnswer)
		}
	}
}

// The history of an entry whose changes add and change thousands of tools stays under
// 1 MB a page: a change lists at most 50 tools of each kind and counts the rest, and
// details stop when the page's budget is spent.
func TestHistoryPageBounded(t *testing.T) {
	be := newBigEntry(t, 10)
	var added []diff.ToolRef
	var changed []diff.ToolChange
	for i := range 7000 {
		added = append(added, diff.ToolRef{Name: fmt.Sprintf("tool_%05d", i), Title: bigDescription[:100]})
		if i >= 200 {
			continue // the page decodes at most 4 MB of details a change
		}
		changed = append(changed, diff.ToolChange{Name: fmt.Sprintf("tool_%05d", i), DescriptionChanged: true,
			DescriptionBefore: bigDescription, DescriptionAfter: bigDescription + "!"})
	}
	var cs []store.ChangeRecord
	for n := int64(1); n <= 12; n++ {
		c := diff.Change{Added: added}
		if n%2 == 0 {
			c = diff.Change{Changed: changed}
		}
		details, err := json.Marshal(map[string]any{"diff": c, "toolCount": 7000})
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, store.ChangeRecord{EntryID: be.entry.ID, Number: n, RecordedAt: time.Date(2026, 12, 1, 6, int(n), 0, 0, time.UTC),
			Origin: "automatic", Kind: "tools", Summary: c.Summary(), Details: details, AfterRound: be.obs})
	}
	if err := be.st.SaveHistory(t.Context(), store.HistoryUpdate{EntryID: be.entry.ID, Processed: be.obs, State: []byte(`{}`), Changes: cs}); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	be.new().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/s/big/history", nil))
	body := rec.Body.String()
	if rec.Code != http.StatusOK || rec.Body.Len() > maxAnswer {
		t.Fatalf("GET /s/big/history: %d, %d bytes; want 200 and at most %d", rec.Code, rec.Body.Len(), maxAnswer)
	}
	t.Logf("history page: %d bytes", rec.Body.Len())
	for _, want := range []string{"more tools added, not listed here.</p>", "more tools changed, not listed here.</p>", "and 6950 more</p>", "and 150 more</p>", `id="ch-1"`, `id="ch-12"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the history lacks %q: %d bytes\n%.3000s", want, len(body), body[strings.Index(body, `<section id="changes"`):])
		}
	}
}
