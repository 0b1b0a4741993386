package supply

import (
	"context"
	"fmt"
	"net/url"
	"strings"
)

// DefaultDepsDevURL is the deps.dev API.
const DefaultDepsDevURL = "https://api.deps.dev"

// DepsDevConfig configures the deps.dev v3 source.
type DepsDevConfig struct {
	// BaseURL is the API; default DefaultDepsDevURL.
	BaseURL string
	// Client sends the requests; default a Client with default configuration.
	Client *Client
	// MaxBody caps a response; default the Client's.
	MaxBody int64
	// MaxNodes bounds the resolved dependency graph read; default 10,000 nodes (a
	// larger graph is SourceFailed).
	MaxNodes int
}

// DepsDev reads package versions, resolved dependency graphs, advisories and project
// Scorecards from the deps.dev v3 API.
type DepsDev struct {
	base     string
	client   *Client
	maxBody  int64
	maxNodes int
}

// NewDepsDev returns the deps.dev source for cfg.
func NewDepsDev(cfg DepsDevConfig) *DepsDev {
	d := &DepsDev{base: cfg.BaseURL, client: cfg.Client, maxBody: cfg.MaxBody, maxNodes: cfg.MaxNodes}
	if d.base == "" {
		d.base = DefaultDepsDevURL
	}
	if d.client == nil {
		d.client = NewClient(ClientConfig{})
	}
	if d.maxNodes <= 0 {
		d.maxNodes = 10000
	}
	return d
}

// PackageVersion names one version of a package. System is "npm" or "pypi" (the
// entry kinds; deps.dev's NPM and PYPI are read in lower case).
type PackageVersion struct {
	System  string
	Name    string
	Version string
}

// DepsDevLink is one link of a version (label SOURCE_REPO, HOMEPAGE, ISSUE_TRACKER, …).
type DepsDevLink struct {
	Label string
	URL   string
}

// DepsDevProjectRef is a project related to a version (relatedProjects).
type DepsDevProjectRef struct {
	ProjectKey         string // e.g. github.com/owner/repo
	RelationType       string // e.g. SOURCE_REPO
	RelationProvenance string // e.g. UNVERIFIED_METADATA, SLSA_ATTESTATION
}

// DepsDevVersion is what GetVersion reads of a package version.
type DepsDevVersion struct {
	Source          Source
	AdvisoryKeys    []string
	Links           []DepsDevLink
	RelatedProjects []DepsDevProjectRef
}

// DepsDevAdvisory is what GetAdvisory reads of an advisory.
type DepsDevAdvisory struct {
	Source      Source
	ID          string
	Title       string
	URL         string
	CVSS3Score  float64
	CVSS3Vector string
}

func (d *DepsDev) versionPath(pv PackageVersion) string {
	return "/v3/systems/" + url.PathEscape(strings.ToLower(pv.System)) +
		"/packages/" + strings.ReplaceAll(url.PathEscape(pv.Name), "@", "%40") + "/versions/" + url.PathEscape(pv.Version)
}

func (d *DepsDev) get(ctx context.Context, path string) (string, *response, Source) {
	u := joinURL(d.base, path)
	resp, err := d.client.do(ctx, request{service: "deps.dev", url: u, accept: "application/json", maxBody: d.maxBody})
	return u, resp, fetchSource("deps.dev", u, resp, err, d.client.now())
}

// GetVersion reads a package version: its advisory keys, links and related projects.
// A 404 is SourceNoData.
func (d *DepsDev) GetVersion(ctx context.Context, pv PackageVersion) DepsDevVersion {
	_, resp, src := d.get(ctx, d.versionPath(pv))
	out := DepsDevVersion{Source: src}
	if src.Outcome != SourceOK {
		return out
	}
	var j struct {
		AdvisoryKeys []struct {
			ID string `json:"id"`
		} `json:"advisoryKeys"`
		Links []struct {
			Label string `json:"label"`
			URL   string `json:"url"`
		} `json:"links"`
		RelatedProjects []struct {
			ProjectKey struct {
				ID string `json:"id"`
			} `json:"projectKey"`
			RelationProvenance string `json:"relationProvenance"`
			RelationType       string `json:"relationType"`
		} `json:"relatedProjects"`
	}
	if err := decodeJSON(resp.body, '{', &j); err != nil {
		out.Source.Outcome, out.Source.Error = SourceFailed, "deps.dev version: "+err.Error()
		return out
	}
	for i, k := range j.AdvisoryKeys {
		if i == 1000 {
			break
		}
		if validAdvisoryID(k.ID) {
			out.AdvisoryKeys = append(out.AdvisoryKeys, k.ID)
		}
	}
	for i, l := range j.Links {
		if i == 100 {
			break
		}
		out.Links = append(out.Links, DepsDevLink{Label: clip(l.Label, 40), URL: clip(l.URL, 2048)})
	}
	for i, p := range j.RelatedProjects {
		if i == 100 {
			break
		}
		out.RelatedProjects = append(out.RelatedProjects, DepsDevProjectRef{
			ProjectKey:         clip(p.ProjectKey.ID, 300),
			RelationType:       clip(p.RelationType, 40),
			RelationProvenance: clip(p.RelationProvenance, 40),
		})
	}
	return out
}

