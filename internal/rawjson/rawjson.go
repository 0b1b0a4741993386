// Package rawjson splits and walks JSON without copying it: the values it returns are
// views of the input, and strings that need no unescaping are read in place.
//
// The probe reads tool lists of up to 32 MiB from the recorded bodies, and the checks
// walk every tool of them. Decoding them into json.RawMessage values copies every byte
// once per level (the response, its result, its tools array, each tool), and a
// json.Decoder allocates a value for every token; these helpers do neither. Each view
// returned has its capacity cut to its length, so appending to it can never write into
// the input.
//
// Every JSON string is read as encoding/json reads it, by NextRune (unescape.go), which
// web's tool pages and history/diff use as well: it is the one home of that rule.
//
// Members and Elements check the input with json.Valid first. The Skip functions and
// Walk's scanner assume JSON that json.Valid accepted and never read past the input.
package rawjson

import (
	"bytes"
	"encoding/json"
	"unsafe"

	"github.com/probity-dev/probity/attest"
)

// Member is one member of a JSON object: its name, unescaped as encoding/json unescapes
// it, and its value as a view of the input.
type Member struct {
	Name  string
	Value json.RawMessage
}

// Members returns the members of the JSON object raw in their order, duplicates
// included; ok is false when raw is not one valid JSON object.
func Members(raw []byte) (out []Member, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
		return nil, false
	}
	i := SkipSpace(raw, 1)
	if raw[i] == '}' {
		return []Member{}, true
	}
	for {
		end := SkipString(raw, i)
		name := raw[i:end]
		i = SkipSpace(raw, end)
		i = SkipSpace(raw, i+1) // the colon
		vend := SkipValue(raw, i)
		out = append(out, Member{Name: Unquote(name), Value: view(raw, i, vend)})
		i = SkipSpace(raw, vend)
		if raw[i] == '}' {
			return out, true
		}
		i = SkipSpace(raw, i+1) // the comma
	}
}

// Elements returns the elements of the JSON array raw as views of raw; ok is false when
// raw is not one valid JSON array.
func Elements(raw []byte) (out []json.RawMessage, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' || !json.Valid(raw) {
		return nil, false
	}
	i := SkipSpace(raw, 1)
	out = []json.RawMessage{}
	if raw[i] == ']' {
		return out, true
	}
	for {
		end := SkipValue(raw, i)
		out = append(out, view(raw, i, end))
		i = SkipSpace(raw, end)
		if raw[i] == ']' {
			return out, true
		}
		i = SkipSpace(raw, i+1)
	}
}

// view is raw[i:j] with its capacity cut to its length.
func view(raw []byte, i, j int) json.RawMessage { return raw[i:j:j] }

// Unquote returns the value of a quoted JSON string, unescaped as encoding/json does
// (NextRune: invalid UTF-8 and lone surrogates become U+FFFD), copying it only when it
// needs unescaping. It is for strings json.Valid accepted; anything else reads as "".
func Unquote(quoted []byte) string {
	v, _, _ := ReadString(quoted, 0)
	return v
}

// UnquoteView is Unquote without the copy: a string that needs no unescaping shares the
// bytes of quoted, so it is valid only as long as they do not change. It is for reading
// text in place, not for keeping it.
func UnquoteView(quoted []byte) string {
	end, plain, err := ScanString(quoted, 0)
	switch {
	case err != nil:
		return ""
	case !plain:
		return unescaped(quoted[1 : end-1])
	case end == 2:
		return ""
	}
	return unsafe.String(&quoted[1], end-2)
}

// SkipSpace returns the index of the first byte at or after i that is not JSON space
// (attest.SkipJSONSpace, the one copy of that rule).
func SkipSpace(raw []byte, i int) int { return attest.SkipJSONSpace(raw, i) }

// SkipString returns the index after the string that starts at raw[i] == '"', or
// len(raw) when it does not end (attest.SkipJSONString, the one copy of that rule).
func SkipString(raw []byte, i int) int { return attest.SkipJSONString(raw, i) }

// SkipValue returns the index after the value that starts at raw[i], or len(raw) when
// it does not end (attest.SkipJSONValue, the one copy of that rule).
func SkipValue(raw []byte, i int) int { return attest.SkipJSONValue(raw, i) }
