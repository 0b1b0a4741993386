package supply

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/checks"
)

// The supply-chain suite: eleven weighted checks over Facts, the score and the Verified
// decision, exactly as seed 004 states them.
//
// The suite runs over a whole server (Target): its listed source repository, its package
// and its remote endpoint. Each check gives one Result: passed (all its weight), failed
// (none), partial (only the Scorecard check: a share of its weight proportional to the
// score), skipped (the check does not apply, or the data it needs does not exist: a
// hosted server has no package, so the package, provenance and advisory checks do not
// apply; it never counts against), or not_run (StatusNotRun: the check applies but a
// source could not be read because of Probity's own trouble, such as a rate limit or
// exhausted quota, a timeout, a 5xx answer, a network error; it counts neither way, is
// shown as "not run, retried", never as a silent skip, and Verdict.Retry asks the
// caller to run the suite again soon). The score is the points of the checks that ran
// divided by their weight, as an integer 0–100 rounded half up, 0 when nothing ran.
// Points are kept in hundredths, so the score is exact.
//
// A hosted server (a remote, no package) with a public repository that passes can be
// Verified on the checks that apply: source repository 10, license 5, maintenance 5,
// Scorecard 15, hidden instructions 15, destructive tools 5 and the handshake 5 make
// exactly the 60 points Verified needs checked.
//
// Verified needs all four of: a score of 80 or more (the integer score as shown, so 79.5
// rounds to 80 and counts); no serious finding (a failed package_name, hidden_instructions
// or advisories check, mcp_handshake failed for plain HTTP, or, beyond the seed,
// build_provenance failed: an attestation that exists but does not verify is a package
// claiming a build it cannot prove); at least 60 of the 100
// points checked (weight of the checks that ran); and a passed source_repository check.
// The score and the decision are attest.SupplyScore and attest.SupplyVerified over the
// checks as they are signed (attest.NewSupplyChecks), with attest's thresholds, ids and
// weights: the rule a verifier recomputes has one home, and this suite explains it.
//
// The rules of each check, where the seed leaves a choice:
//
//   - source_repository: the repository the server lists, else (it lists none) the one
//     its package's metadata links. Failed for a package linking none, a repository
//     outside GitHub (these checks cannot read it), or one no one can read: GitHub
//     answers 404 or 410, blocks it (451, access blocked), or it is private ("eines,
//     das wir nicht erreichen können"). Not run when GitHub, or the package registry
//     whose link names the repository, could not be read (Probity's trouble: quota,
//     rate limit, timeout, 5xx, network). Skipped for a hosted server that lists none
//     (it then cannot be Verified). Passed when the public repository exists
//     (archived or not).
//   - package_repository: the repository the package's own metadata names, compared
//     with the one the server lists, after normalization (https://github.com/owner/repo,
//     case-insensitive): another one fails, none fails; a verified build provenance
//     naming another repository than the listed one fails too, and one naming the
//     listed repository passes a package whose metadata names none. When the server
//     lists no repository, the package's link is its source repository: the check
//     compares that link with the repository a verified build provenance names (another
//     fails, the same passes) and is skipped without one, as there is nothing else to
//     compare with. Skipped for a server without a package; not run when the
//     package's registry data could not be read. The ownership marker (npm mcpName,
//     PyPI "mcp-name:") is shown as evidence, beside the server's registry name; it
//     does not change the result (seed 004 has no such rule).
//   - build_provenance: skipped unless an attestation exists; failed, serious, when
//     attestations exist and none verifies (beyond the seed: a package claiming a build
//     it cannot prove); not run when they could not be read.
//   - license: the package's declared SPDX expression (license.go); when it declares
//     none, or free text that is not an expression, GitHub's license.spdx_id of the
//     repository. NOASSERTION (a license file GitHub could not identify) is a license,
//     but not one known to be OSI-approved: failed, saying so. npm's UNLICENSED fails.
//   - maintenance: the newest of the last commit, last push, latest release and the
//     package version's publication, within 365 days of Options.Now inclusive; skipped
//     without repository data.
//   - scorecard: 7 or more passes; below 7 the share 15 × score / 10 (to hundredths) is
//     partial, except a score of 0, whose share is 0 and which is failed; never scanned
//     or out of range is skipped.
//   - package_name: typosquat.go (a variant, or 1 edit from 4 characters and 2 from 8,
//     Damerau–Levenshtein, of a popular package of another owner); serious.
//   - advisories: critical when the source flagged it, GitHub's severity is CRITICAL or
//     the CVSS base score is 9.0 or more; any critical one fails, serious.
//   - hidden_instructions: the detectors of the remote check (checks.ScanTool,
//     checks.ScanText) over every tool and the package's and repository's READMEs;
//     serious. A tool list known to be incomplete still passes on what was read.
//   - destructive_tools: checks.DestructiveTool over every tool.
//   - mcp_handshake: servers with a remote only; plain HTTP fails (serious), no answer
//     fails.
//   - license, maintenance, scorecard, advisories: not run when their source could not
//     be read (SourceFailed), skipped when it has no data.

// SuiteVersion is the version of this check suite ("Checks (Version 2)" in seed 004).
// Bump it with any change to the checks, weights or rules.
const SuiteVersion = "2.1"

// The check ids, in the seed's order: attest's, which signs them.
const (
	CheckSourceRepository  = attest.SupplySourceRepository
	CheckPackageRepository = attest.SupplyPackageRepository
	CheckBuildProvenance   = attest.SupplyBuildProvenance
	CheckLicense           = attest.SupplyLicense
	CheckMaintenance       = attest.SupplyMaintenance
	CheckScorecard         = attest.SupplyScorecard
	CheckPackageName       = attest.SupplyPackageName
	CheckAdvisories        = attest.SupplyAdvisories
	CheckHidden            = attest.SupplyHidden
	CheckDestructive       = attest.SupplyDestructive
	CheckHandshake         = attest.SupplyHandshake
)

// The groups of the checks.
const (
	GroupOrigin      = "origin"
	GroupPractices   = "practices"
	GroupSupplyChain = "supply_chain"
	GroupToolSafety  = "tool_safety"
	GroupEndpoint    = "endpoint"
)

// The thresholds of the rules. The Verified thresholds are attest's: the verifier
// recomputes Verified from the signed checks with them, and this suite decides with the
// same constants.
const (
	// VerifiedMinScore is the least score of a Verified entry.
	VerifiedMinScore = attest.SupplyVerifiedMinScore
	// VerifiedMinWeightRan is the least weight of checks that ran for Verified.
	VerifiedMinWeightRan = attest.SupplyVerifiedMinWeightRan
	// ScorecardPass is the least Scorecard score that earns the check's whole weight.
	ScorecardPass = 7.0
	// MaintenanceWindow is how recent a commit or release must be.
	MaintenanceWindow = 365 * 24 * time.Hour
)

