package attest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
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
// numbers that are not finite as doubles, integers beyond ±2^53 (an integer literal
// beyond it, or any number whose value lies between 2^53 and 1e21, which RFC 8785 would
// write as such a literal), nesting deeper than MaxDepth and anything after the
// top-level value.
func Canonicalize(doc []byte) ([]byte, error) {
	return canonicalize(doc, false)
}

// CheckJSON applies the strict input rules of Canonicalize without producing output. Key
// documents and envelopes are checked with it before they are decoded, so duplicate
// keys or lone surrogates never reach encoding/json, which would accept them silently.
func CheckJSON(doc []byte) error {
	s := getScanner(doc, false, false)
	defer putScanner(s)
	return s.document()
}

// IsCanonical reports whether doc is exactly its own canonical form.
func IsCanonical(doc []byte) bool {
	c, err := Canonicalize(doc)
	return err == nil && bytes.Equal(c, doc)
}

func canonicalize(doc []byte, fromEncodingJSON bool) ([]byte, error) {
	s := getScanner(doc, true, fromEncodingJSON)
	defer putScanner(s)
	s.out = make([]byte, 0, len(doc))
	if err := s.document(); err != nil {
		return nil, err
	}
	return s.out, nil
}

// scanners recycles the scanners' scratch buffers between documents.
var scanners = sync.Pool{New: func() any { return new(scanner) }}

func getScanner(doc []byte, emit, fromEncodingJSON bool) *scanner {
	s := scanners.Get().(*scanner)
	*s = scanner{
		data: doc, emit: emit, fromEncodingJSON: fromEncodingJSON,
		str: s.str[:0], members: s.members[:0], tmp: s.tmp[:0], order: s.order[:0], keys: s.keys[:0],
	}
	return s
}

