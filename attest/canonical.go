package attest

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
	"golang.org/x/text/unicode/norm"
)

// MaxDepth is the deepest nesting of arrays and objects the canonical profile accepts.
const MaxDepth = 64

// A JSONError reports why a document is not acceptable input to the canonical profile.
// Offset is the byte offset in the input at which the problem was found.
type JSONError struct {
	Offset int
	Msg    string
}

func (e *JSONError) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.Offset, e.Msg)
}

// Canonicalize returns the nfc-jcs/v1 canonical form of a JSON document: every string and
// object key normalized to Unicode NFC, then RFC 8785 (JCS). It rejects what the profile
// forbids: invalid UTF-8, lone surrogates, duplicate keys and keys that collide after NFC,
// numbers that are not finite as doubles, integer literals (no fraction, no exponent)
// beyond ±2^53, which a double cannot hold exactly, unless the literal is the canonical
// serialization of a double (such as 100000000000000000000, the form of 1e20), nesting
// deeper than MaxDepth and anything after the top-level value.
func Canonicalize(doc []byte) ([]byte, error) {
	return canonicalize(doc, false)
}

// CheckJSON applies the strict input rules of Canonicalize without producing output. Key
// documents and envelopes are checked with it before they are decoded, so duplicate
// keys or lone surrogates never reach encoding/json, which would accept them silently.
func CheckJSON(doc []byte) error {
	s := scanner{data: doc}
	return s.document()
}

// IsCanonical reports whether doc is exactly its own canonical form.
func IsCanonical(doc []byte) bool {
	c, err := Canonicalize(doc)
	return err == nil && bytes.Equal(c, doc)
}

func canonicalize(doc []byte, fromEncodingJSON bool) ([]byte, error) {
	s := scanner{data: doc, emit: true, fromEncodingJSON: fromEncodingJSON}
	s.out = make([]byte, 0, len(doc))
	if err := s.document(); err != nil {
		return nil, err
	}
	return s.out, nil
}

// scanner is a strict RFC 8259 parser. When emit is set it writes the canonical form of
// the document to out: strings and keys in NFC, members sorted by the UTF-16 code units
// of their keys, RFC 8785 string escaping and ECMAScript number serialization. Its output
// equals jcs.Transform of the NFC-normalized input; the tests and fuzz targets hold it to
// that.
type scanner struct {
	data  []byte
	pos   int
	depth int
	emit  bool
	out   []byte
	// fromEncodingJSON marks input produced by encoding/json from Go values, which
	// replaces invalid UTF-8 with the escape \ufffd; such an escape is then rejected
	// as the invalid UTF-8 it stands for.
	fromEncodingJSON bool
	str              []byte   // scratch for decoded strings
	members          []member // stack of the members of the open objects
	tmp              []byte   // scratch for reordering members
}

func (s *scanner) fail(format string, args ...any) error {
	return &JSONError{Offset: s.pos, Msg: fmt.Sprintf(format, args...)}
}

