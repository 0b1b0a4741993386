package attest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
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
	// The document is valid from here on, so it is split without checking it again, in
	// one walk. The tools are slices of a copy, so the caller may reuse doc.
	return splitToolsDocument(bytes.Clone(bytes.TrimSpace(doc)), nil)
}

// FingerprintDocument returns the fingerprints of a document ParseToolsDocument accepts.
// It canonicalizes the whole document once and takes the tools from the canonical form,
// so every byte is scanned once, where ParseToolsDocument followed by
// ComputeFingerprints scans it twice.
func FingerprintDocument(doc []byte) (Fingerprints, error) {
	canon, err := Canonicalize(doc)
	if err != nil {
		return Fingerprints{}, err
	}
	var ps []projected
	_, instructions, err := splitToolsDocument(canon, func(arr []byte) (int, error) {
		var n int
		var err error
		ps, n, err = projectCanonicalArray(arr)
		return n, err
	})
	if err != nil {
		return Fingerprints{}, err
	}
	return fingerprints(ps, instructions)
}

// projectCanonicalArray projects the tools of the canonical tools array at arr[0],
// walking each tool once, and returns the index just past the array.
func projectCanonicalArray(arr []byte) ([]projected, int, error) {
	var ps []projected
	i := 1
	for arr[i] != ']' {
		if len(ps) == MaxTools {
			return nil, 0, fmt.Errorf("more than %d tools", MaxTools)
		}
		ps = append(ps, projected{})
		p := &ps[len(ps)-1]
		if arr[i] != '{' {
			return nil, 0, fmt.Errorf("tools[%d]: tool is not a JSON object", len(ps)-1)
		}
		el := arr[i:]
		end := walkMembers(el, func(key []byte, at int) int {
			vEnd := SkipJSONValue(el, at)
			p.set(key, el[at:vEnd:vEnd])
			return vEnd
		})
		if err := p.finish(); err != nil {
			return nil, 0, fmt.Errorf("tools[%d]: %w", len(ps)-1, err)
		}
		i += end
		if arr[i] == ',' {
			i++
		}
	}
	return ps, i + 1, nil
}

// splitToolsDocument is ParseToolsDocument on a document already checked, without
// leading or trailing space. When onTools is set, it is handed the tools array instead of
// splitting it, returns the index just past the array, and no tools are returned.
func splitToolsDocument(doc []byte, onTools func(arr []byte) (int, error)) (tools []json.RawMessage, instructions *string, err error) {
	var toolsErr error
	split := func(arr []byte) ([]json.RawMessage, int) {
		if onTools != nil {
			n, err := onTools(arr)
			if err != nil {
				if toolsErr == nil {
					toolsErr = err
				}
				n = SkipJSONValue(arr, 0) // the walk goes on past the array
			}
			return nil, n
		}
		return splitArray(arr)
	}
	if doc[0] == '[' {
		tools, _ := split(doc)
		return tools, nil, toolsErr
	}
	if doc[0] != '{' {
		return nil, nil, errors.New("document is neither a tools/list result object nor a tools array")
	}
	var top, inner toolsLevel
	var result json.RawMessage
	var keyErr error
	var member func(lv *toolsLevel, d, key []byte, at int) int
	member = func(lv *toolsLevel, d, key []byte, at int) int {
		k, err := decodeString(key)
		if err != nil {
			keyErr = err
		}
		switch {
		case k == "tools" && d[at] == '[':
			els, n := split(d[at:])
			lv.tools, lv.toolEls = d[at:at+n], els
			return at + n
		case k == "result" && lv == &top && d[at] == '{':
			n := walkMembers(d[at:], func(key []byte, i int) int { return member(&inner, d[at:], key, i) })
			result = d[at : at+n]
			return at + n
		}
		end := SkipJSONValue(d, at)
		switch {
		case k == "tools":
			lv.tools = d[at:end]
		case k == "instructions":
			lv.instructions = d[at:end]
		case k == "result" && lv == &top:
			result = d[at:end]
		}
		return end
	}
	walkMembers(doc, func(key []byte, at int) int { return member(&top, doc, key, at) })
	if keyErr != nil {
		return nil, nil, keyErr
	}
	if toolsErr != nil {
		return nil, nil, toolsErr
	}
	lv := &top
	if result != nil && top.tools == nil {
		if result[0] != '{' {
			return nil, nil, errors.New(`"result" is not a tools/list result object`)
		}
		lv = &inner
	}
	if lv.tools == nil {
		return nil, nil, errors.New(`no "tools" member`)
	}
	if lv.tools[0] != '[' {
		return nil, nil, errors.New(`"tools" is not an array`)
	}
	if ins := lv.instructions; ins != nil {
		var s string
		if err := json.Unmarshal(ins, &s); err != nil || ins[0] != '"' {
			return nil, nil, errors.New(`"instructions" is not a string`)
		}
		instructions = &s
	}
	return lv.toolEls, instructions, nil
}

