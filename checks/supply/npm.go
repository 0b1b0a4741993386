package supply

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// DefaultNPMURL is the npm registry.
const DefaultNPMURL = "https://registry.npmjs.org"

// MaxREADME is the most of a README kept in the facts (256 KiB).
const MaxREADME = 256 << 10

// npmMaxBody is the npm source's default body cap: full packuments of packages with
// many versions run to several MiB.
const npmMaxBody = 32 << 20

// NPMConfig configures the npm registry source.
type NPMConfig struct {
	// BaseURL is the registry; default DefaultNPMURL.
	BaseURL string
	// Client sends the requests; default a Client with default configuration.
	Client *Client
	// MaxBody caps a packument; default 32 MiB.
	MaxBody int64
}

// NPM reads packages from the npm registry: the full packument (the abbreviated one,
// Accept: application/vnd.npm.install-v1+json, lacks repository, license and time) and
// the attestations endpoint.
type NPM struct {
	base    string
	client  *Client
	maxBody int64
}

// NewNPM returns the npm source for cfg.
func NewNPM(cfg NPMConfig) *NPM {
	n := &NPM{base: cfg.BaseURL, client: cfg.Client, maxBody: cfg.MaxBody}
	if n.base == "" {
		n.base = DefaultNPMURL
	}
	if n.client == nil {
		n.client = NewClient(ClientConfig{})
	}
	if n.maxBody <= 0 {
		n.maxBody = npmMaxBody
	}
	return n
}

// NPMPackage is what the packument says: the facts, plus what provenance verification
// needs.
type NPMPackage struct {
	Facts PackageFacts
	// Integrity is dist.integrity of the latest version (an SRI string, sha512-…).
	Integrity string
}

// npmPackument is the part of a full packument the source reads. Fields with several
// historical forms stay raw.
type npmPackument struct {
	Name        string                     `json:"name"`
	DistTags    map[string]string          `json:"dist-tags"`
	Versions    map[string]json.RawMessage `json:"versions"`
	Time        map[string]json.RawMessage `json:"time"`
	Maintainers json.RawMessage            `json:"maintainers"`
	Readme      string                     `json:"readme"`
	Repository  json.RawMessage            `json:"repository"`
	License     json.RawMessage            `json:"license"`
}

// npmVersion is the part of a version manifest the source reads.
type npmVersion struct {
	Version     string          `json:"version"`
	License     json.RawMessage `json:"license"`
	Licenses    json.RawMessage `json:"licenses"`
	Repository  json.RawMessage `json:"repository"`
	Maintainers json.RawMessage `json:"maintainers"`
	Readme      string          `json:"readme"`
	MCPName     json.RawMessage `json:"mcpName"`
	Dist        struct {
		Integrity string `json:"integrity"`
	} `json:"dist"`
}

// Package reads the full packument of name (as npm spells it, @scope/name or name). A
// 404, or a packument whose versions were all unpublished, is SourceNoData (Unpublished
// is set for the latter).
func (n *NPM) Package(ctx context.Context, name string) NPMPackage {
	u := joinURL(n.base, "/"+npmEscape(name))
	resp, err := n.client.do(ctx, request{service: "npm", url: u, accept: "application/json", maxBody: n.maxBody})
	out := NPMPackage{Facts: PackageFacts{Ecosystem: "npm", Name: name}}
	out.Facts.Source = fetchSource("npm", u, resp, err, n.client.now())
	if out.Facts.Source.Outcome != SourceOK {
		return out
	}
	parsePackument(name, resp.body, &out)
	return out
}

