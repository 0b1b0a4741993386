// Package targets parses the target lists `probity targets import` reads and turns them
// into servers to list (issue 14: an entry is a server): a server.json document is one
// server with its parts, remote MCP endpoints, npm and PyPI packages, its GitHub
// repository, and its OCI, NuGet and MCP bundle packages, which are listed but not
// checked; a bare reference is a one-part server. It does no I/O besides reading the
// io.Reader it is given and never touches the network. ParseServerJSON reads one
// document by the same rules; the registry sync uses it, so the rule that turns a
// server.json into parts has one owner.
//
// # Input
//
// Parse detects the format from the first byte that is not white space (after an
// optional UTF-8 byte order mark): '{' or '[' means JSON, anything else a text list.
//
// A text list holds one reference per line. Surrounding white space is trimmed; blank
// lines, lines starting with '#' and the rest of a line after white space and '#' are
// comments. A reference is one of
//
//	https://mcp.example.com/mcp                 remote endpoint (http:// too)
//	https://github.com/Owner/Repo               GitHub repository; also with .git, a
//	github:Owner/Repo                           trailing / or /tree/…; pkg:github/o/r
//	npm:@scope/name  npm:name@1.2.3             npm package; also pkg:npm/%40scope/name,
//	https://www.npmjs.com/package/@scope/name   pkg:npm/name@1.2.3
//	pypi:name  pip:name==1.2                    PyPI project; also pkg:pypi/name@1.2
//	https://pypi.org/project/name/
//
// A version is dropped: Probity watches a package, not one of its releases. Every
// github.com URL names a repository, never a remote endpoint, and so do npmjs.com and
// pypi.org URLs for packages.
//
// JSON input is one or more server.json documents of the official MCP registry (schema
// https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json): a
// single document, an array of them, a registry API list response
// ({"servers":[{"server":{…},"_meta":{…}}, …], "metadata":{…}}, whose items may also be
// documents themselves), or JSON Lines, one document or list response per line. A
// document is one Server: its name, title, description, websiteUrl and version, the
// document itself (icons and all), and as parts a remote for every remotes[].url, a
// package for every npm and pypi entry of packages[] (published on the public
// registry), the GitHub repository from repository.url when repository.source is
// "github", and the oci, nuget and mcpb packages by their identifiers; other package
// types are skipped. The primary part (Server.Parts) is of a checked kind; a document
// without one is a LineError. Headers and variables of remotes are ignored: Probity
// never sends credentials. The Line of a server is the line where its document starts.
// A list item's registry metadata (status, isLatest) is kept, and of a name listed more
// than once the isLatest version is the one read.
//
// # Output
//
// Locators of the checked kinds are canonical (see store.Entry.Locator): locator.NormalizeURL of a remote URL
// whose host name is in its ASCII (punycode) form, pkg:npm/name or pkg:npm/%40scope/name,
// pkg:pypi/name with the PEP 503 normalized name (locator.PEP503), and https://github.com/owner/repo in
// lower case. A part belongs to one server: the first one read that lists it. Slug gives
// each server a slug base derived from its primary part's locator alone.
//
// # Refused
//
// A line or document Parse cannot use becomes a LineError and Parse goes on with the
// next one. Besides malformed references this refuses URLs that carry credentials (user
// information, or a query parameter named like a credential: key, api_key, token,
// access_token, secret, password, auth, sig and the like), URLs with a fragment, and
// remote URLs that are templates ({tenant}.example.com). The text of such a LineError
// has the credential replaced by REDACTED.
//
// # Bounds
//
// Parse reads at most MaxInputBytes. A text line may hold MaxLineBytes; a JSON document
// MaxDocumentBytes, and the input at most MaxDocuments JSON values; a document lists at
// most MaxParts remotes and packages. Parse returns at most MaxServers servers and
// MaxLineErrors line errors, then one that counts the errors
// left out. A JSON syntax error ends an array or list response, whose rest cannot be
// read reliably; in JSON Lines, Parse goes on at the next line.
package targets

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
)

