package diff

import (
	"strings"
	"testing"
	"time"
)

// testNow is Tuesday, 1 December 2026, in the morning (UTC).
var testNow = time.Date(2026, 12, 1, 6, 45, 0, 0, time.UTC)

// show writes the placeholder as <D>.
func show(s string) string { return strings.ReplaceAll(s, placeholder, "<D>") }

func TestMaskFullDates(t *testing.T) {
	m := newMasker(time.Time{})
	for _, tc := range []struct{ in, want string }{
		// ISO 8601 dates and date-times.
		{"Current date: 2026-11-30.", "Current date: <D>."},
		{"at 2026-11-30T06:45:12Z", "at <D>"},
		{"2026-11-30T06:45:12.123456789+05:30 is late", "<D> is late"},
		{"2026-11-30t06:45:12,5z", "<D>"},
		{"2026-11-30 06:45", "<D>"},
		{"2026-11-30 06:45:12 UTC", "<D>"},
		{"2026-11-30 06:45:12.123 +0000 UTC", "<D> UTC"}, // constant text may stay
		{"2026-11-30 06:45 GMT+2", "<D>"},
		{"2026-11-30T06:45:12-0800.", "<D>."},
		{"2026-11-30T06:45+01", "<D>"},
		{"2026-11-30, 06:45", "<D>"},
		{"2026-11-30 @ 06:45", "<D>"},
		// Numeric dates with a four-digit year.
		{"30.11.2026", "<D>"},
		{"1.12.2026 um 7:05", "<D> um 7:05"},
		{"11/30/2026 and 30/11/2026", "<D> and <D>"},
		{"30-11-2026", "<D>"},
		{"2026/11/30 and 2026.11.30 and 2026/1/5", "<D> and <D> and <D>"},
		// Written dates.
		{"Data as of November 30, 2026.", "Data as of <D>."},
		{"30 Nov 2026", "<D>"},
		{"30. November 2026", "<D>"},
		{"the 30th of November, 2026", "the <D>"},
		{"Nov. 30th 2026", "<D>"},
		{"SEPT 1, 2026 and Sep 1 2026 and sept. 1, 2026", "<D> and <D> and <D>"},
		{"Monday, November 30, 2026", "<D>"},
		{"Today is Monday, November 30, 2026 at 6:45 pm.", "Today is <D>."},
		{"Mon, 30 Nov 2026 06:45:12 GMT", "<D>"},
		{"November 30, 2026 at 6:45 p.m. UTC", "<D>"},
		// A time before the date.
		{"06:45 UTC on 30 Nov 2026", "<D>"},
		{"Updated 12:00, 2026-11-30", "Updated <D>"},
		// Several dates, and a range.
		{"2026-11-30/2026-12-01", "<D>/<D>"},
		{"from 2026-11-01 to 2026-11-30 (UTC)", "from <D> to <D> (UTC)"},
		// Not dates.
		{"v2026-11-30a", "v2026-11-30a"},
		{"2026-11-301", "2026-11-301"},
		{"2026-13-30", "2026-13-30"},
		{"1899-11-30 and 2200-01-01", "1899-11-30 and 2200-01-01"},
		{"November 2026", "November 2026"},
		{"© 2026", "© 2026"},
		{"11/30", "11/30"},
		{"06:45 UTC", "06:45 UTC"},
		{"1764484800", "1764484800"},
		{"Mayo 5, 2026", "Mayo 5, 2026"},
		{"version 1.2.3", "version 1.2.3"},
		{"id_2026-11-30", "id_2026-11-30"},
		// A time that does not fit stays.
		{"2026-11-30 24:00", "<D> 24:00"},
		{"2026-11-30T06:45:12Zulu", "2026-11-30T06:45:12Zulu"},
		{"2026-11-30 06:45:12abc", "<D> 06:45:12abc"},
		// No year, no current date forms without Now.
		{"Today is Tuesday, Dec 1st; 20261201", "Today is Tuesday, Dec 1st; 20261201"},
	} {
		if got := show(m.mask(tc.in, m.classesOf(tc.in))); got != tc.want {
			t.Errorf("mask(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestMaskCurrentDate(t *testing.T) {
	m := newMasker(testNow)
	for _, tc := range []struct {
		in   string
		cls  classes
		want string
	}{
		{"Today is Tuesday.", classWeekday, "Today is <D>."},
		{"Today is Monday.", classWeekday, "Today is <D>."},    // the day before
		{"Today is Wednesday.", classWeekday, "Today is <D>."}, // the day after
		{"Today is Friday.", 0, "Today is Friday."},            // not near
		{"Runs every Tuesday", classWeekday, "Runs every <D>"}, // the price of the rule
		{"Tue is short", 0, "Tue is short"},                    // abbreviations only before a date
		{"Tuesdays", 0, "Tuesdays"},
		{"As of Dec 1st.", classDayMonth, "As of <D>."},
		{"As of 1 December", classDayMonth, "As of <D>"},
		{"As of the 30th of November", classDayMonth, "As of the <D>"},
		{"As of November 30", classDayMonth, "As of <D>"},
		{"As of Nov. 29", 0, "As of Nov. 29"},
		{"Build 20261201", classBasic, "Build <D>"},
		{"Build 20261202T064512Z", classBasic, "Build <D>"},
		{"Build 20261203", 0, "Build 20261203"},
		{"Build 202612011", 0, "Build 202612011"},
		{"Tuesday, December 1, 2026", 0, "<D>"}, // a full date is masked whole
	} {
		cls := m.classesOf(tc.in)
		if cls != tc.cls {
			t.Errorf("classesOf(%q) = %b, want %b", tc.in, cls, tc.cls)
		}
		if got := show(m.mask(tc.in, cls)); got != tc.want {
			t.Errorf("mask(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// Enabled by the later text, a form is masked in the earlier text too, whatever
	// day it names there.
	if got := show(m.mask("Today is Thursday, Nov 26", classWeekday|classDayMonth)); got != "Today is <D>, <D>" {
		t.Errorf("got %q", got)
	}
}

// TestMaskLinear checks that masking stays fast on text made of near-dates.
func TestMaskLinear(t *testing.T) {
	m := newMasker(testNow)
	s := strings.Repeat("2026-11-30T06:45:12.123+01:00 Monday 30 Nov 12:00, on 2026/1/1 ", 20000)
	start := time.Now()
	m.mask(s, m.classesOf(s))
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("masking %d bytes took %v", len(s), d)
	}
}
