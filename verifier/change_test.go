package verifier_test

import (
	"context"
	"testing"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/verifier"
)

// TestVerifyChangeStatement checks that a signed change statement verifies like a round,
// with its recordedAt held to the key's validity window.
func TestVerifyChangeStatement(t *testing.T) {
	vk := newVectorKeys()
	n := 3
	p := &attest.ChangePredicate{
		Entry:       attest.ChangeEntry{Kind: "remote", Slug: "mcp-example-com-mcp", URL: vectorURL},
		Number:      2,
		RecordedAt:  "2026-11-30T06:45:12.345Z",
		Origin:      attest.OriginAutomatic,
		Kind:        attest.ChangeTools,
		Summary:     "1 tool added",
		Badges:      []string{},
		Before:      &attest.ChangeState{RoundID: "c1", PayloadDigest: attest.Digest([]byte("1")), Surface: attest.Digest([]byte("s1")), ToolCount: &n},
		After:       attest.ChangeState{RoundID: "f2", PayloadDigest: attest.Digest([]byte("2")), Surface: attest.Digest([]byte("s2"))},
		ToolVersion: "0.1.0",
	}
	for _, tc := range []struct {
		recordedAt string
		want       verifier.Reason
	}{
		{"2026-11-30T06:45:12.345Z", ""},
		{"2026-08-21T23:59:59.999Z", verifier.ReasonOutsideWindow},
	} {
		p.RecordedAt = tc.recordedAt
		st, err := attest.NewChangeStatement(p)
		if err != nil {
			t.Fatal(err)
		}
		env, _, err := attest.Sign(context.Background(), st, vk.active)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := attest.EncodeEnvelope(env)
		if err != nil {
			t.Fatal(err)
		}
		res, err := verifier.Verify(raw, vk.doc, verifier.DefaultPolicy())
		switch {
		case tc.want == "" && err != nil:
			t.Fatalf("change statement recorded %s: %v", tc.recordedAt, err)
		case tc.want != "" && (res == nil || res.Failure == nil || res.Failure.Reason != tc.want):
			t.Fatalf("change statement recorded %s: %v, want %s", tc.recordedAt, err, tc.want)
		}
	}
}
