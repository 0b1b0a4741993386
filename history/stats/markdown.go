package stats

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Markdown renders every table with a heading and a line saying what it counts.
// Counts have thousands separators; shares are integer percents in the toolset tables
// (seed 001) and have one decimal in the monthly-report tables (seed 003).
func (r *Report) Markdown() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	p("# Probity statistics\n\nCut-off: %s.\n\n%s\n", r.Now.Format("2006-01-02 15:04 UTC"), DigestNote)

	sc := r.Scope
	p("\n## How often toolsets change\n\n")
	p("A read is a successful credential-free tools/list answer; a server's toolset is the sorted list of its tool names; a change is two adjacent reads of the same server with different toolsets, and the first read is not a change. ")
	p("Scope: %s with at least one read; excluded %s (read more often than every 12 h) and %s; of the remaining %s, %s read at least twice. %s\n",
		Servers(sc.WithReads), Plural(sc.ExcludedClaimed, "claimed server", "claimed servers"),
		Plural(sc.ExcludedPaginated, "paginated server", "paginated servers"), Count(sc.Eligible), Count(sc.ReadTwice), PaginatedNote)

	s := r.Summary
	p("\n### Summary\n\nOver the servers read at least twice. New and disappeared names are the names on only one side of a change; a server's observation window runs from its first read to its last.\n\n")
	p("| Measure | Value |\n|---|---|\n")
	p("| Servers read at least twice | %s |\n", Count(s.ReadTwice))
	p("| Changed at least once | %s |\n", CountShare(s.Changed.Count, s.ReadTwice, 0))
	p("| Changes | %s |\n", Count(s.Changes))
	p("| New names | %s |\n", Count(s.NamesAdded))
	p("| Disappeared names | %s |\n", Count(s.NamesRemoved))
	p("| Changes touching exactly one name | %s |\n", Count(s.SingleNameChanges))
	p("| Median names per change | %s |\n", Decimal(s.MedianNamesPerChange))
	p("| Changed servers ending with more tools than at their first read | %s |\n", Count(s.EndedMore))
	p("| Changed servers ending with fewer tools | %s |\n", Count(s.EndedFewer))
	p("| Changed servers ending with as many tools | %s |\n", Count(s.EndedSame))
	p("| Changes back to an earlier toolset of the same server | %s |\n", Count(s.ReturnsToEarlier))
	p("| Median observation window | %s |\n", Days(s.MedianObservedDays))
	p("| Longest observation window | %s |\n", Days(s.MaxObservedDays))

	p("\n### Changed within the first days\n\nServers observed at least N days, and those with a change read no later than N days after their first read. Each row is a different group of servers.\n\n")
	p("| Observed at least | Servers | Changed in that time | Share |\n|---|---|---|---|\n")
	for _, f := range r.FirstDays {
		p("| %d days | %s | %s | %s |\n", f.Days, Count(f.Servers), Count(f.Changed.Count), Percent(f.Changed.Count, f.Servers, 0))
	}

	h := r.ChangesPerServer
	p("\n### Changes per server\n\nServers read at least twice, by their number of changes.\n\n")
	p("| Changes per server | Servers |\n|---|---|\n")
	p("| 0 | %s |\n| 1 | %s |\n| 2 | %s |\n| 3 to 5 | %s |\n| 6 to 10 | %s |\n| more than 10 | %s |\n",
		Count(h.Zero), Count(h.One), Count(h.Two), Count(h.ThreeToFive), Count(h.SixToTen), Count(h.OverTen))
	p("\n%s changed three times or more: %s of %s, with %s of the %s changes (%s). The most changes of one server: %s.",
		Servers(h.Frequent.Count), Percent(h.Frequent.Count, h.Servers, 1), Servers(h.Servers),
		Count(h.FrequentChanges.Count), Count(s.Changes), Percent(h.FrequentChanges.Count, s.Changes, 0), Count(h.MaxChanges))
	if s.Changes > 0 {
		p(" Averaged over %s server-days of observation, a server changed once every %s.",
			Count(int(math.Round(h.ObservedDays))), Plural(int(math.Round(h.DaysPerChange)), "day", "days"))
	}
	p("\n")

	t := r.ChangeTypes
	p("\n### Change types\n\nEach change by the names present on only one side of it.\n\n")
	p("| Change type | Changes | Share |\n|---|---|---|\n")
	row3 := func(label string, n, of, decimals int) {
		p("| %s | %s | %s |\n", label, Count(n), Percent(n, of, decimals))
	}
	row3("Only names added", t.OnlyAdded.Count, t.Changes, 0)
	row3("Only names removed", t.OnlyRemoved.Count, t.Changes, 0)
	row3("Names added and removed", t.Both.Count, t.Changes, 0)
	if t.DuplicatesOnly.Count > 0 {
		row3("Only a repeated name came or went", t.DuplicatesOnly.Count, t.Changes, 0)
	}
	p("\n%s of the %s changes (%s) removed a name. %s\n", Count(t.WithRemoved.Count), Count(t.Changes), Percent(t.WithRemoved.Count, t.Changes, 0), t.DuplicateCheck())

	p("\n### By tool count at the first read\n\nServers observed at least 14 days, by their number of tools at the first read, and those with a change within their first 14 days.\n\n")
	p("| Tools at the first read | Servers | Changed within 14 days | Share |\n|---|---|---|---|\n")
	for _, row := range r.ByToolCount {
		label := fmt.Sprintf("%d to %d", row.MinTools, row.MaxTools)
		if row.MaxTools == 0 {
			label = fmt.Sprintf("%d or more", row.MinTools)
		}
		p("| %s | %s | %s | %s |\n", label, Count(row.Servers), Count(row.Changed.Count), Percent(row.Changed.Count, row.Servers, 0))
	}

	iv := r.Intervals
	p("\n### Intervals between changes\n\nTimes between adjacent changes of the %s that changed at least twice; quartiles interpolated between closest ranks.\n\n", Servers(iv.Servers))
	p("| Intervals | Median | Lower quartile | Upper quartile | At most 12 h |\n|---|---|---|---|---|\n")
	p("| %s | %s | %s | %s | %s |\n", Count(iv.Intervals), Hours(iv.MedianHours), Hours(iv.LowerQuartileHours),
		Hours(iv.UpperQuartileHours), CountShare(iv.Within12h.Count, iv.Intervals, 0))

	nv := r.NamesVsSurface
	p("\n### Names versus descriptions and schemas\n\nOnly adjacent reads that both carry a surface digest (over names, descriptions and input schemas) are compared.\n\n")
	p("| Compared reads | Servers | Changes |\n|---|---|---|\n")
	p("| Names changed | %s | %s |\n", Count(nv.NamesChanged.Servers), Count(nv.NamesChanged.Changes))
	p("| Names never changed, descriptions or schemas did | %s | %s |\n", Count(nv.NamesNeverChanged.Servers), Count(nv.NamesNeverChanged.Changes))
	p("| Same names, other descriptions or schemas (every server) | %s | %s |\n", Count(nv.SurfaceOnly.Servers), Count(nv.SurfaceOnly.Changes))
	r.DailyChanges.markdown(p)

	ds := r.Dataset
	p("\n## Monthly report\n\n### Dataset\n\nEvery entry's latest round within the 7 days before the cut-off: %s of %s entries have one.\n\n", Count(ds.WithRecentRound), Count(ds.Endpoints))
	p("| Latest round | Entries | Share |\n|---|---|---|\n")
	row3("Signed, full coverage", ds.SignedFull.Count, ds.WithRecentRound, 1)
	row3("Signed, auth required", ds.SignedAuthRequired.Count, ds.WithRecentRound, 1)
	row3("Unsigned", ds.Unsigned.Count, ds.WithRecentRound, 1)
	if ds.OtherCategory.Count > 0 {
		row3("Another category", ds.OtherCategory.Count, ds.WithRecentRound, 1)
	}
	p("\nThe %s unsigned rounds by reason:\n\n", Count(ds.Unsigned.Count))
	p("- no MCP handshake: %s\n", Count(ds.NoHandshake))
	p("- handshake, but no tool list to fingerprint: %s\n", Count(ds.NoTools))
	p("- blocked by the egress guard: %s\n", Count(ds.Blocked))
	if ds.OtherReason > 0 {
		p("- another reason: %s\n", Count(ds.OtherReason))
	}

	p("\n### Drift\n\nServers neither claimed nor paginated that had a read at or before the window start and at least one read inside the window. A change is a read inside the window whose names, descriptions or input schemas differ from the previous read's. The three middle columns are exclusive: each server is counted in the first that matches. Potentially breaking: a tool gone, a parameter removed, a parameter's type changed, or a parameter newly required.\n\n")
	p("| Window | Servers | Any change | Tools added or removed | Schema changed, names same | Description only | Potentially breaking |\n|---|---|---|---|---|---|---|\n")
	for _, d := range r.Drift {
		p("| %d days (%s – %s) | %s | %s | %s | %s | %s | %s |\n", d.Days, d.From.Format(dateLayout), d.To.Format(dateLayout), Count(d.Servers),
			CountShare(d.AnyChange.Count, d.Servers, 1), CountShare(d.ToolsAddedOrRemoved.Count, d.Servers, 1),
			CountShare(d.SchemaChangedNamesSame.Count, d.Servers, 1), CountShare(d.DescriptionOnly.Count, d.Servers, 1),
			CountShare(d.Breaking.Count, d.Servers, 1))
	}

	a := r.DriftActivity
	p("\n### Changed lists in the last %d days\n\nEvery server neither claimed nor paginated with a read from %s to %s; a changed list is a read whose names, descriptions or input schemas differ from the previous read's.\n\n",
		a.Days, a.From.Format(dateLayout), a.To.Format(dateLayout))
	p("| Measure | Value |\n|---|---|\n")
	p("| Servers read | %s |\n", Count(a.ServersRead))
	p("| Servers with a changed list | %s |\n", Count(a.ServersChanged))
	p("| Changed lists | %s |\n", Count(a.ChangedLists))
	p("| Servers with more than 10 changed lists | %s |\n", Count(a.ServersOverTen))
	p("| Their changed lists | %s |\n", CountShare(a.OverTenLists.Count, a.ChangedLists, 0))
	p("| Changed lists equal to an earlier list of the same server | %s |\n", Count(a.ReturnsToEarlier))
	r.ToolChanges.markdown(p)

	pv := r.ProtocolVersions
	p("\n### Protocol versions\n\nEntries whose latest round (within 7 days) completed the handshake, by the protocol version they answered with; versions other than %s are counted as other.\n\n", strings.Join(pv.Known, ", "))
	p("| Version | Servers | Share |\n|---|---|---|\n")
	for _, v := range pv.Versions {
		label := v.Version
		if label == OtherVersion {
			label = "Other"
		}
		row3(label, v.Count, pv.Servers, 1)
	}
	p("\n%s completed the handshake; %s did not:\n\n", Plural(pv.Servers, "entry", "entries"), Count(pv.NoVersion))
	p("- authentication required: %s\n", Count(pv.AuthRequired))
	p("- no handshake: %s\n", Count(pv.NoHandshake))
	p("- blocked by the egress guard: %s\n", Count(pv.Blocked))
	if pv.Other > 0 {
		p("- another reason: %s\n", Count(pv.Other))
	}

	hp := r.HandshakePaths
	p("\n### Handshake paths\n\nThe same entries by the handshake method that answered and the version Probity proposed on it. Versions compare as dates; unrecognized ones are not YYYY-MM-DD dates.\n\n")
	p("| Path | Answered | With our proposed version | Older | Newer | Unrecognized |\n|---|---|---|---|---|---|\n")
	pathRow := func(label string, row PathRow) {
		p("| %s | %s | %s | %s | %s | %s |\n", label, Count(row.Answered), Count(row.Same), Count(row.Older), Count(row.Newer), Count(row.Unrecognized))
	}
	for _, row := range hp.Paths {
		pathRow(PathLabel(row, func(s string) string { return "`" + cell(s) + "`" }, cell), row)
	}
	pathRow("Total", hp.Total)
	p("\n%s (%s) answered with an older version than we proposed", Servers(hp.Total.Older), Percent(hp.Total.Older, hp.Total.Answered, 1))
	if hp.MostCommonOlder != "" {
		p(", most often %s (%s)", cell(hp.MostCommonOlder), Count(hp.MostCommonOlderCount))
	}
	p(".\n")
	r.Login.loginMarkdown(&b)

	u := r.Uptime
	p("\n### Uptime\n\nPer UTC day, a server is online when every round reached it, offline when a round found it unreachable, and not counted when the probe could not tell. Entries with a latest round (within 7 days) and at least %s from %s to %s, grouped by that round. A server's rate, online days divided by counted days, is rounded to an integer percent first, then binned. %s had fewer counted days.\n\n",
		Plural(u.MinDays, "counted day", "counted days"), u.From, u.To, Plural(u.TooFewDays, "entry", "entries"))
	p("| Group (latest round) | Servers | 100%% | 95–99%% | 80–94%% | 50–79%% | Below 50%% |\n|---|---|---|---|---|---|---|\n")
	for _, g := range u.Groups {
		p("| %s | %s | %s | %s | %s | %s | %s |\n", groupLabel(g.Group), Count(g.Servers), CountShare(g.Pct100.Count, g.Servers, 1),
			Count(g.Pct95To99), Count(g.Pct80To94), Count(g.Pct50To79), Count(g.Below50))
	}
	r.Series.markdown(p)
	return b.String()
}

