package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A legacy SSE server whose pages are each ~1.5 MB (well under 4 MiB), 3 pages in all.
func TestRegressionSSECumulativeCap(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "big", Version: "1"}, &mcp.ServerOptions{PageSize: 1000})
	desc := strings.Repeat("Returns data. ", 110)
	for i := range 3000 {
		s.AddTool(&mcp.Tool{Name: fmt.Sprintf("tool_%04d", i), Description: desc, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	srv := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil))
	defer srv.Close()
	obs := probe(t, prober(), srv.URL)
	var maxBody int
	for _, ex := range obs.Exchanges {
		t.Logf("  %-26s %d body %d truncated %v", ex.Method, ex.Status, len(ex.Body), ex.Truncated)
		maxBody = max(maxBody, len(ex.Body))
	}
	t.Logf("transport %q: %d tools, %d pages, complete %v, partial %q", obs.Transport, len(obs.Tools.Tools), obs.Tools.Pages, obs.Tools.Complete, obs.Tools.Partial)
	for _, r := range logResults(t, obs) {
		if r.ID == "tools_list" && r.Reason.Key != "complete" {
			t.Errorf("tools_list %s %s: the per-response cap is applied to the whole SSE session", r.Status, r.Reason.Key)
		}
	}
}