// The statuses of a Result: attest's supply check statuses (attest.SupplyStatus, their
// one home, which the signed statement carries), under this package's names.
const (
	StatusPassed  = attest.SupplyPassed
	StatusFailed  = attest.SupplyFailed
	StatusPartial = attest.SupplyPartial // the Scorecard check below 7: a proportional share
	StatusSkipped = attest.SupplySkipped // does not apply, or no data: never counts against
)

// StatusNotRun is a check that applies but was not run because a source could not be
// read through Probity's own trouble (quota or rate limit, timeout, 5xx, network): shown
// as "not run, retried" and retried soon (Verdict.Retry). It counts neither way, like a
// skipped check, and is signed as skipped: the supply/v1 predicate has four statuses,
// and a fifth would be a new predicate type (attest/doc.go). The stored verdict keeps
// it.
const StatusNotRun attest.SupplyStatus = "not_run"

// StatusText is how a status is shown to people: "not run, retried" for StatusNotRun,
// the status itself otherwise.
func StatusText(s attest.SupplyStatus) string {
	if s == StatusNotRun {
		return "not run, retried"
	}
	return string(s)
}

// MaxEvidenceSample bounds Evidence.Sample.
const MaxEvidenceSample = 120

// maxResultEvidence bounds the evidence of one result.
const maxResultEvidence = 20

// Evidence is one fact a result rests on.
type Evidence struct {
	// What says in plain words what the evidence is; third-party names in it are
	// escaped.
	What string `json:"what"`
	// Sample is an excerpt of third-party text, escaped in the manner of
	// strconv.QuoteToASCII (without the quotes), at most MaxEvidenceSample bytes.
	Sample string `json:"sample,omitempty"`
	// Link is a public https URL where the fact can be checked.
	Link string `json:"link,omitempty"`
}

// Result is one check's outcome.
type Result struct {
	ID     string              `json:"id"`
	Group  string              `json:"group"`
	Weight int                 `json:"weight"`
	Status attest.SupplyStatus `json:"status"`
	// Points earned: Weight when passed, 0 when failed or skipped, the share when
	// partial (to hundredths).
	Points float64 `json:"points"`
	// Serious marks a failed result that is a serious finding: it withholds Verified
	// whatever the score.
	Serious bool `json:"serious,omitempty"`
	// Reason says in plain words why; it is built from this suite's text, numbers,
	// versions and identifiers that passed a strict character check, never raw
	// third-party text.
	Reason   string     `json:"reason"`
	Evidence []Evidence `json:"evidence,omitempty"`
	// SourceURL is the public source to check the result yourself.
	SourceURL string    `json:"sourceUrl,omitempty"`
	RanAt     time.Time `json:"ranAt"`
	// ScorecardCommit is the commit Scorecard analysed (the scorecard check only).
	ScorecardCommit string `json:"scorecardCommit,omitempty"`
}

// Verdict is the outcome of the suite for one entry.
type Verdict struct {
	// Results holds one result per check, in Catalog order.
	Results []Result `json:"results"`
	// WeightRan is the weight of the checks that were not skipped.
	WeightRan int `json:"weightRan"`
	// PointsPassed is the points earned (to hundredths).
	PointsPassed float64 `json:"pointsPassed"`
	// Score is round(100 × PointsPassed / WeightRan), 0 when nothing ran.
	Score    int  `json:"score"`
	Verified bool `json:"verified"`
	// NotVerified gives each reason the badge is withheld, in plain words; empty when
	// Verified. A check not run (StatusNotRun) is named here when it withholds the
	// badge.
	NotVerified  []string `json:"notVerified,omitempty"`
	SuiteVersion string   `json:"suiteVersion"`
}

// Options tune Evaluate.
type Options struct {
	// Now is the time of the evaluation (RanAt, the maintenance window); zero means
	// time.Now().
	Now time.Time
	// Popular is the popular-package list of the package_name check; nil means the
	// embedded list (EmbeddedPopularList).
	Popular *PopularList
}

// CheckInfo describes one check of the suite.
type CheckInfo struct {
	ID     string
	Group  string
	Title  string
	Weight int
}

type checkDef struct {
	CheckInfo
	run func(*evalInput) Result
}

// catalog holds the checks in attest.SupplyCheckIDs order, with attest's weights.
var catalog = []checkDef{
	{CheckInfo{CheckSourceRepository, GroupOrigin, "Source repository", attest.SupplyWeight(CheckSourceRepository)}, checkSourceRepository},
	{CheckInfo{CheckPackageRepository, GroupOrigin, "Package names the same repository", attest.SupplyWeight(CheckPackageRepository)}, checkPackageRepository},
	{CheckInfo{CheckBuildProvenance, GroupOrigin, "Build provenance", attest.SupplyWeight(CheckBuildProvenance)}, checkBuildProvenance},
	{CheckInfo{CheckLicense, GroupOrigin, "License", attest.SupplyWeight(CheckLicense)}, checkLicense},
	{CheckInfo{CheckMaintenance, GroupPractices, "Maintenance", attest.SupplyWeight(CheckMaintenance)}, checkMaintenance},
	{CheckInfo{CheckScorecard, GroupPractices, "OpenSSF Scorecard", attest.SupplyWeight(CheckScorecard)}, checkScorecard},
	{CheckInfo{CheckPackageName, GroupSupplyChain, "Package name", attest.SupplyWeight(CheckPackageName)}, checkPackageName},
	{CheckInfo{CheckAdvisories, GroupSupplyChain, "Advisories", attest.SupplyWeight(CheckAdvisories)}, checkAdvisories},
	{CheckInfo{CheckHidden, GroupToolSafety, "Hidden instructions", attest.SupplyWeight(CheckHidden)}, checkHidden},
	{CheckInfo{CheckDestructive, GroupToolSafety, "Destructive tools", attest.SupplyWeight(CheckDestructive)}, checkDestructive},
	{CheckInfo{CheckHandshake, GroupEndpoint, "MCP handshake", attest.SupplyWeight(CheckHandshake)}, checkHandshake},
}

// Catalog returns the eleven checks in the seed's order; their weights add up to 100.
func Catalog() []CheckInfo {
	out := make([]CheckInfo, len(catalog))
	for i, c := range catalog {
		out[i] = c.CheckInfo
	}
	return out
}

type evalInput struct {
	f          *Facts
	now        time.Time
	popular    *PopularList
	popularErr error
}

