package probe

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/checks"
)

// newServer is a go-sdk MCP server with n echo tools.
func newServer(n int, opts *mcp.ServerOptions) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "fixture", Version: "1.2.3"}, opts)
	for i := range n {
		s.AddTool(&mcp.Tool{
			Name:        fmt.Sprintf("tool_%02d", i),
			Description: "Echoes its input.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
		}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	}
	return s
}

func streamable(t *testing.T, s *mcp.Server) *httptest.Server {
	t.Helper()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func prober(opts ...func(*Config)) *Prober {
	cfg := Config{AllowLoopback: true, Version: "test", Budget: Budget{Total: 5 * time.Second}}
	for _, o := range opts {
		o(&cfg)
	}
	return New(cfg)
}

func probe(t *testing.T, p *Prober, url string) *checks.Observation {
	t.Helper()
	obs, err := p.Probe(context.Background(), url)
	if err != nil {
		t.Fatalf("Probe(%s): %v", url, err)
	}
	return obs
}

func TestProbeHealthyStreamable(t *testing.T) {
	srv := streamable(t, newServer(3, &mcp.ServerOptions{Instructions: "Use tool_00 first."}))
	obs := probe(t, prober(), srv.URL+"/mcp")
	if obs.Reach.Failure != checks.ReachOK || obs.Transport != checks.TransportStreamableHTTP {
		t.Fatalf("reach %q transport %q: %+v", obs.Reach.Failure, obs.Transport, obs.Handshake)
	}
	h := obs.Handshake
	if !h.Completed() || h.ProtocolVersion == "" || h.ServerName != "fixture" || h.ServerVersion != "1.2.3" || h.Instructions == nil || *h.Instructions != "Use tool_00 first." {
		t.Errorf("handshake: %+v", h)
	}
	if !obs.Tools.Complete || len(obs.Tools.Tools) != 3 || obs.Tools.Pages != 1 {
		t.Errorf("tools: complete %v, %d tools, %d pages, partial %q", obs.Tools.Complete, len(obs.Tools.Tools), obs.Tools.Pages, obs.Tools.Partial)
	}
	if !obs.ErrorProbe.Attempted || !obs.ErrorProbe.JSONRPCError {
		t.Errorf("error probe: %+v", obs.ErrorProbe)
	}
	if obs.Auth.Challenged || obs.Stop != checks.StopNone {
		t.Errorf("auth %+v stop %q", obs.Auth, obs.Stop)
	}
	for _, ex := range obs.Exchanges {
		if ex.Status == 0 && ex.Err != "" {
			t.Errorf("exchange %s failed: %s", ex.Method, ex.Err)
		}
	}
	if _, err := attest.ComputeFingerprints(obs.Tools.Tools, h.Instructions); err != nil {
		t.Errorf("the raw tools do not fingerprint: %v", err)
	}
}

func TestProbePaginated(t *testing.T) {
	srv := streamable(t, newServer(25, &mcp.ServerOptions{PageSize: 10}))
	obs := probe(t, prober(), srv.URL)
	if !obs.Tools.Complete || len(obs.Tools.Tools) != 25 || obs.Tools.Pages != 3 {
		t.Errorf("complete %v, %d tools in %d pages (%q)", obs.Tools.Complete, len(obs.Tools.Tools), obs.Tools.Pages, obs.Tools.Partial)
	}
	// The page cap marks the list partial.
	obs = probe(t, prober(func(c *Config) { c.Budget.MaxPages = 2 }), srv.URL)
	if obs.Tools.Complete || obs.Tools.Partial != checks.PartialPageCap || len(obs.Tools.Tools) != 20 {
		t.Errorf("page cap: complete %v, partial %q, %d tools", obs.Tools.Complete, obs.Tools.Partial, len(obs.Tools.Tools))
	}
}

// rpcRequest is a JSON-RPC request as the test servers read it.
type rpcRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Cursor string `json:"cursor"`
	} `json:"params"`
}

// jsonRPCHandler speaks just enough Streamable HTTP for misbehaviour the SDK server
// cannot show: POSTs only (405 otherwise), notifications answered 202, every request
// with an id handed to handle, which writes the whole response.
func jsonRPCHandler(handle func(w http.ResponseWriter, r *http.Request, req rpcRequest)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req rpcRequest
		json.Unmarshal(body, &req)
		if req.ID == nil { // a notification
			w.WriteHeader(http.StatusAccepted)
			return
		}
		handle(w, r, req)
	})
}

// jsonRPCServer serves jsonRPCHandler(handle) on loopback for the test's duration.
func jsonRPCServer(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, req rpcRequest)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(jsonRPCHandler(handle))
	t.Cleanup(srv.Close)
	return srv
}

