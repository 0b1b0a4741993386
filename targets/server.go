package targets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Server is one server to list: what one server.json document (or one registry list
// item) says, or a one-part server made of a bare reference line. It is what
// store.ServerUpsert is made of; package targets does not import the store, so the kinds
// below are the store's values, spelled here.
type Server struct {
	// Kind and Locator are the primary part's (Parts[0]): the part the entry's rounds
	// read. See Parts for the rule.
	Kind    string
	Locator string
	// Name is a display name: the document's title, else the last segment of its name,
	// else the primary part's own name (host and path, package name, owner/repo).
	Name string
	// SlugBase is Slug(Kind, Locator): ^[a-z0-9][a-z0-9-]{0,79}$.
	SlugBase string
	// Source is "import" for a text list and "registry" for server.json documents.
	Source string
	// Line is the 1-based line the server was read from; for a server.json document,
	// the line where the document starts (0 from ParseServerJSON).
	Line int

	// ServerName is the document's reverse-DNS name ("" for a bare reference, and for
	// a document without one). Title, Description, Website and Version are the
	// document's title, description, websiteUrl and version as listed (Description
	// cleaned as Name is, at most 300 characters; Website only when it is an http(s)
	// URL without credentials).
	ServerName  string
	Title       string
	Description string
	Website     string
	Version     string
	// Document is the server.json as read, compact (no insignificant white space);
	// icons, headers, arguments and the publisher's _meta are kept as they were. It is
	// nil for a bare reference.
	Document []byte
	// RegistryMeta is the registry's own metadata of a list item (the
	// "io.modelcontextprotocol.registry/official" member of its _meta) as read; nil
	// when there is none. Status is its status ("" when none or not one of active,
	// deprecated, deleted); Latest its isLatest.
	RegistryMeta []byte
	Status       string
	Latest       bool

	// Parts are the server's parts, each once: its remotes (Transport set), its npm,
	// PyPI, OCI, NuGet and MCP bundle packages (Version as listed), and its GitHub
	// repository, in the document's order, with the primary part moved first. The
	// primary part is the first streamable-http remote, else the first remote, else the
	// first npm or PyPI package, else the repository: it is always of a checked kind
	// (remote, npm, pypi, github). Locators of the checked kinds are canonical, as
	// Locator; an OCI image, NuGet package or bundle is named by its identifier as
	// listed (a bundle by its download URL).
	Parts []Part
}

// Part is one part of a Server.
type Part struct {
	// Kind is "remote", "npm", "pypi", "github" (checked), or "oci", "nuget", "mcpb"
	// (listed and shown, not checked).
	Kind    string
	Locator string
	// Transport is a remote's type as listed ("streamable-http", "sse"; "" when not
	// listed); Version a package's listed version ("" when none).
	Transport string
	Version   string
}

// The part kinds that are listed but not checked (store.PartOCI, store.PartNuGet,
// store.PartMCPB).
const (
	kindOCI   = "oci"
	kindNuGet = "nuget"
	kindMCPB  = "mcpb"
)

// checked reports whether a part kind is one Probity checks (and an entry may have as
// its kind).
func checked(kind string) bool {
	return kind == kindRemote || kind == kindNPM || kind == kindPyPI || kind == kindGitHub
}

// Bounds of one document.
const (
	// MaxParts is the most remotes and packages one document may list.
	MaxParts = 64
	// maxDescriptionRunes bounds a description.
	maxDescriptionRunes = 300
	// maxIdentifier bounds an OCI, NuGet or bundle identifier (the store keeps
	// locators of up to 2,000 bytes).
	maxIdentifier = 2000
)

// The official registry's metadata member of a list item's _meta.
const officialMetaKey = "io.modelcontextprotocol.registry/official"

// PartError is a part of a document that could not be read; the rest of the document
// still is.
type PartError struct {
	// Text is the offending value, quoted as LineError.Text is (credentials redacted).
	Text string
	Err  error
}

// Error returns "TEXT: reason".
func (e *PartError) Error() string { return fmt.Sprintf("%s: %v", e.Text, e.Err) }

// Unwrap returns e.Err.
func (e *PartError) Unwrap() error { return e.Err }

// partProblem is a part that could not be read, before it is quoted.
type partProblem struct {
	text string
	err  error
}

// ParseServerJSON reads one server.json document (the "server" object of a registry
// list item, not the item) into a Server with Source "registry", by the same rules as
// Parse. Parts it cannot read (a templated remote URL, a package on another registry,
// …) are left out and returned as PartErrors. The error is non-nil when raw is not a
// server.json document, is larger than MaxDocumentBytes, or has no part Probity can
// check; then the Server is zero.
func ParseServerJSON(raw []byte) (Server, []*PartError, error) {
	if len(raw) > MaxDocumentBytes {
		return Server{}, nil, errDocTooLarge
	}
	s, probs, err := readServer(raw)
	var perrs []*PartError
	for _, p := range probs {
		perrs = append(perrs, &PartError{Text: quoteText(p.text), Err: p.err})
	}
	if err != nil {
		return Server{}, perrs, err
	}
	s.finish()
	return s, perrs, nil
}

// finish sets what a Server derives from its parts: Kind, Locator and SlugBase.
func (s *Server) finish() {
	s.Kind, s.Locator = s.Parts[0].Kind, s.Parts[0].Locator
	s.Name = cleanName(s.Name)
	s.SlugBase = Slug(s.Kind, s.Locator)
}

// readServer reads one server.json document. The primary part is first; Line, Source
// is "registry"; finish is left to the caller.
func readServer(raw []byte) (Server, []partProblem, error) {
	var d serverJSON
	if err := unmarshalObject(raw, &d); err != nil {
		return Server{}, nil, err
	}
	if len(d.Remotes)+len(d.Packages) > MaxParts {
		return Server{}, nil, fmt.Errorf("%w: more than %d remotes and packages", errNotServerJSON, MaxParts)
	}
	var doc bytes.Buffer
	if err := json.Compact(&doc, raw); err != nil {
		return Server{}, nil, fmt.Errorf("%w: %v", errInvalidJSON, err)
	}
	s := Server{
		Source:      sourceRegistry,
		ServerName:  d.Name,
		Title:       cleanName(d.Title),
		Description: cleanText(d.Description, maxDescriptionRunes),
		Version:     cleanText(d.Version, maxNameRunes),
		Document:    doc.Bytes(),
	}
	if !utf8.ValidString(d.Name) || len(d.Name) > 200 || strings.IndexFunc(d.Name, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return Server{}, nil, fmt.Errorf("%w: the name is not a registry server name", errNotServerJSON)
	}
	if d.WebsiteURL != "" {
		if u, err := parseURL(d.WebsiteURL); err == nil && credentialParam(u.RawQuery) == "" {
			s.Website = u.String()
		}
	}
	var probs []partProblem
	seen := map[targetKey]bool{}
	add := func(p Part) {
		k := targetKey{p.Kind, p.Locator}
		if !seen[k] {
			seen[k] = true
			s.Parts = append(s.Parts, p)
		}
	}
	found := false
	for _, rm := range d.Remotes {
		found = true // a bad remote is reported on its own
		r, err := remoteRef(rm.URL)
		if err != nil {
			probs = append(probs, partProblem{rm.URL, fmt.Errorf("remote: %w", err)})
			continue
		}
		add(Part{Kind: r.kind, Locator: r.locator, Transport: cleanText(rm.Type, 32)})
	}
	for _, pk := range d.Packages {
		var r ref
		var err error
		switch t := strings.ToLower(pk.RegistryType); t {
		case "npm":
			found = true
			r, err = registryPackage(pk, "https://registry.npmjs.org", npmRef)
		case "pypi":
			found = true
			r, err = registryPackage(pk, "https://pypi.org", pypiRef)
		case kindOCI, kindNuGet, kindMCPB:
			id, err := identifier(pk.Identifier)
			if err != nil {
				probs = append(probs, partProblem{pk.RegistryType + ":" + pk.Identifier, fmt.Errorf("package: %w", err)})
				continue
			}
			add(Part{Kind: t, Locator: id, Version: cleanText(pk.Version, maxNameRunes)})
			continue
		default:
			continue // another registry type: not known to Probity
		}
		if err != nil {
			probs = append(probs, partProblem{pk.RegistryType + ":" + pk.Identifier, fmt.Errorf("package: %w", err)})
			continue
		}
		add(Part{Kind: r.kind, Locator: r.locator, Version: cleanText(pk.Version, maxNameRunes)})
	}
	if repo := d.Repository; repo != nil && repo.URL != "" && strings.EqualFold(repo.Source, "github") {
		found = true
		r, err := repositoryRef(repo.URL)
		if err != nil {
			probs = append(probs, partProblem{repo.URL, fmt.Errorf("repository: %w", err)})
		} else {
			add(Part{Kind: r.kind, Locator: r.locator})
		}
	}
	if !found {
		return Server{}, probs, errNothing
	}
	if !orderParts(s.Parts) {
		if len(probs) > 0 {
			return Server{}, probs, fmt.Errorf("%w that could be read", errNothing)
		}
		return Server{}, probs, errNothing
	}
	s.Name = s.Title
	if s.Name == "" {
		s.Name = cleanName(d.Name[strings.LastIndexByte(d.Name, '/')+1:])
	}
	if s.Name == "" {
		// The primary part's own name; parts without one (OCI, …) never come first.
		for _, p := range s.Parts {
			if checked(p.Kind) {
				if r, err := parseRef(p.Locator); err == nil {
					s.Name = r.name
				}
				break
			}
		}
	}
	return s, probs, nil
}

// orderParts moves the primary part first (see Server.Parts), keeping the others in
// order. It reports false when no part is of a checked kind.
func orderParts(parts []Part) bool {
	best, rank := -1, 4
	for i, p := range parts {
		r := 4
		switch {
		case p.Kind == kindRemote && strings.EqualFold(p.Transport, "streamable-http"):
			r = 0
		case p.Kind == kindRemote:
			r = 1
		case p.Kind == kindNPM || p.Kind == kindPyPI:
			r = 2
		case p.Kind == kindGitHub:
			r = 3
		}
		if r < rank {
			best, rank = i, r
		}
	}
	if best < 0 {
		return false
	}
	p := parts[best]
	copy(parts[1:best+1], parts[:best])
	parts[0] = p
	return true
}

// identifier checks the identifier of a part that is listed, not checked: not empty,
// at most maxIdentifier bytes, valid UTF-8 without white space or control characters,
// and, when it is a URL, without credentials.
func identifier(s string) (string, error) {
	switch {
	case s == "":
		return "", fmt.Errorf("%w: no identifier", errBadName)
	case len(s) > maxIdentifier:
		return "", fmt.Errorf("%w: the identifier is longer than %d bytes", errBadName, maxIdentifier)
	case !utf8.ValidString(s), strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		return "", fmt.Errorf("%w: the identifier holds white space, control characters or invalid UTF-8", errBadName)
	}
	if hasPrefixFold(s, "https://") || hasPrefixFold(s, "http://") {
		u, err := parseURL(s)
		if err != nil {
			return "", err
		}
		if credentialParam(u.RawQuery) != "" {
			return "", fmt.Errorf("%w in a query parameter", errCredential)
		}
	}
	return s, nil
}

// cleanText makes a listed text fit for display as cleanName does, at most max runes.
func cleanText(s string, max int) string {
	s = strings.ToValidUTF8(s[:min(len(s), 4*max)], "\uFFFD")
	s = strings.Map(func(r rune) rune {
		switch {
		case unicode.Is(unicode.Bidi_Control, r):
			return -1
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029':
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	n := 0
	for i := range s {
		if n == max {
			return strings.TrimSpace(s[:i])
		}
		n++
	}
	return s
}

// officialMeta reads the registry's metadata of a list item from its _meta: the
// official member as read, its status (when known) and isLatest.
func officialMeta(meta json.RawMessage) (raw []byte, status string, latest bool) {
	if len(meta) == 0 || meta[0] != '{' {
		return nil, "", false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(meta, &m) != nil {
		return nil, "", false
	}
	off := m[officialMetaKey]
	if len(off) == 0 || off[0] != '{' {
		return nil, "", false
	}
	var o struct {
		Status   string `json:"status"`
		IsLatest bool   `json:"isLatest"`
	}
	if json.Unmarshal(off, &o) != nil {
		return nil, "", false
	}
	switch o.Status {
	case "active", "deprecated", "deleted":
		status = o.Status
	}
	var b bytes.Buffer
	if json.Compact(&b, off) != nil {
		return nil, "", false
	}
	return b.Bytes(), status, o.IsLatest
}

// errAllPartsTaken: every checked part of a document belongs to a server read before.
var errAllPartsTaken = errors.New("every part Probity checks is already part of a server read before")
