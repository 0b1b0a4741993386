package supply

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeVerifier is a ProvenanceVerifier for the Collect tests. It enforces what the
// Collector promises the verifier (called only with present, well-formed input;
// PyPI provenance aligned with its files) and answers with facts chosen by the test.
type fakeVerifier struct {
	t      *testing.T
	answer ProvenanceFacts

	mu    sync.Mutex
	calls []string
}

func (f *fakeVerifier) VerifyNPM(attestations []byte, name, version, integrity string) ProvenanceFacts {
	f.mu.Lock()
	f.calls = append(f.calls, "npm "+name+"@"+version+" "+integrity)
	f.mu.Unlock()
	if !json.Valid(attestations) || name == "" || version == "" || !strings.HasPrefix(integrity, "sha512-") {
		f.t.Errorf("VerifyNPM(%d bytes, %q, %q, %q): contract broken", len(attestations), name, version, integrity)
	}
	return f.answer
}

func (f *fakeVerifier) VerifyPyPI(provenance [][]byte, project, version string, files []PyPIFile) ProvenanceFacts {
	f.mu.Lock()
	names := make([]string, len(files))
	for i, fl := range files {
		names[i] = fl.Filename
	}
	f.calls = append(f.calls, "pypi "+project+"=="+version+" "+strings.Join(names, ","))
	f.mu.Unlock()
	if len(provenance) == 0 || len(provenance) != len(files) || project == "" || version == "" {
		f.t.Errorf("VerifyPyPI(%d, %q, %q, %d files): contract broken", len(provenance), project, version, len(files))
	}
	for i, p := range provenance {
		if !json.Valid(p) || len(files[i].SHA256) != 64 {
			f.t.Errorf("VerifyPyPI: provenance %d or its file is malformed", i)
		}
	}
	return f.answer
}

func newTestCollector(t *testing.T, v ProvenanceVerifier) (*Collector, *testSources) {
	s := newTestSources(t)
	return NewCollector(CollectorConfig{
		NPM: s.npm, PyPI: s.pypi, GitHub: s.github, DepsDev: s.depsdev, ScorecardAPI: s.scorecard, OSV: s.osv,
		Provenance: v,
		Now:        func() time.Time { return fixtureNow },
	}), s
}

func TestCollectNPM(t *testing.T) {
	v := &fakeVerifier{t: t}
	c, s := newTestCollector(t, v)
	tools := []json.RawMessage{json.RawMessage(`{"name":"read_file"}`)}
	f := c.Collect(context.Background(), TargetOf("npm", "pkg:npm/%40modelcontextprotocol/server-filesystem"), tools, nil)
	if f.Kind != "npm" || f.Locator != "pkg:npm/%40modelcontextprotocol/server-filesystem" || len(f.Tools) != 1 {
		t.Errorf("facts %+v", f)
	}
	if f.Package == nil || f.Package.Source.Outcome != SourceOK || f.Package.Latest != "2026.8.31" || f.Package.Name != "@modelcontextprotocol/server-filesystem" {
		t.Fatalf("package %+v", f.Package)
	}
	if f.Repo == nil || !f.Repo.Exists || f.Repo.URL != "https://github.com/modelcontextprotocol/servers" || f.Repo.LicenseSPDX != "MIT" {
		t.Errorf("repo %+v", f.Repo)
	}
	if f.Provenance == nil || f.Provenance.Source.Outcome != SourceNoData || f.Provenance.Present || f.Provenance.Version != "2026.8.31" || len(v.calls) != 0 {
		t.Errorf("provenance %+v, verifier calls %q", f.Provenance, v.calls)
	}
	if f.Scorecard == nil || f.Scorecard.Source.Outcome != SourceOK || f.Scorecard.Score != 5.8 || f.Scorecard.From != "deps.dev" {
		t.Errorf("scorecard %+v", f.Scorecard)
	}
	a := f.Advisories
	if a == nil || a.Source.Outcome != SourceOK || a.Dependencies != 7 || a.Version != "2026.8.31" || len(a.Advisories) != 3 || !a.Advisories[0].Critical || a.Advisories[0].Package != "diff" {
		t.Errorf("advisories %+v", a)
	}
	if f.Manifest != nil || f.Endpoint != nil {
		t.Errorf("manifest %+v endpoint %+v", f.Manifest, f.Endpoint)
	}
	if s.srv.hits("scorecard", "/projects/github.com/modelcontextprotocol/servers") != 0 {
		t.Error("Scorecard API asked although deps.dev had a scorecard")
	}
	s.noMisses(t)
}

