package stats

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/report.golden.md")

// The fixture. Times are days and hours after t0; the cut-off is day 50, 23:00
// (2026-10-21 23:00 UTC), so the 7-day window is (day 43 23:00, day 50 23:00] and
// the 30-day window (day 20 23:00, day 50 23:00]. Each server's comment says what it
// is for; the expected values in TestComputeKnownAnswers were counted by hand from
// these comments and the reads below.

var (
	t0      = time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	fixNow  = at(50, 23)
	fixOpts = Options{Now: fixNow, UptimeFrom: "2026-03-01", UptimeTo: "2026-10-20"}
)

func at(d, h int) time.Time {
	return t0.Add(time.Duration(d)*24*time.Hour + time.Duration(h)*time.Hour)
}

// rd is a read of the space-separated names.
func rd(d, h int, names, surface string, ch *Change) Read {
	ns := strings.Fields(names)
	slices.Sort(ns)
	return Read{At: at(d, h), Toolset: strings.Join(ns, ","), Names: ns, Surface: surface, Change: ch}
}

// seq is prefix+from … prefix+to, two digits, space-separated.
func seq(prefix string, from, to int) string {
	var b []string
	for i := from; i <= to; i++ {
		b = append(b, fmt.Sprintf("%s%02d", prefix, i))
	}
	return strings.Join(b, " ")
}

var (
	chAdd       = &Change{ToolsAdded: true}
	chRemove    = &Change{ToolsRemoved: true, Breaking: true}
	chBoth      = &Change{ToolsAdded: true, ToolsRemoved: true, Breaking: true}
	chDesc      = &Change{DescriptionOnly: true}
	chSchemaBrk = &Change{SchemaChangedNamesSame: true, Breaking: true}
)

type run struct {
	n      int
	status string
}

// mkDays is consecutive days from from, run after run.
func mkDays(from string, runs ...run) []Day {
	d, err := time.Parse(dateLayout, from)
	if err != nil {
		panic(err)
	}
	var out []Day
	for _, r := range runs {
		for range r.n {
			out = append(out, Day{Day: d.Format(dateLayout), Status: r.status})
			d = d.AddDate(0, 0, 1)
		}
	}
	return out
}

func latest(d, h int, category, reason, version, method, proposed string, auth bool) *Latest {
	return &Latest{At: at(d, h), Category: category, UnsignedReason: reason, ProtocolVersion: version,
		HandshakeMethod: method, ProposedVersion: proposed, AuthRequired: auth}
}

