package reports

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/internal/ledgertest"
	"github.com/probity-dev/probity/keys/signing"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/verifier"
)

// fakeAuditor is the operators' audit log: it keeps the actions, and fails on demand.
type fakeAuditor struct {
	mu      sync.Mutex
	actions []Action
	fail    error
}

func (f *fakeAuditor) Record(_ context.Context, a Action) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return f.fail
	}
	f.actions = append(f.actions, a)
	return nil
}

type env struct {
	st      store.Store
	svc     *Service
	audit   *fakeAuditor
	ledger  *ledgertest.Signer
	signer  *signing.Signer
	now     time.Time
	entry   store.Entry
	supplyN int
}

const seed = "reports"

func newEnv(t *testing.T) *env {
	t.Helper()
	st, err := store.Open(t.Context(), store.Config{SQLitePath: filepath.Join(t.TempDir(), "probity.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	lt, err := ledgertest.NewSigner(seed)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("probity ledgertest " + seed)) // ledgertest's key, as a signing.Signer
	e := &env{st: st, audit: &fakeAuditor{}, ledger: lt, signer: signing.NewSigner(ed25519.NewKeyFromSeed(sum[:])),
		now: time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)}
	e.svc, err = New(Config{Store: st, Signer: e.signer, Auditor: e.audit, ToolVersion: "0.1.0", PerEntryPerDay: 3,
		Now: func() time.Time { return e.now }})
	if err != nil {
		t.Fatal(err)
	}
	e.entry, _, err = st.AddEntry(t.Context(), store.NewEntry{SlugBase: "acme", Kind: store.KindNPM, Locator: "pkg:npm/acme", Name: "acme", Source: "import"})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// supply stores a signed supply run of the entry that passed (verified) or not.
func (e *env) supply(t *testing.T, verified bool) string {
	t.Helper()
	e.supplyN++
	rec, err := e.ledger.Supply(t.Context(), "acme", e.now.Add(-time.Duration(10-e.supplyN)*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	score := 100
	if !verified {
		score = 40
	}
	if _, err := e.st.SaveSupply(t.Context(), store.SupplyRecord{EntryID: e.entry.ID, RanAt: e.now.Add(time.Duration(e.supplyN) * time.Second),
		Score: score, Verified: verified, Facts: []byte(`{}`), Verdict: []byte(`{}`), Envelope: rec.Envelope, KeyID: e.ledger.KeyID}, nil); err != nil {
		t.Fatal(err)
	}
	return rec.PayloadDigest
}

func (e *env) verified(t *testing.T) bool {
	t.Helper()
	en, err := e.st.Entry(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	runs, err := e.st.SupplyRuns(t.Context(), en.ID, 1)
	if err != nil || len(runs) == 0 {
		t.Fatalf("supply runs: %v", err)
	}
	return store.IsVerified(runs[0].Verified, runs[0].Envelope != nil, en.VerifiedWithdrawn)
}

// verify runs the offline verifier over a stored withdrawal record.
func (e *env) verify(t *testing.T, w store.Withdrawal) *attest.WithdrawalPredicate {
	t.Helper()
	res, err := verifier.Verify(w.Envelope, e.ledger.Doc, verifier.Policy{Threshold: 1, PredicateTypes: []string{attest.WithdrawalPredicateType}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failure != nil || res.Statement == nil || res.Statement.Withdrawal == nil {
		t.Fatalf("verifier: %+v", res.Failure)
	}
	return res.Statement.Withdrawal
}

func TestSubmitRules(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	if _, err := e.svc.Submit(ctx, "acme", "It steals.", "", "192.0.2.1"); !errors.Is(err, ErrNotVerified) {
		t.Errorf("no supply run: %v, want ErrNotVerified", err)
	}
	e.supply(t, false)
	if _, err := e.svc.Submit(ctx, "acme", "It steals.", "", "192.0.2.1"); !errors.Is(err, ErrNotVerified) {
		t.Errorf("not Verified: %v, want ErrNotVerified", err)
	}
	if _, err := e.svc.Submit(ctx, "nope", "It steals.", "", "192.0.2.1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("no entry: %v, want ErrNotFound", err)
	}
	e.supply(t, true)
	var in *InputError
	for _, bad := range []struct{ text, contact string }{
		{"", ""}, {" \n ", ""}, {strings.Repeat("x", store.MaxReportText+1), ""}, {"bell \a", ""},
		{"ok", "not an address"}, {"ok", "Name <a@example.org>"}, {"ok", strings.Repeat("a", 250) + "@example.org"},
	} {
		if _, err := e.svc.Submit(ctx, "acme", bad.text, bad.contact, "192.0.2.1"); !errors.As(err, &in) {
			t.Errorf("Submit(%.20q, %q) = %v, want an InputError", bad.text, bad.contact, err)
		}
	}
	r, err := e.svc.Submit(ctx, "acme", "  It <script>uploads</script> files.\r\nSee its tool list. ", "me@example.org", "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Text != "It <script>uploads</script> files.\nSee its tool list." || r.Contact != "me@example.org" || !r.DueAt.Equal(e.now.Add(72*time.Hour)) {
		t.Errorf("report = %+v", r)
	}
	// The per-entry cap: 3 a day here, whoever sends them.
	for i := range 2 {
		if _, err := e.svc.Submit(ctx, "acme", "again", "", fmt.Sprintf("198.51.100.%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.svc.Submit(ctx, "acme", "again", "", "203.0.113.9"); !errors.Is(err, ErrTooMany) {
		t.Errorf("fourth report today: %v, want ErrTooMany", err)
	}
	e.now = e.now.Add(25 * time.Hour)
	if _, err := e.svc.Submit(ctx, "acme", "the next day", "", "192.0.2.1"); err != nil {
		t.Errorf("the next day: %v", err)
	}
}

// TestLifecycle: report → queue with its clock → withdraw (signed, verifies offline,
// Verified gone, a later Verified run does not restore it) → restore (signed) →
// Verified again; a decline; every operator action audited.
func TestLifecycle(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	op7, _, err := e.st.EmailAccount(ctx, "op7@example.org", "op7@example.org", e.now)
	if err != nil {
		t.Fatal(err)
	}
	op8, _, err := e.st.EmailAccount(ctx, "op8@example.org", "op8@example.org", e.now)
	if err != nil {
		t.Fatal(err)
	}
	seven, eight := op7.ID, op8.ID
	digest := e.supply(t, true)
	r1, err := e.svc.Submit(ctx, "acme", "It uploads files.", "me@example.org", "192.0.2.7")
	if err != nil {
		t.Fatal(err)
	}
	e.now = e.now.Add(time.Hour)
	r2, err := e.svc.Submit(ctx, "acme", "Me too.", "", "192.0.2.7")
	if err != nil {
		t.Fatal(err)
	}
	e.now = e.now.Add(72 * time.Hour) // r1 is overdue by an hour, r2 due now
	q, err := e.svc.Queue(ctx)
	if err != nil || len(q) != 2 || q[0].ID != r1.ID || !q[0].Overdue() || q[0].Left != -time.Hour || q[1].Left != 0 {
		t.Fatalf("queue = %+v, %v", q, err)
	}
	if _, err := e.svc.Withdraw(ctx, seven, r1.ID, " "); err == nil {
		t.Error("a withdrawal without reason")
	}
	w, err := e.svc.Withdraw(ctx, seven, r1.ID, "It uploads the files it reads.")
	if err != nil {
		t.Fatal(err)
	}
	p := e.verify(t, w)
	if p.Action != attest.WithdrawalWithdrawn || p.Number != 1 || p.Supply.PayloadDigest != "sha256:"+digest || p.Supply.Seq != w.SupplySeq || p.Reason != "It uploads the files it reads." {
		t.Errorf("signed withdrawal = %+v", p)
	}
	if e.verified(t) {
		t.Error("still Verified after the withdrawal")
	}
	if r, _ := e.svc.Report(ctx, r1.ID); r.Status != store.ReportWithdrawn || r.DecidedBy != seven {
		t.Errorf("report after withdrawal = %+v", r)
	}
	if _, err := e.svc.Withdraw(ctx, seven, r1.ID, "again"); !errors.Is(err, ErrClosed) {
		t.Errorf("withdrawing a closed report: %v", err)
	}
	// The second report: the entry is not Verified now, so it is declined.
	if _, err := e.svc.Withdraw(ctx, seven, r2.ID, "again"); !errors.Is(err, ErrNotVerified) {
		t.Errorf("withdrawing twice: %v, want ErrNotVerified", err)
	}
	if _, err := e.svc.Decline(ctx, eight, r2.ID, "Answered by the withdrawal of report 1."); err != nil {
		t.Fatal(err)
	}
	// A later Verified run does not give Verified back.
	e.supply(t, true)
	if e.verified(t) {
		t.Error("a later Verified supply run restored Verified")
	}
	if _, err := e.svc.Submit(ctx, "acme", "x", "", "192.0.2.7"); !errors.Is(err, ErrNotVerified) {
		t.Errorf("reporting a withdrawn entry: %v, want ErrNotVerified", err)
	}
	rw, err := e.svc.Restore(ctx, seven, "acme", "The upload was removed in 1.2.0.")
	if err != nil {
		t.Fatal(err)
	}
	rp := e.verify(t, rw)
	if rp.Action != attest.WithdrawalRestored || rp.Number != 2 || rp.Supply != p.Supply {
		t.Errorf("signed restoration = %+v", rp)
	}
	if !e.verified(t) {
		t.Error("not Verified after the restoration")
	}
	if _, err := e.svc.Restore(ctx, seven, "acme", "again"); !errors.Is(err, ErrNotWithdrawn) {
		t.Errorf("restoring twice: %v", err)
	}
	if len(e.audit.actions) != 3 || e.audit.actions[0].Action != ActionWithdraw || e.audit.actions[1].Action != ActionDecline ||
		e.audit.actions[2].Action != ActionRestore || e.audit.actions[0].EntrySlug != "acme" || e.audit.actions[0].ActorID != seven {
		t.Errorf("audit = %+v", e.audit.actions)
	}
	// The contact is erased 30 days after the report was closed.
	e.now = e.now.Add(31 * 24 * time.Hour)
	if n, err := e.svc.PruneContacts(ctx); err != nil || n != 1 {
		t.Errorf("PruneContacts = %d, %v", n, err)
	}
	// An audit log that fails is said to the operator.
	e.audit.fail = errors.New("disk full")
	e.supply(t, true)
	r3, err := e.svc.Submit(ctx, "acme", "again", "", "192.0.2.7")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Decline(ctx, seven, r3.ID, "no"); err == nil || !strings.Contains(err.Error(), "audit log") {
		t.Errorf("decline with a failing audit log: %v", err)
	}
}

// TestPerClientCap: one client (an address, an IPv6 /64) sends at most PerClientPerDay
// reports about an entry a day; others still can.
func TestPerClientCap(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	e.supply(t, true)
	e.svc.cfg.PerEntryPerDay = 100 // the per-entry cap is not what is tested here
	for i := range 3 {
		if _, err := e.svc.Submit(ctx, "acme", "junk", "", fmt.Sprintf("2001:db8::%d", i+1)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.svc.Submit(ctx, "acme", "junk", "", "2001:db8::ff"); !errors.Is(err, ErrTooMany) {
		t.Errorf("a fourth report from the same /64: %v, want ErrTooMany", err)
	}
	if _, err := e.svc.Submit(ctx, "acme", "It steals keys.", "", "192.0.2.50"); err != nil {
		t.Errorf("another client: %v", err)
	}
}
