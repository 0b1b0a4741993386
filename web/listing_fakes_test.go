package web_test

// Fakes of the roles (web.Maintainers, web.Operators) for the maintainer's listing
// routes: an account maintains the entries the test gives it, and is an operator when
// the test says so; nothing else.

import (
	"context"
	"sync"
)

type fakeRoles struct {
	mu        sync.Mutex
	maintains map[int64]map[int64]bool // account → entries
	operators map[int64]bool
}

func newFakeRoles() *fakeRoles {
	return &fakeRoles{maintains: map[int64]map[int64]bool{}, operators: map[int64]bool{}}
}

func (f *fakeRoles) IsMaintainer(ctx context.Context, accountID, entryID int64) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.maintains[accountID][entryID], nil
}

func (f *fakeRoles) IsOperator(ctx context.Context, accountID int64) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.operators[accountID], nil
}

func (f *fakeRoles) maintain(accountID, entryID int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.maintains[accountID] == nil {
		f.maintains[accountID] = map[int64]bool{}
	}
	f.maintains[accountID][entryID] = true
}

func (f *fakeRoles) operator(accountID int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.operators[accountID] = true
}
