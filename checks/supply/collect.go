package supply

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/probity-dev/probity/locator"
)

// ProvenanceVerifier verifies the attestations of a package version offline, against
// a pinned trusted root. It is declared here, where it is consumed; provenance.go
// implements it.
//
// Contract: implementations are safe for concurrent use, do no network I/O and never
// panic, whatever the bytes. The ProvenanceFacts returned has Present true when the
// input holds at least one attestation; Verified only when one verified and its
// subject matches the package (npm: dist.integrity; PyPI: the file's SHA-256);
// Repository and Commit are what the verified provenance names as its source; Error
// says why present attestations did not verify. The Collector fills Version, and
// Source.URL / FetchedAt when left empty.
type ProvenanceVerifier interface {
	// VerifyNPM verifies the npm attestations document
	// (/-/npm/v1/attestations/{name}@{version}, raw JSON) of name@version, whose
	// tarball has the SRI integrity string integrity (sha512-…).
	VerifyNPM(attestations []byte, name, version, integrity string) ProvenanceFacts
	// VerifyPyPI verifies PEP 740 provenance objects (raw JSON, one per file:
	// provenance[i] belongs to files[i]) of project's release version.
	VerifyPyPI(provenance [][]byte, project, version string, files []PyPIFile) ProvenanceFacts
}

// CollectorConfig configures a Collector. A source left nil is created with its
// defaults (the real service) over Client.
type CollectorConfig struct {
	// Client is the HTTP client of sources left nil; default NewClient with Now and
	// Logger below.
	Client *Client

	NPM          *NPM
	PyPI         *PyPI
	GitHub       *GitHub
	DepsDev      *DepsDev
	ScorecardAPI *ScorecardAPI
	OSV          *OSV

	// Provenance verifies attestations; nil reports present attestations as SourceFailed
	// ("no verifier configured").
	Provenance ProvenanceVerifier

	// Timeout bounds one Collect; default 2 min.
	Timeout time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Logger receives one event per Collect with per-source timings; default discards.
	Logger *slog.Logger
}

// Collector gathers the Facts of directory entries from the sources.
type Collector struct {
	npm       *NPM
	pypi      *PyPI
	github    *GitHub
	depsdev   *DepsDev
	scorecard *ScorecardAPI
	osv       *OSV
	verifier  ProvenanceVerifier
	timeout   time.Duration
	now       func() time.Time
	log       *slog.Logger
}

// NewCollector returns a Collector for cfg.
func NewCollector(cfg CollectorConfig) *Collector {
	c := &Collector{
		npm: cfg.NPM, pypi: cfg.PyPI, github: cfg.GitHub, depsdev: cfg.DepsDev,
		scorecard: cfg.ScorecardAPI, osv: cfg.OSV, verifier: cfg.Provenance,
		timeout: cfg.Timeout, now: cfg.Now, log: cfg.Logger,
	}
	if c.timeout <= 0 {
		c.timeout = 2 * time.Minute
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	client := cfg.Client
	if client == nil {
		client = NewClient(ClientConfig{Now: c.now, Logger: c.log})
	}
	if c.npm == nil {
		c.npm = NewNPM(NPMConfig{Client: client})
	}
	if c.pypi == nil {
		c.pypi = NewPyPI(PyPIConfig{Client: client})
	}
	if c.github == nil {
		c.github = NewGitHub(GitHubConfig{Client: client})
	}
	if c.depsdev == nil {
		c.depsdev = NewDepsDev(DepsDevConfig{Client: client})
	}
	if c.scorecard == nil {
		c.scorecard = NewScorecardAPI(ScorecardAPIConfig{Client: client})
	}
	if c.osv == nil {
		c.osv = NewOSV(OSVConfig{Client: client})
	}
	return c
}

// timings records how long each part of a Collect took, for its log event.
type timings struct {
	mu    sync.Mutex
	attrs []slog.Attr
}

func (t *timings) track(name string) func() {
	start := time.Now()
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.attrs = append(t.attrs, slog.Duration(name, time.Since(start)))
	}
}