// parsePackument fills out from a full packument; out.Facts.Source is SourceOK on entry
// and set to SourceNoData or SourceFailed when the packument says so.
func parsePackument(name string, body []byte, out *NPMPackage) {
	var p npmPackument
	if err := decodeJSON(body, '{', &p); err != nil {
		out.Facts.Source.Outcome, out.Facts.Source.Error = SourceFailed, "npm packument: "+err.Error()
		return
	}
	if p.Name != "" && p.Name != name {
		out.Facts.Source.Outcome, out.Facts.Source.Error = SourceFailed, fmt.Sprintf("npm packument names %q, not %q", clip(p.Name, 100), name)
		return
	}
	if raw, ok := p.Time["unpublished"]; ok || len(p.Versions) == 0 {
		out.Facts.Unpublished = true
		out.Facts.Source.Outcome = SourceNoData
		out.Facts.Source.Error = "npm: the package has no published versions"
		var up struct {
			Time string `json:"time"`
		}
		if ok && json.Unmarshal(raw, &up) == nil && up.Time != "" {
			out.Facts.Source.Error = "npm: the package was unpublished at " + clip(up.Time, 40)
		}
		return
	}
	latest := p.DistTags["latest"]
	rawV, ok := p.Versions[latest]
	if latest == "" || !ok {
		out.Facts.Source.Outcome, out.Facts.Source.Error = SourceFailed, fmt.Sprintf("npm packument: dist-tags.latest %q names no version", clip(latest, 100))
		return
	}
	var v npmVersion
	if err := decodeJSON(rawV, '{', &v); err != nil {
		out.Facts.Source.Outcome, out.Facts.Source.Error = SourceFailed, fmt.Sprintf("npm packument: version %s: %v", clip(latest, 100), err)
		return
	}
	f := &out.Facts
	f.Latest = latest
	if raw, ok := p.Time[latest]; ok {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				f.PublishedAt = t.UTC()
			}
		}
	}
	f.License = npmLicense(v.License, v.Licenses)
	if f.License == "" {
		f.License = npmLicense(p.License, nil)
	}
	f.RepositoryURL = npmRepository(v.Repository)
	if f.RepositoryURL == "" {
		f.RepositoryURL = npmRepository(p.Repository)
	}
	f.Maintainers = npmMaintainers(p.Maintainers)
	if len(f.Maintainers) == 0 {
		f.Maintainers = npmMaintainers(v.Maintainers)
	}
	f.README = p.Readme
	if f.README == "" {
		f.README = v.Readme
	}
	f.README = cutUTF8(f.README, MaxREADME)
	f.MCPName = npmMCPName(v.MCPName)
	out.Integrity = v.Dist.Integrity
}

// Attestations reads the npm attestations of name@version
// (/-/npm/v1/attestations/{name}@{version}): the raw JSON for the provenance verifier.
// A 404 is SourceNoData (the version has none).
func (n *NPM) Attestations(ctx context.Context, name, version string) ([]byte, Source) {
	u := joinURL(n.base, "/-/npm/v1/attestations/"+npmEscape(name)+"@"+url.PathEscape(version))
	resp, err := n.client.do(ctx, request{service: "npm", url: u, accept: "application/json", maxBody: n.maxBody})
	src := fetchSource("npm", u, resp, err, n.client.now())
	if src.Outcome != SourceOK {
		if src.Outcome == SourceNoData {
			src.Error = "npm: no attestations for this version"
		}
		return nil, src
	}
	var probe struct {
		Attestations []json.RawMessage `json:"attestations"`
	}
	if err := decodeJSON(resp.body, '{', &probe); err != nil {
		src.Outcome, src.Error = SourceFailed, "npm attestations: "+err.Error()
		return nil, src
	}
	if len(probe.Attestations) == 0 {
		src.Outcome, src.Error = SourceNoData, "npm: the attestations document lists none"
		return nil, src
	}
	return resp.body, src
}

// npmMCPName reads the mcpName field of a version's package.json, the MCP Registry's
// ownership marker: a string, trimmed, of at most maxMCPName bytes; anything else is "".
func npmMCPName(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	if s = strings.TrimSpace(s); len(s) > maxMCPName {
		return "" // not a server name; never shown cut
	}
	return s
}

// maxMCPName bounds PackageFacts.MCPName.
const maxMCPName = 200

// npmEscape escapes a package name for a registry path: @scope/name → @scope%2Fname.
func npmEscape(name string) string {
	return strings.ReplaceAll(url.PathEscape(name), "%40", "@")
}

// npmLicense reads the license field in its three forms: an SPDX string, the legacy
// {type, url} object, or the legacy licenses array (of objects or strings), joined
// with OR.
func npmLicense(license, licenses json.RawMessage) string {
	if s := licenseName(license); s != "" {
		return s
	}
	var list []json.RawMessage
	if json.Unmarshal(licenses, &list) != nil {
		// Some packages put the array in "license".
		if json.Unmarshal(license, &list) != nil {
			return ""
		}
	}
	var parts []string
	for i, raw := range list {
		if i == 16 {
			break
		}
		if s := licenseName(raw); s != "" {
			if strings.ContainsAny(s, " \t") && !(strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")")) {
				s = "(" + s + ")"
			}
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " OR ")
}

