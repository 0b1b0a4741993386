package targets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The parts of a server.json document (and of a registry API list item) Parse reads.
type serverJSON struct {
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Version     string          `json:"version"`
	WebsiteURL  string          `json:"websiteUrl"`
	Remotes     []remoteJSON    `json:"remotes"`
	Packages    []packageJSON   `json:"packages"`
	Repository  *repositoryJSON `json:"repository"`
	// Server and Meta are the document and its _meta when this is an item of a list
	// response.
	Server json.RawMessage `json:"server"`
	Meta   json.RawMessage `json:"_meta"`
}

type remoteJSON struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

type packageJSON struct {
	RegistryType    string `json:"registryType"`
	RegistryBaseURL string `json:"registryBaseUrl"`
	Identifier      string `json:"identifier"`
	Version         string `json:"version"`
}

type repositoryJSON struct {
	URL    string `json:"url"`
	Source string `json:"source"`
}

// readChunk bounds one read from the input, and so how far the tracker reads ahead of
// the decoder.
const readChunk = 64 << 10

// tracker is the reader the JSON decoder reads from. It keeps the input from the last
// mark on, so that decoder offsets become line numbers, the text of a bad document can
// be quoted and, in JSON Lines, decoding can restart at the next line after a syntax
// error. Offsets are tracker offsets: 0 is where JSON starts (after the white space
// read before).
type tracker struct {
	r     io.Reader
	buf   []byte // the input from base on, as far as it was read from r
	base  int64
	pos   int64 // the offset Read continues at; base <= pos <= base+len(buf)
	line  int   // the line of offset base
	limit int64 // how far past base Read goes before failing with errDocTooLarge
	err   error // r's error, returned once buf is used up
}

// readError marks an error of the underlying reader: it ends Parse.
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

var errNotObject = fmt.Errorf("%w: not a JSON object", errNotServerJSON)

// errDocTooLarge counts the white space before a document too: json.Decoder rescans a
// run of white space each time it reads more of it, so a long run must end early.
var errDocTooLarge = fmt.Errorf("a JSON document, with the white space before it, is larger than %d KiB", MaxDocumentBytes>>10)

func (t *tracker) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if t.pos-t.base >= t.limit {
		return 0, errDocTooLarge
	}
	if i := int(t.pos - t.base); i < len(t.buf) {
		n := copy(p, t.buf[i:])
		t.pos += int64(n)
		return n, nil
	}
	if t.err != nil {
		return 0, t.err
	}
	n, err := t.fill(min(len(p), readChunk))
	copy(p, t.buf[len(t.buf)-n:])
	t.pos += int64(n)
	if n > 0 {
		return n, nil
	}
	return 0, err
}

// fill reads up to n more bytes from r into buf.
func (t *tracker) fill(n int) (int, error) {
	if t.err != nil {
		return 0, t.err
	}
	l := len(t.buf)
	if cap(t.buf)-l < n {
		nb := make([]byte, l, max(2*cap(t.buf), l+n))
		copy(nb, t.buf)
		t.buf = nb
	}
	m, err := t.r.Read(t.buf[l : l+n])
	t.buf = t.buf[:l+m]
	if err != nil {
		if err != io.EOF {
			err = &readError{err}
		}
		t.err = err
	}
	if m > 0 {
		return m, nil
	}
	return 0, t.err
}

// at clamps off into the bytes the tracker holds and returns its index in buf.
func (t *tracker) at(off int64) int {
	return int(min(max(off-t.base, 0), int64(len(t.buf))))
}

// lineAt returns the line of offset off.
func (t *tracker) lineAt(off int64) int {
	return t.line + bytes.Count(t.buf[:t.at(off)], []byte{'\n'})
}

// mark forgets the input before off.
func (t *tracker) mark(off int64) {
	i := t.at(off)
	t.line += bytes.Count(t.buf[:i], []byte{'\n'})
	t.buf = t.buf[i:]
	t.base += int64(i)
	t.pos = max(t.pos, t.base)
}

