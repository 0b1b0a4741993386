package web

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"
)

// durationBuckets are the upper bounds (seconds) of the request duration histogram.
var durationBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// metrics counts requests by route and status and their durations by route. Routes
// are gin's patterns, a bounded set. The refusals are counted by refusals.Log (the
// site's and /mcp's) and written with them.
type metrics struct {
	mu       sync.Mutex
	requests map[routeStatus]uint64
	hist     map[string]*histogram
}

type routeStatus struct {
	route  string
	status int
}

type histogram struct {
	counts []uint64 // per bucket, not cumulative
	count  uint64
	sum    float64
}

func newMetrics() *metrics {
	return &metrics{requests: make(map[routeStatus]uint64), hist: make(map[string]*histogram)}
}

func (m *metrics) observe(route string, status int, d time.Duration) {
	sec := d.Seconds()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests[routeStatus{route, status}]++
	h := m.hist[route]
	if h == nil {
		h = &histogram{counts: make([]uint64, len(durationBuckets))}
		m.hist[route] = h
	}
	if i, _ := slices.BinarySearch(durationBuckets, sec); i < len(durationBuckets) {
		h.counts[i]++
	}
	h.count++
	h.sum += sec
}

// write writes the metrics in the Prometheus text exposition format (version 0.0.4),
// with the statistics of the site's memos, the site's refusals by reason and, when
// mcp is not nil, /mcp's.
func (m *metrics) write(w io.Writer, memos map[string]memoStats, refused, mcp map[string]uint64) error {
	m.mu.Lock()
	keys := make([]routeStatus, 0, len(m.requests))
	for k := range m.requests {
		keys = append(keys, k)
	}
	reqs := make(map[routeStatus]uint64, len(m.requests))
	for k, v := range m.requests {
		reqs[k] = v
	}
	routes := make([]string, 0, len(m.hist))
	hists := make(map[string]histogram, len(m.hist))
	for r, h := range m.hist {
		routes = append(routes, r)
		hists[r] = histogram{counts: slices.Clone(h.counts), count: h.count, sum: h.sum}
	}
	m.mu.Unlock()

	slices.SortFunc(keys, func(a, b routeStatus) int {
		if a.route != b.route {
			if a.route < b.route {
				return -1
			}
			return 1
		}
		return a.status - b.status
	})
	slices.Sort(routes)

	var err error
	p := func(format string, args ...any) {
		if err == nil {
			_, err = fmt.Fprintf(w, format, args...)
		}
	}
	p("# HELP probity_http_requests_total HTTP requests by route and status.\n")
	p("# TYPE probity_http_requests_total counter\n")
	for _, k := range keys {
		p("probity_http_requests_total{route=%s,status=\"%d\"} %d\n", label(k.route), k.status, reqs[k])
	}
	p("# HELP probity_http_request_duration_seconds HTTP request durations by route.\n")
	p("# TYPE probity_http_request_duration_seconds histogram\n")
	for _, r := range routes {
		h := hists[r]
		var cum uint64
		for i, le := range durationBuckets {
			cum += h.counts[i]
			p("probity_http_request_duration_seconds_bucket{route=%s,le=\"%s\"} %d\n", label(r), strconv.FormatFloat(le, 'g', -1, 64), cum)
		}
		p("probity_http_request_duration_seconds_bucket{route=%s,le=\"+Inf\"} %d\n", label(r), h.count)
		p("probity_http_request_duration_seconds_sum{route=%s} %s\n", label(r), strconv.FormatFloat(h.sum, 'g', -1, 64))
		p("probity_http_request_duration_seconds_count{route=%s} %d\n", label(r), h.count)
	}
	p("# HELP probity_http_rate_limited_total Requests refused by the per-client rate limit.\n")
	p("# TYPE probity_http_rate_limited_total counter\n")
	p("probity_http_rate_limited_total %d\n", refused[reasonRateLimited])
	if mcp != nil {
		p("# HELP probity_mcp_refused_total Requests to /mcp refused, by reason (rate_limited, body_too_large, batch, response_too_large).\n")
		p("# TYPE probity_mcp_refused_total counter\n")
		for _, r := range slices.Sorted(maps.Keys(mcp)) {
			p("probity_mcp_refused_total{reason=%s} %d\n", label(r), mcp[r])
		}
	}

	names := slices.Sorted(maps.Keys(memos))
	p("# HELP probity_web_memo_lookups_total Lookups of the page memos (views and sections of immutable data), by result.\n")
	p("# TYPE probity_web_memo_lookups_total counter\n")
	for _, n := range names {
		p("probity_web_memo_lookups_total{memo=%s,result=\"hit\"} %d\n", label(n), memos[n].Hits)
		p("probity_web_memo_lookups_total{memo=%s,result=\"miss\"} %d\n", label(n), memos[n].Misses)
	}
	p("# HELP probity_web_memo_bytes Approximate bytes the page memos hold.\n")
	p("# TYPE probity_web_memo_bytes gauge\n")
	for _, n := range names {
		p("probity_web_memo_bytes{memo=%s} %d\n", label(n), memos[n].Bytes)
	}
	p("# HELP probity_web_memo_entries Values the page memos hold.\n")
	p("# TYPE probity_web_memo_entries gauge\n")
	for _, n := range names {
		p("probity_web_memo_entries{memo=%s} %d\n", label(n), memos[n].Entries)
	}
	return err
}

// label quotes a label value as the exposition format wants: backslash, double quote
// and line feed escaped.
func label(v string) string {
	b := make([]byte, 0, len(v)+2)
	b = append(b, '"')
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '\\':
			b = append(b, `\\`...)
		case '"':
			b = append(b, `\"`...)
		case '\n':
			b = append(b, `\n`...)
		default:
			b = append(b, v[i])
		}
	}
	return string(append(b, '"'))
}
