package checks

import (
	"encoding/json"
	"testing"

	"github.com/probity-dev/probity/attest"
)

// FuzzHiddenInstructions runs the whole suite over an observation whose one tool is the
// fuzzed bytes (and whose server instructions are the same bytes as a string): no panic,
// exactly one declared, schema-valid result per check, bounded escaped evidence, and a
// statement the verifier accepts whenever the round is signed. The seed corpus is under
// testdata/fuzz/FuzzHiddenInstructions; go test runs it as ordinary tests.
func FuzzHiddenInstructions(f *testing.F) {
	f.Add([]byte(echoTool))
	f.Fuzz(func(t *testing.T, raw []byte) {
		o := fullObs()
		o.Tools.Tools = []json.RawMessage{raw}
		ins := string(raw)
		o.Handshake.Instructions = &ins
		results, coverage, signed := Evaluate(o)
		if len(results) != len(catalog) {
			t.Fatalf("%d results", len(results))
		}
		for i, r := range results {
			if r.ID != catalog[i].ID {
				t.Fatalf("result %d is %s", i, r.ID)
			}
			assertResultValid(t, r)
		}
		if !signed {
			return
		}
		st, err := Statement(o, results, coverage, testProbe, "r-fuzz")
		if err != nil {
			t.Fatalf("Statement: %v", err)
		}
		payload, err := attest.Marshal(st.Statement())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := attest.DecodeStatement(payload); err != nil {
			t.Fatal(err)
		}
	})
}
