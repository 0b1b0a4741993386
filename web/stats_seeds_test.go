package web_test

import (
	"html"
	"strings"
	"testing"

	"github.com/probity-dev/probity/history/stats"
)

// TestStatsPageSaysWhatDriftCompares: the page says the drift tables compare the
// seeds' digest, never that paginated servers had only their first page compared, and
// shows seed 001's duplicate check, its changed reads per day and seed 003's per-tool
// table.
func TestStatsPageSaysWhatDriftCompares(t *testing.T) {
	f := setup(t, generous)
	rec := f.get(t, "GET", "/stats")
	if rec.Code != 200 {
		t.Fatalf("/stats: %d", rec.Code)
	}
	page := rec.Body.String()
	for _, want := range []string{
		html.EscapeString(stats.DigestNote),
		html.EscapeString(stats.PaginatedNote),
		"No change came from a repeated name alone",
		`<section class="stats-table" id="daily-changes">`,
		`<section class="stats-table" id="tool-changes">`,
		`<th scope="row">Parameter types number → integer</th>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("/stats lacks %q", want)
		}
	}
	if strings.Contains(page, "only the first page") {
		t.Error("/stats says paginated servers had only the first page compared")
	}
}
