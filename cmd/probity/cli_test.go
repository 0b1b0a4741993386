package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

// cliStore imports a targets file with one loopback MCP server and one bad line, runs a
// round over it in process, and returns the data directory and the entry's slug. The
// round must exit 1 (the bad line) after probing and signing the good one.
func cliStore(t *testing.T) (dataDir, slug string) {
	t.Helper()
	t.Setenv("DATABASE_URL", "")
	t.Setenv("PROBITY_KEY_DIR", "")
	srv := fixtureServer(t)
	dir := t.TempDir()
	dataDir = filepath.Join(dir, "data")
	targets := filepath.Join(dir, "targets.txt")
	if err := os.WriteFile(targets, []byte(srv.URL+"/mcp\nnot a reference\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCmd(t, "round", "--targets", targets, "--data-dir", dataDir, "--allow-loopback", "--concurrency", "1")
	if code != 1 {
		t.Fatalf("round with a bad targets line: exit %d, want 1\n%s%s", code, out, errs)
	}
	for _, want := range []string{"line 2", "1 line with errors", "1 entry added", "has lines with errors"} {
		if !strings.Contains(out+errs, want) {
			t.Errorf("round output lacks %q:\n%s%s", want, out, errs)
		}
	}
	if !regexp.MustCompile(`(?m)^\s*signed full\s+1\s*$`).MatchString(out) {
		t.Errorf("the round did not sign the good entry:\n%s", out)
	}
	code, out, errs = runCmd(t, "targets", "list", "--data-dir", dataDir)
	if code != 0 {
		t.Fatalf("targets list: exit %d\n%s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("targets list:\n%s", out)
	}
	return dataDir, strings.Fields(lines[1])[0]
}

// TestRoundExitsOneOnBadTargets: a targets file with a bad line makes round exit 1, as
// "targets import" does, after importing the rest and running the round over it.
func TestRoundExitsOneOnBadTargets(t *testing.T) {
	cliStore(t) // its checks are the test
}

// TestFlagsAnywhere: commands with subcommands and positional arguments take their flags
// before, between and after them; a flag's value is its value even when it reads like a
// subcommand; "--" ends the flags. Messages name entries by slug.
func TestFlagsAnywhere(t *testing.T) {
	dataDir, slug := cliStore(t)
	idLike := regexp.MustCompile(`entry \d`)
	ok := func(want string, args ...string) string {
		t.Helper()
		code, out, errs := runCmd(t, args...)
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("%q: exit %d, want 0 and %q\n%s%s", args, code, want, out, errs)
		}
		return out
	}
	fails := func(wantCode int, want string, args ...string) {
		t.Helper()
		code, out, errs := runCmd(t, args...)
		if code != wantCode || !strings.Contains(errs, want) || idLike.MatchString(out+errs) {
			t.Errorf("%q: exit %d, want %d and %q without an entry id\n%s%s", args, code, wantCode, want, out, errs)
		}
	}

	// history: the example of the issue, and its mirror images.
	text := ok("Change 1 of "+slug, "history", "--data-dir", dataDir, "show", slug, "1")
	for _, want := range []string{"UTC by an automatic check", "Observation began with 1 tool.", "Kind: baseline", "Hidden: no", "Signed by key: "} {
		if !strings.Contains(text, want) {
			t.Errorf("history show lacks %q:\n%s", want, text)
		}
	}
	if strings.HasPrefix(strings.TrimSpace(text), "{") {
		t.Errorf("history show prints JSON by default:\n%s", text)
	}
	ok("Change 1 of "+slug, "history", "show", slug, "1", "--data-dir", dataDir)
	ok("Change 1 of "+slug, "history", "show", "--data-dir", dataDir, slug, "--", "1")
	js := ok(`"number": 1`, "history", "show", slug, "--json", "1", "--data-dir="+dataDir)
	var change struct {
		Entry  string `json:"entry"`
		Number int    `json:"number"`
	}
	if err := json.Unmarshal([]byte(js), &change); err != nil || change.Entry != slug {
		t.Errorf("history show --json: %v %+v\n%s", err, change, js)
	}
	// --reason's value "show" is its value, not the subcommand.
	ok("change 1 of "+slug+" hidden", "history", "hide", slug, "1", "--data-dir", dataDir, "--reason", "show")
	ok("ch-1 (hidden)", "history", slug, "--hidden", "--data-dir", dataDir)
	ok(`Hidden: yes, because "show"`, "history", "--data-dir", dataDir, "show", slug, "1")
	ok("change 1 of "+slug+" shown again", "history", "--data-dir", dataDir, "unhide", slug, "1")
	ok("ch-1", "history", slug, "--limit", "5", "--data-dir", dataDir)
	fails(1, slug+" has no change 9", "history", "show", slug, "9", "--data-dir", dataDir)
	fails(1, slug+" has no change 9", "history", "hide", slug, "9", "--data-dir", dataDir, "--reason", "r")
	fails(2, `no entry "nosuch"`, "history", "show", "nosuch", "1", "--data-dir", dataDir)
	fails(2, "hint:", "history", "show", slug, "--data-dir", dataDir)
	fails(2, "needs --reason", "history", "hide", slug, "1", "--data-dir", dataDir)

	// supply: no run yet for a remote without a package, said with the slug.
	fails(1, "no supply run for "+slug, "supply", slug, "--data-dir", dataDir)
	fails(2, `no entry "nosuch"`, "supply", "--data-dir", dataDir, "nosuch")

	// targets: the subcommand after flags, the operand before them.
	ok(slug, "targets", "--data-dir", dataDir, "list")
	fails(2, "takes no arguments", "targets", "list", "extra", "--data-dir", dataDir)
	fails(1, `no entry "nosuch"`, "targets", "remove", "nosuch", "--yes", "--data-dir", dataDir)
	ok("deleted "+slug, "targets", "remove", slug, "--yes", "--data-dir", dataDir, "--reason", "list")
	code, out, _ := runCmd(t, "targets", "list", "--data-dir", dataDir)
	if code != 0 || strings.Contains(out, slug) {
		t.Errorf("after remove: exit %d\n%s", code, out)
	}

	// probe and verify: flags after the URL or the paths.
	srv := fixtureServer(t)
	ok(`"coverage": "full"`, "probe", srv.URL+"/mcp", "--json", "--allow-loopback")
	ok("6 verified, 0 failed", "verify", "../../examples/envelopes.jsonl", "--keys", "../../examples/keys.json")
}

// TestConcurrencyRefused: --concurrency below 1 is a usage error wherever it exists.
func TestConcurrencyRefused(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	t.Setenv("PROBITY_KEY_DIR", "")
	dataDir := t.TempDir()
	for _, args := range [][]string{
		{"round", "--concurrency", "0", "--data-dir", dataDir},
		{"round", "--concurrency=-3", "--data-dir", dataDir},
		{"serve", "--data-dir", dataDir, "--listen", "", "--concurrency", "0"},
	} {
		code, out, errs := runCmd(t, args...)
		if code != 2 || !strings.Contains(errs, "error: --concurrency must be at least 1") || !strings.Contains(errs, "\nhint: ") {
			t.Errorf("%q: exit %d, want 2 with error and hint\n%s%s", args, code, out, errs)
		}
	}
	if entries, _ := os.ReadDir(dataDir); len(entries) != 0 {
		t.Errorf("a refused command created %d files in the data directory", len(entries))
	}
}

// TestProbeRejectsBadURL: probe refuses what is not an http(s) URL with a host before it
// says it is probing.
func TestProbeRejectsBadURL(t *testing.T) {
	for _, u := range []string{"ftp://example.com/mcp", "https://", "example.com/mcp", "http://user:pw@example.com/", "http://[::1", "javascript:alert(1)", ""} {
		code, out, errs := runCmd(t, "probe", u)
		if code != 2 || !strings.HasPrefix(errs, "error: ") || !strings.Contains(errs, "\nhint: ") || strings.Contains(out+errs, "probing") {
			t.Errorf("probe %q: exit %d, want 2, an error and a hint, and no probing\n%s%s", u, code, out, errs)
		}
	}
}

// TestSingularPlural: a count of one reads in the singular.
func TestSingularPlural(t *testing.T) {
	srv := fixtureServer(t)
	code, out, errs := runCmd(t, "probe", "--allow-loopback", srv.URL)
	if code != 0 || !strings.Contains(out, "tools: 1 in 1 page ") {
		t.Errorf("probe: exit %d, want \"1 page\"\n%s%s", code, out, errs)
	}
	if strings.Contains(out, "1 pages") {
		t.Errorf("probe says 1 pages:\n%s", out)
	}
}

// TestVersion: "probity version" and "--version" print the version, the module and Go's
// version; versionText shows the commit, its time and a modified tree when recorded.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, out, errs := runCmd(t, args...)
		if code != 0 || !strings.HasPrefix(out, "probity "+version+"\n") || !strings.Contains(out, "go       go1.") {
			t.Errorf("%q: exit %d\n%s%s", args, code, out, errs)
		}
	}
	if code, _, errs := runCmd(t, "version", "extra"); code != 2 || !strings.Contains(errs, "error: ") {
		t.Errorf("version extra: exit %d\n%s", code, errs)
	}
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/probity-dev/probity", Version: "v0.2.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	want := "probity " + version + "\nmodule   github.com/probity-dev/probity v0.2.0\ncommit   0123abcd (2026-12-01T10:00:00Z, modified)\ngo       go1.26.8\n"
	if got := versionText(bi, true); got != want {
		t.Errorf("versionText = %q, want %q", got, want)
	}
	if got := versionText(nil, false); !strings.Contains(got, "none recorded") {
		t.Errorf("versionText without build information = %q", got)
	}
}

// TestHelpTexts: every command answers -h with its usage on stdout and exit 0, before
// or after other arguments.
func TestHelpTexts(t *testing.T) {
	for name := range commandTable() {
		for _, args := range [][]string{{name, "-h"}, {"help", name}} {
			code, out, _ := runCmd(t, args...)
			if code != 0 || !strings.Contains(out, "Usage") && !strings.Contains(out, "usage") {
				t.Errorf("%q: exit %d\n%.300s", args, code, out)
			}
		}
	}
	for _, args := range [][]string{{"history", "show", "x", "-h"}, {"targets", "remove", "x", "--help"}, {"supply", "x", "-h"}, {"probe", "https://example.com", "-h"}} {
		if code, out, _ := runCmd(t, args...); code != 0 || !strings.Contains(out, "Usage:") {
			t.Errorf("%q: exit %d\n%.300s", args, code, out)
		}
	}
}
