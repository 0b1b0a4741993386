package web_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"html"
	"strings"
	"testing"

	"github.com/probity-dev/probity/history/stats"
)

// TestStatsPage checks /stats against the report /stats.json serves: every heading of
// the report's Markdown is a table heading of the page, there are two well-formed
// inline SVG charts with titles, and nothing is a script or an inline style.
func TestStatsPage(t *testing.T) {
	f := setup(t, generous)
	rec := f.get(t, "GET", "/stats")
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("/stats: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	checkHeaders(t, "/stats", rec)
	page := rec.Body.String()

	jr := f.get(t, "GET", "/stats.json")
	if jr.Code != 200 || !strings.HasPrefix(jr.Header().Get("Content-Type"), "application/json") {
		t.Fatalf("/stats.json: %d %q", jr.Code, jr.Header().Get("Content-Type"))
	}
	var rep stats.Report
	dec := json.NewDecoder(bytes.NewReader(jr.Body.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("/stats.json does not decode into stats.Report: %v", err)
	}
	if !rep.Now.Equal(f.now) {
		t.Errorf("report cut-off %v, want the site's clock %v", rep.Now, f.now)
	}
	// One server read three times, its toolset changed once.
	if rep.Summary.ReadTwice != 1 || rep.ChangesPerServer.One != 1 || rep.Summary.Changes != 1 {
		t.Errorf("report: summary %+v, changes per server %+v", rep.Summary, rep.ChangesPerServer)
	}
	if api := f.get(t, "GET", "/api/v1/stats"); api.Code != 200 || !bytes.Equal(api.Body.Bytes(), jr.Body.Bytes()) {
		t.Errorf("/api/v1/stats (%d) differs from /stats.json", api.Code)
	}

	headings := 0
	for line := range strings.SplitSeq(rep.Markdown(), "\n") {
		if h, ok := strings.CutPrefix(line, "### "); ok {
			headings++
			if !strings.Contains(page, "<h3>"+html.EscapeString(h)+"</h3>") {
				t.Errorf("/stats lacks the table %q", h)
			}
		}
	}
	if headings < 13 {
		t.Errorf("the Markdown has only %d tables", headings)
	}
	for _, want := range []string{
		"Computed at <time>2026-12-01 08:00:00 UTC</time>",
		`<th scope="row">Changed at least once</th><td class="num">1 (100%)</td>`,
		`<p class="definition">`,
		"<title>1: 1 server</title>", // the changes chart's bar of servers with one change
		"<title>Signed, full coverage, 100%: 0 servers</title>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("/stats lacks %q", want)
		}
	}
	for _, bad := range []string{"<script", " style=", "<img", "<foreignObject"} {
		if strings.Contains(page, bad) {
			t.Errorf("/stats contains %q", bad)
		}
	}
	if n := strings.Count(page, "<svg "); n != 2 {
		t.Fatalf("/stats has %d charts, want 2", n)
	}
	// Each chart is well-formed XML with a title and text labels.
	rest := page
	for range 2 {
		i, j := strings.Index(rest, "<svg "), strings.Index(rest, "</svg>")
		var svg struct {
			XMLName xml.Name
			Title   string   `xml:"title"`
			Desc    string   `xml:"desc"`
			Text    []string `xml:"text"`
			Rects   []struct {
				Title string `xml:"title"`
			} `xml:"rect"`
		}
		if err := xml.Unmarshal([]byte(rest[i:j+len("</svg>")]), &svg); err != nil {
			t.Fatalf("chart is not well-formed: %v", err)
		}
		if svg.XMLName.Local != "svg" || svg.XMLName.Space != "http://www.w3.org/2000/svg" || svg.Title == "" || svg.Desc == "" || len(svg.Text) == 0 || len(svg.Rects) == 0 {
			t.Errorf("chart: %+v", svg)
		}
		rest = rest[j+len("</svg>"):]
	}
}