// skipSpace returns the offset of the first byte at or after off that is not JSON
// white space, within what has been read.
func (t *tracker) skipSpace(off int64) int64 {
	i := t.at(off)
	for i < len(t.buf) && isJSONSpace(t.buf[i]) {
		i++
	}
	return t.base + int64(i)
}

// text returns the input from off to the end of its line, at most 1 KiB of it, for a
// LineError.
func (t *tracker) text(off int64) string {
	b := t.buf[t.at(off):]
	b = b[:min(len(b), 1024)]
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	return string(bytes.TrimRight(b, " \t\r"))
}

// errorAt returns the offset of the first syntax error in the value starting at from
// (the offsets of json.SyntaxError are not stream offsets once Token has been used),
// or of the value's first byte when the value itself is sound and the error is where it
// stands.
func (t *tracker) errorAt(from int64) int64 {
	i := t.at(from)
	var raw json.RawMessage
	var se *json.SyntaxError
	if err := json.NewDecoder(bytes.NewReader(t.buf[i:])).Decode(&raw); errors.As(err, &se) {
		return t.base + int64(i) + se.Offset - 1
	}
	return t.skipSpace(from)
}

// lastByte returns the offset of the last byte read that is not white space.
func (t *tracker) lastByte() int64 {
	b := bytes.TrimRight(t.buf, " \t\r\n")
	return t.base + int64(max(len(b)-1, 0))
}

// slice returns the input from start to end, at most 1 KiB of it, for a LineError.
func (t *tracker) slice(start, end int64) string {
	i, k := t.at(start), t.at(end)
	return string(t.buf[i:min(k, i+1024)])
}

// lineStart returns the offset where the line holding off starts, or base.
func (t *tracker) lineStart(off int64) int64 {
	i := t.at(off)
	return t.base + int64(bytes.LastIndexByte(t.buf[:i], '\n')+1)
}

// nextLine moves past the end of the line holding off: marks and rewinds the tracker
// to the start of the next line. It reports false at the end of the input.
func (t *tracker) nextLine(off int64) (bool, error) {
	t.mark(off)
	for {
		if i := bytes.IndexByte(t.buf, '\n'); i >= 0 {
			t.mark(t.base + int64(i) + 1)
			t.pos = t.base
			return true, nil
		}
		t.mark(t.base + int64(len(t.buf)))
		if _, err := t.fill(readChunk); err == io.EOF {
			return false, nil
		} else if err != nil {
			return false, err
		}
	}
}

// jsonReader reads a stream of top-level JSON values through one decoder; after a
// syntax error in JSON Lines it starts a new decoder at the next line.
type jsonReader struct {
	p   *parser
	t   *tracker
	dec *json.Decoder
	// origin is the tracker offset of the decoder's offset 0.
	origin int64
}

// offset returns the tracker offset of the decoder's position.
func (j *jsonReader) offset() int64 { return j.origin + j.dec.InputOffset() }

// readJSON reads JSON input: a stream of top-level values, each a server.json document,
// a list response or an array of documents.
func (p *parser) readJSON(t *tracker) error {
	j := &jsonReader{p: p, t: t, dec: json.NewDecoder(t), origin: t.pos}
	// jsonLines says whether the first value was on one line: then a syntax error in a
	// later one skips to the next line instead of ending the input.
	first, jsonLines := true, false
	for {
		prevEnd := j.offset()
		tok, err := j.dec.Token()
		start := t.skipSpace(prevEnd)
		if err == io.EOF {
			return nil
		}
		if err := p.countDocument(); err != nil {
			return err
		}
		line := t.lineAt(start)
		if err != nil {
			err = j.decodeError(err, start, false)
		} else {
			switch tok {
			case json.Delim('['):
				err = j.array()
			case json.Delim('{'):
				err = j.object(start, line)
			default:
				p.fail(line, t.slice(start, j.offset()), fmt.Errorf("%w: a JSON %s, not an object", errNotServerJSON, jsonKind(tok)))
			}
		}
		if err != nil {
			var ce *contentError
			if !errors.As(err, &ce) {
				return err
			}
			errLine := t.lineAt(ce.pos)
			if ce.inList || errors.Is(ce.err, errDocTooLarge) || !(jsonLines || errLine == line) {
				p.fail(errLine, t.text(t.lineStart(ce.pos)), fmt.Errorf("%w; nothing after it was read", ce.err))
				return nil
			}
			p.fail(line, t.text(start), ce.err)
			more, err := t.nextLine(start)
			if err != nil || !more {
				return err
			}
			j.dec, j.origin = json.NewDecoder(t), t.pos
			continue
		}
		end := j.offset()
		if first {
			first, jsonLines = false, t.lineAt(end-1) == line
		}
		t.mark(end)
	}
}

