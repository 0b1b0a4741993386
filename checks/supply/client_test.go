package supply

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestClientRateLimits(t *testing.T) {
	tests := []struct {
		name       string
		pkg        string
		maxRetries int
		want       SourceOutcome
		wantErr    string
		wantSlept  []time.Duration
		wantHits   int
	}{
		{name: "429 with Retry-After, then 200", pkg: "probity-fixture-busy", want: SourceOK, wantSlept: []time.Duration{time.Second}, wantHits: 2},
		{name: "429 asking beyond the 30 s budget", pkg: "probity-fixture-throttled", want: SourceFailed,
			wantErr: "asking to wait 2m0s, beyond the 30s budget", wantHits: 1},
		{name: "429 with no retries allowed", pkg: "probity-fixture-busy", maxRetries: -1, want: SourceFailed,
			wantErr: "answered 429 after 0 retries", wantHits: 1},
		{name: "503 without Retry-After", pkg: "probity-fixture-unavailable", want: SourceFailed, wantErr: "npm answered 503", wantHits: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startFixtureServer(t)
			c, slept := testClient(t, ClientConfig{MaxRetries: tt.maxRetries})
			n := NewNPM(NPMConfig{BaseURL: srv.base("npm"), Client: c})
			got := n.Package(context.Background(), tt.pkg)
			if got.Facts.Source.Outcome != tt.want || !strings.Contains(got.Facts.Source.Error, tt.wantErr) {
				t.Fatalf("source = %+v, want %s with %q", got.Facts.Source, tt.want, tt.wantErr)
			}
			if !slices.Equal(*slept, tt.wantSlept) {
				t.Errorf("slept %v, want %v", *slept, tt.wantSlept)
			}
			if h := srv.hits("npm", "/"+tt.pkg); h != tt.wantHits {
				t.Errorf("%d requests, want %d", h, tt.wantHits)
			}
			if tt.want == SourceOK && got.Facts.Latest != "0.3.0" {
				t.Errorf("latest = %q", got.Facts.Latest)
			}
		})
	}
}

func TestClientRetryWaitIsBoundedInTotal(t *testing.T) {
	// Three answers of Retry-After: 12 fit the 30 s budget twice, not three times.
	var hits int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		w.Header().Set("Retry-After", "12")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	c, slept := testClient(t, ClientConfig{MaxRetries: 5})
	_, err := c.do(context.Background(), request{service: "test", url: srv.URL})
	if !errors.Is(err, errRateLimited) || !strings.Contains(err.Error(), "asking to wait 12s, beyond the 30s budget") {
		t.Fatalf("err = %v", err)
	}
	if !slices.Equal(*slept, []time.Duration{12 * time.Second, 12 * time.Second}) || hits != 3 {
		t.Errorf("slept %v over %d requests", *slept, hits)
	}
}