// toolsLevel holds the members ParseToolsDocument reads from one object: nil when absent.
type toolsLevel struct {
	tools, instructions json.RawMessage
	toolEls             []json.RawMessage // the elements of tools, when it is an array
}

// The splitting functions below take JSON that CheckJSON or Canonicalize has accepted
// and do not check it again.

// splitArray returns the elements of the JSON array at arr[0] and the index just past it.
func splitArray(arr []byte) ([]json.RawMessage, int) {
	els := []json.RawMessage{}
	i := SkipJSONSpace(arr, 1)
	for arr[i] != ']' {
		end := SkipJSONValue(arr, i)
		els = append(els, arr[i:end:end])
		i = SkipJSONSpace(arr, end)
		if arr[i] == ',' {
			i = SkipJSONSpace(arr, i+1)
		}
	}
	return els, i + 1
}

// walkMembers calls f with the key, quotes included, and the index of the value of each
// member of the JSON object at obj[0]; f returns the index just past the value, which it
// may skip or split. walkMembers returns the index just past the object.
func walkMembers(obj []byte, f func(key []byte, at int) int) int {
	i := SkipJSONSpace(obj, 1)
	for obj[i] != '}' {
		keyEnd := SkipJSONString(obj, i)
		v := SkipJSONSpace(obj, SkipJSONSpace(obj, keyEnd)+1) // past ':'
		i = SkipJSONSpace(obj, f(obj[i:keyEnd], v))
		if obj[i] == ',' {
			i = SkipJSONSpace(obj, i+1)
		}
	}
	return i + 1
}

// forEachMember calls f with the key, quotes included, and the value of each member of
// a JSON object.
func forEachMember(obj []byte, f func(key, val []byte)) {
	walkMembers(obj, func(key []byte, at int) int {
		end := SkipJSONValue(obj, at)
		f(key, obj[at:end:end])
		return end
	})
}

// decodeString returns the value of a JSON string, quotes included.
func decodeString(q []byte) (string, error) {
	if bytes.IndexByte(q, '\\') < 0 {
		return string(q[1 : len(q)-1]), nil
	}
	var s string
	err := json.Unmarshal(q, &s)
	return s, err
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
}

// appendSchema appends the tool's schema element: {"inputSchema":…,"name":…}.
func (p *projected) appendSchema(b []byte) []byte {
	b = append(b, '{')
	if p.input != nil {
		b = append(b, `"inputSchema":`...)
		b = append(b, p.input...)
		b = append(b, ',')
	}
	b = append(b, `"name":`...)
	b = append(b, p.nameJSON...)
	return append(b, '}')
}

