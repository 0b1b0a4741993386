package verifier_test

import (
	"context"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/verifier"
)

// TestVerifyBaselineStatement: a signed baseline verifies offline, its approvedAt held
// to the key's window; Describe names its kind, time and fingerprints; one whose subject
// is not its surface (signed bypassing attest.Sign's check) is refused.
func TestVerifyBaselineStatement(t *testing.T) {
	vk := newVectorKeys()
	fp := attest.Fingerprints{Toolset: attest.Digest([]byte("t")), Schema: attest.Digest([]byte("s")), Surface: attest.Digest([]byte("u"))}
	entry := attest.ChangeEntry{Kind: "remote", Slug: "mcp-example-com-mcp", URL: vectorURL}
	sign := func(at time.Time, edit func(*attest.Statement)) []byte {
		t.Helper()
		st := attest.NewBaselineStatement(attest.NewBaselinePredicate(entry, 2, at, "f20261130T064512345Z-e1", attest.Digest([]byte("round")), fp, 4, "0.1.0"))
		edit(st)
		payload, err := attest.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		env, err := attest.SignPayload(context.Background(), payload, vk.active)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := attest.EncodeEnvelope(env)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	at := time.Date(2026, 11, 30, 6, 45, 12, 345e6, time.UTC)
	raw := sign(at, func(*attest.Statement) {})
	res, err := verifier.Verify(raw, vk.doc, verifier.DefaultPolicy())
	if err != nil {
		t.Fatalf("baseline statement: %v", err)
	}
	if res.Statement == nil || res.Statement.Baseline == nil || res.Statement.Baseline.Number != 2 {
		t.Fatalf("verified statement %+v", res.Statement)
	}
	d, err := verifier.Describe(raw, at)
	if err != nil {
		t.Fatal(err)
	}
	if d.RecordKind != "baseline" || d.Baseline == nil || d.Baseline.Fingerprints.Surface != fp.Surface || len(d.Times) != 1 || d.Times[0].Name != "approvedAt" {
		t.Fatalf("description %+v", d)
	}

	old := sign(time.Date(2026, 8, 21, 23, 59, 59, 0, time.UTC), func(*attest.Statement) {})
	if res, err := verifier.Verify(old, vk.doc, verifier.DefaultPolicy()); err == nil || res.Failure == nil || res.Failure.Reason != verifier.ReasonOutsideWindow {
		t.Fatalf("a baseline approved before the key's window: %v", err)
	}
	forged := sign(at, func(st *attest.Statement) {
		st.Subject[0].Digest["sha256"] = attest.Digest([]byte("other"))[len("sha256:"):]
	})
	if res, err := verifier.Verify(forged, vk.doc, verifier.DefaultPolicy()); err == nil || res.Failure == nil || res.Failure.Reason != verifier.ReasonMalformedStatement {
		t.Fatalf("a baseline whose subject is not its surface: %v", err)
	}
}
