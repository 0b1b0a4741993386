package web_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/checks/supply"
	"github.com/probity-dev/probity/keys/signing"
	"github.com/probity-dev/probity/reports"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/web"
)

// emailRoles is who maintains which entry and who is an operator, by e-mail address
// (the fake accounts' ids are given at sign-in).
type emailRoles struct {
	acc   *fakeAccounts
	mu    sync.Mutex
	maint map[string]int64 // e-mail → the entry it maintains
	ops   map[string]bool
}

func (f *emailRoles) IsMaintainer(_ context.Context, accountID, entryID int64) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for email, e := range f.maint {
		if f.acc.accountID(email) == accountID && e == entryID {
			return true, nil
		}
	}
	return false, nil
}

func (f *emailRoles) IsOperator(_ context.Context, accountID int64) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for email, yes := range f.ops {
		if yes && f.acc.accountID(email) == accountID {
			return true, nil
		}
	}
	return false, nil
}

// fakeAudit is the operators' audit log.
type fakeAudit struct {
	mu      sync.Mutex
	actions []reports.Action
}

func (f *fakeAudit) Record(_ context.Context, a reports.Action) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.actions = append(f.actions, a)
	return nil
}

// reportSite is a write site with the report service (the real one, over the real
// store and the site's signing key), roles, and a Verified entry.
type reportSite struct {
	*writeSite
	svc    *reports.Service
	roles  *emailRoles
	audit  *fakeAudit
	signer *signing.Signer
	other  store.Entry // a second Verified-capable entry, maintained by maint@
	now    time.Time
}

func newReportSite(t *testing.T) *reportSite {
	t.Helper()
	return newReportSiteAt(t, "https://probity.test", generous)
}

// newReportSiteLimited is newReportSite with the write routes' rate limit write.
func newReportSiteLimited(t *testing.T, write web.RateLimit) *reportSite {
	t.Helper()
	return newReportSiteAt(t, "https://probity.test", write)
}

// newReportSiteAt is newReportSite at the base address base.
func newReportSiteAt(t *testing.T, base string, write web.RateLimit) *reportSite {
	t.Helper()
	start := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	st, doc, signer := openStore(t, start)
	ctx := context.Background()
	e, _, err := st.AddEntry(ctx, store.NewEntry{SlugBase: "search", Kind: store.KindRemote, Locator: "https://search.example/mcp", Name: "Search", Source: "import"})
	if err != nil {
		t.Fatal(err)
	}
	evil, _, err := st.AddEntry(ctx, store.NewEntry{SlugBase: "evil", Kind: store.KindRemote, Locator: "https://evil.example/mcp", Name: hostileName, Source: "import"})
	if err != nil {
		t.Fatal(err)
	}
	// The store's accounts table holds the fake accounts' ids (1, 2, … in sign-in
	// order), which a closed report's decided_by references.
	for i := range 10 {
		if _, _, err := st.EmailAccount(ctx, fmt.Sprintf("account-%d@example.org", i+1), fmt.Sprintf("account-%d@example.org", i+1), start); err != nil {
			t.Fatal(err)
		}
	}
	m := new(atomic.Int64)
	w := &writeSite{base: base, st: st, acc: newFakeAccounts(m), fol: newFakeFollows(m, st), hooks: newFakeWebhooks(m),
		mutations: m, slug: e.Slug, entryID: e.ID, evil: evil}
	rs := &reportSite{writeSite: w, roles: &emailRoles{acc: w.acc, maint: map[string]int64{}, ops: map[string]bool{}}, audit: &fakeAudit{},
		signer: signer, other: evil, now: start.Add(time.Hour)}
	rs.roles.maint["maint@example.org"] = e.ID
	rs.roles.maint["other@example.org"] = evil.ID
	rs.roles.ops["op@example.org"] = true
	// Every request of a test comes from one address (httptest's): the per-client cap
	// is tested in package reports.
	rs.svc, err = reports.New(reports.Config{Store: st, Signer: signer, Auditor: rs.audit, ToolVersion: "0.1.0", PerClientPerDay: 1000,
		Now: func() time.Time { return rs.now }})
	if err != nil {
		t.Fatal(err)
	}
	w.h, err = web.New(web.Config{Store: st, Keys: doc, BaseURL: w.base, Now: func() time.Time { return rs.now },
		Logger: slog.New(slog.DiscardHandler), RateLimit: generous, WriteRateLimit: write,
		Accounts: w.acc, Follows: w.fol, Maintainers: rs.roles, Operators: rs.roles, Reports: rs.svc})
	if err != nil {
		t.Fatal(err)
	}
	rs.verify(t, e)
	return rs
}

// verify stores a signed supply run that verifies entry e.
func (rs *reportSite) verify(t *testing.T, e store.Entry) {
	t.Helper()
	checks := make([]attest.SupplyCheck, len(attest.SupplyCheckIDs))
	for i, id := range attest.SupplyCheckIDs {
		checks[i] = attest.SupplyCheck{ID: id, Weight: attest.SupplyWeights[i], Status: attest.SupplyPassed, PointsMilli: attest.SupplyWeights[i] * 1000}
	}
	at := rs.now.Add(-time.Minute)
	st := attest.NewSupplyStatement(&attest.SupplyPredicate{
		Checks: checks, Entry: attest.EntryRef(e.Kind, e.Slug, e.Locator),
		EvaluatedAt: attest.FormatTime(at), Score: 100, WeightRan: 100, Verified: true,
		SuiteVersion: "2026.11", ToolVersion: "0.1.0",
	}, attest.Digest([]byte("facts"))[len("sha256:"):])
	env, _, err := attest.Sign(t.Context(), st, rs.signer)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := attest.EncodeEnvelope(env)
	if err != nil {
		t.Fatal(err)
	}
	verdict, err := supply.EncodeVerdict(supply.Verdict{WeightRan: 100, PointsPassed: 100, Score: 100, Verified: true, SuiteVersion: "2026.11"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs.st.SaveSupply(t.Context(), store.SupplyRecord{EntryID: e.ID, RanAt: at, Score: 100, Verified: true,
		Facts: []byte(`{}`), Verdict: verdict, Envelope: raw, KeyID: rs.signer.ID()}, nil); err != nil {
		t.Fatal(err)
	}
}
