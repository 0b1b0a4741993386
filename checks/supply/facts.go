// Package supply reads what public data says about a server's origin, practices, supply
// chain, tool safety and endpoint (npm, PyPI, GitHub, deps.dev, OSV, OpenSSF Scorecard,
// Sigstore attestations, MCP bundle manifests, the MCP Registry's ownership markers), and
// scores it with the eleven weighted checks behind the Verified badge (seed 004). The
// checks run over the whole server (Target): the source repository it lists, its first
// npm or PyPI package and its remote endpoint.
//
// The package has three layers, each testable alone:
//
//   - sources (npm.go, pypi.go, github.go, depsdev.go, osv.go, scorecard.go,
//     manifest.go, over the caching HTTP client in client.go) fill a Facts value. Every
//     source has a configurable base URL, timeouts, response-size caps, an
//     ETag/If-Modified-Since cache and rate-limit handling, and reports "no data"
//     (SourceNoData) apart from failure (SourceFailed). Every request, redirects
//     included, goes through the egress guard (checks/probe/egress), loopback only
//     with ClientConfig.AllowLoopback;
//   - provenance (provenance.go) verifies npm and PyPI attestations offline with
//     sigstore-go against a pinned trusted root;
//   - the checks (score.go, typosquat.go, license.go) are pure functions of Facts:
//     Evaluate returns one Result per check, the score and the Verified decision.
//
// A run's Verdict is stored as JSON in the form EncodeVerdict writes, and every reader
// decodes it with DecodeVerdict (stored.go).
package supply

import (
	"encoding/json"
	"time"
)

// SourceOutcome says what a source returned.
type SourceOutcome string

// The outcomes of a source.
const (
	// SourceOK: the source answered and the facts are filled.
	SourceOK SourceOutcome = "ok"
	// SourceNoData: the source answered that it has nothing (a 404 or 410, an
	// unpublished package, a repository Scorecard never scanned, no attestation).
	// Checks that need the data are skipped, except where seed 004 makes its absence a
	// failure: a source repository that does not exist or no one can read fails.
	SourceNoData SourceOutcome = "no_data"
	// SourceFailed: the source could not be read (network error, timeout, 5xx, rate
	// limited or out of quota, malformed response): Probity's trouble, not the
	// server's. Checks depending on it are not run (StatusNotRun, shown as "not run,
	// retried"), the error is kept as evidence, and the run is retried soon
	// (Verdict.Retry).
	SourceFailed SourceOutcome = "failed"
)

// Source is the provenance of one set of facts: where they came from and when.
type Source struct {
	Outcome SourceOutcome `json:"outcome"`
	// URL is the public page or API document a person can open to check the facts.
	URL       string    `json:"url,omitempty"`
	FetchedAt time.Time `json:"fetchedAt"`
	// Error describes a SourceFailed or SourceNoData outcome in plain words (no secrets).
	Error string `json:"error,omitempty"`
}

// Facts is everything the sources found about one server (an entry with its linked
// parts, see Target), as plain data.
type Facts struct {
	// Kind is the kind of the entry's primary part: "remote", "npm", "pypi" or "github".
	Kind string `json:"kind"`
	// Locator is the primary part's locator (store.Entry.Locator).
	Locator string `json:"locator"`
	// ServerName is the server's registry name (Target.ServerName); "" when none.
	ServerName string `json:"serverName,omitempty"`
	// Repository is the source repository the server lists (Target.Repository,
	// normalized by NormalizeRepositoryURL); "" when it lists none. Repo holds what
	// GitHub said of it; when the server lists none, Repo is the repository its
	// package links.
	Repository string `json:"repository,omitempty"`
	// Unchecked are the server's parts that are listed but not checked: packages after
	// the first, OCI images, NuGet packages, MCP bundle files.
	Unchecked []PartRef `json:"unchecked,omitempty"`

	Package    *PackageFacts    `json:"package,omitempty"`    // npm or PyPI; nil for remote/github entries
	Repo       *RepoFacts       `json:"repo,omitempty"`       // the source repository, when one is named
	Provenance *ProvenanceFacts `json:"provenance,omitempty"` // attestations of the package's latest version
	Scorecard  *ScorecardFacts  `json:"scorecard,omitempty"`
	Advisories *AdvisoryFacts   `json:"advisories,omitempty"`
	Manifest   *ManifestFacts   `json:"manifest,omitempty"` // MCP bundle manifest of the repository
	Endpoint   *EndpointFacts   `json:"endpoint,omitempty"` // remote entries: the live handshake

	// Tools are the tool objects the hidden-instruction and destructive checks read:
	// the manifest's tools, or a remote endpoint's last tool surface.
	Tools []json.RawMessage `json:"tools,omitempty"`
	// ToolsIncomplete says the tool list is known to be partial (tools_generated).
	ToolsIncomplete bool `json:"toolsIncomplete,omitempty"`
}

// PackageFacts describes an npm or PyPI package.
type PackageFacts struct {
	Source    Source `json:"source"`
	Ecosystem string `json:"ecosystem"` // "npm" or "pypi"
	Name      string `json:"name"`      // as the registry spells it (npm: with scope)
	// Latest is the latest version (npm dist-tags.latest; PyPI info.version).
	Latest      string    `json:"latest,omitempty"`
	PublishedAt time.Time `json:"publishedAt,omitzero"` // of Latest
	Unpublished bool      `json:"unpublished,omitempty"`
	// RepositoryURL is the repository the package's own metadata names, normalized to
	// https://github.com/OWNER/REPO when it is on GitHub (every form of npm's
	// repository field: string shorthands, git+ssh, objects with directory); "" when
	// none.
	RepositoryURL string `json:"repositoryUrl,omitempty"`
	// License is the declared license as an SPDX expression ("" when none).
	License string `json:"license,omitempty"`
	// Maintainers are the registry account names of the publishers (npm maintainers,
	// PyPI has none in its JSON API).
	Maintainers []string `json:"maintainers,omitempty"`
	// README is the package README, cut to 256 KiB.
	README string `json:"readme,omitempty"`
	// MCPName is the registry ownership marker the package carries: npm's mcpName in the
	// latest version's package.json, PyPI's first "mcp-name: NAME" line in the README
	// (as the official MCP Registry reads them to tie a package to a server name); ""
	// when none (or longer than 200 bytes, which no server name is).
	MCPName string `json:"mcpName,omitempty"`
}