func (s *scanner) document() error {
	if !utf8.Valid(s.data) {
		// Locate the first invalid byte for the message.
		off := 0
		for off < len(s.data) {
			r, n := utf8.DecodeRune(s.data[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return &JSONError{Offset: off, Msg: "invalid UTF-8"}
	}
	s.skipSpace()
	if err := s.value(); err != nil {
		return err
	}
	s.skipSpace()
	if s.pos != len(s.data) {
		return s.fail("unexpected data after the top-level value")
	}
	return nil
}

func (s *scanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

func (s *scanner) value() error {
	if s.pos >= len(s.data) {
		return s.fail("unexpected end of input")
	}
	switch c := s.data[s.pos]; {
	case c == '{':
		return s.object()
	case c == '[':
		return s.array()
	case c == '"':
		return s.stringValue()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	default:
		return s.fail("unexpected character %q", c)
	}
}

func (s *scanner) literal(lit string) error {
	if !bytes.HasPrefix(s.data[s.pos:], []byte(lit)) {
		return s.fail("invalid literal")
	}
	s.pos += len(lit)
	if s.emit {
		s.out = append(s.out, lit...)
	}
	return nil
}

func (s *scanner) enter() error {
	s.depth++
	if s.depth > MaxDepth {
		return s.fail("nesting deeper than %d", MaxDepth)
	}
	return nil
}

// member is one object member as scanned: its key before and after NFC, where the key
// began in the input, and where the member's canonical text ("key":value) lies in out.
type member struct {
	raw, nfc   string
	off        int
	start, end int
}

func (s *scanner) object() error {
	if err := s.enter(); err != nil {
		return err
	}
	s.pos++ // '{'
	objStart := len(s.out)
	if s.emit {
		s.out = append(s.out, '{')
	}
	base := len(s.members)
	s.skipSpace()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
	} else {
		for {
			s.skipSpace()
			if s.pos >= len(s.data) || s.data[s.pos] != '"' {
				return s.fail("expected a string key")
			}
			off := s.pos
			key, raw, err := s.string()
			if err != nil {
				return err
			}
			if s.emit && len(s.members) > base {
				s.out = append(s.out, ',')
			}
			m := member{raw: raw, nfc: key, off: off, start: len(s.out)}
			if s.emit {
				s.out = appendString(s.out, key)
				s.out = append(s.out, ':')
			}
			s.skipSpace()
			if s.pos >= len(s.data) || s.data[s.pos] != ':' {
				return s.fail("expected ':' after object key")
			}
			s.pos++
			s.skipSpace()
			if err := s.value(); err != nil {
				return err
			}
			m.end = len(s.out)
			s.members = append(s.members, m)
			s.skipSpace()
			if s.pos >= len(s.data) {
				return s.fail("unexpected end of input in object")
			}
			if s.data[s.pos] == ',' {
				s.pos++
				continue
			}
			if s.data[s.pos] == '}' {
				s.pos++
				break
			}
			return s.fail("expected ',' or '}' in object")
		}
	}
	ms := s.members[base:]
	s.members = s.members[:base]
	s.depth--
	if err := checkDuplicates(ms); err != nil {
		return err
	}
	if s.emit {
		s.sortMembers(objStart, ms)
		s.out = append(s.out, '}')
	}
	return nil
}

// sortMembers rewrites the members of the object that starts at objStart in out into
// RFC 8785 order. Members already in order, the common case for encoding/json output of
// maps, cost nothing.
func (s *scanner) sortMembers(objStart int, ms []member) {
	sorted := true
	for i := 1; i < len(ms); i++ {
		if compareUTF16(ms[i-1].nfc, ms[i].nfc) > 0 {
			sorted = false
			break
		}
	}
	if sorted {
		return
	}
	s.tmp = append(s.tmp[:0], s.out[objStart:]...)
	order := make([]member, len(ms))
	copy(order, ms)
	sort.Slice(order, func(i, j int) bool { return compareUTF16(order[i].nfc, order[j].nfc) < 0 })
	s.out = s.out[:objStart+1]
	for i, m := range order {
		if i > 0 {
			s.out = append(s.out, ',')
		}
		s.out = append(s.out, s.tmp[m.start-objStart:m.end-objStart]...)
	}
}

func checkDuplicates(members []member) error {
	if len(members) < 2 {
		return nil
	}
	if len(members) <= 8 {
		for i := 1; i < len(members); i++ {
			for j := 0; j < i; j++ {
				if members[i].nfc == members[j].nfc {
					return duplicateError(members[j], members[i])
				}
			}
		}
		return nil
	}
	sorted := make([]member, len(members))
	copy(sorted, members)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].nfc < sorted[j].nfc })
	for i := 1; i < len(sorted); i++ {
		if sorted[i].nfc == sorted[i-1].nfc {
			a, b := sorted[i-1], sorted[i]
			if a.off > b.off {
				a, b = b, a
			}
			return duplicateError(a, b)
		}
	}
	return nil
}

func duplicateError(first, second member) error {
	if first.raw == second.raw {
		return &JSONError{Offset: second.off, Msg: fmt.Sprintf("duplicate key %s", quoteForError(first.raw))}
	}
	return &JSONError{Offset: second.off, Msg: fmt.Sprintf("keys %s and %s are equal after NFC normalization", quoteForError(first.raw), quoteForError(second.raw))}
}

