package verifier_test

import (
	"context"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/verifier"
)

func signStatement(t *testing.T, st *attest.Statement, s attest.Signer) []byte {
	t.Helper()
	env, _, err := attest.Sign(context.Background(), st, s)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := attest.EncodeEnvelope(env)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestVerifyDisputeAndOutcome checks that a signed dispute and its outcome verify
// offline, with their times held to the key's window, that the outcome links to the
// dispute, and that a tampered or foreign outcome does not.
func TestVerifyDisputeAndOutcome(t *testing.T) {
	vk := newVectorKeys()
	entry := attest.ChangeEntry{Kind: "remote", Slug: "mcp-example-com-mcp", URL: vectorURL}
	opened := time.Date(2026, 11, 30, 6, 45, 12, 0, time.UTC)
	dp := attest.NewDisputePredicate(entry, 1, opened,
		attest.Finding{Record: attest.RecordRef{Seq: 5, PayloadDigest: attest.Digest([]byte("round"))}, CheckID: "destructive_annotations", Status: attest.StatusFailed},
		"It is read-only.", "", "0.1.0")
	draw := signStatement(t, attest.NewDisputeStatement(dp), vk.active)
	dres, err := verifier.Verify(draw, vk.doc, verifier.DefaultPolicy())
	if err != nil || verifier.RecordKind(dres.PredicateType) != "dispute" {
		t.Fatalf("dispute: %v (%s)", err, dres.PredicateType)
	}
	outcome := func(digest string, number int64, e attest.ChangeEntry, at time.Time) *verifier.Result {
		op := attest.NewOutcomePredicate(e, attest.OutcomeDispute{Number: number, Record: attest.RecordRef{Seq: 9, PayloadDigest: digest}},
			attest.DecisionUpheld, "", "The tool is annotated read-only.", at, "0.1.0")
		res, err := verifier.Verify(signStatement(t, attest.NewOutcomeStatement(op), vk.active), vk.doc, verifier.DefaultPolicy())
		if err != nil {
			t.Fatalf("outcome: %v", err)
		}
		return res
	}
	ores := outcome(dres.PayloadDigest, 1, entry, opened.Add(time.Hour))
	if verifier.RecordKind(ores.PredicateType) != "outcome" {
		t.Errorf("outcome kind %q", verifier.RecordKind(ores.PredicateType))
	}
	if f := verifier.CheckOutcomeLink(dres, ores); f != nil {
		t.Errorf("CheckOutcomeLink = %v", f)
	}
	// Known from a bundle: the dispute's seq (log index 8 → seq 9) must match too.
	dres.Log = &verifier.LogResult{LogIndex: 8}
	if f := verifier.CheckOutcomeLink(dres, ores); f != nil {
		t.Errorf("CheckOutcomeLink with seq 9 = %v", f)
	}
	dres.Log = &verifier.LogResult{LogIndex: 3}
	if f := verifier.CheckOutcomeLink(dres, ores); f == nil || f.Reason != verifier.ReasonOutcomeLink {
		t.Errorf("another seq: %v", f)
	}
	dres.Log = nil
	other := entry
	other.Slug = "another"
	for name, o := range map[string]*verifier.Result{
		"another dispute's digest": outcome(attest.Digest([]byte("x")), 1, entry, opened),
		"another number":           outcome(dres.PayloadDigest, 2, entry, opened),
		"another entry":            outcome(dres.PayloadDigest, 1, other, opened),
	} {
		if f := verifier.CheckOutcomeLink(dres, o); f == nil || f.Reason != verifier.ReasonOutcomeLink {
			t.Errorf("%s: %v", name, f)
		}
	}
	if f := verifier.CheckOutcomeLink(ores, dres); f == nil {
		t.Error("swapped records linked")
	}
	// Outside the key's window.
	late := attest.NewDisputePredicate(entry, 2, time.Date(2026, 8, 21, 23, 59, 59, 0, time.UTC), dp.Finding, "x", "", "0.1.0")
	res, _ := verifier.Verify(signStatement(t, attest.NewDisputeStatement(late), vk.active), vk.doc, verifier.DefaultPolicy())
	if res == nil || res.Failure == nil || res.Failure.Reason != verifier.ReasonOutsideWindow {
		t.Errorf("dispute outside the window: %+v", res)
	}
}