func TestClientMalformedAndOversize(t *testing.T) {
	srv := startFixtureServer(t)
	tests := []struct {
		name    string
		maxBody int64
		pkg     string
		wantErr string
	}{
		{"malformed JSON", 0, "probity-fixture-malformed", "malformed response"},
		{"oversize body", 1024, "@modelcontextprotocol/server-filesystem", "response exceeds 1024 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := testClient(t, ClientConfig{})
			n := NewNPM(NPMConfig{BaseURL: srv.base("npm"), Client: c, MaxBody: tt.maxBody})
			got := n.Package(context.Background(), tt.pkg)
			if got.Facts.Source.Outcome != SourceFailed || !strings.Contains(got.Facts.Source.Error, tt.wantErr) {
				t.Fatalf("source = %+v, want Failed with %q", got.Facts.Source, tt.wantErr)
			}
		})
	}
}

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestClientCache(t *testing.T) {
	const path = "/@modelcontextprotocol%2Fserver-filesystem"
	const name = "@modelcontextprotocol/server-filesystem"
	t.Run("warm cache serves without a request", func(t *testing.T) {
		srv := startFixtureServer(t)
		clk := &clock{t: fixtureNow}
		c, _ := testClient(t, ClientConfig{Now: clk.now})
		n := NewNPM(NPMConfig{BaseURL: srv.base("npm"), Client: c})
		first := n.Package(context.Background(), name)
		clk.advance(59 * time.Minute)
		second := n.Package(context.Background(), name)
		if srv.hits("npm", path) != 1 {
			t.Fatalf("%d requests, want 1", srv.hits("npm", path))
		}
		if first.Facts.Latest != "2026.8.31" || second.Facts.Latest != first.Facts.Latest || !second.Facts.Source.FetchedAt.Equal(first.Facts.Source.FetchedAt) {
			t.Errorf("first %+v, second %+v", first.Facts, second.Facts)
		}
	})
	t.Run("stale entry is revalidated with If-None-Match and reused on 304", func(t *testing.T) {
		srv := startFixtureServer(t)
		clk := &clock{t: fixtureNow}
		c, _ := testClient(t, ClientConfig{Now: clk.now})
		n := NewNPM(NPMConfig{BaseURL: srv.base("npm"), Client: c})
		first := n.Package(context.Background(), name)
		clk.advance(2 * time.Hour)
		second := n.Package(context.Background(), name)
		reqs := srv.received()
		if len(reqs) != 2 {
			t.Fatalf("%d requests, want 2", len(reqs))
		}
		if reqs[0].Header.Get("If-None-Match") != "" || reqs[1].Header.Get("If-None-Match") != `"sfs-2026.8.31"` {
			t.Errorf("If-None-Match: %q then %q", reqs[0].Header.Get("If-None-Match"), reqs[1].Header.Get("If-None-Match"))
		}
		if reqs[1].Header.Get("Accept") != "application/json" {
			t.Errorf("Accept = %q, want the full packument", reqs[1].Header.Get("Accept"))
		}
		if second.Facts.Source.Outcome != SourceOK || second.Facts.Latest != first.Facts.Latest || second.Facts.RepositoryURL != first.Facts.RepositoryURL {
			t.Errorf("after 304: %+v", second.Facts)
		}
		if !second.Facts.Source.FetchedAt.Equal(fixtureNow.Add(2 * time.Hour)) {
			t.Errorf("revalidated FetchedAt = %v", second.Facts.Source.FetchedAt)
		}
		// Revalidated: fresh again without a request.
		n.Package(context.Background(), name)
		if len(srv.received()) != 2 {
			t.Errorf("%d requests after the revalidated entry, want 2", len(srv.received()))
		}
	})
	t.Run("If-Modified-Since from Last-Modified", func(t *testing.T) {
		var seen []string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen = append(seen, r.Header.Get("If-Modified-Since"))
			if r.Header.Get("If-Modified-Since") != "" {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			w.Header().Set("Last-Modified", "Sun, 29 Nov 2026 10:00:00 GMT")
			fmt.Fprint(w, `{"ok":true}`)
		}))
		defer srv.Close()
		c, _ := testClient(t, ClientConfig{MaxAge: -1})
		for range 2 {
			resp, err := c.do(context.Background(), request{service: "test", url: srv.URL})
			if err != nil || resp.status != 200 || string(resp.body) != `{"ok":true}` {
				t.Fatalf("resp %+v, err %v", resp, err)
			}
		}
		if !slices.Equal(seen, []string{"", "Sun, 29 Nov 2026 10:00:00 GMT"}) {
			t.Errorf("If-Modified-Since: %q", seen)
		}
	})
	t.Run("404 is cached too", func(t *testing.T) {
		srv := startFixtureServer(t)
		c, _ := testClient(t, ClientConfig{})
		n := NewNPM(NPMConfig{BaseURL: srv.base("npm"), Client: c})
		for range 2 {
			if got := n.Package(context.Background(), "this-package-does-not-exist-probity-xyz"); got.Facts.Source.Outcome != SourceNoData {
				t.Fatalf("outcome %s", got.Facts.Source.Outcome)
			}
		}
		if h := srv.hits("npm", "/this-package-does-not-exist-probity-xyz"); h != 1 {
			t.Errorf("%d requests, want 1", h)
		}
	})
}