// quoteForError quotes at most 32 bytes of server-controlled text for an error message.
func quoteForError(s string) string {
	if len(s) > 32 {
		cut := 32
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.QuoteToASCII(s[:cut]) + "…"
	}
	return strconv.QuoteToASCII(s)
}

func (s *scanner) array() error {
	if err := s.enter(); err != nil {
		return err
	}
	s.pos++ // '['
	if s.emit {
		s.out = append(s.out, '[')
	}
	s.skipSpace()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
	} else {
		for n := 0; ; n++ {
			s.skipSpace()
			if s.emit && n > 0 {
				s.out = append(s.out, ',')
			}
			if err := s.value(); err != nil {
				return err
			}
			s.skipSpace()
			if s.pos >= len(s.data) {
				return s.fail("unexpected end of input in array")
			}
			if s.data[s.pos] == ',' {
				s.pos++
				continue
			}
			if s.data[s.pos] == ']' {
				s.pos++
				break
			}
			return s.fail("expected ',' or ']' in array")
		}
	}
	if s.emit {
		s.out = append(s.out, ']')
	}
	s.depth--
	return nil
}

// stringValue parses a JSON string value at s.pos and emits its canonical form. A string
// without escapes, the common case, is checked and copied straight from the input; any
// other goes through string.
func (s *scanner) stringValue() error {
	start := s.pos + 1
	ascii := true
	for i := start; i < len(s.data); i++ {
		c := s.data[i]
		if c == '"' {
			s.pos = i + 1
			if s.emit {
				v := s.data[start:i]
				if ascii || norm.NFC.IsNormal(v) {
					s.out = appendString(s.out, v)
				} else {
					s.out = appendString(s.out, norm.NFC.Bytes(v))
				}
			}
			return nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	str, _, err := s.string()
	if err != nil {
		return err
	}
	if s.emit {
		s.out = appendString(s.out, str)
	}
	return nil
}

// string parses a JSON string at s.pos and returns its NFC-normalized value and its raw
// decoded value.
func (s *scanner) string() (nfc, raw string, err error) {
	s.pos++ // opening quote
	start := s.pos
	// Fast path: no escapes, so the decoded value is the input bytes themselves.
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		if c == '"' {
			raw = string(s.data[start:s.pos])
			s.pos++
			return normalize(raw), raw, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", "", s.fail("control character U+%04X in string must be escaped", c)
		}
		s.pos++
	}
	buf := append(s.str[:0], s.data[start:s.pos]...)
	for {
		if s.pos >= len(s.data) {
			return "", "", s.fail("unterminated string")
		}
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			s.str = buf
			raw = string(buf)
			return normalize(raw), raw, nil
		case c < 0x20:
			return "", "", s.fail("control character U+%04X in string must be escaped", c)
		case c != '\\':
			buf = append(buf, c)
			s.pos++
			continue
		}
		// An escape sequence.
		if s.pos+1 >= len(s.data) {
			return "", "", s.fail("unterminated escape")
		}
		e := s.data[s.pos+1]
		s.pos += 2
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, err := s.hex4()
			if err != nil {
				return "", "", err
			}
			switch {
			case utf16.IsSurrogate(r) && r < 0xDC00:
				if s.pos+6 > len(s.data) || s.data[s.pos] != '\\' || s.data[s.pos+1] != 'u' {
					return "", "", s.fail("lone high surrogate \\u%04X", r)
				}
				s.pos += 2
				r2, err := s.hex4()
				if err != nil {
					return "", "", err
				}
				if r2 < 0xDC00 || r2 > 0xDFFF {
					return "", "", s.fail("high surrogate \\u%04X not followed by a low surrogate", r)
				}
				r = utf16.DecodeRune(r, r2)
			case utf16.IsSurrogate(r):
				return "", "", s.fail("lone low surrogate \\u%04X", r)
			case r == utf8.RuneError && s.fromEncodingJSON:
				return "", "", s.fail("invalid UTF-8 in a Go string (encoded as \\ufffd)")
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", "", s.fail("invalid escape \\%c", e)
		}
	}
}

