package probe

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/probity-dev/probity/checks"
)

// A JSON-RPC error answering tools/list is a failed page, not an empty last page.
func TestProbeToolsListJSONRPCError(t *testing.T) {
	srv := rawServer(t, func(method string, _ http.ResponseWriter) any {
		switch method {
		case "initialize":
			return initializeResult("2025-11-25")
		case "tools/list":
			return rpcErr(-32603)
		}
		return rpcErr(-32601)
	})
	obs := probe(t, prober(), srv.URL)
	if obs.Tools.Complete || obs.Tools.Partial != checks.PartialError || obs.Tools.Pages != 0 {
		t.Errorf("complete %v partial %q pages %d", obs.Tools.Complete, obs.Tools.Partial, obs.Tools.Pages)
	}
	if obs.ErrorProbe.Attempted {
		t.Errorf("the reserved tool was called after a failed list")
	}
}

// Any HTTP answer to the metadata request is recorded as fetched with its status, so
// the check can tell a 404 or a broken document from a network failure.
func TestProbeMetadataAnswers(t *testing.T) {
	for _, tt := range []struct {
		name     string
		status   int
		body     string
		errorSet bool
	}{
		{"404", http.StatusNotFound, "not found", false},
		{"500", http.StatusInternalServerError, "boom", false},
		{"not json", http.StatusOK, "<html></html>", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mux := http.NewServeMux()
			var base string
			mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata=%q`, base+"/meta"))
				w.WriteHeader(http.StatusUnauthorized)
			})
			mux.HandleFunc("/meta", func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				fmt.Fprint(w, tt.body)
			})
			srv := httptest.NewServer(mux)
			defer srv.Close()
			base = srv.URL
			a := probe(t, prober(), srv.URL+"/mcp").Auth
			if !a.MetadataFetched || a.MetadataStatus != tt.status || (a.MetadataError != "") != tt.errorSet {
				t.Errorf("fetched %v status %d error %q", a.MetadataFetched, a.MetadataStatus, a.MetadataError)
			}
		})
	}
}

// A redirect chain refused for its length is neither a downgrade nor a blocked target.
func TestProbeRedirectLoopIsNotBlocked(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, fmt.Sprintf("/hop/%d", n.Add(1)), http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	obs := probe(t, prober(), srv.URL)
	if len(obs.Redirects) == 0 {
		t.Fatal("no redirect recorded")
	}
	for _, r := range obs.Redirects {
		if r.Blocked || r.Downgrade || r.CrossHost {
			t.Errorf("hop %+v", r)
		}
	}
}

// A server/discover answer that is not JSON-RPC at all must not cost the initialize
// fallback.
func TestProbeDiscoverNotJSONRPC(t *testing.T) {
	srv := rawServer(t, func(method string, w http.ResponseWriter) any {
		switch method {
		case "server/discover":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><body>unknown method</body></html>")
			return nil
		case "initialize":
			return initializeResult("2025-11-25")
		case "tools/list":
			return map[string]any{"tools": []any{}}
		}
		return rpcErr(-32601)
	})
	obs := probe(t, prober(), srv.URL)
	h := obs.Handshake
	if !h.DiscoverTried || h.DiscoverOK || !h.InitializeOK || h.ProtocolVersion != "2025-11-25" {
		t.Errorf("handshake %+v", h)
	}
	if obs.Transport != checks.TransportStreamableHTTP || !obs.Tools.Complete {
		t.Errorf("transport %q, tools complete %v (%q)", obs.Transport, obs.Tools.Complete, obs.Tools.Partial)
	}
}

// A handshake answered over Streamable HTTP shows the transport even when the SDK
// refuses the version it negotiated.
func TestProbeUnknownVersionShowsTransport(t *testing.T) {
	srv := rawServer(t, func(method string, _ http.ResponseWriter) any {
		if method == "initialize" {
			return initializeResult("2099-01-01")
		}
		return rpcErr(-32601)
	})
	obs := probe(t, prober(), srv.URL)
	if !obs.Handshake.InitializeOK || obs.Handshake.ProtocolVersion != "2099-01-01" || obs.Transport != checks.TransportStreamableHTTP {
		t.Errorf("handshake %+v transport %q", obs.Handshake, obs.Transport)
	}
	if obs.Tools.Attempted {
		t.Errorf("tools/list sent on a refused session")
	}
}

// No request starts once the probe's budget is over, whatever context it carries: the
// SDK sends its best-effort notifications/cancelled without the caller's deadline and
// then waits for it when closing the session.
func TestRecorderRefusesAfterBudget(t *testing.T) {
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { sent.Add(1) }))
	defer srv.Close()
	budget, cancel := context.WithCancel(context.Background())
	rec := &recorder{base: http.DefaultTransport, maxBody: 1 << 20, maxRequests: 8, budget: budget}
	cancel()
	req, _ := http.NewRequestWithContext(context.WithoutCancel(budget), http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/cancelled"}`))
	if _, err := rec.RoundTrip(req); err == nil {
		t.Fatal("a request was sent after the budget")
	}
	if sent.Load() != 0 || len(rec.snapshot()) != 0 {
		t.Errorf("%d requests reached the server, %d recorded", sent.Load(), len(rec.snapshot()))
	}
}

// A server that never answers holds a probe no longer than its budget.
func TestProbeNeverAnsweringServerKeepsBudget(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	// A budget of a second reliably let the SDK's 5-second notification wait through.
	p := prober(func(c *Config) { c.Budget.Total = time.Second })
	for range 2 {
		start := time.Now()
		obs := probe(t, p, srv.URL)
		if took := time.Since(start); took > 2*time.Second {
			t.Fatalf("the probe took %v on a 1 s budget", took)
		}
		if obs.Reach.Failure != checks.ReachTimeout {
			t.Errorf("reach %q", obs.Reach.Failure)
		}
	}
}

// A request cut off by the end of the probe's time budget is a timeout, not a failed
// connection, even when the request's own context carries no deadline (CI saw the
// budget's cancellation reach the transport before the request's deadline did).
func TestRecorderBudgetEndIsTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	defer srv.Close()
	budget, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	rec := &recorder{base: http.DefaultTransport, maxBody: 1 << 20, maxRequests: 8, budget: budget}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`))
	if _, err := rec.RoundTrip(req); err == nil {
		t.Fatal("the request to a server that never answers succeeded")
	}
	if rec.failure != checks.ReachTimeout {
		t.Errorf("failure %q (%s), want %q", rec.failure, rec.failDetail, checks.ReachTimeout)
	}
}