// Bounds on what Parse reads and returns.
const (
	// MaxInputBytes is the largest input Parse reads.
	MaxInputBytes = 64 << 20
	// MaxLineBytes is the longest line of a text list, not counting its line ending.
	MaxLineBytes = 64 << 10
	// MaxDocumentBytes is the largest JSON document (one server.json, one item of an
	// array or list response, one line of JSON Lines), with the white space before it,
	// Parse reads.
	MaxDocumentBytes = 1 << 20
	// MaxDocuments is the most JSON values (documents, list items, array elements) one
	// input may hold; Parse refuses a longer one. It bounds the work on an input that
	// is not a server.json list: 64 MiB of "1," is 32 million array elements.
	MaxDocuments = 100_000
	// MaxServers is the most servers one input may yield; Parse refuses a longer list.
	MaxServers = 100_000
	// MaxLineErrors is the most line errors Parse returns one by one; a last one counts
	// those left out.
	MaxLineErrors = 1000
)

// The kinds of parts Probity checks (the values of store.Kind*, which this package does
// not import to stay free of the store's drivers).
const (
	kindRemote = "remote"
	kindNPM    = "npm"
	kindPyPI   = "pypi"
	kindGitHub = "github"
)

// The sources of targets.
const (
	sourceImport   = "import"
	sourceRegistry = "registry"
)

// LineError is one input line or JSON document that could not be read.
type LineError struct {
	// Line is the 1-based line of the bad reference or where the bad document starts.
	Line int
	// Text is the offending input as a quoted Go string literal with only ASCII
	// characters (strconv.QuoteToASCII), cut to 120 characters (then followed by
	// "..."), with credentials replaced by REDACTED. It is empty for a summary error.
	Text string
	// Err says what is wrong.
	Err error
}

// Error returns "line N: reason".
func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// Unwrap returns e.Err.
func (e *LineError) Unwrap() error { return e.Err }

// Reasons a line or document is refused; the tests branch on them.
var (
	errNotReference  = errors.New("not a URL or package reference; write npm:NAME, pypi:NAME, github:OWNER/REPO or an https:// URL")
	errCredential    = errors.New("the URL carries a credential")
	errFragment      = errors.New("the URL has a fragment (#…); an endpoint URL has none")
	errTemplated     = errors.New("templated URL: a URL with {variables} cannot be probed; import it with the variables filled in")
	errLineTooLong   = fmt.Errorf("the line is longer than %d bytes", MaxLineBytes)
	errInvalidJSON   = errors.New("invalid JSON")
	errNotServerJSON = errors.New("not a server.json document")
	errNothing       = errors.New("nothing to import: no remote URL, npm or PyPI package, or GitHub repository")
	errBadName       = errors.New("invalid package name")
	errBadURL        = errors.New("invalid URL")
	errBadRepo       = errors.New("invalid GitHub repository")
)

// Errors that end Parse.
var (
	errTooLarge         = fmt.Errorf("the input is larger than %d MiB", MaxInputBytes>>20)
	errTooMany          = fmt.Errorf("the input lists more than %d servers; split it", MaxServers)
	errTooManyDocuments = fmt.Errorf("the input holds more than %d JSON documents; split it", MaxDocuments)
)

// limits are the bounds Parse applies; tests lower them.
type limits struct {
	input     int64
	line      int
	document  int
	documents int
	servers   int
	errors    int
}

var defaultLimits = limits{input: MaxInputBytes, line: MaxLineBytes, document: MaxDocumentBytes, documents: MaxDocuments, servers: MaxServers, errors: MaxLineErrors}

// Parse reads an import file and returns every server it could read and an error for
// every line or document it could not; it never stops at a bad line. A server.json
// document is one server with all its parts; a bare reference is a one-part server.
// Duplicates are returned once: a server name read again (the first one read wins,
// unless a later one is the registry's isLatest version and the first is not), and a
// bare reference to a part read before. A part of a document that an earlier server
// of the input already has is left out of the later one. The error is non-nil only
// when r fails, the input is longer than MaxInputBytes, holds more than MaxDocuments
// JSON documents or yields more than MaxServers servers; then the other results are
// nil: nothing of such an input is imported.
func Parse(r io.Reader) ([]Server, []*LineError, error) {
	return parse(r, defaultLimits)
}

