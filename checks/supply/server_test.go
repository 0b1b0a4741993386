package supply

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/probity-dev/probity/attest"
)

// The suite over a whole server (issue 14): a remote, a package and a repository linked
// in one entry, the registry's ownership markers, and seed 004's reachability rule.

// TestOwnershipMarkers reads the MCP Registry's ownership markers from the sources (npm
// package.json mcpName, PyPI README "mcp-name:") and shows them as evidence.
func TestOwnershipMarkers(t *testing.T) {
	s := newTestSources(t)
	ctx := context.Background()
	n := s.npm.Package(ctx, "@probity-fixtures/weather-mcp")
	if n.Facts.Source.Outcome != SourceOK || n.Facts.MCPName != "io.github.probity-fixtures/weather" {
		t.Errorf("npm: %+v", n.Facts)
	}
	p := s.pypi.Project(ctx, "probity-fixture-weather")
	if p.Facts.Source.Outcome != SourceOK || p.Facts.MCPName != "io.github.probity-fixtures/weather-py" {
		t.Errorf("pypi: %+v", p.Facts)
	}
	// The recorded packument of a package the registry lists carries one too.
	if f := s.npm.Package(ctx, "@modelcontextprotocol/server-filesystem"); f.Facts.MCPName != "io.github.modelcontextprotocol/server-filesystem" {
		t.Errorf("server-filesystem: mcpName %q", f.Facts.MCPName)
	}
	// One without.
	if f := s.npm.Package(ctx, "@probity-fixtures/attested"); f.Facts.Source.Outcome != SourceOK || f.Facts.MCPName != "" {
		t.Errorf("attested: mcpName %q", f.Facts.MCPName)
	}
	s.noMisses(t)

	for _, tc := range []struct{ readme, want string }{
		{"mcp-name: io.github.acme/weather", "io.github.acme/weather"},
		{"# X\n<!-- mcp-name: io.github.acme/weather -->\n", "io.github.acme/weather"},
		{"mcp-name:\tcom.example/srv-1.2_x and more", "com.example/srv-1.2_x"},
		{"first mcp-name: a.b/c then mcp-name: d.e/f", "a.b/c"},
		{"mcp-name: no-slash", ""},
		{"mcp-name:\n io.github.acme/weather", ""},
		{"", ""},
		{"mcp-name: a/" + strings.Repeat("b", 300), ""},
	} {
		if got := readmeMCPName(tc.readme); got != tc.want {
			t.Errorf("readmeMCPName(%q) = %q, want %q", tc.readme, got, tc.want)
		}
	}
	for _, tc := range []struct{ raw, want string }{
		{`"io.github.acme/weather"`, "io.github.acme/weather"},
		{`" io.github.acme/weather "`, "io.github.acme/weather"},
		{`42`, ""}, {`null`, ""}, {``, ""},
		{`"` + strings.Repeat("a", 300) + `"`, ""},
	} {
		if got := npmMCPName(json.RawMessage(tc.raw)); got != tc.want {
			t.Errorf("npmMCPName(%s) = %q, want %q", tc.raw, got, tc.want)
		}
	}

	// The evidence of package_repository: the marker beside the server's name.
	evidence := func(f *Facts) string {
		var b strings.Builder
		for _, e := range resultOf(evalTest(t, f), CheckPackageRepository).Evidence {
			b.WriteString(e.What + " [" + e.Sample + "]\n")
		}
		return b.String()
	}
	if ev := evidence(goodNPM()); !strings.Contains(ev, "ownership marker (npm package.json mcpName), naming this server [io.github.acme/weather-mcp]") {
		t.Errorf("matching marker: %s", ev)
	}
	other := goodNPM()
	other.Package.MCPName = "io.github.evil/weather-mcp"
	if ev := evidence(other); !strings.Contains(ev, "naming another server than this one (io.github.acme/weather-mcp) [io.github.evil/weather-mcp]") {
		t.Errorf("other marker: %s", ev)
	}
	none := goodNPM()
	none.Package.MCPName = ""
	if ev := evidence(none); !strings.Contains(ev, "ownership marker (npm package.json mcpName): none") {
		t.Errorf("no marker: %s", ev)
	}
	py := packageOnly()
	py.Package.Ecosystem, py.Package.MCPName = "pypi", "io.github.acme/weather-py"
	if ev := evidence(py); !strings.Contains(ev, "ownership marker (PyPI README mcp-name) [io.github.acme/weather-py]") {
		t.Errorf("pypi marker: %s", ev)
	}
	// The marker is evidence only: it never changes the result.
	if a, b := resultOf(evalTest(t, goodNPM()), CheckPackageRepository).Status, resultOf(evalTest(t, other), CheckPackageRepository).Status; a != b {
		t.Errorf("the marker changed the result: %s, %s", a, b)
	}
}

