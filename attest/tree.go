package attest

import (
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// errTree reports bytes that are not in canonical form; callers only hand this parser
// bytes that Canonicalize produced or compared equal to, so it signals a bug or misuse.
var errTree = errors.New("attest: malformed canonical JSON")

// parseTree parses JSON that has passed CheckJSON (or is canonical) into generic values
// as encoding/json with UseNumber would: map[string]any, []any, string, json.Number, bool
// and nil. Relying on the strict scanner having run, it is several times faster than
// encoding/json, which matters on the verifier's hot path.
//
// spans maps each member of a top-level object to the bytes of its value in data.
func parseTree(data []byte) (v any, spans map[string][]byte, err error) {
	p := treeParser{data: data, spans: map[string][]byte{}}
	v, err = p.value(0)
	if err != nil {
		return nil, nil, err
	}
	p.space()
	if p.pos != len(data) {
		return nil, nil, errTree
	}
	return v, p.spans, nil
}

type treeParser struct {
	data  []byte
	pos   int
	spans map[string][]byte
}

func (p *treeParser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *treeParser) value(depth int) (any, error) {
	p.space()
	if p.pos >= len(p.data) || depth > MaxDepth {
		return nil, errTree
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		p.pos++
		m := map[string]any{}
		if p.peek('}') {
			return m, nil
		}
		for {
			k, err := p.string()
			if err != nil || !p.peek(':') {
				return nil, errTree
			}
			start := p.pos
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			m[k] = v
			if depth == 0 {
				p.spans[k] = p.data[start:p.pos]
			}
			if p.peek(',') {
				continue
			}
			if p.peek('}') {
				return m, nil
			}
			return nil, errTree
		}
	case c == '[':
		p.pos++
		a := []any{}
		if p.peek(']') {
			return a, nil
		}
		for {
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
			if p.peek(',') {
				continue
			}
			if p.peek(']') {
				return a, nil
			}
			return nil, errTree
		}
	case c == '"':
		return p.string()
	case c == 't' && p.lit("true"):
		return true, nil
	case c == 'f' && p.lit("false"):
		return false, nil
	case c == 'n' && p.lit("null"):
		return nil, nil
	default:
		start := p.pos
		for p.pos < len(p.data) {
			switch p.data[p.pos] {
			case ',', ']', '}', ' ', '\t', '\n', '\r':
				goto done
			}
			p.pos++
		}
	done:
		if start == p.pos {
			return nil, errTree
		}
		return json.Number(p.data[start:p.pos]), nil
	}
}

func (p *treeParser) peek(c byte) bool {
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

func (p *treeParser) lit(s string) bool {
	if len(p.data)-p.pos >= len(s) && string(p.data[p.pos:p.pos+len(s)]) == s {
		p.pos += len(s)
		return true
	}
	return false
}

func (p *treeParser) string() (string, error) {
	if !p.peek('"') {
		return "", errTree
	}
	start := p.pos
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case '"':
			s := string(p.data[start:p.pos])
			p.pos++
			return s, nil
		case '\\':
			return p.escaped(start)
		}
		p.pos++
	}
	return "", errTree
}

func (p *treeParser) escaped(start int) (string, error) {
	buf := append([]byte(nil), p.data[start:p.pos]...)
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch c {
		case '"':
			p.pos++
			return string(buf), nil
		case '\\':
			if p.pos+1 >= len(p.data) {
				return "", errTree
			}
			e := p.data[p.pos+1]
			p.pos += 2
			switch e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				buf = append(buf, unescape[e])
			case 'u':
				if p.pos+4 > len(p.data) {
					return "", errTree
				}
				r, err := strconv.ParseUint(string(p.data[p.pos:p.pos+4]), 16, 16)
				if err != nil {
					return "", errTree
				}
				p.pos += 4
				if utf16.IsSurrogate(rune(r)) {
					// CheckJSON admitted only well-formed pairs.
					if p.pos+6 > len(p.data) || p.data[p.pos] != '\\' || p.data[p.pos+1] != 'u' {
						return "", errTree
					}
					r2, err := strconv.ParseUint(string(p.data[p.pos+2:p.pos+6]), 16, 16)
					if err != nil {
						return "", errTree
					}
					p.pos += 6
					r = uint64(utf16.DecodeRune(rune(r), rune(r2)))
				}
				buf = utf8.AppendRune(buf, rune(r))
			default:
				return "", errTree
			}
		default:
			buf = append(buf, c)
			p.pos++
		}
	}
	return "", errTree
}
