package probe

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/probity-dev/probity/checks"
)

// Streamable HTTP server that answers each request on an event stream and keeps the
// stream open afterwards (keep-alive comments). The go-sdk client is fine with it; the
// probe's direct post reads each response to EOF, so page 1 eats the whole budget, and
// the stale-exchange re-read then reports FAILED cursor_loop.
func TestRegressionOpenResponseStream(t *testing.T) {
	srv := httptest.NewServer(jsonRPCHandler(func(w http.ResponseWriter, r *http.Request, req rpcRequest) {
		w.Header().Set("Content-Type", "text/event-stream")
		var res string
		switch {
		case req.Method == "initialize":
			res = `"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"x","version":"1"}}`
		case req.Method == "tools/list" && req.Params.Cursor == "":
			res = `"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"p2"}`
		case req.Method == "tools/list":
			res = `"result":{"tools":[{"name":"b","inputSchema":{"type":"object"}}]}`
		default:
			res = `"error":{"code":-32601,"message":"no"}`
		}
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,%s}\n\n", req.ID, res)
		w.(http.Flusher).Flush()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(200 * time.Millisecond):
				fmt.Fprint(w, ": keepalive\n\n")
				w.(http.Flusher).Flush()
			}
		}
	}))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL, DisableStandaloneSSE: true, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for tl, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		_ = tl
		n++
	}
	cs.Close()
	t.Logf("go-sdk client: %d tools in %v", n, time.Since(start))

	start = time.Now()
	obs := probe(t, prober(func(c *Config) { c.Budget.Total = 2 * time.Second }), srv.URL)
	t.Logf("probe: %v, stop %q, %d tools, %d pages, partial %q", time.Since(start), obs.Stop, len(obs.Tools.Tools), obs.Tools.Pages, obs.Tools.Partial)
	for _, r := range logResults(t, obs) {
		if r.ID == "tools_list" && r.Status == "FAILED" {
			t.Errorf("tools_list %s %s for a well-paginated list the SDK reads in full", r.Status, r.Reason.Key)
		}
	}
	_ = checks.PartialNone
}
