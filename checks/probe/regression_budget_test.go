package probe

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

func TestRegressionRedirectHopsOnPages(t *testing.T) {
	var total atomic.Int64
	h := jsonRPCHandler(func(w http.ResponseWriter, r *http.Request, req rpcRequest) {
		if req.Method == "tools/list" {
			hop := r.URL.Query().Get("h")
			if len(hop) < 3 {
				http.Redirect(w, r, "/?h="+hop+"x", http.StatusTemporaryRedirect)
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		switch req.Method {
		case "initialize":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"x","version":"1"}}}`, req.ID)
		case "tools/list":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[],"nextCursor":"c%s"}}`, req.ID, req.Params.Cursor+"1")
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"no"}}`, req.ID)
		}
	})
	// Count every request the server receives, notifications and refusals included.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		total.Add(1)
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	obs := probe(t, prober(), srv.URL)
	t.Logf("pages %d partial %q; the server received %d requests; recorded %d exchanges, %d redirect hops", obs.Tools.Pages, obs.Tools.Partial, total.Load(), len(obs.Exchanges), len(obs.Redirects))
	// Redirect hops of pages count against the request budget: at most 8 requests
	// besides the pages themselves (at most 100).
	if n := total.Load(); n > 8+100 {
		t.Errorf("the server received %d requests; the budget allows 8 besides 100 pages", n)
	}
}
