package attest

import (
	"encoding/json"
	"testing"
)

func TestSurfaceDocumentDigest(t *testing.T) {
	tools := []json.RawMessage{
		json.RawMessage(`{"name":"b","description":"caf\u0065\u0301","inputSchema":{"type":"object"},"extra":1}`),
		json.RawMessage(`{"inputSchema":{"type":"object","properties":{}},"name":"a","title":null}`),
		json.RawMessage(`{"name":"a","inputSchema":{"type":"object"}}`),
	}
	doc, err := SurfaceDocument(tools)
	if err != nil {
		t.Fatal(err)
	}
	fp, err := ComputeFingerprints(tools, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := Digest(doc); got != fp.Surface {
		t.Fatalf("Digest(SurfaceDocument) = %s, surface fingerprint %s\n%s", got, fp.Surface, doc)
	}
	if !IsCanonical(doc) {
		t.Fatalf("surface document is not canonical: %s", doc)
	}
	var back []json.RawMessage
	if err := json.Unmarshal(doc, &back); err != nil || len(back) != 3 {
		t.Fatalf("surface document does not hold the 3 tools: %v", err)
	}
	again, err := ComputeFingerprints(back, nil)
	if err != nil || again.Surface != fp.Surface {
		t.Fatalf("re-fingerprinting the surface document: %v, %s want %s", err, again.Surface, fp.Surface)
	}
}
