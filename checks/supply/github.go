package supply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultGitHubURL is the GitHub REST API.
const DefaultGitHubURL = "https://api.github.com"

// githubAPIVersion is the REST API version requested.
const githubAPIVersion = "2022-11-28"

// GitHubConfig configures the GitHub source.
type GitHubConfig struct {
	// BaseURL is the REST API; default DefaultGitHubURL.
	BaseURL string
	// Token, when set, is sent as "Authorization: Bearer …" to BaseURL only (and only
	// over https, or to a loopback test server). Without it the source works within
	// GitHub's unauthenticated quota. It is never logged or put in an error.
	Token string
	// Client sends the requests; default a Client with default configuration.
	Client *Client
	// MaxBody caps a response; default the Client's.
	MaxBody int64
}

// GitHub reads repositories from the GitHub REST API.
type GitHub struct {
	base    string
	auth    string
	client  *Client
	maxBody int64
}

// NewGitHub returns the GitHub source for cfg.
func NewGitHub(cfg GitHubConfig) *GitHub {
	g := &GitHub{base: cfg.BaseURL, client: cfg.Client, maxBody: cfg.MaxBody}
	if g.base == "" {
		g.base = DefaultGitHubURL
	}
	if g.client == nil {
		g.client = NewClient(ClientConfig{})
	}
	if cfg.Token != "" && tokenSafe(g.base) {
		g.auth = "Bearer " + cfg.Token
	}
	return g
}

// tokenSafe reports whether a token may go to base: https, or http to loopback.
func tokenSafe(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	if u.Scheme == "https" {
		return true
	}
	ip := net.ParseIP(u.Hostname())
	return u.Scheme == "http" && (u.Hostname() == "localhost" || ip != nil && ip.IsLoopback())
}

func (g *GitHub) get(ctx context.Context, path, accept string, maxBody int64, truncate bool) (string, *response, error) {
	u := joinURL(g.base, path)
	if maxBody <= 0 {
		maxBody = g.maxBody
	}
	resp, err := g.client.do(ctx, request{
		service:  "GitHub",
		url:      u,
		accept:   accept,
		auth:     g.auth,
		header:   http.Header{"X-Github-Api-Version": {githubAPIVersion}},
		maxBody:  maxBody,
		truncate: truncate,
	})
	return u, resp, err
}

// File reads the file at path on the repository's default branch, raw, through the
// contents API (a read of package claims): GitHub's status (200, 404, …) and the body,
// at most MaxBody bytes. A non-nil error is no usable answer; Throttled tells one that
// the throttle or GitHub's quota kept from GitHub.
func (g *GitHub) File(ctx context.Context, owner, repo, path string) (int, []byte, error) {
	_, resp, err := g.get(ctx, "/repos/"+url.PathEscape(owner)+"/"+url.PathEscape(repo)+"/contents/"+path,
		"application/vnd.github.raw+json", 0, false)
	if err != nil {
		return 0, nil, err
	}
	return resp.status, resp.body, nil
}

// Throttled reports whether err is a read that Probity's throttle, a spent quota or a
// source's rate limit kept from an answer (not a failure of the source).
func Throttled(err error) bool {
	return errors.Is(err, errThrottled) || errors.Is(err, errQuota) || errors.Is(err, errRateLimited)
}

type ghRepo struct {
	FullName      string `json:"full_name"`
	Private       bool   `json:"private"`
	Archived      bool   `json:"archived"`
	PushedAt      string `json:"pushed_at"`
	DefaultBranch string `json:"default_branch"`
	Stargazers    int    `json:"stargazers_count"`
	License       *struct {
		SPDXID string `json:"spdx_id"`
	} `json:"license"`
}

type ghRelease struct {
	PublishedAt string `json:"published_at"`
	CreatedAt   string `json:"created_at"`
}

type ghCommit struct {
	SHA    string `json:"sha"`
	Commit struct {
		Author struct {
			Date string `json:"date"`
		} `json:"author"`
		Committer struct {
			Date string `json:"date"`
		} `json:"committer"`
	} `json:"commit"`
}

