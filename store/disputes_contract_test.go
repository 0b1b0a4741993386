package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
)

func newTestDispute(entryID, number, roundID int64, check string, by int64, at time.Time) NewDispute {
	return NewDispute{EntryID: entryID, Number: number, RoundID: roundID, CheckID: check, Status: attest.StatusFailed,
		Statement: "It is read-only.\nSee the source.", Evidence: "https://example.com/src", OpenedAt: at, OpenedBy: by,
		Envelope: testEnvelope(fmt.Sprintf(`{"dispute":[%d,%d]}`, entryID, number)), KeyID: "a050837d85070582"}
}

func newTestOutcome(disputeID int64, decision, suite string, by int64, at time.Time) NewOutcome {
	return NewOutcome{DisputeID: disputeID, Decision: decision, SuiteVersion: suite, Reason: "Checked by hand.",
		DecidedAt: at, DecidedBy: by, Envelope: testEnvelope(fmt.Sprintf(`{"outcome":%d}`, disputeID)), KeyID: "a050837d85070582"}
}

// TestDisputesContract: a dispute names a signed round of its entry and takes the
// entry's next number; one open dispute per round and check; one outcome per dispute,
// which closes it; each is stored with its ledger record (kind dispute, outcome, the
// entry's); the round is never altered; the opener's and decider's accounts are kept
// privately and go with the account, the dispute stays; the entry's deletion takes the
// disputes, and its tombstone lists their records.
func TestDisputesContract(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		a := insertTestAccount(t, s, "maint@example.com", t0)
		op := insertTestAccount(t, s, "op@example.com", t0)
		e, other := mustAddEntry(t, s, "disputed"), mustAddEntry(t, s, "other")
		r1 := mustSave(t, s, fullRound(e.ID, t0, t0, "echo"))
		u := mustSave(t, s, unsignedRound(e.ID, t0.Add(time.Hour), t0.Add(time.Hour)))
		r2 := mustSave(t, s, fullRound(other.ID, t0, t0, "echo"))
		resultsBefore, err := s.RoundResults(ctx, r1)
		if err != nil {
			t.Fatal(err)
		}

		ref, err := s.SignedRound(ctx, r1)
		if err != nil || ref.EntryID != e.ID || ref.Seq < 1 || ref.PayloadDigest != hexDigest(fmt.Sprintf("r-%d-%d", e.ID, t0.UnixMilli())) && ref.PayloadDigest == "" || len(ref.Envelope) == 0 {
			t.Fatalf("SignedRound = %+v, %v", ref, err)
		}
		if _, err := s.SignedRound(ctx, u); !errors.Is(err, ErrNotFound) {
			t.Errorf("SignedRound(unsigned) = %v, want ErrNotFound", err)
		}
		if n, err := s.NextDisputeNumber(ctx, e.ID); err != nil || n != 1 {
			t.Fatalf("NextDisputeNumber = %d, %v", n, err)
		}

		// Refusals.
		for name, c := range map[string]struct {
			d    NewDispute
			want error
		}{
			"another entry's round": {newTestDispute(e.ID, 1, r2, "reachability", a, t0), ErrNotFound},
			"an unsigned round":     {newTestDispute(e.ID, 1, u, "reachability", a, t0), ErrNotFound},
			"number 2 first":        {newTestDispute(e.ID, 2, r1, "reachability", a, t0), ErrDisputeNumber},
		} {
			if _, err := s.SaveDispute(ctx, c.d); !errors.Is(err, c.want) {
				t.Errorf("%s: SaveDispute = %v, want %v", name, err, c.want)
			}
		}
		for name, mutate := range map[string]func(d *NewDispute){
			"empty statement":   func(d *NewDispute) { d.Statement = "" },
			"long statement":    func(d *NewDispute) { d.Statement = strings.Repeat("x", attest.MaxDisputeText+1) },
			"control character": func(d *NewDispute) { d.Statement = "a\x00b" },
			"http evidence":     func(d *NewDispute) { d.Evidence = "http://example.com/" },
			"no envelope":       func(d *NewDispute) { d.Envelope, d.KeyID = nil, "" },
		} {
			d := newTestDispute(e.ID, 1, r1, "reachability", a, t0)
			mutate(&d)
			if _, err := s.SaveDispute(ctx, d); err == nil {
				t.Errorf("%s: SaveDispute accepted it", name)
			}
		}

		d1, err := s.SaveDispute(ctx, newTestDispute(e.ID, 1, r1, "reachability", a, t0))
		if err != nil {
			t.Fatal(err)
		}
		if d1.Number != 1 || d1.EntrySlug != "disputed" || d1.RoundID != r1 || d1.RoundPublicID != ref.RoundID || d1.CheckID != "reachability" ||
			d1.Status != attest.StatusFailed || d1.Statement != "It is read-only.\nSee the source." || d1.Evidence != "https://example.com/src" ||
			!d1.OpenedAt.Equal(ms(t0)) || d1.OpenedBy != a || d1.Seq <= ref.Seq || d1.PayloadDigest != testPayloadDigest(newTestDispute(e.ID, 1, r1, "", 0, t0).Envelope) || d1.Outcome != nil {
			t.Fatalf("SaveDispute = %+v", d1)
		}
		if _, err := s.SaveDispute(ctx, newTestDispute(e.ID, 2, r1, "reachability", a, t0.Add(time.Minute))); !errors.Is(err, ErrDisputeOpen) {
			t.Errorf("a second open dispute of the check = %v, want ErrDisputeOpen", err)
		}
		d2, err := s.SaveDispute(ctx, newTestDispute(e.ID, 2, r1, "tls_certificate", a, t0.Add(time.Minute)))
		if err != nil || d2.Number != 2 {
			t.Fatalf("another check: %+v, %v", d2, err)
		}
		if n, err := s.DisputesOpenedSince(ctx, a, t0); err != nil || n != 2 {
			t.Errorf("DisputesOpenedSince = %d, %v", n, err)
		}
		if n, err := s.DisputesOpenedSince(ctx, a, t0.Add(time.Second)); err != nil || n != 1 {
			t.Errorf("DisputesOpenedSince(later) = %d, %v", n, err)
		}

		// The ledger holds both records, the entry's, of kind dispute.
		kinds := map[int64]RecordKind{}
		if err := s.Ledger(ctx, LedgerFilter{EntrySlug: "disputed"}, func(r LedgerRecord) error {
			kinds[r.Seq] = r.Kind
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if kinds[d1.Seq] != RecordDispute || kinds[d2.Seq] != RecordDispute {
			t.Errorf("ledger kinds %v, disputes %d %d", kinds, d1.Seq, d2.Seq)
		}

		// Outcomes.
		if _, err := s.SaveOutcome(ctx, newTestOutcome(d1.ID, attest.DecisionCorrected, "", op, t0.Add(time.Hour))); err == nil {
			t.Error("corrected without a suite version accepted")
		}
		if _, err := s.SaveOutcome(ctx, newTestOutcome(d1.ID, attest.DecisionRejected, "2026.12", op, t0.Add(time.Hour))); err == nil {
			t.Error("rejected with a suite version accepted")
		}
		if _, err := s.SaveOutcome(ctx, newTestOutcome(9999, attest.DecisionRejected, "", op, t0.Add(time.Hour))); !errors.Is(err, ErrNotFound) {
			t.Errorf("outcome of no dispute = %v", err)
		}
		decided, err := s.SaveOutcome(ctx, newTestOutcome(d1.ID, attest.DecisionCorrected, "2026.12", op, t0.Add(time.Hour)))
		if err != nil {
			t.Fatal(err)
		}
		o := decided.Outcome
		if o == nil || o.Decision != attest.DecisionCorrected || o.SuiteVersion != "2026.12" || o.Reason != "Checked by hand." ||
			!o.DecidedAt.Equal(ms(t0.Add(time.Hour))) || o.DecidedBy != op || o.Seq <= d2.Seq || o.PayloadDigest == "" {
			t.Fatalf("SaveOutcome = %+v", o)
		}
		if _, err := s.SaveOutcome(ctx, newTestOutcome(d1.ID, attest.DecisionUpheld, "", op, t0.Add(2*time.Hour))); !errors.Is(err, ErrDisputeDecided) {
			t.Errorf("a second outcome = %v, want ErrDisputeDecided", err)
		}
		// Decided, the check can be contested again.
		d3, err := s.SaveDispute(ctx, newTestDispute(e.ID, 3, r1, "reachability", a, t0.Add(2*time.Hour)))
		if err != nil || d3.Number != 3 {
			t.Fatalf("contest again after the outcome: %+v, %v", d3, err)
		}

		all, err := s.Disputes(ctx, DisputeFilter{EntryID: e.ID})
		if err != nil || len(all) != 3 || all[0].ID != d3.ID || all[2].ID != d1.ID || all[2].Outcome == nil {
			t.Fatalf("Disputes(entry) = %+v, %v", all, err)
		}
		queue, err := s.Disputes(ctx, DisputeFilter{OpenOnly: true, OldestFirst: true})
		if err != nil || len(queue) != 2 || queue[0].ID != d2.ID || queue[1].ID != d3.ID {
			t.Fatalf("queue = %+v, %v", queue, err)
		}
		if got, err := s.Dispute(ctx, d1.ID); err != nil || got.Outcome == nil || got.Seq != d1.Seq {
			t.Errorf("Dispute = %+v, %v", got, err)
		}
		if _, err := s.Dispute(ctx, 9999); !errors.Is(err, ErrNotFound) {
			t.Errorf("Dispute(9999) = %v", err)
		}
		if none, err := s.Disputes(ctx, DisputeFilter{EntryID: other.ID}); err != nil || len(none) != 0 {
			t.Errorf("Disputes(other) = %+v, %v", none, err)
		}
		// The round is never altered.
		if after, err := s.RoundResults(ctx, r1); err != nil || string(after) != string(resultsBefore) {
			t.Errorf("round results changed: %s, %v", after, err)
		}
		checkSignedInvariant(t, s)

		// The maintainer's account goes; its disputes stay, without it.
		if err := s.DeleteAccount(ctx, a); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Dispute(ctx, d1.ID); err != nil || got.OpenedBy != 0 || got.Outcome.DecidedBy != op {
			t.Errorf("after the account's deletion: %+v, %v", got, err)
		}

		// The entry goes with its disputes; the tombstone lists their records.
		if err := s.DeleteEntry(ctx, "disputed", "removed by its operator"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Dispute(ctx, d1.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("Dispute after the entry's deletion = %v", err)
		}
		ts, err := s.Tombstones(ctx, 0)
		if err != nil || len(ts) != 1 {
			t.Fatalf("Tombstones = %+v, %v", ts, err)
		}
		removed := map[int64]RecordKind{}
		for _, r := range ts[0].Removed {
			removed[r.Seq] = r.Kind
		}
		if removed[d1.Seq] != RecordDispute || removed[d3.Seq] != RecordDispute || removed[o.Seq] != RecordOutcome || removed[ref.Seq] != RecordProbe {
			t.Errorf("tombstone lists %v", removed)
		}
	})
}
