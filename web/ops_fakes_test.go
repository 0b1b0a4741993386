package web_test

// Fakes of the roles (web.Maintainers, web.Operators), the operators' console
// (web.Console) and the dispute desk (web.DisputeDesk) for the console's tests. The
// console's reads come from the real store; every write is recorded and counted in
// mutations, so a test can tell that a refused request changed nothing. Each write
// keeps the service's contract: the actor must hold the role (else
// operators.ErrNotOperator), a reason is checked by operators.CheckReason.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/probity-dev/probity/operators"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/web"
)

// consoleCall is one write of the console.
type consoleCall struct {
	Op      string
	Actor   int64
	Slug    string
	ID      int64
	Hidden  bool
	Reason  string
	Extra   string
	Version string
}

type fakeConsole struct {
	st        store.Store
	roles     *fakeRoles
	mutations *atomic.Int64
	mu        sync.Mutex
	calls     []consoleCall
	audit     []store.OperatorAction
	claims    []store.ClaimReview
}

func (f *fakeConsole) record(ctx context.Context, by operators.Actor, call consoleCall) error {
	if ok, _ := f.roles.IsOperator(ctx, by.AccountID()); !ok {
		return operators.ErrNotOperator
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	call.Actor = by.AccountID()
	f.calls = append(f.calls, call)
	f.audit = append(f.audit, store.OperatorAction{ID: int64(len(f.audit) + 1), At: time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC),
		ActorID: by.AccountID(), Actor: "operator", Action: call.Op, EntrySlug: call.Slug, Target: fmt.Sprint(call.ID), Detail: `{"reason":` + fmt.Sprintf("%q", call.Reason) + `}`})
	f.mutations.Add(1)
	return nil
}

func (f *fakeConsole) last() consoleCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		return consoleCall{}
	}
	return f.calls[len(f.calls)-1]
}

func (f *fakeConsole) Changes(ctx context.Context, slug string, before int64) (store.Entry, []store.ChangeRecord, error) {
	e, err := f.st.Entry(ctx, slug)
	if err != nil {
		return store.Entry{}, nil, err
	}
	cs, err := f.st.Changes(ctx, store.ChangeFilter{EntryID: e.ID, BeforeNumber: before, IncludeHidden: true, WithoutEnvelopes: true, Limit: operators.MaxChangesShown})
	return e, cs, err
}

func (f *fakeConsole) HideChange(ctx context.Context, by operators.Actor, slug string, number int64, hidden bool, reason string) error {
	if hidden {
		r, err := operators.CheckReason(reason)
		if err != nil {
			return err
		}
		reason = r
	}
	if _, err := f.st.Entry(ctx, slug); err != nil {
		return err
	}
	return f.record(ctx, by, consoleCall{Op: map[bool]string{true: "hide", false: "unhide"}[hidden], Slug: slug, ID: number, Hidden: hidden, Reason: reason})
}

func (f *fakeConsole) DeleteEntry(ctx context.Context, by operators.Actor, slug, reason string) error {
	r, err := operators.CheckReason(reason)
	if err != nil {
		return err
	}
	if _, err := f.st.Entry(ctx, slug); err != nil {
		return err
	}
	return f.record(ctx, by, consoleCall{Op: "delete", Slug: slug, Reason: r})
}

func (f *fakeConsole) Claims(ctx context.Context, q store.ClaimReviewQuery) ([]store.ClaimReview, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []store.ClaimReview
	for _, c := range f.claims {
		if (!q.LiveOnly || c.Live()) && (q.BeforeID <= 0 || c.ID < q.BeforeID) {
			out = append(out, c)
		}
	}
	return out, nil
}

func (f *fakeConsole) RevokeClaim(ctx context.Context, by operators.Actor, id int64, reason string) (store.Claim, error) {
	r, err := operators.CheckReason(reason)
	if err != nil {
		return store.Claim{}, err
	}
	f.mu.Lock()
	found := false
	for _, c := range f.claims {
		found = found || c.ID == id && c.Live()
	}
	f.mu.Unlock()
	if !found {
		return store.Claim{}, store.ErrNotFound
	}
	return store.Claim{ID: id}, f.record(ctx, by, consoleCall{Op: "revoke", ID: id, Reason: r})
}

func (f *fakeConsole) DecidedDispute(ctx context.Context, by operators.Actor, slug string, id int64, decision, version, reason string) error {
	return f.record(ctx, by, consoleCall{Op: "decided", Slug: slug, ID: id, Reason: reason, Extra: decision, Version: version})
}

func (f *fakeConsole) Audit(ctx context.Context, before int64, limit int) ([]store.OperatorAction, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []store.OperatorAction
	for i := len(f.audit) - 1; i >= 0 && len(out) < limit; i-- {
		if before <= 0 || f.audit[i].ID < before {
			out = append(out, f.audit[i])
		}
	}
	return out, nil
}

// fakeDesk is the dispute queue: open disputes until decided.
type fakeDesk struct {
	mutations *atomic.Int64
	mu        sync.Mutex
	open      []web.OpsDispute
	decided   []string
}

func (f *fakeDesk) Queue(ctx context.Context) ([]web.OpsDispute, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]web.OpsDispute(nil), f.open...), nil
}

func (f *fakeDesk) Decide(ctx context.Context, operatorID, id int64, decision, version, reason string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, d := range f.open {
		if d.ID == id {
			f.open = append(f.open[:i], f.open[i+1:]...)
			f.decided = append(f.decided, fmt.Sprintf("%d %s %s %s", id, decision, version, reason))
			f.mutations.Add(1)
			return nil
		}
	}
	return errors.New("no such open dispute")
}

// opsActor is the operator with the account id, as the console passes it.
func opsActor(id int64) operators.Actor { return operators.By(id) }