func TestGitHubQuota(t *testing.T) {
	t.Run("403 with remaining 0: Failed, later requests not sent until the reset", func(t *testing.T) {
		srv := startFixtureServer(t)
		clk := &clock{t: fixtureNow}
		c, _ := testClient(t, ClientConfig{Now: clk.now})
		g := NewGitHub(GitHubConfig{BaseURL: srv.base("github"), Client: c})
		got := g.Repository(context.Background(), "quota-org", "exhausted")
		const want = "GitHub quota exhausted until 2026-11-30T12:30:00Z"
		if got.Source.Outcome != SourceFailed || !strings.Contains(got.Source.Error, want) {
			t.Fatalf("source = %+v", got.Source)
		}
		again := g.Repository(context.Background(), "modelcontextprotocol", "servers")
		if again.Source.Outcome != SourceFailed || !strings.Contains(again.Source.Error, want) {
			t.Errorf("second repository: %+v", again.Source)
		}
		if h := srv.hits("github", "/repos/modelcontextprotocol/servers"); h != 0 {
			t.Errorf("%d requests sent during the exhausted quota", h)
		}
		// Other services are not affected.
		n := NewNPM(NPMConfig{BaseURL: srv.base("npm"), Client: c})
		if p := n.Package(context.Background(), "left-pad"); p.Facts.Source.Outcome != SourceOK {
			t.Errorf("npm during GitHub's exhausted quota: %+v", p.Facts.Source)
		}
		clk.t = time.Unix(1796041800, 0)
		if after := g.Repository(context.Background(), "modelcontextprotocol", "servers"); after.Source.Outcome != SourceOK {
			t.Errorf("after the reset: %+v", after.Source)
		}
	})
	t.Run("200 with remaining 0: the repository is read, nothing more is sent", func(t *testing.T) {
		srv := startFixtureServer(t)
		c, _ := testClient(t, ClientConfig{})
		g := NewGitHub(GitHubConfig{BaseURL: srv.base("github"), Client: c})
		got := g.Repository(context.Background(), "quota-org", "last-call")
		if got.Source.Outcome != SourceOK || !got.Exists || !strings.Contains(got.Source.Error, "GitHub quota exhausted until 2026-11-30T12:30:00Z") {
			t.Fatalf("got %+v", got)
		}
		if reqs := srv.received(); len(reqs) != 1 {
			t.Errorf("requests %v, want only the repository", reqs)
		}
		m, _ := g.Manifest(context.Background(), "quota-org", "last-call", "")
		if m.Source.Outcome != SourceFailed || len(srv.received()) != 1 {
			t.Errorf("manifest %+v after %d requests", m.Source, len(srv.received()))
		}
	})
	t.Run("secondary rate limit: 429 with Retry-After, then 200", func(t *testing.T) {
		srv := startFixtureServer(t)
		c, slept := testClient(t, ClientConfig{})
		g := NewGitHub(GitHubConfig{BaseURL: srv.base("github"), Client: c})
		got := g.Repository(context.Background(), "probity-fixtures", "busy")
		if !got.Exists || !slices.Equal(*slept, []time.Duration{2 * time.Second}) {
			t.Errorf("got %+v, slept %v", got.Source, *slept)
		}
	})
}

