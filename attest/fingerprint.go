package attest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"unicode/utf8"
)

// MaxTools bounds the number of tools a fingerprint is computed over; it matches the
// probe's cap of 10,000 tools per list.
const MaxTools = 10000

// Digest returns "sha256:" followed by the lowercase hex SHA-256 of b.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ParseToolsDocument extracts the tools array and, when present, a top-level
// "instructions" string from a JSON document that is a JSON-RPC response to tools/list,
// its result object, or a bare tools array. The document must pass CheckJSON.
func ParseToolsDocument(doc []byte) (tools []json.RawMessage, instructions *string, err error) {
	if err := CheckJSON(doc); err != nil {
		return nil, nil, err
	}
	// The document is valid from here on, so it is split without checking it again. The
	// tools are slices of a copy, so the caller may reuse doc.
	doc = bytes.Clone(bytes.TrimSpace(doc))
	if doc[0] == '[' {
		return arrayElements(doc), nil, nil
	}
	if doc[0] != '{' {
		return nil, nil, errors.New("document is neither a tools/list result object nor a tools array")
	}
	obj := objectMembers(doc)
	if res, ok := obj["result"]; ok {
		if _, hasTools := obj["tools"]; !hasTools {
			if res[0] != '{' {
				return nil, nil, errors.New(`"result" is not a tools/list result object`)
			}
			obj = objectMembers(res)
		}
	}
	rawTools, ok := obj["tools"]
	if !ok {
		return nil, nil, errors.New(`no "tools" member`)
	}
	if rawTools[0] != '[' {
		return nil, nil, errors.New(`"tools" is not an array`)
	}
	if ins, ok := obj["instructions"]; ok {
		var s string
		if err := json.Unmarshal(ins, &s); err != nil || ins[0] != '"' {
			return nil, nil, errors.New(`"instructions" is not a string`)
		}
		instructions = &s
	}
	return arrayElements(rawTools), instructions, nil
}

// The splitting functions below take JSON that CheckJSON or Canonicalize has accepted
// and do not check it again.

// arrayElements returns the elements of a JSON array.
func arrayElements(arr []byte) []json.RawMessage {
	els := []json.RawMessage{}
	i := skipSpace(arr, 1)
	for arr[i] != ']' {
		end := skipValue(arr, i)
		els = append(els, arr[i:end:end])
		i = skipSpace(arr, end)
		if arr[i] == ',' {
			i = skipSpace(arr, i+1)
		}
	}
	return els
}

// objectMembers returns the members of a JSON object by their decoded keys.
func objectMembers(obj []byte) map[string]json.RawMessage {
	m := make(map[string]json.RawMessage)
	forEachMember(obj, func(key, val []byte) {
		m[decodeString(key)] = val
	})
	return m
}

