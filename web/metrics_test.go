package web

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// TestMetricNamesKept holds /metrics on client_golang to the exposition people already
// scrape. testdata/metrics_before.txt is what the hand-written exposition it replaced
// wrote for the same requests and counts (every metric name, label and HELP text, in
// the text format 0.0.4); every line of it must still be there, word for word. The Go
// runtime's and the process's metrics come on top.
func TestMetricNamesKept(t *testing.T) {
	before, err := os.ReadFile("testdata/metrics_before.txt")
	if err != nil {
		t.Fatal(err)
	}
	m := newMetrics(metricsSources{
		memos: func() map[string]memoStats {
			return map[string]memoStats{"tools_html": {Hits: 5, Misses: 2, Bytes: 1024, Entries: 3}, `odd"name\x`: {Hits: 1}}
		},
		refused: func() map[string]uint64 { return map[string]uint64{reasonRateLimited: 3} },
		mcp:     func() map[string]uint64 { return map[string]uint64{"rate_limited": 4, "batch": 1} },
	}, slog.New(slog.DiscardHandler))
	m.observe("/", 200, 3*time.Millisecond)
	m.observe("/s/:slug", 429, 5*time.Millisecond) // on a bucket's bound: counted in it
	m.observe("/s/:slug", 429, 2*time.Second)
	m.observe("/s/:slug", 200, 20*time.Second)

	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("%d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	got := make(map[string]bool)
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		got[line] = true
	}
	for _, line := range strings.Split(strings.TrimSpace(string(before)), "\n") {
		if !got[line] {
			t.Errorf("missing: %s", line)
		}
	}
	for _, name := range []string{"go_goroutines ", "go_memstats_heap_alloc_bytes ", "go_gc_duration_seconds_count ", "process_cpu_seconds_total ", "process_resident_memory_bytes "} {
		if !strings.Contains(rec.Body.String(), "\n"+name) {
			t.Errorf("no %s", name)
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", rec.Body)
	}
}

// TestMetricsWithoutMCP: without /mcp there is no probity_mcp_refused_total, as
// before.
func TestMetricsWithoutMCP(t *testing.T) {
	m := newMetrics(metricsSources{
		memos:   func() map[string]memoStats { return nil },
		refused: func() map[string]uint64 { return nil },
	}, slog.New(slog.DiscardHandler))
	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rec.Body.String()
	if strings.Contains(body, "probity_mcp_refused_total") || !strings.Contains(body, "\nprobity_http_rate_limited_total 0\n") {
		t.Errorf("/metrics:\n%s", body)
	}
}

// BenchmarkObserve is what counting one request costs (every request pays it), over
// the site's routes and a few statuses.
func BenchmarkObserve(b *testing.B) {
	m := newMetrics(metricsSources{memos: func() map[string]memoStats { return nil }, refused: func() map[string]uint64 { return nil }}, slog.New(slog.DiscardHandler))
	routes := []string{"/", "/s/:slug", "/s/:slug/history", "/api/v1/servers", "/badge/:file", "/changes", "/healthz"}
	statuses := []int{200, 200, 200, 304, 404, 429}
	for i := 0; b.Loop(); i++ {
		m.observe(routes[i%len(routes)], statuses[i%len(statuses)], time.Duration(i%5000)*time.Microsecond)
	}
}

func TestStatusLabel(t *testing.T) {
	for status, want := range map[int]string{100: "100", 200: "200", 429: "429", 499: "499", 599: "599", 600: "600", 42: "42", -1: "-1"} {
		if got := statusLabel(status); got != want {
			t.Errorf("statusLabel(%d) = %q, want %q", status, got, want)
		}
	}
}