// contentError is a JSON syntax error, a truncated input or a document over
// MaxDocumentBytes at tracker offset pos.
type contentError struct {
	pos int64
	err error
	// inList says the error is inside an array or list response, which cannot be
	// resumed at the next line.
	inList bool
}

func (e *contentError) Error() string { return e.err.Error() }

// decodeError turns an error of the decoder into a *contentError, or returns an error
// that ends Parse. from is where the value being read starts; inList says the
// value is in an array or list response.
func (j *jsonReader) decodeError(err error, from int64, inList bool) error {
	var re *readError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &re):
		return re.err
	case errors.Is(err, errDocTooLarge):
		return &contentError{pos: j.t.base, err: err, inList: inList}
	case errors.As(err, &se):
		return &contentError{pos: j.t.errorAt(from), err: fmt.Errorf("%w: %v", errInvalidJSON, se), inList: inList}
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return &contentError{pos: j.t.lastByte(), err: fmt.Errorf("%w: the input ends inside a JSON value", errInvalidJSON), inList: inList}
	}
	return err // errTooMany, errTooManyDocuments
}

// array reads the documents of an array whose '[' has been read, up to its ']'.
func (j *jsonReader) array() error {
	for j.dec.More() {
		if err := j.p.countDocument(); err != nil {
			return err
		}
		var raw json.RawMessage
		if err := j.dec.Decode(&raw); err != nil {
			return j.decodeError(err, j.offset(), true)
		}
		end := j.offset()
		start := end - int64(len(raw))
		if err := j.p.document(raw, j.t.lineAt(start), string(raw[:min(len(raw), 1024)])); err != nil {
			return err
		}
		j.t.mark(end)
	}
	if _, err := j.dec.Token(); err != nil { // the ']'
		return j.decodeError(err, j.offset(), true)
	}
	return nil
}

// object reads a top-level object whose '{' at offset start has been read: a list
// response when it has a "servers" array, else one document.
func (j *jsonReader) object(start int64, line int) error {
	fields := make(map[string]json.RawMessage)
	list, err := j.objectFields(fields)
	if err != nil {
		var ce *contentError
		if errors.As(err, &ce) {
			return err
		}
		return j.decodeError(err, start, false)
	}
	if list {
		return nil
	}
	doc, err := json.Marshal(fields)
	if err != nil {
		return err
	}
	return j.p.document(doc, line, j.t.slice(start, j.offset()))
}

// objectFields reads the rest of a top-level object into fields, the documents of its
// "servers" array excepted, which it reads one by one. It reports whether there was
// such an array.
func (j *jsonReader) objectFields(fields map[string]json.RawMessage) (list bool, err error) {
	for j.dec.More() {
		tok, err := j.dec.Token()
		if err != nil {
			return false, err
		}
		key, _ := tok.(string)
		if key != "servers" {
			var raw json.RawMessage
			if err := j.dec.Decode(&raw); err != nil {
				return false, err
			}
			fields[key] = raw // a document keeps every field; a list response's are dropped
			continue
		}
		tok, err = j.dec.Token()
		if err != nil {
			return false, err
		}
		switch tok {
		case json.Delim('['):
			list = true
			if err := j.array(); err != nil {
				return false, err
			}
		case json.Delim('{'):
			if err := j.skip(); err != nil {
				return false, err
			}
		}
	}
	_, err = j.dec.Token() // the '}'
	return list, err
}

