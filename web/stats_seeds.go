package web

import "github.com/probity-dev/probity/history/stats"

// The statistics page's tables of seed 001's daily check and seed 003's per-tool
// tallies, worded and formatted as Report.Markdown words them (the sentences come
// from the stats package, so both say the same).

// dailyTable is seed 001's changed reads per day.
func dailyTable(d stats.DailyChanges) statsTable {
	t := statsTable{ID: "daily-changes", Title: "Changed reads per day",
		Definition: d.DailyDefinition(),
		Head:       []string{"Day", "Reads", "Changed", "Per 1,000 reads", "Most changed in one hour"},
		Notes:      []string{d.DailyRange()},
	}
	for _, dc := range d.Days {
		r := dc.DayRow()
		t.Rows = append(t.Rows, r[:])
	}
	return t
}

// toolChangesTable is seed 003's per-tool tallies.
func toolChangesTable(tc stats.ToolChanges) statsTable {
	t := statsTable{ID: "tool-changes", Title: "Single tools in the changed lists",
		Definition: stats.ToolChangesDefinition,
		Head:       []string{"Change", "Count", "Servers"},
		Notes:      []string{tc.ToolChangesNote()},
	}
	for _, r := range tc.ToolChangeRows() {
		t.Rows = append(t.Rows, r[:])
	}
	return t
}
