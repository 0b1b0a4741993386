package attest

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSkipJSONString: the index past every kind of string, escaped quotes and runs of
// backslashes included, agrees with encoding/json's own end of the string; an
// unterminated string ends the input.
func TestSkipJSONString(t *testing.T) {
	for _, tt := range []struct {
		d    string
		i    int
		want int
	}{
		{`""`, 0, 2},
		{`"a"`, 0, 3},
		{`"a",1`, 0, 3},
		{`{"k":"v"}`, 1, 4},
		{`{"k":"v"}`, 5, 8},
		{`"a\"b"`, 0, 6},
		{`"a\\"`, 0, 5},
		{`"a\\\"b"x`, 0, 8},
		{`"\\\\"`, 0, 6},
		{`"\u0022"`, 0, 8},
		{`"é ✓ 😀"`, 0, len(`"é ✓ 😀"`)},
		{`x"\\"`, 1, 5},
		{`"open`, 0, 5},
		{`"open\"`, 0, 7},
	} {
		if got := SkipJSONString([]byte(tt.d), tt.i); got != tt.want {
			t.Errorf("SkipJSONString(%q, %d) = %d, want %d", tt.d, tt.i, got, tt.want)
		}
	}
	// Against encoding/json: the decoder reads exactly the string SkipJSONString skips.
	long := `"` + strings.Repeat(`ab\\\"c\n`, 1000) + `"`
	for _, s := range []string{long, `"\\"`, `"\"\\\""`, `"` + strings.Repeat(`\\`, 33) + `"`} {
		d := []byte(s + `,"next"`)
		end := SkipJSONString(d, 0)
		var v string
		if err := json.Unmarshal(d[:end], &v); err != nil || end != len(s) {
			t.Errorf("%.40q…: end %d (want %d), %v", s, end, len(s), err)
		}
	}
}

// TestSkipJSONValue: every kind of value ends where encoding/json ends it, and truncated
// input (a string, an object or an array that does not end, or i at the end) gives
// len(d) or i, never an index past d.
func TestSkipJSONValue(t *testing.T) {
	for _, tt := range []struct {
		d    string
		i    int
		want int
	}{
		{`"a",1`, 0, 3},
		{`{"a":"}"},1`, 0, 9},
		{`[1,{"]":[2]},"\\"],0`, 0, 18},
		{`-1.5e3,`, 0, 6},
		{`true}`, 0, 4},
		{`null `, 0, 4},
		{`{"k":1}`, 5, 6},
		// Truncated input.
		{`"open`, 0, 5},
		{`"open\"`, 0, 7},
		{`{"a":1`, 0, 6},
		{`[1,[2]`, 0, 6},
		{`{"a":"}`, 0, 7},
		{`[`, 0, 1},
		{`12`, 0, 2},
		{`{}`, 2, 2},
		{``, 0, 0},
	} {
		d := []byte(tt.d)
		if got := SkipJSONValue(d, tt.i); got != tt.want {
			t.Errorf("SkipJSONValue(%q, %d) = %d, want %d", tt.d, tt.i, got, tt.want)
		}
	}
	for _, tt := range []struct {
		d       string
		i, want int
	}{{" \t\r\nx", 0, 4}, {"x ", 0, 0}, {"  ", 0, 2}, {"", 0, 0}, {"a ", 2, 2}} {
		if got := SkipJSONSpace([]byte(tt.d), tt.i); got != tt.want {
			t.Errorf("SkipJSONSpace(%q, %d) = %d, want %d", tt.d, tt.i, got, tt.want)
		}
	}
	// Every prefix of a document: the result stays within the prefix.
	doc := []byte(`{"a":["x\"y",{"b":"\\"}],"c":-1.5,"d":true}`)
	for n := 1; n <= len(doc); n++ {
		if got := SkipJSONValue(doc[:n], 0); got > n {
			t.Errorf("SkipJSONValue(%q, 0) = %d, past the end", doc[:n], got)
		}
	}
}

// TestFingerprintsRefuseTruncated: the fingerprints scan only what Canonicalize and
// CheckJSON accepted, so a truncated document is refused before any skipper sees it.
func TestFingerprintsRefuseTruncated(t *testing.T) {
	doc := `{"tools":[{"name":"a\"b","description":"x\\","inputSchema":{"type":"object"}}]}`
	for n := range len(doc) {
		if _, err := FingerprintDocument([]byte(doc[:n])); err == nil {
			t.Errorf("FingerprintDocument(%q) accepted it", doc[:n])
		}
		if _, _, err := ParseToolsDocument([]byte(doc[:n])); err == nil {
			t.Errorf("ParseToolsDocument(%q) accepted it", doc[:n])
		}
	}
	if _, err := FingerprintDocument([]byte(doc)); err != nil {
		t.Fatal(err)
	}
}