// Target is the server one Collect reads: an entry with its linked parts (store.Part),
// as the caller found them. The checks run over the whole server: its listed source
// repository, its package and its remote endpoint.
type Target struct {
	// Kind and Locator are the entry's primary part ("remote", "npm", "pypi" or
	// "github"; store.Entry.Kind and Locator): they name the facts and the signed
	// statement's subject.
	Kind, Locator string
	// ServerName is the server's registry name (namespace/name), shown beside a
	// package's ownership marker; "" for an entry from a bare reference.
	ServerName string
	// Remote is the remote endpoint the handshake check reads, as the endpoint facts
	// given to Collect describe it (the primary remote: rounds probe it); "" when the
	// server has none.
	Remote string
	// Package is the package checked: the server's first npm or PyPI package; nil when
	// it has none. Further packages are listed in Unchecked, not checked.
	Package *PackageRef
	// Repository is the source repository the server lists (https://github.com/o/r, or
	// another URL as listed); "" when it lists none. When it lists none, the repository
	// the package's own metadata links is read as the source repository (seed 004: a
	// package without a linked repository fails "Source repository").
	Repository string
	// Unchecked are the parts listed but not checked (further npm and PyPI packages,
	// OCI images, NuGet packages, MCP bundle files); they are recorded in the facts.
	Unchecked []PartRef
}

// PackageRef names an npm or PyPI package.
type PackageRef struct {
	// Ecosystem is "npm" or "pypi".
	Ecosystem string
	// Name is the package name (npm: @scope/name or name; PyPI: the project name).
	Name string
}

// TargetOf is the Target of a one-part entry (a bare reference): kind "npm" or "pypi"
// with a package locator (pkg:npm/…, pkg:pypi/…, or a plain name), "github" with a
// repository URL, "remote" with an endpoint URL.
func TargetOf(kind, locator string) Target {
	t := Target{Kind: kind, Locator: locator}
	switch kind {
	case "npm":
		t.Package = &PackageRef{Ecosystem: "npm", Name: npmName(locator)}
	case "pypi":
		t.Package = &PackageRef{Ecosystem: "pypi", Name: pypiName(locator)}
	case "github":
		t.Repository = locator
	case "remote":
		t.Remote = locator
	}
	return t
}

// PackageRefOf reads a package part's locator (pkg:npm/…, pkg:pypi/…) of kind "npm" or
// "pypi"; ok is false for any other kind.
func PackageRefOf(kind, locator string) (ref PackageRef, ok bool) {
	switch kind {
	case "npm":
		return PackageRef{Ecosystem: "npm", Name: npmName(locator)}, true
	case "pypi":
		return PackageRef{Ecosystem: "pypi", Name: pypiName(locator)}, true
	}
	return PackageRef{}, false
}

