package web_test

// Fakes of the baseline pages' services: roles (web.Maintainers, web.Operators) as
// sets of accounts, and web.Baselines keeping package baseline's contract (maintainers
// only, numbered approvals, ErrNoRound without a signed round, ErrAlreadyApproved for
// the approved surface). Every approval counts in mutations.

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/baseline"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/web"
)

// baselineRoles holds who maintains which entry and who is an operator. A failure
// injected in fail is returned by both questions.
type baselineRoles struct {
	mu        sync.Mutex
	maintains map[[2]int64]bool // {account, entry}
	operators map[int64]bool
	fail      error
}

func newBaselineRoles() *baselineRoles {
	return &baselineRoles{maintains: map[[2]int64]bool{}, operators: map[int64]bool{}}
}

func (r *baselineRoles) IsMaintainer(ctx context.Context, account, entry int64) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.maintains[[2]int64{account, entry}], r.fail
}

func (r *baselineRoles) IsOperator(ctx context.Context, account int64) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.operators[account], r.fail
}

func (r *baselineRoles) maintain(account, entry int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.maintains[[2]int64{account, entry}] = true
}

func (r *baselineRoles) operator(account int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.operators[account] = true
}

// fakeBaselines approves the surface of a fixed newest round per entry (none: no
// signed round yet).
type fakeBaselines struct {
	st        store.Store
	roles     *baselineRoles
	mutations *atomic.Int64
	now       func() time.Time
	mu        sync.Mutex
	newest    map[int64]*store.RoundSummary
	current   map[int64]*store.Baseline
}

func newFakeBaselines(st store.Store, roles *baselineRoles, m *atomic.Int64, now func() time.Time) *fakeBaselines {
	return &fakeBaselines{st: st, roles: roles, mutations: m, now: now, newest: map[int64]*store.RoundSummary{}, current: map[int64]*store.Baseline{}}
}

func (f *fakeBaselines) setNewest(entry int64, tools int, surface string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.newest[entry] = &store.RoundSummary{EntryID: entry, RoundID: "f20261201T060000000Z-e1", StartedAt: f.now(), ToolCount: tools,
		Signed: true, Coverage: "full", PayloadDigest: "ab",
		Fingerprints: &attest.Fingerprints{Toolset: attest.Digest([]byte("t" + surface)), Schema: attest.Digest([]byte("s" + surface)), Surface: attest.Digest([]byte(surface))}}
}

func (f *fakeBaselines) Status(ctx context.Context, account int64, slug string) (web.BaselineStatus, error) {
	e, err := f.st.Entry(ctx, slug)
	if err != nil {
		return web.BaselineStatus{}, err
	}
	if ok, err := f.roles.IsMaintainer(ctx, account, e.ID); err != nil || !ok {
		if err == nil {
			err = baseline.ErrNotMaintainer
		}
		return web.BaselineStatus{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	st := web.BaselineStatus{Entry: e, Current: f.current[e.ID], Newest: f.newest[e.ID]}
	switch {
	case st.Newest == nil:
		st.Approval = baseline.ErrNoRound
	case st.Newest.ToolCount == 0:
		st.Approval = baseline.ErrNoTools
	case st.Current != nil && st.Current.Fingerprints.Surface == st.Newest.Fingerprints.Surface:
		st.Approval = baseline.ErrAlreadyApproved
	}
	st.Differs = st.Current != nil && st.Newest != nil && st.Current.Fingerprints.Surface != st.Newest.Fingerprints.Surface
	return st, nil
}

func (f *fakeBaselines) Approve(ctx context.Context, account int64, slug string) (store.Baseline, error) {
	return f.ApproveSeen(ctx, account, slug, "")
}

func (f *fakeBaselines) ApproveSeen(ctx context.Context, account int64, slug, seen string) (store.Baseline, error) {
	st, err := f.Status(ctx, account, slug)
	if err != nil {
		return store.Baseline{}, err
	}
	if st.Approval != nil {
		return store.Baseline{}, st.Approval
	}
	if seen != "" && st.Newest.Fingerprints.Surface != seen {
		return store.Baseline{}, baseline.ErrChanged
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	n := int64(1)
	if st.Current != nil {
		n = st.Current.Number + 1
	}
	b := &store.Baseline{EntryID: st.Entry.ID, Number: n, Fingerprints: *st.Newest.Fingerprints, ToolCount: st.Newest.ToolCount,
		BasisRoundID: st.Newest.RoundID, ApprovedAt: f.now(), ApprovedBy: account}
	f.current[st.Entry.ID] = b
	f.mutations.Add(1)
	return *b, nil
}
