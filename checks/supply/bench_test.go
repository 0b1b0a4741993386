package supply

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// BenchmarkScore1000WarmCache measures the supply checks of 1,000 entries from a warm
// cache, end to end: Collect (every source answered from the client's cache, as it is
// between weekly runs; ETag revalidation is not needed within MaxAge) and Evaluate. The
// entries cycle through the fixture packages (npm, PyPI, GitHub repositories with a
// bundle manifest), so it is the cached path that is measured, not the fixture server.
// Goal: ≤ 5 s per 1,000 entries.
//
//	go test ./checks/supply -run X -bench Score1000WarmCache -benchtime 3x
func BenchmarkScore1000WarmCache(b *testing.B) {
	s := newTestSources(b)
	now := time.Now()
	c := NewCollector(CollectorConfig{
		NPM: s.npm, PyPI: s.pypi, GitHub: s.github, DepsDev: s.depsdev, ScorecardAPI: s.scorecard, OSV: s.osv,
		Now: func() time.Time { return now },
	})
	entries := []struct{ kind, locator string }{
		{"npm", "pkg:npm/%40modelcontextprotocol/server-filesystem"},
		{"npm", "pkg:npm/%40modelcontextprotocol/sdk"},
		{"pypi", "pkg:pypi/mcp-server-fetch"},
		{"github", "https://github.com/modelcontextprotocol/servers"},
	}
	tools := []json.RawMessage{json.RawMessage(`{"name":"read_file","description":"Read a file.","inputSchema":{"type":"object"}}`)}
	ctx := context.Background()
	for _, e := range entries { // warm the cache
		c.Collect(ctx, TargetOf(e.kind, e.locator), tools, nil)
	}
	popular, err := EmbeddedPopularList()
	if err != nil {
		b.Fatal(err)
	}
	verified := 0
	for b.Loop() {
		for i := range 1000 {
			e := entries[i%len(entries)]
			f := c.Collect(ctx, TargetOf(e.kind, e.locator), tools, nil)
			if Evaluate(f, Options{Now: now, Popular: popular}).Verified {
				verified++
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/1000-entries")
}