// rawServer is a jsonRPCServer whose handler returns a result (or an rpcErr) for the
// server to encode; a handler returning nil has written the response itself.
func rawServer(t *testing.T, handle func(method string, w http.ResponseWriter) any) *httptest.Server {
	t.Helper()
	return jsonRPCServer(t, func(w http.ResponseWriter, _ *http.Request, req rpcRequest) {
		res := handle(req.Method, w)
		if res == nil {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		msg := map[string]any{"jsonrpc": "2.0", "id": req.ID}
		if e, ok := res.(rpcErr); ok {
			msg["error"] = map[string]any{"code": int(e), "message": "error"}
		} else {
			msg["result"] = res
		}
		json.NewEncoder(w).Encode(msg)
	})
}

type rpcErr int

func initializeResult(version string) map[string]any {
	return map[string]any{"protocolVersion": version, "capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "raw", "version": "0.1"}}
}

func TestProbeOlderVersionAndCursorLoop(t *testing.T) {
	srv := rawServer(t, func(method string, _ http.ResponseWriter) any {
		switch method {
		case "server/discover":
			return rpcErr(-32601)
		case "initialize":
			return initializeResult("2025-06-18")
		case "tools/list":
			return map[string]any{"tools": []any{map[string]any{"name": "a", "inputSchema": map[string]any{"type": "object"}}}, "nextCursor": "again"}
		}
		return rpcErr(-32601)
	})
	obs := probe(t, prober(), srv.URL)
	h := obs.Handshake
	if !h.DiscoverTried || h.DiscoverOK || !h.InitializeOK || h.ProtocolVersion != "2025-06-18" || h.Method != "initialize" {
		t.Errorf("handshake: %+v", h)
	}
	if obs.Tools.Complete || obs.Tools.Partial != checks.PartialCursorLoop || obs.Tools.Pages != 2 {
		t.Errorf("cursor loop: complete %v partial %q pages %d", obs.Tools.Complete, obs.Tools.Partial, obs.Tools.Pages)
	}
	if obs.ErrorProbe.Attempted {
		t.Errorf("the reserved tool was called on a partial list")
	}
}

func TestProbeKeepsMalformedTools(t *testing.T) {
	srv := rawServer(t, func(method string, _ http.ResponseWriter) any {
		switch method {
		case "initialize":
			return initializeResult("2025-11-25")
		case "tools/list":
			// The SDK drops the second and third tools; Probity must keep them.
			return map[string]any{"tools": []any{
				map[string]any{"name": "ok", "inputSchema": map[string]any{"type": "object"}},
				map[string]any{"name": "no_schema"},
				map[string]any{"name": 42},
				map[string]any{"name": ReservedToolName, "inputSchema": map[string]any{"type": "object"}},
			}}
		}
		return rpcErr(-32601)
	})
	obs := probe(t, prober(), srv.URL)
	if !obs.Tools.Complete || len(obs.Tools.Tools) != 4 {
		t.Fatalf("complete %v, %d tools", obs.Tools.Complete, len(obs.Tools.Tools))
	}
	if !obs.ErrorProbe.Withheld || obs.ErrorProbe.Attempted {
		t.Errorf("a listed reserved name must withhold the call: %+v", obs.ErrorProbe)
	}
}

func TestProbeAuthRequired(t *testing.T) {
	var srvURL string
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata=%q, scope="files:read"`, srvURL+"/.well-known/oauth-protected-resource/mcp"))
		w.WriteHeader(http.StatusUnauthorized)
	})
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"resource":%q,"authorization_servers":["https://auth.example.com"],"scopes_supported":["files:read"]}`, srvURL+"/mcp")
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	srvURL = srv.URL
	obs := probe(t, prober(), srv.URL+"/mcp")
	if !obs.Handshake.Unauthorized || obs.Handshake.Completed() || obs.Reach.Failure != checks.ReachOK {
		t.Errorf("handshake %+v reach %q", obs.Handshake, obs.Reach.Failure)
	}
	a := obs.Auth
	if !a.Challenged || len(a.Challenges) != 1 || a.Challenges[0].Scheme != "bearer" || a.Challenges[0].Params["scope"] != "files:read" {
		t.Errorf("challenges: %+v", a)
	}
	if !a.MetadataFetched || a.Resource != srv.URL+"/mcp" || len(a.AuthorizationServers) != 1 || len(a.ScopesSupported) != 1 {
		t.Errorf("metadata: %+v", a)
	}
	for _, ex := range obs.Exchanges {
		if ex.Method == "tools/list" || ex.Method == "tools/call" {
			t.Errorf("%s sent after a 401 handshake", ex.Method)
		}
	}
}

func TestProbeRateLimited(t *testing.T) {
	requests := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests++
		w.Header().Set("Retry-After", "120")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	obs := probe(t, prober(), srv.URL)
	if obs.Stop != checks.StopRateLimited || obs.RetryAfter != 120*time.Second || obs.Reach.Failure != checks.ReachRateLimited {
		t.Errorf("stop %q retry %v reach %q", obs.Stop, obs.RetryAfter, obs.Reach.Failure)
	}
	if requests != 1 {
		t.Errorf("%d requests after a 429; want 1", requests)
	}
}

func TestProbeUnreachableAndBlocked(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	obs := probe(t, prober(), url)
	if obs.Reach.Failure != checks.ReachConnect || obs.Stop != checks.StopUnreachable {
		t.Errorf("closed port: reach %q stop %q", obs.Reach.Failure, obs.Stop)
	}
	// Without the loopback option the guard refuses before any request.
	obs = probe(t, prober(func(c *Config) { c.AllowLoopback = false }), url)
	if obs.Reach.Failure != checks.ReachBlocked || len(obs.Exchanges) != 0 {
		t.Errorf("loopback without the option: reach %q, %d exchanges", obs.Reach.Failure, len(obs.Exchanges))
	}
}

func TestProbeUserAgentAndNoCredentials(t *testing.T) {
	var agents, auths []string
	s := newServer(1, nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		agents = append(agents, r.UserAgent())
		auths = append(auths, r.Header.Get("Authorization")+r.Header.Get("Cookie"))
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	p := prober(func(c *Config) { c.Version = "1.2.3"; c.DirectoryURL = "https://dir.example" })
	probe(t, p, srv.URL)
	for i, a := range agents {
		if a != "probity/1.2.3 (+https://dir.example/probe)" || auths[i] != "" {
			t.Errorf("request %d: User-Agent %q, credentials %q", i, a, auths[i])
		}
	}
}

func TestProbeSizeCap(t *testing.T) {
	srv := rawServer(t, func(method string, _ http.ResponseWriter) any {
		switch method {
		case "initialize":
			return initializeResult("2025-11-25")
		case "tools/list":
			return map[string]any{"tools": []any{map[string]any{"name": "big", "description": strings.Repeat("x", 2<<20)}}}
		}
		return rpcErr(-32601)
	})
	obs := probe(t, prober(func(c *Config) { c.Budget.MaxResponseBytes = 1 << 20 }), srv.URL)
	if obs.Tools.Complete || obs.Tools.Partial != checks.PartialSizeCap {
		t.Errorf("complete %v partial %q", obs.Tools.Complete, obs.Tools.Partial)
	}
}

// TestNoGoroutineOutlivesAProbe runs probes of every kind and waits for the goroutine
// count to come back down.
func TestNoGoroutineOutlivesAProbe(t *testing.T) {
	srv := streamable(t, newServer(3, nil))
	before := runtime.NumGoroutine()
	p := prober()
	for range 10 {
		probe(t, p, srv.URL)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+2 {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines after 10 probes, %d before\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

func TestProbeLegacySSE(t *testing.T) {
	s := newServer(2, nil)
	srv := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil))
	defer srv.Close()
	obs := probe(t, prober(), srv.URL)
	if obs.Transport != checks.TransportSSE || !obs.Handshake.Completed() {
		t.Fatalf("transport %q handshake %+v", obs.Transport, obs.Handshake)
	}
	if !obs.Tools.Complete || len(obs.Tools.Tools) != 2 {
		t.Errorf("tools over SSE: complete %v, %d tools, partial %q", obs.Tools.Complete, len(obs.Tools.Tools), obs.Tools.Partial)
	}
	if !obs.ErrorProbe.JSONRPCError {
		t.Errorf("error probe over SSE: %+v", obs.ErrorProbe)
	}
}

func TestProbeTLS(t *testing.T) {
	s := newServer(1, nil)
	srv := httptest.NewTLSServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	obs := probe(t, prober(func(c *Config) { c.RootCAs = pool }), srv.URL)
	if obs.TLS == nil || !obs.TLS.ChainVerified || !obs.TLS.HostnameVerified || obs.TLS.Version != "TLS1.3" || obs.TLS.NotAfter.IsZero() {
		t.Errorf("trusted TLS: %+v", obs.TLS)
	}
	if !obs.Tools.Complete {
		t.Errorf("tools over TLS: %+v", obs.Tools.Partial)
	}
	// Without the CA the chain does not verify, and nothing is exchanged in the clear.
	obs = probe(t, prober(), srv.URL)
	if obs.TLS == nil || obs.TLS.ChainVerified || obs.Reach.Failure != checks.ReachTLS {
		t.Errorf("untrusted TLS: %+v, reach %q", obs.TLS, obs.Reach.Failure)
	}
}

func TestProbeRedirects(t *testing.T) {
	target := streamable(t, newServer(1, nil))
	hop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer hop.Close()
	obs := probe(t, prober(), hop.URL+"/mcp")
	if len(obs.Redirects) == 0 || !obs.Redirects[0].CrossHost || obs.Redirects[0].Blocked {
		t.Errorf("cross-host redirect: %+v", obs.Redirects)
	}
	if !obs.Tools.Complete {
		t.Errorf("the redirected endpoint was not probed: %q", obs.Tools.Partial)
	}
	metadata := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
	}))
	defer metadata.Close()
	obs = probe(t, prober(), metadata.URL)
	if len(obs.Redirects) == 0 || !obs.Redirects[0].Blocked {
		t.Errorf("redirect to the metadata address: %+v", obs.Redirects)
	}
	tlsHop := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL, http.StatusFound)
	}))
	defer tlsHop.Close()
	pool := x509.NewCertPool()
	pool.AddCert(tlsHop.Certificate())
	obs = probe(t, prober(func(c *Config) { c.RootCAs = pool }), tlsHop.URL)
	if len(obs.Redirects) == 0 || !obs.Redirects[0].Downgrade || obs.Tools.Attempted {
		t.Errorf("https to http downgrade: %+v, tools attempted %v", obs.Redirects, obs.Tools.Attempted)
	}
}