func parse(r io.Reader, lim limits) ([]Server, []*LineError, error) {
	p := &parser{lim: lim, owner: make(map[targetKey]int), named: make(map[string]int)}
	if err := p.read(r); err != nil {
		return nil, nil, err
	}
	if p.dropped > 0 {
		p.errs = append(p.errs, &LineError{Line: p.droppedLine, Err: fmt.Errorf("%d more lines or documents could not be read; only the first %d are listed", p.dropped, lim.errors)})
	}
	servers := p.servers[:0]
	for _, s := range p.servers {
		if s.Parts != nil {
			servers = append(servers, s)
		}
	}
	return servers, p.errs, nil
}

type targetKey struct{ kind, locator string }

// parser collects what one Parse call reads.
type parser struct {
	lim limits
	// servers are the servers read; one whose Parts is nil was replaced by a later
	// version and is left out of the result.
	servers []Server
	// owner maps every part read to the index of its server; named maps a server name
	// to its server's index.
	owner map[targetKey]int
	named map[string]int
	errs  []*LineError
	// dropped counts line errors beyond lim.errors; droppedLine is the first one's line.
	dropped, droppedLine int
	// documents counts the JSON values read.
	documents int
}

// countDocument counts one more JSON value and fails when there are too many.
func (p *parser) countDocument() error {
	if p.documents++; p.documents > p.lim.documents {
		return errTooManyDocuments
	}
	return nil
}

// addRef records the one-part server of a bare reference unless its part was read
// before.
func (p *parser) addRef(r ref, line int) error {
	k := targetKey{r.kind, r.locator}
	if _, ok := p.owner[k]; ok {
		return nil
	}
	s := Server{Name: r.name, Source: sourceImport, Line: line, Parts: []Part{{Kind: r.kind, Locator: r.locator}}}
	s.finish()
	return p.append(s)
}

// append adds s as a new server and makes it the owner of its parts.
func (p *parser) append(s Server) error {
	if len(p.servers) >= p.lim.servers {
		return errTooMany
	}
	i := len(p.servers)
	p.servers = append(p.servers, s)
	for _, pt := range s.Parts {
		p.owner[targetKey{pt.Kind, pt.Locator}] = i
	}
	if s.ServerName != "" {
		p.named[s.ServerName] = i
	}
	return nil
}

// addDocument records the server of a document read at line (text is its beginning, for
// a LineError): a server name read before is kept unless s is the registry's latest
// version and the one kept is not; parts that earlier servers have are left out.
func (p *parser) addDocument(s Server, line int, text string) error {
	s.Line = line
	replace := -1
	if i, ok := p.named[s.ServerName]; ok && s.ServerName != "" {
		if !s.Latest || p.servers[i].Latest {
			return nil
		}
		replace = i
		for _, pt := range p.servers[i].Parts {
			delete(p.owner, targetKey{pt.Kind, pt.Locator})
		}
	}
	parts := s.Parts[:0:0]
	for _, pt := range s.Parts {
		if j, taken := p.owner[targetKey{pt.Kind, pt.Locator}]; !taken || j == replace {
			parts = append(parts, pt)
		}
	}
	s.Parts = parts
	if !orderParts(s.Parts) {
		p.fail(line, text, errAllPartsTaken)
		if replace >= 0 {
			// The version kept stays as it was: give its parts back.
			for _, pt := range p.servers[replace].Parts {
				p.owner[targetKey{pt.Kind, pt.Locator}] = replace
			}
		}
		return nil
	}
	s.finish()
	if replace >= 0 {
		// The version read before goes; the latest one takes its place at the end, so
		// servers stay in the order of their lines.
		p.servers[replace].Parts = nil
	}
	return p.append(s)
}

// fail records a line error; text is the raw offending input.
func (p *parser) fail(line int, text string, err error) {
	if len(p.errs) >= p.lim.errors {
		if p.dropped == 0 {
			p.droppedLine = line
		}
		p.dropped++
		return
	}
	p.errs = append(p.errs, &LineError{Line: line, Text: quoteText(text), Err: err})
}

// maxTextRunes is how much of the offending input a LineError quotes.
const maxTextRunes = 120

