package claims

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/probity-dev/probity/store"
)

// TestRedirects: a proof follows a redirect on its own origin, never one to another
// origin (which would let that origin's owner prove this one); the other origin sees
// no request.
func TestRedirects(t *testing.T) {
	forEachStore(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		a := e.account(t, "a@example.com")
		var elsewhere atomic.Int32
		other := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			elsewhere.Add(1)
			body, _ := e.wellKnown.get("body")
			_, _ = w.Write([]byte(body))
		}))
		t.Cleanup(other.Close)
		en := e.entry(t, "origin", store.KindRemote, e.origin.URL+"/mcp")
		s, err := e.svc.Start(t.Context(), a, en.Slug, MethodWellKnown, en.Locator)
		if err != nil {
			t.Fatal(err)
		}
		e.wellKnown.set("body", s.Token)
		e.wellKnown.set("redirect", other.URL+"/token.txt")
		var np *NotProven
		if _, err := e.check(t, a, en.Slug, s.Token); !errors.As(err, &np) || !strings.Contains(np.Reason, "another origin") {
			t.Fatalf("Check through a cross-origin redirect = %v", err)
		}
		if n := elsewhere.Load(); n != 0 {
			t.Fatalf("the other origin got %d requests", n)
		}
		e.wellKnown.set("redirect", e.origin.URL+"/token.txt")
		if _, err := e.check(t, a, en.Slug, s.Token); err != nil {
			t.Fatalf("Check through a same-origin redirect = %v", err)
		}
	})
}

// TestHTTPEndpoint: an http endpoint is never proven by a file over plain text: the
// method is not offered, not started, and a fetch is not made; DNS TXT is offered.
func TestHTTPEndpoint(t *testing.T) {
	forEachStore(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		ctx := t.Context()
		a := e.account(t, "a@example.com")
		var got atomic.Int32
		plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got.Add(1)
			body, _ := e.wellKnown.get("body")
			_, _ = w.Write([]byte(body))
		}))
		t.Cleanup(plain.Close)
		en := e.entry(t, "plain", store.KindRemote, plain.URL+"/mcp")
		o, err := e.svc.Options(ctx, a, en.Slug)
		if err != nil {
			t.Fatal(err)
		}
		for _, opt := range o.Options {
			if opt.Method == MethodWellKnown {
				t.Errorf("an http endpoint is offered %+v", opt)
			}
		}
		if _, err := e.svc.Start(ctx, a, en.Slug, MethodWellKnown, en.Locator); !errors.Is(err, ErrMethod) {
			t.Errorf("Start(well-known) of an http endpoint = %v, want ErrMethod", err)
		}
		tok, hash := newToken()
		e.wellKnown.set("body", tok)
		var np *NotProven
		if _, err := e.svc.prove(ctx, MethodWellKnown, en.Locator, hash); !errors.As(err, &np) || !strings.Contains(np.Reason, "not https") {
			t.Errorf("prove(well-known) over http = %v", err)
		}
		if n := got.Load(); n != 0 {
			t.Errorf("the http endpoint got %d requests", n)
		}
		dnsEntry := e.entry(t, "plain-dns", store.KindRemote, "http://mcp.example.test/mcp")
		if o, err := e.svc.Options(ctx, a, dnsEntry.Slug); err != nil || len(o.Options) != 1 || o.Options[0].Method != MethodDNS {
			t.Errorf("Options of an http endpoint with a name = %+v, %v", o.Options, err)
		}
	})
}

