package web_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"html"
	"reflect"
	"strings"
	"testing"

	"github.com/probity-dev/probity/history/stats"
)

// TestStatsPage checks /stats against the report /stats.json serves: every heading of
// the report's Markdown is a table heading of the page, there are four well-formed
// inline SVG charts with titles, descriptions, axis titles and their numbers as a
// table, the fixture's one day (today) is in them, and nothing is a script or an
// inline style.
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
	// The series: the fixture's rounds and its confirmed tools change are today's
	// (the baseline and the hidden operator edit are no changes).
	want := stats.Series{From: "2026-11-02", To: "2026-12-01", Versions: []string{"2025-11-25"},
		Days: []stats.SeriesDay{{Day: "2026-12-01", Changes: 1, Probed: 1, Changed: stats.Part{Count: 1, Share: 1}, Versions: []int{1}}},
		Uptime: stats.UptimeHistogram{From: "2026-11-02", To: "2026-12-01", Servers: 1, Bins: []stats.UptimeBin{
			{Min: 100, Max: 100, Part: stats.Part{Count: 1, Share: 1}}, {Min: 95, Max: 99}, {Min: 80, Max: 94}, {Min: 50, Max: 79}, {Min: 0, Max: 49}}}}
	if !reflect.DeepEqual(rep.Series, want) {
		t.Errorf("series %+v, want %+v", rep.Series, want)
	}
	for _, want := range []string{
		"Computed at <time>2026-12-01 08:00:00 UTC</time>",
		`<th scope="row">Changed at least once</th><td class="num">1 (100%)</td>`,
		`<p class="definition">`,
		"<title>2026-12-01: 1 change</title>",                            // the bar of changes per day
		"<title>2026-12-01: 1 of 1 server (100.0%)</title>",              // the dot of the share changed
		"<title>100%: 1 server (100.0%)</title>",                         // the uptime bin
		"<title>2026-12-01: 1 server</title>",                            // the protocol version's segment
		`<tr><th scope="row">2026-12-01</th><td class="num">1</td></tr>`, // changes per day, as a table
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
	if n := strings.Count(page, "<svg "); n != 4 || strings.Contains(page, `class="empty"`) {
		t.Fatalf("/stats has %d charts (and empty states: %v), want 4", n, strings.Contains(page, `class="empty"`))
	}
	// Each chart is well-formed XML with a title, a description, axis titles and tick
	// labels, marks with titles, and its numbers as a table after it.
	rest := page
	for range 4 {
		i, j := strings.Index(rest, "<svg "), strings.Index(rest, "</svg>")
		var svg struct {
			XMLName xml.Name
			Title   string `xml:"title"`
			Desc    string `xml:"desc"`
			Text    []struct {
				Class string `xml:"class,attr"`
				Text  string `xml:",chardata"`
			} `xml:"text"`
			Marks []struct {
				XMLName xml.Name
				Title   string `xml:"title"`
			} `xml:",any"`
		}
		if err := xml.Unmarshal([]byte(rest[i:j+len("</svg>")]), &svg); err != nil {
			t.Fatalf("chart is not well-formed: %v", err)
		}
		classes := map[string]int{}
		for _, tx := range svg.Text {
			classes[tx.Class]++
		}
		marks := 0
		for _, m := range svg.Marks {
			if (m.XMLName.Local == "rect" || m.XMLName.Local == "circle") && m.Title != "" {
				marks++
			}
		}
		if svg.XMLName.Local != "svg" || svg.XMLName.Space != "http://www.w3.org/2000/svg" || svg.Title == "" || svg.Desc == "" ||
			classes["chart-axis-title"] != 2 || classes["chart-tick"] < 3 || marks == 0 {
			t.Errorf("chart %q: texts %v, %d marks with titles", svg.Title, classes, marks)
		}
		rest = rest[j+len("</svg>"):]
		if k := strings.Index(rest, "<details>"); k < 0 || k > strings.Index(rest+"<svg ", "<svg ") || !strings.Contains(rest[k:], "<table>") {
			t.Errorf("chart %q has no table of its numbers", svg.Title)
		}
	}
}
