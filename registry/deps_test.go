package registry

import (
	"os/exec"
	"strings"
	"testing"
)

// TestClientStaysApartFromTheStore holds the client to its place: it reads a registry
// and nothing else, so the store (and its database drivers and job queue) is not among
// its dependencies; the sync that writes to the store is package regsync.
func TestClientStaysApartFromTheStore(t *testing.T) {
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
		case dep == "github.com/probity-dev/probity/store", strings.HasPrefix(dep, "github.com/jackc/"),
			strings.HasPrefix(dep, "github.com/riverqueue/"), strings.HasPrefix(dep, "modernc.org/sqlite"):
			t.Errorf("registry depends on %s", dep)
		}
	}
}
