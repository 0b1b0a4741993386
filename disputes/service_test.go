package disputes_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/disputes"
	"github.com/probity-dev/probity/internal/ledgertest"
	"github.com/probity-dev/probity/logaudit/logaudittest"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/verifier"
)

// maintainers maintain the entries listed for them, and fail when told.
type maintainers struct {
	of   map[int64]int64
	fail error
}

func (m *maintainers) IsMaintainer(_ context.Context, account, entry int64) (bool, error) {
	return m.of[account] == entry, m.fail
}

// rig is a SQLite store with two entries, each with a round signed by the ledgertest
// key (its probe statement: the vector's, whose checks include destructive_annotations
// VERIFIED), accounts 1 and 2, and a service on it.
type rig struct {
	st         store.Store
	svc        *disputes.Service
	doc        *ledgertest.Signer
	one, two   store.Entry
	r1, r2     int64
	now        time.Time
	maintainer maintainers
}

func newRig(t *testing.T, limit int) *rig {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{SQLitePath: filepath.Join(t.TempDir(), "probity.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	s, err := ledgertest.NewSigner("disputes")
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{st: st, doc: s, now: time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC), maintainer: maintainers{of: map[int64]int64{}}}
	for i, slug := range []string{"one", "two"} {
		e, _, err := st.AddEntry(ctx, store.NewEntry{SlugBase: slug, Kind: store.KindRemote, Locator: "https://" + slug + ".example.com/mcp", Name: slug, Source: "import"})
		if err != nil {
			t.Fatal(err)
		}
		rec, err := s.Probe(ctx, "r-"+slug, r.now.Add(-time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		at := r.now.Add(-time.Hour)
		id, err := st.SaveRound(ctx, &store.Round{EntryID: e.ID, DueAt: at, Reason: store.ReasonCadence, RoundID: "r-" + slug,
			StartedAt: at, FinishedAt: at.Add(time.Second), Coverage: "auth_required", HTTPStatus: 401, Uptime: store.UptimeAnswered,
			Stop: "auth_required", Results: []byte(`[]`), Timings: []byte(`{"totalMs":1}`),
			Envelope: rec.Envelope, KeyID: s.KeyID, PayloadDigest: rec.PayloadDigest})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			r.one, r.r1 = e, id
		} else {
			r.two, r.r2 = e, id
		}
	}
	for _, email := range []string{"a@example.com", "b@example.com"} {
		if _, _, err := st.EmailAccount(ctx, email, email, r.now); err != nil {
			t.Fatal(err)
		}
	}
	r.maintainer.of[1] = r.one.ID
	r.svc, err = disputes.New(disputes.Config{Store: st, Maintainers: &r.maintainer, Signer: logaudittest.LedgerKey("disputes"),
		ToolVersion: "0.1.0", DailyLimit: limit, Now: func() time.Time { return r.now }})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestContestRules: only a maintainer of the entry contests; only a check its own
// signed round holds, with the status the round signed; bounded text; one open dispute
// per check; the daily limit. Every dispute verifies offline and names the round's
// record.
func TestContestRules(t *testing.T) {
	r := newRig(t, 2)
	ctx := context.Background()
	contest := func(account int64, slug string, round int64, check, statement, evidence string) (disputes.Dispute, error) {
		return r.svc.Contest(ctx, account, slug, round, check, statement, evidence)
	}
	var in *disputes.InputError
	for name, c := range map[string]struct {
		account         int64
		slug            string
		round           int64
		check, text, ev string
		want            error
	}{
		"not a maintainer":      {2, "one", r.r1, "destructive_annotations", "x", "", disputes.ErrNotMaintainer},
		"another entry's round": {1, "one", r.r2, "destructive_annotations", "x", "", disputes.ErrNoFinding},
		"no such check":         {1, "one", r.r1, "no_such_check", "x", "", disputes.ErrNoFinding},
		"no such round":         {1, "one", 99999, "destructive_annotations", "x", "", disputes.ErrNoFinding},
		"no such entry":         {1, "nope", r.r1, "destructive_annotations", "x", "", store.ErrNotFound},
	} {
		if _, err := contest(c.account, c.slug, c.round, c.check, c.text, c.ev); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	for name, c := range map[string][2]string{
		"empty":         {"  \r\n ", ""},
		"too long":      {strings.Repeat("x", attest.MaxDisputeText+1), ""},
		"a control":     {"a\x07b", ""},
		"http evidence": {"x", "http://example.com/"},
	} {
		if _, err := contest(1, "one", r.r1, "destructive_annotations", c[0], c[1]); !errors.As(err, &in) {
			t.Errorf("%s: %v, want an InputError", name, err)
		}
	}
	d, err := contest(1, "one", r.r1, "destructive_annotations", " It is read-only.\r\nSee the docs. ", "https://docs.example/a")
	if err != nil {
		t.Fatal(err)
	}
	if d.Number != 1 || d.Statement != "It is read-only.\nSee the docs." || d.Status != attest.StatusVerified || d.Round != "r-one" {
		t.Errorf("dispute %+v", d)
	}
	if _, err := contest(1, "one", r.r1, "destructive_annotations", "again", ""); !errors.Is(err, disputes.ErrOpen) {
		t.Errorf("second open dispute: %v", err)
	}
	if _, err := contest(1, "one", r.r1, "reachability", "two", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := contest(1, "one", r.r1, "latency", "three", ""); !errors.Is(err, disputes.ErrRateLimited) {
		t.Errorf("past the daily limit: %v", err)
	}
	r.now = r.now.Add(24*time.Hour + time.Second)
	if _, err := contest(1, "one", r.r1, "latency", "three", ""); err != nil {
		t.Errorf("a day later: %v", err)
	}
	// A maintainer check that fails is an error, not a refusal.
	r.maintainer.fail = errors.New("claims unreachable")
	if _, err := contest(1, "one", r.r1, "tls_certificate", "x", ""); err == nil || errors.Is(err, disputes.ErrNotMaintainer) {
		t.Errorf("failing maintainers: %v", err)
	}

	// Decide: bounded, one outcome.
	for name, c := range map[string][3]string{
		"unknown decision":      {"withdrawn", "", "x"},
		"corrected, no version": {attest.DecisionCorrected, "", "x"},
		"upheld with a version": {attest.DecisionUpheld, "2026.12", "x"},
		"bad version":           {attest.DecisionCorrected, "2026 12", "x"},
		"empty reason":          {attest.DecisionUpheld, "", " "},
	} {
		if _, err := r.svc.Decide(ctx, 2, d.ID, c[0], c[1], c[2]); !errors.As(err, &in) {
			t.Errorf("%s: %v, want an InputError", name, err)
		}
	}
	// The account that opened it (account 1 here), made an operator, does not decide it.
	if _, err := r.svc.Decide(ctx, 1, d.ID, attest.DecisionUpheld, "", "x"); !errors.Is(err, disputes.ErrOwnDispute) {
		t.Errorf("the opener decides: %v, want ErrOwnDispute", err)
	}
	if _, err := r.svc.Decide(ctx, 2, 99999, attest.DecisionUpheld, "", "x"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("no such dispute: %v", err)
	}
	out, err := r.svc.Decide(ctx, 2, d.ID, attest.DecisionCorrected, "2026.12", "Fixed in the suite.")
	if err != nil || out.Outcome == nil || out.Outcome.SuiteVersion != "2026.12" {
		t.Fatalf("Decide = %+v, %v", out, err)
	}
	if _, err := r.svc.Decide(ctx, 2, d.ID, attest.DecisionUpheld, "", "x"); !errors.Is(err, disputes.ErrDecided) {
		t.Errorf("second outcome: %v", err)
	}
	if q, err := r.svc.Queue(ctx); err != nil || len(q) != 2 || q[0].CheckID != "reachability" {
		t.Errorf("queue %+v, %v", q, err)
	}

	// Both records verify offline under the key document, and link.
	results := map[store.RecordKind][]*verifier.Result{}
	if err := r.st.Ledger(ctx, store.LedgerFilter{EntrySlug: "one"}, func(rec store.LedgerRecord) error {
		res, err := verifier.Verify(rec.Envelope, r.doc.Doc, verifier.DefaultPolicy())
		if err != nil {
			t.Errorf("record %d (%s): %v", rec.Seq, rec.Kind, err)
			return nil
		}
		results[rec.Kind] = append(results[rec.Kind], res)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(results[store.RecordDispute]) != 3 || len(results[store.RecordOutcome]) != 1 {
		t.Fatalf("records: %v", results)
	}
	if f := verifier.CheckOutcomeLink(results[store.RecordDispute][0], results[store.RecordOutcome][0]); f != nil {
		t.Errorf("link: %v", f)
	}
	if p := results[store.RecordDispute][0].Statement.Dispute; p.Finding.Record.PayloadDigest == "" || p.Finding.Status != attest.StatusVerified {
		t.Errorf("finding %+v", p.Finding)
	}
}
