package stats

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// seriesNow is the cut-off of the series tests: 2026-12-01 08:00 UTC, so the window is
// 2026-11-02 to 2026-12-01 (today).
var seriesNow = time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)

func probes(rounds ...any) []ProbeDay {
	var days []ProbeDay
	for i := 0; i < len(rounds); i += 2 {
		days = AddProbe(days, rounds[i].(time.Time), rounds[i+1].(string))
	}
	return days
}

func TestAddProbe(t *testing.T) {
	d1 := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	got := probes(
		d1.Add(9*time.Hour), "2025-06-18",
		d1.Add(3*time.Hour), "2025-03-26", // older the same day: not the day's version
		d1.Add(12*time.Hour), "", // newer, no handshake: keeps the version
		d1.Add(26*time.Hour), "", // the next day, no handshake
		d1.Add(2*time.Hour).In(time.FixedZone("UTC-5", -5*3600)), "2024-11-05", // a zone is read as UTC
	)
	want := []ProbeDay{
		{Day: "2026-11-30", ProtocolVersion: "2025-06-18", VersionAt: d1.Add(9 * time.Hour)},
		{Day: "2026-12-01"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("AddProbe = %+v, want %+v", got, want)
	}
}

// TestSeriesKnownAnswers: three servers over the last three days, counted by hand.
func TestSeriesKnownAnswers(t *testing.T) {
	day := func(d, h int) time.Time { return time.Date(2026, 11, 29+d, h, 0, 0, 0, time.UTC) } // d 0 is 2026-11-29
	servers := []Server{
		{ID: 1, // probed on all three days, a change on the 30th and one after the cut-off
			Changes: []time.Time{day(1, 5), day(2, 9), day(-40, 0)},
			Probes:  probes(day(0, 1), "2025-06-18", day(1, 1), "2025-11-25", day(2, 1), "2025-11-25"),
			Days:    mkDays("2026-11-29", run{3, Online})},
		{ID: 2, // probed on the 30th and today, offline today, two changes today
			Changes: []time.Time{day(2, 1), day(2, 2)},
			Probes:  probes(day(1, 3), "2025-06-18", day(2, 3), ""),
			Days:    mkDays("2026-11-30", run{1, Online}, run{1, Offline})},
		{ID: 3, // only today; a version from a server, kept as it is
			Probes: probes(day(2, 4), "<b>1\u200b</b>"),
			Days:   mkDays("2026-12-01", run{1, NotCounted})},
	}
	rep := Compute(servers, Options{Now: seriesNow})
	got := rep.Series
	want := Series{From: "2026-11-02", To: "2026-12-01",
		Versions: []string{"2025-11-25", "2025-06-18", "<b>1\u200b</b>"},
		Days: []SeriesDay{
			{Day: "2026-11-29", Probed: 1, Changed: p(0, 1), Versions: []int{0, 1, 0}},
			{Day: "2026-11-30", Changes: 1, Probed: 2, Changed: p(1, 2), Versions: []int{1, 1, 0}},
			{Day: "2026-12-01", Changes: 2, Probed: 3, Changed: p(1, 3), Versions: []int{1, 0, 1}},
		},
		Uptime: UptimeHistogram{From: "2026-11-02", To: "2026-12-01", Servers: 2, Bins: []UptimeBin{
			{100, 100, p(1, 2)}, {95, 99, p(0, 2)}, {80, 94, p(0, 2)}, {50, 79, p(1, 2)}, {0, 49, p(0, 2)},
		}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("series =\n%+v\nwant\n%+v", got, want)
	}
	// The Markdown has the same numbers, a table per chart.
	md := rep.Markdown()
	for _, line := range []string{
		"\n## The last 30 days\n",
		"\n| 2026-11-30 | 1 |\n",             // changes per day
		"\n| 2026-12-01 | 3 | 1 | 33.3% |\n", // share changed
		"\n| 50–79% | 1 | 50.0% |\n",         // uptime
		"\n| Day (UTC) | 2025-11-25 | 2025-06-18 | <b>1\u200b</b> |\n|---|---|---|---|\n", // versions, server text as it is (cell escapes only what Markdown tables need)
		"\n| 2026-12-01 | 1 | 0 | 1 |\n",
	} {
		if !strings.Contains(md, line) {
			t.Errorf("the Markdown lacks %q", line)
		}
	}
}

// TestSeriesNewInstall: one round today is a day of the series at once (the window
// includes today), and a store with nothing has an empty series, not one of zeros.
func TestSeriesNewInstall(t *testing.T) {
	empty := Compute(nil, Options{Now: seriesNow}).Series
	if len(empty.Days) != 0 || len(empty.Versions) != 0 || empty.Uptime.Servers != 0 || len(empty.Uptime.Bins) != 5 {
		t.Errorf("empty series: %+v", empty)
	}
	s := Server{ID: 1, Probes: probes(seriesNow.Add(-time.Hour), "2025-11-25"), Days: mkDays("2026-12-01", run{1, Online})}
	got := Compute([]Server{s}, Options{Now: seriesNow}).Series
	want := []SeriesDay{{Day: "2026-12-01", Probed: 1, Changed: p(0, 1), Versions: []int{1}}}
	if !reflect.DeepEqual(got.Days, want) || got.Uptime.Servers != 1 || got.Uptime.Bins[0].Count != 1 {
		t.Errorf("one round today: %+v", got)
	}
}

// TestSeriesBounds: however long the history and however many versions, the series
// have at most SeriesDays days and MaxSeriesVersions versions and other.
func TestSeriesBounds(t *testing.T) {
	var servers []Server
	for i := range 40 {
		var s Server
		s.ID = int64(i + 1)
		for d := range 400 {
			at := seriesNow.AddDate(0, 0, -d)
			s.Probes = AddProbe(s.Probes, at, fmt.Sprintf("v%02d", i))
			s.Changes = append(s.Changes, at)
		}
		servers = append(servers, s)
	}
	got := Compute(servers, Options{Now: seriesNow}).Series
	if len(got.Days) != SeriesDays || got.Days[0].Day != got.From || got.Days[SeriesDays-1].Day != "2026-12-01" {
		t.Fatalf("%d days from %s", len(got.Days), got.Days[0].Day)
	}
	if len(got.Versions) != MaxSeriesVersions+1 || got.Versions[MaxSeriesVersions] != OtherVersion {
		t.Errorf("versions %q", got.Versions)
	}
	for _, d := range got.Days {
		if len(d.Versions) != len(got.Versions) || d.Versions[MaxSeriesVersions] != 40-MaxSeriesVersions || d.Changes != 40 || d.Changed.Count != 40 {
			t.Errorf("day %+v", d)
		}
	}
}
