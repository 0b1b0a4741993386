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
		want       verifier.FailureReason
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

// TestVerifySupplyStatement checks that a signed supply statement verifies, and that
// one whose Verified decision does not follow from its checks is refused.
func TestVerifySupplyStatement(t *testing.T) {
	vk := newVectorKeys()
	checks := make([]attest.SupplyCheck, len(attest.SupplyCheckIDs))
	for i, id := range attest.SupplyCheckIDs {
		checks[i] = attest.SupplyCheck{ID: id, Weight: attest.SupplyWeights[i], Status: attest.SupplyPassed, PointsMilli: attest.SupplyWeights[i] * 1000}
	}
	p := &attest.SupplyPredicate{
		Checks: checks, Entry: attest.ChangeEntry{Kind: "npm", Slug: "npm-acme-mcp", Package: "pkg:npm/%40acme/mcp"},
		EvaluatedAt: "2026-11-30T06:45:12.345Z", Score: 100, WeightRan: 100, Verified: true,
		SuiteVersion: "2026.11", ToolVersion: "0.1.0",
	}
	st := attest.NewSupplyStatement(p, attest.Digest([]byte("facts"))[len("sha256:"):])
	env, _, err := attest.Sign(context.Background(), st, vk.active)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := attest.EncodeEnvelope(env)
	if _, err := verifier.Verify(raw, vk.doc, verifier.DefaultPolicy()); err != nil {
		t.Fatalf("supply statement: %v", err)
	}
	// Signed over a false claim (bypassing attest.Sign's own check): refused.
	p.Checks[0].Status, p.Checks[0].PointsMilli = attest.SupplyFailed, 0
	payload, err := attest.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	env, err = attest.SignPayload(context.Background(), payload, vk.active)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ = attest.EncodeEnvelope(env)
	if res, err := verifier.Verify(raw, vk.doc, verifier.DefaultPolicy()); err == nil || res.Failure == nil || res.Failure.Reason != verifier.ReasonSchemaViolation && res.Failure.Reason != verifier.ReasonMalformedStatement {
		t.Fatalf("a supply statement claiming Verified with a failed source repository: %v", err)
	}
}