// forEachMember calls f with the key, quotes included, and the value of each member of
// a JSON object.
func forEachMember(obj []byte, f func(key, val []byte)) {
	i := skipSpace(obj, 1)
	for obj[i] != '}' {
		keyEnd := skipString(obj, i)
		v := skipSpace(obj, skipSpace(obj, keyEnd)+1) // past ':'
		end := skipValue(obj, v)
		f(obj[i:keyEnd], obj[v:end:end])
		i = skipSpace(obj, end)
		if obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
}

// decodeString returns the value of a JSON string, quotes included.
func decodeString(q []byte) string {
	if bytes.IndexByte(q, '\\') < 0 {
		return string(q[1 : len(q)-1])
	}
	var s string
	if err := json.Unmarshal(q, &s); err != nil {
		panic("attest: decodeString: " + err.Error()) // unreachable on checked input
	}
	return s
}

func skipSpace(d []byte, i int) int {
	for i < len(d) && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string that starts at d[i].
func skipString(d []byte, i int) int {
	for i++; i < len(d); i++ {
		switch d[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// skipValue returns the index just past the value that starts at d[i].
func skipValue(d []byte, i int) int {
	switch d[i] {
	case '"':
		return skipString(d, i)
	case '{', '[':
		depth := 0
		for i < len(d) {
			switch d[i] {
			case '"':
				i = skipString(d, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default: // a number or a literal
		for i < len(d) && d[i] != ',' && d[i] != ']' && d[i] != '}' && d[i] != ' ' && d[i] != '\t' && d[i] != '\n' && d[i] != '\r' {
			i++
		}
		return i
	}
}

// projected is one tool reduced to the members the fingerprints read, each already in
// canonical form; absent members are nil.
type projected struct {
	name     string // NFC
	nameJSON []byte
	input    []byte
	output   []byte
	title    []byte
	desc     []byte
	annots   []byte
	surface  []byte // canonical surface element, built on demand
	schemaEl []byte
}

// ComputeFingerprints returns the four fingerprints of a tool list and the server's
// instructions (nil when the server sent none), exactly as this package's doc defines
// them. Every tool must be an object whose "name" is a string.
func ComputeFingerprints(tools []json.RawMessage, instructions *string) (Fingerprints, error) {
	if len(tools) > MaxTools {
		return Fingerprints{}, fmt.Errorf("%d tools exceed the cap of %d", len(tools), MaxTools)
	}
	ps := make([]projected, len(tools))
	for i, raw := range tools {
		if err := project(&ps[i], raw); err != nil {
			return Fingerprints{}, fmt.Errorf("tools[%d]: %w", i, err)
		}
	}

	var fp Fingerprints
	var buf bytes.Buffer

	// toolset: sorted names, duplicates kept.
	sort.SliceStable(ps, func(i, j int) bool { return compareUTF16(ps[i].name, ps[j].name) < 0 })
	buf.WriteByte('[')
	for i := range ps {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(ps[i].nameJSON)
	}
	buf.WriteByte(']')
	fp.Toolset = Digest(buf.Bytes())

	// schema: {inputSchema, name} sorted by name, ties by canonical inputSchema.
	for i := range ps {
		p := &ps[i]
		b := make([]byte, 0, len(p.input)+len(p.nameJSON)+24)
		b = append(b, '{')
		if p.input != nil {
			b = append(b, `"inputSchema":`...)
			b = append(b, p.input...)
			b = append(b, ',')
		}
		b = append(b, `"name":`...)
		b = append(b, p.nameJSON...)
		p.schemaEl = append(b, '}')
	}
	sort.SliceStable(ps, func(i, j int) bool {
		if c := compareUTF16(ps[i].name, ps[j].name); c != 0 {
			return c < 0
		}
		return bytes.Compare(ps[i].input, ps[j].input) < 0
	})
	fp.Schema = Digest(joinArray(&buf, ps, func(p *projected) []byte { return p.schemaEl }))

	// surface: members in RFC 8785 key order (they are ASCII, so byte order is UTF-16 order).
	for i := range ps {
		p := &ps[i]
		b := make([]byte, 0, len(p.annots)+len(p.desc)+len(p.input)+len(p.nameJSON)+len(p.output)+len(p.title)+80)
		b = append(b, '{')
		first := true
		add := func(key string, v []byte) {
			if v == nil {
				return
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = append(b, key...)
			b = append(b, v...)
		}
		add(`"annotations":`, p.annots)
		add(`"description":`, p.desc)
		add(`"inputSchema":`, p.input)
		add(`"name":`, p.nameJSON)
		add(`"outputSchema":`, p.output)
		add(`"title":`, p.title)
		p.surface = append(b, '}')
	}
	sort.SliceStable(ps, func(i, j int) bool {
		if c := compareUTF16(ps[i].name, ps[j].name); c != 0 {
			return c < 0
		}
		return bytes.Compare(ps[i].surface, ps[j].surface) < 0
	})
	fp.Surface = Digest(joinArray(&buf, ps, func(p *projected) []byte { return p.surface }))

	ins := ""
	if instructions != nil {
		ins = *instructions
	}
	if !utf8.ValidString(ins) {
		return Fingerprints{}, errors.New("instructions: invalid UTF-8")
	}
	canon, err := Canonicalize(appendString(nil, ins))
	if err != nil {
		return Fingerprints{}, fmt.Errorf("instructions: %w", err)
	}
	fp.Instructions = Digest(canon)
	return fp, nil
}

func joinArray(buf *bytes.Buffer, ps []projected, el func(*projected) []byte) []byte {
	buf.Reset()
	buf.WriteByte('[')
	for i := range ps {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(el(&ps[i]))
	}
	buf.WriteByte(']')
	return buf.Bytes()
}

func project(p *projected, raw json.RawMessage) error {
	// One pass checks the whole tool and puts it in canonical form; its members are then
	// slices of that form. Canonical keys are NFC, which leaves these ASCII keys as they are.
	c, err := Canonicalize(raw)
	if err != nil {
		return err
	}
	if c[0] != '{' {
		return errors.New("tool is not a JSON object")
	}
	forEachMember(c, func(key, val []byte) {
		switch string(key) {
		case `"name"`:
			p.nameJSON = val
		case `"inputSchema"`:
			p.input = val
		case `"outputSchema"`:
			p.output = val
		case `"title"`:
			p.title = val
		case `"description"`:
			p.desc = val
		case `"annotations"`:
			p.annots = val
		}
	})
	if p.nameJSON == nil {
		return errors.New(`tool has no "name"`)
	}
	if p.nameJSON[0] != '"' {
		return errors.New(`tool "name" is not a string`)
	}
	p.name = decodeString(p.nameJSON)
	return nil
}

// compareUTF16 orders two strings by their UTF-16 code units, the order RFC 8785 uses for
// object keys. It differs from byte order only between U+E000–U+FFFF and supplementary
// characters, which UTF-16 places before them.
func compareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			return int(utf16Key(ra)) - int(utf16Key(rb))
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) - len(b)
}

// utf16Key maps a rune to a value whose order equals the order of its UTF-16 encoding
// against any other different rune: supplementary characters sort by their high surrogate,
// between U+D7FF and U+E000.
func utf16Key(r rune) uint32 {
	if r < 0x10000 {
		return uint32(r) << 10
	}
	r -= 0x10000
	hi := 0xD800 + uint32(r>>10)
	return hi<<10 | uint32(r&0x3FF)
}