func TestProbeTimeBudget(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A slow drip: headers at once, then a byte now and then, never a full response.
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for {
			select {
			case <-release:
				return
			case <-r.Context().Done():
				return
			case <-time.After(50 * time.Millisecond):
				w.Write([]byte(":\n"))
				w.(http.Flusher).Flush()
			}
		}
	}))
	defer srv.Close()
	defer close(release)
	start := time.Now()
	obs := probe(t, prober(func(c *Config) { c.Budget.Total = 500 * time.Millisecond }), srv.URL)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the probe took %v on a 500 ms budget", took)
	}
	if obs.Stop != checks.StopTimeBudget || obs.Handshake.Completed() {
		t.Errorf("stop %q, handshake %+v", obs.Stop, obs.Handshake)
	}
}

func TestProbeRequestBudget(t *testing.T) {
	var requests atomic.Int64
	s := newServer(2, nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	obs := probe(t, prober(func(c *Config) { c.Budget.MaxRequests = 2 }), srv.URL)
	if obs.Stop != checks.StopRequests {
		t.Errorf("stop %q, want %q", obs.Stop, checks.StopRequests)
	}
	if n := requests.Load(); n > 2 {
		t.Errorf("the server saw %d requests on a budget of 2", n)
	}
}

// TestProbeTotalBytesCap: pages under the per-response cap still stop at the per-probe
// total, so a probe's memory is bounded by MaxTotalBytes, not 100 × MaxResponseBytes.
func TestProbeTotalBytesCap(t *testing.T) {
	page := 0
	srv := rawServer(t, func(method string, _ http.ResponseWriter) any {
		switch method {
		case "initialize":
			return initializeResult("2025-11-25")
		case "tools/list":
			page++
			return map[string]any{"tools": []any{map[string]any{"name": fmt.Sprintf("t%d", page), "description": strings.Repeat("x", 300<<10)}}, "nextCursor": fmt.Sprint(page)}
		}
		return rpcErr(-32601)
	})
	obs := probe(t, prober(func(c *Config) { c.Budget.MaxTotalBytes = 2 << 20 }), srv.URL)
	if obs.Tools.Complete || obs.Tools.Partial != checks.PartialSizeCap || obs.Tools.Pages > 7 {
		t.Errorf("complete %v, partial %q, %d pages", obs.Tools.Complete, obs.Tools.Partial, obs.Tools.Pages)
	}
	var total int
	for _, ex := range obs.Exchanges {
		total += len(ex.Body)
	}
	if total > 2<<20 {
		t.Errorf("%d body bytes recorded, cap 2 MiB", total)
	}
}

func TestParseRetryAfterBounds(t *testing.T) {
	now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"120": 120 * time.Second, "0": 0, "-5": 0, "": 0, "junk": 0,
		"99999999999999999": 24 * time.Hour, "9223372036854775807": 24 * time.Hour,
		"Mon, 30 Nov 2026 00:01:00 GMT": time.Minute, "Sun, 29 Nov 2026 00:00:00 GMT": 0,
	} {
		if got := parseRetryAfter(v, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestProbeToolsListHTTPErrorIsAFailedPage(t *testing.T) {
	srv := rawServer(t, func(method string, w http.ResponseWriter) any {
		switch method {
		case "initialize":
			return initializeResult("2025-11-25")
		case "tools/list":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":"probity-1","result":{"tools":[]}}`) // the id the probe sends
			return nil
		}
		return rpcErr(-32601)
	})
	obs := probe(t, prober(), srv.URL)
	if obs.Tools.Complete || obs.Tools.Partial != checks.PartialError {
		t.Errorf("a 500 with a JSON-RPC body: complete %v, partial %q", obs.Tools.Complete, obs.Tools.Partial)
	}
}
