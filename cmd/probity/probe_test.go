package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/checks"
)

func fixtureServer(t *testing.T) *httptest.Server {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "cli-fixture", Version: "2.0.0"}, nil)
	s.AddTool(&mcp.Tool{Name: "search", Description: "Search the catalog.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv
}

func TestProbeCommandJSON(t *testing.T) {
	srv := fixtureServer(t)
	code, out, errs := runCmd(t, "probe", "--json", "--allow-loopback", srv.URL+"/mcp")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep probeReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if rep.URL != srv.URL+"/mcp" || rep.Coverage != string(attest.CoverageFull) || rep.ToolCount != 1 || rep.Pages != 1 ||
		rep.Fingerprints == nil || rep.ServerInfo == nil || rep.ServerInfo.Name != "cli-fixture" || rep.ProtocolVersion == "" {
		t.Errorf("report: %+v", rep)
	}
	ids := checks.CheckIDs()
	if len(rep.Checks) != len(ids) {
		t.Fatalf("%d checks, catalog has %d", len(rep.Checks), len(ids))
	}
	for i, c := range rep.Checks {
		if c.ID != ids[i] {
			t.Errorf("check %d is %s, want %s", i, c.ID, ids[i])
		}
	}
}

func TestProbeCommandTableAndGuard(t *testing.T) {
	srv := fixtureServer(t)
	code, out, _ := runCmd(t, "probe", "--allow-loopback", srv.URL)
	if code != 0 || !strings.Contains(out, "coverage: full") || !strings.Contains(out, "reachability") || !strings.Contains(out, "VERIFIED") {
		t.Errorf("table: exit %d\n%s", code, out)
	}
	// Without --allow-loopback the guard refuses and says how to proceed.
	code, out, errs := runCmd(t, "probe", srv.URL)
	if code != 0 || !strings.Contains(out, "coverage: unsigned") || !strings.Contains(errs, "--allow-loopback") {
		t.Errorf("guarded: exit %d\n%s\n%s", code, out, errs)
	}
	for _, args := range [][]string{{"probe"}, {"probe", "a", "b"}, {"probe", "ftp://example.com"}, {"probe", "--ca-file", "/nonexistent", "https://example.com"}} {
		if code, _, errs := runCmd(t, args...); code != 2 || !strings.Contains(errs, "error: ") {
			t.Errorf("%v: exit %d, %s", args, code, errs)
		}
	}
}
