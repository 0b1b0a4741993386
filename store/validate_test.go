package store

import "testing"

func TestFreeSlug(t *testing.T) {
	for _, c := range []struct {
		base  string
		taken []string
		want  string
	}{
		{"a", nil, "a"},
		{"a", []string{"a-2"}, "a"},
		{"a", []string{"a"}, "a-2"},
		{"a", []string{"a", "a-2", "a-4"}, "a-3"},
		{"a", []string{"a", "a-b", "a-2-2", "a-02", "a-1", "a-"}, "a-2"},
		{"a-2", []string{"a-2"}, "a-2-2"},
		{"a", []string{"a", "a-99999999999999999999"}, "a-2"},
	} {
		if got := freeSlug(c.base, c.taken); got != c.want {
			t.Errorf("freeSlug(%q, %q) = %q, want %q", c.base, c.taken, got, c.want)
		}
	}
}

func TestUptimeDelta(t *testing.T) {
	for _, c := range []struct {
		before, after   string
		online, counted int
	}{
		{"", DayNotCounted, 0, 0},
		{"", DayOnline, 1, 1},
		{"", DayOffline, 0, 1},
		{DayNotCounted, DayOnline, 1, 1},
		{DayNotCounted, DayOffline, 0, 1},
		{DayOnline, DayOffline, -1, 0},
		{DayOnline, DayOnline, 0, 0},
		{DayOffline, DayOffline, 0, 0},
	} {
		if o, n := uptimeDelta(c.before, c.after); o != c.online || n != c.counted {
			t.Errorf("uptimeDelta(%q, %q) = %d, %d; want %d, %d", c.before, c.after, o, n, c.online, c.counted)
		}
	}
}

func TestCheckDay(t *testing.T) {
	for day, ok := range map[string]bool{
		"2026-03-01": true, "2026-02-29": false, "2026-3-1": false, "2026-03-01T00:00:00Z": false,
		"": false, " 2026-03-01": false, "+2026-03-01": false,
	} {
		if err := checkDay(day); (err == nil) != ok {
			t.Errorf("checkDay(%q) = %v", day, err)
		}
	}
}
