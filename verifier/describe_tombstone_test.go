package verifier_test

import (
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/probity-dev/probity/verifier"
)

// TestDescribeTombstone: Describe ("probity inspect") reads tombstone documents with
// attest's parser, the auditor's (logaudit's TestMalformedTombstones reads the same
// cases): the valid documents of attest/testdata/tombstones.json are described, every
// malformed one is refused with a *DescribeError.
func TestDescribeTombstone(t *testing.T) {
	b, err := os.ReadFile("../attest/testdata/tombstones.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases struct {
		Valid     []string `json:"valid"`
		Malformed []struct {
			Why string `json:"why"`
			Doc string `json:"doc"`
		} `json:"malformed"`
	}
	if err := json.Unmarshal(b, &cases); err != nil || len(cases.Valid) == 0 || len(cases.Malformed) == 0 {
		t.Fatalf("the cases: %v", err)
	}
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	for _, doc := range cases.Valid {
		d, err := verifier.Describe([]byte(doc), now)
		if err != nil || d.Form != "tombstone" || d.Tombstone == nil {
			t.Errorf("%s: %+v, %v", doc, d, err)
			continue
		}
		if d.Tombstone.DeletedAt != "2026-12-01T10:00:00.000Z" || len(d.Tombstone.Removed) == 0 && doc == cases.Valid[0] {
			t.Errorf("%s: described as %+v", doc, *d.Tombstone)
		}
	}
	d, err := verifier.Describe([]byte(cases.Valid[0]), now)
	if err != nil {
		t.Fatal(err)
	}
	if tb := d.Tombstone; tb.Entry != "example" || tb.Reason != "the operator removed the server" || len(tb.Removed) != 1 ||
		tb.Removed[0] != (verifier.TombstoneReference{Seq: 1, Kind: "probe", PayloadDigest: "sha256:d6709818060ec01433c73eb48ac52102d36baa1955b9f9db2ebd9bbaa5c2db42"}) {
		t.Errorf("the worked example described as %+v", *tb)
	}
	for _, m := range cases.Malformed {
		d, err := verifier.Describe([]byte(m.Doc), now)
		var de *verifier.DescribeError
		if !errors.As(err, &de) {
			t.Errorf("%s: described as %+v, %v; want a *DescribeError", m.Why, d, err)
		}
	}
}
