package supply

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/probity-dev/probity/locator"
)

// DefaultPyPIURL is the Python Package Index.
const DefaultPyPIURL = "https://pypi.org"

// PyPIConfig configures the PyPI source.
type PyPIConfig struct {
	// BaseURL is the index; default DefaultPyPIURL.
	BaseURL string
	// Client sends the requests; default a Client with default configuration.
	Client *Client
	// MaxBody caps a response; default the Client's.
	MaxBody int64
	// MaxProvenanceFiles is how many files of the latest release have their PEP 740
	// provenance read; default 4.
	MaxProvenanceFiles int
}

// PyPI reads projects from the PyPI JSON API (/pypi/{project}/json) and PEP 740
// provenance from the Integrity API.
type PyPI struct {
	base      string
	client    *Client
	maxBody   int64
	provFiles int
}

// NewPyPI returns the PyPI source for cfg.
func NewPyPI(cfg PyPIConfig) *PyPI {
	p := &PyPI{base: cfg.BaseURL, client: cfg.Client, maxBody: cfg.MaxBody, provFiles: cfg.MaxProvenanceFiles}
	if p.base == "" {
		p.base = DefaultPyPIURL
	}
	if p.client == nil {
		p.client = NewClient(ClientConfig{})
	}
	if p.provFiles <= 0 {
		p.provFiles = 4
	}
	return p
}

// PyPIFile is one distribution file of a release.
type PyPIFile struct {
	Filename string
	SHA256   string // hex, as PyPI's digests.sha256
}

// PyPIProject is what the JSON API says: the facts, plus the files of the latest
// release, which provenance verification needs.
type PyPIProject struct {
	Facts PackageFacts
	// Files are the latest release's files, not yanked ones first, at most 100.
	Files []PyPIFile
}

type pypiFileJSON struct {
	Filename string `json:"filename"`
	Digests  struct {
		SHA256 string `json:"sha256"`
	} `json:"digests"`
	UploadTime string `json:"upload_time_iso_8601"`
	Yanked     bool   `json:"yanked"`
}

type pypiProjectJSON struct {
	Info struct {
		Name              string            `json:"name"`
		Version           string            `json:"version"`
		License           string            `json:"license"`
		LicenseExpression string            `json:"license_expression"`
		Classifiers       []string          `json:"classifiers"`
		ProjectURLs       map[string]string `json:"project_urls"`
		HomePage          string            `json:"home_page"`
		Description       string            `json:"description"`
	} `json:"info"`
	Releases map[string][]pypiFileJSON `json:"releases"`
	URLs     []pypiFileJSON            `json:"urls"`
}

// Project reads project from the JSON API. A 404 is SourceNoData.
func (p *PyPI) Project(ctx context.Context, project string) PyPIProject {
	u := joinURL(p.base, "/pypi/"+url.PathEscape(locator.PEP503(project))+"/json")
	resp, err := p.client.do(ctx, request{service: "PyPI", url: u, accept: "application/json", maxBody: p.maxBody})
	out := PyPIProject{Facts: PackageFacts{Ecosystem: "pypi", Name: project}}
	out.Facts.Source = fetchSource("PyPI", u, resp, err, p.client.now())
	if out.Facts.Source.Outcome != SourceOK {
		return out
	}
	var j pypiProjectJSON
	if err := decodeJSON(resp.body, '{', &j); err != nil {
		out.Facts.Source.Outcome, out.Facts.Source.Error = SourceFailed, "PyPI project: "+err.Error()
		return out
	}
	if j.Info.Version == "" {
		out.Facts.Source.Outcome, out.Facts.Source.Error = SourceFailed, "PyPI project: info.version is missing"
		return out
	}
	f := &out.Facts
	if j.Info.Name != "" {
		f.Name = clip(j.Info.Name, 214)
	}
	f.Latest = clip(j.Info.Version, 100)
	f.License = pypiLicense(j.Info.LicenseExpression, j.Info.License, j.Info.Classifiers)
	f.RepositoryURL = pypiRepository(j.Info.ProjectURLs, j.Info.HomePage)
	f.README = cutUTF8(j.Info.Description, MaxREADME)
	f.MCPName = readmeMCPName(f.README)
	files, ok := j.Releases[j.Info.Version]
	if !ok {
		files = j.URLs // the latest release's files; releases is deprecated
	}
	slices.SortStableFunc(files, func(a, b pypiFileJSON) int {
		switch {
		case a.Yanked == b.Yanked:
			return 0
		case b.Yanked:
			return -1
		}
		return 1
	})
	for _, fl := range files {
		if len(out.Files) == 100 {
			break
		}
		if t, err := time.Parse(time.RFC3339Nano, fl.UploadTime); err == nil && (f.PublishedAt.IsZero() || t.Before(f.PublishedAt)) {
			f.PublishedAt = t.UTC()
		}
		if fl.Filename == "" || strings.ContainsAny(fl.Filename, "/\\") {
			continue
		}
		out.Files = append(out.Files, PyPIFile{Filename: fl.Filename, SHA256: strings.ToLower(fl.Digests.SHA256)})
	}
	return out
}

