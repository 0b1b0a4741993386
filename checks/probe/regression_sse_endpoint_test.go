package probe

import (
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/probity-dev/probity/checks"
)

// The legacy SSE "endpoint" event moves the whole session to another origin, here from
// https to plain http on another host name. Nothing records it: redirect_policy says
// no_redirect, tls_certificate says valid.
func TestRegressionSSEEndpointEventOffOrigin(t *testing.T) {
	out := make(chan string, 100)
	var plainHits atomic.Int64
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		plainHits.Add(1)
		body, _ := io.ReadAll(r.Body)
		var m map[string]json.RawMessage
		json.Unmarshal(body, &m)
		var method string
		json.Unmarshal(m["method"], &method)
		id := string(m["id"])
		w.WriteHeader(202)
		switch method {
		case "initialize":
			out <- fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-03-26","capabilities":{"tools":{}},"serverInfo":{"name":"x","version":"1"}}}`, id)
		case "tools/list":
			out <- fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}}`, id)
		default:
			if id != "" {
				out <- fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no"}}`, id)
			}
		}
	}))
	defer plain.Close()
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.WriteHeader(405)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		// another host name (localhost vs 127.0.0.1) and plain http
		fmt.Fprintf(w, "event: endpoint\ndata: http://localhost:%s/msg\n\n", plain.Listener.Addr().(interface{ String() string }).String()[len("127.0.0.1:"):])
		w.(http.Flusher).Flush()
		for {
			select {
			case m := <-out:
				fmt.Fprintf(w, "event: message\ndata: %s\n\n", m)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	}))
	defer tlsSrv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(tlsSrv.Certificate())
	obs := probe(t, prober(func(c *Config) { c.RootCAs = pool }), tlsSrv.URL+"/sse")
	for _, ex := range obs.Exchanges {
		t.Logf("  %-26s %d %s", ex.Method, ex.Status, ex.URL)
	}
	results, cov, signed := checks.Evaluate(obs)
	t.Logf("coverage %q signed %v; plain-http host got %d requests", cov, signed, plainHits.Load())
	for _, r := range results {
		if r.ID == "redirect_policy" || r.ID == "tls_certificate" || r.ID == "transport" {
			t.Logf("%s: %s %s %v", r.ID, r.Status, r.Reason.Key, r.Reason.Params)
		}
	}
	if signed && plainHits.Load() > 0 && len(obs.Redirects) == 0 {
		t.Errorf("the session moved to plain http on another host; signed %q with no redirect/downgrade recorded", cov)
	}
}