// groupLabel names an uptime group in a Markdown cell.
func groupLabel(g string) string {
	if l := GroupLabel(g); l != "" {
		return l
	}
	return cell(g)
}

// GroupLabel names an uptime group (a latest-round category, GroupOther or GroupAll);
// "" for any other string, which callers show escaped for their format.
func GroupLabel(g string) string {
	switch g {
	case SignedFull:
		return "Signed, full coverage"
	case SignedAuthRequired:
		return "Signed, auth required"
	case Unsigned:
		return "Unsigned"
	case GroupOther:
		return "Another category"
	case GroupAll:
		return "All"
	}
	return ""
}

// Count formats n with thousands separators, as every table of the report does.
func Count(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Plural formats n with the singular or plural noun.
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return Count(n) + " " + many
}

// Servers formats a number of servers.
func Servers(n int) string { return Plural(n, "server", "servers") }

// Percent formats n/total as a percentage rounded half up to decimals places (0 or 1);
// a share that would round to 0 or 100 without being so is shown as "<0.1%" or
// ">99.9%". A zero total gives "–".
func Percent(n, total, decimals int) string {
	if total == 0 {
		return "–"
	}
	r := roundPercent(n, total, decimals)
	full := roundPercent(1, 1, decimals)
	small := "<1%"
	large := ">99%"
	if decimals == 1 {
		small, large = "<0.1%", ">99.9%"
	}
	switch {
	case r == 0 && n > 0:
		return small
	case r == full && n < total:
		return large
	case decimals == 1:
		return fmt.Sprintf("%d.%d%%", r/10, r%10)
	}
	return fmt.Sprintf("%d%%", r)
}

// CountShare formats "n (share)".
func CountShare(n, total, decimals int) string {
	return fmt.Sprintf("%s (%s)", Count(n), Percent(n, total, decimals))
}

// Decimal formats x with at most one decimal.
func Decimal(x float64) string {
	return strconv.FormatFloat(math.Round(x*10)/10, 'f', -1, 64)
}

// Days formats a number of days with at most one decimal.
func Days(d float64) string {
	if d == 1 {
		return "1 day"
	}
	return Decimal(d) + " days"
}

// Hours formats a duration given in hours: whole hours below two days, else days with one
// decimal.
func Hours(h float64) string {
	if h < 48 {
		return fmt.Sprintf("%.0f h", math.Round(h))
	}
	return Days(h / 24)
}

// cell makes a value safe inside a Markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "`", "'", "\n", " ").Replace(s)
}