// licenseName reads one license: a string or an object with a string "type".
func licenseName(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return clip(strings.TrimSpace(s), 200)
	}
	var o struct {
		Type string `json:"type"`
	}
	if len(bytes.TrimSpace(raw)) > 0 && bytes.TrimSpace(raw)[0] == '{' && json.Unmarshal(raw, &o) == nil {
		return clip(strings.TrimSpace(o.Type), 200)
	}
	return ""
}

// npmRepository reads the repository field: a string (URL or shorthand) or an object
// {type, url, directory}.
func npmRepository(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return NormalizeRepositoryURL(s)
	}
	var o struct {
		URL string `json:"url"`
	}
	if len(bytes.TrimSpace(raw)) > 0 && bytes.TrimSpace(raw)[0] == '{' && json.Unmarshal(raw, &o) == nil {
		return NormalizeRepositoryURL(o.URL)
	}
	return ""
}

// npmMaintainers reads maintainers: objects {name, email} (emails are dropped) or
// "Name <email>" strings. At most 100 are kept.
func npmMaintainers(raw json.RawMessage) []string {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil
	}
	var names []string
	for _, r := range list {
		if len(names) == 100 {
			break
		}
		var o struct {
			Name string `json:"name"`
		}
		var s string
		switch {
		case json.Unmarshal(r, &s) == nil:
			if i := strings.IndexAny(s, "<("); i >= 0 {
				s = s[:i]
			}
		case json.Unmarshal(r, &o) == nil:
			s = o.Name
		}
		if s = clip(strings.TrimSpace(s), 214); s != "" {
			names = append(names, s)
		}
	}
	return names
}

// The hosts of npm's repository shorthands (hosted-git-info).
var repoShorthands = map[string]string{
	"github":    "github.com",
	"gitlab":    "gitlab.com",
	"bitbucket": "bitbucket.org",
	"gist":      "gist.github.com",
}