// Collect gathers the facts of one server, every fetch bounded by ctx and the
// Collector's Timeout, independent sources concurrently:
//
//   - the package (npm or PyPI), its ownership marker, the provenance of its latest
//     version and the advisories of that version and its resolved dependencies
//     (deps.dev graph, OSV);
//   - the source repository and its Scorecard (deps.dev, then the Scorecard API): the
//     one the server lists, read at once, or when it lists none the one the package's
//     metadata links (only on GitHub: Repo stays nil for a repository elsewhere and for
//     none); for a repository-only server (primary kind "github") also its MCP bundle
//     manifest at the head commit, whose tools replace the given ones;
//   - the remote: the given endpoint facts; tools, when given, are the entry's last
//     tool surface.
//
// What a source could not read is in its facts' Source (SourceNoData or SourceFailed);
// Collect itself never fails.
func (c *Collector) Collect(ctx context.Context, t Target, tools []json.RawMessage, endpoint *EndpointFacts) *Facts {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	start := time.Now()
	tm := &timings{}
	f := &Facts{Kind: t.Kind, Locator: t.Locator, ServerName: clip(t.ServerName, maxMCPName), Tools: tools}
	if t.Repository != "" {
		f.Repository = NormalizeRepositoryURL(t.Repository)
		if f.Repository == "" {
			f.Repository = clip(strings.TrimSpace(t.Repository), 2048)
		}
	}
	for _, u := range t.Unchecked {
		if len(f.Unchecked) == maxUnchecked {
			break
		}
		f.Unchecked = append(f.Unchecked, PartRef{Kind: clip(u.Kind, 16), Locator: clip(u.Locator, 512)})
	}
	var wg sync.WaitGroup
	repoListed := false
	if _, _, ok := ParseGitHubURL(f.Repository); ok {
		repoListed = true
		// A server whose entry is its repository (no remote) has its tools in the
		// repository's MCP bundle manifest, with or without a package.
		if t.Kind == "github" && t.Remote == "" {
			wg.Go(func() { c.collectGitHub(ctx, f, f.Repository, tm) })
		} else {
			c.repoAndScorecard(ctx, &wg, f, f.Repository, tm)
		}
	}
	if p := t.Package; p != nil {
		// The package's own link is the source repository only when the server lists
		// none (a listed repository elsewhere than GitHub is not replaced by it).
		readLinked := !repoListed && f.Repository == ""
		switch p.Ecosystem {
		case "npm":
			wg.Go(func() { c.collectNPM(ctx, f, p.Name, readLinked, tm) })
		case "pypi":
			wg.Go(func() { c.collectPyPI(ctx, f, p.Name, readLinked, tm) })
		}
	}
	if t.Remote != "" || t.Kind == "remote" {
		f.Endpoint = endpoint
	}
	wg.Wait()
	attrs := append([]slog.Attr{slog.String("kind", t.Kind), slog.String("locator", t.Locator),
		slog.Duration("took", time.Since(start))}, tm.attrs...)
	c.log.LogAttrs(ctx, slog.LevelInfo, "supply collect", attrs...)
	return f
}

// maxUnchecked bounds Facts.Unchecked.
const maxUnchecked = 32

// npmName reads an npm locator (pkg:npm/%40scope/name) or a plain name.
func npmName(locator string) string {
	rest, ok := strings.CutPrefix(locator, "pkg:npm/")
	if !ok {
		return locator
	}
	if n, err := url.PathUnescape(rest); err == nil {
		return n
	}
	return rest
}

// pypiName reads a PyPI locator (pkg:pypi/name) or a plain name.
func pypiName(locator string) string {
	rest, ok := strings.CutPrefix(locator, "pkg:pypi/")
	if !ok {
		return locator
	}
	if n, err := url.PathUnescape(rest); err == nil {
		return n
	}
	return rest
}

func (c *Collector) collectNPM(ctx context.Context, f *Facts, name string, readLinked bool, t *timings) {
	done := t.track("npm")
	pkg := c.npm.Package(ctx, name)
	done()
	f.Package = &pkg.Facts
	if pkg.Facts.Source.Outcome != SourceOK {
		return
	}
	latest := pkg.Facts.Latest
	var wg sync.WaitGroup
	if readLinked {
		c.repoAndScorecard(ctx, &wg, f, pkg.Facts.RepositoryURL, t)
	}
	wg.Go(func() {
		defer t.track("provenance")()
		att, src := c.npm.Attestations(ctx, name, latest)
		f.Provenance = c.verify(src, latest, func() ProvenanceFacts {
			return c.verifier.VerifyNPM(att, name, latest, pkg.Integrity)
		})
	})
	wg.Go(func() {
		defer t.track("advisories")()
		f.Advisories = c.advisories(ctx, PackageVersion{System: "npm", Name: name, Version: latest})
	})
	wg.Wait()
}

func (c *Collector) collectPyPI(ctx context.Context, f *Facts, name string, readLinked bool, t *timings) {
	done := t.track("pypi")
	proj := c.pypi.Project(ctx, name)
	done()
	f.Package = &proj.Facts
	if proj.Facts.Source.Outcome != SourceOK {
		return
	}
	latest := proj.Facts.Latest
	var wg sync.WaitGroup
	if readLinked {
		c.repoAndScorecard(ctx, &wg, f, proj.Facts.RepositoryURL, t)
	}
	wg.Go(func() {
		defer t.track("provenance")()
		prov, files, src := c.pypi.Provenance(ctx, name, latest, proj.Files)
		f.Provenance = c.verify(src, latest, func() ProvenanceFacts {
			return c.verifier.VerifyPyPI(prov, proj.Facts.Name, latest, files)
		})
	})
	wg.Go(func() {
		defer t.track("advisories")()
		f.Advisories = c.advisories(ctx, PackageVersion{System: "pypi", Name: locator.PEP503(name), Version: latest})
	})
	wg.Wait()
}

