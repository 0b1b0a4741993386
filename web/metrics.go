package web

import (
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// durationBuckets are the upper bounds (seconds) of the request duration histogram.
var durationBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// metrics is the site's /metrics, on prometheus/client_golang with a registry of its
// own (no global state: every site New builds has its own). It holds the requests by
// route and status and their durations by route (routes are gin's patterns, a bounded
// set), the Go runtime's and the process's collectors, and, read at each scrape, the
// counts kept elsewhere (metricsSources). The names and labels are the ones the
// hand-written exposition before it used; TestMetricNamesKept lists them.
type metrics struct {
	requests  *prometheus.CounterVec
	durations *prometheus.HistogramVec
	handler   http.Handler
}

// metricsSources are the counts /metrics reads at each scrape.
type metricsSources struct {
	// memos are the statistics of the site's page memos by name.
	memos func() map[string]memoStats
	// refused are the site's refusals by reason (refusals.Log.Counts).
	refused func() map[string]uint64
	// mcp are /mcp's refusals by reason; nil without /mcp.
	mcp func() map[string]uint64
}

// refusalCounter is the /mcp handler's count of refused requests by reason
// (mcpserver.Handler).
type refusalCounter interface {
	Refusals() map[string]uint64
}

func newMetrics(src metricsSources, log *slog.Logger) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "probity_http_requests_total",
			Help: "HTTP requests by route and status.",
		}, []string{"route", "status"}),
		durations: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "probity_http_request_duration_seconds",
			Help:    "HTTP request durations by route.",
			Buckets: durationBuckets,
		}, []string{"route"}),
	}
	reg := prometheus.NewRegistry()
	// The collectors are fixed and their names distinct: registering them cannot fail
	// (TestMetricNamesKept scrapes every one).
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.durations, src,
	)
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:      promLogger{log},
		ErrorHandling: promhttp.ContinueOnError, // a collector's error costs its metric, not the page
	})
	return m
}

// observe counts one request to route answered with status after d.
func (m *metrics) observe(route string, status int, d time.Duration) {
	m.requests.WithLabelValues(route, statusLabel(status)).Inc()
	m.durations.WithLabelValues(route).Observe(d.Seconds())
}

// statusLabels are the status label values of 100 to 599, spelled once.
var statusLabels = func() (l [500]string) {
	for i := range l {
		l[i] = strconv.Itoa(100 + i)
	}
	return l
}()

// statusLabel is status as a label value without allocating for a valid status.
func statusLabel(status int) string {
	if status >= 100 && status < 600 {
		return statusLabels[status-100]
	}
	return strconv.Itoa(status)
}

// ServeHTTP writes the metrics in the format the request negotiates (the Prometheus
// text format 0.0.4 when it asks for none).
func (m *metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) { m.handler.ServeHTTP(w, r) }

var (
	rateLimitedDesc = prometheus.NewDesc("probity_http_rate_limited_total",
		"Requests refused by the per-client rate limit.", nil, nil)
	mcpRefusedDesc = prometheus.NewDesc("probity_mcp_refused_total",
		"Requests to /mcp refused, by reason (rate_limited, body_too_large, batch, response_too_large).", []string{"reason"}, nil)
	memoLookupsDesc = prometheus.NewDesc("probity_web_memo_lookups_total",
		"Lookups of the page memos (views and sections of immutable data), by result.", []string{"memo", "result"}, nil)
	memoBytesDesc = prometheus.NewDesc("probity_web_memo_bytes",
		"Approximate bytes the page memos hold.", []string{"memo"}, nil)
	memoEntriesDesc = prometheus.NewDesc("probity_web_memo_entries",
		"Values the page memos hold.", []string{"memo"}, nil)
)

// Describe implements prometheus.Collector.
func (s metricsSources) Describe(ch chan<- *prometheus.Desc) {
	ch <- rateLimitedDesc
	if s.mcp != nil {
		ch <- mcpRefusedDesc
	}
	ch <- memoLookupsDesc
	ch <- memoBytesDesc
	ch <- memoEntriesDesc
}

// Collect implements prometheus.Collector: the counts as they are now.
func (s metricsSources) Collect(ch chan<- prometheus.Metric) {
	// The label counts match the descriptions above: MustNewConstMetric cannot panic.
	ch <- prometheus.MustNewConstMetric(rateLimitedDesc, prometheus.CounterValue, float64(s.refused()[reasonRateLimited]))
	if s.mcp != nil {
		for reason, n := range s.mcp() {
			ch <- prometheus.MustNewConstMetric(mcpRefusedDesc, prometheus.CounterValue, float64(n), reason)
		}
	}
	memos := s.memos()
	for _, name := range slices.Sorted(maps.Keys(memos)) {
		st := memos[name]
		ch <- prometheus.MustNewConstMetric(memoLookupsDesc, prometheus.CounterValue, float64(st.Hits), name, "hit")
		ch <- prometheus.MustNewConstMetric(memoLookupsDesc, prometheus.CounterValue, float64(st.Misses), name, "miss")
		ch <- prometheus.MustNewConstMetric(memoBytesDesc, prometheus.GaugeValue, float64(st.Bytes), name)
		ch <- prometheus.MustNewConstMetric(memoEntriesDesc, prometheus.GaugeValue, float64(st.Entries), name)
	}
}

// promLogger sends promhttp's errors (a collector that failed, a client gone while
// the page was written) to the site's log.
type promLogger struct{ log *slog.Logger }

func (l promLogger) Println(v ...any) { l.log.Error("metrics: " + fmt.Sprint(v...)) }