// Repository reads a repository: the repository itself (a 404 is SourceNoData with Exists
// false), then, concurrently, its latest release (/releases/latest; 404: none), its
// latest commit (/commits?per_page=1: date and head SHA) and its README (raw). When
// the repository was read but one of the others failed, the outcome stays SourceOK and
// Source.Error names what is missing.
func (g *GitHub) Repository(ctx context.Context, owner, repo string) RepoFacts {
	f := RepoFacts{
		URL:   "https://github.com/" + strings.ToLower(owner) + "/" + strings.ToLower(repo),
		Owner: owner,
		Name:  repo,
	}
	if !githubOwnerOK(owner) || !githubRepoOK(repo) {
		f.Source = Source{Outcome: SourceFailed, FetchedAt: g.client.now(), Error: "not a GitHub OWNER/REPO"}
		return f
	}
	u, resp, err := g.get(ctx, "/repos/"+owner+"/"+repo, "application/vnd.github+json", 0, false)
	f.Source = fetchSource("GitHub", u, resp, err, g.client.now())
	switch {
	case f.Source.Outcome == SourceNoData:
		f.Source.Error = fmt.Sprintf("GitHub: no such repository (%d)", resp.status)
	case err == nil && blockedRepository(resp):
		// Unavailable to everyone (DMCA takedown, terms-of-service block): the
		// server's repository cannot be read by anyone, not Probity's trouble.
		f.Source.Outcome = SourceNoData
		f.Source.Error = fmt.Sprintf("GitHub: the repository is blocked and no one can read it (%d)", resp.status)
	}
	if f.Source.Outcome != SourceOK {
		return f
	}
	var r ghRepo
	if err := decodeJSON(resp.body, '{', &r); err != nil {
		f.Source.Outcome, f.Source.Error = SourceFailed, "GitHub repository: "+err.Error()
		return f
	}
	if o, n, ok := strings.Cut(r.FullName, "/"); ok && githubOwnerOK(o) && githubRepoOK(n) {
		// A renamed or transferred repository answers with its current name.
		owner, repo = o, n
	}
	f.Owner, f.Name = owner, repo
	f.URL = "https://github.com/" + strings.ToLower(owner) + "/" + strings.ToLower(repo)
	f.Exists = true
	f.Private, f.Archived = r.Private, r.Archived
	f.DefaultBranch = clip(r.DefaultBranch, 255)
	f.StargazerCount = max(r.Stargazers, 0)
	if r.License != nil {
		f.LicenseSPDX = clip(r.License.SPDXID, 100) // NOASSERTION kept as is
	}
	f.LastPush = parseTime(r.PushedAt)

	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		problems []string
	)
	problem := func(what string, s Source) {
		mu.Lock()
		defer mu.Unlock()
		problems = append(problems, what+": "+s.Error)
	}
	base := "/repos/" + owner + "/" + repo
	wg.Go(func() {
		u, resp, err := g.get(ctx, base+"/releases/latest", "application/vnd.github+json", 0, false)
		s := fetchSource("GitHub", u, resp, err, g.client.now())
		switch s.Outcome {
		case SourceOK:
			var rel ghRelease
			if err := decodeJSON(resp.body, '{', &rel); err != nil {
				problem("latest release", Source{Error: err.Error()})
				return
			}
			f.LatestRelease = parseTime(rel.PublishedAt)
			if f.LatestRelease.IsZero() {
				f.LatestRelease = parseTime(rel.CreatedAt)
			}
		case SourceFailed:
			problem("latest release", s)
		}
	})
	wg.Go(func() {
		u, resp, err := g.get(ctx, base+"/commits?per_page=1", "application/vnd.github+json", 0, false)
		s := fetchSource("GitHub", u, resp, err, g.client.now())
		if err == nil && resp.status == http.StatusConflict {
			return // an empty repository: no commits
		}
		switch s.Outcome {
		case SourceOK:
			var cs []ghCommit
			if err := decodeJSON(resp.body, '[', &cs); err != nil {
				problem("commits", Source{Error: err.Error()})
				return
			}
			if len(cs) == 0 {
				return
			}
			f.LastCommit = parseTime(cs[0].Commit.Committer.Date)
			if f.LastCommit.IsZero() {
				f.LastCommit = parseTime(cs[0].Commit.Author.Date)
			}
			if isCommitSHA(cs[0].SHA) {
				f.HeadCommit = strings.ToLower(cs[0].SHA)
			}
		case SourceFailed:
			problem("commits", s)
		}
	})
	wg.Go(func() {
		u, resp, err := g.get(ctx, base+"/readme", "application/vnd.github.raw", MaxREADME, true)
		s := fetchSource("GitHub", u, resp, err, g.client.now())
		switch s.Outcome {
		case SourceOK:
			f.README = cutUTF8(string(resp.body), MaxREADME)
		case SourceFailed:
			f.READMEFailed = true
			problem("README", s)
		}
	})
	wg.Wait()
	if len(problems) > 0 {
		slices.Sort(problems)
		f.Source.Error = strings.Join(problems, "; ")
	}
	return f
}