func fixture() []Server {
	s4 := Server{ID: 4} // 11 changes every 12 h from day 21, alternating: >10 bucket, 10 returns; first read inside the 30-day window
	for i := range 12 {
		r := rd(21, 12*i, "e", "S4e", chRemove)
		if i%2 == 1 {
			r = rd(21, 12*i, "e f", "S4ef", chAdd)
		}
		if i == 0 {
			r.Change = nil
		}
		s4.Reads = append(s4.Reads, r)
	}
	a := seq("t", 1, 12)
	servers := []Server{
		{ID: 1, Reads: []Read{ // no change, observed 3 days
			rd(0, 0, "a b", "", nil), rd(3, 0, "a b", "", nil)}},
		{ID: 2, Reads: []Read{ // observed exactly 7 days, change exactly at first + 7 days
			rd(10, 0, "a", "", nil), rd(13, 0, "a", "", nil), rd(17, 0, "a b", "", nil)}},
		{ID: 3, Reads: []Read{ // change 1 h after day 7, observed exactly 14 days
			rd(0, 0, "c", "", nil), rd(7, 1, "c d", "", nil), rd(14, 0, "c d", "", nil)}},
		s4,
		{ID: 5, Reads: []Read{ // 6 changes of every type incl. a repeated name, back to the first toolset; 12 tools
			rd(0, 0, a, "", nil),
			rd(0, 12, a+" t13", "", nil),
			rd(1, 0, a+" t13 t14 t15", "", nil),
			rd(3, 0, a+" t13 t14 t15", "", nil),
			rd(4, 0, seq("t", 2, 15), "", nil),
			rd(10, 0, seq("t", 3, 16), "", nil),
			rd(10, 12, seq("t", 3, 16)+" t16", "", nil),
			rd(16, 0, a, "S5x", nil),
			rd(20, 0, a, "S5x", nil)}},
		{ID: 6, Reads: []Read{ // read exactly at the 30-day start and exactly at the cut-off, added there
			rd(20, 23, "g", "S6a", nil), rd(50, 23, "g h", "S6b", chAdd)}},
		{ID: 7, Reads: []Read{ // description-only then schema+breaking in the 7-day window: schema column
			rd(5, 0, "i j", "S7a", nil), rd(44, 0, "i j", "S7b", chDesc), rd(45, 0, "i j", "S7c", chSchemaBrk)}},
		{ID: 8, Reads: []Read{ // added (30-day only), then description only (both windows); changed within 21 days
			rd(10, 0, "k", "S8a", nil), rd(30, 0, "k l", "S8b", chAdd), rd(47, 0, "k l", "S8c", chDesc)}},
		{ID: 9, Reads: []Read{ // first read exactly at the 7-day start: included there, unchanged
			rd(43, 23, "m", "S9a", nil), rd(48, 0, "m", "S9a", nil)}},
		{ID: 10, Reads: []Read{ // last read exactly at the 7-day start: not read inside it
			rd(15, 0, "n", "S10a", nil), rd(43, 23, "n", "S10a", nil)}},
		{ID: 11, Claimed: true, Reads: []Read{ // claimed: excluded
			rd(0, 0, "o", "S11a", nil), rd(44, 0, "o p", "S11b", chAdd)}},
		{ID: 12, Paginated: true, Reads: []Read{ // paginated: excluded
			rd(0, 0, "q", "", nil), rd(45, 0, "r", "S12b", chBoth)}},
		{ID: 13, Claimed: true, Paginated: true, Reads: []Read{ // both: counted as claimed
			rd(1, 0, "s", "", nil)}},
		{ID: 14, Reads: []Read{ // one read only
			rd(49, 0, "t", "S14a", nil)}},
		{ID: 15, Reads: []Read{ // the second read is after the cut-off: one read
			rd(40, 0, "u", "S15a", nil), rd(51, 0, "u v", "S15b", chAdd)}},
		{ID: 16, Reads: []Read{ // 8 tools; changes at first + 14 days exactly and 7 days later
			rd(2, 0, seq("u", 1, 8), "", nil),
			rd(16, 0, seq("u", 1, 9), "S16b", nil),
			rd(23, 0, seq("u", 2, 9), "S16c", chRemove),
			rd(30, 0, seq("u", 2, 9), "S16c", nil)}},
		{ID: 17, Reads: []Read{ // 25 tools, observed exactly 14 days, no change
			rd(0, 0, seq("c", 1, 25), "", nil), rd(14, 0, seq("c", 1, 25), "", nil)}},
		{ID: 18, Reads: []Read{ // 60 tools, 3 added exactly at first + 7 days
			rd(1, 0, seq("c", 1, 60), "", nil),
			rd(8, 0, seq("c", 1, 60)+" d1 d2 d3", "", nil),
			rd(25, 0, seq("c", 1, 60)+" d1 d2 d3", "", nil)}},
		{ID: 19, Reads: []Read{ // 3 changes in the 7-day window, the last back to an earlier toolset and surface
			rd(30, 0, "w1 w2 w3", "S19a", nil),
			rd(44, 0, "w1 w2 w3 w4", "S19b", chAdd),
			rd(44, 12, "w1 w2 w4", "S19c", chRemove),
			rd(46, 0, "w1 w2 w3 w4", "S19b", chAdd)}},
		{ID: 20, Reads: []Read{ // names added and removed, ends with fewer tools
			rd(34, 0, "x1 x2 x3", "S20a", nil), rd(49, 0, "x1 x4", "S20b", chBoth)}},
		{ID: 21, Reads: []Read{ // out of order; a description change exactly at the 7-day start
			rd(47, 0, "y", "S21b", nil), rd(30, 0, "y", "S21a", nil), rd(43, 23, "y", "S21b", chDesc)}},

		// Dataset, protocol versions and uptime (no reads).
		{ID: 30, Latest: latest(50, 0, SignedFull, "", "2025-11-25", MethodInitialize, "2025-11-25", false),
			Days: mkDays("2026-03-01", run{199, Online}, run{1, Offline})}, // 99.5% → 100
		{ID: 31, Latest: latest(49, 0, SignedFull, "", "2025-11-25", MethodInitialize, "2025-11-25", false),
			Days: append(mkDays("2026-02-28", run{1, Offline}, run{53, Online}, run{3, Offline}), // 94.6% → 95
				mkDays("2026-10-21", run{1, Offline})...)}, // days outside the window
		{ID: 32, Latest: latest(43, 23, SignedFull, "", "2026-07-28", MethodDiscover, "2026-07-28", false), // exactly 7 days old
			Days: mkDays("2026-10-01", run{5, NotCounted}, run{7, Online})}, // exactly 7 counted days
		{ID: 33, Latest: latest(43, 22, SignedFull, "", "2025-11-25", MethodInitialize, "2025-11-25", false), // older than 7 days
			Days: mkDays("2026-09-01", run{30, Online})},
		{ID: 34, Latest: latest(48, 0, SignedAuthRequired, "", "", MethodInitialize, "2025-11-25", true),
			Days: append(mkDays("2026-10-01", run{6, Online}), // 6 counted days: a repeated day, a bad date and an unknown status do not count
				Day{"2026-10-06", Online}, Day{"2026-10-0x", Online}, Day{"2026-10-07", "maybe"})},
		{ID: 35, Latest: latest(47, 0, SignedAuthRequired, "", "2025-06-18", MethodInitialize, "2025-11-25", true),
			Days: mkDays("2026-03-01", run{159, Online}, run{41, Offline})}, // 79.5% → 80
		{ID: 36, Latest: latest(46, 0, Unsigned, NoHandshake, "", MethodDiscover, "2026-07-28", false),
			Days: mkDays("2026-09-01", run{10, Online}, run{10, Offline})}, // 50%
		{ID: 37, Latest: latest(45, 0, Unsigned, NoTools, "2024-11-05", MethodInitialize, "2025-11-25", false),
			Days: mkDays("2026-03-01", run{99, Online}, run{101, Offline})}, // 49.5% → 50
		{ID: 38, Latest: latest(44, 0, Unsigned, Blocked, "", "", "", true),
			Days: mkDays("2026-10-10", run{7, Offline})}, // 0%
		{ID: 39, Latest: latest(50, 23, Unsigned, "", "draft", MethodInitialize, "2025-11-25", false), // at the cut-off; not a date
			Days: mkDays("2026-10-01", run{1, Online}, run{9, Offline})}, // 10%
		{ID: 40, Latest: latest(50, 0, SignedFull, "", "2026-07-28", MethodDiscover, "2026-07-28", false),
			Days: mkDays("2026-09-01", run{20, Online}, run{1, Offline})}, // 95.2% → 95
		{ID: 41, Latest: latest(49, 12, SignedFull, "", "2025-06-18", MethodInitialize, "2025-11-25", false)}, // no days
		{ID: 42, Latest: latest(46, 0, "bogus", "", "2026-12-01", MethodDiscover, "2026-07-28", false), // another category; unknown newer date
			Days: mkDays("2026-10-01", run{7, Online}, run{1, Offline})}, // 87.5% → 88
		{ID: 43, Latest: latest(51, 0, SignedFull, "", "2025-11-25", MethodInitialize, "2025-11-25", false), // after the cut-off
			Days: mkDays("2026-09-01", run{30, Online})},
		{ID: 44, Days: mkDays("2026-09-01", run{30, Online})}, // no round
		{ID: 45, Latest: latest(48, 0, SignedFull, "", "2025-11-25", MethodDiscover, "2026-07-28", false),
			Days: mkDays("2026-03-01", run{200, Online})},
		{ID: 46, Latest: latest(45, 12, Unsigned, NoHandshake, "", "", "", false)},
		{ID: 47, Latest: latest(44, 0, SignedAuthRequired, "", "", MethodInitialize, "2025-11-25", true),
			Days: mkDays("2026-10-01", run{8, Online})},
	}
	withFixtureLogins(servers) // login_test.go
	return servers
}