// GetDependencies reads the resolved dependency graph of a package version and
// returns its nodes other than the version itself (relation SELF), each once. A 404 is
// SourceNoData; a graph deps.dev could not resolve (its error field) is SourceFailed.
func (d *DepsDev) GetDependencies(ctx context.Context, pv PackageVersion) ([]PackageVersion, Source) {
	_, resp, src := d.get(ctx, d.versionPath(pv)+":dependencies")
	if src.Outcome != SourceOK {
		return nil, src
	}
	var j struct {
		Nodes []struct {
			VersionKey struct {
				System  string `json:"system"`
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"versionKey"`
			Relation string `json:"relation"`
		} `json:"nodes"`
		Error string `json:"error"`
	}
	if err := decodeJSON(resp.body, '{', &j); err != nil {
		src.Outcome, src.Error = SourceFailed, "deps.dev dependencies: "+err.Error()
		return nil, src
	}
	if j.Error != "" {
		src.Outcome, src.Error = SourceFailed, "deps.dev could not resolve the dependencies: "+clip(j.Error, 300)
		return nil, src
	}
	if len(j.Nodes) > d.maxNodes {
		src.Outcome, src.Error = SourceFailed, fmt.Sprintf("deps.dev dependencies: more than %d nodes", d.maxNodes)
		return nil, src
	}
	seen := map[PackageVersion]bool{}
	var deps []PackageVersion
	for _, n := range j.Nodes {
		if n.Relation == "SELF" {
			continue
		}
		k := n.VersionKey
		pv := PackageVersion{System: strings.ToLower(k.System), Name: k.Name, Version: k.Version}
		if pv.Name == "" || pv.Version == "" || len(pv.Name) > 300 || len(pv.Version) > 200 || seen[pv] {
			continue
		}
		seen[pv] = true
		deps = append(deps, pv)
	}
	return deps, src
}

// GetProject reads the OpenSSF Scorecard deps.dev holds for a project (projectKey
// github.com/OWNER/REPO). A 404, or a project without a scorecard, is SourceNoData: a
// repository Scorecard never scanned has no score, not 0.
func (d *DepsDev) GetProject(ctx context.Context, projectKey string) ScorecardFacts {
	_, resp, src := d.get(ctx, "/v3/projects/"+url.PathEscape(projectKey))
	out := ScorecardFacts{Source: src, From: "deps.dev"}
	if src.Outcome == SourceNoData {
		out.Source.Error = "deps.dev: no such project"
	}
	if src.Outcome != SourceOK {
		return out
	}
	var j struct {
		Scorecard *struct {
			Date       string `json:"date"`
			Repository struct {
				Commit string `json:"commit"`
			} `json:"repository"`
			OverallScore *float64 `json:"overallScore"`
		} `json:"scorecard"`
	}
	if err := decodeJSON(resp.body, '{', &j); err != nil {
		out.Source.Outcome, out.Source.Error = SourceFailed, "deps.dev project: "+err.Error()
		return out
	}
	if j.Scorecard == nil || j.Scorecard.OverallScore == nil {
		out.Source.Outcome, out.Source.Error = SourceNoData, "deps.dev: the project has no OpenSSF Scorecard"
		return out
	}
	if s := *j.Scorecard.OverallScore; s < 0 || s > 10 {
		out.Source.Outcome, out.Source.Error = SourceFailed, fmt.Sprintf("deps.dev project: overallScore %g is outside 0–10", s)
		return out
	}
	out.Score = *j.Scorecard.OverallScore
	out.Date = parseTime(j.Scorecard.Date)
	if isCommitSHA(j.Scorecard.Repository.Commit) {
		out.Commit = strings.ToLower(j.Scorecard.Repository.Commit)
	}
	return out
}

// GetAdvisory reads an advisory (an OSV identifier such as GHSA-…) with its CVSS v3
// score. A 404 is SourceNoData.
func (d *DepsDev) GetAdvisory(ctx context.Context, id string) DepsDevAdvisory {
	out := DepsDevAdvisory{ID: id}
	if !validAdvisoryID(id) {
		out.Source = Source{Outcome: SourceFailed, FetchedAt: d.client.now(), Error: "not an advisory identifier"}
		return out
	}
	_, resp, src := d.get(ctx, "/v3/advisories/"+url.PathEscape(id))
	out.Source = src
	if src.Outcome != SourceOK {
		return out
	}
	var j struct {
		URL         string  `json:"url"`
		Title       string  `json:"title"`
		CVSS3Score  float64 `json:"cvss3Score"`
		CVSS3Vector string  `json:"cvss3Vector"`
	}
	if err := decodeJSON(resp.body, '{', &j); err != nil {
		out.Source.Outcome, out.Source.Error = SourceFailed, "deps.dev advisory: "+err.Error()
		return out
	}
	if j.CVSS3Score < 0 || j.CVSS3Score > 10 {
		out.Source.Outcome, out.Source.Error = SourceFailed, fmt.Sprintf("deps.dev advisory: cvss3Score %g is outside 0–10", j.CVSS3Score)
		return out
	}
	out.Title, out.URL = clip(j.Title, 500), clip(j.URL, 2048)
	out.CVSS3Score, out.CVSS3Vector = j.CVSS3Score, clip(j.CVSS3Vector, 200)
	return out
}

// validAdvisoryID reports whether s looks like an OSV identifier: PREFIX-rest of
// letters, digits, '-', '_', '.' and ':', at most 100 bytes.
func validAdvisoryID(s string) bool {
	if s == "" || len(s) > 100 || !strings.Contains(s, "-") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':') {
			return false
		}
	}
	return true
}