// appendSurface appends the tool's surface element, its members in RFC 8785 key order
// (the keys are ASCII, so byte order is UTF-16 order).
func (p *projected) appendSurface(b []byte) []byte {
	b = append(b, '{')
	first := true
	for _, m := range [...]struct {
		key string
		v   []byte
	}{
		{`"annotations":`, p.annots},
		{`"description":`, p.desc},
		{`"inputSchema":`, p.input},
		{`"name":`, p.nameJSON},
		{`"outputSchema":`, p.output},
		{`"title":`, p.title},
	} {
		if m.v == nil {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, m.key...)
		b = append(b, m.v...)
	}
	return append(b, '}')
}

// surfaceSize bounds the length of p.appendSurface(nil) plus a separating comma.
func (p *projected) surfaceSize() int {
	// The six member names with their quotes, colons and commas, and the braces, are
	// under 96 bytes.
	return 96 + len(p.annots) + len(p.desc) + len(p.input) + len(p.nameJSON) + len(p.output) + len(p.title)
}

// elements recycles the buffers the elements of a fingerprinted array are written from.
var elements = sync.Pool{New: func() any { return new([]byte) }}

// ComputeFingerprints returns the four fingerprints of a tool list and the server's
// instructions (nil when the server sent none), exactly as this package's doc defines
// them. Every tool must be an object whose "name" is a string.
func ComputeFingerprints(tools []json.RawMessage, instructions *string) (Fingerprints, error) {
	return computeFingerprints(tools, instructions, false)
}

// ComputeSurface returns what ComputeFingerprints and SurfaceDocument return for the
// same tools, canonicalizing every tool once for both: the fingerprints and the surface
// document, whose digest is the surface fingerprint. A round that stores the surface
// uses it, so a list of tens of MB is put in canonical form once, not twice.
//
// It holds no canonical copy of the whole list beside the document: a first pass puts
// each tool in canonical form only to read its name (and the size of its surface
// element); a second pass, in fingerprint order, puts each tool in canonical form again
// and writes its schema element into the schema digest and its surface element into
// the document. Only tools that share their name with another are kept in canonical
// form, to order them by their elements.
func ComputeSurface(tools []json.RawMessage, instructions *string) (Fingerprints, []byte, error) {
	if len(tools) > MaxTools {
		return Fingerprints{}, nil, fmt.Errorf("%d tools exceed the cap of %d", len(tools), MaxTools)
	}
	type named struct {
		name     string
		nameJSON []byte
		index    int
	}
	ns := make([]named, len(tools))
	size := 2
	for i, raw := range tools {
		var p projected
		if err := project(&p, raw, false); err != nil {
			return Fingerprints{}, nil, fmt.Errorf("tools[%d]: %w", i, err)
		}
		ns[i] = named{name: p.name, nameJSON: bytes.Clone(p.nameJSON), index: i}
		size += p.surfaceSize()
	}
	slices.SortStableFunc(ns, func(a, b named) int { return compareUTF16(a.name, b.name) })

	var fp Fingerprints
	h := sha256.New()
	h.Write([]byte{'['})
	for i, n := range ns {
		if i > 0 {
			h.Write([]byte{','})
		}
		h.Write(n.nameJSON)
	}
	h.Write([]byte{']'})
	fp.Toolset = "sha256:" + hex.EncodeToString(h.Sum(nil))

	bufp := elements.Get().(*[]byte)
	defer elements.Put(bufp)
	schema := sha256.New()
	schema.Write([]byte{'['})
	doc := make([]byte, 1, size)
	doc[0] = '['
	first := true
	// emit writes one tool's schema and surface elements.
	emit := func(schemaOf, surfaceOf *projected) {
		b := (*bufp)[:0]
		if !first {
			b = append(b, ',')
			doc = append(doc, ',')
		}
		first = false
		b = schemaOf.appendSchema(b)
		schema.Write(b)
		*bufp = b
		doc = surfaceOf.appendSurface(doc)
	}
	for lo := 0; lo < len(ns); {
		hi := lo + 1
		for hi < len(ns) && ns[hi].name == ns[lo].name {
			hi++
		}
		if hi-lo == 1 {
			var p projected
			if err := project(&p, tools[ns[lo].index], false); err != nil {
				return Fingerprints{}, nil, fmt.Errorf("tools[%d]: %w", ns[lo].index, err)
			}
			emit(&p, &p)
			lo = hi
			continue
		}
		// Tools of one name, in list order (the sort is stable): the schema orders them
		// by inputSchema, the surface by their whole elements.
		group := make([]projected, hi-lo)
		bySchema := make([]*projected, hi-lo)
		for k := range group {
			if err := project(&group[k], tools[ns[lo+k].index], false); err != nil {
				return Fingerprints{}, nil, fmt.Errorf("tools[%d]: %w", ns[lo+k].index, err)
			}
			bySchema[k] = &group[k]
		}
		bySurface := slices.Clone(bySchema)
		slices.SortStableFunc(bySchema, func(a, b *projected) int { return bytes.Compare(a.input, b.input) })
		sortSurface(bySurface)
		for k := range group {
			emit(bySchema[k], bySurface[k])
		}
		lo = hi
	}
	schema.Write([]byte{']'})
	fp.Schema = "sha256:" + hex.EncodeToString(schema.Sum(nil))
	doc = append(doc, ']')
	fp.Surface = Digest(doc)

	var err error
	if fp.Instructions, err = instructionsDigest(instructions); err != nil {
		return Fingerprints{}, nil, err
	}
	return fp, doc, nil
}