// quoteText returns s with credentials redacted, cut to maxTextRunes runes, quoted.
func quoteText(s string) string {
	// Redact before cutting, so that a credential is recognized by its whole parameter
	// name; 1 KiB holds far more than the 120 runes shown.
	s = redact(s[:min(len(s), 1024)])
	cut := false
	n := 0
	for i := range s {
		if n == maxTextRunes {
			s, cut = s[:i], true
			break
		}
		n++
	}
	q := strconv.QuoteToASCII(s)
	if cut {
		q += "..."
	}
	return q
}

var (
	utf8BOM   = []byte{0xEF, 0xBB, 0xBF}
	utf16BOMs = [][]byte{{0xFE, 0xFF}, {0xFF, 0xFE}}
)

// read detects the format and reads all of r.
func (p *parser) read(r io.Reader) error {
	br := bufio.NewReaderSize(&capReader{r: r, left: p.lim.input}, p.lim.line+2)
	if b, err := br.Peek(len(utf8BOM)); bytes.Equal(b, utf8BOM) {
		br.Discard(len(utf8BOM))
	} else if err != nil && err != io.EOF {
		return err
	} else {
		for _, bom := range utf16BOMs {
			if bytes.HasPrefix(b, bom) {
				p.fail(1, string(b), errors.New("the file is UTF-16 encoded; save it as UTF-8"))
				return nil
			}
		}
	}
	// Skip leading white space, counting lines, to find the first significant byte.
	line := 1
	for {
		c, err := br.ReadByte()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if c == '\n' {
			line++
		}
		if !isJSONSpace(c) {
			br.UnreadByte()
			if c == '{' || c == '[' {
				return p.readJSON(&tracker{r: br, line: line, limit: int64(p.lim.document) + readChunk})
			}
			return p.readLines(br, line)
		}
	}
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// capReader fails with errTooLarge once more than left bytes have been read.
type capReader struct {
	r    io.Reader
	left int64
}

func (c *capReader) Read(b []byte) (int, error) {
	if c.left < 0 {
		return 0, errTooLarge
	}
	if int64(len(b)) > c.left+1 {
		b = b[:c.left+1]
	}
	n, err := c.r.Read(b)
	c.left -= int64(n)
	if c.left < 0 {
		return 0, errTooLarge
	}
	return n, err
}

// readLines reads a text list whose first line is line.
func (p *parser) readLines(br *bufio.Reader, line int) error {
	for ; ; line++ {
		b, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			text := string(b[:min(len(b), 1024)])
			for err == bufio.ErrBufferFull {
				_, err = br.ReadSlice('\n')
			}
			if err != nil && err != io.EOF {
				return err
			}
			p.fail(line, text, errLineTooLong)
		} else {
			if err != nil && err != io.EOF {
				return err
			}
			b = bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))
			if len(b) > p.lim.line {
				p.fail(line, string(b[:min(len(b), 1024)]), errLineTooLong)
			} else if err := p.textLine(line, b); err != nil {
				return err
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// textLine reads one line of a text list.
func (p *parser) textLine(line int, b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] == '#' {
		return nil
	}
	// A comment after the reference: white space, then '#'. A URL fragment never follows
	// white space.
	if i := bytes.IndexFunc(b, unicode.IsSpace); i >= 0 {
		rest := bytes.TrimLeftFunc(b[i:], unicode.IsSpace)
		if len(rest) == 0 || rest[0] == '#' {
			b = b[:i]
		}
	}
	s := string(b)
	if b[0] == '{' || b[0] == '[' {
		p.fail(line, s, errors.New("this looks like JSON, but the input is read as a text list: JSON input must start with '{' or '['"))
		return nil
	}
	if strings.IndexFunc(s, unicode.IsSpace) >= 0 {
		p.fail(line, s, errors.New("a line holds one reference, with no white space in it"))
		return nil
	}
	ref, err := parseRef(s)
	if err != nil {
		p.fail(line, s, err)
		return nil
	}
	return p.addRef(ref, line)
}

// maxNameRunes bounds a display name.
const maxNameRunes = 100

// cleanName makes s fit for display: valid UTF-8, no control or bidirectional
// formatting characters, white space collapsed, at most maxNameRunes runes.
func cleanName(s string) string { return cleanText(s, maxNameRunes) }
