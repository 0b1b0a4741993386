package operators

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/accounts"
	"github.com/probity-dev/probity/store"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func newService(t *testing.T, sched Scheduler) (*Service, store.Store) {
	t.Helper()
	st, err := store.Open(t.Context(), store.Config{SQLitePath: filepath.Join(t.TempDir(), "probity.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Store: st, Schedule: sched, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	return s, st
}

func account(t *testing.T, st store.Store, email string) store.Account {
	t.Helper()
	key, err := accounts.EmailKey(email)
	if err != nil {
		t.Fatal(err)
	}
	a, _, err := st.EmailAccount(t.Context(), email, key, t0)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func lastAction(t *testing.T, s *Service) (store.OperatorAction, map[string]string) {
	t.Helper()
	rows, err := s.Audit(t.Context(), 0, 1)
	if err != nil || len(rows) != 1 {
		t.Fatalf("Audit = %+v, %v", rows, err)
	}
	var d map[string]string
	if err := json.Unmarshal([]byte(rows[0].Detail), &d); err != nil {
		t.Fatalf("detail %q: %v", rows[0].Detail, err)
	}
	return rows[0], d
}

// TestGrantRevoke: the role goes to an existing account by address, once, and comes
// back once; each change is one audit row by its actor; an account without the role
// cannot act as an operator.
func TestGrantRevoke(t *testing.T) {
	s, st := newService(t, nil)
	ctx := t.Context()
	if _, _, err := s.Grant(ctx, CLI, "nobody@example.com"); !errors.Is(err, ErrNoAccount) {
		t.Fatalf("Grant(no account) = %v, want ErrNoAccount", err)
	}
	if _, _, err := s.Grant(ctx, CLI, "not an address"); !errors.Is(err, accounts.ErrInvalidEmail) {
		t.Fatalf("Grant(bad address) = %v, want ErrInvalidEmail", err)
	}
	op := account(t, st, "Op@Example.com")
	other := account(t, st, "other@example.com")
	if _, _, err := s.Grant(ctx, By(other.ID), "op@example.com"); !errors.Is(err, ErrNotOperator) {
		t.Fatalf("Grant by a non-operator = %v, want ErrNotOperator", err)
	}
	acc, added, err := s.Grant(ctx, CLI, " op@EXAMPLE.com ")
	if err != nil || !added || acc.ID != op.ID {
		t.Fatalf("Grant = %+v, %v, %v", acc, added, err)
	}
	if _, added, _ := s.Grant(ctx, CLI, "op@example.com"); added {
		t.Fatal("Grant again added")
	}
	if yes, err := s.IsOperator(ctx, op.ID); err != nil || !yes {
		t.Fatalf("IsOperator = %v, %v", yes, err)
	}
	if yes, _ := s.IsOperator(ctx, other.ID); yes {
		t.Fatal("IsOperator(other) = true")
	}
	if yes, _ := s.IsOperator(ctx, 0); yes {
		t.Fatal("IsOperator(0) = true")
	}
	row, _ := lastAction(t, s)
	if row.Action != ActionGrant || row.Actor != "cli" || row.ActorID != 0 || row.Target != "account "+itoa(op.ID) || !row.At.Equal(t0) {
		t.Fatalf("grant row = %+v", row)
	}
	// An operator grants another; the row names the operator's account.
	if _, added, err := s.Grant(ctx, By(op.ID), "other@example.com"); err != nil || !added {
		t.Fatalf("Grant by an operator = %v, %v", added, err)
	}
	if row, _ := lastAction(t, s); row.Actor != "operator" || row.ActorID != op.ID {
		t.Fatalf("grant row by an operator = %+v", row)
	}
	if _, removed, err := s.Revoke(ctx, CLI, "other@example.com"); err != nil || !removed {
		t.Fatalf("Revoke = %v, %v", removed, err)
	}
	if _, removed, _ := s.Revoke(ctx, CLI, "other@example.com"); removed {
		t.Fatal("Revoke again removed")
	}
	ops, err := s.List(ctx)
	if err != nil || len(ops) != 1 || ops[0].AccountID != op.ID {
		t.Fatalf("List = %+v, %v", ops, err)
	}
	if rows, _ := s.Audit(ctx, 0, 0); len(rows) != 3 {
		t.Fatalf("audit rows = %d, want 3 (two grants, one revocation)", len(rows))
	}
	if err := s.Record(ctx, Action{Name: ActionDeleteEntry}); !errors.Is(err, ErrNotOperator) {
		t.Fatalf("Record by the zero Actor = %v, want ErrNotOperator", err)
	}
	if err := s.Record(ctx, Action{By: By(other.ID), Name: ActionDeleteEntry}); !errors.Is(err, ErrNotOperator) {
		t.Fatalf("Record by a former operator = %v, want ErrNotOperator", err)
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestCheckReason(t *testing.T) {
	for _, bad := range []string{"", "   ", "two\nlines", "tab\there", "esc \x1b[31m", "\xff", strings.Repeat("x", MaxReason+1), "a\u2028b"} {
		if _, err := CheckReason(bad); !errors.Is(err, ErrReason) {
			t.Errorf("CheckReason(%q) = %v, want ErrReason", bad, err)
		}
	}
	if r, err := CheckReason("  a fetch that was wrong — sorry  "); err != nil || r != "a fetch that was wrong — sorry" {
		t.Errorf("CheckReason = %q, %v", r, err)
	}
}

type fakeSchedule struct{ called []int64 }

func (f *fakeSchedule) ClaimedDue(e store.Entry, due []store.Due, now time.Time) []store.DueUpdate {
	f.called = append(f.called, e.ID)
	return nil
}

// TestConsoleActions: deleting an entry and revoking a claim are refused without a
// reason or the role, and otherwise done and recorded with the reason.
func TestConsoleActions(t *testing.T) {
	sched := &fakeSchedule{}
	s, st := newService(t, sched)
	ctx := t.Context()
	op := account(t, st, "op@example.com")
	m := account(t, st, "m@example.com")
	if _, _, err := s.Grant(ctx, CLI, "op@example.com"); err != nil {
		t.Fatal(err)
	}
	e, _, err := st.AddEntry(ctx, store.NewEntry{SlugBase: "acme", Kind: store.KindRemote, Locator: "https://acme.example.com/mcp", Name: "Acme", Source: "import"})
	if err != nil {
		t.Fatal(err)
	}

	// A claim, revoked by the operator.
	tok := make([]byte, 32)
	tok[0] = 1
	if _, err := st.AddClaimToken(ctx, store.ClaimToken{TokenHash: tok, AccountID: m.ID, EntryID: e.ID, Method: "well-known",
		Target: e.Locator, CreatedAt: t0.Add(-time.Hour), ExpiresAt: t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	c, err := st.ProveClaim(ctx, store.ClaimProof{TokenHash: tok, AccountID: m.ID, Proof: "found", At: t0.Add(-time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RevokeClaim(ctx, By(op.ID), c.ID, ""); !errors.Is(err, ErrReason) {
		t.Fatalf("RevokeClaim(no reason) = %v", err)
	}
	if _, err := s.RevokeClaim(ctx, By(m.ID), c.ID, "mine now"); !errors.Is(err, ErrNotOperator) {
		t.Fatalf("RevokeClaim by a maintainer = %v", err)
	}
	if _, err := s.RevokeClaim(ctx, By(op.ID), c.ID+100, "no such"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("RevokeClaim(unknown) = %v", err)
	}
	got, err := s.RevokeClaim(ctx, By(op.ID), c.ID, "the domain changed hands")
	if err != nil || got.Live() || got.LapseReason != "revoked by an operator: the domain changed hands" {
		t.Fatalf("RevokeClaim = %+v, %v", got, err)
	}
	if len(sched.called) != 1 || sched.called[0] != e.ID {
		t.Fatalf("schedule moved for %v, want [%d]", sched.called, e.ID)
	}
	row, d := lastAction(t, s)
	if row.Action != ActionRevokeClaim || row.ActorID != op.ID || row.EntrySlug != "acme" || row.EntryID != e.ID ||
		row.Target != "claim "+itoa(c.ID) || d["reason"] != "the domain changed hands" {
		t.Fatalf("revoke row = %+v %v", row, d)
	}
	if cs, _ := s.Claims(ctx, store.ClaimReviewQuery{LiveOnly: true}); len(cs) != 0 {
		t.Fatalf("live claims after revocation = %+v", cs)
	}

	// Hiding a change that does not exist: refused, nothing recorded.
	if err := s.HideChange(ctx, By(op.ID), "acme", 7, true, "spam"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("HideChange(no change) = %v", err)
	}
	if err := s.HideChange(ctx, By(op.ID), "nope", 1, true, "spam"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("HideChange(no entry) = %v", err)
	}
	if _, cs, err := s.Changes(ctx, "acme", 0); err != nil || len(cs) != 0 {
		t.Fatalf("Changes = %+v, %v", cs, err)
	}

	// Deleting the entry: refused without a reason; done and recorded with one; the
	// row keeps the slug and id after the entry is gone.
	if err := s.DeleteEntry(ctx, By(op.ID), "acme", "\n"); !errors.Is(err, ErrReason) {
		t.Fatalf("DeleteEntry(no reason) = %v", err)
	}
	if err := s.DeleteEntry(ctx, By(op.ID), "acme", "asked by its owner"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Entry(ctx, "acme"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("entry after deletion: %v", err)
	}
	row, d = lastAction(t, s)
	if row.Action != ActionDeleteEntry || row.EntrySlug != "acme" || row.EntryID != e.ID || d["reason"] != "asked by its owner" {
		t.Fatalf("delete row = %+v %v", row, d)
	}
	if err := s.DeleteEntry(ctx, By(op.ID), "acme", "again"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("DeleteEntry(gone) = %v", err)
	}

	if err := s.DecidedDispute(ctx, By(op.ID), "acme", 4, "corrected", "1.2.0", "fixed in the suite"); err != nil {
		t.Fatal(err)
	}
	row, d = lastAction(t, s)
	if row.Action != ActionDecideDispute || row.Target != "dispute 4" || d["decision"] != "corrected" || d["suiteVersion"] != "1.2.0" || d["reason"] != "fixed in the suite" {
		t.Fatalf("dispute row = %+v %v", row, d)
	}
}
