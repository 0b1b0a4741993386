package targets

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoNetworkDependencies holds targets to what its doc says, a parser that never
// touches the network: none of its dependencies is an MCP client, the prober, the egress
// guard or net/http. (The rule for remote URLs it shares with the prober lives in
// package locator.)
func TestNoNetworkDependencies(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the dependencies with")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		switch {
		case dep == "net/http", dep == "net",
			strings.HasPrefix(dep, "github.com/modelcontextprotocol/"),
			strings.HasPrefix(dep, "github.com/probity-dev/probity/") && dep != "github.com/probity-dev/probity/locator" && dep != "github.com/probity-dev/probity/targets":
			t.Errorf("targets depends on %s", dep)
		}
	}
}