// skip reads past the end of an object or array whose opening delimiter was read.
func (j *jsonReader) skip() error {
	for depth := 1; depth > 0; {
		tok, err := j.dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
	return nil
}

func jsonKind(tok json.Token) string {
	switch tok.(type) {
	case string:
		return "string"
	case float64, json.Number:
		return "number"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return "value"
}

// document reads the server of one server.json document or list item starting at
// line; text is its beginning, for a LineError.
func (p *parser) document(raw json.RawMessage, line int, text string) error {
	var item struct {
		Name     string          `json:"name"`
		Remotes  json.RawMessage `json:"remotes"`
		Packages json.RawMessage `json:"packages"`
		Repo     json.RawMessage `json:"repository"`
		Server   json.RawMessage `json:"server"`
		Meta     json.RawMessage `json:"_meta"`
	}
	if err := unmarshalObject(raw, &item); err != nil {
		p.fail(line, text, err)
		return nil
	}
	var meta json.RawMessage
	if len(item.Server) > 0 && item.Name == "" && len(item.Remotes) == 0 && len(item.Packages) == 0 && len(item.Repo) == 0 {
		raw, meta = item.Server, item.Meta // a list item: {"server": {…}, "_meta": {…}}
	}
	s, probs, err := readServer(raw)
	for _, pr := range probs {
		p.fail(line, pr.text, pr.err)
	}
	if err != nil {
		if len(probs) == 0 || !errors.Is(err, errNothing) {
			p.fail(line, text, err)
		}
		return nil
	}
	s.RegistryMeta, s.Status, s.Latest = officialMeta(meta)
	return p.addDocument(s, line, text)
}

// unmarshalObject decodes a JSON object into d.
func unmarshalObject(raw json.RawMessage, d any) error {
	if len(raw) == 0 || raw[0] != '{' {
		return errNotObject
	}
	if err := json.Unmarshal(raw, d); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("%w: field %s holds a JSON %s", errNotServerJSON, te.Field, te.Value)
		}
		return fmt.Errorf("%w: %v", errNotServerJSON, err)
	}
	return nil
}

// remoteRef reads the URL of a server.json remote; it must name an endpoint, not a
// package or repository page.
func remoteRef(raw string) (ref, error) {
	if strings.ContainsAny(raw, "{}") {
		return ref{}, errTemplated
	}
	if raw == "" {
		return ref{}, fmt.Errorf("%w: no url", errBadURL)
	}
	if !hasPrefixFold(raw, "https://") && !hasPrefixFold(raw, "http://") {
		return ref{}, fmt.Errorf("%w: a remote URL starts with https:// or http://", errBadURL)
	}
	r, err := urlRef(raw)
	if err == nil && r.kind != kindRemote {
		return ref{}, fmt.Errorf("%w: a %s page is not an MCP endpoint", errBadURL, r.kind)
	}
	return r, err
}

// registryPackage reads an npm or pypi package of a server.json document. A package on
// another registry than the public one cannot be named by a purl without qualifiers, so
// it is refused.
func registryPackage(pk packageJSON, public string, parse func(string) (ref, error)) (ref, error) {
	if b := strings.TrimSuffix(pk.RegistryBaseURL, "/"); b != "" && !strings.EqualFold(b, public) {
		return ref{}, fmt.Errorf("%w: the package is on %s, not %s; only the public registry is supported", errBadName, clip(redact(b), 80), public)
	}
	if pk.Identifier == "" {
		return ref{}, fmt.Errorf("%w: no identifier", errBadName)
	}
	return parse(pk.Identifier)
}

// repositoryRef reads repository.url of a document whose source is github.
func repositoryRef(raw string) (ref, error) {
	u, err := parseURL(raw)
	if err != nil {
		return ref{}, err
	}
	if h := strings.ToLower(u.Hostname()); h != "github.com" && h != "www.github.com" {
		return ref{}, fmt.Errorf("%w: source is github but the URL is not on github.com", errBadRepo)
	}
	return githubURL(u)
}