// repoAndScorecard starts reading the repository a package names, and its Scorecard,
// when it is on GitHub. A repository elsewhere is not read: Repo and Scorecard stay nil
// and Package.RepositoryURL says where it is.
func (c *Collector) repoAndScorecard(ctx context.Context, wg *sync.WaitGroup, f *Facts, repoURL string, t *timings) {
	owner, repo, ok := ParseGitHubURL(repoURL)
	if !ok {
		return
	}
	wg.Go(func() {
		var (
			inner sync.WaitGroup
			r     RepoFacts
			d     ScorecardFacts
		)
		inner.Go(func() {
			defer t.track("github")()
			r = c.github.Repository(ctx, owner, repo)
		})
		inner.Go(func() {
			defer t.track("depsdev-project")()
			d = c.depsdev.GetProject(ctx, depsDevProjectKey(owner, repo))
		})
		inner.Wait()
		f.Repo = &r
		if r.Exists {
			// The Scorecard API names repositories as GitHub spells them.
			owner, repo = r.Owner, r.Name
		}
		defer t.track("scorecard")()
		f.Scorecard = c.scorecardFallback(ctx, d, owner, repo)
	})
}

// depsDevProjectKey is the deps.dev project of a GitHub repository (lower case).
func depsDevProjectKey(owner, repo string) string {
	return "github.com/" + strings.ToLower(owner) + "/" + strings.ToLower(repo)
}

// verify turns an attestation fetch into ProvenanceFacts: SourceNoData or SourceFailed
// as fetched, else what the verifier says.
func (c *Collector) verify(src Source, version string, run func() ProvenanceFacts) *ProvenanceFacts {
	switch {
	case src.Outcome != SourceOK:
		return &ProvenanceFacts{Source: src, Version: version}
	case c.verifier == nil:
		src.Outcome, src.Error = SourceFailed, "attestations present, but no provenance verifier is configured"
		return &ProvenanceFacts{Source: src, Version: version, Present: true}
	}
	p := run()
	p.Version = version
	if p.Source.URL == "" {
		p.Source.URL = src.URL
	}
	if p.Source.FetchedAt.IsZero() {
		p.Source.FetchedAt = src.FetchedAt
	}
	if p.Source.Outcome == "" {
		p.Source.Outcome = SourceOK
	}
	return &p
}

// scorecardFallback completes deps.dev's answer d about a repository's Scorecard with
// the Scorecard API when d is not SourceOK. A SourceOK answer of either wins; else
// SourceNoData (one said it has none) over SourceFailed.
func (c *Collector) scorecardFallback(ctx context.Context, d ScorecardFacts, owner, repo string) *ScorecardFacts {
	if d.Source.Outcome == SourceOK {
		return &d
	}
	s := c.scorecard.Get(ctx, owner, repo)
	switch {
	case s.Source.Outcome == SourceOK:
		return &s
	case s.Source.Outcome == SourceNoData:
		if d.Source.Outcome == SourceFailed {
			s.Source.Error += " (deps.dev: " + d.Source.Error + ")"
		}
		return &s
	case d.Source.Outcome == SourceNoData:
		d.Source.Error += " (Scorecard API: " + s.Source.Error + ")"
		return &d
	}
	d.Source.Error += "; Scorecard API: " + s.Source.Error
	return &d
}

