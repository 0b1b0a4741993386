package stats

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// SeriesDays is the number of UTC days of Series: the days up to and including the
// cut-off's day, so that a new install's first rounds show at once.
const SeriesDays = 30

// MaxSeriesVersions is the most protocol versions Series names; the rest are counted
// as OtherVersion.
const MaxSeriesVersions = 5

// Series are the statistics over time that the statistics page draws: per UTC day of
// the SeriesDays days up to and including the cut-off's day, over every server given
// (claimed and paginated ones too: no seed rule applies), and the distribution of
// their uptime over those days.
type Series struct {
	From string `json:"from"` // first day of the window, YYYY-MM-DD
	To   string `json:"to"`   // last day: the cut-off's day, counted up to the cut-off
	// Days are the days from the first with a probe or a change in the window to To,
	// oldest first; empty when the window has neither.
	Days []SeriesDay `json:"days"`
	// Versions name the columns of SeriesDay.Versions: the protocol versions of the
	// most server-days in the window (ties: the newer version first), at most
	// MaxSeriesVersions, then OtherVersion when more were answered.
	Versions []string `json:"versions"`
	// Uptime is the distribution of the servers' uptime over the window.
	Uptime UptimeHistogram `json:"uptime"`
}

// SeriesDay is one UTC day of Series.
type SeriesDay struct {
	Day string `json:"day"` // YYYY-MM-DD
	// Changes are the changes recorded that day (Server.Changes).
	Changes int `json:"changes"`
	// Probed are the servers with a round that day; Changed those of them with a
	// change recorded that day (a share of Probed).
	Probed  int  `json:"probed"`
	Changed Part `json:"changed"`
	// Versions count the probed servers by the protocol version their newest round
	// that day that completed the handshake answered with, one count per
	// Series.Versions; servers without such a round that day are not counted.
	Versions []int `json:"versions"`
}

// UptimeHistogram counts the servers with at least one counted day (online or
// offline) in From to To by their rate of online days to counted days, rounded half up
// to an integer percent, in the bins of the uptime table.
type UptimeHistogram struct {
	From    string      `json:"from"`
	To      string      `json:"to"`
	Servers int         `json:"servers"`
	Bins    []UptimeBin `json:"bins"` // highest first; shares of Servers
}

// UptimeBin is one bin of UptimeHistogram: rates from Min to Max percent, both included.
type UptimeBin struct {
	Min int `json:"min"`
	Max int `json:"max"`
	Part
}

// uptimeBins are the uptime table's bins, highest first (uptimeBin).
var uptimeBins = [...][2]int{{100, 100}, {95, 99}, {80, 94}, {50, 79}, {0, 49}}

// uptimeBin returns the index in uptimeBins of an integer percent.
func uptimeBin(pct int) int {
	for i, b := range uptimeBins {
		if pct >= b[0] {
			return i
		}
	}
	return len(uptimeBins) - 1
}

// SeriesStart returns the start of the first day of Series for the cut-off now: the
// loader reads changes, rounds and uptime days from there.
func SeriesStart(now time.Time) time.Time {
	now = now.UTC()
	return time.Date(now.Year(), now.Month(), now.Day()-(SeriesDays-1), 0, 0, 0, 0, time.UTC)
}

// ProbeDay is a UTC day on which a server had at least one round.
type ProbeDay struct {
	Day string `json:"day"` // YYYY-MM-DD
	// ProtocolVersion is the version the newest round of the day that completed the
	// handshake answered with, VersionAt that round's start; "" when none did.
	ProtocolVersion string    `json:"protocolVersion,omitempty"`
	VersionAt       time.Time `json:"versionAt,omitzero"`
}

// AddProbe records a round started at at that answered version ("" when its handshake
// did not complete) in days, one ProbeDay per UTC day in any order, and returns days:
// the newest round with a version sets the day's version.
func AddProbe(days []ProbeDay, at time.Time, version string) []ProbeDay {
	at = at.UTC()
	d := at.Format(dateLayout)
	i := len(days) - 1
	for i >= 0 && days[i].Day != d {
		i--
	}
	if i < 0 {
		days = append(days, ProbeDay{Day: d})
		i = len(days) - 1
	}
	if version != "" && !days[i].VersionAt.After(at) {
		days[i].ProtocolVersion, days[i].VersionAt = version, at
	}
	return days
}

