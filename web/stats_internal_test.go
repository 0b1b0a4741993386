package web

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/probity-dev/probity/history/stats"
	"github.com/probity-dev/probity/store"
)

// countingStore counts the statistics computations (each starts with Entries after
// id 0), makes them slow enough for requests to pile up, and fails them on demand.
type countingStore struct {
	store.Store
	computations atomic.Int32
	fail         atomic.Bool
}

var errInjected = errors.New("injected fault")

func (c *countingStore) Entries(ctx context.Context, after int64, limit int) ([]store.Entry, error) {
	if after == 0 {
		c.computations.Add(1)
		time.Sleep(20 * time.Millisecond)
		if c.fail.Load() {
			return nil, errInjected
		}
	}
	return c.Store.Entries(ctx, after, limit)
}

func TestStatsCache(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{SQLitePath: filepath.Join(t.TempDir(), "probity.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	cs := &countingStore{Store: st}
	var mu sync.Mutex
	now := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	s := &site{st: cs, now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }}
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }

	// A failed computation is not cached.
	cs.fail.Store(true)
	if _, err := s.statistics(ctx); !errors.Is(err, errInjected) {
		t.Fatalf("statistics with a failing store: %v", err)
	}
	cs.fail.Store(false)
	cs.computations.Store(0)

	// Concurrent requests share one computation.
	results := make([]*statsResult, 8)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			r, err := s.statistics(ctx)
			if err != nil {
				t.Error(err)
			}
			results[i] = r
		})
	}
	wg.Wait()
	if n := cs.computations.Load(); n != 1 {
		t.Fatalf("%d computations for 8 concurrent requests", n)
	}
	first := results[0]
	for _, r := range results {
		if r != first {
			t.Fatal("concurrent requests got different results")
		}
	}
	if !first.ComputedAt.Equal(now) || !first.Report.Now.Equal(now) {
		t.Errorf("computed at %v (cut-off %v), want %v", first.ComputedAt, first.Report.Now, now)
	}

	// Fresh for 10 minutes by the site's clock, recomputed after.
	advance(statsTTL - time.Second)
	if r, err := s.statistics(ctx); err != nil || r.ComputedAt != first.ComputedAt || cs.computations.Load() != 1 {
		t.Fatalf("within 10 minutes: %v, computed at %v, %d computations", err, r.ComputedAt, cs.computations.Load())
	}
	advance(time.Second)
	r, err := s.statistics(ctx)
	if err != nil || !r.ComputedAt.Equal(first.ComputedAt.Add(statsTTL)) || cs.computations.Load() != 2 {
		t.Fatalf("after 10 minutes: %v, computed at %v, %d computations", err, r.ComputedAt, cs.computations.Load())
	}

	// A request that gives up waiting gets its context's error.
	s.stats.mu.Lock()
	s.stats.cur, s.stats.running = nil, make(chan struct{})
	s.stats.mu.Unlock()
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.statistics(cctx); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled waiter: %v", err)
	}
}

