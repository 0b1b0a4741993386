package web

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/probity-dev/probity/internal/rawjson"
)

// scanSurface calls fn for each tool of a stored surface document (a JSON array of tool
// objects; rounds stores it in canonical form). The tool's name, title (else
// annotations.title) and description are read as jsonText would give them (a string
// decoded, null or absent empty, any other value as its JSON) by its texts method, and
// their cost (toolCost) by its cost method without decoding them. The tool is valid
// only during the call.
//
// It is one pass over the bytes, several times faster than encoding/json on the
// megabytes a surface of thousands of tools takes, which is what the first view of
// such an entry's tools costs. Member names are matched exactly, as in canonical JSON
// and as attest reads them, and a member named twice keeps its last value, as attest
// and a Go map do. Malformed JSON is an error, never a panic.
func scanSurface(doc []byte, fn func(t *scannedTool)) error {
	s := &surfaceScanner{b: doc}
	s.ws()
	if !s.eat('[') {
		return errors.New("not a JSON array")
	}
	s.ws()
	if s.eat(']') {
		return s.end()
	}
	for i := 0; ; i++ {
		if err := s.tool(); err != nil {
			return fmt.Errorf("tool %d: %w", i+1, err)
		}
		fn(&s.t)
		s.ws()
		if s.eat(']') {
			return s.end()
		}
		if !s.eat(',') {
			return fmt.Errorf("after tool %d: %w", i+1, errSyntax)
		}
		s.ws()
	}
}

var errSyntax = errors.New("malformed JSON")

// surfaceScanner reads one document; t is the current tool.
type surfaceScanner struct {
	b []byte
	i int
	t scannedTool
}

// scannedTool is one tool of a surface as read: its texts as they are in the document.
type scannedTool struct {
	name, title, annTitle, desc field
	bufs                        [3][]byte // unescaped strings, reused
}

// field is a text as it is in the document: a string's content still escaped
// (escaped set when it must be unescaped: it has an escape or bytes that are not
// UTF-8), or a value's JSON; cost is textCost of the text it stands for.
type field struct {
	raw     []byte
	escaped bool
	cost    int
}

// text is f unescaped, into *buf when it must be decoded.
func (f field) text(buf *[]byte) []byte {
	if !f.escaped {
		return f.raw
	}
	out, err := rawjson.AppendUnescaped((*buf)[:0], f.raw)
	if err != nil { // rawStr checked the escapes
		return nil
	}
	*buf = out
	return out
}

// texts returns the tool's name, title (else annotations.title) and description.
func (t *scannedTool) texts() (name, title, description []byte) {
	tf := t.title
	if len(tf.raw) == 0 {
		tf = t.annTitle
	}
	return t.name.text(&t.bufs[0]), tf.text(&t.bufs[1]), t.desc.text(&t.bufs[2])
}

// cost is toolCost of the tool's texts, computed as they were read.
func (t *scannedTool) cost() int {
	tf := t.title
	if len(tf.raw) == 0 {
		tf = t.annTitle
	}
	return toolCost(t.name.cost, tf.cost, t.desc.cost)
}

func (s *surfaceScanner) ws() { s.i = rawjson.SkipSpace(s.b, s.i) }

func (s *surfaceScanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *surfaceScanner) end() error {
	s.ws()
	if s.i != len(s.b) {
		return errors.New("data after the array")
	}
	return nil
}

// tool reads one tool object.
func (s *surfaceScanner) tool() error {
	t := &s.t
	t.name, t.title, t.annTitle, t.desc = field{}, field{}, field{}, field{}
	return s.object(func(key []byte) error {
		switch string(key) {
		case "name":
			return s.text(&t.name)
		case "title":
			return s.text(&t.title)
		case "description":
			return s.text(&t.desc)
		case "annotations":
			t.annTitle = field{} // a member named twice keeps its last value whole
			if s.i < len(s.b) && s.b[s.i] == '{' {
				return s.object(func(key []byte) error {
					if string(key) == "title" {
						return s.text(&t.annTitle)
					}
					return s.skip(0)
				})
			}
		}
		return s.skip(0)
	})
}

// object reads an object, calling member with each key (unescaped) at its value,
// which member must read.
func (s *surfaceScanner) object(member func(key []byte) error) error {
	if !s.eat('{') {
		return errors.New("not a JSON object")
	}
	s.ws()
	if s.eat('}') {
		return nil
	}
	var keyBuf []byte
	for {
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return errSyntax
		}
		key, err := s.str(&keyBuf)
		if err != nil {
			return err
		}
		s.ws()
		if !s.eat(':') {
			return errSyntax
		}
		s.ws()
		if err := member(key); err != nil {
			return err
		}
		s.ws()
		if s.eat('}') {
			return nil
		}
		if !s.eat(',') {
			return errSyntax
		}
		s.ws()
	}
}