// TestNoAnswerNeverLapses: answers that say nothing about the proof (a 401 or 403 with
// a spent rate limit, a 403, a 429, a Retry-After, a 5xx) are no answer: a claim
// answered so for days stays live; the first check is refused as not proven.
func TestNoAnswerNeverLapses(t *testing.T) {
	forEachStore(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		ctx := t.Context()
		a := e.account(t, "a@example.com")
		en := e.entry(t, "origin", store.KindRemote, e.origin.URL+"/mcp")
		e.claimBy(t, a, en, MethodWellKnown, func(s Started) { e.wellKnown.set("body", s.Token) })
		for _, c := range []struct{ status, header string }{
			{"401", "X-RateLimit-Remaining: 0"}, {"403", "X-RateLimit-Remaining: 0\nRetry-After: 60"}, {"403", ""},
			{"429", ""}, {"503", "Retry-After: 120"}, {"500", ""}, {"502", ""},
		} {
			e.wellKnown.set("status", c.status)
			e.wellKnown.set("header", c.header)
			e.clock.Add(26 * time.Hour)
			r, err := e.svc.Recheck(ctx)
			if err != nil || r.Unanswered != 1 || r.Gone != 0 || r.Lapsed != 0 {
				t.Fatalf("Recheck answered %s %q = %+v, %v", c.status, c.header, r, err)
			}
		}
		if got, _ := st.EntryByID(ctx, en.ID); !got.Claimed {
			t.Fatal("unclaimed by answers that say nothing about the proof")
		}
		// A check of a new token answered 429 is not a claim.
		e.wellKnown.set("status", "429")
		b := e.account(t, "b@example.com")
		sb, err := e.svc.Start(ctx, b, en.Slug, MethodWellKnown, en.Locator)
		if err != nil {
			t.Fatal(err)
		}
		var np *NotProven
		if _, err := e.check(t, b, en.Slug, sb.Token); !errors.As(err, &np) || !np.Throttled {
			t.Fatalf("Check answered 429 = %v", err)
		}
	})
}

// TestPartRemoved: a claim on a part the registry no longer lists for the entry stops
// counting at once (IsMaintainer) and lapses at the next check ("part removed"); a
// listed repository that is not the entry's locator is not offered.
func TestPartRemoved(t *testing.T) {
	forEachStore(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		ctx := t.Context()
		a := e.account(t, "a@example.com")
		remote := store.Part{Kind: store.KindRemote, Locator: e.origin.URL + "/mcp"}
		npm := store.Part{Kind: store.KindNPM, Locator: "pkg:npm/acme-tool"}
		repo := store.Part{Kind: store.KindGitHub, Locator: "https://github.com/acme/monorepo"}
		upsert := func(parts ...store.Part) store.Entry {
			t.Helper()
			res, err := st.UpsertServer(ctx, store.ServerUpsert{SlugBase: "acme", Name: "Acme", Source: "registry",
				Listing: store.Listing{ServerName: "test.acme/tool"}, Parts: parts})
			if err != nil {
				t.Fatal(err)
			}
			return res.Entry
		}
		en := upsert(remote, npm, repo)
		o, err := e.svc.Options(ctx, a, en.Slug)
		if err != nil {
			t.Fatal(err)
		}
		for _, opt := range o.Options {
			if opt.Target == repo.Locator {
				t.Errorf("a listed repository is offered: %+v", opt)
			}
		}
		if _, err := e.svc.Start(ctx, a, en.Slug, MethodRepoFile, repo.Locator); !errors.Is(err, ErrMethod) {
			t.Errorf("Start(repo-file) on a listed repository = %v, want ErrMethod", err)
		}
		s, err := e.svc.Start(ctx, a, en.Slug, MethodNPM, npm.Locator)
		if err != nil {
			t.Fatal(err)
		}
		e.readme.set("npm:acme-tool", s.What)
		if _, err := e.check(t, a, en.Slug, s.Token); err != nil {
			t.Fatal(err)
		}
		if yes, err := e.svc.IsMaintainer(ctx, a, en.ID); err != nil || !yes {
			t.Fatalf("IsMaintainer after the claim = %v, %v", yes, err)
		}
		// A token started on the npm part, then the part removed: the check refuses it.
		b := e.account(t, "b@example.com")
		sb, err := e.svc.Start(ctx, b, en.Slug, MethodNPM, npm.Locator)
		if err != nil {
			t.Fatal(err)
		}
		upsert(remote, repo)
		if yes, err := e.svc.IsMaintainer(ctx, a, en.ID); err != nil || yes {
			t.Fatalf("IsMaintainer after the part was removed = %v, %v", yes, err)
		}
		if _, err := e.check(t, b, en.Slug, sb.Token); !errors.Is(err, ErrMethod) {
			t.Errorf("Check of a token on a removed part = %v, want ErrMethod", err)
		}
		e.clock.Add(26 * time.Hour)
		if r, err := e.svc.Recheck(ctx); err != nil || r.Lapsed != 1 {
			t.Fatalf("Recheck = %+v, %v", r, err)
		}
		cs, err := st.Claims(ctx, en.ID)
		if err != nil || len(cs) != 1 || cs[0].Live() || !strings.HasPrefix(cs[0].LapseReason, "part removed") {
			t.Fatalf("claims = %+v, %v", cs, err)
		}
		if got, _ := st.EntryByID(ctx, en.ID); got.Claimed {
			t.Fatal("claimed by a claim on a removed part")
		}
	})
}

