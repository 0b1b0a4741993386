package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func testAction(action, slug string, entryID int64, at time.Time) OperatorAction {
	return OperatorAction{At: at, Actor: "cli", Action: action, EntrySlug: slug, EntryID: entryID, Target: "t", Detail: "why"}
}

// TestOperatorsContract: the role belongs to an existing account, is granted and taken
// once each (with one audit row each, in the same transaction), and goes with the
// account; the audit log pages newest first and outlives the entries and accounts it
// names; the recorded actions change what they say and append their row, or neither.
func TestOperatorsContract(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		a := insertTestAccount(t, s, "Op@Example.com", t0)
		b := insertTestAccount(t, s, "b@example.com", t0)

		if acc, err := s.AccountByEmailKey(ctx, "op@example.com"); err != nil || acc.ID != a {
			t.Fatalf("AccountByEmailKey = %+v, %v; want account %d", acc, err, a)
		}
		if _, err := s.AccountByEmailKey(ctx, "nobody@example.com"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("AccountByEmailKey(unknown) = %v, want ErrNotFound", err)
		}
		if _, err := s.AddOperator(ctx, 9999, t0, testAction("operator.add", "", 0, t0)); !errors.Is(err, ErrNotFound) {
			t.Fatalf("AddOperator(no account) = %v, want ErrNotFound", err)
		}
		if yes, err := s.IsOperator(ctx, a); err != nil || yes {
			t.Fatalf("IsOperator before = %v, %v", yes, err)
		}
		if added, err := s.AddOperator(ctx, a, t0, testAction("operator.add", "", 0, t0)); err != nil || !added {
			t.Fatalf("AddOperator = %v, %v", added, err)
		}
		if added, err := s.AddOperator(ctx, a, t0.Add(time.Hour), testAction("operator.add", "", 0, t0)); err != nil || added {
			t.Fatalf("AddOperator again = %v, %v; want false", added, err)
		}
		if yes, err := s.IsOperator(ctx, a); err != nil || !yes {
			t.Fatalf("IsOperator = %v, %v", yes, err)
		}
		if yes, _ := s.IsOperator(ctx, b); yes {
			t.Fatal("IsOperator(b) = true")
		}
		ops, err := s.Operators(ctx)
		if err != nil || len(ops) != 1 || ops[0].AccountID != a || ops[0].Email != "Op@Example.com" || !ops[0].GrantedAt.Equal(ms(t0)) {
			t.Fatalf("Operators = %+v, %v", ops, err)
		}
		if removed, err := s.RemoveOperator(ctx, b, testAction("operator.remove", "", 0, t0)); err != nil || removed {
			t.Fatalf("RemoveOperator(not one) = %v, %v", removed, err)
		}

		// The audit log: one row per grant that happened, newest first, paged.
		e := mustAddEntry(t, s, "audited")
		for i := range 3 {
			if _, err := s.AppendOperatorAction(ctx, testAction("note", e.Slug, e.ID, t0.Add(time.Duration(i)*time.Minute))); err != nil {
				t.Fatal(err)
			}
		}
		all, err := s.OperatorActions(ctx, 0, 0)
		if err != nil || len(all) != 4 {
			t.Fatalf("OperatorActions = %d rows, %v; want 4", len(all), err)
		}
		if all[3].Action != "operator.add" || all[3].ActorID != 0 || all[3].Actor != "cli" || all[0].EntrySlug != e.Slug || all[0].EntryID != e.ID ||
			!all[0].At.Equal(ms(t0.Add(2*time.Minute))) || all[0].Target != "t" || all[0].Detail != "why" {
			t.Fatalf("OperatorActions = %+v", all)
		}
		for i := 1; i < len(all); i++ {
			if all[i].ID >= all[i-1].ID {
				t.Fatalf("OperatorActions not newest first: %+v", all)
			}
		}
		page, err := s.OperatorActions(ctx, all[1].ID, 2)
		if err != nil || len(page) != 2 || page[0].ID != all[2].ID || page[1].ID != all[3].ID {
			t.Fatalf("OperatorActions(before %d, 2) = %+v, %v", all[1].ID, page, err)
		}
		for _, bad := range []OperatorAction{
			{Actor: "cli", Action: "x"},
			{At: t0, Action: "x"},
			{At: t0, Actor: "cli"},
			{At: t0, Actor: "cli", Action: "x", Detail: strings.Repeat("d", MaxActionDetail+1)},
			{At: t0, Actor: strings.Repeat("a", MaxActionActor+1), Action: "x"},
		} {
			if _, err := s.AppendOperatorAction(ctx, bad); err == nil {
				t.Errorf("AppendOperatorAction(%+v) = nil, want a refusal", bad)
			}
		}
		// An action with an actor account: the row keeps it after the account is gone.
		act := testAction("note", "", 0, t0)
		act.ActorID, act.Actor = b, "operator"
		if _, err := s.AppendOperatorAction(ctx, act); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteAccount(ctx, b); err != nil {
			t.Fatal(err)
		}
		// Deleting the operator's account removes the role; deleting an entry keeps its rows.
		if err := s.DeleteAccount(ctx, a); err != nil {
			t.Fatal(err)
		}
		if yes, _ := s.IsOperator(ctx, a); yes {
			t.Fatal("IsOperator after the account's deletion = true")
		}
		if err := s.DeleteEntry(ctx, e.Slug, "gone"); err != nil {
			t.Fatal(err)
		}
		after, err := s.OperatorActions(ctx, 0, 0)
		if err != nil || len(after) != 5 || after[0].ActorID != b || after[1].EntryID != e.ID || after[1].EntrySlug != e.Slug {
			t.Fatalf("OperatorActions after deletions = %+v, %v", after, err)
		}
	})
}