// NormalizeRepositoryURL turns a repository reference, in any form npm's repository
// field (or PyPI's project_urls) uses, into an https URL, or "" when it names no
// repository. References on GitHub become https://github.com/OWNER/REPO in lower case
// (any .git suffix, deeper path, fragment, query and user dropped); others keep their
// host and path as an https URL without .git. Forms read:
//
//	github:owner/repo  owner/repo  gitlab:group/repo  bitbucket:o/r  gist:id
//	git+https://github.com/o/r.git  git://github.com/o/r  git+ssh://git@github.com/o/r.git
//	ssh://git@github.com/o/r  git@github.com:o/r.git  github.com/o/r
//	https://github.com/o/r/tree/main/packages/x  http://www.github.com/o/r
func NormalizeRepositoryURL(raw string) string {
	s := strings.TrimSpace(raw)
	if s == "" || len(s) > 2048 || strings.ContainsAny(s, " \t\r\n\\") {
		return ""
	}
	// Fragments (#branch, #semver:…) and queries never name the repository.
	if i := strings.IndexAny(s, "#?"); i >= 0 {
		s = s[:i]
	}
	var host, path, port string
	switch {
	case strings.Contains(s, "://"):
		u, err := url.Parse(s)
		if err != nil {
			return ""
		}
		switch strings.TrimPrefix(strings.ToLower(u.Scheme), "git+") {
		case "https", "http", "git", "ssh":
		default:
			return ""
		}
		host, path = u.Hostname(), u.Path
		if s := strings.TrimPrefix(strings.ToLower(u.Scheme), "git+"); (s == "https" || s == "http") && u.Port() != "" {
			port = u.Port()
		}
	case shorthandPrefix(s) != "":
		p := shorthandPrefix(s)
		host, path = repoShorthands[p], "/"+s[len(p)+1:]
	case scpLike(s):
		// user@host:path
		at := strings.IndexByte(s, '@')
		colon := strings.IndexByte(s, ':')
		host, path = s[at+1:colon], "/"+strings.TrimPrefix(s[colon+1:], "/")
	default:
		segs := strings.Split(s, "/")
		if len(segs) == 2 && !strings.Contains(segs[0], ".") && !strings.Contains(s, ":") {
			// owner/repo: npm's GitHub shorthand.
			host, path = "github.com", "/"+s
		} else if strings.Contains(segs[0], ".") && len(segs) >= 3 && !strings.Contains(s, ":") {
			// github.com/o/r without a scheme.
			host, path = segs[0], "/"+strings.Join(segs[1:], "/")
		} else {
			return ""
		}
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if !hostnameOK(host) {
		return ""
	}
	if host == "www.github.com" {
		host = "github.com"
	}
	path = strings.Trim(path, "/")
	if host == "github.com" {
		segs := strings.Split(path, "/")
		if len(segs) < 2 {
			return ""
		}
		owner, repo := segs[0], trimGit(segs[1])
		if !githubOwnerOK(owner) || !githubRepoOK(repo) || githubReserved[strings.ToLower(owner)] {
			return ""
		}
		return "https://github.com/" + strings.ToLower(owner) + "/" + strings.ToLower(repo)
	}
	path = trimGit(path)
	if path == "" {
		return ""
	}
	if port != "" && port != "443" {
		host += ":" + port
	}
	u := url.URL{Scheme: "https", Host: host, Path: "/" + path}
	return u.String()
}

// trimGit drops a ".git" suffix, in any case.
func trimGit(s string) string {
	if len(s) > 4 && strings.EqualFold(s[len(s)-4:], ".git") {
		return s[:len(s)-4]
	}
	return s
}

// hostnameOK reports whether h is a DNS name of two or more labels of letters, digits
// and inner hyphens (an IP address literal is no code forge).
func hostnameOK(h string) bool {
	if len(h) > 253 {
		return false
	}
	labels := strings.Split(h, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			if c := l[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// shorthandPrefix returns "github", "gitlab", … when s is PREFIX:path.
func shorthandPrefix(s string) string {
	p, rest, ok := strings.Cut(s, ":")
	if !ok || rest == "" || strings.HasPrefix(rest, "//") {
		return ""
	}
	if _, known := repoShorthands[p]; known {
		return p
	}
	return ""
}

// scpLike reports whether s is user@host:path (git's scp-like syntax).
func scpLike(s string) bool {
	at := strings.IndexByte(s, '@')
	colon := strings.IndexByte(s, ':')
	return at > 0 && colon > at+1 && colon < len(s)-1 && !strings.Contains(s[:colon], "/")
}

// githubReserved are first path segments of github.com that are not owners.
var githubReserved = map[string]bool{
	"about": true, "apps": true, "collections": true, "enterprise": true, "explore": true,
	"features": true, "login": true, "marketplace": true, "new": true, "notifications": true,
	"orgs": true, "organizations": true, "pricing": true, "search": true, "settings": true,
	"sponsors": true, "topics": true, "trending": true,
}

// githubOwnerOK reports whether s is a valid GitHub owner: letters, digits and
// hyphens, at most 39, no leading hyphen.
func githubOwnerOK(s string) bool {
	if s == "" || len(s) > 39 || s[0] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// githubRepoOK reports whether s is a valid GitHub repository name: letters, digits,
// '-', '_' and '.', at most 100, not "." or "..".
func githubRepoOK(s string) bool {
	if s == "" || len(s) > 100 || s == "." || s == ".." {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// ParseGitHubURL returns the owner and repository of https://github.com/OWNER/REPO
// (as NormalizeRepositoryURL writes it, or any form it reads).
func ParseGitHubURL(s string) (owner, repo string, ok bool) {
	n := NormalizeRepositoryURL(s)
	rest, found := strings.CutPrefix(n, "https://github.com/")
	if !found {
		return "", "", false
	}
	owner, repo, ok = strings.Cut(rest, "/")
	return owner, repo, ok
}

// cutUTF8 returns at most n bytes of s, not splitting a UTF-8 sequence.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for i := 0; i < utf8.UTFMax && len(s) > 0; i++ {
		r, size := utf8.DecodeLastRuneInString(s)
		if r != utf8.RuneError || size != 1 {
			break
		}
		s = s[:len(s)-1]
	}
	return s
}

// clip shortens server-controlled text used in errors.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return cutUTF8(s, n) + "…"
}