// TestCheckThrottle: one check of a token per CheckEvery, ChecksPerHour checks of an
// account an hour; a refused check fetches nothing and says when to try again.
func TestCheckThrottle(t *testing.T) {
	forEachStore(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		ctx := t.Context()
		a := e.account(t, "a@example.com")
		var fetches atomic.Int32
		counting := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fetches.Add(1)
			http.NotFound(w, r)
		}))
		t.Cleanup(counting.Close)
		en := e.entry(t, "counted", store.KindRemote, counting.URL+"/mcp")
		s, err := e.svc.Start(ctx, a, en.Slug, MethodWellKnown, en.Locator)
		if err != nil {
			t.Fatal(err)
		}
		var np *NotProven
		if _, err := e.svc.Check(ctx, a, en.Slug, s.Token); !errors.As(err, &np) {
			t.Fatalf("first Check = %v", err)
		}
		e.clock.Add(CheckEvery / 2)
		var soon *TooSoon
		if _, err := e.svc.Check(ctx, a, en.Slug, s.Token); !errors.As(err, &soon) || soon.RetryAfter != CheckEvery/2 {
			t.Fatalf("second Check at once = %v", err)
		}
		if n := fetches.Load(); n != 1 {
			t.Fatalf("%d fetches, want 1", n)
		}
		for range ChecksPerHour - 1 {
			if _, err := e.check(t, a, en.Slug, s.Token); !errors.As(err, &np) {
				t.Fatalf("Check = %v", err)
			}
		}
		if _, err := e.check(t, a, en.Slug, s.Token); !errors.As(err, &soon) || soon.RetryAfter <= 0 || soon.RetryAfter > time.Hour {
			t.Fatalf("Check past the hour's budget = %v", err)
		}
		if n := fetches.Load(); n != ChecksPerHour {
			t.Fatalf("%d fetches, want %d", n, ChecksPerHour)
		}
		e.clock.Add(time.Hour)
		if _, err := e.svc.Check(ctx, a, en.Slug, s.Token); !errors.As(err, &np) {
			t.Fatalf("Check an hour later = %v", err)
		}
	})
}

