package attest

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// TestParseTreeMatchesEncodingJSON holds the fast tree parser to encoding/json (with
// UseNumber) on documents CheckJSON accepts, and to the canonical form's spans.
func TestParseTreeMatchesEncodingJSON(t *testing.T) {
	for _, doc := range []string{
		`{}`, `[]`, `"x"`, `0`, `-1.5e3`, `true`, `null`,
		` { "a" : [ 1 , 2.50 , { "b" : null } ] , "c" : "d" } `,
		`{"esc":"\" \\ \/ \b \f \n \r \t \u0041 \u00e9 \ud83d\ude02 \u2028"}`,
		"{\"raw\":\"\u00e9 \U0001F602 \u2028\"}",
		`[[[[[[[[[[1]]]]]]]]]]`,
		`{"a":{"b":{"c":[true,false,null,"",{}]}},"z":-0}`,
		"\t\r\n[1,\n2]\n",
	} {
		if err := CheckJSON([]byte(doc)); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		got, spans, err := parseTree([]byte(doc))
		if err != nil {
			t.Errorf("parseTree(%s): %v", doc, err)
			continue
		}
		dec := json.NewDecoder(bytes.NewReader([]byte(doc)))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("parseTree(%s) = %#v, encoding/json %#v", doc, got, want)
		}
		if m, ok := want.(map[string]any); ok {
			for k, v := range m {
				var again any
				d := json.NewDecoder(bytes.NewReader(spans[k]))
				d.UseNumber()
				if err := d.Decode(&again); err != nil || !reflect.DeepEqual(again, v) {
					t.Errorf("%s: span of %q is %q", doc, k, spans[k])
				}
			}
		}
	}
	for _, bad := range []string{``, `{`, `[1,]`, `{"a"}`, `"unterminated`, `[1] x`} {
		if _, _, err := parseTree([]byte(bad)); err == nil {
			t.Errorf("parseTree(%q) succeeded", bad)
		}
	}
}
