package attest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/gowebpki/jcs"
	"golang.org/x/text/unicode/norm"
)

// nfcJCS is the reference the scanner is held to: jcs.Transform of doc with every string
// and object key normalized to NFC. It only answers for documents encoding/json decodes
// without loss, which every document Canonicalize accepts is: numbers keep their text
// (json.Number), and duplicate keys, lone surrogates and invalid UTF-8 never get here.
func nfcJCS(doc []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("encoding/json: %w", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(mapStrings(v, norm.NFC.String)); err != nil {
		return nil, fmt.Errorf("encoding/json: %w", err)
	}
	return jcs.Transform(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// mapStrings applies f to every string and object key of a value decoded by encoding/json.
func mapStrings(v any, f func(string) string) any {
	switch v := v.(type) {
	case string:
		return f(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = mapStrings(e, f)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[f(k)] = mapStrings(e, f)
		}
		return out
	default:
		return v
	}
}

// checkCanonical asserts everything that must hold of a document Canonicalize accepts:
// the output equals the jcs reference, is accepted by CheckJSON and IsCanonical, and is
// a fixed point of Canonicalize. It returns the canonical form.
func checkCanonical(t testing.TB, doc []byte) []byte {
	t.Helper()
	got, err := Canonicalize(doc)
	if err != nil {
		t.Fatalf("Canonicalize(%q): %v", doc, err)
	}
	if err := CheckJSON(doc); err != nil {
		t.Fatalf("Canonicalize accepts %q but CheckJSON rejects it: %v", doc, err)
	}
	want, err := nfcJCS(doc)
	if err != nil {
		t.Fatalf("Canonicalize accepts %q but the reference rejects it: %v", doc, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Canonicalize(%q)\n got %q\nwant %q (jcs.Transform of the NFC input)", doc, got, want)
	}
	again, err := Canonicalize(got)
	if err != nil || !bytes.Equal(again, got) {
		t.Fatalf("Canonicalize is not idempotent on %q: %q, %v", got, again, err)
	}
	if !IsCanonical(got) {
		t.Fatalf("IsCanonical(%q) = false for Canonicalize output", got)
	}
	return got
}

func TestCanonicalizeRFC8785Examples(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{
			// RFC 8785 §3.2.2, with the input of §3.2.1.
			name: "rfc8785 3.2.2",
			in: `{
  "numbers": [333333333.33333329, 1E30, 4.50,
              2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`,
			want: `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
		},
		{
			// RFC 8785 §3.2.3. Under NFC, U+FB33 (a composition exclusion) becomes
			// U+05D3 U+05BC and so sorts before U+20AC instead of after U+1F600.
			name: "rfc8785 3.2.3 sorting",
			in: `{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}`,
			want: "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"\u00f6\":\"Latin Small Letter O With Diaeresis\"," +
				"\"\u05d3\u05bc\":\"Hebrew Letter Dalet With Dagesh\",\"\u20ac\":\"Euro Sign\",\"\U0001F600\":\"Emoji: Grinning Face\"}",
		},
		{
			// The "weird" vector published with the RFC's reference implementation.
			name: "weird",
			in: `{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\u000a": "Newline",
  "1": "One",
  "\u0080": "Control\u007f",
  "\ud83d\ude02": "Smiley",
  "\u00f6": "Latin Small Letter O With Diaeresis",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "</script>": "Browser Challenge"
}`,
			want: "{\"\\n\":\"Newline\",\"\\r\":\"Carriage Return\",\"1\":\"One\",\"</script>\":\"Browser Challenge\"," +
				"\"\u0080\":\"Control\u007f\",\"\u00f6\":\"Latin Small Letter O With Diaeresis\"," +
				"\"\u05d3\u05bc\":\"Hebrew Letter Dalet With Dagesh\",\"\u20ac\":\"Euro Sign\",\"\U0001F602\":\"Smiley\"}",
		},
		{
			name: "nfc A+ring",
			in:   `{"Unnormalized Unicode":"A\u030a"}`,
			want: "{\"Unnormalized Unicode\":\"\u00c5\"}",
		},
		{
			name: "nfc raw combining",
			in:   "[\"A\u030a\", \"e\u0301\", \"\u212b\", \"\u00c5\"]",
			want: "[\"\u00c5\",\"\u00e9\",\"\u00c5\",\"\u00c5\"]",
		},
		{
			// NFC of a key changes where it sorts: "e\u0301" would sort before "f",
			// "\u00e9" sorts after it.
			name: "nfc key moves",
			in:   "{\"e\u0301\":1,\"f\":2}",
			want: "{\"f\":2,\"\u00e9\":1}",
		},
		{
			name: "escapes",
			in:   `"\u0000\u001f\u0020\u007f\b\f\n\r\t\/\"\\\u2028\ud834\udd1e"`,
			want: "\"\\u0000\\u001f \u007f\\b\\f\\n\\r\\t/\\\"\\\\\u2028\U0001D11E\"",
		},
		{
			name: "nested sort",
			in:   `{"b":{"z":[{"y":1,"x":2}],"a":null},"a":[true,{"d":{},"c":[]}]}`,
			want: `{"a":[true,{"c":[],"d":{}}],"b":{"a":null,"z":[{"x":2,"y":1}]}}`,
		},
		{
			name: "utf16 key order",
			in:   "{\"\uff21\":1,\"\U0001F600\":2,\"\ue000\":3,\"\ud7ff\":4}",
			want: "{\"\ud7ff\":4,\"\U0001F600\":2,\"\ue000\":3,\"\uff21\":1}",
		},
		{name: "whitespace scalar", in: " \t\r\n42 \n", want: "42"},
		{name: "empty object", in: "{ }", want: "{}"},
		{name: "empty array", in: "[ ]", want: "[]"},
		{name: "literals", in: "[true ,false, null]", want: "[true,false,null]"},
		{name: "minus zero int", in: "-0", want: "0"},
		{name: "minus zero float", in: "-0.0", want: "0"},
		{name: "minus zero exp", in: "-0e10", want: "0"},
		{name: "2^53", in: "9007199254740992", want: "9007199254740992"},
		{name: "-2^53", in: "-9007199254740992", want: "-9007199254740992"},
		{name: "2^53+1 as float", in: "9007199254740993.0", want: "9007199254740992"},
		{name: "1e30", in: "1e30", want: "1e+30"},
		{name: "1E+30", in: "1E+30", want: "1e+30"},
		{name: "1e21", in: "1e21", want: "1e+21"},
		{name: "1e-7", in: "1e-7", want: "1e-7"},
		{name: "1e-6", in: "1e-6", want: "0.000001"},
		{name: "1.0", in: "1.0", want: "1"},
		{name: "4.50", in: "4.50", want: "4.5"},
		{name: "underflow", in: "1e-400", want: "0"},
		{name: "long int", in: "1000000000000000", want: "1000000000000000"},
		{name: "int with zeros", in: "[0,10,-10,100]", want: "[0,10,-10,100]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := checkCanonical(t, []byte(tt.in))
			if string(got) != tt.want {
				t.Errorf("Canonicalize(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

// rfc8785AppendixB is the number serialization table of RFC 8785 Appendix B, less its NaN
// and Infinity rows, which have no JSON literal.
var rfc8785AppendixB = []struct {
	bits uint64
	want string
}{
	{0x0000000000000000, "0"},
	{0x8000000000000000, "0"},
	{0x0000000000000001, "5e-324"},
	{0x8000000000000001, "-5e-324"},
	{0x7fefffffffffffff, "1.7976931348623157e+308"},
	{0xffefffffffffffff, "-1.7976931348623157e+308"},
	{0x4340000000000000, "9007199254740992"},
	{0xc340000000000000, "-9007199254740992"},
	{0x4430000000000000, "295147905179352830000"},
	{0x44b52d02c7e14af5, "9.999999999999997e+22"},
	{0x44b52d02c7e14af6, "1e+23"},
	{0x44b52d02c7e14af7, "1.0000000000000001e+23"},
	{0x444b1ae4d6e2ef4e, "999999999999999700000"},
	{0x444b1ae4d6e2ef4f, "999999999999999900000"},
	{0x444b1ae4d6e2ef50, "1e+21"},
	{0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
	{0x3eb0c6f7a0b5ed8d, "0.000001"},
	{0x41b3de4355555553, "333333333.3333332"},
	{0x41b3de4355555554, "333333333.33333325"},
	{0x41b3de4355555555, "333333333.3333333"},
	{0x41b3de4355555556, "333333333.3333334"},
	{0x41b3de4355555557, "333333333.33333343"},
	{0xbecbf647612f3696, "-0.0000033333333333333333"},
	{0x43143ff3c1cb0959, "1424953923781206.2"},
}

// beyondSafeInteger reports whether f lies where RFC 8785 writes an integer literal
// beyond 2^53, which the profile rejects.
func beyondSafeInteger(f float64) bool {
	a := math.Abs(f)
	return a > 1<<53 && a < 1e21
}

func TestCanonicalizeNumbersAppendixB(t *testing.T) {
	for _, tt := range rfc8785AppendixB {
		f := math.Float64frombits(tt.bits)
		if beyondSafeInteger(f) {
			// RFC 8785 writes these as integer literals beyond 2^53, which the
			// nfc-jcs/v1 profile rejects in any spelling. The formatter still
			// agrees with the RFC.
			if got, err := jcs.NumberToJSON(f); err != nil || got != tt.want {
				t.Errorf("%016x: jcs.NumberToJSON = %s, %v; want %s", tt.bits, got, err, tt.want)
			}
			for _, lit := range []string{tt.want, strconv.FormatFloat(f, 'e', -1, 64)} {
				_, err := Canonicalize([]byte(lit))
				if je := assertJSONError(t, lit, err, 0); je != nil && !strings.Contains(je.Msg, "2^53") {
					t.Errorf("%s: %v", lit, err)
				}
			}
			continue
		}
		// Each value is fed as several JSON literals that all denote it.
		lits := []string{
			strconv.FormatFloat(f, 'g', -1, 64),
			strconv.FormatFloat(f, 'e', -1, 64),
			strconv.FormatFloat(f, 'E', 17, 64),
			tt.want,
		}
		if math.Abs(f) < 1e21 {
			lits = append(lits, strconv.FormatFloat(f, 'f', -1, 64))
		}
		for _, lit := range lits {
			got, err := Canonicalize([]byte(lit))
			if err != nil {
				t.Errorf("%016x: Canonicalize(%s): %v", tt.bits, lit, err)
				continue
			}
			if string(got) != tt.want {
				t.Errorf("%016x: Canonicalize(%s) = %s, want %s", tt.bits, lit, got, tt.want)
			}
			checkCanonical(t, []byte("["+lit+"]"))
		}
		if !IsCanonical([]byte(tt.want)) {
			t.Errorf("IsCanonical(%s) = false", tt.want)
		}
	}
}

// TestCanonicalizeNumbersAgainstJCS compares the serialization of many doubles, fed in
// several notations, with the reference.
func TestCanonicalizeNumbersAgainstJCS(t *testing.T) {
	var vals []float64
	for e := -325; e <= 309; e += 7 {
		for _, m := range []float64{1, 1.5, 2.220446049250313, 9.999999999999999, 3.3333333333333335} {
			vals = append(vals, m*math.Pow(10, float64(e)))
		}
	}
	for x := uint64(1); x != 0 && x < 1<<63; x = x*3 + 1 {
		vals = append(vals, math.Float64frombits(x&^(0x7ff<<52)|(uint64(x%2046+1)<<52)))
	}
	for _, f := range vals {
		if math.IsInf(f, 0) || math.IsNaN(f) {
			continue
		}
		for _, sign := range []float64{1, -1} {
			lit := strconv.FormatFloat(sign*f, 'e', -1, 64)
			if beyondSafeInteger(f) {
				if _, err := Canonicalize([]byte(lit)); err == nil {
					t.Errorf("Canonicalize(%s) accepted an integer beyond 2^53", lit)
				}
				continue
			}
			checkCanonical(t, []byte(lit))
			want, err := jcs.NumberToJSON(sign * f)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := Canonicalize([]byte(lit)); string(got) != want {
				t.Errorf("Canonicalize(%s) = %s, want %s", lit, got, want)
			}
		}
	}
}

func TestCanonicalizeIntegerLimits(t *testing.T) {
	accepted := map[string]string{
		"9007199254740992":   "9007199254740992",
		"-9007199254740992":  "-9007199254740992",
		"9007199254740991":   "9007199254740991",
		"1000000000000000":   "1000000000000000",
		"-1":                 "-1",
		"9007199254740993e0": "9007199254740992", // not an integer literal: an exponent
		"1e30":               "1e+30",
	}
	for in, want := range accepted {
		got, err := Canonicalize([]byte(in))
		if err != nil || string(got) != want {
			t.Errorf("Canonicalize(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{
		"9007199254740993", "-9007199254740993", "9007199254740995", "9999999999999999",
		"10000000000000001", "12345678901234567890", "100000000000000000001",
		"295147905179352825856",
		// A literal that is the serialization of a double beyond 2^53 is still an integer
		// beyond 2^53, and so is any double between 2^53 and 1e21, however written.
		"9007199254740994", "10000000000000000", "-100000000000000000000", "295147905179352830000",
		"999999999999999900000", "1e20", "-1e20", "1.5e20", "9007199254740994.0", "9.1e15",
		"1000000000000000000000", "-1000000000000000000000", // 1e21 serializes as 1e+21
		strings.Repeat("9", 400), "1" + strings.Repeat("0", 30),
	} {
		_, err := Canonicalize([]byte(in))
		assertJSONError(t, in, err, 0)
		wrapped := `{"n":` + in + `}`
		_, err = Canonicalize([]byte(wrapped))
		assertJSONError(t, wrapped, err, 5)
	}
}

// assertJSONError fails unless err is a *JSONError at offset off (or any offset when off
// is negative).
func assertJSONError(t testing.TB, in string, err error, off int) *JSONError {
	t.Helper()
	var je *JSONError
	if !errors.As(err, &je) {
		t.Errorf("%q: got error %v (%T), want a *JSONError", in, err, err)
		return nil
	}
	if off >= 0 && je.Offset != off {
		t.Errorf("%q: error %q at offset %d, want offset %d", in, je.Msg, je.Offset, off)
	}
	if je.Offset < 0 || je.Offset > len(in) {
		t.Errorf("%q: offset %d outside the input", in, je.Offset)
	}
	if !strings.Contains(je.Error(), strconv.Itoa(je.Offset)) {
		t.Errorf("%q: Error() %q does not name the offset", in, je.Error())
	}
	return je
}

func TestCanonicalizeRejects(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	deepObj := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	manyKeys := func(dup string) string {
		var b strings.Builder
		b.WriteString("{")
		for i := 0; i < 12; i++ {
			fmt.Fprintf(&b, `"k%02d":%d,`, i, i)
		}
		b.WriteString(dup + "}")
		return b.String()
	}
	tests := []struct {
		name string
		in   string
		off  int
		msg  string // a substring the message must contain, if not empty
	}{
		{"empty", "", 0, "end of input"},
		{"only space", "  \n", 3, "end of input"},
		{"invalid utf8 in string", "\"ab\xffc\"", 3, "UTF-8"},
		{"invalid utf8 truncated", "[\"\xe2\x82\"]", 2, "UTF-8"},
		{"invalid utf8 overlong", "\"\xc0\xaf\"", 1, "UTF-8"},
		{"utf8 encoded surrogate", "\"\xed\xa0\x80\"", 1, "UTF-8"},
		{"invalid utf8 outside string", "[1]\xff", 3, "UTF-8"},
		{"lone high surrogate", `"\ud800"`, 7, "surrogate"},
		{"lone high surrogate then text", `"\ud800abcdefg"`, 7, "surrogate"},
		{"lone low surrogate", `"\udc00"`, 7, "surrogate"},
		{"high then high", `"\ud800\ud800"`, 13, "surrogate"},
		{"high then BMP", `"\ud83d\u0041"`, 13, "surrogate"},
		{"reversed pair", `"\ude00\ud83d"`, 7, "surrogate"},
		{"lone surrogate key", `{"\udfff":1}`, 8, "surrogate"},
		{"high then bad hex", `"\ud800\uzzzz"`, 9, "escape"},
		{"1e400", "1e400", 0, "finite"},
		{"-1e400", "[-1e400]", 1, "finite"},
		{"1.5e309", `{"x":1.5e309}`, 5, "finite"},
		{"int beyond 2^53", "9007199254740993", 0, "2^53"},
		{"neg int beyond 2^53", "[-9007199254740993]", 1, "2^53"},
		{"depth 65 arrays", deep(65), 64, "nesting"},
		{"depth 65 objects", deepObj(65), 5 * 64, "nesting"},
		{"trailing data", "{} {}", 3, "after"},
		{"trailing comma array", "[1,]", 3, ""},
		{"trailing comma object", `{"a":1,}`, 7, "key"},
		{"trailing garbage", "1x", 1, "after"},
		{"two values", "1 2", 2, "after"},
		{"duplicate key", `{"a":1,"a":2}`, 7, "duplicate"},
		{"duplicate escaped key", `{"a":1,"\u0061":2}`, 7, "duplicate"},
		{"duplicate nested", `[{"x":{"b":1,"b":1}}]`, 13, "duplicate"},
		{"duplicate many keys", manyKeys(`"k03":0`), 1 + 10*8 + 2*9, "duplicate"},
		{"raw newline", "\"a\nb\"", 2, "control"},
		{"raw tab", "\"a\tb\"", 2, "control"},
		{"raw NUL", "\"\x00\"", 1, "control"},
		{"raw control after escape", "\"\\n\x1f\"", 3, "control"},
		{"bad escape", `"\x41"`, 3, "escape"},
		{"bad escape quote", `"\'"`, 3, "escape"},
		{"short unicode escape", `"\u12"`, 3, "escape"},
		{"bad unicode escape", `"\u12g4"`, 3, "escape"},
		{"unterminated string", `"abc`, 4, "unterminated"},
		{"unterminated escape", `"abc\`, 4, ""},
		{"leading zero", "01", 1, "after"},
		{"leading zero in array", "[00]", 2, ""},
		{"neg leading zero", "-01", 2, "after"},
		{"plus sign", "+1", 0, ""},
		{"bare minus", "-", 1, "number"},
		{"minus space", "- 1", 1, "number"},
		{"leading dot", ".5", 0, ""},
		{"trailing dot", "1.", 2, "number"},
		{"dot exp", "1.e5", 2, "number"},
		{"empty exp", "1e", 2, "exponent"},
		{"exp sign only", "1e+", 3, "exponent"},
		{"hex number", "0x10", 1, "after"},
		{"NaN", "NaN", 0, ""},
		{"Infinity", "[Infinity]", 1, ""},
		{"bad literal", "tru", 0, "literal"},
		{"bad literal case", "True", 0, ""},
		{"nul literal", "nul", 0, "literal"},
		{"literal suffix", "nullx", 4, "after"},
		{"single quotes", `{'a':1}`, 1, "key"},
		{"unquoted key", `{a:1}`, 1, "key"},
		{"number key", `{1:1}`, 1, "key"},
		{"missing colon", `{"a" 1}`, 5, ":"},
		{"missing value", `{"a":}`, 5, ""},
		{"missing comma object", `{"a":1 "b":2}`, 7, ""},
		{"missing comma array", `[1 2]`, 3, ""},
		{"unclosed array", `[1,2`, 4, "end of input"},
		{"unclosed object", `{"a":1`, 6, "end of input"},
		{"unclosed nested", `[{"a":[`, 7, "end of input"},
		{"close mismatch", `[1}`, 2, ""},
		{"lone close", `]`, 0, ""},
		{"comment", "[1] // c", 4, "after"},
		{"BOM", "\ufeff{}", 0, ""},
		{"nbsp whitespace", "[1,\u00a02]", 3, ""},
		{"form feed whitespace", "[1,\f2]", 3, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Canonicalize([]byte(tt.in))
			if err == nil {
				t.Fatalf("Canonicalize(%q) = %q, want an error", tt.in, out)
			}
			if out != nil {
				t.Errorf("Canonicalize(%q) returned output %q with its error", tt.in, out)
			}
			je := assertJSONError(t, tt.in, err, tt.off)
			if je != nil && !strings.Contains(strings.ToLower(je.Msg), strings.ToLower(tt.msg)) {
				t.Errorf("%q: message %q does not mention %q", tt.in, je.Msg, tt.msg)
			}
			cerr := CheckJSON([]byte(tt.in))
			if cerr == nil || cerr.Error() != err.Error() {
				t.Errorf("CheckJSON(%q) = %v, want the error of Canonicalize, %v", tt.in, cerr, err)
			}
			if IsCanonical([]byte(tt.in)) {
				t.Errorf("IsCanonical(%q) = true", tt.in)
			}
		})
	}
}

func TestCanonicalizeDepth(t *testing.T) {
	for _, n := range []int{1, 63, MaxDepth} {
		arr := strings.Repeat("[", n) + strings.Repeat("]", n)
		checkCanonical(t, []byte(arr))
		obj := strings.Repeat(`{"a":`, n) + "[]" + strings.Repeat("}", n)
		if n == MaxDepth {
			obj = strings.Repeat(`{"a":`, n) + "0" + strings.Repeat("}", n)
		}
		checkCanonical(t, []byte(obj))
		mixed := strings.Repeat(`[{"a":`, n/2) + "null" + strings.Repeat("}]", n/2)
		checkCanonical(t, []byte(mixed))
	}
	// Depth is nesting, not a count of containers: many siblings at depth 64 are fine.
	sib := strings.Repeat("[", MaxDepth-1) + strings.Repeat("[],", 100) + "[]" + strings.Repeat("]", MaxDepth-1)
	checkCanonical(t, []byte(sib))
	for _, n := range []int{MaxDepth + 1, MaxDepth + 2, 1000} {
		in := strings.Repeat("[", n) + strings.Repeat("]", n)
		_, err := Canonicalize([]byte(in))
		assertJSONError(t, in, err, MaxDepth)
	}
}

func TestCanonicalizeNFCKeyCollision(t *testing.T) {
	collisions := []string{
		"{\"\u00c5\":1,\"A\u030a\":2}",
		"{\"A\u030a\":1,\"\u00c5\":2}",
		`{"\u00c5":1,"A\u030a":2}`,
		"{\"\u212b\":1,\"\u00c5\":2}", // ANGSTROM SIGN is a singleton decomposition
		"{\"\u212a\":1,\"K\":2}",      // as is KELVIN SIGN
		"{\"k0\":0,\"k1\":1,\"k2\":2,\"k3\":3,\"k4\":4,\"k5\":5,\"k6\":6,\"k7\":7,\"k8\":8,\"\u00e9\":9,\"e\u0301\":10}",
	}
	for _, in := range collisions {
		_, err := Canonicalize([]byte(in))
		off := strings.LastIndex(in, `,"`) + 1
		je := assertJSONError(t, in, err, off)
		if je == nil {
			continue
		}
		if !strings.Contains(je.Msg, "NFC") || strings.Contains(je.Msg, "duplicate") {
			t.Errorf("%q: message %q does not report an NFC collision", in, je.Msg)
		}
		// A plain duplicate is reported differently.
		_, err = Canonicalize([]byte(`{"a":1,"a":2}`))
		dup := assertJSONError(t, `{"a":1,"a":2}`, err, 7)
		if dup != nil && (dup.Msg == je.Msg || strings.Contains(dup.Msg, "NFC")) {
			t.Errorf("duplicate and NFC collision errors are not distinct: %q, %q", dup.Msg, je.Msg)
		}
	}
	// Distinct after NFC: a combining mark on a different base, and NFD vs NFKC-only
	// equivalents, which NFC keeps apart.
	for _, in := range []string{
		"{\"\u00c5\":1,\"A\u0308\":2}",
		"{\"\ufb01\":1,\"fi\":2}",
		"{\"\u2460\":1,\"1\":2}",
	} {
		checkCanonical(t, []byte(in))
	}
}

func TestCanonicalizeLongKeyInError(t *testing.T) {
	long := strings.Repeat("\u00e9", 40)
	in := `{"` + long + `":1,"` + long + `":2}`
	_, err := Canonicalize([]byte(in))
	je := assertJSONError(t, in, err, len(long)+6)
	if je != nil && len(je.Msg) > 200 {
		t.Errorf("error message not bounded: %d bytes", len(je.Msg))
	}
}

func TestCanonicalizeIdempotentAndIsCanonical(t *testing.T) {
	docs := []string{
		`{"b":[1,2.50,{"d":"\u00e9","c":"e\u0301"}],"a":"\u2028"}`,
		`[1e21,1e-7,-0,0.1,123456789012345]`,
		"{\"\uffff\":[],\"\U0001F600\":{}}",
		`"\u0000\u007f"`,
	}
	for _, d := range docs {
		c := checkCanonical(t, []byte(d))
		if IsCanonical([]byte(d)) {
			t.Errorf("IsCanonical(%q) = true for non-canonical input", d)
		}
		if !IsCanonical(c) {
			t.Errorf("IsCanonical(%q) = false", c)
		}
	}
	notCanonical := []string{
		`{"a": 1}`, ` 1`, "1\n", `{"b":1,"a":2}`, `"\u0041"`, `"\/"`, `1.0`, `-0`, `1E30`,
		`1e30`, `0.10`, "\"A\u030a\"", `"\u001F"`, `"\u000a"`, "\"\\u00e9\"", `[1 ]`,
		`{"a":1,"a":1}`, `9007199254740993`, ``, `nul`,
	}
	for _, d := range notCanonical {
		if IsCanonical([]byte(d)) {
			t.Errorf("IsCanonical(%q) = true", d)
		}
	}
	for _, d := range []string{`{}`, `[]`, `0`, `"\u001f"`, `"\n"`, "\"\u00c5\"", `{"a":1,"b":[true]}`, `1e+30`, `-1`} {
		if !IsCanonical([]byte(d)) {
			t.Errorf("IsCanonical(%q) = false", d)
		}
	}
}

func TestCheckJSON(t *testing.T) {
	for _, d := range []string{`{}`, ` [1, 2.5e3, "x", {"a": null}] `, "\"A\u030a\"", `9007199254740992`} {
		if err := CheckJSON([]byte(d)); err != nil {
			t.Errorf("CheckJSON(%q): %v", d, err)
		}
	}
	// CheckJSON rejects what encoding/json accepts silently.
	for _, d := range []string{`{"a":1,"a":2}`, `"\ud800"`, "\"\xff\"", "{\"\u00c5\":1,\"A\u030a\":2}", `9007199254740993`} {
		if !json.Valid([]byte(d)) {
			t.Errorf("test premise: encoding/json rejects %q", d)
		}
		assertJSONError(t, d, CheckJSON([]byte(d)), -1)
	}
}

func TestMarshal(t *testing.T) {
	type inner struct {
		Z string `json:"z"`
		A string `json:"a"`
	}
	got, err := Marshal(map[string]any{
		"\u00e9":  "e\u0301",
		"b":       []any{inner{Z: "<&>", A: "\u2028"}, 1e21, 0.5, int64(1) << 53, math.Copysign(0, -1)},
		"\ufffd":  "\ufffd", // a genuine U+FFFD is fine
		"control": "\x00\x1f",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "{\"b\":[{\"a\":\"\u2028\",\"z\":\"<&>\"},1e+21,0.5,9007199254740992,0],\"control\":\"\\u0000\\u001f\",\"\u00e9\":\"\u00e9\",\"\ufffd\":\"\ufffd\"}"
	if string(got) != want {
		t.Errorf("Marshal:\n got %q\nwant %q", got, want)
	}
	if !IsCanonical(got) {
		t.Errorf("Marshal output is not canonical")
	}

	for name, v := range map[string]any{
		"invalid utf8 string": "ab\xffcd",
		"invalid utf8 key":    map[string]int{"\xc3": 1},
		"truncated rune":      []string{"ok", "\xe2\x82"},
		"surrogate bytes":     "\xed\xa0\x80",
		"nfc collision":       map[string]int{"\u00c5": 1, "A\u030a": 2},
		"beyond 2^53":         uint64(1)<<53 + 1,
		"beyond -2^53":        -(int64(1)<<53 + 1),
	} {
		if b, err := Marshal(v); err == nil {
			t.Errorf("Marshal(%s) = %q, want an error", name, b)
		}
	}
	for name, v := range map[string]any{"NaN": math.NaN(), "Inf": math.Inf(1)} {
		if _, err := Marshal(v); err == nil {
			t.Errorf("Marshal(%s) succeeded", name)
		}
	}
	// encoding/json writes 1e20 as the integer literal 100000000000000000000: beyond 2^53,
	// rejected like any other spelling of it. 1e21 and up carry an exponent and pass.
	for _, f := range []float64{1e20, 1e16, 9007199254740994} {
		if b, err := Marshal(f); err == nil {
			t.Errorf("Marshal(%v) = %s, want an error", f, b)
		}
	}
	if b, err := Marshal([]float64{1e21, 9007199254740992, -9007199254740992}); err != nil || string(b) != "[1e+21,9007199254740992,-9007199254740992]" {
		t.Errorf("Marshal(large doubles) = %s, %v", b, err)
	}
	// The \ufffd rule is for Marshal only: Canonicalize accepts the escape.
	if _, err := Canonicalize([]byte(`"\ufffd"`)); err != nil {
		t.Errorf(`Canonicalize("\ufffd"): %v`, err)
	}
}

func TestMarshalStatementCanonical(t *testing.T) {
	fp := Fingerprints{Toolset: Digest([]byte("a")), Schema: Digest([]byte("b")), Surface: Digest([]byte("c")), Instructions: Digest(nil)}
	b, err := Marshal(realisticStatement(fp))
	if err != nil {
		t.Fatal(err)
	}
	checkCanonical(t, b)
	raw, err := json.Marshal(realisticStatement(fp))
	if err != nil {
		t.Fatal(err)
	}
	if want, err := nfcJCS(raw); err != nil || !bytes.Equal(b, want) {
		t.Errorf("Marshal differs from the reference: %v\n got %s\nwant %s", err, b, want)
	}
}

func TestCompareUTF16(t *testing.T) {
	strs := []string{
		"", "a", "A", "ab", "a\u0000", "\u007f", "\u0080", "\u00e9", "\u05d3", "\u20ac", "\ud7ff",
		"\ue000", "\uf8ff", "\ufb33", "\uff21", "\uffff", "\U00010000", "\U0001F600", "\U0001F602",
		"\U0010FFFF", "\U0001F600a", "\uff21\U0001F600", "\U0001F600\uff21", "a\U0001F600", "a\uff21",
		"\U00020000", "\U0001FFFF", "\U00010400", "\U000103FF",
	}
	sign := func(x int) int {
		switch {
		case x < 0:
			return -1
		case x > 0:
			return 1
		}
		return 0
	}
	for _, a := range strs {
		for _, b := range strs {
			want := slices.Compare(utf16Units(a), utf16Units(b))
			if got := sign(compareUTF16(a, b)); got != want {
				t.Errorf("compareUTF16(%q, %q) = %d, want %d", a, b, got, want)
			}
		}
	}
	// The case byte order gets wrong: U+1F600 is D83D DE00 in UTF-16, before U+FF21.
	if compareUTF16("\U0001F600", "\uff21") >= 0 {
		t.Error("U+1F600 must sort before U+FF21")
	}
	if "\U0001F600" < "\uff21" {
		t.Error("test premise: UTF-8 byte order puts U+FF21 first")
	}
}

// utf16Units is the brute-force UTF-16 encoding compareUTF16 is checked against.
func utf16Units(s string) []uint16 { return utf16.Encode([]rune(s)) }

// TestCanonicalizeStreamSafe: golang.org/x/text's NFC is stream-safe (it inserts U+034F
// into runs of more than 30 combining marks, and reorders only within them), so such
// text has no canonical form independent implementations agree on: it is rejected, and
// an NFC and an NFD spelling of the same accepted text still canonicalize alike.
func TestCanonicalizeStreamSafe(t *testing.T) {
	for _, bad := range []string{
		`"x` + strings.Repeat("\u0316", 31) + `"`,
		`{"a":1,"x` + strings.Repeat("\u0301", 16) + strings.Repeat("\u0316", 16) + `":2}`,
		`"x` + strings.Repeat(`\u0316`, 31) + `"`,
	} {
		_, err := Canonicalize([]byte(bad))
		if je := assertJSONError(t, bad, err, -1); je != nil && !strings.Contains(je.Msg, "combining") {
			t.Errorf("%q: %v", bad, err)
		}
		if CheckJSON([]byte(bad)) == nil {
			t.Errorf("CheckJSON accepted %q", bad)
		}
	}
	ok := "e" + strings.Repeat("\u0316", 29) + "\u0301"
	nfc, err1 := Canonicalize([]byte(`"` + norm.NFC.String(ok) + `"`))
	nfd, err2 := Canonicalize([]byte(`"` + norm.NFD.String(ok) + `"`))
	if err1 != nil || err2 != nil || string(nfc) != string(nfd) {
		t.Errorf("30 marks: %v %v %q %q", err1, err2, nfc, nfd)
	}
}

// TestDuplicateReportConsistent: CheckJSON and Canonicalize name the same duplicate.
func TestDuplicateReportConsistent(t *testing.T) {
	for _, doc := range []string{
		`{"\u1000":"","":"","0":"","1":"","0":"","1":"","000000":"","":""}`,
		`{"a":1,"b":2,"a":3,"c":4,"c":5}`,
		`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k3":9,"k1":10}`,
	} {
		e1, e2 := CheckJSON([]byte(doc)), func() error { _, err := Canonicalize([]byte(doc)); return err }()
		if e1 == nil || e2 == nil || e1.Error() != e2.Error() {
			t.Errorf("%s:\n CheckJSON    %v\n Canonicalize %v", doc, e1, e2)
		}
	}
}