// Evaluate runs the eleven checks over f and returns their results, the score and the
// Verified decision. It does no I/O and never fails: a check without the data it needs is
// skipped. A nil f is treated as empty Facts.
func Evaluate(f *Facts, opt Options) Verdict {
	if f == nil {
		f = &Facts{}
	}
	in := &evalInput{f: f, now: opt.Now, popular: opt.Popular}
	if in.now.IsZero() {
		in.now = time.Now()
	}
	in.now = in.now.UTC()
	if in.popular == nil {
		in.popular, in.popularErr = EmbeddedPopularList()
	}
	v := Verdict{SuiteVersion: SuiteVersion, Results: make([]Result, len(catalog))}
	for i, c := range catalog {
		r := c.run(in)
		r.ID, r.Group, r.Weight, r.RanAt = c.ID, c.Group, c.Weight, in.now
		switch r.Status {
		case StatusPassed:
			r.Points = float64(c.Weight)
		case StatusPartial:
			// set by the check
		default:
			r.Points = 0
		}
		if r.Status != StatusFailed {
			r.Serious = false
		}
		if r.Status == StatusNotRun {
			r.Points = 0
		}
		if len(r.Evidence) > maxResultEvidence {
			r.Evidence = r.Evidence[:maxResultEvidence]
		}
		v.Results[i] = r
	}
	decide(&v)
	return v
}

// decide fills the score and the Verified decision from v.Results.
func decide(v *Verdict) {
	hundredths := 0
	titles := map[string]string{}
	for _, c := range catalog {
		titles[c.ID] = c.Title
	}
	var serious []string
	sourcePassed, sourceStatus := false, StatusSkipped
	for _, r := range v.Results {
		if r.Status == StatusSkipped || r.Status == StatusNotRun {
			continue
		}
		v.WeightRan += r.Weight
		hundredths += int(math.Round(r.Points * 100))
		if r.Status == StatusFailed && r.Serious {
			serious = append(serious, titles[r.ID])
		}
	}
	for _, r := range v.Results {
		if r.ID == attest.SupplyVerifiedNeeds {
			sourceStatus = r.Status
			sourcePassed = r.Status == StatusPassed
		}
	}
	v.PointsPassed = float64(hundredths) / 100
	// The score and the Verified decision are attest's, over the checks as they are
	// signed, so that the verdict shown is the one the verifier recomputes; the reasons
	// below only explain a decision.
	signed := attest.NewSupplyChecks(v.Outcomes())
	v.Score, _ = attest.SupplyScore(signed)
	v.Verified = attest.SupplyVerified(signed)
	if v.Score < VerifiedMinScore {
		v.NotVerified = append(v.NotVerified, fmt.Sprintf("the score is %d, below %d", v.Score, VerifiedMinScore))
	}
	for _, t := range serious {
		v.NotVerified = append(v.NotVerified, "a serious finding in the "+t+" check")
	}
	if v.WeightRan < VerifiedMinWeightRan {
		v.NotVerified = append(v.NotVerified, fmt.Sprintf("only %d of the 100 points could be checked, fewer than %d", v.WeightRan, VerifiedMinWeightRan))
	}
	switch {
	case sourceStatus == StatusNotRun:
		v.NotVerified = append(v.NotVerified, "the Source repository check was not run (Probity could not read its source this time; it is retried): Verified needs a public source repository")
	case !sourcePassed:
		v.NotVerified = append(v.NotVerified, "the Source repository check did not pass ("+string(sourceStatus)+"): Verified needs a public source repository")
	}
	if !v.Verified && len(v.NotVerified) == 0 {
		v.NotVerified = append(v.NotVerified, "the signed checks do not meet the rules of Verified")
	}
}

func passed(reason string, ev ...Evidence) Result {
	return Result{Status: StatusPassed, Reason: reason, Evidence: ev}
}

func failed(reason string, ev ...Evidence) Result {
	return Result{Status: StatusFailed, Reason: reason, Evidence: ev}
}

func skipped(reason string, ev ...Evidence) Result {
	return Result{Status: StatusSkipped, Reason: reason, Evidence: ev}
}

// notRun is a check that applies but whose source could not be read this time; the
// reason should end by saying it is retried.
func notRun(reason string, ev ...Evidence) Result {
	return Result{Status: StatusNotRun, Reason: reason, Evidence: ev}
}

// errorEvidence is the evidence of a source that could not be read.
func errorEvidence(src Source) Evidence {
	return Evidence{What: "the error", Sample: evSample(src.Error), Link: safeLink(src.URL)}
}

