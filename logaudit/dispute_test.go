package logaudit_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/logaudit"
)

// disputeLeaves are a dispute (seq 601) of the round of seq 599 and its outcome (seq
// 602), after the shared records.
func disputeLeaves(t *testing.T) [][]byte {
	t.Helper()
	ctx := context.Background()
	s := mustSigner(t)
	d, err := s.Dispute(ctx, "entry-1", 1, 599, time.Date(2026, 6, 1, 10, 0, 10, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	o, err := s.Outcome(ctx, "entry-1", 1, 601, d.PayloadDigest, time.Date(2026, 6, 1, 10, 0, 20, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	dl, err := attest.RecordLeaf(601, "dispute", d.Envelope)
	if err != nil {
		t.Fatal(err)
	}
	ol, err := attest.RecordLeaf(602, "outcome", o.Envelope)
	if err != nil {
		t.Fatal(err)
	}
	return [][]byte{dl, ol}
}

// TestDisputeKinds: a log with a dispute and its outcome audits clean, counting both
// kinds; a tampered outcome, or a dispute logged under another kind, fails.
func TestDisputeKinds(t *testing.T) {
	f := newFixture(t)
	extra := disputeLeaves(t)
	f.write(append(append([][]byte{}, f.leaves...), extra...))
	rep := f.audit(f.config())
	if !rep.OK() || rep.Counts["dispute"] != 1 || rep.Counts["outcome"] != 1 || rep.Verified != 602 {
		t.Fatalf("ok %v counts %v verified %d failures %+v", rep.OK(), rep.Counts, rep.Verified, rep.Failures)
	}

	f = newFixture(t)
	l := append(append([][]byte{}, f.leaves...), extra...)
	leaf := []byte(string(l[601]))
	i := strings.Index(string(leaf), `"payload":"`) + len(`"payload":"`) + 40
	leaf[i] ^= 0x01
	l[601] = leaf
	f.write(l)
	wantReason(t, f.audit(f.config()), logaudit.Reason("bad_signature"), 601)

	f = newFixture(t)
	l = append(append([][]byte{}, f.leaves...), extra...)
	p, _ := attest.ParseLeaf(l[600])
	l[600], _ = attest.RecordLeaf(601, "outcome", p.Data)
	f.write(l)
	wantReason(t, f.audit(f.config()), logaudit.ReasonKindMismatch, 600)
}