func putScanner(s *scanner) {
	const keep = 256 << 10 // let the occasional huge document's buffers go
	if cap(s.tmp) > keep || cap(s.keys) > keep || cap(s.str) > keep || cap(s.members) > keep/32 {
		return
	}
	s.data, s.out = nil, nil
	scanners.Put(s)
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
	order            []int    // scratch for reordering members
	keys             []byte   // arena for keys that needed unescaping or NFC
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

// member is one object member as scanned. It holds no pointers, so the scanner's stack
// of members costs the garbage collector nothing. Its key, after NFC, is data[ks:ke]
// when inData (the common case: no escapes, already NFC) and keys[ks:ke] otherwise; off
// is where the key begins in the input, and start:end is where the member's canonical
// text ("key":value) lies in out.
type member struct {
	ks, ke     int
	inData     bool
	off        int
	start, end int
}

func (s *scanner) keyOf(m *member) []byte {
	if m.inData {
		return s.data[m.ks:m.ke]
	}
	return s.keys[m.ks:m.ke]
}

// key parses the object key at s.pos.
func (s *scanner) key() (member, error) {
	off := s.pos
	start := off + 1
	ascii := true
	for i := start; i < len(s.data); i++ {
		i = plainRun(s.data, i)
		if i >= len(s.data) {
			break
		}
		c := s.data[i]
		if c == '"' {
			if !ascii && !streamSafe(s.data[start:i]) {
				return member{}, &JSONError{Offset: off, Msg: errNotStreamSafe}
			}
			if ascii || norm.NFC.IsNormal(s.data[start:i]) {
				s.pos = i + 1
				return member{ks: start, ke: i, inData: true, off: off}, nil
			}
			break
		}
		if c == '\\' || c < 0x20 {
			break
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	nfc, _, err := s.string()
	if err != nil {
		return member{}, err
	}
	ks := len(s.keys)
	s.keys = append(s.keys, nfc...)
	return member{ks: ks, ke: len(s.keys), off: off}, nil
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
			m, err := s.key()
			if err != nil {
				return err
			}
			if s.emit {
				if len(s.members) > base {
					s.out = append(s.out, ',')
				}
				m.start = len(s.out)
				if m.inData {
					// Found by key's fast path: no escapes, no control characters, NFC;
					// the input text, quotes included, is already canonical.
					s.out = append(s.out, s.data[m.ks-1:m.ke+1]...)
				} else {
					s.out = appendString(s.out, s.keyOf(&m))
				}
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
	s.depth--
	err := s.orderMembers(objStart, ms)
	s.members = s.members[:base]
	if err != nil {
		return err
	}
	if s.emit {
		s.out = append(s.out, '}')
	}
	return nil
}

// orderMembers rejects duplicate keys and, when emitting, rewrites the members of the
// object that starts at objStart in out into RFC 8785 order. Members already in strictly
// increasing order, the common case, cost one comparison each.
func (s *scanner) orderMembers(objStart int, ms []member) error {
	sorted := true
	for i := 1; i < len(ms); i++ {
		if compareUTF16(s.keyOf(&ms[i-1]), s.keyOf(&ms[i])) >= 0 {
			// Out of order, or a duplicate: the full path below reports duplicates
			// the same way whichever path runs.
			sorted = false
			break
		}
	}
	if sorted {
		return nil
	}
	if !s.emit && len(ms) <= 8 {
		// Only duplicates matter here, and for a few members comparing every pair is
		// cheaper than sorting.
		for i := 1; i < len(ms); i++ {
			for j := range i {
				if bytes.Equal(s.keyOf(&ms[j]), s.keyOf(&ms[i])) {
					return s.duplicateError(ms[j], ms[i])
				}
			}
		}
		return nil
	}
	order := s.order[:0]
	for i := range ms {
		order = append(order, i)
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := compareUTF16(s.keyOf(&ms[a]), s.keyOf(&ms[b])); c != 0 {
			return c
		}
		return ms[a].off - ms[b].off
	})
	s.order = order
	// Of all duplicated keys, report the one whose second occurrence comes first in the
	// input, with its first occurrence: the pair the pairwise scan above finds.
	var dupFirst, dupSecond *member
	for i := 1; i < len(order); i++ {
		a, b := &ms[order[i-1]], &ms[order[i]]
		if !bytes.Equal(s.keyOf(a), s.keyOf(b)) {
			continue
		}
		if i >= 2 && bytes.Equal(s.keyOf(&ms[order[i-2]]), s.keyOf(a)) {
			continue // a third or later occurrence
		}
		if dupSecond == nil || b.off < dupSecond.off {
			dupFirst, dupSecond = a, b
		}
	}
	if dupSecond != nil {
		return s.duplicateError(*dupFirst, *dupSecond)
	}
	if !s.emit {
		return nil
	}
	s.tmp = append(s.tmp[:0], s.out[objStart:]...)
	s.out = s.out[:objStart+1]
	for i, k := range order {
		if i > 0 {
			s.out = append(s.out, ',')
		}
		m := &ms[k]
		s.out = append(s.out, s.tmp[m.start-objStart:m.end-objStart]...)
	}
	return nil
}

// duplicateError reports two members whose keys are equal after NFC, telling a plain
// duplicate from two spellings that normalize alike. It re-reads the raw keys from the
// input: errors are the cold path.
func (s *scanner) duplicateError(first, second member) error {
	if first.off > second.off {
		first, second = second, first
	}
	raw := func(off int) string {
		r := scanner{data: s.data, pos: off}
		_, v, _ := r.string()
		return v
	}
	a, b := raw(first.off), raw(second.off)
	if a == b {
		return &JSONError{Offset: second.off, Msg: fmt.Sprintf("duplicate key %s", quoteForError(a))}
	}
	return &JSONError{Offset: second.off, Msg: fmt.Sprintf("keys %s and %s are equal after NFC normalization", quoteForError(a), quoteForError(b))}
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
		i = plainRun(s.data, i)
		if i >= len(s.data) {
			break
		}
		c := s.data[i]
		if c == '"' {
			if !ascii && !streamSafe(s.data[start:i]) {
				return &JSONError{Offset: start - 1, Msg: errNotStreamSafe}
			}
			s.pos = i + 1
			if s.emit {
				v := s.data[start:i]
				if ascii || norm.NFC.IsNormal(v) {
					// Without escapes or control characters nothing needs escaping.
					s.out = append(s.out, s.data[start-1:i+1]...)
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

// plainRun returns the index of the first byte at or after i that is not plain string
// text (printable ASCII other than '"' and '\\'), or len(d). It tests eight bytes at a
// time: strings are most of a tool list's bytes.
func plainRun(d []byte, i int) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(d); i += 8 {
		x := binary.LittleEndian.Uint64(d[i:])
		q := x ^ (lo * '"')
		b := x ^ (lo * '\\')
		// A byte below 0x20, a zero byte in q or b (a quote or a backslash), or a byte
		// with its high bit set (non-ASCII).
		if ((x-lo*0x20)&^x|(q-lo)&^q|(b-lo)&^b|x)&hi != 0 {
			break
		}
	}
	for ; i < len(d); i++ {
		if c := d[i]; c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			return i
		}
	}
	return i
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
			if !streamSafe(s.data[start:s.pos]) {
				return "", "", &JSONError{Offset: start - 1, Msg: errNotStreamSafe}
			}
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
			if !streamSafe(buf) {
				return "", "", &JSONError{Offset: start - 1, Msg: errNotStreamSafe}
			}
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
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			buf = append(buf, unescape[e])
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

// unescape maps the character after a backslash in a JSON short escape to the character
// it stands for.
var unescape = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

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

// errNotStreamSafe is the message for text with too long a run of combining marks.
const errNotStreamSafe = "more than 30 consecutive combining marks (not stream-safe text)"

// maxNonStarters is the stream-safe limit of Unicode UAX #15: golang.org/x/text's NFC
// inserts U+034F into a longer run of combining marks, where Unicode NFC does not, so
// such text has no canonical form two implementations agree on. It is rejected.
const maxNonStarters = 30

// streamSafe reports whether b has no run of more than maxNonStarters non-starters.
func streamSafe(b []byte) bool {
	run := 0
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			run = 0
			i++
			continue
		}
		p := norm.NFD.Properties(b[i:])
		if p.LeadCCC() != 0 || p.CCC() != 0 {
			run++
			if run > maxNonStarters {
				return false
			}
		} else {
			run = 0
		}
		n := p.Size()
		if n == 0 {
			n = 1
		}
		i += n
	}
	return true
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
		// 2^53 = 9007199254740992 has 16 digits.
		if len(mag) > 16 || (len(mag) == 16 && string(mag) > "9007199254740992") {
			return &JSONError{Offset: start, Msg: fmt.Sprintf("integer %s is beyond ±2^53", clipNumber(text))}
		}
	} else {
		var err error
		f, err = strconv.ParseFloat(string(text), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return &JSONError{Offset: start, Msg: fmt.Sprintf("number %s is not finite as a double", clipNumber(text))}
		}
		// Every double of magnitude beyond 2^53 is an integer, and below 1e21 RFC 8785
		// writes it as a plain integer literal, which this profile rejects on input; so
		// it is rejected here too, and Canonicalize always accepts its own output.
		if a := math.Abs(f); a > 1<<53 && a < 1e21 {
			return &JSONError{Offset: start, Msg: fmt.Sprintf("number %s is an integer beyond ±2^53", clipNumber(text))}
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

// clipNumber bounds a number literal quoted in an error message.
func clipNumber(text []byte) string {
	if len(text) > 32 {
		return string(text[:32]) + "…"
	}
	return string(text)
}