func TestGitHubTokenHandling(t *testing.T) {
	const token = "ghp_FIXTUREtokenNeverLogged0123456789"
	srv := startFixtureServer(t)
	var logs bytes.Buffer
	c, _ := testClient(t, ClientConfig{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	g := NewGitHub(GitHubConfig{BaseURL: srv.base("github"), Client: c, Token: token})
	n := NewNPM(NPMConfig{BaseURL: srv.base("npm"), Client: c})
	g.Repository(context.Background(), "probity-fixtures", "deleted")
	r := g.Repository(context.Background(), "quota-org", "exhausted")
	n.Package(context.Background(), "left-pad")
	for _, req := range srv.received() {
		auth := req.Header.Get("Authorization")
		switch {
		case strings.HasPrefix(req.Path, "/github/") && auth != "Bearer "+token:
			t.Errorf("%s: Authorization %q", req.Path, auth)
		case !strings.HasPrefix(req.Path, "/github/") && auth != "":
			t.Errorf("%s: Authorization sent outside GitHub", req.Path)
		}
		if strings.HasPrefix(req.Path, "/github/") && req.Header.Get("X-GitHub-Api-Version") != githubAPIVersion {
			t.Errorf("%s: no API version", req.Path)
		}
	}
	if strings.Contains(logs.String(), token) || strings.Contains(r.Source.Error, token) || logs.Len() == 0 {
		t.Errorf("token in logs or errors (or nothing logged): %s / %s", logs.String(), r.Source.Error)
	}
	// Without a token, no Authorization header at all.
	srv2 := startFixtureServer(t)
	c2, _ := testClient(t, ClientConfig{})
	NewGitHub(GitHubConfig{BaseURL: srv2.base("github"), Client: c2}).Repository(context.Background(), "modelcontextprotocol", "servers")
	for _, req := range srv2.received() {
		if req.Header.Get("Authorization") != "" {
			t.Errorf("%s: Authorization without a token", req.Path)
		}
	}
	for base, want := range map[string]bool{
		"https://api.github.com": true, "http://127.0.0.1:8080": true, "http://localhost:1": true,
		"http://api.github.com": false, "http://10.0.0.1": false, "::bad": false,
	} {
		if got := tokenSafe(base); got != want {
			t.Errorf("tokenSafe(%q) = %v", base, got)
		}
	}
}

func TestMemoryCacheBounds(t *testing.T) {
	m := NewMemoryCache(3, 100)
	for i := range 4 {
		m.Put(fmt.Sprint("k", i), Entry{Status: 200, Body: []byte("0123456789")})
	}
	if _, ok := m.Get("k0"); ok {
		t.Error("k0 not evicted by the entry bound")
	}
	m.Get("k1") // k1 now most recently used
	m.Put("big", Entry{Body: bytes.Repeat([]byte("x"), 60)})
	if _, ok := m.Get("k1"); !ok {
		t.Error("recently used k1 evicted")
	}
	if n, b := m.Len(); n > 3 || b > 100 {
		t.Errorf("%d entries, %d bytes", n, b)
	}
	m.Put("huge", Entry{Body: bytes.Repeat([]byte("x"), 200)})
	if _, ok := m.Get("huge"); ok {
		t.Error("an entry above the byte bound was kept")
	}
	if _, ok := m.Get("big"); !ok {
		t.Error("a refused entry evicted others")
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"1", time.Second, true},
		{" 120 ", 2 * time.Minute, true},
		{"Mon, 30 Nov 2026 12:00:07 GMT", 7 * time.Second, true},
		{"Mon, 30 Nov 2026 11:00:00 GMT", 0, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{"", 0, false},
		{"99999999999", 24 * time.Hour, true},
	}
	for _, tt := range tests {
		got, ok := retryAfter(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("retryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestDecodeJSON(t *testing.T) {
	var v map[string]any
	var a []any
	tests := []struct {
		body string
		want byte
		dst  any
		ok   bool
	}{
		{`{"a":1}`, '{', &v, true},
		{` [1,2] `, '[', &a, true},
		{`null`, '{', &v, false},
		{`[1]`, '{', &v, false},
		{`{"a":1} {"b":2}`, '{', &v, false},
		{`{"a":1`, '{', &v, false},
		{``, '{', &v, false},
		{`{"a":1}garbage`, '{', &v, false},
	}
	for _, tt := range tests {
		err := decodeJSON([]byte(tt.body), tt.want, tt.dst)
		if (err == nil) != tt.ok || err != nil && !errors.Is(err, errMalformed) {
			t.Errorf("decodeJSON(%q) = %v", tt.body, err)
		}
	}
}

func TestClientContextBoundsEveryFetch(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	c := NewClient(ClientConfig{Timeout: 50 * time.Millisecond, AllowLoopback: true})
	start := time.Now()
	_, err := c.do(context.Background(), request{service: "test", url: srv.URL})
	if err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("err %v after %v", err, time.Since(start))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.do(ctx, request{service: "test", url: srv.URL}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled context: %v", err)
	}
}
