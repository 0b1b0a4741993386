package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestRoundSupplySourcesThroughGuard: `probity round` reads the supply sources through
// the egress guard. A mirror on loopback (every source's base URL) is refused without
// --allow-loopback, so it sees no request and the stored facts name the guard; with
// the flag it is read.
func TestRoundSupplySourcesThroughGuard(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	var hits atomic.Int64
	mirror := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.NotFound(w, r)
	}))
	defer mirror.Close()
	dir := t.TempDir()
	targets := filepath.Join(dir, "targets.txt")
	if err := os.WriteFile(targets, []byte("npm:left-pad\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var sources []string
	for _, s := range []string{"npm", "pypi", "github", "depsdev", "osv", "scorecard"} {
		sources = append(sources, "--"+s+"-url", mirror.URL)
	}
	round := func(dataDir string, extra ...string) string {
		env := []string{"DATABASE_URL=", "PROBITY_KEY_DIR=", "GITHUB_TOKEN="}
		args := append([]string{"round", "--data-dir", dataDir, "--targets", targets}, sources...)
		if code, out, errOut := probity(t, env, append(args, extra...)...); code == 2 {
			t.Fatalf("round: exit %d\n%s%s", code, out, errOut)
		}
		_, out, _ := probity(t, env, "targets", "list", "--data-dir", dataDir)
		slug := strings.Fields(strings.Split(out, "\n")[1])[0]
		code, out, errOut := probity(t, env, "supply", "--json", "--data-dir", dataDir, slug)
		if code != 0 {
			t.Fatalf("supply %s: exit %d\n%s%s", slug, code, out, errOut)
		}
		return out
	}

	facts := round(filepath.Join(dir, "strict"))
	if n := hits.Load(); n != 0 {
		t.Errorf("without --allow-loopback the loopback mirror got %d requests", n)
	}
	if !strings.Contains(facts, "egress: destination not allowed: loopback") {
		t.Errorf("the stored facts do not name the guard's refusal:\n%.2000s", facts)
	}

	round(filepath.Join(dir, "loopback"), "--allow-loopback")
	if hits.Load() == 0 {
		t.Error("with --allow-loopback the loopback mirror got no request")
	}
}
