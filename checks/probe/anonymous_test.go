package probe

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestProbeSendsWhatItsDocSays records every request of a probe of a go-sdk server and
// holds it to the package doc: clientInfo {probity, version}, capabilities {} in
// server/discover and initialize, the User-Agent, and no credentials.
func TestProbeSendsWhatItsDocSays(t *testing.T) {
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newServer(2, nil) }, nil)
	type seen struct {
		header http.Header
		body   map[string]json.RawMessage
	}
	var mu sync.Mutex
	byMethod := map[string][]seen{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		var msg map[string]json.RawMessage
		_ = json.Unmarshal(body, &msg)
		var method string
		_ = json.Unmarshal(msg["method"], &method)
		if method == "" {
			method = r.Method
		}
		mu.Lock()
		byMethod[method] = append(byMethod[method], seen{r.Header.Clone(), msg})
		mu.Unlock()
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		inner.ServeHTTP(w, r)
	}))
	defer srv.Close()
	obs := probe(t, prober(func(c *Config) { c.Version = "9.9.9"; c.DirectoryURL = "https://dir.example" }), srv.URL+"/mcp")
	if !obs.Tools.Complete {
		t.Fatalf("the list was not read: %+v", obs.Tools)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, m := range []string{"server/discover", "initialize"} {
		if len(byMethod[m]) == 0 {
			t.Fatalf("no %s request", m)
		}
	}
	var discover struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(byMethod["server/discover"][0].body["params"], &discover)
	var initialize struct {
		Capabilities json.RawMessage `json:"capabilities"`
		ClientInfo   json.RawMessage `json:"clientInfo"`
	}
	_ = json.Unmarshal(byMethod["initialize"][0].body["params"], &initialize)
	for what, got := range map[string]json.RawMessage{
		"server/discover capabilities": discover.Meta["io.modelcontextprotocol/clientCapabilities"],
		"server/discover clientInfo":   discover.Meta["io.modelcontextprotocol/clientInfo"],
		"initialize capabilities":      initialize.Capabilities,
		"initialize clientInfo":        initialize.ClientInfo,
	} {
		want := `{}`
		if strings.HasSuffix(what, "clientInfo") {
			want = `{"name":"probity","version":"9.9.9"}`
		}
		if string(got) != want {
			t.Errorf("%s = %s; want %s", what, got, want)
		}
	}
	for method, reqs := range byMethod {
		for _, r := range reqs {
			if ua := r.header.Get("User-Agent"); ua != "probity/9.9.9 (+https://dir.example/probe)" {
				t.Errorf("%s: User-Agent %q", method, ua)
			}
			for _, h := range []string{"Authorization", "Cookie", "Proxy-Authorization"} {
				if v := r.header.Get(h); v != "" {
					t.Errorf("%s: sent %s %q", method, h, v)
				}
			}
		}
	}
}

// TestServerRequestsRefused: a server that asks the probe for its roots, a sampling
// message or an elicitation while answering tools/list gets the JSON-RPC error -32601
// for each, never an answer as from a client with those capabilities (the go-sdk
// client, left to its defaults, answers roots/list with an empty list).
func TestServerRequestsRefused(t *testing.T) {
	s := newServer(1, nil)
	var mu sync.Mutex
	errs := map[string]error{}
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				ss := req.GetSession().(*mcp.ServerSession)
				ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				//lint:ignore SA1019 deprecated features are still served, and the probe must refuse them
				_, errRoots := ss.ListRoots(ctx, nil)
				//lint:ignore SA1019 deprecated features are still served, and the probe must refuse them
				_, errSampling := ss.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 1, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}})
				_, errElicit := ss.Elicit(ctx, &mcp.ElicitParams{Message: "Your name?", RequestedSchema: map[string]any{"type": "object"}})
				cancel()
				mu.Lock()
				errs["roots/list"], errs["sampling/createMessage"], errs["elicitation/create"] = errRoots, errSampling, errElicit
				mu.Unlock()
			}
			return next(ctx, method, req)
		}
	})
	// Legacy SSE: the probe's session is the SDK's, which is where a server's requests
	// reach a client handler.
	srv := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil))
	defer srv.Close()
	obs := probe(t, prober(), srv.URL)
	if !obs.Tools.Complete {
		t.Fatalf("the list was not read: %+v", obs.Tools)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(errs) != 3 {
		t.Fatalf("the server's requests were not sent: %v", errs)
	}
	for method, err := range errs {
		var je *jsonrpc.Error
		if method == "elicitation/create" && err != nil && !errors.As(err, &je) {
			// The go-sdk server checks the client's capabilities itself before it sends
			// an elicitation: with none declared, the request never left the server.
			continue
		}
		if !errors.As(err, &je) || je.Code != jsonrpc.CodeMethodNotFound {
			t.Errorf("%s: the probe answered %v; want the JSON-RPC error %d", method, err, jsonrpc.CodeMethodNotFound)
		}
	}
}
