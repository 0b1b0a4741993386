package attest

import "bytes"

// SkipJSONString returns the index just past the JSON string whose opening quote is at
// d[i], or len(d) when the string does not end. It does not check the string: it is
// for JSON that CheckJSON or Canonicalize has accepted, read in place by the
// fingerprints here and by the surface comparison in history/diff, the one copy of
// this rule. A quote ends the string unless an odd number of backslashes precede it;
// bytes.IndexByte finds the candidate quotes, so a long description costs one
// vectorized scan.
func SkipJSONString(d []byte, i int) int {
	i++
	for {
		j := bytes.IndexByte(d[i:], '"')
		if j < 0 {
			return len(d)
		}
		i += j
		n := 0
		for k := i - 1; k >= 0 && d[k] == '\\'; k-- {
			n++
		}
		i++
		if n%2 == 0 {
			return i
		}
	}
}

// SkipJSONSpace returns the index of the first byte at or after i that is not JSON
// whitespace (space, tab, newline, carriage return), or len(d). It is the one copy of
// this rule for the in-place scanners here, in history, history/diff and
// internal/rawjson.
func SkipJSONSpace(d []byte, i int) int {
	for i < len(d) && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r') {
		i++
	}
	return i
}

// SkipJSONValue returns the index just past the JSON value that starts at d[i]. Like
// SkipJSONString it does not check the value: a string or a container that does not
// end ends the input (the result is len(d)), a number or a literal ends at the next
// delimiter, and i at or past the end of d is returned as it is. It never reads past
// d, so a caller scanning truncated input sees len(d), never an index beyond it.
func SkipJSONValue(d []byte, i int) int {
	if i >= len(d) {
		return i
	}
	switch d[i] {
	case '"':
		return SkipJSONString(d, i)
	case '{', '[':
		depth := 0
		for i < len(d) {
			switch d[i] {
			case '"':
				i = SkipJSONString(d, i)
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
	}
	// A number or a literal: up to the next delimiter.
	for i < len(d) && d[i] != ',' && d[i] != '}' && d[i] != ']' && d[i] != ' ' && d[i] != '\t' && d[i] != '\n' && d[i] != '\r' {
		i++
	}
	return i
}
