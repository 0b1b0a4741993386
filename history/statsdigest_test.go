package history

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
)

func TestSeedSurfaceDigest(t *testing.T) {
	a := json.RawMessage(`{"name":"a","description":"A.","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}}}`)
	b := json.RawMessage(`{"name":"b","inputSchema":{"type":"object"}}`)
	aDressed := json.RawMessage(`{"title":"The A","inputSchema":{"properties":{"q":{"type":"string"}},"type":"object"},"description":"A.","name":"a","annotations":{"readOnlyHint":true},"outputSchema":{"type":"object"},"_meta":{"x":1}}`)
	aOther := json.RawMessage(`{"name":"a","description":"A!","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}}}`)
	digest := func(tools ...json.RawMessage) string {
		t.Helper()
		_, d, err := seedSurface(tools)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	base := digest(a, b)
	if digest(b, a) != base {
		t.Error("the order of the tools changed the digest")
	}
	if digest(aDressed, b) != base {
		t.Error("a title, annotations, an output schema or _meta changed the digest")
	}
	if digest(aOther, b) == base || digest(a) == base || digest(a, b, b) == base {
		t.Error("a description, a tool gone or a name repeated left the digest as it was")
	}
	s, _, err := seedSurface([]json.RawMessage{aDressed})
	if err != nil || len(s.Tools) != 1 || string(s.Tools[0]) != `{"description":"A.","inputSchema":{"properties":{"q":{"type":"string"}},"type":"object"},"name":"a"}` {
		t.Errorf("reduced tool %s (%v)", s.Tools, err)
	}
}

func TestNumberToInteger(t *testing.T) {
	for _, c := range []struct {
		before, after string
		want          bool
	}{
		{"number", "integer", true},
		{"number|null", "integer|null", true},
		{"number|string", "integer|string", true},
		{"number", "integer|null", false},
		{"integer|number", "integer", false},
		{"string", "integer", false},
		{"", "integer", false},
	} {
		if got := numberToInteger(c.before, c.after); got != c.want {
			t.Errorf("numberToInteger(%q, %q) = %v", c.before, c.after, got)
		}
	}
}

// BenchmarkSeedSurface measures the seeds' digest of one stored surface of 22 tools,
// computed once per distinct surface by LoadStats.
func BenchmarkSeedSurface(b *testing.B) {
	var tools []json.RawMessage
	for k := range 22 {
		tools = append(tools, json.RawMessage(fmt.Sprintf(`{"annotations":{"readOnlyHint":true},"description":"Tool %d: reads things.","inputSchema":{"properties":{"id":{"type":"string"},"n":{"type":"number"}},"required":["id"],"type":"object"},"name":"tool_%d"}`, k, k)))
	}
	tools = slices.Clip(tools)
	for b.Loop() {
		if _, _, err := seedSurface(tools); err != nil {
			b.Fatal(err)
		}
	}
}

func TestEachMember(t *testing.T) {
	var got []string
	err := eachMember([]byte(` { "name" : "a\"}" , "x":[1,{"}":"]"}] ,"n\u0061me2":null, "d":-1.5e3}`), func(k, v []byte) {
		got = append(got, string(k)+"="+string(v))
	})
	want := []string{`"name"="a\"}"`, `"x"=[1,{"}":"]"}]`, `"n\u0061me2"=null`, `"d"=-1.5e3`}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("eachMember: %q, %v", got, err)
	}
	for _, bad := range []string{``, `[]`, `{`, `{"a"`, `{"a":`, `{"a":"x`, `{"a":[1,2`, `{"a" 1}`, `{1:2}`,
		`{"a":"x\"`, `{"a":{"b":"}"`, `{"a\"`, `{"a":1`, `{"a":1,`, `{"a":"x"`} {
		if err := eachMember([]byte(bad), func(k, v []byte) {}); err == nil {
			t.Errorf("eachMember(%q) accepted it", bad)
		}
	}
	// Every truncated prefix is refused, and f never sees a value cut by the end.
	whole := ` {"name":"a\"}","x":[1,{"}":"]"}],"d":-1.5e3}`
	for n := range len(whole) {
		cut := []byte(whole[:n])
		err := eachMember(cut, func(k, v []byte) {
			if len(v) > 0 && (v[0] == '"' || v[0] == '[' || v[0] == '{') && !json.Valid(v) {
				t.Errorf("eachMember(%q): f saw the truncated value %q", cut, v)
			}
		})
		if err == nil {
			t.Errorf("eachMember(%q) accepted it", cut)
		}
	}
	// An escaped key names the member it decodes to.
	_, d1, err1 := seedSurface([]json.RawMessage{json.RawMessage(`{"n\u0061me":"a","description":"A."}`)})
	_, d2, err2 := seedSurface([]json.RawMessage{json.RawMessage(`{"name":"a","description":"A."}`)})
	if err1 != nil || err2 != nil || d1 != d2 {
		t.Errorf("escaped key: %s vs %s (%v, %v)", d1, d2, err1, err2)
	}
}
