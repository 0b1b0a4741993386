package web_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/disputes"
	"github.com/probity-dev/probity/store"
)

// fakeRoles are web.Maintainers and web.Operators: who maintains which entries, and
// who is an operator. An operator maintains nothing unless given.
type fakeRoles struct {
	mu    sync.Mutex
	maint map[int64]map[int64]bool // account → entries
	ops   map[int64]bool
	fail  error // injected: every answer fails
}

func newFakeRoles() *fakeRoles {
	return &fakeRoles{maint: map[int64]map[int64]bool{}, ops: map[int64]bool{}}
}

func (f *fakeRoles) grant(account, entry int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.maint[account] == nil {
		f.maint[account] = map[int64]bool{}
	}
	f.maint[account][entry] = true
}

func (f *fakeRoles) operator(account int64) { f.setOperator(account, true) }

// setOperator grants (yes) or takes away the operator role.
func (f *fakeRoles) setOperator(account int64, yes bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ops[account] = yes
}

func (f *fakeRoles) IsMaintainer(_ context.Context, account, entry int64) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.maint[account][entry], f.fail
}

func (f *fakeRoles) IsOperator(_ context.Context, account int64) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ops[account], f.fail
}

// fakeDisputes is web.Disputes with package disputes' contract: maintainers only, the
// round a signed round of the entry, one open dispute per round and check, bounded
// text, a daily limit per account. It stores the dispute in the real store (with an
// envelope that is not signed: the pages only read it) so the pages show it; the
// account is not stored (the fake accounts are not the store's). Every dispute opened
// counts in mutations.
type fakeDisputes struct {
	st        store.Store
	roles     *fakeRoles
	mutations *atomic.Int64
	limit     int
	mu        sync.Mutex
	opened    map[int64]int // account → disputes opened
}

func (f *fakeDisputes) Contest(ctx context.Context, account int64, slug string, round int64, check, statement, evidence string) (disputes.Dispute, error) {
	if err := attest.CheckDisputeText(statement); err != nil {
		return disputes.Dispute{}, &disputes.InputError{Msg: "Statement: " + err.Error() + "."}
	}
	if err := attest.CheckEvidenceURL(evidence); err != nil {
		return disputes.Dispute{}, &disputes.InputError{Msg: "Evidence: " + err.Error() + "."}
	}
	e, err := f.st.Entry(ctx, slug)
	if err != nil {
		return disputes.Dispute{}, err
	}
	if ok, _ := f.roles.IsMaintainer(ctx, account, e.ID); !ok {
		return disputes.Dispute{}, disputes.ErrNotMaintainer
	}
	raw, err := f.st.RoundResults(ctx, round)
	if err != nil {
		return disputes.Dispute{}, disputes.ErrNoFinding
	}
	var results []struct{ ID string }
	if err := json.Unmarshal(raw, &results); err != nil {
		return disputes.Dispute{}, err
	}
	if !slices.ContainsFunc(results, func(r struct{ ID string }) bool { return r.ID == check }) {
		return disputes.Dispute{}, disputes.ErrNoFinding
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.opened[account] >= f.limit {
		return disputes.Dispute{}, disputes.ErrRateLimited
	}
	n, err := f.st.NextDisputeNumber(ctx, e.ID)
	if err != nil {
		return disputes.Dispute{}, err
	}
	env := fmt.Sprintf(`{"payloadType":"application/vnd.in-toto+json","payload":"%s","signatures":[{"keyid":"fake","sig":"c2ln"}]}`,
		base64.StdEncoding.EncodeToString(fmt.Appendf(nil, `{"dispute":[%d,%d]}`, e.ID, n)))
	rec, err := f.st.SaveDispute(ctx, store.NewDispute{EntryID: e.ID, Number: n, RoundID: round, CheckID: check, Status: attest.StatusVerified,
		Statement: statement, Evidence: evidence, OpenedAt: time.Now(), Envelope: []byte(env), KeyID: "fake"})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return disputes.Dispute{}, disputes.ErrNoFinding
	case errors.Is(err, store.ErrDisputeOpen):
		return disputes.Dispute{}, disputes.ErrOpen
	case err != nil:
		return disputes.Dispute{}, err
	}
	f.opened[account]++
	f.mutations.Add(1)
	return disputes.Dispute{ID: rec.ID, EntryID: e.ID, Slug: e.Slug, Number: rec.Number, RoundID: round, CheckID: check,
		Statement: statement, Evidence: evidence, Seq: rec.Seq}, nil
}