// computeFingerprints is ComputeFingerprints; canonical says the tools are in canonical
// form already (taken from a canonicalized document).
func computeFingerprints(tools []json.RawMessage, instructions *string, canonical bool) (Fingerprints, error) {
	ps, err := projectAll(tools, canonical)
	if err != nil {
		return Fingerprints{}, err
	}
	return fingerprints(ps, instructions)
}

// projectAll projects every tool of a list of at most MaxTools.
func projectAll(tools []json.RawMessage, canonical bool) ([]projected, error) {
	if len(tools) > MaxTools {
		return nil, fmt.Errorf("%d tools exceed the cap of %d", len(tools), MaxTools)
	}
	ps := make([]projected, len(tools))
	for i, raw := range tools {
		if err := project(&ps[i], raw, canonical); err != nil {
			return nil, fmt.Errorf("tools[%d]: %w", i, err)
		}
	}
	return ps, nil
}

// fingerprints computes the four fingerprints of projected tools.
func fingerprints(ps []projected, instructions *string) (Fingerprints, error) {
	order := make([]*projected, len(ps))
	for i := range ps {
		order[i] = &ps[i]
	}
	bufp := elements.Get().(*[]byte)
	defer elements.Put(bufp)
	// The array is hashed as it is written, one element at a time: a list of 10,000
	// tools is tens of MB, which assembling would hold (and grow) for each digest.
	digest := func(el func(*projected, []byte) []byte) string {
		h := sha256.New()
		h.Write([]byte{'['})
		for i, p := range order {
			b := (*bufp)[:0]
			if i > 0 {
				b = append(b, ',')
			}
			b = el(p, b)
			h.Write(b)
			*bufp = b
		}
		h.Write([]byte{']'})
		return "sha256:" + hex.EncodeToString(h.Sum(nil))
	}
	var fp Fingerprints

	// toolset: names sorted, duplicates kept.
	slices.SortStableFunc(order, func(a, b *projected) int { return compareUTF16(a.name, b.name) })
	fp.Toolset = digest(func(p *projected, b []byte) []byte { return append(b, p.nameJSON...) })

	// schema: ties between equal names broken by the canonical inputSchema.
	slices.SortStableFunc(order, func(a, b *projected) int {
		if c := compareUTF16(a.name, b.name); c != 0 {
			return c
		}
		return bytes.Compare(a.input, b.input)
	})
	fp.Schema = digest((*projected).appendSchema)

	sortSurface(order)
	fp.Surface = digest((*projected).appendSurface)

	var err error
	if fp.Instructions, err = instructionsDigest(instructions); err != nil {
		return Fingerprints{}, err
	}
	return fp, nil
}