// p is a count and its share, as the report states it.
func p(n, of int) Part { return part(n, of) }

func expectedReport() *Report {
	return &Report{
		Now:   fixNow,
		Scope: Scope{WithReads: 21, ExcludedClaimed: 2, ExcludedPaginated: 1, Eligible: 18, ReadTwice: 16},
		Summary: Summary{
			ReadTwice: 16, Changed: p(10, 16), Changes: 28, NamesAdded: 23, NamesRemoved: 15,
			SingleNameChanges: 22, MedianNamesPerChange: 1, EndedMore: 7, EndedFewer: 1, EndedSame: 2,
			ReturnsToEarlier: 12, MedianObservedDays: 16.5, MaxObservedDays: 40,
		},
		FirstDays: []FirstDays{
			{Days: 7, Servers: 13, Changed: p(3, 13)},
			{Days: 14, Servers: 12, Changed: p(5, 12)},
			{Days: 21, Servers: 6, Changed: p(3, 6)},
		},
		ChangesPerServer: ChangesPerServer{
			Servers: 16, Zero: 6, One: 6, Two: 1, ThreeToFive: 1, SixToTen: 1, OverTen: 1,
			Frequent: p(3, 16), FrequentChanges: p(20, 28), MaxChanges: 11,
			ObservedDays: 303.5, DaysPerChange: 303.5 / 28,
		},
		ChangeTypes: ChangeTypes{
			Changes: 28, OnlyAdded: p(16, 28), OnlyRemoved: p(8, 28), Both: p(3, 28),
			DuplicatesOnly: p(1, 28), WithRemoved: p(11, 28),
		},
		ByToolCount: []ToolCountRow{
			{MinTools: 0, MaxTools: 5, Servers: 8, Changed: p(2, 8)},
			{MinTools: 6, MaxTools: 10, Servers: 1, Changed: p(1, 1)},
			{MinTools: 11, MaxTools: 20, Servers: 1, Changed: p(1, 1)},
			{MinTools: 21, MaxTools: 50, Servers: 1, Changed: p(0, 1)},
			{MinTools: 51, MaxTools: 0, Servers: 1, Changed: p(1, 1)},
		},
		Intervals: Intervals{
			Servers: 4, Intervals: 18, MedianHours: 12, LowerQuartileHours: 12, UpperQuartileHours: 30,
			Within12h: p(13, 18),
		},
		NamesVsSurface: NamesVsSurface{
			NamesChanged:      ServerChanges{Servers: 6, Changes: 18},
			NamesNeverChanged: ServerChanges{Servers: 2, Changes: 3},
			SurfaceOnly:       ServerChanges{Servers: 3, Changes: 4},
		},
		Dataset: Dataset{
			Endpoints: 39, WithRecentRound: 15,
			SignedFull: p(6, 15), SignedAuthRequired: p(3, 15), Unsigned: p(5, 15), OtherCategory: p(1, 15),
			NoHandshake: 2, NoTools: 1, Blocked: 1, OtherReason: 1,
		},
		Drift: []DriftWindow{
			{Days: 7, From: at(43, 23), To: fixNow, Servers: 7, AnyChange: p(5, 7), ToolsAddedOrRemoved: p(3, 7),
				SchemaChangedNamesSame: p(1, 7), DescriptionOnly: p(1, 7), Breaking: p(3, 7)},
			{Days: 30, From: at(20, 23), To: fixNow, Servers: 6, AnyChange: p(4, 6), ToolsAddedOrRemoved: p(3, 6),
				SchemaChangedNamesSame: p(1, 6), DescriptionOnly: p(0, 6), Breaking: p(2, 6)},
		},
		DriftActivity: DriftActivity{
			Days: 30, From: at(20, 23), To: fixNow, ServersRead: 13, ServersChanged: 8, ChangedLists: 22,
			ServersOverTen: 1, OverTenLists: p(11, 22), ReturnsToEarlier: 11,
		},
		// The fixture's changes carry no per-tool counts (TestToolChangesKnownAnswers has them).
		ToolChanges: ToolChanges{Days: 30, From: at(20, 23), To: fixNow, ChangedLists: 22},
		// 21 days, 2026-09-30 (day 29) to 2026-10-20 (day 49), counted by hand from the reads.
		DailyChanges: DailyChanges{From: "2026-09-30", To: "2026-10-20",
			Days: []DayChanges{
				{Day: "2026-10-01", Reads: 4, Changed: 1, PerThousand: 250, MaxHourChanged: 1}, // S8, S16, S19, S21; S8 added
				{Day: "2026-10-05", Reads: 1}, // S20
				{Day: "2026-10-11", Reads: 1}, // S15
				{Day: "2026-10-14", Reads: 3}, // S9, S10, S21
				{Day: "2026-10-15", Reads: 3, Changed: 2, PerThousand: 2000.0 / 3, MaxHourChanged: 1}, // S7; S19 at 0 h and 12 h
				{Day: "2026-10-16", Reads: 1}, // S7 (schema only)
				{Day: "2026-10-17", Reads: 1, Changed: 1, PerThousand: 1000, MaxHourChanged: 1}, // S19
				{Day: "2026-10-18", Reads: 2}, // S8, S21
				{Day: "2026-10-19", Reads: 1}, // S9
				{Day: "2026-10-20", Reads: 2, Changed: 1, PerThousand: 500, MaxHourChanged: 1}, // S14, S20
			},
			Min: 0, MinDay: "2026-10-05", Max: 1000, MaxDay: "2026-10-17"},
		ProtocolVersions: ProtocolVersions{
			Known:   []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"},
			Servers: 10,
			Versions: []VersionCount{
				{"2025-11-25", p(3, 10)},
				{"2026-07-28", p(2, 10)},
				{"2025-06-18", p(2, 10)},
				{"2024-11-05", p(1, 10)},
				{"other", p(2, 10)},
			},
			NoVersion: 5, Blocked: 1, AuthRequired: 2, NoHandshake: 2, Other: 0,
		},
		HandshakePaths: HandshakePaths{
			Paths: []PathRow{
				{Method: "server/discover", Proposed: "2026-07-28", Answered: 4, Same: 2, Older: 1, Newer: 1, Unrecognized: 0},
				{Method: "initialize", Proposed: "2025-11-25", Answered: 6, Same: 2, Older: 3, Newer: 0, Unrecognized: 1},
			},
			Total:           PathRow{Answered: 10, Same: 4, Older: 4, Newer: 1, Unrecognized: 1},
			MostCommonOlder: "2025-06-18", MostCommonOlderCount: 2,
		},
		Login: expectedLogin(), // login_test.go
		Uptime: Uptime{
			From: "2026-03-01", To: "2026-10-20", MinDays: 7, TooFewDays: 3,
			Groups: []UptimeRow{
				{Group: "signed_full", Servers: 5, Pct100: p(3, 5), Pct95To99: 2},
				{Group: "signed_auth_required", Servers: 2, Pct100: p(1, 2), Pct80To94: 1},
				{Group: "unsigned", Servers: 4, Pct100: p(0, 4), Pct50To79: 2, Below50: 2},
				{Group: "other", Servers: 1, Pct100: p(0, 1), Pct80To94: 1},
				{Group: "all", Servers: 12, Pct100: p(4, 12), Pct95To99: 2, Pct80To94: 2, Pct50To79: 2, Below50: 2},
			},
		},
		// The fixture has no probes or changes (series_test.go tests them); its uptime
		// days from 2026-09-22 to 2026-10-21, counted by hand: 100% the 7 online after 5 not counted (Oct 6–12), the
		// three of 30 days online from Sep 1 (9 days each), 6 days from Oct 1, 8 days
		// from Oct 1; 88% the 7 online and 1 offline; 0% Oct 21 offline alone, the 7
		// offline from Oct 10; 10% the 1 online and 9 offline.
		Series: Series{From: "2026-09-22", To: "2026-10-21", Days: []SeriesDay{}, Versions: []string{},
			Uptime: UptimeHistogram{From: "2026-09-22", To: "2026-10-21", Servers: 10, Bins: []UptimeBin{
				{100, 100, p(6, 10)}, {95, 99, p(0, 10)}, {80, 94, p(1, 10)}, {50, 79, p(0, 10)}, {0, 49, p(3, 10)},
			}}},
	}
}

