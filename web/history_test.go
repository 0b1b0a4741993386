package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/history/diff"
	"github.com/probity-dev/probity/store"
)

// between returns the part of s from the first from to the next to after it ("" when
// either is missing).
func between(s, from, to string) string {
	_, rest, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	in, _, ok := strings.Cut(rest, to)
	if !ok {
		return ""
	}
	return in
}

// serverTextTags matches the tags a <pre class="server-text"> may hold: the marks of
// changed words, nothing else.
var serverTextTags = regexp.MustCompile(`<[^>]*>`)

// checkServerText fails when a <pre class="server-text"> of page holds any tag but
// <del>, <ins> and their ends, or an invisible character not written as an escape.
func checkServerText(t *testing.T, page string) {
	t.Helper()
	for _, pre := range strings.Split(page, `<pre class="server-text">`)[1:] {
		text, _, _ := strings.Cut(pre, "</pre>")
		for _, tag := range serverTextTags.FindAllString(text, -1) {
			if tag != "<del>" && tag != "</del>" && tag != "<ins>" && tag != "</ins>" {
				t.Errorf("server text holds the tag %s: %s", tag, text)
			}
		}
		if strings.ContainsAny(text, "\u200b\u202e") {
			t.Errorf("server text holds an invisible character: %q", text)
		}
	}
}

// TestHistoryChangesNumberedOnce: the history says at its top which case applies and
// when the tools were last fetched; each change is named once, "Change N" on its
// #ch-N heading, in no numbered list; the first read is "First read (baseline)", not
// a change, on the page, the recent changes, the Markdown and the JSON.
func TestHistoryChangesNumberedOnce(t *testing.T) {
	f := setup(t, generous)
	s := "/s/" + f.slug
	hist := f.get(t, "GET", s+"/history").Body.String()

	top, changes, ok := strings.Cut(hist, `<section id="changes"`)
	if !ok {
		t.Fatalf("no changes section:\n%s", hist)
	}
	observed := between(top, `<section id="observed"`, `</section>`)
	for _, want := range []string{
		`<h2 id="observed-title">What this history observes</h2>`,
		`<p class="card-lead"><strong>Remote server, tools listed without a login.</strong> A remote server that lists its tools without a login`,
		"Tools last fetched: <time>2026-12-01 07:02:00 UTC</time>.",
	} {
		if !strings.Contains(observed, want) {
			t.Errorf("the top of the history lacks %q:\n%s", want, observed)
		}
	}
	for _, want := range []string{
		`<article id="ch-2" class="change">` + "\n" + `<h3><a href="#ch-2">Change 2</a></h3>`,
		`<article id="ch-1" class="change baseline">` + "\n" + `<h3><a href="#ch-1">First read (baseline)</a></h3>`,
		"<p class=\"summary\">observation started with 1 tool</p>\n<p class=\"muted\">Observation began with this read; nothing before it counts as a change.</p>",
	} {
		if !strings.Contains(changes, want) {
			t.Errorf("the history lacks %q:\n%s", want, changes)
		}
	}
	for _, bad := range []string{"<ol", "#2<", ">#2", "#1<", "Change 1", "No changes recorded yet"} {
		if strings.Contains(changes, bad) {
			t.Errorf("the history holds %q:\n%s", bad, changes)
		}
	}
	if strings.Count(hist, "<h1") != 1 {
		t.Error("the history has more or less than one h1")
	}

	recent := f.get(t, "GET", "/changes").Body.String()
	for _, want := range []string{`<a href="/s/search/history#ch-2">search: Change 2</a>`, `<a href="/s/search/history#ch-1">search: First read (baseline)</a>`} {
		if !strings.Contains(recent, want) {
			t.Errorf("recent changes lack %q:\n%s", want, recent)
		}
	}
	if strings.Contains(recent, "<ol") || strings.Contains(recent, "#2<") {
		t.Errorf("recent changes number a change twice:\n%s", recent)
	}

	md := f.get(t, "GET", s+".md").Body.String()
	for _, want := range []string{"- Change 2, 2026-12-01 07:02 UTC, automatic check (ch-2): ", "- First read (baseline), 2026-12-01 06:00 UTC, automatic check (ch-1): observation started with 1 tool\n"} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md)
		}
	}

	var j struct {
		History struct {
			Changes []struct {
				Number   int64
				Kind     string
				Baseline bool
				Label    string
			}
		}
	}
	if err := json.Unmarshal(f.get(t, "GET", s+".json").Body.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	if cs := j.History.Changes; len(cs) != 2 || cs[0].Baseline || cs[0].Label != "Change 2" || !cs[1].Baseline || cs[1].Kind != "baseline" || cs[1].Label != "First read (baseline)" {
		t.Errorf("JSON history: %+v", cs)
	}
}