// text reads a value as jsonText will show it: a string's content (still escaped),
// null as nothing, anything else as its JSON.
func (s *surfaceScanner) text(dst *field) error {
	if s.i >= len(s.b) {
		return errSyntax
	}
	switch s.b[s.i] {
	case '"':
		raw, escaped, cost, err := s.rawStr(true)
		*dst = field{raw, escaped, cost}
		return err
	case 'n':
		if err := s.skip(0); err != nil {
			return err
		}
		*dst = field{}
		return nil
	}
	start := s.i
	if err := s.skip(0); err != nil {
		return err
	}
	*dst = field{raw: s.b[start:s.i], cost: textCost(s.b[start:s.i])}
	return nil
}

// maxDepth bounds the nesting skip follows (encoding/json's bound).
const maxDepth = 10000

// skip reads any value.
func (s *surfaceScanner) skip(depth int) error {
	if depth > maxDepth {
		return errors.New("nested too deeply")
	}
	if s.i >= len(s.b) {
		return errSyntax
	}
	switch c := s.b[s.i]; {
	case c == '"':
		_, _, _, err := s.rawStr(false)
		return err
	case c == '{':
		return s.object(func([]byte) error { return s.skip(depth + 1) })
	case c == '[':
		s.i++
		s.ws()
		if s.eat(']') {
			return nil
		}
		for {
			if err := s.skip(depth + 1); err != nil {
				return err
			}
			s.ws()
			if s.eat(']') {
				return nil
			}
			if !s.eat(',') {
				return errSyntax
			}
			s.ws()
		}
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || ('0' <= c && c <= '9'):
		start := s.i
		for s.i < len(s.b) {
			switch c := s.b[s.i]; {
			case '0' <= c && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
				s.i++
				continue
			}
			break
		}
		if s.i == start || (s.i == start+1 && s.b[start] == '-') {
			return errSyntax
		}
		return nil
	}
	return errSyntax
}

func (s *surfaceScanner) literal(lit string) error {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return errSyntax
	}
	s.i += len(lit)
	return nil
}

// rawStr reads a string at s.i and returns its content as it is, whether it must be
// unescaped (an escape, or bytes that are not UTF-8), and, with withCost, textCost of
// its content unescaped, all in one pass. Its characters are read by rawjson.NextRune,
// as rawjson.AppendUnescaped and encoding/json read them, so each costs what the
// character it stands for does (U+FFFD for a lone surrogate or an invalid byte).
func (s *surfaceScanner) rawStr(withCost bool) (raw []byte, escaped bool, cost int, err error) {
	b := s.b
	s.i++ // the opening quote
	start := s.i
	shown := 0 // bytes of the unescaped content so far
	for {
		if withCost { // the common case: printable ASCII, costed byte by byte
			for s.i < len(b) && !rawjson.Special(b[s.i]) {
				if shown < maxShown {
					cost += asciiCost[b[s.i]]
				}
				shown++
				s.i++
			}
		} else {
			s.i = rawjson.SkipPlain(b, s.i)
		}
		if s.i >= len(b) {
			return nil, false, 0, errors.New("unterminated string")
		}
		if b[s.i] == '"' {
			raw = b[start:s.i]
			s.i++
			if shown > maxShown {
				cost += len("…")
			}
			return raw, escaped, cost, nil
		}
		r, next, err := rawjson.NextRune(b, s.i)
		if err != nil {
			return nil, false, 0, err
		}
		if b[s.i] == '\\' || (r == utf8.RuneError && next == s.i+1) {
			escaped = true
		}
		s.i = next
		if withCost && shown < maxShown {
			cost += runeCost(r)
		}
		shown += utf8.RuneLen(r)
	}
}

// str reads a string at s.i and returns its content unescaped: a slice of the
// document when it needs no decoding, else written into *buf.
func (s *surfaceScanner) str(buf *[]byte) ([]byte, error) {
	raw, escaped, _, err := s.rawStr(false)
	if err != nil || !escaped {
		return raw, err
	}
	return field{raw: raw, escaped: true}.text(buf), nil
}

// runeCost is textCost of one valid character.
func runeCost(r rune) int {
	switch {
	case 0 <= r && r < utf8.RuneSelf:
		return asciiCost[r]
	case hides(r):
		return 11 // \U000e0041 and the backslash's escape
	}
	return utf8.RuneLen(r)
}
