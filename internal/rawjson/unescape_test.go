package rawjson

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// unescapeSeeds are string contents at the edges of the rule: every escape, surrogate
// pairs, lone, reversed and mispaired surrogates, surrogates and overlong forms in
// UTF-8, invalid bytes, U+FFFD itself, controls, quotes and escapes cut short.
var unescapeSeeds = []string{
	``, `a`, `caf\u00e9`, "é ✓ 😀", `\"\\\/\b\f\n\r\t`, `x\u0000y`, `\u00E9\u00e9`,
	`\ud83d\ude00`, `\uD83D\uDE00`, `\ud800`, `\udc00`, `\ude00\ud83d`, `\ud800\ud800\udc00`,
	`\ud800\u0041`, `\ud800x`, `\ud800\`, `\ud800\u`, `\ud800\udc0`, `\ud800\uZZZZ`, `a\udfff\udbff`,
	"bad\xff", "\xed\xa0\x80", "\xc0\xaf", "\xef\xbf\xbd", `\ufffd`, "\xf4\x90\x80\x80", "\xe2\x82",
	"tab\there", "a\x00", "\x1f", "a\"b", `\`, `a\`, `\x`, `\u12`, `\u12g4`, `\U0041`, "\x7f\u00a0",
}

// FuzzUnescape: every reading of a string's content here (AppendUnescaped, ReadString
// on []byte and string, Unquote, UnquoteView and NextRune one character at a time)
// agrees with encoding/json: it refuses what json.Unmarshal refuses and reads what it
// reads.
func FuzzUnescape(f *testing.F) {
	for _, s := range unescapeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, content []byte) {
		quoted := append(append([]byte{'"'}, content...), '"')
		var want string
		wantErr := json.Unmarshal(quoted, &want)

		got, err := AppendUnescaped(nil, content)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("AppendUnescaped(%q): error %v, encoding/json: %v", content, err, wantErr)
		}
		if err == nil && string(got) != want {
			t.Fatalf("AppendUnescaped(%q) = %q, encoding/json reads %q", content, got, want)
		}
		if gs, err := AppendUnescaped(nil, string(content)); string(gs) != string(got) || (err == nil) != (wantErr == nil) {
			t.Fatalf("AppendUnescaped(string %q) = %q, %v; from []byte %q", content, gs, err, got)
		}

		// NextRune, one character at a time, reads the same characters, each valid.
		var byRune []byte
		var nerr error
		for i := 0; i < len(content) && nerr == nil; {
			var r rune
			var next int
			r, next, nerr = NextRune(content, i)
			if nerr != nil {
				break
			}
			if next <= i || next > len(content) || !utf8.ValidRune(r) {
				t.Fatalf("NextRune(%q, %d) = %U, %d", content, i, r, next)
			}
			byRune, i = utf8.AppendRune(byRune, r), next
		}
		if (nerr == nil) != (wantErr == nil) || (nerr == nil && string(byRune) != want) {
			t.Fatalf("NextRune over %q: %q, %v; encoding/json: %q, %v", content, byRune, nerr, want, wantErr)
		}

		// ReadString reads the whole quoted string exactly when encoding/json does
		// (content with a quote of its own ends the string early).
		for _, d := range []any{quoted, string(quoted)} {
			var v string
			var end int
			var err error
			switch d := d.(type) {
			case []byte:
				v, end, err = ReadString(d, 0)
			case string:
				v, end, err = ReadString(d, 0)
			}
			whole := err == nil && end == len(quoted)
			if whole != (wantErr == nil) || (whole && v != want) {
				t.Fatalf("ReadString(%T %q) = %q, %d, %v; encoding/json: %q, %v", d, quoted, v, end, err, want, wantErr)
			}
		}
		if wantErr == nil {
			if got := Unquote(quoted); got != want {
				t.Fatalf("Unquote(%q) = %q, want %q", quoted, got, want)
			}
			if got := UnquoteView(quoted); got != want {
				t.Fatalf("UnquoteView(%q) = %q, want %q", quoted, got, want)
			}
		}
	})
}

// ReadString and NextRune report where each string and character ends: a surrogate
// pair is one character of twelve bytes, a lone surrogate six, an invalid byte one;
// a plain string read from a Go string is a substring of it.
func TestReadStringPositions(t *testing.T) {
	for _, tt := range []struct {
		s    string
		i    int
		r    rune
		next int
	}{
		{`\ud83d\ude00`, 0, '😀', 12}, {`\ud800\u0041`, 0, utf8.RuneError, 6}, {`\ud800\u0041`, 6, 'A', 12},
		{`\udc00\ud800`, 0, utf8.RuneError, 6}, {"x\xffy", 1, utf8.RuneError, 2}, {"\xed\xa0\x80", 0, utf8.RuneError, 1},
		{"é", 0, 'é', 2}, {`\n`, 0, '\n', 2}, {"\xef\xbf\xbd", 0, utf8.RuneError, 3},
	} {
		if r, next, err := NextRune(tt.s, tt.i); r != tt.r || next != tt.next || err != nil {
			t.Errorf("NextRune(%q, %d) = %U, %d, %v; want %U, %d", tt.s, tt.i, r, next, err, tt.r, tt.next)
		}
	}
	doc := ` {"k\"ey": "caf\u00e9", "plain": "é"}`
	for _, tt := range []struct {
		i, end int
		v      string
		plain  bool
	}{{2, 9, `k"ey`, false}, {11, 22, "café", false}, {24, 31, "plain", true}, {33, 37, "é", true}} {
		end, plain, err := ScanString(doc, tt.i)
		if end != tt.end || plain != tt.plain || err != nil {
			t.Errorf("ScanString(doc, %d) = %d, %v, %v; want %d, %v", tt.i, end, plain, err, tt.end, tt.plain)
		}
		v, end, err := ReadString(doc, tt.i)
		if v != tt.v || end != tt.end || err != nil {
			t.Errorf("ReadString(doc, %d) = %q, %d, %v; want %q, %d", tt.i, v, end, err, tt.v, tt.end)
		}
		if tt.plain && strings.Index(doc, v) != tt.i+1 {
			t.Errorf("ReadString(doc, %d) = %q, not the substring at %d", tt.i, v, tt.i+1)
		}
	}
	for _, bad := range []string{``, `x`, `"open`, `"a\`, `"\u12"`, "\"a\x01\"", `"\q"`} {
		if v, end, err := ReadString(bad, 0); err == nil {
			t.Errorf("ReadString(%q) = %q, %d, accepted it", bad, v, end)
		}
	}
}

// A plain string's value shares the bytes of its document, with no copy.
func TestReadStringSubstringAllocs(t *testing.T) {
	doc := strings.Repeat("x", 100) + `"a plain string with ünïcödé"`
	if n := testing.AllocsPerRun(100, func() {
		if _, _, err := ReadString(doc, 100); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("ReadString of a plain string in a Go string: %v allocations, want 0", n)
	}
}

// SkipPlain, eight bytes at a time, stops where a byte-by-byte scan stops: at every
// byte NextRune must read, at every position of a word and with every offset.
func TestSkipPlain(t *testing.T) {
	naive := func(s []byte, i int) int {
		for i < len(s) && !(s[i] == '"' || s[i] == '\\' || s[i] < ' ' || s[i] >= utf8.RuneSelf) {
			i++
		}
		return i
	}
	for c := range 256 {
		for at := range 20 {
			s := []byte(strings.Repeat("a ~!#[]}", 3)[:20])
			s[at] = byte(c)
			for from := range 4 {
				if got, want := SkipPlain(s, from), naive(s, from); got != want {
					t.Fatalf("SkipPlain(%q, %d) = %d, want %d", s, from, got, want)
				}
				if got, want := SkipPlain(string(s), from), naive(s, from); got != want {
					t.Fatalf("SkipPlain(string %q, %d) = %d, want %d", s, from, got, want)
				}
			}
		}
	}
}