// blockedRepository reports whether GitHub refused a repository to everyone: 451
// Unavailable For Legal Reasons, or a 403 whose JSON body names an access block
// ("Repository access blocked", with a "block" member). A rate limit's 403 is not one:
// the client turns those into errors before a source sees them.
func blockedRepository(resp *response) bool {
	switch resp.status {
	case http.StatusUnavailableForLegalReasons:
		return true
	case http.StatusForbidden:
		var b struct {
			Message string          `json:"message"`
			Block   json.RawMessage `json:"block"`
		}
		return json.Unmarshal(resp.body, &b) == nil && (len(b.Block) > 0 && string(b.Block) != "null" ||
			strings.Contains(strings.ToLower(b.Message), "access blocked"))
	}
	return false
}

// Manifest reads manifest.json at ref (the head commit) of a repository and parses it
// as an MCP bundle manifest. A 404, or a manifest.json that is not an MCP bundle
// manifest, is SourceNoData; a malformed one is SourceFailed. The parsed manifest is
// nil unless the outcome is SourceOK.
func (g *GitHub) Manifest(ctx context.Context, owner, repo, ref string) (ManifestFacts, *Manifest) {
	var m ManifestFacts
	if isCommitSHA(ref) {
		m.Commit = strings.ToLower(ref)
	}
	if !githubOwnerOK(owner) || !githubRepoOK(repo) {
		m.Source = Source{Outcome: SourceFailed, FetchedAt: g.client.now(), Error: "not a GitHub OWNER/REPO"}
		return m, nil
	}
	path := "/repos/" + owner + "/" + repo + "/contents/manifest.json"
	if ref != "" {
		path += "?ref=" + url.QueryEscape(ref)
	}
	u, resp, err := g.get(ctx, path, "application/vnd.github.raw", MaxManifestSize, false)
	m.Source = fetchSource("GitHub", u, resp, err, g.client.now())
	if m.Source.Outcome == SourceNoData {
		m.Source.Error = "GitHub: the repository has no manifest.json at this commit"
	}
	if m.Source.Outcome != SourceOK {
		return m, nil
	}
	parsed, err := ParseManifest(resp.body)
	if err != nil {
		m.Source.Outcome, m.Source.Error = SourceFailed, "manifest.json: "+err.Error()
		if isNotBundle(err) {
			m.Source.Outcome = SourceNoData
		}
		return m, nil
	}
	m.ManifestVersion = parsed.ManifestVersion
	m.Name, m.Version = parsed.Name, parsed.Version
	m.ToolsGenerated = parsed.ToolsGenerated
	m.ToolCount = len(parsed.Tools)
	return m, parsed
}

// isCommitSHA reports whether s is a hex SHA-1 or SHA-256 object name.
func isCommitSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// parseTime reads an RFC 3339 time or a plain date; the zero time otherwise.
func parseTime(s string) time.Time {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC()
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t
	}
	return time.Time{}
}