// TestCollectLinkedServer collects a server with a remote, an npm package and the
// repository it lists, replayed from the source fixtures: the listed repository is read,
// the package compared with it, the handshake taken from the endpoint facts.
func TestCollectLinkedServer(t *testing.T) {
	ep := &EndpointFacts{Source: Source{Outcome: SourceOK}, URL: "https://files.example.org/mcp", Answered: true}
	tools := []json.RawMessage{json.RawMessage(`{"name":"read_file","description":"Reads a file.","annotations":{"readOnlyHint":true}}`)}
	target := func(repo string) Target {
		return Target{
			Kind: "remote", Locator: "https://files.example.org/mcp", Remote: "https://files.example.org/mcp",
			ServerName: "io.github.modelcontextprotocol/server-filesystem",
			Package:    &PackageRef{Ecosystem: "npm", Name: "@modelcontextprotocol/server-filesystem"},
			Repository: repo,
			Unchecked:  []PartRef{{Kind: "oci", Locator: "docker.io/mcp/filesystem:1"}, {Kind: "pypi", Locator: "pkg:pypi/other"}},
		}
	}

	c, s := newTestCollector(t, &fakeVerifier{t: t})
	f := c.Collect(context.Background(), target("https://github.com/modelcontextprotocol/servers"), tools, ep)
	if f.Kind != "remote" || f.Repository != "https://github.com/modelcontextprotocol/servers" || f.ServerName != "io.github.modelcontextprotocol/server-filesystem" || len(f.Unchecked) != 2 {
		t.Errorf("facts %+v", f)
	}
	if f.Package == nil || f.Package.Source.Outcome != SourceOK || f.Repo == nil || !f.Repo.Exists || f.Endpoint != ep || f.Scorecard == nil || f.Advisories == nil || f.Manifest != nil {
		t.Fatalf("facts %+v", f)
	}
	v := Evaluate(f, Options{Now: fixtureNow, Popular: testPopularList(t)})
	want := map[string]string{
		CheckSourceRepository: "passed", CheckPackageRepository: "passed", CheckBuildProvenance: "skipped",
		CheckLicense: "passed", CheckMaintenance: "passed", CheckScorecard: "partial", CheckPackageName: "passed",
		CheckAdvisories: "failed", CheckHidden: "passed", CheckDestructive: "passed", CheckHandshake: "passed",
	}
	for _, r := range v.Results {
		if string(r.Status) != want[r.ID] {
			t.Errorf("%s: %s %q, want %s", r.ID, r.Status, r.Reason, want[r.ID])
		}
	}
	r := resultOf(v, CheckPackageRepository)
	if !strings.Contains(r.Reason, "metadata names the repository the server lists, github.com/modelcontextprotocol/servers") {
		t.Errorf("package_repository: %q", r.Reason)
	}
	if !slices.ContainsFunc(r.Evidence, func(e Evidence) bool {
		return strings.Contains(e.What, "mcpName), naming this server") && e.Sample == "io.github.modelcontextprotocol/server-filesystem"
	}) {
		t.Errorf("no ownership marker in the evidence: %+v", r.Evidence)
	}
	s.noMisses(t)

	// The same package under a server listing another repository: it fails, where the
	// old rule compared the metadata with itself.
	c, s = newTestCollector(t, &fakeVerifier{t: t})
	f = c.Collect(context.Background(), target("https://github.com/probity-fixtures/bundle"), tools, ep)
	if f.Repo == nil || f.Repo.URL != "https://github.com/probity-fixtures/bundle" {
		t.Fatalf("the listed repository was not the one read: %+v", f.Repo)
	}
	if s.srv.hits("github", "/repos/modelcontextprotocol/servers") != 0 {
		t.Error("the package's own repository was read although the server lists one")
	}
	if s.srv.hits("github", "/repos/probity-fixtures/bundle/contents/manifest.json?ref=0a1b2c3d4e5f60718293a4b5c6d7e8f901234567") != 0 {
		t.Error("a bundle manifest was read for a remote server")
	}
	v = Evaluate(f, Options{Now: fixtureNow, Popular: testPopularList(t)})
	r = resultOf(v, CheckPackageRepository)
	if r.Status != StatusFailed || !strings.Contains(r.Reason, "The package's metadata names github.com/modelcontextprotocol/servers, not the repository the server lists, github.com/probity-fixtures/bundle.") {
		t.Errorf("package_repository: %s %q", r.Status, r.Reason)
	}
	s.noMisses(t)
}

