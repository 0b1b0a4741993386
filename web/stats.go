package web

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/history/stats"
	"github.com/probity-dev/probity/web/chart"
)

// The statistics (/stats, /stats.json, /api/v1/stats) are computed over the whole
// store (history.LoadStats, then stats.Compute), which is far too slow for a request
// each: the site keeps the newest result for statsTTL. One computation runs at a time;
// the requests that arrive meanwhile wait for its result instead of starting their own.
const (
	statsTTL = 10 * time.Minute
	// statsTimeout bounds one computation. It does not end when the request that
	// started it does: the requests waiting for it still want the result.
	statsTimeout = 2 * time.Minute
)

// statsCache holds the newest computed statistics. Its zero value is ready to use.
type statsCache struct {
	mu      sync.Mutex
	cur     *statsResult
	running chan struct{} // closed when the running computation ends; nil when none
}

// statsResult is one computation: the report, its JSON and its page, built once.
type statsResult struct {
	Report     *stats.Report
	JSON       []byte
	Page       *statsPage
	ComputedAt time.Time
}

// statistics returns the cached statistics, computing them when there are none or
// they are statsTTL old (by the site's clock). An error is not cached: the next
// request tries again.
func (s *site) statistics(ctx context.Context) (*statsResult, error) {
	c := &s.stats
	for {
		c.mu.Lock()
		if c.cur != nil && s.now().Sub(c.cur.ComputedAt) < statsTTL {
			r := c.cur
			c.mu.Unlock()
			return r, nil
		}
		if wait := c.running; wait != nil {
			c.mu.Unlock()
			select {
			case <-wait:
				continue // fresh now, or failed: then this request tries itself
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		done := make(chan struct{})
		c.running = done
		c.mu.Unlock()

		r, err := s.computeStats(ctx)
		c.mu.Lock()
		c.running = nil
		if err == nil {
			c.cur = r
		}
		c.mu.Unlock()
		close(done)
		return r, err
	}
}

// computeStats computes the report with the site's clock as the cut-off.
func (s *site) computeStats(ctx context.Context) (*statsResult, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), statsTimeout)
	defer cancel()
	now := s.now().UTC()
	opt := stats.Options{Now: now}
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	servers, err := history.LoadStats(ctx, s.st, opt)
	if err != nil {
		return nil, fmt.Errorf("couldn't load the statistics: %w", err)
	}
	rep := stats.Compute(servers, opt)
	b, err := marshalJSON(rep)
	if err != nil {
		return nil, err
	}
	return &statsResult{Report: rep, JSON: b, Page: statsPageOf(rep, now), ComputedAt: now}, nil
}

// --- Handlers ---

