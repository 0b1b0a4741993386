package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/checks/supply"
	"github.com/probity-dev/probity/store"
)

// TestSupplyUnsignedIsNotVerified: "probity supply" applies the one Verified rule
// (store.IsVerified): a newest run whose checks passed but which is not signed is not
// Verified, in the table and in --json, and the table says why.
func TestSupplyUnsignedIsNotVerified(t *testing.T) {
	dataDir := t.TempDir()
	ctx := t.Context()
	st, err := store.Open(ctx, store.Config{SQLitePath: filepath.Join(dataDir, "probity.db")})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	e, _, err := st.AddEntry(ctx, store.NewEntry{SlugBase: "acme", Kind: store.KindNPM, Locator: "pkg:npm/acme", Source: "import"})
	if err != nil {
		t.Fatal(err)
	}
	verdict, err := supply.EncodeVerdict(supply.Verdict{Results: []supply.Result{}, WeightRan: 100, PointsPassed: 90, Score: 90, Verified: true, SuiteVersion: supply.SuiteVersion})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.SaveSupply(ctx, store.SupplyRecord{EntryID: e.ID, RanAt: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC),
		Score: 90, Verified: true, Facts: []byte(`{}`), Verdict: verdict}, nil); err != nil {
		t.Fatal(err)
	}
	st.Close()

	code, out, errOut := probity(t, nil, "supply", "--data-dir", dataDir, e.Slug)
	if code != 0 {
		t.Fatalf("supply: exit %d\n%s%s", code, out, errOut)
	}
	if first := strings.SplitN(out, "\n", 2)[0]; !strings.Contains(first, "not Verified (unsigned: its checks passed, but only a signed run counts)") {
		t.Errorf("supply calls an unsigned run that passed: %q", first)
	}
	code, out, errOut = probity(t, nil, "supply", "--json", "--data-dir", dataDir, e.Slug)
	if code != 0 {
		t.Fatalf("supply --json: exit %d\n%s%s", code, out, errOut)
	}
	var j struct {
		Verified *bool `json:"verified"`
		Signed   *bool `json:"signed"`
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil || j.Verified == nil || j.Signed == nil || *j.Verified || *j.Signed {
		t.Errorf("supply --json = %s (%v): want verified and signed false", out, err)
	}
}

// TestSupplyShowsNotRunAndEvidence: "probity supply" shows a check not run through
// Probity's own trouble as "not run, retried" (never a silent skip), every check's
// evidence (the registry ownership marker among it), and the parts listed but not
// checked.
func TestSupplyShowsNotRunAndEvidence(t *testing.T) {
	dataDir := t.TempDir()
	ctx := t.Context()
	st, err := store.Open(ctx, store.Config{SQLitePath: filepath.Join(dataDir, "probity.db")})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	e, _, err := st.AddEntry(ctx, store.NewEntry{SlugBase: "weather", Kind: store.KindRemote, Locator: "https://weather.example.com/mcp", Source: "import"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	f := &supply.Facts{
		Kind: "remote", Locator: e.Locator, ServerName: "io.github.acme/weather", Repository: "https://github.com/acme/weather-mcp",
		Package: &supply.PackageFacts{Source: supply.Source{Outcome: supply.SourceOK, URL: "https://registry.npmjs.org/acme-weather-mcp", FetchedAt: now},
			Ecosystem: "npm", Name: "acme-weather-mcp", Latest: "1.2.0", RepositoryURL: "https://github.com/acme/weather-mcp", License: "MIT",
			MCPName: "io.github.acme/weather"},
		Repo: &supply.RepoFacts{Source: supply.Source{Outcome: supply.SourceFailed, URL: "https://api.github.com/repos/acme/weather-mcp", FetchedAt: now,
			Error: "quota exhausted: GitHub until 13:00:00\x1b[31m"}, URL: "https://github.com/acme/weather-mcp", Owner: "acme", Name: "weather-mcp"},
		Endpoint:  &supply.EndpointFacts{Source: supply.Source{Outcome: supply.SourceOK, FetchedAt: now}, URL: e.Locator, Answered: true},
		Unchecked: []supply.PartRef{{Kind: "oci", Locator: "docker.io/acme/weather:1.2.0"}},
	}
	v := supply.Evaluate(f, supply.Options{Now: now})
	verdict, err := supply.EncodeVerdict(v)
	if err != nil {
		t.Fatal(err)
	}
	facts, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.SaveSupply(ctx, store.SupplyRecord{EntryID: e.ID, RanAt: now, Score: v.Score, Facts: facts, Verdict: verdict}, nil); err != nil {
		t.Fatal(err)
	}
	st.Close()

	code, out, errOut := probity(t, nil, "supply", "--data-dir", dataDir, e.Slug)
	if code != 0 {
		t.Fatalf("supply: exit %d\n%s%s", code, out, errOut)
	}
	if !regexp.MustCompile(`(?m)^source_repository\s+not run, retried\s+0/10\s`).MatchString(out) {
		t.Errorf("source_repository is not shown as not run:\n%s", out)
	}
	for _, want := range []string{
		"GitHub could not be read for github.com/acme/weather-mcp this time; the check is retried.",
		"\nEvidence:\n",
		"  source_repository: the error [quota exhausted: GitHub until 13:00:00\\x1b[31m] <https://api.github.com/repos/acme/weather-mcp>",
		"  package_repository: the package's registry ownership marker (npm package.json mcpName), naming this server [io.github.acme/weather]",
		"\nListed, not checked:\n  oci docker.io/acme/weather:1.2.0\n",
		"not run, retried: source_repository, maintenance, scorecard (a source could not be read on Probity's side; the checks run again within hours)",
		"not Verified: the Source repository check was not run (Probity could not read its source this time; it is retried)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Error("a control character reached the terminal")
	}
}