// advisories reads the advisories of pv and its resolved dependencies. Without a
// dependency graph (deps.dev has none, or failed) the package itself is still checked;
// a failed graph makes the outcome SourceFailed unless a critical advisory was found.
func (c *Collector) advisories(ctx context.Context, pv PackageVersion) *AdvisoryFacts {
	var (
		wg      sync.WaitGroup
		deps    []PackageVersion
		depsSrc Source
		ver     DepsDevVersion
	)
	wg.Go(func() { deps, depsSrc = c.depsdev.GetDependencies(ctx, pv) })
	wg.Go(func() { ver = c.depsdev.GetVersion(ctx, pv) })
	wg.Wait()
	pkgs := append([]PackageVersion{pv}, deps...)
	lookup := func(ctx context.Context, id string) (float64, Source) {
		a := c.depsdev.GetAdvisory(ctx, id)
		return a.CVSS3Score, a.Source
	}
	list, src := c.osv.Advisories(ctx, pkgs, ver.AdvisoryKeys, lookup)
	out := &AdvisoryFacts{Source: src, Version: pv.Version, Dependencies: len(deps), Advisories: list}
	if src.Outcome != SourceOK {
		return out
	}
	critical := false
	for _, a := range list {
		critical = critical || a.Critical
	}
	note := ""
	switch depsSrc.Outcome {
	case SourceNoData:
		note = "deps.dev has no dependency graph for this version; only the package itself was checked"
	case SourceFailed:
		note = "dependency graph not read (" + depsSrc.Error + "); only the package itself was checked"
		if !critical {
			out.Source.Outcome = SourceFailed
		}
	}
	if note != "" {
		if out.Source.Error != "" {
			note += "; " + out.Source.Error
		}
		out.Source.Error = note
	}
	return out
}

func (c *Collector) collectGitHub(ctx context.Context, f *Facts, locator string, t *timings) {
	owner, repo, ok := ParseGitHubURL(locator)
	if !ok {
		f.Repo = &RepoFacts{URL: locator, Source: Source{Outcome: SourceFailed, FetchedAt: c.now(), Error: "the locator is not a GitHub repository URL"}}
		return
	}
	done := t.track("github")
	r := c.github.Repository(ctx, owner, repo)
	done()
	f.Repo = &r
	if r.Source.Outcome != SourceOK {
		return
	}
	ref := r.HeadCommit
	if ref == "" {
		ref = r.DefaultBranch
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		defer t.track("manifest")()
		m, parsed := c.github.Manifest(ctx, r.Owner, r.Name, ref)
		f.Manifest = &m
		if parsed != nil {
			f.Tools = parsed.Tools
			f.ToolsIncomplete = parsed.ToolsGenerated
		}
	})
	wg.Go(func() {
		defer t.track("scorecard")()
		d := c.depsdev.GetProject(ctx, depsDevProjectKey(r.Owner, r.Name))
		f.Scorecard = c.scorecardFallback(ctx, d, r.Owner, r.Name)
	})
	wg.Wait()
}

// PackageLatest reads the package of an npm or PyPI entry, and no other source: one
// request to the registry, always sent (WithRevalidate), conditionally through the
// client's cache. It is the cheap read
// a package entry gets on its cadence (rounds.Watcher); the full checks stay weekly.
func (c *Collector) PackageLatest(ctx context.Context, kind, locator string) PackageFacts {
	ctx, cancel := context.WithTimeout(WithRevalidate(ctx), c.timeout)
	defer cancel()
	switch kind {
	case "npm":
		return c.npm.Package(ctx, npmName(locator)).Facts
	case "pypi":
		return c.pypi.Project(ctx, pypiName(locator)).Facts
	}
	return PackageFacts{Source: Source{Outcome: SourceFailed, FetchedAt: c.now(), Error: "not an npm or PyPI entry"}}
}

// BundleManifest reads manifest.json at the head of a GitHub repository, one request,
// always sent (WithRevalidate), conditionally through the client's cache: the cheap read a repository entry gets on its
// cadence (rounds.Watcher).
func (c *Collector) BundleManifest(ctx context.Context, locator string) (ManifestFacts, *Manifest) {
	ctx, cancel := context.WithTimeout(WithRevalidate(ctx), c.timeout)
	defer cancel()
	owner, repo, ok := ParseGitHubURL(locator)
	if !ok {
		return ManifestFacts{Source: Source{Outcome: SourceFailed, FetchedAt: c.now(), Error: "the locator is not a GitHub repository URL"}}, nil
	}
	return c.github.Manifest(ctx, owner, repo, "")
}