// Provenance reads the PEP 740 provenance objects of the first files of a release (GET
// /integrity/{project}/{version}/{filename}/provenance), concurrently. The results are
// aligned: provenance[i] belongs to found[i]. A 404 for a file means it has none; the
// Source is SourceNoData when no file has one, SourceFailed when none was found and a
// fetch failed, SourceOK otherwise (its URL the first provenance found).
func (p *PyPI) Provenance(ctx context.Context, project, version string, files []PyPIFile) (provenance [][]byte, found []PyPIFile, src Source) {
	files = files[:min(len(files), p.provFiles)]
	type result struct {
		body []byte
		src  Source
	}
	results := make([]result, len(files))
	var wg sync.WaitGroup
	for i, fl := range files {
		wg.Go(func() {
			u := joinURL(p.base, "/integrity/"+url.PathEscape(locator.PEP503(project))+"/"+url.PathEscape(version)+"/"+url.PathEscape(fl.Filename)+"/provenance")
			resp, err := p.client.do(ctx, request{service: "PyPI", url: u, accept: "application/vnd.pypi.integrity.v1+json", maxBody: p.maxBody})
			s := fetchSource("PyPI", u, resp, err, p.client.now())
			if s.Outcome == SourceOK {
				var probe struct {
					AttestationBundles []struct{} `json:"attestation_bundles"`
				}
				if err := decodeJSON(resp.body, '{', &probe); err != nil {
					s.Outcome, s.Error = SourceFailed, fmt.Sprintf("PyPI provenance of %s: %v", fl.Filename, err)
				} else if len(probe.AttestationBundles) == 0 {
					s.Outcome, s.Error = SourceNoData, fmt.Sprintf("PyPI provenance of %s lists no attestation bundles", fl.Filename)
				} else {
					results[i].body = resp.body
				}
			}
			results[i].src = s
		})
	}
	wg.Wait()
	src = Source{Outcome: SourceNoData, FetchedAt: p.client.now(), Error: "PyPI: no provenance for the latest release's files"}
	if len(files) == 0 {
		src.Error = "PyPI: the latest release has no files"
		return nil, nil, src
	}
	var failed *Source
	for i, r := range results {
		switch r.src.Outcome {
		case SourceOK:
			if len(provenance) == 0 {
				src = r.src
			}
			provenance = append(provenance, r.body)
			found = append(found, files[i])
		case SourceFailed:
			if failed == nil {
				failed = &results[i].src
			}
		}
	}
	if len(provenance) == 0 && failed != nil {
		return nil, nil, *failed
	}
	return provenance, found, src
}

// mcpNameLine matches the MCP Registry's PyPI ownership marker: "mcp-name:" and a
// server name (namespace/name) in the README, often inside an HTML comment.
var mcpNameLine = regexp.MustCompile(`(?m)mcp-name:[ \t]*([A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*)`)

// readmeMCPName returns the server name of the first "mcp-name: NAME" in a README; ""
// when there is none or it is longer than maxMCPName bytes.
func readmeMCPName(readme string) string {
	m := mcpNameLine.FindStringSubmatch(readme)
	if m == nil || len(m[1]) > maxMCPName {
		return ""
	}
	return m[1]
}

