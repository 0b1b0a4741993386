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