// provenClaim makes a claim of account on a new remote entry at locator directly in
// the store, with token tok (as Check would after finding it).
func (e *env) provenClaim(t *testing.T, account int64, slug, locator string) (store.Claim, string) {
	t.Helper()
	en := e.entry(t, slug, store.KindRemote, locator)
	tok, hash := newToken()
	now := e.clock.Now()
	if _, err := e.st.AddClaimToken(t.Context(), store.ClaimToken{TokenHash: hash, AccountID: account, EntryID: en.ID,
		Method: MethodWellKnown, Target: locator, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	c, err := e.st.ProveClaim(t.Context(), store.ClaimProof{TokenHash: hash, AccountID: account, Proof: "p", At: now,
		NextCheckAt: now.Add(DefaultRecheckInterval)})
	if err != nil {
		t.Fatal(err)
	}
	return c, tok
}

// TestRecheckStarvation: many due claims, some on origins that never answer. Each run
// proves a small batch, RecheckConcurrency at once, each within its own timeout; a
// claim without an answer is tried again hours later rather than sorting first again,
// so over two days of runs every claim is checked within its cadence, and none lapses.
func TestRecheckStarvation(t *testing.T) {
	forEachStore(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		ctx := t.Context()
		cfg := e.cfg
		cfg.Timeout = 200 * time.Millisecond
		svc, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		e.svc = svc
		hang := make(chan struct{})
		hanging := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-hang:
			case <-r.Context().Done():
			}
			panic(http.ErrAbortHandler) // never an answer: the connection is cut
		}))
		t.Cleanup(func() { close(hang); hanging.Close() })
		a := e.account(t, "a@example.com")
		const nHanging, nGood = 12, 40
		good := map[int64]bool{}
		for i := range nHanging { // made first: they sort first among equally due claims
			e.provenClaim(t, a, fmt.Sprintf("hang-%d", i), fmt.Sprintf("%s/mcp%d", hanging.URL, i))
		}
		var body strings.Builder
		for i := range nGood {
			c, tok := e.provenClaim(t, a, fmt.Sprintf("good-%d", i), fmt.Sprintf("%s/mcp%d", e.origin.URL, i))
			body.WriteString(tok + "\n")
			good[c.ID] = true
		}
		e.wellKnown.set("body", body.String())

		start := e.clock.Now()
		lastProven := map[int64]time.Time{}
		for e.clock.Now().Sub(start) < 48*time.Hour {
			e.clock.Add(15 * time.Minute)
			began := time.Now()
			r, err := e.svc.Recheck(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if r.Checked > RecheckBatch || r.Lapsed != 0 {
				t.Fatalf("Recheck = %+v", r)
			}
			if took := time.Since(began); took > time.Duration(RecheckBatch/RecheckConcurrency+2)*cfg.Timeout+5*time.Second {
				t.Fatalf("a run took %s", took)
			}
			cs, err := st.ClaimsDue(ctx, e.clock.Now().Add(100*24*time.Hour), 1000)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cs {
				if !good[c.ID] || !c.LastCheckedAt.After(lastProven[c.ID]) {
					continue
				}
				prev := lastProven[c.ID]
				if prev.IsZero() {
					prev = start
				}
				if gap := c.LastCheckedAt.Sub(prev); gap > DefaultRecheckInterval*13/12+15*time.Minute {
					t.Errorf("claim %d proven %s after its last proof, beyond its cadence", c.ID, gap)
				}
				lastProven[c.ID] = c.LastCheckedAt
			}
		}
		cs, err := st.ClaimsDue(ctx, e.clock.Now().Add(100*24*time.Hour), 1000)
		if err != nil || len(cs) != nHanging+nGood {
			t.Fatalf("live claims = %d, %v; want all %d", len(cs), err, nHanging+nGood)
		}
		for _, c := range cs {
			switch {
			case good[c.ID] && e.clock.Now().Sub(c.LastCheckedAt) > DefaultRecheckInterval*13/12+15*time.Minute:
				t.Errorf("claim %d last proven %s ago", c.ID, e.clock.Now().Sub(c.LastCheckedAt))
			case good[c.ID] && !c.LastCheckedAt.After(start.Add(DefaultRecheckInterval-DefaultRecheckInterval/12)):
				t.Errorf("claim %d never proven in two days", c.ID)
			case !good[c.ID] && (c.UnansweredSince.IsZero() || !c.LastCheckedAt.Equal(start)):
				t.Errorf("hanging claim %d: %+v", c.ID, c)
			}
		}
	})
}

// TestRecheckCancelled: a run cancelled during a check records nothing for the claim:
// it stays due, with no run of unanswered checks begun.
func TestRecheckCancelled(t *testing.T) {
	forEachStore(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		hang := make(chan struct{})
		hanging := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-hang:
			case <-r.Context().Done():
			}
			panic(http.ErrAbortHandler) // never an answer: the connection is cut
		}))
		t.Cleanup(func() { close(hang); hanging.Close() })
		a := e.account(t, "a@example.com")
		c, _ := e.provenClaim(t, a, "hang", hanging.URL+"/mcp")
		e.clock.Add(25 * time.Hour)
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(300*time.Millisecond, cancel)
		r, err := e.svc.Recheck(ctx)
		if !errors.Is(err, context.Canceled) || r.Checked != 0 || r.Skipped != 1 {
			t.Fatalf("Recheck cancelled = %+v, %v", r, err)
		}
		cs, err := st.ClaimsDue(t.Context(), e.clock.Now(), 10)
		if err != nil || len(cs) != 1 || cs[0].ID != c.ID || !cs[0].UnansweredSince.IsZero() || !cs[0].NextCheckAt.Equal(c.NextCheckAt) {
			t.Fatalf("the claim after a cancelled run = %+v, %v", cs, err)
		}
	})
}

