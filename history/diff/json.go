package diff

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/internal/rawjson"
	"golang.org/x/text/unicode/norm"
)

// value is a decoded JSON value of canonical bytes; raw is its canonical encoding.
type value struct {
	kind  byte // '{', '[', '"', '0' (a number), 't', 'f' or 'n'
	raw   string
	str   string   // a string's value
	mems  []member // an object's members, in canonical order
	elems []*value // an array's elements
}

type member struct {
	key string
	val *value
}

// get returns the value of the member key of an object, or nil.
func (v *value) get(key string) *value {
	if v == nil || v.kind != '{' {
		return nil
	}
	for i := range v.mems {
		if v.mems[i].key == key {
			return v.mems[i].val
		}
	}
	return nil
}

// object returns v when it is an object, or nil.
func (v *value) object() *value {
	if v == nil || v.kind != '{' {
		return nil
	}
	return v
}

var errSyntax = errors.New("malformed JSON")

// decoder decodes canonical JSON (the output of attest.Canonicalize). It still checks
// every byte it reads, so it fails rather than panics on anything else. Strings without
// escapes, raw encodings included, are substrings of d, so decoding allocates little:
// values, members and elements come from slabs.
type decoder struct {
	d     string
	i     int
	mems  []member // the members of the objects being decoded, innermost last
	elems []*value // the elements of the arrays being decoded, innermost last
	// The slabs values and their members and elements are carved from, shared by all
	// the values one decoder decodes.
	slab     []value
	memSlab  []member
	elemSlab []*value
}

func (dec *decoder) alloc(kind byte) *value {
	if len(dec.slab) == 0 {
		dec.slab = make([]value, 256)
	}
	v := &dec.slab[0]
	dec.slab = dec.slab[1:]
	v.kind = kind
	return v
}

// carve returns a slab slice holding a copy of l.
func carve[T any](slab *[]T, l []T) []T {
	if len(l) > len(*slab) {
		*slab = make([]T, max(len(l), 512))
	}
	c := (*slab)[:len(l):len(l)]
	*slab = (*slab)[len(l):]
	copy(c, l)
	return c
}

// decode decodes canonical JSON.
func (dec *decoder) decode(d string) (*value, error) {
	dec.d, dec.i = d, 0
	v, err := dec.value(0)
	if err != nil {
		return nil, err
	}
	if dec.i != len(d) {
		return nil, errSyntax
	}
	return v, nil
}

func (dec *decoder) value(depth int) (*value, error) {
	if depth > attest.MaxDepth {
		return nil, fmt.Errorf("%w: JSON nested deeper than %d", ErrTooLarge, attest.MaxDepth)
	}
	if dec.i >= len(dec.d) {
		return nil, errSyntax
	}
	start := dec.i
	v := dec.alloc(dec.d[dec.i])
	switch v.kind {
	case '{':
		dec.i++
		base := len(dec.mems)
		for dec.i < len(dec.d) && dec.d[dec.i] != '}' {
			if len(dec.mems) > base {
				if dec.d[dec.i] != ',' {
					return nil, errSyntax
				}
				dec.i++
			}
			k, err := dec.string()
			if err != nil {
				return nil, err
			}
			if dec.i >= len(dec.d) || dec.d[dec.i] != ':' {
				return nil, errSyntax
			}
			dec.i++
			el, err := dec.value(depth + 1)
			if err != nil {
				return nil, err
			}
			dec.mems = append(dec.mems, member{k, el})
		}
		if dec.i >= len(dec.d) {
			return nil, errSyntax
		}
		dec.i++
		v.mems = carve(&dec.memSlab, dec.mems[base:])
		dec.mems = dec.mems[:base]
	case '[':
		dec.i++
		base := len(dec.elems)
		for dec.i < len(dec.d) && dec.d[dec.i] != ']' {
			if len(dec.elems) > base {
				if dec.d[dec.i] != ',' {
					return nil, errSyntax
				}
				dec.i++
			}
			el, err := dec.value(depth + 1)
			if err != nil {
				return nil, err
			}
			dec.elems = append(dec.elems, el)
		}
		if dec.i >= len(dec.d) {
			return nil, errSyntax
		}
		dec.i++
		v.elems = carve(&dec.elemSlab, dec.elems[base:])
		dec.elems = dec.elems[:base]
	case '"':
		s, err := dec.string()
		if err != nil {
			return nil, err
		}
		v.str = s
	case 't', 'f', 'n':
		lit := "null"
		switch v.kind {
		case 't':
			lit = "true"
		case 'f':
			lit = "false"
		}
		if !strings.HasPrefix(dec.d[dec.i:], lit) {
			return nil, errSyntax
		}
		dec.i += len(lit)
	default:
		v.kind = '0'
		for dec.i < len(dec.d) && isNumberByte(dec.d[dec.i]) {
			dec.i++
		}
		if dec.i == start {
			return nil, errSyntax
		}
	}
	v.raw = dec.d[start:dec.i]
	return v, nil
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// string decodes the JSON string at dec.i (rawjson.ReadString: a string without
// escapes is a substring of d).
func (dec *decoder) string() (string, error) {
	s, end, err := rawjson.ReadString(dec.d, dec.i)
	if err != nil {
		return "", errSyntax
	}
	dec.i = end
	return s, nil
}

// rawToolName returns the NFC "name" of a tool given as JSON that attest.CheckJSON
// accepted (any whitespace, members in any order).
func rawToolName(raw []byte) (string, error) {
	i := attest.SkipJSONSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return "", errNotObject
	}
	i = attest.SkipJSONSpace(raw, i+1)
	for i < len(raw) && raw[i] == '"' {
		kEnd := attest.SkipJSONString(raw, i)
		key := raw[i:kEnd]
		isName := string(key) == `"name"`
		if !isName && bytes.IndexByte(key, '\\') >= 0 {
			k, _, err := rawjson.ReadString(key, 0)
			if err != nil {
				return "", errSyntax
			}
			isName = k == "name"
		}
		i = attest.SkipJSONSpace(raw, kEnd)
		if i >= len(raw) || raw[i] != ':' {
			return "", errSyntax
		}
		i = attest.SkipJSONSpace(raw, i+1)
		if isName {
			name, _, err := rawjson.ReadString(raw, i)
			if err != nil {
				return "", errNameNotString
			}
			return nfc(name), nil
		}
		end := attest.SkipJSONValue(raw, i)
		if end <= i {
			return "", errSyntax
		}
		i = attest.SkipJSONSpace(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = attest.SkipJSONSpace(raw, i+1)
		}
	}
	return "", errNoName
}

var (
	errNotObject     = errors.New("tool is not a JSON object")
	errNoName        = errors.New(`tool has no "name"`)
	errNameNotString = errors.New(`tool "name" is not a string`)
)

func nfc(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return norm.NFC.String(s)
		}
	}
	return s
}