func (s *scanner) hex4() (rune, error) {
	if s.pos+4 > len(s.data) {
		return 0, s.fail("short \\u escape")
	}
	var r rune
	for _, c := range s.data[s.pos : s.pos+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, s.fail("invalid \\u escape")
		}
	}
	s.pos += 4
	return r, nil
}

func normalize(v string) string {
	// Pure ASCII is always NFC; check cheaply before asking norm.
	for i := 0; i < len(v); i++ {
		if v[i] >= utf8.RuneSelf {
			if norm.NFC.IsNormalString(v) {
				return v
			}
			return norm.NFC.String(v)
		}
	}
	return v
}

// appendString writes v as a JSON string escaped as RFC 8785 §3.2.2.2 requires: \" and
// \\, the short escapes \b \f \n \r \t, \u00xx (lowercase hex) for other control
// characters, and every other character as its UTF-8 bytes.
func appendString[T string | []byte](out []byte, v T) []byte {
	const hex = "0123456789abcdef"
	out = append(out, '"')
	start := 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		out = append(out, v[start:i]...)
		start = i + 1
		switch c {
		case '"', '\\':
			out = append(out, '\\', c)
		case '\b':
			out = append(out, '\\', 'b')
		case '\f':
			out = append(out, '\\', 'f')
		case '\n':
			out = append(out, '\\', 'n')
		case '\r':
			out = append(out, '\\', 'r')
		case '\t':
			out = append(out, '\\', 't')
		default:
			out = append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
	}
	out = append(out, v[start:]...)
	return append(out, '"')
}

var errNumber = errors.New("invalid number")

func (s *scanner) number() error {
	start := s.pos
	integer := true
	if s.data[s.pos] == '-' {
		s.pos++
	}
	digits := func() int {
		n := 0
		for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
			s.pos++
			n++
		}
		return n
	}
	if s.pos < len(s.data) && s.data[s.pos] == '0' {
		s.pos++
	} else if digits() == 0 {
		return s.fail("%v", errNumber)
	}
	if s.pos < len(s.data) && s.data[s.pos] == '.' {
		integer = false
		s.pos++
		if digits() == 0 {
			return s.fail("invalid number: digits expected after '.'")
		}
	}
	if s.pos < len(s.data) && (s.data[s.pos] == 'e' || s.data[s.pos] == 'E') {
		integer = false
		s.pos++
		if s.pos < len(s.data) && (s.data[s.pos] == '+' || s.data[s.pos] == '-') {
			s.pos++
		}
		if digits() == 0 {
			return s.fail("invalid number: digits expected in exponent")
		}
	}
	text := s.data[start:s.pos]
	var f float64
	if integer {
		mag := text
		if mag[0] == '-' {
			mag = mag[1:]
		}
		// 2^53 = 9007199254740992 has 16 digits. Beyond it, only a literal that is
		// already the ECMAScript serialization of a double (at most 21 digits, below
		// 1e21) is accepted: it is what this function emits for such a double, and
		// Canonicalize must accept its own output.
		if len(mag) > 16 || (len(mag) == 16 && string(mag) > "9007199254740992") {
			if len(mag) > 21 || !isNumberSerialization(text) {
				return &JSONError{Offset: start, Msg: fmt.Sprintf("integer %s is beyond ±2^53", text)}
			}
		}
	} else {
		var err error
		f, err = strconv.ParseFloat(string(text), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return &JSONError{Offset: start, Msg: fmt.Sprintf("number %s is not finite as a double", text)}
		}
	}
	if !s.emit {
		return nil
	}
	if integer {
		// Within ±2^53 an integer literal is its own ECMAScript serialization, but "-0".
		if string(text) == "-0" {
			text = text[1:]
		}
		s.out = append(s.out, text...)
		return nil
	}
	num, err := jcs.NumberToJSON(f)
	if err != nil {
		return &JSONError{Offset: start, Msg: err.Error()}
	}
	s.out = append(s.out, num...)
	return nil
}

// isNumberSerialization reports whether text is exactly the ECMAScript serialization of
// the double it denotes.
func isNumberSerialization(text []byte) bool {
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil {
		return false
	}
	num, err := jcs.NumberToJSON(f)
	return err == nil && num == string(text)
}