// TestSourceRepositoryReachability replays seed 004's rule: a repository that does not
// exist or no one can read fails "Source repository"; Probity's own trouble reading it
// (quota, 5xx) leaves the check not run, and the run asks to be retried.
func TestSourceRepositoryReachability(t *testing.T) {
	for _, tc := range []struct {
		repo   string
		status string
		reason string
	}{
		{"https://github.com/modelcontextprotocol/servers", "passed", "The public repository github.com/modelcontextprotocol/servers exists."},
		{"https://github.com/probity-fixtures/deleted", "failed", "does not exist or no one can read it"},
		{"https://github.com/probity-fixtures/blocked", "failed", "does not exist or no one can read it"},
		{"https://github.com/probity-fixtures/outage", "not_run", "could not be read for github.com/probity-fixtures/outage this time; the check is retried"},
		{"https://github.com/quota-org/exhausted", "not_run", "could not be read for github.com/quota-org/exhausted this time; the check is retried"},
		{"https://gitlab.com/acme/weather", "failed", "not on GitHub"},
	} {
		t.Run(tc.repo, func(t *testing.T) {
			c, _ := newTestCollector(t, nil)
			ep := &EndpointFacts{Source: Source{Outcome: SourceOK}, URL: "https://weather.example.com/mcp", Answered: true}
			f := c.Collect(context.Background(), Target{Kind: "remote", Locator: ep.URL, Remote: ep.URL, Repository: tc.repo}, nil, ep)
			v := Evaluate(f, Options{Now: fixtureNow, Popular: testPopularList(t)})
			r := resultOf(v, CheckSourceRepository)
			if string(r.Status) != tc.status || !strings.Contains(r.Reason, tc.reason) {
				t.Fatalf("%s %q, want %s containing %q", r.Status, r.Reason, tc.status, tc.reason)
			}
			if v.Retry() != (tc.status == "not_run") {
				t.Errorf("Retry() = %v, not run %v", v.Retry(), v.NotRun())
			}
			if tc.status == "not_run" {
				if len(r.Evidence) == 0 || r.Evidence[0].Sample == "" {
					t.Errorf("no error evidence: %+v", r)
				}
				if StatusText(r.Status) != "not run, retried" || !slices.Contains(v.NotVerified, "the Source repository check was not run (Probity could not read its source this time; it is retried): Verified needs a public source repository") {
					t.Errorf("not shown as not run: %q %q", StatusText(r.Status), v.NotVerified)
				}
				// Signed as skipped: the supply/v1 predicate has four statuses.
				if o := v.Outcomes()[CheckSourceRepository]; o.Status != StatusSkipped {
					t.Errorf("signed as %s", o.Status)
				}
			}
		})
	}
}

// TestSeed004HostedServer: "Ein hosted server hat kein Package, daher gelten die Checks
// für Package, Provenance und Advisory hier nicht" — a remote with a passing public
// repository and no package is Verified on the checks that apply, exactly 60 points.
func TestSeed004HostedServer(t *testing.T) {
	v := evalTest(t, goodRemote())
	want := map[string]wantResult{
		CheckSourceRepository: {StatusPassed, 10}, CheckPackageRepository: {StatusSkipped, 0}, CheckBuildProvenance: {StatusSkipped, 0},
		CheckLicense: {StatusPassed, 5}, CheckMaintenance: {StatusPassed, 5}, CheckScorecard: {StatusPassed, 15},
		CheckPackageName: {StatusSkipped, 0}, CheckAdvisories: {StatusSkipped, 0}, CheckHidden: {StatusPassed, 15},
		CheckDestructive: {StatusPassed, 5}, CheckHandshake: {StatusPassed, 5},
	}
	for _, r := range v.Results {
		if w := want[r.ID]; r.Status != w.status || r.Points != w.points {
			t.Errorf("%s: %s %v %q, want %s %v", r.ID, r.Status, r.Points, r.Reason, w.status, w.points)
		}
	}
	if v.WeightRan != 60 || v.Score != 100 || !v.Verified {
		t.Fatalf("hosted server: ran %d score %d verified %v %q", v.WeightRan, v.Score, v.Verified, v.NotVerified)
	}
	// One point fewer checked, and it can no longer be Verified.
	noScorecard := goodRemote()
	noScorecard.Scorecard.Source.Outcome = SourceFailed
	if v := evalTest(t, noScorecard); v.Verified || v.WeightRan != 45 || !v.Retry() {
		t.Errorf("scorecard not run: ran %d verified %v retry %v", v.WeightRan, v.Verified, v.Retry())
	}
	// A README Probity could not read (its own trouble) is never a silent pass: the
	// Hidden instructions check is not run, retried, and the server is not Verified.
	noReadme := goodRemote()
	noReadme.Repo.README, noReadme.Repo.READMEFailed = "", true
	noReadme.Repo.Source.Error = "GitHub README: throttled by Probity's own limit"
	if v := evalTest(t, noReadme); v.Verified || !v.Retry() || !slices.Contains(v.NotRun(), CheckHidden) {
		t.Errorf("README not read: verified %v, not run %v", v.Verified, v.NotRun())
	}
	// The same with no tools to read (a remote asking for a login): not run either,
	// not "nothing to read".
	noTools := goodRemote()
	noTools.Tools = nil
	noTools.Repo.README, noTools.Repo.READMEFailed = "", true
	if v := evalTest(t, noTools); !slices.Contains(v.NotRun(), CheckHidden) {
		t.Errorf("README not read, no tools: not run %v", v.NotRun())
	}
	// Without a repository it cannot be Verified at all.
	bare := goodRemote()
	bare.Repo, bare.Repository, bare.Scorecard = nil, "", nil
	if v := evalTest(t, bare); v.Verified || v.WeightRan != 25 {
		t.Errorf("hosted server without repository: ran %d verified %v", v.WeightRan, v.Verified)
	}
}

type wantResult struct {
	status attest.SupplyStatus
	points float64
}
