package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/internal/ledgertest"
)

// TestReportsContract: a report is stored bounded and due 72 hours after it came, the
// queue is the open reports by due time, a report is closed once, the contact is
// erased 30 days after closing; a withdrawal is stored with its ledger record, numbered
// per entry, sets the entry's Verified withdrawn until a restored record, and is
// refused out of turn; deleting the entry deletes its reports and withdrawals and its
// tombstone lists the withdrawal records.
func TestReportsContract(t *testing.T) {
	signer, err := ledgertest.NewSigner("reports")
	if err != nil {
		t.Fatal(err)
	}
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		op := insertTestAccount(t, s, "op@example.com", t0)
		e := mustAddEntry(t, s, "harmful")
		other := mustAddEntry(t, s, "other")

		if _, err := s.AddReport(ctx, Report{EntryID: e.ID, Text: "  ", ReceivedAt: t0}); err == nil {
			t.Error("a blank report was stored")
		}
		if _, err := s.AddReport(ctx, Report{EntryID: e.ID, Text: strings.Repeat("é", MaxReportText+1), ReceivedAt: t0}); err == nil {
			t.Error("a report over the bound was stored")
		}
		if _, err := s.AddReport(ctx, Report{EntryID: 99999, Text: "x", ReceivedAt: t0}); !errors.Is(err, ErrNotFound) {
			t.Errorf("a report about no entry: %v, want ErrNotFound", err)
		}
		r1, err := s.AddReport(ctx, Report{EntryID: e.ID, Text: "It <b>uploads</b> files.", Contact: "me@example.org", ReceivedAt: t0.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if r1.Status != ReportOpen || !r1.DueAt.Equal(r1.ReceivedAt.Add(72*time.Hour)) || r1.EntrySlug != "harmful" || r1.Text != "It <b>uploads</b> files." || r1.Contact != "me@example.org" {
			t.Errorf("report = %+v", r1)
		}
		r2, err := s.AddReport(ctx, Report{EntryID: other.ID, Text: "older", ReceivedAt: t0})
		if err != nil {
			t.Fatal(err)
		}
		q, err := s.OpenReports(ctx, 0)
		if err != nil || len(q) != 2 || q[0].ID != r2.ID || q[1].ID != r1.ID {
			t.Fatalf("queue = %+v, %v", q, err)
		}
		if n, err := s.CountEntryReports(ctx, e.ID, t0); err != nil || n != 1 {
			t.Errorf("CountEntryReports = %d, %v", n, err)
		}
		if _, err := s.DeclineReport(ctx, ReportDecision{ReportID: r2.ID, By: op, Reason: "Not harmful.", At: t0.Add(2 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DeclineReport(ctx, ReportDecision{ReportID: r2.ID, By: op, Reason: "again", At: t0.Add(2 * time.Hour)}); !errors.Is(err, ErrReportClosed) {
			t.Errorf("declining twice: %v, want ErrReportClosed", err)
		}

		// A withdrawal of the supply run 1 (a stand-in: the store does not read it).
		sup, err := signer.Supply(ctx, "harmful", t0)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := signer.Withdrawal(ctx, "harmful", 1, "withdrawn", "It uploads files.", 1, sup.PayloadDigest, t0.Add(3*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		w := Withdrawal{EntryID: e.ID, Number: 1, Action: "withdrawn", Reason: "It uploads files.", At: t0.Add(3 * time.Hour),
			SupplySeq: 1, Envelope: rec.Envelope, KeyID: signer.KeyID}
		if _, err := s.SaveWithdrawal(ctx, Withdrawal{EntryID: e.ID, Number: 2, Action: "withdrawn", Reason: "x", At: t0, SupplySeq: 1,
			Envelope: rec.Envelope, KeyID: signer.KeyID}, nil); !errors.Is(err, ErrWithdrawalConflict) {
			t.Errorf("number 2 first: %v, want ErrWithdrawalConflict", err)
		}
		got, err := s.SaveWithdrawal(ctx, w, &ReportDecision{ReportID: r1.ID, Status: ReportWithdrawn, By: op, Reason: "It uploads files.", At: t0.Add(3 * time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if got.Seq < 1 || got.PayloadDigest != rec.PayloadDigest || got.Number != 1 {
			t.Errorf("withdrawal = %+v", got)
		}
		if e2, _ := s.Entry(ctx, "harmful"); !e2.VerifiedWithdrawn {
			t.Error("the entry's Verified is not withdrawn")
		}
		if r, _ := s.Report(ctx, r1.ID); r.Status != ReportWithdrawn || r.DecidedBy != op {
			t.Errorf("report after withdrawal = %+v", r)
		}
		// Withdrawing again is out of turn.
		w.Number = 2
		if _, err := s.SaveWithdrawal(ctx, w, nil); !errors.Is(err, ErrWithdrawalConflict) {
			t.Errorf("withdrawing twice: %v, want ErrWithdrawalConflict", err)
		}
		rrec, err := signer.Withdrawal(ctx, "harmful", 2, "restored", "Fixed.", 1, sup.PayloadDigest, t0.Add(4*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SaveWithdrawal(ctx, Withdrawal{EntryID: e.ID, Number: 2, Action: "restored", Reason: "Fixed.", At: t0.Add(4 * time.Hour),
			SupplySeq: 1, Envelope: rrec.Envelope, KeyID: signer.KeyID}, nil); err != nil {
			t.Fatal(err)
		}
		if e2, _ := s.Entry(ctx, "harmful"); e2.VerifiedWithdrawn {
			t.Error("the entry's Verified is still withdrawn after a restored record")
		}
		ws, err := s.Withdrawals(ctx, e.ID)
		if err != nil || len(ws) != 2 || ws[0].Action != "withdrawn" || ws[1].Action != "restored" {
			t.Fatalf("withdrawals = %+v, %v", ws, err)
		}

		// The contact is erased 30 days after closing, not before.
		if n, err := s.PruneReportContacts(ctx, t0.Add(3*time.Hour)); err != nil || n != 0 {
			t.Errorf("prune before = %d, %v", n, err)
		}
		if n, err := s.PruneReportContacts(ctx, t0.Add(3*time.Hour+ReportContactKept)); err != nil || n != 1 {
			t.Errorf("prune after = %d, %v", n, err)
		}
		if r, _ := s.Report(ctx, r1.ID); r.Contact != "" {
			t.Errorf("contact kept: %q", r.Contact)
		}

		// Deleting the entry deletes its reports and withdrawals; the tombstone lists them.
		if err := s.DeleteEntry(ctx, "harmful", "removed"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Report(ctx, r1.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("report after deletion: %v", err)
		}
		ts, err := s.Tombstones(ctx, 0)
		if err != nil || len(ts) != 1 {
			t.Fatalf("tombstones = %+v, %v", ts, err)
		}
		kinds := 0
		for _, r := range ts[0].Removed {
			if r.Kind == RecordWithdrawal {
				kinds++
			}
		}
		if kinds != 2 {
			t.Errorf("tombstone lists %d withdrawal records, want 2: %+v", kinds, ts[0].Removed)
		}
	})
}
