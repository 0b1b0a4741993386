package probe

import (
	"bytes"
	"encoding/json"
)

// The probe reads tool lists of up to 32 MiB from the recorded bodies. Decoding them
// into json.RawMessage values copies every byte once per level (the response, its
// result, its tools array, each tool), so these helpers split valid JSON into
// subslices of the input instead: the tools of a page are views of the page's
// recorded body, which the probe keeps anyway. Each returned slice has its capacity
// cut to its length, so appending to it can never write into the body.

// member is one member of a JSON object: its name, unescaped as encoding/json
// unescapes it, and its value as a view of the input.
type member struct {
	name  string
	value json.RawMessage
}

// members returns the members of the JSON object raw in their order, duplicates
// included; ok is false when raw is not one valid JSON object.
func members(raw []byte) (out []member, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
		return nil, false
	}
	i := skipSpace(raw, 1)
	if raw[i] == '}' {
		return []member{}, true
	}
	for {
		end := skipString(raw, i)
		name := raw[i:end]
		i = skipSpace(raw, end)
		i = skipSpace(raw, i+1) // the colon
		vend := skipValue(raw, i)
		out = append(out, member{name: memberName(name), value: view(raw, i, vend)})
		i = skipSpace(raw, vend)
		if raw[i] == '}' {
			return out, true
		}
		i = skipSpace(raw, i+1) // the comma
	}
}

// elements returns the elements of the JSON array raw as views of raw; ok is false
// when raw is not one valid JSON array.
func elements(raw []byte) (out []json.RawMessage, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' || !json.Valid(raw) {
		return nil, false
	}
	i := skipSpace(raw, 1)
	out = []json.RawMessage{}
	if raw[i] == ']' {
		return out, true
	}
	for {
		end := skipValue(raw, i)
		out = append(out, view(raw, i, end))
		i = skipSpace(raw, end)
		if raw[i] == ']' {
			return out, true
		}
		i = skipSpace(raw, i+1)
	}
}

// view is raw[i:j] with its capacity cut to its length.
func view(raw []byte, i, j int) json.RawMessage { return raw[i:j:j] }

// memberName unescapes a quoted member name the way encoding/json does (invalid
// UTF-8 becomes U+FFFD), copying it only when it needs unescaping.
func memberName(quoted []byte) string {
	plain := true
	for _, c := range quoted[1 : len(quoted)-1] {
		if c == '\\' || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		return string(quoted[1 : len(quoted)-1])
	}
	var s string
	_ = json.Unmarshal(quoted, &s) // valid: the whole document was validated
	return s
}

// The skip functions walk JSON already checked by json.Valid.

func skipSpace(raw []byte, i int) int {
	for i < len(raw) {
		switch raw[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index after the string that starts at raw[i] == '"'.
func skipString(raw []byte, i int) int {
	for i++; i < len(raw); i++ {
		switch raw[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// skipValue returns the index after the value that starts at raw[i].
func skipValue(raw []byte, i int) int {
	switch raw[i] {
	case '"':
		return skipString(raw, i)
	case '{', '[':
		depth := 0
		for ; i < len(raw); i++ {
			switch raw[i] {
			case '"':
				i = skipString(raw, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	// A number or a literal: up to the next delimiter.
	for i < len(raw) {
		switch raw[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}
