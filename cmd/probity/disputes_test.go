package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/disputes"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/keys/signing"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/translog"
	"github.com/probity-dev/probity/verifier"
)

// oneMaintainer says account maintains entry, and no one else anything.
type oneMaintainer struct{ account, entry int64 }

func (m oneMaintainer) IsMaintainer(_ context.Context, accountID, entryID int64) (bool, error) {
	return accountID == m.account && entryID == m.entry, nil
}

// TestDisputeLifecycle is issue 18's acceptance test of disputes, on SQLite and (with
// PROBITY_TEST_DATABASE_URL) PostgreSQL: a real signed round of a real MCP server; its
// maintainer contests a check (a signed dispute naming the round's record); an operator
// decides (a signed outcome naming the dispute's record); the transparency log is
// brought up to date; both records' bundles verify offline with the verifier, the
// outcome links to the dispute, and `probity log audit` passes over the whole log,
// counting one dispute and one outcome. The round is unaltered.
func TestDisputeLifecycle(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			dbURL := ""
			if backend == "postgres" {
				dbURL = testDatabase(t)
			}
			testDisputeLifecycle(t, dbURL)
		})
	}
}

func testDisputeLifecycle(t *testing.T, dbURL string) {
	start := time.Now().UTC().Truncate(time.Second)
	r := newFollowerRig(t, dbURL, start)
	ctx := r.ctx
	r.round(t, 0)
	rs, err := r.st.Rounds(ctx, r.entry.ID, 1)
	if err != nil || len(rs) != 1 || !rs[0].Signed {
		t.Fatalf("rounds: %+v, %v", rs, err)
	}
	round := rs[0]
	resultsBefore, err := r.st.RoundResults(ctx, round.ID)
	if err != nil {
		t.Fatal(err)
	}
	maint, _, err := r.st.EmailAccount(ctx, "maint@example.com", "maint@example.com", start)
	if err != nil {
		t.Fatal(err)
	}
	stranger, _, err := r.st.EmailAccount(ctx, "stranger@example.com", "stranger@example.com", start)
	if err != nil {
		t.Fatal(err)
	}
	op, _, err := r.st.EmailAccount(ctx, "op@example.com", "op@example.com", start)
	if err != nil {
		t.Fatal(err)
	}
	_, signer, err := signing.OpenDir(r.keyDir, start)
	if err != nil {
		t.Fatal(err)
	}
	var changed []string
	svc, err := disputes.New(disputes.Config{Store: r.st, Maintainers: oneMaintainer{maint.ID, r.entry.ID}, Signer: signer,
		ToolVersion: version, Now: r.clock.Now, Changed: func(_ context.Context, slug string) { changed = append(changed, slug) }})
	if err != nil {
		t.Fatal(err)
	}

	const statement = "The tool get_weather is read-only.\nSee <b>our</b> docs."
	if _, err := svc.Contest(ctx, stranger.ID, r.entry.Slug, round.ID, "destructive_annotations", statement, ""); !errors.Is(err, disputes.ErrNotMaintainer) {
		t.Fatalf("a stranger's contest = %v, want ErrNotMaintainer", err)
	}
	if _, err := svc.Contest(ctx, maint.ID, r.entry.Slug, round.ID, "no_such_check", statement, ""); !errors.Is(err, disputes.ErrNoFinding) {
		t.Fatalf("an unknown check = %v, want ErrNoFinding", err)
	}
	r.clock.Set(start.Add(time.Minute))
	d, err := svc.Contest(ctx, maint.ID, r.entry.Slug, round.ID, "destructive_annotations", statement+"\r\n", "https://example.com/docs")
	if err != nil {
		t.Fatal(err)
	}
	if d.Number != 1 || d.Seq == 0 || d.Statement != statement || d.CheckID != "destructive_annotations" || d.Round != round.RoundID || d.Outcome != nil {
		t.Fatalf("dispute %+v", d)
	}
	if _, err := svc.Contest(ctx, maint.ID, r.entry.Slug, round.ID, "destructive_annotations", "again", ""); !errors.Is(err, disputes.ErrOpen) {
		t.Fatalf("a second open dispute = %v, want ErrOpen", err)
	}
	if q, err := svc.Queue(ctx); err != nil || len(q) != 1 || q[0].ID != d.ID {
		t.Fatalf("queue = %+v, %v", q, err)
	}

	r.clock.Set(start.Add(2 * time.Minute))
	if _, err := svc.Decide(ctx, op.ID, d.ID, attest.DecisionCorrected, "", "no version"); err == nil {
		t.Fatal("corrected without a suite version accepted")
	}
	decided, err := svc.Decide(ctx, op.ID, d.ID, attest.DecisionRejected, "", "The signed round shows no read-only annotation.")
	if err != nil {
		t.Fatal(err)
	}
	if decided.Outcome == nil || decided.Outcome.Decision != attest.DecisionRejected || decided.Outcome.Seq <= d.Seq {
		t.Fatalf("decided %+v", decided)
	}
	if _, err := svc.Decide(ctx, op.ID, d.ID, attest.DecisionUpheld, "", "changed my mind"); !errors.Is(err, disputes.ErrDecided) {
		t.Fatalf("a second outcome = %v, want ErrDecided", err)
	}
	if q, err := svc.Queue(ctx); err != nil || len(q) != 0 {
		t.Fatalf("queue after the outcome = %+v, %v", q, err)
	}
	if list, err := svc.OfEntry(ctx, r.entry.Slug); err != nil || len(list) != 1 || list[0].Outcome == nil {
		t.Fatalf("OfEntry = %+v, %v", list, err)
	}
	if len(changed) != 2 || changed[0] != r.entry.Slug {
		t.Errorf("Changed called for %v", changed)
	}
	if after, err := r.st.RoundResults(ctx, round.ID); err != nil || !bytes.Equal(after, resultsBefore) {
		t.Errorf("the round's results changed")
	}

	// The log: the key document's version, then every record; a checkpoint holds them.
	ef := envFlags{dataDir: r.dataDir, keyDir: r.keyDir}
	l, err := ef.openLog(ctx, r.st, logFlags{witnessTimeout: time.Second, checkpointInterval: translog.MinCheckpointInterval}, r.logger)
	if err != nil || l == nil {
		t.Fatalf("openLog: %v", err)
	}
	defer l.Close(context.WithoutCancel(ctx))
	if _, err := l.Sync(ctx); err != nil {
		t.Fatal(err)
	}

	// Both bundles verify offline; the outcome decides the dispute (seq included).
	doc, err := keys.Load(filepath.Join(r.keyDir, keys.DocumentFile))
	if err != nil {
		t.Fatal(err)
	}
	records := map[int64]store.LedgerRecord{}
	if err := r.st.Ledger(ctx, store.LedgerFilter{EntrySlug: r.entry.Slug}, func(rec store.LedgerRecord) error {
		records[rec.Seq] = rec
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	verify := func(seq int64, kind store.RecordKind) *verifier.Result {
		t.Helper()
		rec, ok := records[seq]
		if !ok || rec.Kind != kind {
			t.Fatalf("record %d: %+v, want kind %s", seq, rec.Kind, kind)
		}
		b, err := translog.Bundle(ctx, ef.logDirectory(), r.st, rec)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := b.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		res, err := verifier.VerifyBundle(raw, doc, verifier.DefaultPolicy())
		if err != nil {
			t.Fatalf("record %d: %v", seq, err)
		}
		if got := verifier.RecordKind(res.PredicateType); got != string(kind) {
			t.Errorf("record %d: kind %s", seq, got)
		}
		return res
	}
	dres := verify(d.Seq, store.RecordDispute)
	ores := verify(decided.Outcome.Seq, store.RecordOutcome)
	if f := verifier.CheckOutcomeLink(dres, ores); f != nil {
		t.Errorf("CheckOutcomeLink = %v", f)
	}
	sd := dres.Statement.Dispute
	if sd.Statement != statement || sd.Finding.CheckID != "destructive_annotations" || sd.Finding.Record.Seq != records[sd.Finding.Record.Seq].Seq ||
		sd.Finding.Record.PayloadDigest != "sha256:"+round.PayloadDigest || sd.Entry.Slug != r.entry.Slug {
		t.Errorf("signed dispute %+v", sd)
	}
	for _, res := range []*verifier.Result{dres, ores} {
		p, _ := attest.Marshal(res.Statement.Predicate)
		if strings.Contains(string(p), "example.com\"") || strings.Contains(string(p), "maint@") || strings.Contains(string(p), "op@") {
			t.Errorf("a signed record names an account: %s", p)
		}
	}

	// `probity log audit` over the whole log.
	var out, errb bytes.Buffer
	code := runLog([]string{"audit", "--no-state", "--keys", filepath.Join(r.keyDir, keys.DocumentFile), ef.logDirectory()}, &out, &errb)
	if code != 0 || !strings.Contains(out.String(), "result         OK") || !strings.Contains(out.String(), "1 dispute") || !strings.Contains(out.String(), "1 outcome") {
		t.Fatalf("log audit: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
}