// TestHistoryWordMarks: a description that changed shows before and after with the
// removed words in <del> and the added in <ins>, the server's text escaped and its
// invisible characters written as escapes.
func TestHistoryWordMarks(t *testing.T) {
	f := setupWith(t, generous, "Search the <script>alert(1)</script> catalog. zero\u200bwidth\u202e")
	hist := f.get(t, "GET", "/s/"+f.slug+"/history").Body.String()
	for _, want := range []string{
		`<h4>Tool <code>search</code> changed</h4>`,
		`<h5>Description before</h5><pre class="server-text">Search the catalog.</pre>`,
		`<h5>Description after</h5><pre class="server-text">Search the <ins>&lt;script&gt;alert(1)&lt;/script&gt;</ins> catalog. <ins>zero\u200bwidth\u202e</ins></pre>`,
	} {
		if !strings.Contains(hist, want) {
			t.Errorf("the history lacks %q:\n%s", want, hist)
		}
	}
	if strings.Contains(hist, "<script") || strings.Contains(hist, "not marked in texts this long") {
		t.Errorf("the history:\n%s", hist)
	}
	checkServerText(t, hist)
}

// TestHistoryMarksAndPages: instructions and an operator's edit are marked too; a
// description beyond the word diff's bound is shown whole with a note; the first
// read is named as such on the last page; ?page=2 still pages.
func TestHistoryMarksAndPages(t *testing.T) {
	be := newBigEntry(t, 1)
	str := func(s string) *string { return &s }
	var long []string
	for i := range 600 {
		long = append(long, fmt.Sprintf("w%d", i))
	}
	details := func(v any) []byte {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	const last = 130
	var cs []store.ChangeRecord
	for n := int64(1); n <= last; n++ {
		c := store.ChangeRecord{EntryID: be.entry.ID, Number: n, RecordedAt: time.Date(2026, 12, 1, 6, 0, int(n), 0, time.UTC),
			Origin: "automatic", Kind: "version", Summary: fmt.Sprintf("version 1.0.%d", n),
			Details: details(map[string]any{"versionBefore": fmt.Sprintf("1.0.%d", n-1), "versionAfter": fmt.Sprintf("1.0.%d", n)}), AfterRound: be.obs}
		switch n {
		case 1:
			c.Kind, c.Summary, c.Details = "baseline", "observation started with 1 tool", details(map[string]any{"toolCount": 1})
		case last:
			c.Kind, c.Summary = "tools", "1 tool changed: description"
			c.Details = details(map[string]any{"diff": diff.Change{Changed: []diff.ToolChange{{Name: "big", DescriptionChanged: true,
				DescriptionBefore: strings.Join(long, " "), DescriptionAfter: "Short <b>now</b>."}}}})
		case last - 1:
			c.Kind, c.Summary = "tools", "instructions changed"
			c.Details = details(map[string]any{"diff": diff.Change{InstructionsChanged: true,
				InstructionsBefore: str("Use the tools with care."), InstructionsAfter: str("Use the tools \u200bwith <em>no</em> care.")}})
		case last - 2:
			c.Origin, c.Kind, c.Summary = "operator", "operator_edit", "description edited by the operator"
			c.Details = details(map[string]any{"field": "description", "before": "A server for search.", "after": "A server for search & fetch."})
		}
		cs = append(cs, c)
	}
	if err := be.st.SaveHistory(t.Context(), store.HistoryUpdate{EntryID: be.entry.ID, Processed: be.obs, State: []byte(`{}`), Changes: cs}); err != nil {
		t.Fatal(err)
	}
	h := be.new()
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code, rec.Body.String()
	}

	code, p1 := get("/s/big/history")
	if code != http.StatusOK {
		t.Fatalf("page 1: %d", code)
	}
	for _, want := range []string{
		fmt.Sprintf(`<h3><a href="#ch-%d">Change %d</a></h3>`, last, last),
		fmt.Sprintf(`<h3><a href="#ch-%d">Change %d</a></h3>`, last-99, last-99),
		`<h5>Description before</h5><pre class="server-text">w0 w1 w2 `,
		`<h5>Description after</h5><pre class="server-text">Short &lt;b&gt;now&lt;/b&gt;.</pre>`,
		`<p class="muted">The words that changed are not marked in texts this long; both are shown whole.</p>`,
		`<h5>Instructions before</h5><pre class="server-text">Use the tools <del>with</del> care.</pre>`,
		`<h5>Instructions after</h5><pre class="server-text">Use the tools <ins>\u200bwith &lt;em&gt;no&lt;/em&gt;</ins> care.</pre>`,
		`<h5>Text before</h5><pre class="server-text">A server for <del>search.</del></pre>`,
		`<h5>Text after</h5><pre class="server-text">A server for <ins>search &amp; fetch.</ins></pre>`,
		`<a href="?page=2">Older changes</a>`,
	} {
		if !strings.Contains(p1, want) {
			t.Errorf("page 1 lacks %q", want)
		}
	}
	for _, bad := range []string{fmt.Sprintf(`id="ch-%d"`, last-100), "Newer changes", "First read", "No changes recorded yet"} {
		if strings.Contains(p1, bad) {
			t.Errorf("page 1 holds %q", bad)
		}
	}
	checkServerText(t, p1)

	code, p2 := get("/s/big/history?page=2")
	if code != http.StatusOK {
		t.Fatalf("page 2: %d", code)
	}
	for _, want := range []string{
		fmt.Sprintf(`<h3><a href="#ch-%d">Change %d</a></h3>`, last-100, last-100),
		`<h3><a href="#ch-2">Change 2</a></h3>`,
		`<h3><a href="#ch-1">First read (baseline)</a></h3>`,
		`<a href="?page=1">Newer changes</a>`,
	} {
		if !strings.Contains(p2, want) {
			t.Errorf("page 2 lacks %q", want)
		}
	}
	for _, bad := range []string{fmt.Sprintf(`id="ch-%d"`, last-99), "Older changes", "Change 1<", "<pre"} {
		if strings.Contains(p2, bad) {
			t.Errorf("page 2 holds %q", bad)
		}
	}
	if code, _ := get("/s/big/history?page=3"); code != http.StatusNotFound {
		t.Errorf("page 3: %d, want 404", code)
	}
}

// TestHistoryOnlyBaseline: an entry whose history holds its first read only says
// that no change is recorded yet, and shows the first read.
func TestHistoryOnlyBaseline(t *testing.T) {
	be := newBigEntry(t, 1)
	if err := be.st.SaveHistory(t.Context(), store.HistoryUpdate{EntryID: be.entry.ID, Processed: be.obs, State: []byte(`{}`), Changes: []store.ChangeRecord{{
		EntryID: be.entry.ID, Number: 1, RecordedAt: time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC), Origin: "automatic", Kind: "baseline",
		Summary: "observation started with 1 tool", Details: []byte(`{"toolCount":1}`), AfterRound: be.obs}}}); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	be.new().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/s/big/history", nil))
	page := rec.Body.String()
	for _, want := range []string{`<p class="empty">No changes recorded yet; the first read is below.</p>`, `<h3><a href="#ch-1">First read (baseline)</a></h3>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the history lacks %q:\n%s", want, page)
		}
	}
}
