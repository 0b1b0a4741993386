package attest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// ComputeSurface returns exactly what ComputeFingerprints and SurfaceDocument return
// for the same tools, errors included.
func TestComputeSurfaceEqualsSeparateComputations(t *testing.T) {
	ins := "Use the tools\u00a0wisely."
	big := make([]json.RawMessage, 500)
	for i := range big {
		big[i] = fmt.Appendf(nil, `{"name":"t%03d","description":%q,"inputSchema":{"type":"object"}}`, 499-i, strings.Repeat("d", i))
	}
	cases := map[string]struct {
		tools []json.RawMessage
		ins   *string
	}{
		"ties and normalization": {tools: []json.RawMessage{
			json.RawMessage(`{"name":"b","description":"caf\u0065\u0301","inputSchema":{"type":"object"},"extra":1}`),
			json.RawMessage(`{"inputSchema":{"type":"object","properties":{}},"name":"a","title":null}`),
			json.RawMessage(`{"name":"a","inputSchema":{"type":"object"}}`),
			json.RawMessage(`{"name":"a","inputSchema":{"type":"object"}}`),
			json.RawMessage(`{"name":"\ud83d\ude00","annotations":{"readOnlyHint":true}}`),
			json.RawMessage(`{"name":"\uffff","outputSchema":{}}`),
		}, ins: &ins},
		"groups whose schema and surface orders differ": {tools: []json.RawMessage{
			json.RawMessage(`{"name":"z"}`),
			json.RawMessage(`{"name":"m","description":"b","inputSchema":{"a":1}}`),
			json.RawMessage(`{"name":"m","description":"a","inputSchema":{"b":1}}`),
			json.RawMessage(`{"name":"m","description":"c"}`),
			json.RawMessage(`{"name":"b","title":"t"}`),
			json.RawMessage(`{"name":"m","description":"a","inputSchema":{"a":1}}`),
			json.RawMessage(`{"name":"\u006d","annotations":{}}`),
			json.RawMessage(`{"name":"a\u0301"}`), json.RawMessage(`{"name":"\u00e1"}`),
		}},
		"empty":      {tools: []json.RawMessage{}},
		"500 tools":  {tools: big, ins: &ins},
		"no name":    {tools: []json.RawMessage{json.RawMessage(`{"title":"x"}`)}},
		"not object": {tools: []json.RawMessage{json.RawMessage(`{"name":"a"}`), json.RawMessage(`[1]`)}},
		"bad json":   {tools: []json.RawMessage{json.RawMessage(`{"name":"a",}`)}},
	}
	for name, c := range cases {
		wantFP, wantFPErr := ComputeFingerprints(c.tools, c.ins)
		wantDoc, wantDocErr := SurfaceDocument(c.tools)
		fp, doc, err := ComputeSurface(c.tools, c.ins)
		if (err == nil) != (wantFPErr == nil) || (err == nil) != (wantDocErr == nil) {
			t.Errorf("%s: error %v; ComputeFingerprints %v, SurfaceDocument %v", name, err, wantFPErr, wantDocErr)
			continue
		}
		if err != nil {
			if err.Error() != wantFPErr.Error() {
				t.Errorf("%s: error %q, ComputeFingerprints says %q", name, err, wantFPErr)
			}
			continue
		}
		if fp != wantFP || !bytes.Equal(doc, wantDoc) {
			t.Errorf("%s: ComputeSurface = %+v %s\nwant %+v %s", name, fp, doc, wantFP, wantDoc)
		}
	}
}

// Random lists with many shared names: ComputeSurface agrees with the separate
// computations on every one.
func TestComputeSurfaceRandomLists(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"a", "b", "\\u00e1", "a\\u0301", "\\ud83d\\ude00", "\\uffff", "z"}
	members := []string{`"description":"d%d"`, `"title":"t%d"`, `"inputSchema":{"p":%d}`, `"outputSchema":{"q":%d}`, `"annotations":{"readOnlyHint":%d}`}
	for n := range 300 {
		tools := make([]json.RawMessage, rng.IntN(12))
		for i := range tools {
			parts := []string{fmt.Sprintf(`"name":"%s"`, names[rng.IntN(len(names))])}
			for _, m := range members {
				if rng.IntN(2) == 0 {
					parts = append(parts, fmt.Sprintf(m, rng.IntN(3)))
				}
			}
			rng.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
			tools[i] = json.RawMessage("{" + strings.Join(parts, ",") + "}")
		}
		wantFP, err1 := ComputeFingerprints(tools, nil)
		wantDoc, err2 := SurfaceDocument(tools)
		fp, doc, err := ComputeSurface(tools, nil)
		if err != nil || err1 != nil || err2 != nil {
			t.Fatalf("list %d: %v %v %v", n, err, err1, err2)
		}
		if fp != wantFP || !bytes.Equal(doc, wantDoc) {
			t.Fatalf("list %d %s:\n got %+v %s\nwant %+v %s", n, tools, fp, doc, wantFP, wantDoc)
		}
	}
}
