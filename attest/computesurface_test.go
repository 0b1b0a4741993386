package attest

import (
	"bytes"
	"encoding/json"
	"fmt"
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