// diffReport reports every differing top-level table, as JSON for readability.
func diffReport(t *testing.T, got, want *Report) {
	t.Helper()
	gv, wv := reflect.ValueOf(*got), reflect.ValueOf(*want)
	for i := range gv.NumField() {
		if !reflect.DeepEqual(gv.Field(i).Interface(), wv.Field(i).Interface()) {
			g, _ := json.MarshalIndent(gv.Field(i).Interface(), "", "  ")
			w, _ := json.MarshalIndent(wv.Field(i).Interface(), "", "  ")
			t.Errorf("%s:\ngot  %s\nwant %s", gv.Type().Field(i).Name, g, w)
		}
	}
}

func TestComputeKnownAnswers(t *testing.T) {
	diffReport(t, Compute(fixture(), fixOpts), expectedReport())
}

func TestComputeOrderAndInput(t *testing.T) {
	servers := fixture()
	slices.Reverse(servers)
	diffReport(t, Compute(servers, fixOpts), expectedReport())
	// Compute neither sorts nor otherwise touches the caller's data.
	want := fixture()
	slices.Reverse(want)
	if !reflect.DeepEqual(servers, want) {
		t.Error("Compute modified its input")
	}
}

func TestDefaultUptimeWindow(t *testing.T) {
	// 29 full days before the cut-off's day: 2026-09-22 to 2026-10-20.
	s := Server{ID: 1, Latest: latest(50, 0, SignedFull, "", "2026-07-28", MethodDiscover, "2026-07-28", false),
		Days: mkDays("2026-09-21", run{1, Offline}, run{29, Online}, run{1, Offline})}
	r := Compute([]Server{s}, Options{Now: fixNow})
	want := Uptime{From: "2026-09-22", To: "2026-10-20", MinDays: 7, Groups: []UptimeRow{
		{Group: "signed_full", Servers: 1, Pct100: p(1, 1)},
		{Group: "signed_auth_required"},
		{Group: "unsigned"},
		{Group: "all", Servers: 1, Pct100: p(1, 1)},
	}}
	if !reflect.DeepEqual(r.Uptime, want) {
		t.Errorf("uptime = %+v, want %+v", r.Uptime, want)
	}
	if !reflect.DeepEqual(r.ProtocolVersions.Known, DefaultKnownVersions) {
		t.Errorf("known versions = %v", r.ProtocolVersions.Known)
	}
	// The cut-off's zone does not matter.
	r2 := Compute([]Server{s}, Options{Now: fixNow.In(time.FixedZone("UTC+3", 3*3600))})
	if !reflect.DeepEqual(r, r2) {
		t.Error("a cut-off in another zone gave another report")
	}
}