// seriesTally accumulates Series.
type seriesTally struct {
	now      time.Time
	from, to string
	first    time.Time // start of the first day
	changes  [SeriesDays]int
	probed   [SeriesDays]int
	changed  [SeriesDays]int
	versions [SeriesDays]map[string]int
	total    map[string]int // server-days per version
	servers  int            // with a counted uptime day
	bins     [len(uptimeBins)]int
}

func newSeriesTally(now time.Time) *seriesTally {
	first := SeriesStart(now)
	t := &seriesTally{now: now, first: first, from: first.Format(dateLayout),
		to: first.AddDate(0, 0, SeriesDays-1).Format(dateLayout), total: map[string]int{}}
	return t
}

// day returns the index of a YYYY-MM-DD day in the window, or -1.
func (t *seriesTally) day(d string) int {
	if d < t.from || d > t.to || !isDate(d) {
		return -1
	}
	at, _ := time.Parse(dateLayout, d)
	return int(at.Sub(t.first) / day)
}

func (t *seriesTally) add(s *Server) {
	var changedOn [SeriesDays]bool
	for _, at := range s.Changes {
		if at.After(t.now) || at.Before(t.first) {
			continue
		}
		k := int(at.Sub(t.first) / day)
		t.changes[k]++
		changedOn[k] = true
	}
	var seen [SeriesDays]bool
	for _, p := range s.Probes {
		k := t.day(p.Day)
		if k < 0 || seen[k] {
			continue
		}
		seen[k] = true
		t.probed[k]++
		if changedOn[k] {
			t.changed[k]++
		}
		if v := p.ProtocolVersion; v != "" && !p.VersionAt.After(t.now) {
			if t.versions[k] == nil {
				t.versions[k] = map[string]int{}
			}
			t.versions[k][v]++
			t.total[v]++
		}
	}

	online, counted := 0, 0
	clear(seen[:])
	for _, d := range s.Days {
		k := t.day(d.Day)
		if k < 0 || seen[k] {
			continue
		}
		seen[k] = true
		switch d.Status {
		case Online:
			online++
			counted++
		case Offline:
			counted++
		}
	}
	if counted > 0 {
		t.servers++
		t.bins[uptimeBin(roundPercent(online, counted, 0))]++
	}
}

func (t *seriesTally) report() Series {
	s := Series{From: t.from, To: t.to, Days: []SeriesDay{}, Uptime: UptimeHistogram{From: t.from, To: t.to, Servers: t.servers}}
	s.Uptime.Bins = make([]UptimeBin, len(uptimeBins))
	for i, b := range uptimeBins {
		s.Uptime.Bins[i] = UptimeBin{Min: b[0], Max: b[1], Part: part(t.bins[i], t.servers)}
	}

	// The versions of the most server-days by name, the rest as other.
	names := make([]string, 0, len(t.total))
	for v := range t.total {
		if v != OtherVersion {
			names = append(names, v)
		}
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(t.total[b], t.total[a]), cmp.Compare(b, a)) })
	column := map[string]int{}
	if len(names) > MaxSeriesVersions {
		names = names[:MaxSeriesVersions]
	}
	for i, v := range names {
		column[v] = i
	}
	s.Versions = names
	if len(column) < len(t.total) {
		s.Versions = append(s.Versions, OtherVersion)
	}

	start := -1
	for k := range SeriesDays {
		if t.probed[k] > 0 || t.changes[k] > 0 {
			start = k
			break
		}
	}
	if start < 0 {
		return s
	}
	for k := start; k < SeriesDays; k++ {
		d := SeriesDay{Day: t.first.AddDate(0, 0, k).Format(dateLayout), Changes: t.changes[k], Probed: t.probed[k],
			Changed: part(t.changed[k], t.probed[k]), Versions: make([]int, len(s.Versions))}
		for v, n := range t.versions[k] {
			i, ok := column[v]
			if !ok {
				i = len(s.Versions) - 1
			}
			d.Versions[i] += n
		}
		s.Days = append(s.Days, d)
	}
	return s
}