// NotRun returns the ids of the checks not run (StatusNotRun), in Catalog order.
func (v Verdict) NotRun() []string {
	var ids []string
	for _, r := range v.Results {
		if r.Status == StatusNotRun {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// Retry reports whether a check was not run because of Probity's own trouble, so the
// caller should run the suite again soon rather than in a week.
func (v Verdict) Retry() bool { return len(v.NotRun()) > 0 }

func (r Result) withSource(u string) Result {
	r.SourceURL = safeLink(u)
	return r
}

// --- origin -------------------------------------------------------------------------

func isRemote(f *Facts) bool { return f.Kind == "remote" }

// repoName renders a repository URL for a reason: github.com/OWNER/REPO, another URL
// when it is made of plain URL characters, or a placeholder.
func repoName(u string) string {
	if owner, repo, ok := ParseGitHubURL(u); ok {
		return "github.com/" + owner + "/" + repo
	}
	if n := NormalizeRepositoryURL(u); n != "" && plainText(n, 200, "-._~:/@+") {
		return n
	}
	return "a repository URL with unusual characters"
}

func repoEvidence(what, u string) Evidence {
	return Evidence{What: what, Sample: evSample(u), Link: safeLink(u)}
}

func checkSourceRepository(in *evalInput) Result {
	f := in.f
	listed := f.Repository
	if listed != "" {
		if _, _, gh := ParseGitHubURL(listed); !gh {
			return failed("The server lists "+repoName(listed)+", which is not on GitHub; these checks cannot read it.",
				repoEvidence("the repository the server lists", listed))
		}
	}
	r := f.Repo
	if r == nil {
		p := f.Package
		switch {
		case listed != "":
			// Listed on GitHub, but not read: Collect ran out of time before GitHub.
			return notRun("The repository "+repoName(listed)+" was not read this time; the check is retried.",
				repoEvidence("the repository the server lists", listed))
		case p != nil && p.Source.Outcome == SourceFailed:
			return notRun("The package's registry metadata could not be read this time, so the repository it links is unknown; the check is retried.",
				errorEvidence(p.Source)).withSource(p.Source.URL)
		case p != nil && p.Source.Outcome == SourceNoData:
			return failed("The package "+nameText(p.Name)+" is not published on its registry, so it links no source repository, and the server lists none.",
				Evidence{What: "the registry's answer", Sample: evSample(p.Source.Error), Link: safeLink(p.Source.URL)}).withSource(p.Source.URL)
		case p != nil && p.RepositoryURL != "":
			if _, _, gh := ParseGitHubURL(p.RepositoryURL); !gh {
				return failed("The package links "+repoName(p.RepositoryURL)+", which is not on GitHub; these checks cannot read it.",
					repoEvidence("the repository the package's metadata names", p.RepositoryURL)).withSource(p.Source.URL)
			}
			return notRun("The package links "+repoName(p.RepositoryURL)+", but it was not read this time; the check is retried.",
				repoEvidence("the repository the package's metadata names", p.RepositoryURL)).withSource(p.Source.URL)
		case p != nil:
			return failed("The package links no source repository, and the server lists none.").withSource(p.Source.URL)
		case f.Endpoint != nil || isRemote(f):
			return skipped("The hosted server lists no source repository, so there is none to check (and it cannot be Verified without one).")
		}
		return failed("The entry names no source repository.")
	}
	name := repoName(r.URL)
	link := coalesce(r.URL, r.Source.URL)
	whose, what := "The repository "+name+", ", "the repository"
	switch {
	case listed != "":
		whose, what = "The repository the server lists, "+name+", ", "the repository the server lists"
	case f.Package != nil:
		whose, what = "The repository the package links, "+name+", ", "the repository the package links"
	}
	switch {
	case r.Source.Outcome == SourceFailed:
		return notRun("GitHub could not be read for "+name+" this time; the check is retried.", errorEvidence(r.Source)).withSource(link)
	case r.Source.Outcome == SourceNoData || !r.Exists:
		return failed(whose+"does not exist or no one can read it.",
			Evidence{What: "GitHub's answer", Sample: evSample(r.Source.Error), Link: safeLink(r.Source.URL)}).withSource(link)
	case r.Private:
		return failed(whose + "is private.").withSource(link)
	}
	reason := "The public repository " + name + " exists."
	if r.Archived {
		reason += " It is archived."
	}
	return passed(reason, repoEvidence(what, r.URL)).withSource(link)
}

// repoNotRead says why the source repository's data is missing through Probity's own
// trouble: GitHub could not be read for it, or the package registry whose link names
// it. ok is false when the data was read, or is missing for another reason.
func repoNotRead(f *Facts) (why string, ok bool) {
	if r := f.Repo; r != nil {
		if r.Source.Outcome == SourceFailed {
			return "GitHub could not be read for " + repoName(r.URL) + " this time", true
		}
		return "", false
	}
	if _, _, gh := ParseGitHubURL(f.Repository); gh {
		return "The repository " + repoName(f.Repository) + " was not read this time", true
	}
	if p := f.Package; f.Repository == "" && p != nil {
		if p.Source.Outcome == SourceFailed {
			return "The package's registry metadata could not be read this time, so its repository is unknown", true
		}
		if _, _, gh := ParseGitHubURL(p.RepositoryURL); gh {
			return "The repository " + repoName(p.RepositoryURL) + " the package links was not read this time", true
		}
	}
	return "", false
}

// packageReadable reports whether the package's registry data was read.
func packageReadable(p *PackageFacts) bool { return p != nil && p.Source.Outcome == SourceOK }

// ownershipEvidence shows the package's registry ownership marker (npm mcpName, PyPI
// mcp-name), beside the server's registry name; nil for a package of another ecosystem.
func ownershipEvidence(f *Facts) *Evidence {
	p := f.Package
	marker := map[string]string{"npm": "npm package.json mcpName", "pypi": "PyPI README mcp-name"}[p.Ecosystem]
	if marker == "" {
		return nil
	}
	e := Evidence{What: "the package's registry ownership marker (" + marker + ")", Link: safeLink(p.Source.URL)}
	switch {
	case p.MCPName == "":
		e.What += ": none"
	case f.ServerName == "":
		e.Sample = evSample(p.MCPName)
	case p.MCPName == f.ServerName:
		e.What += ", naming this server"
		e.Sample = evSample(p.MCPName)
	default:
		e.What += ", naming another server than this one (" + evSample(f.ServerName) + ")"
		e.Sample = evSample(p.MCPName)
	}
	return &e
}

func checkPackageRepository(in *evalInput) Result {
	f := in.f
	p := f.Package
	switch {
	case p == nil:
		return skipped("The server has no package.")
	case p.Source.Outcome == SourceFailed:
		return notRun("The package's registry metadata could not be read this time; the check is retried.", errorEvidence(p.Source)).withSource(p.Source.URL)
	case !packageReadable(p):
		return skipped("The package is not published, so it has no metadata naming a repository.").withSource(p.Source.URL)
	case p.Unpublished:
		return skipped("The package is unpublished, so its metadata names no repository.").withSource(p.Source.URL)
	}
	var ev []Evidence
	if p.RepositoryURL != "" {
		ev = append(ev, repoEvidence("the repository the package's metadata names", p.RepositoryURL))
	} else {
		ev = append(ev, Evidence{What: "the package's metadata names no repository", Link: safeLink(p.Source.URL)})
	}
	prov := ""
	if pv := f.Provenance; pv != nil && pv.Source.Outcome == SourceOK && pv.Verified && pv.Repository != "" {
		prov = pv.Repository
		ev = append(ev, repoEvidence("the repository the package's verified build provenance names", pv.Repository))
	}
	if listed := f.Repository; listed != "" {
		ev = append(ev, repoEvidence("the repository the server lists", listed))
	}
	if o := ownershipEvidence(f); o != nil {
		ev = append(ev, *o)
	}
	res := func(r Result) Result { return r.withSource(p.Source.URL) }
	listed := f.Repository
	if listed == "" {
		// The server lists none: the package's own link is its source repository.
		switch {
		case p.RepositoryURL == "":
			return res(skipped("The server lists no repository and the package's metadata names none, so there is nothing to compare (the Source repository check fails for it).", ev...))
		case prov == "":
			return res(skipped("The server lists no repository of its own; the repository the package's metadata names, "+repoName(p.RepositoryURL)+", is taken as its source, and there is nothing else to compare it with.", ev...))
		case !sameRepository(p.RepositoryURL, prov):
			return res(failed("The package's metadata names "+repoName(p.RepositoryURL)+", but its verified build provenance names "+repoName(prov)+".", ev...))
		}
		return res(passed("The package's metadata and its verified build provenance both name "+repoName(prov)+".", ev...))
	}
	want := repoName(listed)
	switch {
	case p.RepositoryURL != "" && !sameRepository(p.RepositoryURL, listed):
		return res(failed("The package's metadata names "+repoName(p.RepositoryURL)+", not the repository the server lists, "+want+".", ev...))
	case prov != "" && !sameRepository(prov, listed):
		return res(failed("The package's verified build provenance names "+repoName(prov)+", not the repository the server lists, "+want+".", ev...))
	case p.RepositoryURL != "":
		return res(passed("The package's metadata names the repository the server lists, "+want+".", ev...))
	case prov != "":
		return res(passed("The package's metadata names no repository, but its verified build provenance names the one the server lists, "+want+".", ev...))
	}
	return res(failed("The package's metadata names no repository; the server lists "+want+".", ev...))
}

// sameRepository compares two repository references after normalization (GitHub URLs as
// https://github.com/owner/repo), ignoring case.
func sameRepository(a, b string) bool {
	na, nb := NormalizeRepositoryURL(a), NormalizeRepositoryURL(b)
	return na != "" && strings.EqualFold(na, nb)
}

func checkBuildProvenance(in *evalInput) Result {
	f := in.f
	if f.Package == nil {
		return skipped("The server has no package, so there is no build to attest.")
	}
	if f.Package.Source.Outcome == SourceFailed {
		return notRun("The package's registry metadata could not be read this time, so its attestations were not looked up; the check is retried.",
			errorEvidence(f.Package.Source)).withSource(f.Package.Source.URL)
	}
	pv := f.Provenance
	if pv == nil || pv.Source.Outcome == SourceNoData || (pv.Source.Outcome == SourceOK && !pv.Present) {
		r := skipped("No attestation is published for the package; its absence does not count against it.")
		if pv != nil {
			r = r.withSource(pv.Source.URL)
		}
		return r
	}
	if pv.Source.Outcome == SourceFailed {
		return notRun("The package's attestations could not be read or checked this time; the check is retried.",
			errorEvidence(pv.Source)).withSource(pv.Source.URL)
	}
	ver := versionText(pv.Version)
	if !pv.Verified {
		// Serious (beyond seed 004, which counts only a present attestation): the
		// package claims a build it cannot prove.
		r := failed("Version "+ver+" has attestations, but none verified against the pinned Sigstore trusted root: the package claims a build it cannot prove, a serious finding.",
			Evidence{What: "why they did not verify", Sample: evSample(pv.Error), Link: safeLink(pv.Source.URL)}).withSource(pv.Source.URL)
		r.Serious = true
		return r
	}
	var kinds []string
	for _, k := range pv.Kinds {
		kinds = append(kinds, identText(k, 40))
	}
	reason := "An attestation of version " + ver + " verified against the pinned Sigstore trusted root"
	if len(kinds) > 0 {
		reason += " (" + strings.Join(kinds, ", ") + ")"
	}
	var ev []Evidence
	if pv.Repository != "" {
		reason += "; it names " + repoName(pv.Repository)
		if isHexCommit(pv.Commit) {
			reason += " at commit " + pv.Commit
		}
		ev = append(ev, repoEvidence("the source the provenance names", pv.Repository))
	}
	return passed(reason+".", ev...).withSource(pv.Source.URL)
}

func checkLicense(in *evalInput) Result {
	f := in.f
	osi, err := osiSet()
	if err != nil {
		return skipped("The OSI license list could not be loaded.")
	}
	p := f.Package
	pkgFailed := p != nil && p.Source.Outcome == SourceFailed
	if p != nil && !packageReadable(p) {
		p = nil
	}
	declared := ""
	if p != nil {
		declared = strings.TrimSpace(p.License)
	}
	var pkgNote string
	if declared != "" {
		if strings.EqualFold(declared, "UNLICENSED") {
			return failed("The package is declared UNLICENSED: no license is granted.").withSource(p.Source.URL)
		}
		v, err := judgeLicense(declared, osi)
		if err == nil {
			return licenseResult("The package declares", declared, v, Evidence{What: "the package's declared license", Sample: evSample(declared), Link: safeLink(p.Source.URL)}).withSource(p.Source.URL)
		}
		// Free text ("MIT License", "SEE LICENSE IN LICENSE.md"): GitHub's reading of the
		// repository's license file decides.
		pkgNote = " (the package's declared license is not an SPDX expression)"
	}
	r := f.Repo
	switch {
	case r == nil || r.Source.Outcome == SourceNoData || (r.Source.Outcome == SourceOK && !r.Exists):
		if pkgFailed {
			return notRun("The package's registry metadata could not be read this time, and there is no repository whose license GitHub identifies; the check is retried.",
				errorEvidence(f.Package.Source)).withSource(f.Package.Source.URL)
		}
		if p == nil {
			return skipped("There is neither package metadata nor a repository to read a license from.")
		}
		if pkgNote != "" {
			return failed("The package's declared license is not an SPDX expression, and there is no repository whose license GitHub identifies.",
				Evidence{What: "the package's declared license", Sample: evSample(declared), Link: safeLink(p.Source.URL)}).withSource(p.Source.URL)
		}
		return failed("The package declares no license, and there is no repository whose license GitHub identifies.").withSource(p.Source.URL)
	case r.Source.Outcome == SourceFailed:
		return notRun("GitHub could not be read this time, so the repository's license is unknown; the check is retried.", errorEvidence(r.Source)).withSource(r.URL)
	}
	link := coalesce(r.URL, r.Source.URL)
	spdx := strings.TrimSpace(r.LicenseSPDX)
	switch {
	case spdx == "":
		return failed("No license: the package declares none and GitHub finds none in the repository" + repoSuffix(r) + ".").withSource(link)
	case strings.EqualFold(spdx, "NOASSERTION"):
		// A license file GitHub could not match to an SPDX id: a license, but not one
		// known to be OSI-approved.
		return failed("GitHub could not identify the repository's license (NOASSERTION), so it is not known to be OSI-approved"+pkgNote+".",
			Evidence{What: "GitHub's license.spdx_id", Sample: "NOASSERTION", Link: safeLink(link)}).withSource(link)
	}
	ev := []Evidence{{What: "GitHub's license.spdx_id", Sample: evSample(spdx), Link: safeLink(link)}}
	if pkgNote != "" {
		ev = append(ev, Evidence{What: "the package's declared license, not an SPDX expression", Sample: evSample(declared), Link: safeLink(p.Source.URL)})
	}
	v, err := judgeLicense(spdx, osi)
	if err != nil {
		return failed("GitHub names a license id that is not an SPDX expression"+pkgNote+".", ev...).withSource(link)
	}
	res := licenseResult("GitHub identifies the repository's license as", spdx, v, ev...).withSource(link)
	if pkgNote != "" {
		res.Reason = strings.TrimSuffix(res.Reason, ".") + pkgNote + "."
	}
	return res
}

func repoSuffix(r *RepoFacts) string {
	if r == nil || r.URL == "" {
		return ""
	}
	return " " + repoName(r.URL)
}

// licenseResult words the verdict on a parsed expression. expr passed judgeLicense, so
// it is made of SPDX id characters, parentheses and spaces only.
func licenseResult(prefix, expr string, v licenseVerdict, ev ...Evidence) Result {
	shown := licenseText(expr)
	if v.OSI {
		return passed(prefix+" "+shown+", which is OSI-approved.", ev...)
	}
	var not []string
	for _, id := range v.NotOSI {
		not = append(not, licenseText(id))
	}
	return failed(prefix+" "+shown+", which is not OSI-approved (not on the OSI list: "+strings.Join(not, ", ")+").", ev...)
}

// licenseText renders a parsed license expression for a reason, collapsing spaces and
// cutting it at 200 bytes.
func licenseText(expr string) string {
	s := strings.Join(strings.Fields(expr), " ")
	if len(s) > 200 {
		s = s[:197] + "..."
	}
	return s
}

// --- practices ----------------------------------------------------------------------

func checkMaintenance(in *evalInput) Result {
	f := in.f
	r := f.Repo
	if why, ok := repoNotRead(f); ok {
		return notRun(why + "; the check is retried.").withSource(f.Repository)
	}
	if r == nil || r.Source.Outcome != SourceOK || !r.Exists {
		return skipped("There is no repository data to date the last commit or release.")
	}
	type dated struct {
		what string
		t    time.Time
	}
	cands := []dated{{"the last commit", r.LastCommit}, {"the last push", r.LastPush}, {"the latest release", r.LatestRelease}}
	if packageReadable(f.Package) {
		cands = append(cands, dated{"the latest package version's publication", f.Package.PublishedAt})
	}
	var latest dated
	var ev []Evidence
	for _, c := range cands {
		if c.t.IsZero() {
			continue
		}
		ev = append(ev, Evidence{What: c.what + ": " + c.t.UTC().Format(time.DateOnly)})
		if c.t.After(latest.t) {
			latest = c
		}
	}
	link := coalesce(r.URL, r.Source.URL)
	if latest.t.IsZero() {
		return skipped("No commit, push, release or publication date is known.").withSource(link)
	}
	age := in.now.Sub(latest.t)
	days := int(max(age, 0) / (24 * time.Hour))
	what := latest.what + " was on " + latest.t.UTC().Format(time.DateOnly) + ", " + plural(days, "day") + " before this check"
	if age <= MaintenanceWindow {
		return passed("Maintained: "+what+" (within 365 days).", ev...).withSource(link)
	}
	return failed("No commit and no release in the last 365 days: "+what+".", ev...).withSource(link)
}

func checkScorecard(in *evalInput) Result {
	f := in.f
	sc := f.Scorecard
	if sc == nil {
		if why, ok := repoNotRead(f); ok {
			return notRun(why + ", so its OpenSSF Scorecard was not looked up; the check is retried.")
		}
		if f.Repo == nil {
			return skipped("There is no repository for OpenSSF Scorecard to analyse.")
		}
		return skipped("No OpenSSF Scorecard result is known for the repository.")
	}
	link := sc.Source.URL
	switch sc.Source.Outcome {
	case SourceNoData:
		return skipped("OpenSSF Scorecard has not analysed this repository.").withSource(link)
	case SourceFailed:
		return notRun("The OpenSSF Scorecard result could not be read this time; the check is retried.", errorEvidence(sc.Source)).withSource(link)
	}
	if math.IsNaN(sc.Score) || sc.Score < 0 || sc.Score > 10 {
		return skipped("The OpenSSF Scorecard result is out of range (0 to 10) and is not used.").withSource(link)
	}
	score := math.Round(sc.Score*100) / 100
	shown := strconv.FormatFloat(score, 'f', -1, 64)
	from := ""
	if sc.From == "deps.dev" || sc.From == "scorecard-api" {
		from = " (read from " + sc.From + ")"
	}
	var r Result
	switch {
	case score >= ScorecardPass:
		r = passed("OpenSSF Scorecard gives " + shown + " of 10" + from + "; 7 or more passes.")
	case score == 0:
		r = failed("OpenSSF Scorecard gives 0 of 10" + from + ": the proportional share of the 15 points is 0.")
	default:
		// Below 7, the seed gives "a part of the weight, proportional to the score":
		// 15 × score / 10, in hundredths.
		pts := math.Round(15*score*10) / 100
		r = Result{Status: StatusPartial, Points: pts,
			Reason: "OpenSSF Scorecard gives " + shown + " of 10" + from + ", below 7: " + strconv.FormatFloat(pts, 'f', -1, 64) + " of 15 points, proportional to the score (15 × " + shown + " / 10)."}
	}
	if isHexCommit(sc.Commit) {
		r.ScorecardCommit = sc.Commit
		r.Evidence = append(r.Evidence, Evidence{What: "the commit Scorecard analysed: " + sc.Commit})
	}
	if !sc.Date.IsZero() {
		r.Evidence = append(r.Evidence, Evidence{What: "the date of the analysis: " + sc.Date.UTC().Format(time.DateOnly)})
	}
	return r.withSource(link)
}

// --- supply chain -------------------------------------------------------------------

// checkPackageName flags a name similar to a popular package (see typosquat.go) of
// another owner. A match has the same owner, and is dropped, when the package and the
// popular one share an npm scope (the registry enforces who publishes under a scope), or
// when the package's verified build provenance names a repository of the GitHub owner the
// list records for the popular package. A repository the package's metadata or the entry
// only claims does not count: a squatter can copy the popular package's repository URL.
func checkPackageName(in *evalInput) Result {
	f := in.f
	p := f.Package
	if p == nil || p.Name == "" {
		return skipped("The entry has no package name to compare.")
	}
	eco := p.Ecosystem
	if eco != "npm" && eco != "pypi" {
		return skipped("The package's ecosystem has no popular-package list.").withSource(p.Source.URL)
	}
	if in.popularErr != nil || in.popular == nil {
		return skipped("The popular-package list could not be loaded.").withSource(p.Source.URL)
	}
	if in.popular.LenEcosystem(eco) == 0 {
		return skipped("The popular-package list has no names of the package's ecosystem.").withSource(p.Source.URL)
	}
	name := nameText(p.Name)
	if len(p.Name) > maxNameLen {
		return skipped("The package name is longer than 214 bytes and is not compared.").withSource(p.Source.URL)
	}
	ecoName := map[string]string{"npm": "npm", "pypi": "PyPI"}[eco]
	if in.popular.isListed(eco, p.Name) {
		return passed("The package " + name + " is itself on the list of popular " + ecoName + " packages.").withSource(p.Source.URL)
	}
	matches := in.popular.Similar(eco, p.Name)
	var flagged []SquatMatch
	var ev []Evidence
	for _, m := range matches {
		if why := sameOwner(f, m.Popular); why != "" {
			ev = append(ev, Evidence{What: "similar to the popular package " + nameText(m.Popular.Name) + " (" + squatKindText(m) + "), with the same owner: " + why})
			continue
		}
		flagged = append(flagged, m)
	}
	if len(flagged) == 0 {
		return passed("The name "+name+" is not within typosquatting distance of another owner's package among the "+strconv.Itoa(in.popular.LenEcosystem(eco))+" popular "+ecoName+" packages on the list.", ev...).withSource(p.Source.URL)
	}
	var fev []Evidence
	for _, m := range flagged {
		e := Evidence{What: "similar to the popular " + ecoName + " package " + nameText(m.Popular.Name) + " (" + squatKindText(m) + ")", Link: popularLink(m.Popular)}
		if m.Popular.Repository != "" {
			e.What += ", whose source is " + repoName(m.Popular.Repository)
		}
		fev = append(fev, e)
	}
	first := flagged[0]
	reason := "The name " + name + " is " + squatKindText(first) + " of the popular " + ecoName + " package " + nameText(first.Popular.Name) + ", published by another owner"
	if len(flagged) > 1 {
		reason += ", and similar to " + strconv.Itoa(len(flagged)-1) + " more popular packages"
	}
	r := failed(reason+".", append(fev, ev...)...).withSource(p.Source.URL)
	r.Serious = true
	return r
}

func (l *PopularList) isListed(eco, name string) bool {
	ix := l.eco[eco]
	return ix != nil && ix.canonical[canonicalName(eco, name)]
}

// squatKindText words how a name resembles a popular one, to follow "is".
func squatKindText(m SquatMatch) string {
	switch m.Kind {
	case SquatSeparator:
		return "a separator or scope variant"
	case SquatConfusable:
		return "a confusable-character variant"
	}
	if m.Distance == 1 {
		return "1 edit away from the name"
	}
	return strconv.Itoa(m.Distance) + " edits away from the name"
}

// sameOwner returns why the package and the popular package have the same owner, or "".
func sameOwner(f *Facts, pop PopularPackage) string {
	if f.Package.Ecosystem == "npm" {
		s1, _ := splitScope(f.Package.Name)
		s2, _ := splitScope(pop.Name)
		if s1 != "" && s1 == s2 {
			return "both are published under the npm scope @" + nameText(s1)
		}
	}
	if pv := f.Provenance; pv != nil && pv.Source.Outcome == SourceOK && pv.Verified && pop.Repository != "" {
		o1, _, ok1 := ParseGitHubURL(pv.Repository)
		o2, _, ok2 := ParseGitHubURL(pop.Repository)
		if ok1 && ok2 && strings.EqualFold(o1, o2) {
			return "the package's verified provenance names a repository of the GitHub owner " + o2
		}
	}
	return ""
}

func popularLink(p PopularPackage) string {
	switch p.Ecosystem {
	case "npm":
		return "https://www.npmjs.com/package/" + p.Name
	case "pypi":
		return "https://pypi.org/project/" + p.Name + "/"
	}
	return ""
}

// isCritical applies the critical rule: GitHub's CRITICAL severity or a CVSS base score
// of 9.0 or more, whichever the source recorded, besides the source's own flag.
func isCritical(a Advisory) bool {
	return a.Critical || strings.EqualFold(a.Severity, "CRITICAL") || a.CVSS >= 9.0
}

func checkAdvisories(in *evalInput) Result {
	f := in.f
	if f.Package == nil {
		return skipped("The server has no package, so there are no dependencies to look up.")
	}
	if f.Package.Source.Outcome == SourceFailed {
		return notRun("The package's registry metadata could not be read this time, so its advisories were not looked up; the check is retried.",
			errorEvidence(f.Package.Source)).withSource(f.Package.Source.URL)
	}
	af := f.Advisories
	if af == nil {
		return skipped("No advisory data is known for the package.")
	}
	link := af.Source.URL
	switch af.Source.Outcome {
	case SourceNoData:
		return skipped("deps.dev and OSV have no data on this package version.").withSource(link)
	case SourceFailed:
		return notRun("The advisories could not be read this time; the check is retried.", errorEvidence(af.Source)).withSource(link)
	}
	ver := versionText(af.Version)
	var crit, other []Evidence
	var ids []string
	for _, a := range af.Advisories {
		e := Evidence{What: identText(a.ID, 64) + " in " + nameText(a.Package) + " " + versionText(a.Version), Sample: evSample(a.Summary), Link: safeLink(a.URL)}
		if a.CVSS > 0 && a.CVSS <= 10 {
			e.What += ", CVSS " + strconv.FormatFloat(math.Round(a.CVSS*10)/10, 'f', -1, 64)
		}
		if isCritical(a) {
			crit = append(crit, e)
			if len(ids) < 5 {
				ids = append(ids, identText(a.ID, 64))
			}
		} else {
			other = append(other, e)
		}
	}
	deps := plural(af.Dependencies, "resolved dependency")
	if len(crit) > 0 {
		reason := strconv.Itoa(len(crit)) + " critical advisories affect version " + ver + " or its " + deps + ": " + strings.Join(ids, ", ")
		if len(crit) == 1 {
			reason = "A critical advisory affects version " + ver + " or its " + deps + ": " + ids[0]
		}
		if len(crit) > len(ids) {
			reason += ", ..."
		}
		r := failed(reason+".", append(crit, other...)...).withSource(link)
		r.Serious = true
		return r
	}
	reason := "No critical advisory affects version " + ver + " or its " + deps
	if len(other) > 0 {
		reason += " (" + plural(len(other), "advisory") + " of lower severity known)"
	}
	return passed(reason+".", other...).withSource(link)
}

// --- tool safety --------------------------------------------------------------------

// maxScanTools bounds the tools the tool-safety checks read.
const maxScanTools = 10_000

// toolSource is the public source of the tool list: the bundle manifest, else the
// remote endpoint.
func toolSource(f *Facts) string {
	if f.Manifest != nil && f.Manifest.Source.URL != "" {
		return f.Manifest.Source.URL
	}
	if f.Endpoint != nil {
		return f.Endpoint.URL
	}
	return ""
}

func checkHidden(in *evalInput) Result {
	f := in.f
	type text struct{ field, body, link string }
	var readmes []text
	readmeLink := ""
	if p := f.Package; packageReadable(p) && p.README != "" {
		readmes = append(readmes, text{"package README", p.README, p.Source.URL})
		readmeLink = p.Source.URL
	}
	if r := f.Repo; r != nil && r.Source.Outcome == SourceOK && r.README != "" && (len(readmes) == 0 || readmes[0].body != r.README) {
		readmes = append(readmes, text{"repository README", r.README, coalesce(r.URL, r.Source.URL)})
		readmeLink = coalesce(readmeLink, r.URL, r.Source.URL)
	}
	tools := f.Tools[:min(len(f.Tools), maxScanTools)]
	readmeFailed := f.Repo != nil && f.Repo.Source.Outcome == SourceOK && f.Repo.READMEFailed
	if len(tools) == 0 && len(readmes) == 0 {
		if readmeFailed {
			return notRun("The repository's README could not be read this time; the check is retried.",
				errorEvidence(Source{Error: f.Repo.Source.Error, URL: f.Repo.Source.URL}))
		}
		return skipped("There are neither tool descriptions nor a README to read.")
	}
	findings, toolsHit, incomplete := 0, 0, false
	invisible, directed := false, false
	var ev []Evidence
	var readmeHit []string
	note := func(s checks.TextScan, where, link string) {
		findings += s.Findings
		invisible = invisible || s.Invisible
		directed = directed || s.Directed
		incomplete = incomplete || s.Incomplete
		for _, e := range s.Evidence {
			if len(ev) >= maxResultEvidence {
				break
			}
			what := where
			if e.Tool != "" {
				what = "tool " + e.Tool
			}
			ev = append(ev, Evidence{What: what + ", " + e.Field + ": " + e.Note, Sample: e.Sample, Link: safeLink(link)})
		}
	}
	tl := toolSource(f)
	for i, raw := range tools {
		s := checks.ScanTool(i, raw)
		if s.Findings > 0 {
			toolsHit++
		}
		note(s, "tool", tl)
	}
	for _, t := range readmes {
		s := checks.ScanText(t.field, t.body)
		if s.Findings > 0 {
			readmeHit = append(readmeHit, t.field)
		}
		note(s, t.field, t.link)
	}
	scope := plural(len(tools), "tool description")
	if len(readmes) > 0 {
		scope += " and the README"
	}
	src := coalesce(tl, readmeLink)
	if findings > 0 {
		kind := "invisible characters"
		switch {
		case invisible && directed:
			kind = "text aimed at the model and invisible characters"
		case directed:
			kind = "text aimed at the model"
		}
		where := plural(toolsHit, "tool")
		if len(readmeHit) > 0 {
			where += " and the " + strings.Join(readmeHit, " and the ")
		}
		r := failed("Found "+kind+" ("+plural(findings, "finding")+") in "+where+", read from "+scope+".", ev...).withSource(src)
		r.Serious = true
		return r
	}
	if incomplete {
		return skipped("The text was too large to scan whole; the check counts neither way.").withSource(src)
	}
	if r := f.Repo; readmeFailed {
		// Nothing found so far, but the repository's README was not read: Probity's own
		// trouble, never a silent pass.
		return notRun("The repository's README could not be read this time; the check is retried.",
			errorEvidence(Source{Error: r.Source.Error, URL: r.Source.URL})).withSource(src)
	}
	reason := "No invisible characters or text aimed at the model in " + scope + "."
	if f.ToolsIncomplete || len(f.Tools) > len(tools) {
		reason += " The tool list is known to be incomplete; only the listed tools were read."
	}
	return passed(reason).withSource(src)
}

func checkDestructive(in *evalInput) Result {
	f := in.f
	tools := f.Tools[:min(len(f.Tools), maxScanTools)]
	if len(tools) == 0 {
		return skipped("There are no tools to read.")
	}
	destructive := 0
	var ev []Evidence
	missing := 0
	link := safeLink(toolSource(f))
	for _, raw := range tools {
		d, e := checks.DestructiveTool(raw)
		if d {
			destructive++
		}
		if e != nil {
			missing++
			if len(ev) < maxResultEvidence {
				ev = append(ev, Evidence{What: "tool " + e.Tool + ": " + e.Note, Link: link})
			}
		}
	}
	read := plural(len(tools), "tool") + " read"
	if missing > 0 {
		return failed(plural(missing, "tool")+" named like a destructive operation (delete, drop, exec and the like) "+
			map[bool]string{true: "does", false: "do"}[missing == 1]+" not declare destructiveHint true ("+read+").", ev...).withSource(link)
	}
	reason := "No tool is named like a destructive operation (" + read + ")."
	if destructive > 0 {
		reason = "Every tool named like a destructive operation declares destructiveHint true (" + plural(destructive, "such tool") + ", " + read + ")."
	}
	if f.ToolsIncomplete {
		reason += " The tool list is known to be incomplete; only the listed tools were read."
	}
	return passed(reason).withSource(link)
}

// --- endpoint -----------------------------------------------------------------------

func checkHandshake(in *evalInput) Result {
	f := in.f
	if f.Endpoint == nil && !isRemote(f) {
		return skipped("The server has no remote endpoint to check.")
	}
	e := f.Endpoint
	if e == nil || e.Source.Outcome == SourceNoData {
		return skipped("The remote endpoint has not been probed yet.")
	}
	link := safeLink(e.URL)
	if e.PlainHTTP || strings.HasPrefix(strings.ToLower(strings.TrimSpace(e.URL)), "http://") {
		r := failed("The remote endpoint is served over plain HTTP, so anyone on the path can read and change its traffic.",
			Evidence{What: "the endpoint", Sample: evSample(e.URL)})
		r.Serious = true
		r.SourceURL = "" // not an https link
		return r
	}
	if !e.Answered {
		return failed("The remote endpoint did not answer the MCP handshake (initialize).", Evidence{What: "the endpoint", Sample: evSample(e.URL), Link: link}).withSource(link)
	}
	return passed("The remote endpoint answered the MCP handshake over HTTPS.", Evidence{What: "the endpoint", Sample: evSample(e.URL), Link: link}).withSource(link)
}

// --- text helpers -------------------------------------------------------------------

// plural renders n and a noun in the singular or plural ("1 tool", "2 tools", "3
// resolved dependencies").
func plural(n int, noun string) string {
	if n != 1 {
		if k := len(noun); k >= 2 && noun[k-1] == 'y' && !strings.ContainsRune("aeiou", rune(noun[k-2])) {
			noun = noun[:k-1] + "ies"
		} else {
			noun += "s"
		}
	}
	return strconv.Itoa(n) + " " + noun
}

// evSample escapes third-party text for Evidence.Sample.
func evSample(s string) string { return checks.Escape(s, MaxEvidenceSample) }

// plainText reports whether s is at most n bytes of ASCII letters, digits and the given
// punctuation: text that can appear in a reason as it is.
func plainText(s string, n int, punct string) bool {
	if s == "" || len(s) > n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(punct, c) >= 0) {
			return false
		}
	}
	return true
}

// nameText renders a package or scope name for a reason: quoted when it is a plain
// name, else a placeholder (the evidence carries the escaped text).
func nameText(s string) string {
	if plainText(s, 214, "-._~@/") {
		return strconv.Quote(s)
	}
	return "(a name with unusual characters)"
}

// identText renders an identifier (advisory id, attestation kind) for a reason.
func identText(s string, n int) string {
	if plainText(s, n, "-._:") {
		return s
	}
	return "(an identifier with unusual characters)"
}

// versionText renders a version for a reason.
func versionText(s string) string {
	if s == "" {
		return "(unknown)"
	}
	if plainText(s, 64, "-.+_") {
		return s
	}
	return "(a version with unusual characters)"
}

func isHexCommit(s string) bool {
	if len(s) < 7 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// safeLink returns u when it is an https URL of plain URL characters, at most 2,048
// bytes, else "".
func safeLink(u string) string {
	if !strings.HasPrefix(u, "https://") || !plainText(u, 2048, "-._~:/?#[]@!$&'()*+,;=%") {
		return ""
	}
	return u
}

func coalesce(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