func TestCollectNPMAttested(t *testing.T) {
	v := &fakeVerifier{t: t, answer: ProvenanceFacts{Present: true, Verified: true, Kinds: []string{"npm-slsa-provenance", "npm-publish"},
		Repository: "https://github.com/probity-fixtures/attested-server", Commit: "4f6c3a2b1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a"}}
	c, s := newTestCollector(t, v)
	f := c.Collect(context.Background(), TargetOf("npm", "pkg:npm/%40probity-fixtures/attested"), nil, nil)
	if len(v.calls) != 1 || !strings.HasPrefix(v.calls[0], "npm @probity-fixtures/attested@1.2.0 sha512-") {
		t.Fatalf("verifier calls %q", v.calls)
	}
	p := f.Provenance
	if p == nil || p.Source.Outcome != SourceOK || !p.Verified || p.Version != "1.2.0" || p.Commit == "" ||
		!strings.HasSuffix(p.Source.URL, "/-/npm/v1/attestations/@probity-fixtures%2Fattested@1.2.0") || p.Source.FetchedAt.IsZero() {
		t.Errorf("provenance %+v", p)
	}
	if f.Repo == nil || f.Repo.LicenseSPDX != "NOASSERTION" || f.Repo.Owner != "Probity-Fixtures" {
		t.Errorf("repo %+v", f.Repo)
	}
	// deps.dev never scanned it; the Scorecard API has it, under GitHub's spelling.
	if f.Scorecard == nil || f.Scorecard.Source.Outcome != SourceOK || f.Scorecard.Score != 7.4 || f.Scorecard.From != "scorecard-api" {
		t.Errorf("scorecard %+v", f.Scorecard)
	}
	// deps.dev has not indexed the version: the package itself is checked.
	a := f.Advisories
	if a == nil || a.Source.Outcome != SourceOK || a.Dependencies != 0 || len(a.Advisories) != 0 || !strings.Contains(a.Source.Error, "only the package itself") {
		t.Errorf("advisories %+v", a)
	}
	s.noMisses(t)
}

func TestCollectNPMOutcomes(t *testing.T) {
	c, _ := newTestCollector(t, nil)
	ctx := context.Background()
	gone := c.Collect(ctx, TargetOf("npm", "pkg:npm/probity-fixture-unpublished"), nil, nil)
	if gone.Package.Source.Outcome != SourceNoData || !gone.Package.Unpublished || gone.Repo != nil || gone.Provenance != nil || gone.Advisories != nil || gone.Scorecard != nil {
		t.Errorf("unpublished: %+v", gone)
	}
	gl := c.Collect(ctx, TargetOf("npm", "probity-fixture-gitlab"), nil, nil)
	if gl.Repo != nil || gl.Package.RepositoryURL != "https://gitlab.com/probity-group/sub-group/mcp-server" || gl.Scorecard != nil || gl.Advisories == nil {
		t.Errorf("gitlab: package %+v repo %+v scorecard %+v", gl.Package, gl.Repo, gl.Scorecard)
	}
	// No verifier configured: present attestations are SourceFailed, never verified.
	att := c.Collect(ctx, TargetOf("npm", "pkg:npm/%40probity-fixtures/attested"), nil, nil)
	if att.Provenance == nil || att.Provenance.Source.Outcome != SourceFailed || !att.Provenance.Present || att.Provenance.Verified {
		t.Errorf("no verifier: %+v", att.Provenance)
	}
	// The busy package's graph does not resolve and OSV answers garbage: SourceFailed.
	busy := c.Collect(ctx, TargetOf("npm", "probity-fixture-busy"), nil, nil)
	if busy.Advisories == nil || busy.Advisories.Source.Outcome != SourceFailed {
		t.Errorf("busy advisories: %+v", busy.Advisories)
	}
}

