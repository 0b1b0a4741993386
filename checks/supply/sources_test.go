package supply

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// sources returns every source over one test client, pointed at the fixture server.
type testSources struct {
	srv       *fixtureServer
	client    *Client
	npm       *NPM
	pypi      *PyPI
	github    *GitHub
	depsdev   *DepsDev
	scorecard *ScorecardAPI
	osv       *OSV
}

func newTestSources(t testing.TB) *testSources {
	srv := startFixtureServer(t)
	c, _ := testClient(t, ClientConfig{})
	return &testSources{
		srv:       srv,
		client:    c,
		npm:       NewNPM(NPMConfig{BaseURL: srv.base("npm"), Client: c}),
		pypi:      NewPyPI(PyPIConfig{BaseURL: srv.base("pypi"), Client: c}),
		github:    NewGitHub(GitHubConfig{BaseURL: srv.base("github"), Client: c}),
		depsdev:   NewDepsDev(DepsDevConfig{BaseURL: srv.base("depsdev"), Client: c}),
		scorecard: NewScorecardAPI(ScorecardAPIConfig{BaseURL: srv.base("scorecard"), Client: c}),
		osv:       NewOSV(OSVConfig{BaseURL: srv.base("osv"), Client: c}),
	}
}

func (s *testSources) noMisses(t *testing.T) {
	t.Helper()
	if m := s.srv.misses(); len(m) > 0 {
		t.Errorf("requests without a fixture: %q", m)
	}
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestPyPIProject(t *testing.T) {
	s := newTestSources(t)
	ctx := context.Background()
	p := s.pypi.Project(ctx, "mcp-server-fetch")
	f := p.Facts
	if f.Source.Outcome != SourceOK || f.Latest != "2025.4.7" || f.License != "MIT" || f.Name != "mcp-server-fetch" ||
		f.RepositoryURL != "https://github.com/modelcontextprotocol/servers" || !f.PublishedAt.Equal(mustTime("2025-04-07T18:40:27.402311Z")) ||
		!strings.HasPrefix(f.README, "# Fetch MCP Server") || f.Ecosystem != "pypi" || len(f.Maintainers) != 0 {
		t.Errorf("mcp-server-fetch: %+v", f)
	}
	wantFiles := []string{"mcp_server_fetch-2025.4.7-py3-none-any.whl", "mcp_server_fetch-2025.4.7.tar.gz"}
	if len(p.Files) != 2 || p.Files[0].Filename != wantFiles[0] || p.Files[1].Filename != wantFiles[1] || len(p.Files[0].SHA256) != 64 {
		t.Errorf("files %+v", p.Files)
	}
	// An old project: classifiers only, Homepage on GitHub, no releases key, a
	// non-normalized name.
	c := s.pypi.Project(ctx, "Probity_Fixture.Classic")
	if c.Facts.Source.Outcome != SourceOK || c.Facts.License != "Apache-2.0 OR MIT" || c.Facts.RepositoryURL != "https://github.com/probity-fixtures/classic" ||
		c.Facts.Name != "Probity_Fixture.Classic" || len(c.Files) != 1 || !c.Facts.PublishedAt.Equal(mustTime("2019-08-30T14:22:05.118Z")) {
		t.Errorf("classic: %+v %+v", c.Facts, c.Files)
	}
	if m := s.pypi.Project(ctx, "probity-fixture-missing"); m.Facts.Source.Outcome != SourceNoData {
		t.Errorf("missing: %+v", m.Facts.Source)
	}
	if b := s.pypi.Project(ctx, "probity-fixture-broken"); b.Facts.Source.Outcome != SourceFailed || !strings.Contains(b.Facts.Source.Error, "malformed") {
		t.Errorf("broken: %+v", b.Facts.Source)
	}
	s.noMisses(t)
}

func TestPyPIProvenance(t *testing.T) {
	s := newTestSources(t)
	ctx := context.Background()
	p := s.pypi.Project(ctx, "mcp-server-fetch")
	prov, found, src := s.pypi.Provenance(ctx, "mcp-server-fetch", "2025.4.7", p.Files)
	if src.Outcome != SourceOK || len(prov) != 1 || len(found) != 1 || found[0].Filename != "mcp_server_fetch-2025.4.7-py3-none-any.whl" ||
		!strings.Contains(src.URL, "/integrity/mcp-server-fetch/2025.4.7/mcp_server_fetch-2025.4.7-py3-none-any.whl/provenance") {
		t.Fatalf("provenance: %+v, %d, %+v", src, len(prov), found)
	}
	for _, r := range s.srv.received() {
		if strings.Contains(r.Path, "/integrity/") && r.Header.Get("Accept") != "application/vnd.pypi.integrity.v1+json" {
			t.Errorf("%s: Accept %q", r.Path, r.Header.Get("Accept"))
		}
	}
	// Only the sdist: none.
	_, _, src = s.pypi.Provenance(ctx, "mcp-server-fetch", "2025.4.7", p.Files[1:])
	if src.Outcome != SourceNoData {
		t.Errorf("sdist only: %+v", src)
	}
	s.noMisses(t)
}

func TestPyPILicense(t *testing.T) {
	tests := []struct {
		expr, license string
		classifiers   []string
		want          string
	}{
		{"MIT OR Apache-2.0", "BSD", []string{"License :: OSI Approved :: BSD License"}, "MIT OR Apache-2.0"},
		{"", "MIT", nil, "MIT"},
		{"", "Apache-2.0 WITH LLVM-exception", nil, "Apache-2.0 WITH LLVM-exception"},
		{"", "Apache 2.0", []string{"License :: OSI Approved :: Apache Software License"}, "Apache-2.0"},
		{"", "", []string{"License :: OSI Approved :: MIT License"}, "MIT"},
		{"", "", []string{"License :: OSI Approved :: BSD License", "License :: OSI Approved :: MIT License"}, "BSD-3-Clause OR MIT"},
		{"", "Apache 2.0", nil, "Apache-2.0"},
		{"", "Proprietary", nil, "Proprietary"},
		{"", "BSD", []string{"License :: OSI Approved :: Artistic License"}, "BSD"},
		{"", "Copyright (c) 2020 X\n\nPermission is hereby granted, free of charge, to any person", nil, "MIT"},
		{"", strings.Repeat("Some long custom license text. ", 20), nil, ""},
		{"", "", []string{"Programming Language :: Python"}, ""},
	}
	for _, tt := range tests {
		if got := pypiLicense(tt.expr, tt.license, tt.classifiers); got != tt.want {
			t.Errorf("pypiLicense(%q, %q, %q) = %q, want %q", tt.expr, clip(tt.license, 20), tt.classifiers, got, tt.want)
		}
	}
	for s, want := range map[string]bool{"MIT": true, "(MIT OR Apache-2.0) AND BSD-3-Clause": true, "GPL-2.0+": true,
		"Apache 2.0": false, "MIT OR": false, "(MIT": false, "MIT)": false, "": false, "BSD": false, "LicenseRef-x": true} {
		if got := looksLikeSPDX(s); got != want {
			t.Errorf("looksLikeSPDX(%q) = %v", s, got)
		}
	}
}

func TestPyPIRepository(t *testing.T) {
	tests := []struct {
		urls map[string]string
		home string
		want string
	}{
		{map[string]string{"Source Code": "https://github.com/A/B"}, "", "https://github.com/a/b"},
		{map[string]string{"Homepage": "https://example.org", "Repository": "https://gitlab.com/g/p"}, "", "https://gitlab.com/g/p"},
		{map[string]string{"Homepage": "https://example.org"}, "", ""},
		{map[string]string{"Homepage": "https://github.com/o/r"}, "", "https://github.com/o/r"},
		{nil, "https://github.com/o/home", "https://github.com/o/home"},
		{map[string]string{"Documentation": "https://github.com/o/docs"}, "", ""},
		{map[string]string{"Code": "git@github.com:o/code.git", "GitHub": "https://github.com/o/other"}, "", "https://github.com/o/code"},
	}
	for _, tt := range tests {
		if got := pypiRepository(tt.urls, tt.home); got != tt.want {
			t.Errorf("pypiRepository(%v, %q) = %q, want %q", tt.urls, tt.home, got, tt.want)
		}
	}
}

func TestGitHubRepository(t *testing.T) {
	s := newTestSources(t)
	ctx := context.Background()
	servers := s.github.Repository(ctx, "modelcontextprotocol", "servers")
	want := RepoFacts{
		Source:         servers.Source,
		URL:            "https://github.com/modelcontextprotocol/servers",
		Owner:          "modelcontextprotocol",
		Name:           "servers",
		Exists:         true,
		LicenseSPDX:    "MIT",
		LastPush:       mustTime("2026-11-29T21:04:44Z"),
		LatestRelease:  mustTime("2026-11-20T17:00:00Z"),
		LastCommit:     mustTime("2026-11-29T21:04:40Z"),
		DefaultBranch:  "main",
		HeadCommit:     "b7f3c0d1e2a3948576a1b2c3d4e5f60718293a4b",
		README:         "# Model Context Protocol servers\n\nThis repository is a collection of *reference implementations* for the Model Context Protocol.\n",
		StargazerCount: 70000,
	}
	if servers.Source.Outcome != SourceOK || servers.Source.Error != "" || fmt.Sprint(servers) != fmt.Sprint(want) {
		t.Errorf("servers:\n got %+v\nwant %+v", servers, want)
	}
	for _, r := range s.srv.received() {
		if strings.HasSuffix(r.Path, "/readme") && r.Header.Get("Accept") != "application/vnd.github.raw" {
			t.Errorf("readme Accept %q", r.Header.Get("Accept"))
		}
	}

	// Requested in lower case; GitHub's full_name gives the canonical case.
	att := s.github.Repository(ctx, "probity-fixtures", "attested-server")
	if att.Source.Outcome != SourceOK || att.Owner != "Probity-Fixtures" || att.Name != "Attested-Server" || att.URL != "https://github.com/probity-fixtures/attested-server" ||
		att.LicenseSPDX != "NOASSERTION" || !att.LatestRelease.IsZero() || att.README != "" || att.Source.Error != "" || att.HeadCommit == "" {
		t.Errorf("attested: %+v", att)
	}
	if d := s.github.Repository(ctx, "probity-fixtures", "deleted"); d.Source.Outcome != SourceNoData || d.Exists {
		t.Errorf("deleted: %+v", d)
	}
	if a := s.github.Repository(ctx, "probity-fixtures", "archived"); !a.Archived || a.DefaultBranch != "master" || !a.LastCommit.Equal(mustTime("2021-03-04T05:06:00Z")) {
		t.Errorf("archived: %+v", a)
	}
	if g := s.github.Repository(ctx, "probity-fixtures", "garbled"); g.Source.Outcome != SourceFailed || !strings.Contains(g.Source.Error, "malformed") || g.Exists {
		t.Errorf("garbled: %+v", g.Source)
	}
	if bad := s.github.Repository(ctx, "../etc", "passwd"); bad.Source.Outcome != SourceFailed {
		t.Errorf("bad owner: %+v", bad.Source)
	}
	s.noMisses(t)
}

func TestGitHubManifest(t *testing.T) {
	s := newTestSources(t)
	ctx := context.Background()
	m, parsed := s.github.Manifest(ctx, "probity-fixtures", "bundle", "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567")
	if m.Source.Outcome != SourceOK || parsed == nil || m.ManifestVersion != "0.3" || m.Name != "bundle-fixture" || m.Version != "0.4.0" ||
		!m.ToolsGenerated || m.ToolCount != 2 || m.Commit != "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567" {
		t.Fatalf("bundle: %+v", m)
	}
	var tool struct{ Name, Description string }
	if err := json.Unmarshal(parsed.Tools[1], &tool); err != nil || tool.Name != "delete_note" {
		t.Errorf("tool %s: %v", parsed.Tools[1], err)
	}
	none, parsed := s.github.Manifest(ctx, "modelcontextprotocol", "servers", "b7f3c0d1e2a3948576a1b2c3d4e5f60718293a4b")
	if none.Source.Outcome != SourceNoData || parsed != nil {
		t.Errorf("servers: %+v", none)
	}
	s.noMisses(t)
}

func TestDepsDev(t *testing.T) {
	s := newTestSources(t)
	ctx := context.Background()
	sfs := PackageVersion{System: "npm", Name: "@modelcontextprotocol/server-filesystem", Version: "2026.8.31"}
	v := s.depsdev.GetVersion(ctx, sfs)
	if v.Source.Outcome != SourceOK || len(v.AdvisoryKeys) != 0 || !slices.Contains(v.Links, DepsDevLink{Label: "SOURCE_REPO", URL: "git+https://github.com/modelcontextprotocol/servers.git"}) ||
		len(v.RelatedProjects) != 2 || v.RelatedProjects[0].ProjectKey != "github.com/modelcontextprotocol/servers" || v.RelatedProjects[0].RelationType != "SOURCE_REPO" {
		t.Errorf("version: %+v", v)
	}
	deps, src := s.depsdev.GetDependencies(ctx, sfs)
	if src.Outcome != SourceOK || len(deps) != 7 || deps[0] != (PackageVersion{System: "npm", Name: "@modelcontextprotocol/sdk", Version: "1.32.2"}) {
		t.Errorf("dependencies: %+v %+v", src, deps)
	}
	if _, src := s.depsdev.GetDependencies(ctx, PackageVersion{System: "npm", Name: "probity-fixture-busy", Version: "0.3.0"}); src.Outcome != SourceFailed || !strings.Contains(src.Error, "could not resolve") {
		t.Errorf("unresolvable: %+v", src)
	}
	if _, src := s.depsdev.GetDependencies(ctx, PackageVersion{System: "npm", Name: "@probity-fixtures/attested", Version: "1.2.0"}); src.Outcome != SourceNoData {
		t.Errorf("not indexed: %+v", src)
	}
	p := s.depsdev.GetProject(ctx, "github.com/modelcontextprotocol/servers")
	if p.Source.Outcome != SourceOK || p.Score != 5.8 || p.Commit != "9d8c7b6a5f4e3d2c1b0a99887766554433221100" || !p.Date.Equal(mustTime("2026-11-24T00:00:00Z")) || p.From != "deps.dev" {
		t.Errorf("project: %+v", p)
	}
	// Never scanned: SourceNoData, not 0.
	for _, key := range []string{"github.com/probity-fixtures/attested-server", "github.com/probity-fixtures/bundle"} {
		if p := s.depsdev.GetProject(ctx, key); p.Source.Outcome != SourceNoData || p.Score != 0 {
			t.Errorf("%s: %+v", key, p)
		}
	}
	if a := s.depsdev.GetAdvisory(ctx, "GHSA-prb1-dpsd-0003"); a.Source.Outcome != SourceOK || a.CVSS3Score != 9.1 || !strings.HasPrefix(a.CVSS3Vector, "CVSS:3.1/") {
		t.Errorf("advisory: %+v", a)
	}
	if a := s.depsdev.GetAdvisory(ctx, "GHSA-prb1-low0-0004"); a.Source.Outcome != SourceNoData {
		t.Errorf("unknown advisory: %+v", a)
	}
	if a := s.depsdev.GetAdvisory(ctx, "../../x"); a.Source.Outcome != SourceFailed {
		t.Errorf("bad id: %+v", a)
	}
	s.noMisses(t)
}

func TestScorecardAPI(t *testing.T) {
	s := newTestSources(t)
	ctx := context.Background()
	got := s.scorecard.Get(ctx, "Probity-Fixtures", "Attested-Server")
	if got.Source.Outcome != SourceOK || got.Score != 7.4 || got.Commit != "4f6c3a2b1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a" || !got.Date.Equal(mustTime("2026-11-23T04:12:55Z")) || got.From != "scorecard-api" {
		t.Errorf("attested: %+v", got)
	}
	if never := s.scorecard.Get(ctx, "probity-fixtures", "bundle"); never.Source.Outcome != SourceNoData || never.Score != 0 {
		t.Errorf("never scanned: %+v", never)
	}
	s.noMisses(t)
}

func TestOSVAdvisories(t *testing.T) {
	s := newTestSources(t)
	ctx := context.Background()
	lookup := func(ctx context.Context, id string) (float64, Source) {
		a := s.depsdev.GetAdvisory(ctx, id)
		return a.CVSS3Score, a.Source
	}
	t.Run("npm graph: withdrawn skipped, critical through deps.dev", func(t *testing.T) {
		sfs := PackageVersion{System: "npm", Name: "@modelcontextprotocol/server-filesystem", Version: "2026.8.31"}
		deps, _ := s.depsdev.GetDependencies(ctx, sfs)
		got, src := s.osv.Advisories(ctx, append([]PackageVersion{sfs}, deps...), nil, lookup)
		want := []Advisory{
			{ID: "GHSA-prb1-dpsd-0003", Package: "diff", Version: "8.0.3", Critical: true, CVSS: 9.1, Summary: "Fixture: path traversal in diff", URL: "https://osv.dev/vulnerability/GHSA-prb1-dpsd-0003"},
			{ID: "GHSA-prb1-low0-0004", Package: "minimatch", Version: "10.0.3", CVSS: 3.1, Severity: "LOW", Summary: "Fixture: information leak in minimatch", URL: "https://osv.dev/vulnerability/GHSA-prb1-low0-0004"},
			{ID: "GHSA-prb1-high-0005", Package: "brace-expansion", Version: "2.0.2", CVSS: 7.5, Severity: "HIGH", Summary: "Fixture: ReDoS in brace-expansion", URL: "https://osv.dev/vulnerability/GHSA-prb1-high-0005"},
		}
		if src.Outcome != SourceOK || src.Error != "" || !slices.Equal(got, want) {
			t.Errorf("source %+v\n got %+v\nwant %+v", src, got, want)
		}
		if s.srv.hits("depsdev", "/v3/advisories/GHSA-prb1-wdrn-0002") != 0 {
			t.Error("deps.dev asked about a withdrawn advisory")
		}
	})
	t.Run("PyPI: aliases merged, critical by the CVSS vector and by severity", func(t *testing.T) {
		fetch := PackageVersion{System: "pypi", Name: "mcp-server-fetch", Version: "2025.4.7"}
		deps, _ := s.depsdev.GetDependencies(ctx, fetch)
		got, src := s.osv.Advisories(ctx, append([]PackageVersion{fetch}, deps...), []string{"GHSA-prb1-self-0007"}, lookup)
		want := []Advisory{
			{ID: "GHSA-prb1-self-0007", Package: "mcp-server-fetch", Version: "2025.4.7", Critical: true, Severity: "CRITICAL", Summary: "Fixture: SSRF in mcp-server-fetch", URL: "https://osv.dev/vulnerability/GHSA-prb1-self-0007"},
			{ID: "GHSA-prb1-pyal-0006", Package: "requests", Version: "2.32.3", Critical: true, CVSS: 9.8, Severity: "HIGH", Summary: "Fixture: requests leaks credentials on redirect", URL: "https://osv.dev/vulnerability/GHSA-prb1-pyal-0006"},
		}
		if src.Outcome != SourceOK || !slices.Equal(got, want) {
			t.Errorf("source %+v\n got %+v\nwant %+v", src, got, want)
		}
	})
	t.Run("malformed querybatch answer", func(t *testing.T) {
		_, src := s.osv.Advisories(ctx, []PackageVersion{{System: "npm", Name: "probity-fixture-busy", Version: "0.3.0"}}, nil, nil)
		if src.Outcome != SourceFailed || !strings.Contains(src.Error, "malformed") {
			t.Errorf("source %+v", src)
		}
	})
	s.noMisses(t)
}

// osvStub is an OSV server for what fixtures cannot show: batching, paging and
// criticality edge cases. vulns maps package name → advisory IDs; details maps ID →
// the vulnerability JSON.
type osvStub struct {
	mu      sync.Mutex
	batches []int
	vulns   map[string][]string
	details map[string]string
	paged   bool
}

func (o *osvStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == "POST" && r.URL.Path == "/v1/querybatch":
		var req struct{ Queries []osvQuery }
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		o.mu.Lock()
		o.batches = append(o.batches, len(req.Queries))
		o.mu.Unlock()
		type vuln struct {
			ID string `json:"id"`
		}
		type result struct {
			Vulns []vuln `json:"vulns,omitempty"`
			Next  string `json:"next_page_token,omitempty"`
		}
		var res struct {
			Results []result `json:"results"`
		}
		for _, q := range req.Queries {
			var rs result
			ids := o.vulns[q.Package.Name]
			if o.paged && len(ids) > 1 {
				if q.PageToken == "" {
					ids, rs.Next = ids[:1], "page2"
				} else {
					ids = ids[1:]
				}
			}
			for _, id := range ids {
				rs.Vulns = append(rs.Vulns, vuln{id})
			}
			res.Results = append(res.Results, rs)
		}
		_ = json.NewEncoder(w).Encode(res)
	case r.Method == "GET" && strings.HasPrefix(r.URL.Path, "/v1/vulns/"):
		d, ok := o.details[strings.TrimPrefix(r.URL.Path, "/v1/vulns/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, d)
	default:
		http.NotFound(w, r)
	}
}

func TestOSVBatchingAndPaging(t *testing.T) {
	stub := &osvStub{vulns: map[string][]string{"p1": {"GHSA-a", "GHSA-b"}, "p4": {"GHSA-a"}}, paged: true,
		details: map[string]string{"GHSA-a": `{"id":"GHSA-a","database_specific":{"severity":"HIGH"}}`, "GHSA-b": `{"id":"GHSA-b"}`}}
	srv := httptest.NewServer(stub)
	defer srv.Close()
	c, _ := testClient(t, ClientConfig{})
	o := NewOSV(OSVConfig{BaseURL: srv.URL, Client: c, BatchSize: 2})
	var pkgs []PackageVersion
	for i := range 5 {
		pkgs = append(pkgs, PackageVersion{System: "npm", Name: fmt.Sprint("p", i), Version: "1.0.0"})
	}
	pkgs = append(pkgs, PackageVersion{System: "cargo", Name: "skipped", Version: "1"})
	ids, src := o.QueryBatch(context.Background(), pkgs)
	if src.Outcome != SourceOK || !slices.Equal(ids[1], []string{"GHSA-a", "GHSA-b"}) || !slices.Equal(ids[4], []string{"GHSA-a"}) || len(ids[5]) != 0 {
		t.Errorf("ids %q, source %+v", ids, src)
	}
	if !slices.Equal(stub.batches, []int{2, 2, 1, 1}) {
		t.Errorf("batches %v, want chunks of at most 2 and one page request", stub.batches)
	}
	adv, src := o.Advisories(context.Background(), pkgs, nil, nil)
	if src.Outcome != SourceOK || len(adv) != 3 || adv[0].Package != "p1" || adv[2].Package != "p4" {
		t.Errorf("advisories %+v, source %+v", adv, src)
	}
}

func TestOSVCriticality(t *testing.T) {
	tests := []struct {
		name      string
		detail    string
		depsScore float64
		depsOut   SourceOutcome
		critical  bool
		outcome   SourceOutcome
	}{
		{"GitHub CRITICAL", `{"id":"GHSA-x","database_specific":{"severity":"CRITICAL"}}`, 0, SourceNoData, true, SourceOK},
		{"vector 9.8", `{"id":"GHSA-x","severity":[{"type":"CVSS_V3","score":"CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"}]}`, 0, SourceNoData, true, SourceOK},
		{"vector 8.8 is not", `{"id":"GHSA-x","severity":[{"type":"CVSS_V3","score":"CVSS:3.1/AV:N/AC:L/PR:L/UI:N/S:U/C:H/I:H/A:H"}]}`, 0, SourceNoData, false, SourceOK},
		{"vector in affected[]", `{"id":"GHSA-x","affected":[{"severity":[{"type":"CVSS_V3","score":"CVSS:3.0/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H"}]}]}`, 0, SourceNoData, true, SourceOK},
		{"CVSS v4 only is not read", `{"id":"GHSA-x","severity":[{"type":"CVSS_V4","score":"CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N"}]}`, 0, SourceNoData, false, SourceOK},
		{"deps.dev 9.0", `{"id":"GHSA-x","database_specific":{"severity":"MODERATE"}}`, 9.0, SourceOK, true, SourceOK},
		{"deps.dev 8.9", `{"id":"GHSA-x"}`, 8.9, SourceOK, false, SourceOK},
		{"deps.dev failed: unknown", `{"id":"GHSA-x"}`, 0, SourceFailed, false, SourceFailed},
		{"severity not a string", `{"id":"GHSA-x","database_specific":{"severity":5}}`, 0, SourceNoData, false, SourceOK},
		{"withdrawn", `{"id":"GHSA-x","withdrawn":"2026-01-01T00:00:00Z","database_specific":{"severity":"CRITICAL"}}`, 0, SourceNoData, false, SourceOK},
		{"details of another advisory", `{"id":"GHSA-y","database_specific":{"severity":"CRITICAL"}}`, 0, SourceNoData, false, SourceFailed},
		{"malformed details", `{"id":"GHSA-x",`, 0, SourceNoData, false, SourceFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stub := &osvStub{vulns: map[string][]string{"p": {"GHSA-x"}}, details: map[string]string{"GHSA-x": tt.detail}}
			srv := httptest.NewServer(stub)
			defer srv.Close()
			c, _ := testClient(t, ClientConfig{})
			o := NewOSV(OSVConfig{BaseURL: srv.URL, Client: c})
			lookup := func(context.Context, string) (float64, Source) {
				return tt.depsScore, Source{Outcome: tt.depsOut, Error: "deps.dev " + string(tt.depsOut)}
			}
			adv, src := o.Advisories(context.Background(), []PackageVersion{{System: "npm", Name: "p", Version: "1"}}, nil, lookup)
			if src.Outcome != tt.outcome {
				t.Fatalf("outcome %s (%s), want %s", src.Outcome, src.Error, tt.outcome)
			}
			critical := len(adv) == 1 && adv[0].Critical
			if critical != tt.critical {
				t.Errorf("advisories %+v, want critical %v", adv, tt.critical)
			}
			if tt.name == "withdrawn" && len(adv) != 0 {
				t.Errorf("withdrawn advisory listed: %+v", adv)
			}
		})
	}
}