// TestRepoFileQuota: GitHub reads go through the supply client's throttle: a 403 with
// the quota spent is no answer (throttled, never gone), and until the quota's reset
// no further read reaches GitHub.
func TestRepoFileQuota(t *testing.T) {
	forEachStore(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		var reads atomic.Int32
		api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			reads.Add(1)
			w.Header().Set("X-RateLimit-Limit", "5000")
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.Header().Set("X-RateLimit-Reset", fmt.Sprint(e.clock.Now().Add(time.Hour).Unix()))
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"message":"API rate limit exceeded"}`))
		}))
		t.Cleanup(api.Close)
		cfg := e.cfg
		cfg.GitHubAPIURL = api.URL
		svc, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		e.svc = svc
		a := e.account(t, "a@example.com")
		repo := e.entry(t, "repo", store.KindGitHub, "https://github.com/acme/tool")
		s, err := e.svc.Start(t.Context(), a, repo.Slug, MethodRepoFile, repo.Locator)
		if err != nil {
			t.Fatal(err)
		}
		var np *NotProven
		for i := range 3 {
			if _, err := e.check(t, a, repo.Slug, s.Token); !errors.As(err, &np) || !np.Throttled || np.Gone {
				t.Fatalf("check %d with GitHub's quota spent = %v", i, err)
			}
		}
		if n := reads.Load(); n != 1 {
			t.Errorf("%d reads reached GitHub with its quota spent, want 1", n)
		}
	})
}

// badSchedule moves due times in a way the store refuses.
type badSchedule struct{}

func (badSchedule) ClaimedDue(store.Entry, []store.Due, time.Time) []store.DueUpdate {
	return []store.DueUpdate{{Reason: "no-such-reason"}}
}

// TestClaimDueMoveFails: a claim stored is a claim made, even when its entry's due
// time cannot be moved after it (logged; the entry's next read moves it).
func TestClaimDueMoveFails(t *testing.T) {
	forEachStore(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		cfg := e.cfg
		cfg.Schedule = badSchedule{}
		svc, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		e.svc = svc
		a := e.account(t, "a@example.com")
		en := e.entry(t, "origin", store.KindRemote, e.origin.URL+"/mcp")
		e.claimBy(t, a, en, MethodWellKnown, func(s Started) { e.wellKnown.set("body", s.Token) })
		if yes, err := e.svc.IsMaintainer(t.Context(), a, en.ID); err != nil || !yes {
			t.Fatalf("IsMaintainer = %v, %v", yes, err)
		}
	})
}

// TestRevokedStaysRevoked: a claim an operator revoked cannot be made again by the same
// account (no new token, no check of an old one); another account can claim the entry.
func TestRevokedStaysRevoked(t *testing.T) {
	forEachStore(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		ctx := t.Context()
		a := e.account(t, "a@example.com")
		npm := store.Part{Kind: store.KindNPM, Locator: "pkg:npm/acme-tool"}
		res, err := st.UpsertServer(ctx, store.ServerUpsert{SlugBase: "acme", Name: "Acme", Source: "registry",
			Listing: store.Listing{ServerName: "test.acme/tool"}, Parts: []store.Part{npm}})
		if err != nil {
			t.Fatal(err)
		}
		en := res.Entry
		s, err := e.svc.Start(ctx, a, en.Slug, MethodNPM, npm.Locator)
		if err != nil {
			t.Fatal(err)
		}
		spare, err := e.svc.Start(ctx, a, en.Slug, MethodNPM, npm.Locator) // a second token, made before the revocation
		if err != nil {
			t.Fatal(err)
		}
		e.readme.set("npm:acme-tool", s.What+"\n"+spare.What)
		if _, err := e.check(t, a, en.Slug, s.Token); err != nil {
			t.Fatal(err)
		}
		cs, err := st.Claims(ctx, en.ID)
		if err != nil || len(cs) != 1 {
			t.Fatalf("claims = %+v, %v", cs, err)
		}
		if _, err := st.RevokeClaimRecorded(ctx, cs[0].ID, e.clock.Now(), RevokedReason("abuse"),
			store.OperatorAction{At: e.clock.Now(), Actor: "cli", Action: "claim.revoke", EntrySlug: en.Slug, EntryID: en.ID, Detail: "{}"}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.Start(ctx, a, en.Slug, MethodNPM, npm.Locator); !errors.Is(err, ErrRevoked) {
			t.Errorf("Start after the revocation = %v, want ErrRevoked", err)
		}
		e.clock.Add(time.Minute)
		if _, err := e.check(t, a, en.Slug, spare.Token); !errors.Is(err, ErrRevoked) {
			t.Errorf("Check of an older token after the revocation = %v, want ErrRevoked", err)
		}
		if yes, err := e.svc.IsMaintainer(ctx, a, en.ID); err != nil || yes {
			t.Errorf("IsMaintainer after the revocation = %v, %v", yes, err)
		}
		b := e.account(t, "b@example.com")
		if _, err := e.svc.Start(ctx, b, en.Slug, MethodNPM, npm.Locator); err != nil {
			t.Errorf("another account's Start = %v", err)
		}
	})
}
