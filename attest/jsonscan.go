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
