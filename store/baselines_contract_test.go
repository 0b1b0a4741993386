package store

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/internal/ledgertest"
)

// testBaseline is baseline number n of entry e, signed by s, approved by account.
func testBaseline(t *testing.T, s *ledgertest.Signer, e Entry, n, account int64, at time.Time) Baseline {
	t.Helper()
	rec, err := s.Baseline(context.Background(), e.Slug, n, at)
	if err != nil {
		t.Fatal(err)
	}
	return Baseline{EntryID: e.ID, Number: n, Fingerprints: attest.Fingerprints{Toolset: attest.Digest([]byte("t")),
		Schema: attest.Digest([]byte("s")), Surface: attest.Digest([]byte("u"))}, ToolCount: 2,
		BasisRoundID: "round", BasisPayloadDigest: hexDigest("1"), ApprovedAt: at, ApprovedBy: account,
		Envelope: rec.Envelope, KeyID: s.KeyID}
}

// TestBaselinesContract: a baseline is stored with its ledger record (kind baseline,
// numbered) in one transaction and numbered 1, 2, … per entry; the newest is the
// current one; a stale number, a missing entry and malformed values are refused;
// rows are never changed; deleting the approving account keeps the baseline (without
// its approver), and deleting the entry takes its baselines and lists their records in
// its tombstone.
func TestBaselinesContract(t *testing.T) {
	signer, err := ledgertest.NewSigner("baselines")
	if err != nil {
		t.Fatal(err)
	}
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		a := insertTestAccount(t, s, "a@example.com", t0)
		e, other := mustAddEntry(t, s, "one"), mustAddEntry(t, s, "two")
		if _, err := s.CurrentBaseline(ctx, e.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("CurrentBaseline of none = %v, want ErrNotFound", err)
		}
		b1 := testBaseline(t, signer, e, 1, a, t0)
		id1, err := s.SaveBaseline(ctx, b1)
		if err != nil {
			t.Fatalf("SaveBaseline(1) = %v", err)
		}
		got, err := s.CurrentBaseline(ctx, e.ID)
		if err != nil || got.ID != id1 || got.Number != 1 || got.ApprovedBy != a || !got.ApprovedAt.Equal(ms(t0)) ||
			got.Fingerprints != b1.Fingerprints || got.ToolCount != 2 || got.BasisRoundID != "round" ||
			string(got.Envelope) != string(b1.Envelope) || got.KeyID != signer.KeyID || got.Seq < 1 || len(got.PayloadDigest) != 64 {
			t.Fatalf("CurrentBaseline = %+v, %v", got, err)
		}
		var kinds []RecordKind
		if err := s.Ledger(ctx, LedgerFilter{EntrySlug: e.Slug}, func(r LedgerRecord) error {
			kinds = append(kinds, r.Kind)
			if r.Seq != got.Seq || r.PayloadDigest != got.PayloadDigest {
				t.Errorf("ledger record %+v, want seq %d digest %s", r, got.Seq, got.PayloadDigest)
			}
			return nil
		}); err != nil || len(kinds) != 1 || kinds[0] != RecordBaseline {
			t.Fatalf("Ledger = %v, %v", kinds, err)
		}

		// The number must be the next: a repeat or a gap is ErrBaselineNumber, and
		// nothing is stored.
		for _, n := range []int64{1, 3} {
			if _, err := s.SaveBaseline(ctx, testBaseline(t, signer, e, n, a, t0)); !errors.Is(err, ErrBaselineNumber) {
				t.Errorf("SaveBaseline(%d) = %v, want ErrBaselineNumber", n, err)
			}
		}
		if _, err := s.SaveBaseline(ctx, testBaseline(t, signer, Entry{ID: 9999, Slug: "gone"}, 1, a, t0)); !errors.Is(err, ErrNotFound) {
			t.Errorf("SaveBaseline(missing entry) = %v, want ErrNotFound", err)
		}
		for name, edit := range map[string]func(*Baseline){
			"no envelope":     func(b *Baseline) { b.Envelope, b.KeyID = nil, "" },
			"bad fingerprint": func(b *Baseline) { b.Fingerprints.Surface = "sha256:XYZ" },
			"no tools":        func(b *Baseline) { b.ToolCount = 0 },
			"bad round id":    func(b *Baseline) { b.BasisRoundID = strings.Repeat("r", 65) },
			"bad digest":      func(b *Baseline) { b.BasisPayloadDigest = "x" },
			"other digest":    func(b *Baseline) { b.PayloadDigest = hexDigest("other") },
			"no time":         func(b *Baseline) { b.ApprovedAt = time.Time{} },
		} {
			b := testBaseline(t, signer, e, 2, a, t0)
			edit(&b)
			if _, err := s.SaveBaseline(ctx, b); err == nil || errors.Is(err, ErrBaselineNumber) {
				t.Errorf("SaveBaseline(%s) = %v, want a refusal", name, err)
			}
		}

		// Two approvals at once: one is number 2, the other is told to renumber.
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			wg.Go(func() { _, errs[i] = s.SaveBaseline(ctx, testBaseline(t, signer, e, 2, a, t0.Add(time.Minute))) })
		}
		wg.Wait()
		if (errs[0] == nil) == (errs[1] == nil) || !errors.Is(errors.Join(errs...), ErrBaselineNumber) {
			t.Fatalf("concurrent SaveBaseline(2) = %v", errs)
		}
		if cur, err := s.CurrentBaseline(ctx, e.ID); err != nil || cur.Number != 2 {
			t.Fatalf("CurrentBaseline after 2 = %+v, %v", cur, err)
		}
		if bs, err := s.Baselines(ctx, e.ID, 10); err != nil || len(bs) != 2 || bs[0].Number != 2 || bs[1].Number != 1 {
			t.Fatalf("Baselines = %+v, %v", bs, err)
		}
		if _, err := s.CurrentBaseline(ctx, other.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("CurrentBaseline of the other entry = %v", err)
		}
		if err := ExecForTest(ctx, s, `UPDATE baselines SET tool_count = 3`); err == nil {
			t.Error("a baseline row was changed")
		}

		// The approving account goes; its baselines stay, without it.
		if err := s.DeleteAccount(ctx, a); err != nil {
			t.Fatal(err)
		}
		if cur, err := s.CurrentBaseline(ctx, e.ID); err != nil || cur.Number != 2 || cur.ApprovedBy != 0 {
			t.Fatalf("CurrentBaseline after the account's deletion = %+v, %v", cur, err)
		}

		// The entry goes: its baselines and their records with it, listed by its tombstone.
		if _, err := s.SaveBaseline(ctx, testBaseline(t, signer, other, 1, 0, t0)); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteEntry(ctx, e.Slug, "removed by its operator"); err != nil {
			t.Fatalf("DeleteEntry: %v", err)
		}
		if _, err := s.CurrentBaseline(ctx, e.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("CurrentBaseline after the entry's deletion = %v", err)
		}
		ts := tombstones(t, s)
		if len(ts) != 1 || len(ts[0].Removed) != 2 || ts[0].Removed[0].Kind != RecordBaseline || ts[0].Removed[1].Kind != RecordBaseline {
			t.Fatalf("tombstones = %+v", ts)
		}
		if cur, err := s.CurrentBaseline(ctx, other.ID); err != nil || cur.Number != 1 {
			t.Errorf("the other entry's baseline = %+v, %v", cur, err)
		}
	})
}
