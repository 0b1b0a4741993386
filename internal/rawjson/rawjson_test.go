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

// TestTruncated: the skippers (attest's) stop at the end of unterminated input, and
// Members, Elements and Walk refuse every truncated prefix of a document.
func TestTruncated(t *testing.T) {
	for _, tt := range []struct {
		d        string
		str, val int
	}{{`"open`, 5, 5}, {`"open\"`, 7, 7}, {`"a\\"`, 5, 5}} {
		if got := SkipString([]byte(tt.d), 0); got != tt.str {
			t.Errorf("SkipString(%q) = %d, want %d", tt.d, got, tt.str)
		}
		if got := SkipValue([]byte(tt.d), 0); got != tt.val {
			t.Errorf("SkipValue(%q) = %d, want %d", tt.d, got, tt.val)
		}
	}
	if got := SkipValue([]byte(`{"a":[1`), 0); got != 7 {
		t.Errorf("SkipValue of an open object = %d, want 7", got)
	}
	if got := SkipSpace([]byte("  "), 0); got != 2 {
		t.Errorf("SkipSpace = %d, want 2", got)
	}
	obj := `{"a":"x\"}","b":[1,{"c":"]"}],"d":null}`
	arr := `["x\"]",{"a":"\\"},[1,2],true]`
	for n := range len(obj) {
		if _, ok := Members([]byte(obj[:n])); ok {
			t.Errorf("Members(%q) accepted it", obj[:n])
		}
		if Walk([]byte(obj[:n]), 8, func([]string, string, bool) {}) {
			t.Errorf("Walk(%q) accepted it", obj[:n])
		}
	}
	for n := range len(arr) {
		if _, ok := Elements([]byte(arr[:n])); ok {
			t.Errorf("Elements(%q) accepted it", arr[:n])
		}
	}
	if ms, ok := Members([]byte(obj)); !ok || len(ms) != 3 || string(ms[0].Value) != `"x\"}"` {
		t.Errorf("Members(%q) = %q, %v", obj, ms, ok)
	}
	if es, ok := Elements([]byte(arr)); !ok || len(es) != 4 || string(es[0]) != `"x\"]"` {
		t.Errorf("Elements(%q) = %q, %v", arr, es, ok)
	}
}