func (h *handlers) statsPage(c *gin.Context) {
	r, err := h.site.statistics(c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	h.render(c, http.StatusOK, "stats", r.Page)
}

// statsJSON serves /stats.json and /api/v1/stats: the report as JSON; its "now" is
// when it was computed.
func (h *handlers) statsJSON(c *gin.Context) {
	r, err := h.site.statistics(c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	c.Header("Last-Modified", r.ComputedAt.UTC().Format(http.TimeFormat))
	c.Data(http.StatusOK, "application/json; charset=utf-8", r.JSON)
}

// --- The page ---

// statsPage is the view of /stats: the charts of the report's series, then every
// table of the report, in the order and with the headings of Report.Markdown.
type statsPage struct {
	ComputedAt time.Time
	// Compares says what the drift tables compare (stats.DigestNote).
	Compares string
	// From and To are the charts' window (Series.From, Series.To).
	From, To string
	Charts   []statsChart
	Sections []statsSection
}

type statsSection struct {
	ID, Title, Intro string
	Tables           []statsTable
}

// statsTable is one table: the first cell of each row is its label (a row header).
type statsTable struct {
	ID, Title  string
	Definition string // one line: what the table counts
	Head       []string
	Rows       [][]string
	Notes      []string
}

// statsPageOf lays out rep. Numbers are formatted as Report.Markdown formats them
// (stats_tables_test.go holds the two together).
func statsPageOf(rep *stats.Report, computedAt time.Time) *statsPage {
	p := &statsPage{ComputedAt: computedAt, Compares: stats.DigestNote}

	sc, s := rep.Scope, rep.Summary
	toolsets := statsSection{ID: "toolsets", Title: "How often toolsets change",
		Intro: "A read is a successful credential-free tools/list answer; a server's toolset is the sorted list of its tool names; a change is two adjacent reads of the same server with different toolsets, and the first read is not a change."}
	toolsets.Tables = append(toolsets.Tables, statsTable{
		ID: "scope", Title: "Scope",
		Definition: "The servers the toolset tables count: claimed servers (read more often than every 12 h) and paginated ones are left out. " + stats.PaginatedNote,
		Head:       []string{"Servers", "Count"},
		Rows: [][]string{
			{"With at least one read", stats.Count(sc.WithReads)},
			{"Left out: claimed", stats.Count(sc.ExcludedClaimed)},
			{"Left out: paginated", stats.Count(sc.ExcludedPaginated)},
			{"Remaining", stats.Count(sc.Eligible)},
			{"Remaining, read at least twice", stats.Count(sc.ReadTwice)},
		},
	}, statsTable{
		ID: "summary", Title: "Summary",
		Definition: "Over the servers read at least twice; new and disappeared names are the names on only one side of a change, and a server's observation window runs from its first read to its last.",
		Head:       []string{"Measure", "Value"},
		Rows: [][]string{
			{"Servers read at least twice", stats.Count(s.ReadTwice)},
			{"Changed at least once", stats.CountShare(s.Changed.Count, s.ReadTwice, 0)},
			{"Changes", stats.Count(s.Changes)},
			{"New names", stats.Count(s.NamesAdded)},
			{"Disappeared names", stats.Count(s.NamesRemoved)},
			{"Changes touching exactly one name", stats.Count(s.SingleNameChanges)},
			{"Median names per change", stats.Decimal(s.MedianNamesPerChange)},
			{"Changed servers ending with more tools than at their first read", stats.Count(s.EndedMore)},
			{"Changed servers ending with fewer tools", stats.Count(s.EndedFewer)},
			{"Changed servers ending with as many tools", stats.Count(s.EndedSame)},
			{"Changes back to an earlier toolset of the same server", stats.Count(s.ReturnsToEarlier)},
			{"Median observation window", stats.Days(s.MedianObservedDays)},
			{"Longest observation window", stats.Days(s.MaxObservedDays)},
		},
	})

	first := statsTable{ID: "first-days", Title: "Changed within the first days",
		Definition: "Servers observed at least N days, and those with a change read no later than N days after their first read; each row is a different group of servers.",
		Head:       []string{"Observed at least", "Servers", "Changed in that time", "Share"}}
	for _, f := range rep.FirstDays {
		first.Rows = append(first.Rows, []string{fmt.Sprintf("%d days", f.Days), stats.Count(f.Servers), stats.Count(f.Changed.Count), stats.Percent(f.Changed.Count, f.Servers, 0)})
	}

	h := rep.ChangesPerServer
	perServer := statsTable{ID: "changes-per-server", Title: "Changes per server",
		Definition: "Servers read at least twice, by their number of changes.",
		Head:       []string{"Changes per server", "Servers"},
		Rows: [][]string{{"0", stats.Count(h.Zero)}, {"1", stats.Count(h.One)}, {"2", stats.Count(h.Two)},
			{"3 to 5", stats.Count(h.ThreeToFive)}, {"6 to 10", stats.Count(h.SixToTen)}, {"more than 10", stats.Count(h.OverTen)}},
	}
	note := fmt.Sprintf("%s changed three times or more: %s of %s, with %s of the %s changes (%s). The most changes of one server: %s.",
		stats.Servers(h.Frequent.Count), stats.Percent(h.Frequent.Count, h.Servers, 1), stats.Servers(h.Servers),
		stats.Count(h.FrequentChanges.Count), stats.Count(s.Changes), stats.Percent(h.FrequentChanges.Count, s.Changes, 0), stats.Count(h.MaxChanges))
	if s.Changes > 0 {
		note += fmt.Sprintf(" Averaged over %s server-days of observation, a server changed once every %s.",
			stats.Count(int(math.Round(h.ObservedDays))), stats.Plural(int(math.Round(h.DaysPerChange)), "day", "days"))
	}
	perServer.Notes = []string{note}

	t := rep.ChangeTypes
	types := statsTable{ID: "change-types", Title: "Change types",
		Definition: "Each change by the names present on only one side of it.",
		Head:       []string{"Change type", "Changes", "Share"},
		Rows: [][]string{
			shareRow("Only names added", t.OnlyAdded.Count, t.Changes, 0),
			shareRow("Only names removed", t.OnlyRemoved.Count, t.Changes, 0),
			shareRow("Names added and removed", t.Both.Count, t.Changes, 0),
		},
		Notes: []string{fmt.Sprintf("%s of the %s changes (%s) removed a name.", stats.Count(t.WithRemoved.Count), stats.Count(t.Changes), stats.Percent(t.WithRemoved.Count, t.Changes, 0)),
			t.DuplicateCheck()},
	}
	if t.DuplicatesOnly.Count > 0 {
		types.Rows = append(types.Rows, shareRow("Only a repeated name came or went", t.DuplicatesOnly.Count, t.Changes, 0))
	}

	byCount := statsTable{ID: "by-tool-count", Title: "By tool count at the first read",
		Definition: "Servers observed at least 14 days, by their number of tools at the first read, and those with a change within their first 14 days.",
		Head:       []string{"Tools at the first read", "Servers", "Changed within 14 days", "Share"}}
	for _, row := range rep.ByToolCount {
		label := fmt.Sprintf("%d to %d", row.MinTools, row.MaxTools)
		if row.MaxTools == 0 {
			label = fmt.Sprintf("%d or more", row.MinTools)
		}
		byCount.Rows = append(byCount.Rows, []string{label, stats.Count(row.Servers), stats.Count(row.Changed.Count), stats.Percent(row.Changed.Count, row.Servers, 0)})
	}

	iv := rep.Intervals
	intervals := statsTable{ID: "intervals", Title: "Intervals between changes",
		Definition: fmt.Sprintf("Times between adjacent changes of the %s that changed at least twice; quartiles interpolated between closest ranks.", stats.Servers(iv.Servers)),
		Head:       []string{"Intervals", "Median", "Lower quartile", "Upper quartile", "At most 12 h"},
		Rows: [][]string{{stats.Count(iv.Intervals), stats.Hours(iv.MedianHours), stats.Hours(iv.LowerQuartileHours),
			stats.Hours(iv.UpperQuartileHours), stats.CountShare(iv.Within12h.Count, iv.Intervals, 0)}},
	}

	nv := rep.NamesVsSurface
	names := statsTable{ID: "names-vs-surface", Title: "Names versus descriptions and schemas",
		Definition: "Only adjacent reads that both carry a surface digest (over names, descriptions and input schemas) are compared.",
		Head:       []string{"Compared reads", "Servers", "Changes"},
		Rows: [][]string{
			{"Names changed", stats.Count(nv.NamesChanged.Servers), stats.Count(nv.NamesChanged.Changes)},
			{"Names never changed, descriptions or schemas did", stats.Count(nv.NamesNeverChanged.Servers), stats.Count(nv.NamesNeverChanged.Changes)},
			{"Same names, other descriptions or schemas (every server)", stats.Count(nv.SurfaceOnly.Servers), stats.Count(nv.SurfaceOnly.Changes)},
		},
	}
	toolsets.Tables = append(toolsets.Tables, first, perServer, types, byCount, intervals, names, dailyTable(rep.DailyChanges))

	monthly := statsSection{ID: "monthly", Title: "Monthly report"}
	ds := rep.Dataset
	dataset := statsTable{ID: "dataset", Title: "Dataset",
		Definition: fmt.Sprintf("Every entry's latest round within the 7 days before the cut-off: %s of %s entries have one.", stats.Count(ds.WithRecentRound), stats.Count(ds.Endpoints)),
		Head:       []string{"Latest round", "Entries", "Share"},
		Rows: [][]string{
			shareRow("Signed, full coverage", ds.SignedFull.Count, ds.WithRecentRound, 1),
			shareRow("Signed, auth required", ds.SignedAuthRequired.Count, ds.WithRecentRound, 1),
			shareRow("Unsigned", ds.Unsigned.Count, ds.WithRecentRound, 1),
		},
	}
	if ds.OtherCategory.Count > 0 {
		dataset.Rows = append(dataset.Rows, shareRow("Another category", ds.OtherCategory.Count, ds.WithRecentRound, 1))
	}
	reasons := fmt.Sprintf("The %s unsigned rounds by reason: no MCP handshake %s; handshake, but no tool list to fingerprint %s; blocked by the egress guard %s",
		stats.Count(ds.Unsigned.Count), stats.Count(ds.NoHandshake), stats.Count(ds.NoTools), stats.Count(ds.Blocked))
	if ds.OtherReason > 0 {
		reasons += "; another reason " + stats.Count(ds.OtherReason)
	}
	dataset.Notes = []string{reasons + "."}

	drift := statsTable{ID: "drift", Title: "Drift",
		Definition: "Servers neither claimed nor paginated with a read at or before the window start and one inside it; the three middle columns are exclusive, and potentially breaking means a tool gone, a parameter removed or retyped, or a parameter newly required.",
		Head:       []string{"Window", "Servers", "Any change", "Tools added or removed", "Schema changed, names same", "Description only", "Potentially breaking"}}
	for _, d := range rep.Drift {
		drift.Rows = append(drift.Rows, []string{
			fmt.Sprintf("%d days (%s – %s)", d.Days, d.From.Format(time.DateOnly), d.To.Format(time.DateOnly)), stats.Count(d.Servers),
			stats.CountShare(d.AnyChange.Count, d.Servers, 1), stats.CountShare(d.ToolsAddedOrRemoved.Count, d.Servers, 1),
			stats.CountShare(d.SchemaChangedNamesSame.Count, d.Servers, 1), stats.CountShare(d.DescriptionOnly.Count, d.Servers, 1),
			stats.CountShare(d.Breaking.Count, d.Servers, 1),
		})
	}

	a := rep.DriftActivity
	activity := statsTable{ID: "drift-activity", Title: fmt.Sprintf("Changed lists in the last %d days", a.Days),
		Definition: fmt.Sprintf("Every server neither claimed nor paginated with a read from %s to %s; a changed list is a read whose names, descriptions or input schemas differ from the previous read's.",
			a.From.Format(time.DateOnly), a.To.Format(time.DateOnly)),
		Head: []string{"Measure", "Value"},
		Rows: [][]string{
			{"Servers read", stats.Count(a.ServersRead)},
			{"Servers with a changed list", stats.Count(a.ServersChanged)},
			{"Changed lists", stats.Count(a.ChangedLists)},
			{"Servers with more than 10 changed lists", stats.Count(a.ServersOverTen)},
			{"Their changed lists", stats.CountShare(a.OverTenLists.Count, a.ChangedLists, 0)},
			{"Changed lists equal to an earlier list of the same server", stats.Count(a.ReturnsToEarlier)},
		},
	}

	pv := rep.ProtocolVersions
	versions := statsTable{ID: "protocol-versions", Title: "Protocol versions",
		Definition: fmt.Sprintf("Entries whose latest round (within 7 days) completed the handshake, by the protocol version they answered with; versions other than %s are counted as other.", strings.Join(pv.Known, ", ")),
		Head:       []string{"Version", "Servers", "Share"}}
	for _, v := range pv.Versions {
		label := v.Version
		if label == stats.OtherVersion {
			label = "Other"
		}
		versions.Rows = append(versions.Rows, shareRow(visibleLine(label), v.Count, pv.Servers, 1))
	}
	noVersion := fmt.Sprintf("%s completed the handshake; %s did not: authentication required %s; no handshake %s; blocked by the egress guard %s",
		stats.Plural(pv.Servers, "entry", "entries"), stats.Count(pv.NoVersion), stats.Count(pv.AuthRequired), stats.Count(pv.NoHandshake), stats.Count(pv.Blocked))
	if pv.Other > 0 {
		noVersion += "; another reason " + stats.Count(pv.Other)
	}
	versions.Notes = []string{noVersion + "."}

	hp := rep.HandshakePaths
	paths := statsTable{ID: "handshake-paths", Title: "Handshake paths",
		Definition: "The same entries by the handshake method that answered and the version Probity proposed on it; versions compare as dates, and unrecognized ones are not YYYY-MM-DD dates.",
		Head:       []string{"Path", "Answered", "With our proposed version", "Older", "Newer", "Unrecognized"}}
	pathRow := func(label string, row stats.PathRow) []string {
		return []string{label, stats.Count(row.Answered), stats.Count(row.Same), stats.Count(row.Older), stats.Count(row.Newer), stats.Count(row.Unrecognized)}
	}
	for _, row := range hp.Paths {
		paths.Rows = append(paths.Rows, pathRow(stats.PathLabel(row, visibleLine, visibleLine), row))
	}
	paths.Rows = append(paths.Rows, pathRow("Total", hp.Total))
	older := fmt.Sprintf("%s (%s) answered with an older version than we proposed", stats.Servers(hp.Total.Older), stats.Percent(hp.Total.Older, hp.Total.Answered, 1))
	if hp.MostCommonOlder != "" {
		older += fmt.Sprintf(", most often %s (%s)", visibleLine(hp.MostCommonOlder), stats.Count(hp.MostCommonOlderCount))
	}
	paths.Notes = []string{older + "."}

	u := rep.Uptime
	uptime := statsTable{ID: "uptime", Title: "Uptime",
		Definition: fmt.Sprintf("Entries with a latest round (within 7 days) and at least %s from %s to %s, by that round; a server's rate of online days to counted days is rounded to an integer percent, then binned.",
			stats.Plural(u.MinDays, "counted day", "counted days"), u.From, u.To),
		Head:  []string{"Group (latest round)", "Servers", "100%", "95–99%", "80–94%", "50–79%", "Below 50%"},
		Notes: []string{stats.Plural(u.TooFewDays, "entry", "entries") + " had fewer counted days."},
	}
	for _, g := range u.Groups {
		uptime.Rows = append(uptime.Rows, []string{uptimeGroupLabel(g.Group), stats.Count(g.Servers), stats.CountShare(g.Pct100.Count, g.Servers, 1),
			stats.Count(g.Pct95To99), stats.Count(g.Pct80To94), stats.Count(g.Pct50To79), stats.Count(g.Below50)})
	}
	monthly.Tables = append([]statsTable{dataset, drift, activity, toolChangesTable(rep.ToolChanges), versions, paths}, loginTables(rep.Login)...)
	monthly.Tables = append(monthly.Tables, uptime)
	p.Sections = []statsSection{toolsets, monthly}

	p.From, p.To, p.Charts = rep.Series.From, rep.Series.To, seriesCharts(rep.Series)
	return p
}

func shareRow(label string, n, of, decimals int) []string {
	return []string{label, stats.Count(n), stats.Percent(n, of, decimals)}
}

// uptimeGroupLabel names an uptime group as Report.Markdown does.
func uptimeGroupLabel(g string) string {
	if l := stats.GroupLabel(g); l != "" {
		return l
	}
	return visibleLine(g)
}

// --- Charts ---

// statsChart is one chart of the page, laid out by package chart and written as an
// inline <svg> by the "chart" template, with its numbers as a table; or, when there
// is nothing to draw yet, the sentence that says what will appear and when (Empty).
type statsChart struct {
	chart.Chart
	Empty string
}

// statsCadence is what the empty charts say of when data comes: serve's default
// cadence and confirmation (the site does not know the cadence it runs with).
const statsCadence = "Probity reads every server every 3 h by default, and confirms a difference with a second read a minute later."

// seriesCharts lays out the four charts of rep.Series, each with its table of
// stats.Series.Tables (title, definition and numbers as Markdown has them): changes
// per day, the share of servers changed, the uptime distribution and the protocol
// versions per day.
func seriesCharts(sr stats.Series) []statsChart {
	tables := sr.Tables()
	var days []chart.Category
	var changes, share []float64
	totalChanges, probedDays, changedDays, versionDays := 0, 0, 0, 0
	for _, d := range sr.Days {
		tick := d.Day
		if t, err := time.Parse(time.DateOnly, d.Day); err == nil {
			tick = t.Format("Jan 2")
		}
		days = append(days, chart.Category{Label: d.Day, Tick: tick})
		changes = append(changes, float64(d.Changes))
		share = append(share, 100*d.Changed.Share)
		totalChanges += d.Changes
		if d.Probed > 0 {
			probedDays++
		}
		if d.Changed.Count > 0 {
			changedDays++
		}
		for _, n := range d.Versions {
			if n > 0 {
				versionDays++
				break
			}
		}
	}
	dayAxis := tables[0].Head[0]
	percent := func(v float64) string { return stats.Decimal(v) + "%" }
	// lay lays out the chart of table t, with t's numbers as its table.
	lay := func(t stats.SeriesTable, spec chart.Spec) statsChart {
		spec.ID, spec.Title, spec.Desc = t.ID, t.Title, t.Definition
		c := statsChart{Chart: chart.Lay(spec)}
		c.Table = chart.Table{Head: t.Head, Rows: t.Rows}
		return c
	}

	ch := lay(tables[0], chart.Spec{Kind: chart.Bars, Integer: true, XTitle: dayAxis, YTitle: "Changes", Categories: days, Format: countFormat,
		Series: []chart.Series{{Name: "Changes", Values: changes}},
		Value:  func(ci, _ int, _ float64) string { return stats.Plural(sr.Days[ci].Changes, "change", "changes") }})
	ch.Desc += fmt.Sprintf(" %s in all.", stats.Plural(totalChanges, "change", "changes"))
	if totalChanges == 0 {
		ch.Empty = "Changes per day appear after the first confirmed change. " + statsCadence
	}

	sh := lay(tables[1], chart.Spec{Kind: chart.Line, MaxY: 100, XTitle: dayAxis, YTitle: "% of probed servers", Categories: days, Format: percent,
		Series: []chart.Series{{Name: "Servers changed", Values: share}},
		Value: func(ci, _ int, _ float64) string {
			d := sr.Days[ci]
			return fmt.Sprintf("%s of %s (%s)", stats.Count(d.Changed.Count), stats.Servers(d.Probed), stats.Percent(d.Changed.Count, d.Probed, 1))
		}})
	switch {
	case probedDays == 0:
		sh.Empty = "The share of servers changed appears after the first round. " + statsCadence
	case changedDays == 0:
		sh.Empty = fmt.Sprintf("No probed server changed from %s to %s: the share of servers changed appears after the first confirmed change. %s", sr.From, sr.To, statsCadence)
	}

	u := sr.Uptime
	var bins []chart.Category
	var counts []float64
	for _, b := range u.Bins {
		bins = append(bins, chart.Category{Label: b.Label()})
		counts = append(counts, float64(b.Count))
	}
	up := lay(tables[2], chart.Spec{Kind: chart.Bars, Integer: true, XTitle: "Uptime (% of counted days online)", YTitle: "Servers",
		Categories: bins, Format: countFormat, Series: []chart.Series{{Name: "Servers", Values: counts}},
		Value: func(ci, _ int, _ float64) string {
			return fmt.Sprintf("%s (%s)", stats.Servers(u.Bins[ci].Count), stats.Percent(u.Bins[ci].Count, u.Servers, 1))
		}})
	if u.Servers == 0 {
		up.Empty = "The uptime distribution appears after the first round: each server's days online of its counted days over the last 30 days, today included. " + statsCadence
	}

	// The versions are server text: shown visible, on one line.
	vt := tables[3]
	vt.Head = slices.Clone(vt.Head)
	var versions []chart.Series
	for i := range sr.Versions {
		vt.Head[i+1] = visibleLine(vt.Head[i+1])
		s := chart.Series{Name: vt.Head[i+1]}
		for _, d := range sr.Days {
			n := 0
			if i < len(d.Versions) {
				n = d.Versions[i]
			}
			s.Values = append(s.Values, float64(n))
		}
		versions = append(versions, s)
	}
	pv := lay(vt, chart.Spec{Kind: chart.Stacked, Integer: true, XTitle: dayAxis, YTitle: "Servers", Categories: days, Format: countFormat, Series: versions,
		Value: func(_, _ int, v float64) string { return stats.Servers(int(v)) }})
	if versionDays == 0 {
		pv.Empty = "Protocol versions appear after the first round that completes a handshake. " + statsCadence
	}
	return []statsChart{ch, sh, up, pv}
}

// countFormat writes a count as the tables do.
func countFormat(v float64) string { return stats.Count(int(math.Round(v))) }