// Label names an uptime bin as the uptime table's columns do: "100%", "95–99%", …,
// "Below 50%".
func (b UptimeBin) Label() string {
	switch {
	case b.Min == b.Max:
		return fmt.Sprintf("%d%%", b.Min)
	case b.Min == 0:
		return fmt.Sprintf("Below %d%%", b.Max+1)
	}
	return fmt.Sprintf("%d–%d%%", b.Min, b.Max)
}

// SeriesTable is the numbers of one chart of Series, as the statistics page shows
// them under the chart and Markdown shows them: the first cell of a row is its label.
// Version names in Head are server text, to be escaped by the caller.
type SeriesTable struct {
	ID, Title, Definition string
	Head                  []string
	Rows                  [][]string
}

// The ids of the series' tables (and the page's charts), in Tables' order.
const (
	TableChangesPerDay  = "changes-per-day"
	TableShareChanged   = "share-changed"
	TableUptime         = "uptime-distribution"
	TableVersionsPerDay = "protocol-versions-per-day"
)

// Tables are the series' four tables: changes per day, the share of servers changed,
// the uptime distribution and the protocol versions per day.
func (s Series) Tables() []SeriesTable {
	const dayHead = "Day (UTC)"
	window := fmt.Sprintf("per UTC day from %s to %s (the cut-off's day, counted up to the cut-off)", s.From, s.To)
	changes := SeriesTable{ID: TableChangesPerDay, Title: "Changes per day", Head: []string{dayHead, "Changes"},
		Definition: fmt.Sprintf("Confirmed changes recorded %s; baselines (the first read of a server) are not changes.", window)}
	share := SeriesTable{ID: TableShareChanged, Title: "Share of servers changed", Head: []string{dayHead, "Servers probed", "Changed", "Share"},
		Definition: fmt.Sprintf("Of the servers probed each day (a round that day), those with a confirmed change recorded that day, %s.", window)}
	versions := SeriesTable{ID: TableVersionsPerDay, Title: "Protocol versions per day", Head: []string{dayHead},
		Definition: fmt.Sprintf("The servers probed each day whose newest round that day completed a handshake, by the protocol version they answered with (the %d answered most by name, the rest as other), %s.", MaxSeriesVersions, window)}
	for i, v := range s.Versions {
		if v == OtherVersion && i == len(s.Versions)-1 {
			v = "Other"
		}
		versions.Head = append(versions.Head, v)
	}
	for _, d := range s.Days {
		changes.Rows = append(changes.Rows, []string{d.Day, Count(d.Changes)})
		share.Rows = append(share.Rows, []string{d.Day, Count(d.Probed), Count(d.Changed.Count), Percent(d.Changed.Count, d.Probed, 1)})
		row := []string{d.Day}
		for i := range s.Versions {
			n := 0
			if i < len(d.Versions) {
				n = d.Versions[i]
			}
			row = append(row, Count(n))
		}
		versions.Rows = append(versions.Rows, row)
	}
	u := s.Uptime
	uptime := SeriesTable{ID: TableUptime, Title: "Uptime over 30 days", Head: []string{"Uptime", "Servers", "Share"},
		Definition: fmt.Sprintf("%s with at least one counted day from %s to %s (the cut-off's day included), by their days online as a percentage of their counted days (online or offline), rounded half up to an integer.",
			Servers(u.Servers), u.From, u.To)}
	for _, b := range u.Bins {
		uptime.Rows = append(uptime.Rows, []string{b.Label(), Count(b.Count), Percent(b.Count, u.Servers, 1)})
	}
	return []SeriesTable{changes, share, uptime, versions}
}

// markdown writes the series' section.
func (s Series) markdown(p func(string, ...any)) {
	p("\n## The last %d days\n\nEvery remote server Probity reads, claimed and paginated ones too.\n", SeriesDays)
	for _, t := range s.Tables() {
		head := make([]string, len(t.Head))
		for i, h := range t.Head {
			head[i] = cell(h)
		}
		p("\n### %s\n\n%s\n\n", t.Title, t.Definition)
		if len(t.Rows) == 0 {
			p("Nothing yet.\n")
			continue
		}
		p("| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
		for _, r := range t.Rows {
			p("| %s |\n", strings.Join(r, " | "))
		}
	}
}
