package web_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/probity-dev/probity/web"
	"github.com/probity-dev/probity/web/mcpserver"
)

// fakeClock is a settable clock shared by the site and /mcp.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// floodSite is a site over an empty store with /mcp, a strict rate limit, the clock clk
// and its log in logs.
func floodSite(t *testing.T, clk *fakeClock, logs *strings.Builder) http.Handler {
	t.Helper()
	st, doc, _ := openStore(t, clk.now())
	log := slog.New(slog.NewTextHandler(&syncWriter{b: logs}, nil))
	mcp, err := mcpserver.New(mcpserver.Config{Store: st, BaseURL: "https://probity.test", Logger: log, Now: clk.now, RateLimit: 0.001, Burst: 1})
	if err != nil {
		t.Fatal(err)
	}
	h, err := web.New(web.Config{Store: st, Keys: doc, BaseURL: "https://probity.test", Now: clk.now, Logger: log,
		RateLimit: web.RateLimit{PerSecond: 0.001, Burst: 1}, MCP: mcp})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// A flood of 429s from one address writes at most one log line per client per minute,
// on the site and on /mcp, and /metrics counts every refusal.
func TestRateLimitFloodLogsOncePerMinute(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)}
	logs := &strings.Builder{}
	h := floodSite(t, clk, logs)
	send := func(method, path, remote string) int {
		var r *http.Request
		if method == http.MethodPost {
			r = httptest.NewRequest(method, path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Accept", "application/json, text/event-stream")
		} else {
			r = httptest.NewRequest(method, path, nil)
		}
		r.RemoteAddr = remote
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	// Three minutes, 100 requests a second to the site and 20 to /mcp from one address,
	// and a single request from another.
	const seconds = 180
	siteRefused, mcpRefused := 0, 0
	for s := range seconds {
		for i := range 100 {
			path := "/"
			if i%2 == 1 {
				path = "/s/nothing-here"
			}
			if send(http.MethodGet, path, "203.0.113.7:4000") == http.StatusTooManyRequests {
				siteRefused++
			}
		}
		for range 20 {
			if send(http.MethodPost, "/mcp", "203.0.113.7:4001") == http.StatusTooManyRequests {
				mcpRefused++
			}
		}
		if s == 10 {
			send(http.MethodGet, "/", "198.51.100.9:5000")
		}
		clk.add(time.Second)
	}
	if siteRefused < seconds*100-2 || mcpRefused < seconds*20-2 {
		t.Fatalf("only %d site and %d /mcp requests refused", siteRefused, mcpRefused)
	}
	text := logs.String()
	refusedLines := regexp.MustCompile(`(?m)^.*msg="request refused".*client=203\.0\.113\.7.*$`).FindAllString(text, -1)
	var site, mcp int
	for _, l := range refusedLines {
		if strings.Contains(l, "route=") {
			site++
		} else {
			mcp++
		}
	}
	if site < 1 || site > seconds/60 || mcp < 1 || mcp > seconds/60 {
		t.Errorf("%d site and %d /mcp refusal lines in %d minutes, want 1 to %d each:\n%s", site, mcp, seconds/60, seconds/60, strings.Join(refusedLines, "\n"))
	}
	if n := strings.Count(text, "status=429"); n > 0 {
		t.Errorf("%d request lines of 429s, want none", n)
	}
	if len(text) > 8<<10 {
		t.Errorf("%d bytes of log for %d refusals", len(text), siteRefused+mcpRefused)
	}
	// Every refusal is counted. /metrics is exempt from the limit.
	r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	r.RemoteAddr = "203.0.113.7:4000"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	m := w.Body.String()
	for _, want := range []string{
		"probity_http_rate_limited_total " + strconv.Itoa(siteRefused),
		`probity_mcp_refused_total{reason="rate_limited"} ` + strconv.Itoa(mcpRefused),
		fmt.Sprintf(`probity_http_requests_total{route="/",status="429"} %d`, siteRefused/2),
	} {
		if !strings.Contains(m, want+"\n") {
			t.Errorf("metrics lack %q:\n%s", want, m)
		}
	}
}
