package rawjson

import (
	"encoding/json"
	"testing"
)

// Unquote and UnquoteView read every string as encoding/json does.
func TestUnquoteMatchesEncodingJSON(t *testing.T) {
	for _, q := range []string{`""`, `"a"`, `"caf\u00e9"`, `"é ✓ 😀"`, "\"bad\xff\"", "\"\xed\xa0\x80\"", `"\ud800"`,
		`"\ud83d\ude00"`, `"\"\\\/\b\f\n\r\t"`, `"x\u0000y"`} {
		var want string
		if err := json.Unmarshal([]byte(q), &want); err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		if got := Unquote([]byte(q)); got != want {
			t.Errorf("Unquote(%q) = %q, want %q", q, got, want)
		}
		if got := UnquoteView([]byte(q)); got != want {
			t.Errorf("UnquoteView(%q) = %q, want %q", q, got, want)
		}
	}
}

// Walk visits nothing in a document json.Valid refuses.
func TestWalkRefusesInvalid(t *testing.T) {
	for _, doc := range []string{``, `{"a":"b"`, `{"a":"b"}x`, `["a",]`} {
		if Walk([]byte(doc), 64, func([]string, string, bool) { t.Errorf("%q: visited", doc) }) {
			t.Errorf("Walk(%q) = true", doc)
		}
	}
}
