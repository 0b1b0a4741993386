package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"html"
	"log/slog"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/history/stats"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/web"
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
	checkReportSchema(t, jr.Body.Bytes())
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
		"<title>2026-12-01, 2025-11-25: 1 server</title>",                // the protocol version's segment
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

// TestStatsNewInstall: on a new install the page shows, instead of charts of zeros,
// what each chart will show and when; after the first round (today) the charts that
// have data draw it at once, and a protocol version a server answered with is
// escaped plain text, its invisible characters shown.
func TestStatsNewInstall(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	st, doc, _ := openStore(t, now)
	h, err := web.New(web.Config{Store: st, Keys: doc, BaseURL: "https://probity.test", Now: func() time.Time { return now },
		Logger: slog.New(slog.DiscardHandler), RateLimit: generous})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{h: h, st: st, now: now}
	get := func() (string, stats.Series) {
		t.Helper()
		page := f.get(t, "GET", "/stats")
		jr := f.get(t, "GET", "/stats.json")
		var rep stats.Report
		if page.Code != 200 || jr.Code != 200 {
			t.Fatalf("/stats %d, /stats.json %d", page.Code, jr.Code)
		}
		if err := json.Unmarshal(jr.Body.Bytes(), &rep); err != nil {
			t.Fatal(err)
		}
		return page.Body.String(), rep.Series
	}
	empty := map[string]string{
		"changes-per-day":           "Changes per day appear after the first confirmed change. Probity reads every server every 3 h by default",
		"share-changed":             "The share of servers changed appears after the first round.",
		"uptime-distribution":       "The uptime distribution appears after the first round",
		"protocol-versions-per-day": "Protocol versions appear after the first round that completes a handshake.",
	}
	page, series := get()
	checkReportSchema(t, f.get(t, "GET", "/stats.json").Body.Bytes())
	if strings.Contains(page, "<svg ") || len(series.Days) != 0 || series.Uptime.Servers != 0 {
		t.Errorf("a new install draws charts: series %+v", series)
	}
	for id, text := range empty {
		if !strings.Contains(page, `<section class="stats-chart" id="`+id+`">`) || !regexp.MustCompile(`id="`+id+`">\s*<h3>[^<]+</h3>\s*<p class="empty">`+regexp.QuoteMeta(text)).MatchString(page) {
			t.Errorf("%s: no empty state %q", id, text)
		}
	}

	// The first round: an answer with a hostile protocol version but no tool list.
	hostileVersion := "<script>alert(1)</script>\u200b2025"
	e, _, err := st.AddEntry(ctx, store.NewEntry{SlugBase: "first", Kind: store.KindRemote, Locator: "https://first.example/mcp", Name: "First", Source: "import"})
	if err != nil {
		t.Fatal(err)
	}
	at := now.Add(-time.Hour)
	if _, err := st.SaveRound(ctx, &store.Round{EntryID: e.ID, DueAt: at, Reason: store.ReasonCadence, RoundID: "r-1", StartedAt: at, FinishedAt: at.Add(time.Second),
		UnsignedReason: "no_tools", HTTPStatus: 200, Uptime: store.UptimeAnswered, ProtocolVersion: hostileVersion, HandshakeMethod: "initialize",
		ProposedVersion: "2025-11-25", Results: []byte(`[]`)}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(11 * time.Minute) // past the cached statistics
	page, series = get()
	wantDays := []stats.SeriesDay{{Day: "2026-12-01", Probed: 1, Changed: stats.Part{}, Versions: []int{1}}}
	if !reflect.DeepEqual(series.Days, wantDays) || !reflect.DeepEqual(series.Versions, []string{hostileVersion}) || series.Uptime.Servers != 1 {
		t.Errorf("after the first round: %+v", series)
	}
	for _, text := range []string{empty["changes-per-day"], "No probed server changed from 2026-11-02 to 2026-12-01: the share of servers changed appears after the first confirmed change."} {
		if !strings.Contains(page, `<p class="empty">`+html.EscapeString(text)) {
			t.Errorf("no empty state %q after the first round", text)
		}
	}
	if n := strings.Count(page, "<svg "); n != 2 {
		t.Errorf("%d charts after the first round, want uptime and protocol versions", n)
	}
	shown := `&lt;script&gt;alert(1)&lt;/script&gt;\u200b2025`
	if !strings.Contains(page, "<title>2026-12-01, "+shown+": 1 server</title>") || !strings.Contains(page, `<th scope="col">`+shown+`</th>`) ||
		!strings.Contains(page, `fill="currentColor">`+shown+`</text>`) { // the legend
		t.Errorf("/stats lacks the version %q as escaped, visible text", shown)
	}
	if strings.Contains(page, "<script") || strings.Contains(page, "\u200b") {
		t.Error("/stats shows a server's protocol version as markup or with an invisible character")
	}
}

// checkReportSchema validates a /stats.json answer against openapi.json's Report.
func checkReportSchema(t *testing.T, body []byte) {
	t.Helper()
	b, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	comps, _ := dig(doc, "components", "schemas").(map[string]any)
	resolve, err := schemaResolver("https://json-schema.org/draft/2020-12/schema", comps)
	if err != nil {
		t.Fatal(err)
	}
	report, err := resolve(map[string]any{"$ref": "#/components/schemas/Report", "unevaluatedProperties": false})
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	if err := report.Validate(v); err != nil {
		t.Errorf("/stats.json does not match openapi.json's Report: %v", err)
	}
}