func TestKnownVersionsOption(t *testing.T) {
	r := Compute(fixture(), Options{Now: fixNow, KnownVersions: []string{"2025-11-25"}})
	want := []VersionCount{{"2025-11-25", p(3, 10)}, {"other", p(7, 10)}}
	if !reflect.DeepEqual(r.ProtocolVersions.Versions, want) {
		t.Errorf("versions = %+v, want %+v", r.ProtocolVersions.Versions, want)
	}
}

func TestEmpty(t *testing.T) {
	r := Compute(nil, Options{Now: fixNow})
	md := r.Markdown()
	if !strings.Contains(md, "| 7 days | 0 | 0 | – |") {
		t.Errorf("empty report:\n%s", md)
	}
	roundTrip(t, r)
}

func TestValidate(t *testing.T) {
	good := []Options{
		{Now: fixNow},
		{Now: fixNow, UptimeFrom: "2026-10-01", UptimeTo: "2026-10-01", MinUptimeDays: 1, KnownVersions: []string{"draft"}},
	}
	for _, o := range good {
		if err := o.Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v", o, err)
		}
	}
	bad := map[string]Options{
		"zero now":         {},
		"bad from":         {Now: fixNow, UptimeFrom: "2026-9-01"},
		"impossible date":  {Now: fixNow, UptimeTo: "2026-02-30"},
		"reversed window":  {Now: fixNow, UptimeFrom: "2026-10-02", UptimeTo: "2026-10-01"},
		"negative minimum": {Now: fixNow, MinUptimeDays: -1},
		"empty version":    {Now: fixNow, KnownVersions: []string{""}},
		"other as version": {Now: fixNow, KnownVersions: []string{"other"}},
	}
	for name, o := range bad {
		if err := o.Validate(); err == nil {
			t.Errorf("%s: Validate accepted %+v", name, o)
		}
	}
}

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		n, of, decimals int
		want            string
	}{
		{5, 8, 0, "63%"}, // 62.5 rounds up
		{1, 8, 0, "13%"},
		{3, 13, 0, "23%"},
		{1, 3, 1, "33.3%"},
		{2, 3, 1, "66.7%"},
		{3, 16, 1, "18.8%"},
		{1, 3602, 1, "<0.1%"},
		{3601, 3602, 1, ">99.9%"},
		{1, 300, 0, "<1%"},
		{299, 300, 0, ">99%"},
		{0, 5, 1, "0.0%"},
		{5, 5, 1, "100.0%"},
		{1, 0, 0, "–"},
	} {
		if got := Percent(c.n, c.of, c.decimals); got != c.want {
			t.Errorf("Percent(%d, %d, %d) = %q, want %q", c.n, c.of, c.decimals, got, c.want)
		}
	}
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1893: "1,893", 119510: "119,510", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestQuantile(t *testing.T) {
	for _, c := range []struct {
		xs      []float64
		p, want float64
	}{
		{nil, 0.5, 0},
		{[]float64{7}, 0.25, 7},
		{[]float64{4, 1, 3, 2}, 0.5, 2.5},
		{[]float64{1, 2, 3, 4}, 0.25, 1.75},
		{[]float64{1, 2, 3, 4}, 0.75, 3.25},
		{[]float64{1, 2, 3, 4}, 1, 4},
	} {
		if got := quantile(slices.Clone(c.xs), c.p); got != c.want {
			t.Errorf("quantile(%v, %v) = %v, want %v", c.xs, c.p, got, c.want)
		}
	}
}