// pypiRepository picks the repository from project_urls: a Source / Repository /
// Code / GitHub label first, then a Homepage (or home_page) on a code forge.
func pypiRepository(urls map[string]string, homePage string) string {
	labels := make([]string, 0, len(urls))
	for k := range urls {
		labels = append(labels, k)
	}
	slices.Sort(labels)
	pick := func(want map[string]bool, forgeOnly bool) string {
		for _, k := range labels {
			if !want[labelKey(k)] {
				continue
			}
			if n := NormalizeRepositoryURL(urls[k]); n != "" && (!forgeOnly || onForge(n)) {
				return n
			}
		}
		return ""
	}
	if n := pick(map[string]bool{"source": true, "sourcecode": true, "repository": true, "code": true,
		"github": true, "gitlab": true, "sourcerepository": true, "repo": true, "git": true}, false); n != "" {
		return n
	}
	if n := pick(map[string]bool{"homepage": true, "home": true}, true); n != "" {
		return n
	}
	if n := NormalizeRepositoryURL(homePage); onForge(n) {
		return n
	}
	return ""
}

// labelKey normalizes a project_urls label (PEP 753): lower case, punctuation and
// whitespace removed.
func labelKey(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// onForge reports whether a normalized URL is on GitHub, GitLab or Bitbucket.
func onForge(u string) bool {
	for _, p := range []string{"https://github.com/", "https://gitlab.com/", "https://bitbucket.org/"} {
		if strings.HasPrefix(u, p) {
			return true
		}
	}
	return false
}

// pypiClassifiers maps license classifiers to SPDX identifiers. "BSD License" does not
// say which BSD license; it maps to BSD-3-Clause, and both BSD-2-Clause and
// BSD-3-Clause are OSI-approved, so the license check is unaffected. Classifiers
// naming a license family (Academic Free License, Artistic License, GPL without a
// version) are not mapped.
var pypiClassifiers = map[string]string{
	"MIT License":                                             "MIT",
	"MIT No Attribution License (MIT-0)":                      "MIT-0",
	"Apache Software License":                                 "Apache-2.0",
	"BSD License":                                             "BSD-3-Clause",
	"ISC License (ISCL)":                                      "ISC",
	"Mozilla Public License 2.0 (MPL 2.0)":                    "MPL-2.0",
	"GNU General Public License v2 (GPLv2)":                   "GPL-2.0-only",
	"GNU General Public License v2 or later (GPLv2+)":         "GPL-2.0-or-later",
	"GNU General Public License v3 (GPLv3)":                   "GPL-3.0-only",
	"GNU General Public License v3 or later (GPLv3+)":         "GPL-3.0-or-later",
	"GNU Lesser General Public License v2 (LGPLv2)":           "LGPL-2.0-only",
	"GNU Lesser General Public License v2 or later (LGPLv2+)": "LGPL-2.0-or-later",
	"GNU Lesser General Public License v3 (LGPLv3)":           "LGPL-3.0-only",
	"GNU Lesser General Public License v3 or later (LGPLv3+)": "LGPL-3.0-or-later",
	"GNU Affero General Public License v3":                    "AGPL-3.0-only",
	"GNU Affero General Public License v3 or later (AGPLv3+)": "AGPL-3.0-or-later",
	"Python Software Foundation License":                      "PSF-2.0",
	"The Unlicense (Unlicense)":                               "Unlicense",
	"Eclipse Public License 2.0 (EPL-2.0)":                    "EPL-2.0",
	"Boost Software License 1.0 (BSL-1.0)":                    "BSL-1.0",
	"zlib/libpng License":                                     "Zlib",
	"Universal Permissive License (UPL)":                      "UPL-1.0",
	"European Union Public Licence 1.2 (EUPL 1.2)":            "EUPL-1.2",
	"CC0 1.0 Universal (CC0 1.0) Public Domain Dedication":    "CC0-1.0",
}

// pypiLicenseNames maps common free-text info.license values to SPDX identifiers.
var pypiLicenseNames = map[string]string{
	"mit license": "MIT", "the mit license": "MIT", "mit": "MIT",
	"apache 2.0": "Apache-2.0", "apache-2": "Apache-2.0", "apache 2": "Apache-2.0",
	"apache license 2.0": "Apache-2.0", "apache license, version 2.0": "Apache-2.0",
	"apache software license": "Apache-2.0", "apache license version 2.0": "Apache-2.0",
	"bsd-3": "BSD-3-Clause", "3-clause bsd": "BSD-3-Clause", "new bsd": "BSD-3-Clause",
	"bsd-2": "BSD-2-Clause", "2-clause bsd": "BSD-2-Clause", "simplified bsd": "BSD-2-Clause",
	"mpl 2.0": "MPL-2.0", "mpl-2": "MPL-2.0", "isc license": "ISC",
	"gplv3": "GPL-3.0-only", "gpl-3": "GPL-3.0-only", "gplv2": "GPL-2.0-only", "gpl-2": "GPL-2.0-only",
}

// pypiLicense returns the project's license as an SPDX expression when it can:
// license_expression (PEP 639), else info.license when it is an SPDX expression, else
// the license classifiers (joined with OR), else info.license mapped from a common
// name or recognized from a full license text, else info.license itself when short.
func pypiLicense(expr, license string, classifiers []string) string {
	if e := strings.TrimSpace(expr); e != "" {
		return clip(e, 200)
	}
	lic := strings.TrimSpace(license)
	short := lic != "" && len(lic) <= 100 && !strings.ContainsAny(lic, "\r\n")
	if short && looksLikeSPDX(lic) {
		return lic
	}
	var ids []string
	for i, c := range classifiers {
		if i == 1000 {
			break
		}
		rest, ok := strings.CutPrefix(c, "License :: ")
		if !ok {
			continue
		}
		rest = strings.TrimPrefix(rest, "OSI Approved :: ")
		if id, ok := pypiClassifiers[rest]; ok && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) > 0 {
		return strings.Join(ids, " OR ")
	}
	if id, ok := pypiLicenseNames[strings.ToLower(lic)]; ok {
		return id
	}
	switch {
	case strings.Contains(lic, "Permission is hereby granted, free of charge"):
		return "MIT"
	case strings.Contains(lic, "Apache License") && strings.Contains(lic, "Version 2.0"):
		return "Apache-2.0"
	case strings.Contains(lic, "Redistribution and use in source and binary forms"):
		if strings.Contains(lic, "Neither the name") {
			return "BSD-3-Clause"
		}
		return "BSD-2-Clause"
	}
	if short {
		return lic
	}
	return ""
}

// looksLikeSPDX reports whether s has the shape of an SPDX license expression:
// identifiers (with a digit or '-', or one of the few bare ones) joined by AND, OR or
// WITH, with balanced parentheses. It does not check that the identifiers exist.
func looksLikeSPDX(s string) bool {
	s = strings.NewReplacer("(", " ( ", ")", " ) ").Replace(s)
	depth, wantID := 0, true
	for _, tok := range strings.Fields(s) {
		switch {
		case tok == "(":
			if !wantID {
				return false
			}
			depth++
		case tok == ")":
			if wantID || depth == 0 {
				return false
			}
			depth--
		case tok == "AND" || tok == "OR" || tok == "WITH":
			if wantID {
				return false
			}
			wantID = true
		default:
			if !wantID || !spdxID(tok) {
				return false
			}
			wantID = false
		}
	}
	return depth == 0 && !wantID
}

// spdxBare are SPDX identifiers without a digit or a hyphen.
var spdxBare = map[string]bool{"MIT": true, "ISC": true, "Unlicense": true, "Zlib": true, "WTFPL": true,
	"PostgreSQL": true, "NCSA": true, "Beerware": true, "curl": true, "JSON": true, "Ruby": true, "X11": true}

func spdxID(tok string) bool {
	tok = strings.TrimSuffix(tok, "+")
	if tok == "" {
		return false
	}
	digitOrDash := false
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		switch {
		case '0' <= c && c <= '9' || c == '-':
			digitOrDash = true
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '.':
		default:
			return false
		}
	}
	return digitOrDash || spdxBare[tok]
}