func TestCollectPyPI(t *testing.T) {
	v := &fakeVerifier{t: t, answer: ProvenanceFacts{Present: true, Verified: true, Kinds: []string{"pypi-pep740"}, Repository: "https://github.com/modelcontextprotocol/servers"}}
	c, s := newTestCollector(t, v)
	f := c.Collect(context.Background(), TargetOf("pypi", "pkg:pypi/mcp-server-fetch"), nil, nil)
	if f.Package == nil || f.Package.Source.Outcome != SourceOK || f.Package.Latest != "2025.4.7" || f.Package.License != "MIT" {
		t.Fatalf("package %+v", f.Package)
	}
	if len(v.calls) != 1 || v.calls[0] != "pypi mcp-server-fetch==2025.4.7 mcp_server_fetch-2025.4.7-py3-none-any.whl" {
		t.Errorf("verifier calls %q", v.calls)
	}
	if f.Provenance == nil || !f.Provenance.Verified || f.Provenance.Version != "2025.4.7" || !strings.Contains(f.Provenance.Source.URL, "/integrity/mcp-server-fetch/") {
		t.Errorf("provenance %+v", f.Provenance)
	}
	if f.Repo == nil || !f.Repo.Exists || f.Repo.URL != "https://github.com/modelcontextprotocol/servers" {
		t.Errorf("repo %+v", f.Repo)
	}
	if f.Scorecard == nil || f.Scorecard.Score != 5.8 {
		t.Errorf("scorecard %+v", f.Scorecard)
	}
	a := f.Advisories
	if a == nil || a.Source.Outcome != SourceOK || a.Dependencies != 4 || len(a.Advisories) != 2 || a.Advisories[0].ID != "GHSA-prb1-self-0007" || !a.Advisories[1].Critical {
		t.Errorf("advisories %+v", a)
	}
	s.noMisses(t)
}

func TestCollectGitHub(t *testing.T) {
	c, s := newTestCollector(t, &fakeVerifier{t: t})
	given := []json.RawMessage{json.RawMessage(`{"name":"stale"}`)}
	f := c.Collect(context.Background(), TargetOf("github", "https://github.com/probity-fixtures/bundle"), given, nil)
	if f.Repo == nil || !f.Repo.Exists || f.Repo.LicenseSPDX != "Apache-2.0" || f.Repo.HeadCommit != "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567" {
		t.Fatalf("repo %+v", f.Repo)
	}
	if f.Manifest == nil || f.Manifest.Source.Outcome != SourceOK || f.Manifest.ToolCount != 2 || f.Manifest.Commit != f.Repo.HeadCommit {
		t.Errorf("manifest %+v", f.Manifest)
	}
	if len(f.Tools) != 2 || !f.ToolsIncomplete || !strings.Contains(string(f.Tools[1]), "delete_note") {
		t.Errorf("tools %s, incomplete %v", f.Tools, f.ToolsIncomplete)
	}
	// Never scanned by either: SourceNoData, not 0.
	if f.Scorecard == nil || f.Scorecard.Source.Outcome != SourceNoData || f.Scorecard.Score != 0 {
		t.Errorf("scorecard %+v", f.Scorecard)
	}
	if f.Package != nil || f.Provenance != nil || f.Advisories != nil {
		t.Errorf("package facts on a github entry: %+v", f)
	}
	// A repository without manifest keeps the given tools.
	g := c.Collect(context.Background(), TargetOf("github", "https://github.com/modelcontextprotocol/servers"), given, nil)
	if g.Manifest == nil || g.Manifest.Source.Outcome != SourceNoData || len(g.Tools) != 1 || g.ToolsIncomplete {
		t.Errorf("servers: manifest %+v tools %s", g.Manifest, g.Tools)
	}
	d := c.Collect(context.Background(), TargetOf("github", "https://github.com/probity-fixtures/deleted"), nil, nil)
	if d.Repo == nil || d.Repo.Exists || d.Repo.Source.Outcome != SourceNoData || d.Manifest != nil || d.Scorecard != nil {
		t.Errorf("deleted: %+v", d)
	}
	s.noMisses(t)
}