// instructionsDigest is the instructions fingerprint: the digest of the canonical JSON
// string of the instructions, "" when the server sent none.
func instructionsDigest(instructions *string) (string, error) {
	ins := ""
	if instructions != nil {
		ins = *instructions
	}
	if !utf8.ValidString(ins) {
		return "", errors.New("instructions: invalid UTF-8")
	}
	canon, err := Canonicalize(appendString(nil, ins))
	if err != nil {
		return "", fmt.Errorf("instructions: %w", err)
	}
	return Digest(canon), nil
}

// sortSurface puts tools in surface order: by name, ties broken by the whole canonical
// element, built only for a tie.
func sortSurface(order []*projected) {
	slices.SortStableFunc(order, func(a, b *projected) int {
		if c := compareUTF16(a.name, b.name); c != 0 {
			return c
		}
		return bytes.Compare(a.appendSurface(nil), b.appendSurface(nil))
	})
}

// SurfaceDocument returns the bytes whose digest is the surface fingerprint of tools:
// the canonical array of the tools' surface elements in fingerprint order. It is how a
// store keeps a tool surface content-addressed: Digest(doc) equals
// ComputeFingerprints(tools, …).Surface, which anyone can recheck.
func SurfaceDocument(tools []json.RawMessage) ([]byte, error) {
	ps, err := projectAll(tools, false)
	if err != nil {
		return nil, err
	}
	order := make([]*projected, len(ps))
	for i := range ps {
		order[i] = &ps[i]
	}
	sortSurface(order)
	return surfaceDocument(order), nil
}

// surfaceDocument writes the surface elements of tools in surface order into one array.
func surfaceDocument(order []*projected) []byte {
	// Sized once: the document is tens of MB for a list of 10,000 tools.
	size := 2
	for _, p := range order {
		size += p.surfaceSize()
	}
	b := make([]byte, 1, size)
	b[0] = '['
	for i, p := range order {
		if i > 0 {
			b = append(b, ',')
		}
		b = p.appendSurface(b)
	}
	return append(b, ']')
}

func project(p *projected, raw json.RawMessage, canonical bool) error {
	// One pass checks the whole tool and puts it in canonical form; its members are then
	// slices of that form. Canonical keys are NFC, which leaves these ASCII keys as they are.
	c := []byte(raw)
	if !canonical {
		var err error
		if c, err = Canonicalize(raw); err != nil {
			return err
		}
	}
	if c[0] != '{' {
		return errors.New("tool is not a JSON object")
	}
	forEachMember(c, p.set)
	return p.finish()
}

// set records one member of a canonical tool object; key includes its quotes.
func (p *projected) set(key, val []byte) {
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
}

// finish checks the tool's name and decodes it for sorting.
func (p *projected) finish() error {
	if p.nameJSON == nil {
		return errors.New(`tool has no "name"`)
	}
	if p.nameJSON[0] != '"' {
		return errors.New(`tool "name" is not a string`)
	}
	var err error
	p.name, err = decodeString(p.nameJSON)
	return err
}

// compareUTF16 orders two valid UTF-8 strings by their UTF-16 code units, the order
// RFC 8785 uses for object keys. It differs from byte order only between U+E000–U+FFFF
// and supplementary characters, which UTF-16 places before them.
func compareUTF16[T string | []byte](a, b T) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		return len(a) - len(b)
	}
	if a[i] < utf8.RuneSelf && b[i] < utf8.RuneSelf {
		return int(a[i]) - int(b[i])
	}
	// Back up to the start of the rune holding the first difference; the equal prefix
	// makes it a rune start in both.
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, _ := utf8.DecodeRuneInString(string(a[i:]))
	rb, _ := utf8.DecodeRuneInString(string(b[i:]))
	return int(utf16Key(ra)) - int(utf16Key(rb))
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