func TestDiffNames(t *testing.T) {
	for _, c := range []struct {
		prev, cur      string
		added, removed int
	}{
		{"a b", "a b c", 1, 0},
		{"a b c", "b", 0, 2},
		{"a b", "b c d", 2, 1},
		{"a b b", "a b", 0, 0},
		{"", "a a", 1, 0},
		{"b a", "c a", 1, 1}, // unsorted input
	} {
		added, removed := diffNames(strings.Fields(c.prev), strings.Fields(c.cur))
		if added != c.added || removed != c.removed {
			t.Errorf("diffNames(%q, %q) = %d, %d, want %d, %d", c.prev, c.cur, added, removed, c.added, c.removed)
		}
	}
}

func roundTrip(t *testing.T, r *Report) {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	diffReport(t, &back, r)
}

func TestJSONRoundTrip(t *testing.T) {
	r := Compute(fixture(), fixOpts)
	roundTrip(t, r)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"firstDays":[{"days":7,"servers":13,"changed":{"count":3,`, `"versions":[{"version":"2025-11-25","count":3,"share":0.3}`, `"now":"2026-10-21T23:00:00Z"`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("JSON lacks %s", key)
		}
	}
}

func TestMarkdownGolden(t *testing.T) {
	got := Compute(fixture(), fixOpts).Markdown()
	path := filepath.Join("testdata", "report.golden.md")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("Markdown differs from %s (run with -update after checking):\n%s", path, got)
	}
}

func TestIsDate(t *testing.T) {
	for s, want := range map[string]bool{
		"2026-10-21": true, "2024-02-29": true, "2000-02-29": true, "0000-01-01": true, "9999-12-31": true,
		"2026-02-29": false, "1900-02-29": false, "2026-04-31": false, "2026-13-01": false, "2026-00-10": false,
		"2026-10-00": false, "2026-1-021": false, "2026/10/21": false, "2026-10-2x": false, "draft": false, "": false,
		"+026-10-21": false, "2026-10-21T00:00:00Z": false,
	} {
		if got := isDate(s); got != want {
			t.Errorf("isDate(%q) = %v, want %v", s, got, want)
		}
		_, err := time.Parse(dateLayout, s)
		if want != (err == nil) && s != "0000-01-01" {
			t.Errorf("isDate(%q) disagrees with time.Parse (%v)", s, err)
		}
	}
}