func TestCollectRemote(t *testing.T) {
	c, s := newTestCollector(t, nil)
	ep := &EndpointFacts{Source: Source{Outcome: SourceOK}, URL: "http://mcp.example.org/mcp", PlainHTTP: true, Answered: true}
	tools := []json.RawMessage{json.RawMessage(`{"name":"exec_command"}`)}
	f := c.Collect(context.Background(), TargetOf("remote", "http://mcp.example.org/mcp"), tools, ep)
	if f.Endpoint != ep || len(f.Tools) != 1 || f.Package != nil || f.Repo != nil || f.Scorecard != nil {
		t.Errorf("remote: %+v", f)
	}
	if n := len(s.srv.received()); n != 0 {
		t.Errorf("%d requests for a remote entry", n)
	}
}

func TestCollectCanceled(t *testing.T) {
	c, _ := newTestCollector(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := c.Collect(ctx, TargetOf("npm", "pkg:npm/%40modelcontextprotocol/server-filesystem"), nil, nil)
	if f.Package == nil || f.Package.Source.Outcome != SourceFailed || !strings.Contains(f.Package.Source.Error, "context canceled") {
		t.Errorf("canceled: %+v", f.Package)
	}
}

// TestCheapReads: the cadence reads (rounds.Watcher) read one source each: a package's
// registry document, a repository's manifest at its head.
func TestCheapReads(t *testing.T) {
	c, s := newTestCollector(t, &fakeVerifier{t: t})
	ctx := context.Background()
	if p := c.PackageLatest(ctx, "npm", "pkg:npm/%40modelcontextprotocol/server-filesystem"); p.Source.Outcome != SourceOK || p.Latest != "2026.8.31" {
		t.Errorf("npm: %+v", p)
	}
	if p := c.PackageLatest(ctx, "remote", "https://x.example/mcp"); p.Source.Outcome != SourceFailed {
		t.Errorf("a remote: %+v", p)
	}
	mf, m := c.BundleManifest(ctx, "https://github.com/probity-fixtures/bundle")
	if mf.Source.Outcome != SourceOK || m == nil {
		t.Errorf("manifest: %+v, %v", mf, m)
	}
	if mf, m := c.BundleManifest(ctx, "https://gitlab.com/a/b"); mf.Source.Outcome != SourceFailed || m != nil {
		t.Errorf("not GitHub: %+v", mf)
	}
	if n := s.srv.hits("github", "/repos/probity-fixtures/bundle/commits?per_page=1"); n != 0 {
		t.Errorf("the cheap manifest read also read the commits (%d)", n)
	}
}

// TestCollectRepositoryServerWithPackage: a server whose entry is its repository (no
// remote) has its tools in the bundle manifest, also when it lists a package.
func TestCollectRepositoryServerWithPackage(t *testing.T) {
	c, _ := newTestCollector(t, &fakeVerifier{t: t})
	target := TargetOf("github", "https://github.com/probity-fixtures/bundle")
	ref, ok := PackageRefOf("npm", "pkg:npm/left-pad")
	if !ok {
		t.Fatal("no package ref")
	}
	target.Package = &ref
	f := c.Collect(context.Background(), target, nil, nil)
	if f.Manifest == nil || f.Manifest.Source.Outcome != SourceOK || len(f.Tools) == 0 {
		t.Errorf("manifest %+v, %d tools: want the bundle's", f.Manifest, len(f.Tools))
	}
	if f.Package == nil || f.Package.Source.Outcome != SourceOK {
		t.Errorf("package %+v", f.Package)
	}
}
