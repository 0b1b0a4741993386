package document

import (
	"strings"
	"testing"
)

type doc struct {
	A int     `json:"a"`
	B *string `json:"b,omitempty"`
	N *doc    `json:"n,omitempty"`
}

func TestDecode(t *testing.T) {
	var d doc
	if err := Decode([]byte(" {\"a\":1,\"b\":\"x\",\"n\":{\"a\":2}}\n"), &d); err != nil || d.A != 1 || d.B == nil || *d.B != "x" || d.N == nil || d.N.A != 2 {
		t.Fatalf("Decode = %+v, %v", d, err)
	}
	for _, bad := range []string{
		"", " \n", "null x", `{"a":1} {"a":2}`, `{"a":1}}`, `{"a":1}]`, `{"a":1} x`,
		`{"a":"1"}`, `{"a":1,"c":2}`, `{"n":{"c":1}}`, `{"a":1`, `[]`,
	} {
		var d doc
		if err := Decode([]byte(bad), &d); err == nil {
			t.Errorf("Decode(%q) accepted: %+v", bad, d)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("Decode(%q): multi-line error %q", bad, err)
		}
	}
}