// TestStatsTablesMatchMarkdown holds the page's tables to Report.Markdown: every
// table but the scope (a sentence in Markdown) has a heading there, and each row's
// values appear there, formatted alike, as a table row.
func TestStatsTablesMatchMarkdown(t *testing.T) {
	now := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	part := func(n int) stats.Part { return stats.Part{Count: n} }
	rep := &stats.Report{
		Now:   now,
		Scope: stats.Scope{WithReads: 12345, ExcludedClaimed: 12, ExcludedPaginated: 3, Eligible: 12330, ReadTwice: 11000},
		Summary: stats.Summary{ReadTwice: 11000, Changed: part(1234), Changes: 4321, NamesAdded: 2222, NamesRemoved: 1111,
			SingleNameChanges: 999, MedianNamesPerChange: 1.25, EndedMore: 700, EndedFewer: 300, EndedSame: 234, ReturnsToEarlier: 55,
			MedianObservedDays: 1, MaxObservedDays: 88.46},
		FirstDays:        []stats.FirstDays{{Days: 7, Servers: 9000, Changed: part(1)}, {Days: 14, Servers: 8000, Changed: part(7999)}},
		ChangesPerServer: stats.ChangesPerServer{Servers: 11000, Zero: 9766, One: 800, Two: 200, ThreeToFive: 150, SixToTen: 60, OverTen: 24, Frequent: part(234), FrequentChanges: part(2000), MaxChanges: 77, ObservedDays: 123456.7, DaysPerChange: 28.6},
		ChangeTypes:      stats.ChangeTypes{Changes: 4321, OnlyAdded: part(2000), OnlyRemoved: part(1000), Both: part(1300), DuplicatesOnly: part(21), WithRemoved: part(2300)},
		ByToolCount:      []stats.ToolCountRow{{MinTools: 0, MaxTools: 5, Servers: 5000, Changed: part(250)}, {MinTools: 51, Servers: 40, Changed: part(13)}},
		Intervals:        stats.Intervals{Servers: 434, Intervals: 3000, MedianHours: 30.4, LowerQuartileHours: 5, UpperQuartileHours: 200, Within12h: part(1000)},
		NamesVsSurface:   stats.NamesVsSurface{NamesChanged: stats.ServerChanges{Servers: 1234, Changes: 4321}, NamesNeverChanged: stats.ServerChanges{Servers: 456, Changes: 789}, SurfaceOnly: stats.ServerChanges{Servers: 1500, Changes: 6000}},
		Dataset:          stats.Dataset{Endpoints: 6000, WithRecentRound: 5900, SignedFull: part(4000), SignedAuthRequired: part(1000), Unsigned: part(899), OtherCategory: part(1), NoHandshake: 500, NoTools: 300, Blocked: 90, OtherReason: 9},
		Drift: []stats.DriftWindow{{Days: 7, From: now.AddDate(0, 0, -7), To: now, Servers: 3000, AnyChange: part(300), ToolsAddedOrRemoved: part(150),
			SchemaChangedNamesSame: part(100), DescriptionOnly: part(50), Breaking: part(3)}},
		DriftActivity:    stats.DriftActivity{Days: 30, From: now.AddDate(0, 0, -30), To: now, ServersRead: 3100, ServersChanged: 310, ChangedLists: 900, ServersOverTen: 4, OverTenLists: part(120), ReturnsToEarlier: 17},
		ProtocolVersions: stats.ProtocolVersions{Known: []string{"2025-06-18"}, Servers: 4500, Versions: []stats.VersionCount{{Version: "2025-06-18", Part: part(4000)}, {Version: stats.OtherVersion, Part: part(500)}}, NoVersion: 1400, Blocked: 90, AuthRequired: 1000, NoHandshake: 300, Other: 10},
		HandshakePaths:   stats.HandshakePaths{Paths: []stats.PathRow{{Method: "initialize", Proposed: "2025-06-18", Answered: 4500, Same: 4000, Older: 450, Newer: 30, Unrecognized: 20}, {Answered: 7, Same: 7}}, Total: stats.PathRow{Answered: 4507, Same: 4007, Older: 450, Newer: 30, Unrecognized: 20}, MostCommonOlder: "2025-03-26", MostCommonOlderCount: 400},
		Login: stats.Login{NotRecorded: 3, Unauthorized: 2182, AtHandshakeOrToolsList: part(1916), SignedAuthRequired: 1898, UnsignedNoTools: 17, Blocked: 1,
			OnlyToolsCall: part(266), OnlyToolsCallSignedFull: 266, WithChallenge: 2150, WithMetadataURL: part(2011), MetadataConsistent: 1997,
			ScopeContradiction: 10, MetadataHTTPError: 4, MetadataOther: []stats.ReasonCount{{Reason: "resource_mismatch", Count: 2}},
			WithoutMetadataURL: part(139), WithoutChallenge: 32},
		Uptime: stats.Uptime{From: "2026-11-01", To: "2026-11-30", MinDays: 7, TooFewDays: 11, Groups: []stats.UptimeRow{
			{Group: stats.SignedFull, Servers: 4000, Pct100: part(3000), Pct95To99: 600, Pct80To94: 250, Pct50To79: 100, Below50: 50},
			{Group: stats.GroupAll, Servers: 5800, Pct100: part(4000), Pct95To99: 900, Pct80To94: 500, Pct50To79: 250, Below50: 150}}},
		Series: stats.Series{From: "2026-11-02", To: "2026-12-01", Versions: []string{"2025-06-18", stats.OtherVersion},
			Days: []stats.SeriesDay{
				{Day: "2026-11-30", Changes: 2, Probed: 10, Changed: stats.Part{Count: 1, Share: 0.1}, Versions: []int{8, 1}},
				{Day: "2026-12-01", Changes: 5, Probed: 12, Changed: stats.Part{Count: 3, Share: 0.25}, Versions: []int{9, 2}}},
			Uptime: stats.UptimeHistogram{From: "2026-11-02", To: "2026-12-01", Servers: 12, Bins: []stats.UptimeBin{
				{Min: 100, Max: 100, Part: part(9)}, {Min: 95, Max: 99, Part: part(2)}, {Min: 80, Max: 94}, {Min: 50, Max: 79, Part: part(1)}, {Max: 49}}}},
	}
	md := rep.Markdown()
	page := statsPageOf(rep, now)
	tables := 0
	for _, sec := range page.Sections {
		if !strings.Contains(md, "\n## "+sec.Title+"\n") {
			t.Errorf("section %q is not in the Markdown", sec.Title)
		}
		for _, tb := range sec.Tables {
			tables++
			if tb.ID == "scope" {
				continue
			}
			if !strings.Contains(md, "\n### "+tb.Title+"\n") {
				t.Errorf("table %q is not in the Markdown", tb.Title)
			}
			if !strings.Contains(md, "| "+strings.Join(tb.Head, " | ")+" |") {
				t.Errorf("table %q: head %q is not the Markdown's", tb.Title, tb.Head)
			}
			for _, row := range tb.Rows {
				if len(row) != len(tb.Head) {
					t.Errorf("table %q: row %q has %d cells for %d columns", tb.Title, row, len(row), len(tb.Head))
				}
				if cells := "| " + strings.Join(row[1:], " | ") + " |\n"; !strings.Contains(md, cells) {
					t.Errorf("table %q: row %q is not in the Markdown", tb.Title, row)
				}
			}
		}
	}
	// The charts' tables are the series' tables of the Markdown.
	for _, c := range page.Charts {
		tables++
		if !strings.Contains(md, "\n### "+c.Title+"\n") || !strings.Contains(md, "| "+strings.Join(c.Table.Head, " | ")+" |") {
			t.Errorf("chart %q: its table (head %q) is not in the Markdown", c.Title, c.Table.Head)
		}
		for _, row := range c.Table.Rows {
			if !strings.Contains(md, "| "+strings.Join(row, " | ")+" |\n") {
				t.Errorf("chart %q: row %q is not in the Markdown", c.Title, row)
			}
		}
	}
	if want := strings.Count(md, "\n### ") + 1; tables != want {
		t.Errorf("%d tables and charts on the page, want the Markdown's %d and the scope", tables, want)
	}
	// The charts: one per series, drawn from the series' numbers.
	if len(page.Charts) != 4 {
		t.Fatalf("%d charts", len(page.Charts))
	}
	for _, c := range page.Charts {
		if c.Empty != "" {
			t.Errorf("%s is empty: %s", c.ID, c.Empty)
		}
		for _, b := range c.Bars {
			if b.Y < c.Top || b.H < 0 || b.Y+b.H > c.Bottom || b.X < c.Left || b.X+b.W > c.Right {
				t.Errorf("%s: bar %+v outside the plot", c.ID, b)
			}
		}
	}
	changes, share, uptime, versions := page.Charts[0], page.Charts[1], page.Charts[2], page.Charts[3]
	if len(changes.Bars) != 2 || changes.Bars[1].H != changes.Bottom-changes.Top || changes.Bars[1].Title != "2026-12-01: 5 changes" {
		t.Errorf("changes per day: %+v", changes.Bars)
	}
	if want := [][]string{{"2026-11-30", "10", "1", "10.0%"}, {"2026-12-01", "12", "3", "25.0%"}}; !reflect.DeepEqual(share.Table.Rows, want) {
		t.Errorf("share changed: rows %q", share.Table.Rows)
	}
	if len(share.Dots) != 2 || share.Dots[1].Title != "2026-12-01: 3 of 12 servers (25.0%)" {
		t.Errorf("share changed: dots %+v", share.Dots)
	}
	if len(uptime.Bars) != 5 || uptime.Bars[0].H != 180 || // 9 of a scale to 10 !reflect.DeepEqual(uptime.Table.Rows[0], []string{"100%", "9", "75.0%"}) ||
		!reflect.DeepEqual(uptime.Table.Rows[4], []string{"Below 50%", "0", "0.0%"}) {
		t.Errorf("uptime: bars %+v, rows %q", uptime.Bars, uptime.Table.Rows)
	}
	if len(versions.Legend) != 2 || versions.Legend[0].Text != "2025-06-18" || versions.Legend[1].Text != "Other" || len(versions.Bars) != 4 {
		t.Errorf("versions: legend %+v, bars %+v", versions.Legend, versions.Bars)
	}
}

