package checks

import (
	"reflect"
	"testing"

	"github.com/probity-dev/probity/attest"
)

// The stored form of results is the one every round has been stored in (rounds'
// former storedResult): lower-case result members, evidence with its Go field names.
// DecodeResults reads it back to the same values and refuses what no writer produced.
func TestStoredResults(t *testing.T) {
	rs := []Result{
		{ID: "invisible_characters", Status: attest.StatusObservedRisk, Reason: &attest.CheckReason{Key: "invisible_found", Params: map[string]any{"count": float64(2), "tool": "search"}},
			Evidence: []Evidence{{Tool: "search", Field: "description", Offset: 19, Sample: `Search.\u200b`, Note: "zero width space"}}},
		{ID: "tools_listed", Status: attest.StatusVerified, Reason: &attest.CheckReason{Key: "listed"}},
		{ID: "schema_valid", Status: attest.StatusUnverified},
	}
	const want = `[{"id":"invisible_characters","status":"OBSERVED_RISK","reason":{"key":"invisible_found","params":{"count":2,"tool":"search"}},` +
		`"evidence":[{"Tool":"search","Field":"description","Offset":19,"Sample":"Search.\\u200b","Note":"zero width space"}]},` +
		`{"id":"tools_listed","status":"VERIFIED","reason":{"key":"listed"}},{"id":"schema_valid","status":"UNVERIFIED"}]`
	b, err := EncodeResults(rs)
	if err != nil || string(b) != want {
		t.Fatalf("EncodeResults = %s, %v\nwant %s", b, err, want)
	}
	got, err := DecodeResults(b)
	if err != nil || !reflect.DeepEqual(got, rs) {
		t.Fatalf("DecodeResults = %+v, %v", got, err)
	}
	for _, bad := range []string{``, `{}`, `[{"id":"x","status":"VERIFIED","extra":1}]`, `[{"id":"x","evidence":[{"Tool":"t","Line":3}]}]`,
		`[{"id":1}]`, `[] []`} {
		if rs, err := DecodeResults([]byte(bad)); err == nil {
			t.Errorf("DecodeResults(%s) = %+v, want an error", bad, rs)
		}
	}
}
