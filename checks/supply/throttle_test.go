package supply

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// quotaServer answers 200 to every request, records the test clock's time of each,
// and, when limit > 0, announces a GitHub-style quota of limit requests until reset
// for unauthenticated requests under /repos/ (GitHub's per-IP quota).
type quotaServer struct {
	*httptest.Server
	clk *clock

	mu        sync.Mutex
	times     []time.Time
	limit     int
	remaining int
	reset     time.Time
	status    int // 0: 200
}

func newQuotaServer(t *testing.T, clk *clock) *quotaServer {
	s := &quotaServer{clk: clk}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		now := clk.now()
		s.times = append(s.times, now)
		if s.limit > 0 && r.Header.Get("Authorization") == "" && strings.HasPrefix(r.URL.Path, "/repos/") {
			if !now.Before(s.reset) {
				s.remaining, s.reset = s.limit, now.Add(time.Hour)
			}
			if s.remaining == 0 {
				w.Header().Set("X-RateLimit-Remaining", "0")
				w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(s.reset.Unix(), 10))
				w.WriteHeader(http.StatusForbidden)
				return
			}
			s.remaining--
			w.Header().Set("X-RateLimit-Limit", strconv.Itoa(s.limit))
			w.Header().Set("X-RateLimit-Remaining", strconv.Itoa(s.remaining))
			w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(s.reset.Unix(), 10))
		}
		if s.status != 0 {
			w.WriteHeader(s.status)
			return
		}
		w.Header().Set("ETag", `"same"`)
		if r.Header.Get("If-None-Match") == `"same"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		fmt.Fprint(w, `{}`)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *quotaServer) sent() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.times)
}

func (s *quotaServer) host(t *testing.T) string {
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// throttledClient is a Client whose clock is clk and whose sleeps advance it (no wall
// clock), with the GitHub defaults applied to the test server's host.
func throttledClient(t *testing.T, srv *quotaServer, clk *clock, cfg ClientConfig) (*Client, *[]time.Duration) {
	t.Helper()
	if cfg.Limits == nil {
		cfg.Limits = DefaultLimits()
		cfg.Limits[srv.host(t)] = cfg.Limits[hostGitHub]
	}
	cfg.AllowLoopback, cfg.Now = true, clk.now
	c := NewClient(cfg)
	var mu sync.Mutex
	slept := &[]time.Duration{}
	c.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		*slept = append(*slept, d)
		clk.advance(d)
		return ctx.Err()
	}
	return c, slept
}

func githubRequest(srv *quotaServer, i int, auth string) request {
	return request{service: "GitHub", url: fmt.Sprintf("%s/repos/o/r%d", srv.URL, i), auth: auth}
}

// TestThrottleGitHubHour: without a token the 61st request within an hour is not sent
// within that hour (GitHub allows 60); with a token 61 go at once.
func TestThrottleGitHubHour(t *testing.T) {
	t.Run("without a token, waiting", func(t *testing.T) {
		clk := &clock{t: fixtureNow}
		srv := newQuotaServer(t, clk)
		c, slept := throttledClient(t, srv, clk, ClientConfig{MaxThrottleWait: 2 * time.Hour})
		for i := range 61 {
			if _, err := c.do(context.Background(), githubRequest(srv, i, "")); err != nil {
				t.Fatalf("request %d: %v", i+1, err)
			}
		}
		sent := srv.sent()
		inHour := 0
		for _, at := range sent {
			if at.Before(fixtureNow.Add(time.Hour)) {
				inHour++
			}
		}
		if len(sent) != 61 || inHour > 60 || sent[60].Before(fixtureNow.Add(time.Hour)) {
			t.Errorf("%d requests in the first hour, the 61st at %v", inHour, sent[60].Sub(fixtureNow))
		}
		// Bursts of 10, then one every 72 s (50 an hour).
		if len(*slept) != 51 || (*slept)[0] != 72*time.Second || !sent[9].Equal(fixtureNow) {
			t.Errorf("slept %v", *slept)
		}
	})
	t.Run("without a token, refused beyond MaxThrottleWait", func(t *testing.T) {
		clk := &clock{t: fixtureNow}
		srv := newQuotaServer(t, clk)
		c, slept := throttledClient(t, srv, clk, ClientConfig{})
		var err error
		for i := range 61 {
			if _, err = c.do(context.Background(), githubRequest(srv, i, "")); err != nil {
				break
			}
		}
		if !errors.Is(err, errThrottled) || !strings.Contains(err.Error(), "GitHub throttled by Probity's own limit for "+srv.host(t)+" without a token (50 requests an hour, bursts of 10), retry after") ||
			!strings.Contains(err.Error(), "retry after 2026-11-30T12:01:12Z") {
			t.Errorf("err = %v", err)
		}
		if n := len(srv.sent()); n != 10 || len(*slept) != 0 {
			t.Errorf("%d sent, slept %v; want 10 sent at once and no wait", n, *slept)
		}
		// The refused request took nothing: 72 s later exactly one more goes.
		clk.advance(72 * time.Second)
		if _, err := c.do(context.Background(), githubRequest(srv, 100, "")); err != nil {
			t.Errorf("after 72 s: %v", err)
		}
		if _, err := c.do(context.Background(), githubRequest(srv, 101, "")); !errors.Is(err, errThrottled) {
			t.Errorf("second after 72 s: %v", err)
		}
	})
	t.Run("the context's deadline bounds the wait", func(t *testing.T) {
		clk := &clock{t: fixtureNow}
		srv := newQuotaServer(t, clk)
		c, _ := throttledClient(t, srv, clk, ClientConfig{MaxThrottleWait: 2 * time.Hour})
		for i := range 10 {
			if _, err := c.do(context.Background(), githubRequest(srv, i, "")); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := c.do(ctx, githubRequest(srv, 10, "")); !errors.Is(err, errThrottled) {
			t.Errorf("err = %v, want throttled (a 72 s wait beyond a 1 min deadline)", err)
		}
	})
	t.Run("with a token", func(t *testing.T) {
		clk := &clock{t: fixtureNow}
		srv := newQuotaServer(t, clk)
		c, slept := throttledClient(t, srv, clk, ClientConfig{})
		for i := range 61 {
			if _, err := c.do(context.Background(), githubRequest(srv, i, "Bearer t")); err != nil {
				t.Fatalf("request %d: %v", i+1, err)
			}
		}
		if sent := srv.sent(); len(sent) != 61 || !sent[60].Equal(fixtureNow) || len(*slept) != 0 {
			t.Errorf("%d sent, the last at +%v, slept %v", len(sent), sent[len(sent)-1].Sub(fixtureNow), *slept)
		}
	})
}

// TestThrottleServerQuota: X-RateLimit-Remaining 0 makes the client wait until the
// reset before sending; the last tenth of an announced quota is spread until the reset.
func TestThrottleServerQuota(t *testing.T) {
	t.Run("remaining 0: wait for the reset", func(t *testing.T) {
		clk := &clock{t: fixtureNow}
		srv := newQuotaServer(t, clk)
		srv.limit, srv.remaining, srv.reset = 60, 1, fixtureNow.Add(20*time.Second)
		c, slept := throttledClient(t, srv, clk, ClientConfig{Limits: map[string]HostLimit{}})
		for i := range 2 {
			if _, err := c.do(context.Background(), githubRequest(srv, i, "")); err != nil {
				t.Fatalf("request %d: %v", i+1, err)
			}
		}
		sent := srv.sent()
		if !slices.Equal(*slept, []time.Duration{20 * time.Second}) || len(sent) != 2 || !sent[1].Equal(fixtureNow.Add(20*time.Second)) {
			t.Errorf("slept %v, sent %v", *slept, sent)
		}
	})
	t.Run("remaining 0, reset beyond the wait: quota exhausted, nothing sent", func(t *testing.T) {
		clk := &clock{t: fixtureNow}
		srv := newQuotaServer(t, clk)
		srv.limit, srv.remaining, srv.reset = 60, 1, fixtureNow.Add(30*time.Minute)
		c, slept := throttledClient(t, srv, clk, ClientConfig{Limits: map[string]HostLimit{}})
		c.do(context.Background(), githubRequest(srv, 0, ""))
		_, err := c.do(context.Background(), githubRequest(srv, 1, ""))
		if !errors.Is(err, errQuota) || !strings.Contains(err.Error(), "GitHub quota exhausted until 2026-11-30T12:30:00Z") {
			t.Errorf("err = %v", err)
		}
		if len(srv.sent()) != 1 || len(*slept) != 0 {
			t.Errorf("%d sent, slept %v", len(srv.sent()), *slept)
		}
	})
	t.Run("the last tenth is spread until the reset", func(t *testing.T) {
		clk := &clock{t: fixtureNow}
		srv := newQuotaServer(t, clk)
		srv.limit, srv.remaining, srv.reset = 60, 4, fixtureNow.Add(60*time.Second)
		c, slept := throttledClient(t, srv, clk, ClientConfig{Limits: map[string]HostLimit{}, MaxThrottleWait: time.Hour})
		for i := range 5 {
			if _, err := c.do(context.Background(), githubRequest(srv, i, "")); err != nil {
				t.Fatalf("request %d: %v", i+1, err)
			}
		}
		// After the first answer (3 left until +60 s): +0, +20 s, +40 s, then the
		// reset at +60 s; no request is answered 403.
		var at []time.Duration
		for _, s := range srv.sent() {
			at = append(at, s.Sub(fixtureNow))
		}
		want := []time.Duration{0, 0, 20 * time.Second, 40 * time.Second, 60 * time.Second}
		if !slices.Equal(at, want) {
			t.Errorf("sent at %v (slept %v), want %v", at, *slept, want)
		}
	})
	t.Run("other services and the token's quota are apart", func(t *testing.T) {
		clk := &clock{t: fixtureNow}
		srv := newQuotaServer(t, clk)
		srv.limit, srv.remaining, srv.reset = 60, 1, fixtureNow.Add(30*time.Minute)
		c, _ := throttledClient(t, srv, clk, ClientConfig{Limits: map[string]HostLimit{}})
		c.do(context.Background(), githubRequest(srv, 0, ""))
		if _, err := c.do(context.Background(), githubRequest(srv, 1, "")); !errors.Is(err, errQuota) {
			t.Errorf("GitHub without a token: %v", err)
		}
		if _, err := c.do(context.Background(), request{service: "npm", url: srv.URL + "/left-pad"}); err != nil {
			t.Errorf("npm: %v", err)
		}
		if _, err := c.do(context.Background(), githubRequest(srv, 2, "Bearer t")); err != nil {
			t.Errorf("with a token: %v", err)
		}
		if n := len(srv.sent()); n != 3 {
			t.Errorf("%d sent, want 3", n)
		}
	})
}

// TestThrottleCacheHitsAreFree: responses served from the cache take no token; a
// revalidation does, except a 304 to GitHub with a token, which GitHub does not count.
func TestThrottleCacheHitsAreFree(t *testing.T) {
	one := Limit{Requests: 1, Per: time.Hour, Burst: 1}
	tests := []struct {
		name       string
		auth       string
		free304    bool
		wantRefuse bool // the revalidation after MaxAge is refused
	}{
		{name: "without a token, a revalidation takes a token", wantRefuse: true},
		{name: "with a token, 304s are free", auth: "Bearer t", free304: true},
		{name: "with a token where 304s count", auth: "Bearer t", wantRefuse: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := &clock{t: fixtureNow}
			srv := newQuotaServer(t, clk)
			limits := map[string]HostLimit{srv.host(t): {Anonymous: one, Token: one, FreeNotModified: tt.free304}}
			c, _ := throttledClient(t, srv, clk, ClientConfig{Limits: limits, MaxAge: 10 * time.Minute})
			req := githubRequest(srv, 0, tt.auth)
			for range 5 { // one request, four fresh hits
				if _, err := c.do(context.Background(), req); err != nil {
					t.Fatalf("fresh: %v", err)
				}
			}
			if n := len(srv.sent()); n != 1 {
				t.Fatalf("%d sent, want 1", n)
			}
			clk.advance(11 * time.Minute)
			_, err := c.do(context.Background(), req)
			if tt.wantRefuse != errors.Is(err, errThrottled) {
				t.Fatalf("revalidation: %v", err)
			}
			if tt.wantRefuse {
				return
			}
			if n := len(srv.sent()); n != 2 {
				t.Fatalf("%d sent, want the revalidation", n)
			}
			// A changed resource answers 200 to the conditional request: charged
			// after the fact, so the next new request waits beyond MaxThrottleWait.
			srv.mu.Lock()
			srv.status = http.StatusOK
			srv.mu.Unlock()
			clk.advance(11 * time.Minute)
			if _, err := c.do(context.Background(), req); err != nil {
				t.Fatalf("revalidation answered 200: %v", err)
			}
			if _, err := c.do(context.Background(), githubRequest(srv, 1, tt.auth)); !errors.Is(err, errThrottled) {
				t.Errorf("after a charged revalidation: %v", err)
			}
		})
	}
}

// TestDefaultLimitsUnderQuota: each default lets at most its source's quota through in
// any window of the quota's length, and GitHub's token limit stays under the secondary
// limit of 900 requests a minute.
func TestDefaultLimitsUnderQuota(t *testing.T) {
	d := DefaultLimits()
	gh := d[hostGitHub]
	if n := gh.Anonymous.Burst + gh.Anonymous.Requests; gh.Anonymous.Per != time.Hour || n > 60 {
		t.Errorf("GitHub without a token: %d an hour", n)
	}
	if n := gh.Token.Burst + gh.Token.Requests; gh.Token.Per != time.Hour || n > 5000 {
		t.Errorf("GitHub with a token: %d an hour", n)
	}
	if perMinute := gh.Token.Burst + gh.Token.Requests/60; perMinute > 900 {
		t.Errorf("GitHub with a token: %d a minute", perMinute)
	}
	for _, host := range []string{hostNPM, hostPyPI, hostDepsDev, hostOSV, hostScorecard} {
		l, ok := d[host]
		if !ok || l.Anonymous.off() || l.Source == "" {
			t.Errorf("%s: %+v", host, l)
		}
	}
	for host, l := range d {
		if l.Source == "" || strings.ToLower(host) != host {
			t.Errorf("%s: no source, or not lower case", host)
		}
	}
}

// BenchmarkThrottleReserve measures the throttle's bookkeeping per request (a bucket
// with room, no wait), which every sent request pays.
func BenchmarkThrottleReserve(b *testing.B) {
	th := newThrottle(map[string]HostLimit{"h": {Anonymous: Limit{Requests: 1 << 30, Per: time.Second, Burst: 1 << 30}}}, time.Now)
	k := bucketKey{service: "npm", host: "h"}
	for b.Loop() {
		g, err := th.reserve(k, false, time.Second)
		if err != nil {
			b.Fatal(err)
		}
		th.observe(k, g, http.StatusOK, nil)
	}
}