// TestOpenAPIDescribesRoutes holds openapi.json to the router: the same paths under
// /api/v1, each path parameter declared, a JSON 200 answer for each, and every $ref
// resolving.
func TestOpenAPIDescribesRoutes(t *testing.T) {
	var doc struct {
		OpenAPI string `json:"openapi"`
		Servers []struct {
			URL string `json:"url"`
		} `json:"servers"`
		Paths map[string]map[string]struct {
			Parameters []struct {
				Name, In string
			} `json:"parameters"`
			Responses map[string]struct {
				Content map[string]any `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1.") || len(doc.Servers) != 1 || doc.Servers[0].URL != "/api/v1" {
		t.Fatalf("openapi %q, servers %+v", doc.OpenAPI, doc.Servers)
	}
	rt, err := (&handlers{}).router(nil)
	if err != nil {
		t.Fatal(err)
	}
	engine, ok := rt.(*gin.Engine)
	if !ok {
		t.Fatalf("the router is a %T", rt)
	}
	var routes []string
	for _, r := range engine.Routes() {
		if p, ok := strings.CutPrefix(r.Path, "/api/v1"); ok && r.Method == "GET" {
			routes = append(routes, regexp.MustCompile(`:([a-z]+)`).ReplaceAllString(p, "{$1}"))
		}
	}
	var documented []string
	for p, ops := range doc.Paths {
		documented = append(documented, p)
		if len(ops) != 1 || ops["get"].Responses == nil {
			t.Errorf("%s: operations %v, want get only", p, ops)
		}
		op := ops["get"]
		if _, ok := op.Responses["200"].Content["application/json"]; !ok {
			t.Errorf("%s: no JSON 200 answer", p)
		}
		for _, m := range regexp.MustCompile(`\{([a-z]+)\}`).FindAllStringSubmatch(p, -1) {
			if !slices.ContainsFunc(op.Parameters, func(q struct{ Name, In string }) bool { return q.Name == m[1] && q.In == "path" }) {
				t.Errorf("%s: path parameter %s not declared", p, m[1])
			}
		}
	}
	slices.Sort(routes)
	slices.Sort(documented)
	if !slices.Equal(routes, documented) {
		t.Errorf("router has %q under /api/v1, openapi.json %q", routes, documented)
	}
	for _, m := range regexp.MustCompile(`"\$ref": "#/components/schemas/([A-Za-z]+)"`).FindAllStringSubmatch(string(openAPIDoc), -1) {
		if _, ok := doc.Components.Schemas[m[1]]; !ok {
			t.Errorf("$ref to missing schema %s", m[1])
		}
	}
}