// TestOperatorRecordedActions: hiding a change and revoking a claim append their audit
// row in the same transaction: a refused action appends none.
func TestOperatorRecordedActions(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		e := mustAddEntry(t, s, "one")
		acc := insertTestAccount(t, s, "m@example.com", t0)
		count := func() int {
			t.Helper()
			rows, err := s.OperatorActions(ctx, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			return len(rows)
		}
		// No change 1: refused, nothing appended.
		if err := s.HideChangeRecorded(ctx, e.ID, 1, true, "wrong fetch", testAction("change.hide", e.Slug, e.ID, t0)); !errors.Is(err, ErrNotFound) {
			t.Fatalf("HideChangeRecorded(no change) = %v, want ErrNotFound", err)
		}
		if err := s.HideChangeRecorded(ctx, e.ID, 1, true, "", testAction("change.hide", e.Slug, e.ID, t0)); err == nil {
			t.Fatal("HideChangeRecorded(no reason) = nil")
		}
		if n := count(); n != 0 {
			t.Fatalf("%d audit rows after refused hides, want 0", n)
		}

		// A change: hidden and shown again, each with its row.
		mustSaveHistory(t, s, HistoryUpdate{EntryID: e.ID, State: []byte(`1`), Changes: []ChangeRecord{testChange(e.ID, 1, t0)}})
		if err := s.HideChangeRecorded(ctx, e.ID, 1, true, "wrong fetch", testAction("change.hide", e.Slug, e.ID, t0)); err != nil {
			t.Fatal(err)
		}
		if c, err := s.Change(ctx, e.ID, 1); err != nil || !c.Hidden || c.HiddenReason != "wrong fetch" {
			t.Fatalf("Change after hiding = %+v, %v", c, err)
		}
		if err := s.HideChangeRecorded(ctx, e.ID, 1, false, "it was right", testAction("change.unhide", e.Slug, e.ID, t0)); err != nil {
			t.Fatal(err)
		}
		if c, err := s.Change(ctx, e.ID, 1); err != nil || c.Hidden || c.HiddenReason != "" {
			t.Fatalf("Change after showing = %+v, %v", c, err)
		}
		if n := count(); n != 2 {
			t.Fatalf("%d audit rows after hide and unhide, want 2", n)
		}

		// Claims: a live claim is revoked once, with its row.
		mustClaimToken(t, s, acc, e.ID, "well-known", e.Locator, "tok", t0)
		c, err := s.ProveClaim(ctx, ClaimProof{TokenHash: claimHash("tok"), AccountID: acc, Proof: "found", At: t0})
		if err != nil {
			t.Fatal(err)
		}
		rs, err := s.ClaimsForReview(ctx, ClaimReviewQuery{LiveOnly: true})
		if err != nil || len(rs) != 1 || rs[0].ID != c.ID || rs[0].EntrySlug != e.Slug || rs[0].EntryName != e.Name || !rs[0].Live() {
			t.Fatalf("ClaimsForReview = %+v, %v", rs, err)
		}
		if _, err := s.RevokeClaimRecorded(ctx, c.ID, t0.Add(time.Hour), "", testAction("claim.revoke", e.Slug, e.ID, t0)); err == nil {
			t.Fatal("RevokeClaimRecorded(no reason) = nil")
		}
		got, err := s.RevokeClaimRecorded(ctx, c.ID, t0.Add(time.Hour), "not theirs", testAction("claim.revoke", e.Slug, e.ID, t0))
		if err != nil || got.Live() || got.LapseReason != "not theirs" || !got.LapsedAt.Equal(ms(t0.Add(time.Hour))) {
			t.Fatalf("RevokeClaimRecorded = %+v, %v", got, err)
		}
		if claimedOf(t, s, e.ID) {
			t.Fatal("entry still claimed after the revocation")
		}
		if _, err := s.RevokeClaimRecorded(ctx, c.ID, t0.Add(2*time.Hour), "again", testAction("claim.revoke", e.Slug, e.ID, t0)); !errors.Is(err, ErrNotFound) {
			t.Fatalf("RevokeClaimRecorded(lapsed) = %v, want ErrNotFound", err)
		}
		if n := count(); n != 3 {
			t.Fatalf("%d audit rows after one revocation, want 3", n)
		}
		if rs, _ := s.ClaimsForReview(ctx, ClaimReviewQuery{LiveOnly: true}); len(rs) != 0 {
			t.Fatalf("ClaimsForReview(live) after revocation = %+v", rs)
		}
		if rs, _ := s.ClaimsForReview(ctx, ClaimReviewQuery{EntryID: e.ID}); len(rs) != 1 || rs[0].LapseReason != "not theirs" {
			t.Fatalf("ClaimsForReview(entry) = %+v", rs)
		}
		if rs, _ := s.ClaimsForReview(ctx, ClaimReviewQuery{EntryID: e.ID + 1000}); len(rs) != 0 {
			t.Fatalf("ClaimsForReview(another entry) = %+v", rs)
		}
	})
}

// TestOperatorActionsAppendOnly: the schema refuses to change or delete a row of the
// audit log, whatever the statement.
func TestOperatorActionsAppendOnly(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		if _, err := s.AppendOperatorAction(ctx, testAction("note", "x", 1, t0)); err != nil {
			t.Fatal(err)
		}
		stmts := []string{
			`UPDATE operator_actions SET detail = 'rewritten'`,
			`UPDATE operator_actions SET actor = 'someone else' WHERE id = 1`,
			`DELETE FROM operator_actions`,
			`DELETE FROM operator_actions WHERE id = 1`,
		}
		if s.Backend() == "postgres" {
			stmts = append(stmts, `TRUNCATE operator_actions`)
		}
		for _, q := range stmts {
			err := s.(testExecer).execForTest(ctx, q)
			if err == nil || !strings.Contains(err.Error(), "append-only") {
				t.Errorf("%s = %v, want the append-only refusal", q, err)
			}
		}
		rows, err := s.OperatorActions(ctx, 0, 0)
		if err != nil || len(rows) != 1 || rows[0].Detail != "why" || rows[0].Actor != "cli" {
			t.Fatalf("OperatorActions after refused statements = %+v, %v", rows, err)
		}
	})
}
