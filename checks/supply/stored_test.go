package supply

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// A verdict reads back from its stored form unchanged, and a member no Verdict,
// Result or Evidence declares is refused.
func TestStoredVerdict(t *testing.T) {
	at := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	v := Verdict{
		Results: []Result{{ID: "license", Group: "hygiene", Weight: 10, Status: StatusPassed, Points: 10, Reason: "MIT", RanAt: at,
			Evidence: []Evidence{{What: "license field", Sample: `MIT\u200b`, Link: "https://registry.npmjs.org/x"}}, SourceURL: "https://registry.npmjs.org/x"},
			{ID: "advisories", Group: "security", Weight: 20, Status: StatusFailed, Serious: true, Reason: "1 critical advisory", RanAt: at}},
		WeightRan: 30, PointsPassed: 10, Score: 33, NotVerified: []string{"a serious finding"}, SuiteVersion: "test",
	}
	b, err := EncodeVerdict(v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeVerdict(b)
	if err != nil || !reflect.DeepEqual(got, v) {
		t.Fatalf("DecodeVerdict = %+v, %v", got, err)
	}
	for _, bad := range []string{``, `[]`, `{"results":[],"extra":1}`, `{"results":[{"id":"x","evidence":[{"what":"w","url":"u"}]}]}`,
		`{"score":"33"}`, `{} {}`} {
		if v, err := DecodeVerdict([]byte(bad)); err == nil || !strings.Contains(err.Error(), "supply verdict") {
			t.Errorf("DecodeVerdict(%s) = %+v, %v; want an error", bad, v, err)
		}
	}
}