// PartRef names a part of a server that is listed but not checked.
type PartRef struct {
	// Kind is "npm", "pypi", "oci", "nuget" or "mcpb".
	Kind string `json:"kind"`
	// Locator is the part's identifier as listed.
	Locator string `json:"locator"`
}

// RepoFacts describes a GitHub repository.
type RepoFacts struct {
	Source Source `json:"source"`
	URL    string `json:"url"` // https://github.com/OWNER/REPO
	Owner  string `json:"owner"`
	Name   string `json:"name"`
	// Exists is false when GitHub answered 404 (Source.Outcome SourceNoData).
	Exists   bool `json:"exists"`
	Archived bool `json:"archived,omitempty"`
	Private  bool `json:"private,omitempty"`
	// LicenseSPDX is license.spdx_id; "NOASSERTION" means a license GitHub could not
	// identify (not "no license"); "" means none.
	LicenseSPDX   string    `json:"licenseSpdx,omitempty"`
	LastPush      time.Time `json:"lastPush,omitzero"`
	LatestRelease time.Time `json:"latestRelease,omitzero"`
	LastCommit    time.Time `json:"lastCommit,omitzero"`
	DefaultBranch string    `json:"defaultBranch,omitempty"`
	HeadCommit    string    `json:"headCommit,omitempty"` // SHA of the default branch's latest commit
	README        string    `json:"readme,omitempty"`     // cut to 256 KiB
	// READMEFailed says Probity could not read the README (its own trouble: quota,
	// throttle, timeout, 5xx); a repository without one answers 404, which is no README.
	READMEFailed   bool `json:"readmeFailed,omitempty"`
	StargazerCount int  `json:"stars,omitempty"`
}

// ProvenanceFacts are the verified attestations of a package version.
type ProvenanceFacts struct {
	Source  Source `json:"source"`
	Version string `json:"version"`
	// Present says at least one attestation exists (SourceNoData otherwise); Verified that
	// one verified against the pinned trusted root.
	Present  bool `json:"present"`
	Verified bool `json:"verified"`
	// Kinds lists what verified: "npm-slsa-provenance", "npm-publish", "pypi-pep740".
	Kinds []string `json:"kinds,omitempty"`
	// Repository and Commit are what the provenance names as the build's source
	// (https://github.com/OWNER/REPO and a commit SHA); "" when it names none.
	Repository string `json:"repository,omitempty"`
	Commit     string `json:"commit,omitempty"`
	// Error says why present attestations did not verify.
	Error string `json:"error,omitempty"`
}

// ScorecardFacts is the OpenSSF Scorecard of the repository.
type ScorecardFacts struct {
	Source Source `json:"source"`
	// Score is 0–10; meaningful only when Source.Outcome is SourceOK (a repository never
	// scanned is SourceNoData, not 0).
	Score  float64   `json:"score"`
	Commit string    `json:"commit,omitempty"` // the commit Scorecard analysed
	Date   time.Time `json:"date,omitzero"`
	// From is "deps.dev" or "scorecard-api".
	From string `json:"from,omitempty"`
}

// Advisory is one known vulnerability affecting the package or a dependency.
type Advisory struct {
	ID       string  `json:"id"` // GHSA-…, CVE-…, PYSEC-…
	Package  string  `json:"package"`
	Version  string  `json:"version"`
	Critical bool    `json:"critical"`
	CVSS     float64 `json:"cvss,omitempty"` // base score when known
	// Severity is GitHub's database_specific.severity when given (CRITICAL, HIGH, …).
	Severity string `json:"severity,omitempty"`
	Summary  string `json:"summary,omitempty"` // advisory text: escape when shown
	URL      string `json:"url,omitempty"`
}

// AdvisoryFacts are the advisories of the package's latest version and its resolved
// dependencies (deps.dev dependency graph, OSV querybatch and details). Withdrawn
// advisories are left out.
type AdvisoryFacts struct {
	Source       Source     `json:"source"`
	Version      string     `json:"version"`
	Dependencies int        `json:"dependencies"` // resolved dependencies checked
	Advisories   []Advisory `json:"advisories,omitempty"`
}

// ManifestFacts is an MCP bundle manifest (manifest.json at the repository's latest
// commit), accepted only with manifest_version (or the older dxt_version) and a server
// object.
type ManifestFacts struct {
	Source          Source `json:"source"`
	ManifestVersion string `json:"manifestVersion,omitempty"`
	Name            string `json:"name,omitempty"`
	Version         string `json:"version,omitempty"`
	Commit          string `json:"commit,omitempty"`
	ToolsGenerated  bool   `json:"toolsGenerated,omitempty"`
	ToolCount       int    `json:"toolCount"`
}

// EndpointFacts is what the live handshake of a remote entry showed.
type EndpointFacts struct {
	Source Source `json:"source"`
	URL    string `json:"url"`
	// PlainHTTP says the endpoint is http://, not https://.
	PlainHTTP bool `json:"plainHttp,omitempty"`
	// Answered says it answered the MCP handshake (initialize or server/discover); a
	// 401 login challenge counts as an answer.
	Answered bool `json:"answered"`
}
