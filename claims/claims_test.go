package claims

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/rounds"
	"github.com/probity-dev/probity/store"
)

// claimBy starts a claim of the entry by method on its own part, publishes the token
// with publish, and checks it; it fails the test unless the entry is claimed.
func (e *env) claimBy(t *testing.T, account int64, en store.Entry, method string, publish func(Started)) (Started, Result) {
	t.Helper()
	st, err := e.svc.Start(t.Context(), account, en.Slug, method, en.Locator)
	if err != nil {
		t.Fatalf("Start(%s) = %v", method, err)
	}
	if !TokenOK(st.Token) || st.Where == "" || len(st.Steps) == 0 || !st.ExpiresAt.Equal(e.clock.Now().Add(DefaultTokenLifetime)) {
		t.Fatalf("Start(%s) = %+v", method, st)
	}
	publish(st)
	res, err := e.check(t, account, en.Slug, st.Token)
	if err != nil {
		t.Fatalf("Check(%s) = %v", method, err)
	}
	if !res.Entry.Claimed || res.Claim.Method != method || res.Claim.Target != en.Locator || !res.Claim.Live() {
		t.Fatalf("Check(%s) = %+v", method, res)
	}
	if strings.Contains(res.Claim.Proof, st.Token) {
		t.Errorf("the proof %q holds the token", res.Claim.Proof)
	}
	return st, res
}

// TestClaimByEachMethod claims an entry by each method against the local servers:
// the well-known file on an HTTP origin, a TXT record on a DNS server, an npm package's
// and a PyPI project's README, a file on a repository's default branch and a role on
// it (GitHub API fake). Before the proof is published, Check says what it found and
// the token stays good; the claimed entry's cadence round moves to 15 min.
func TestClaimByEachMethod(t *testing.T) {
	forEachStore(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		ctx := t.Context()
		a := e.account(t, "a@example.com")

		// The well-known file, first missing, then without the token, then with it.
		wk := e.entry(t, "origin", store.KindRemote, e.origin.URL+"/mcp")
		s, err := e.svc.Start(ctx, a, wk.Slug, MethodWellKnown, wk.Locator)
		if err != nil {
			t.Fatal(err)
		}
		if s.Where != e.origin.URL+WellKnownPath || s.What != s.Token {
			t.Errorf("well-known instructions: %q %q", s.Where, s.What)
		}
		var np *NotProven
		if _, err := e.check(t, a, wk.Slug, s.Token); !errors.As(err, &np) || !strings.Contains(np.Reason, "HTTP 404") {
			t.Fatalf("Check before publishing = %v", err)
		}
		e.wellKnown.set("body", "someone else's: probity-claim-"+strings.Repeat("A", 43)+"\n")
		if _, err := e.check(t, a, wk.Slug, s.Token); !errors.As(err, &np) || !strings.Contains(np.Reason, "without this token") {
			t.Fatalf("Check with another token = %v", err)
		}
		e.wellKnown.set("body", "probity-claim-"+strings.Repeat("A", 43)+"\n"+s.Token+"\n")
		res, err := e.check(t, a, wk.Slug, s.Token)
		if err != nil || !res.Entry.Claimed || res.Claim.Proof != "the token at "+e.origin.URL+WellKnownPath {
			t.Fatalf("Check = %+v, %v", res, err)
		}
		due, err := st.DueTimes(ctx, wk.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range due {
			if d.Reason == store.ReasonCadence && d.At.Sub(e.clock.Now()) > rounds.DefaultClaimedCadence*11/10 {
				t.Errorf("cadence round of the claimed entry due in %v, want within 15 min ± 10 %%", d.At.Sub(e.clock.Now()))
			}
		}

		// DNS TXT.
		dnsEntry := e.entry(t, "dns", store.KindRemote, "https://mcp.example.test/mcp")
		s = e.claimStartCheckFails(t, a, dnsEntry, MethodDNS, "no TXT record at _probity-claim.mcp.example.test")
		e.txt.set("_probity-claim.mcp.example.test.", "v=spf1 -all\n"+s.Token)
		if res, err := e.check(t, a, dnsEntry.Slug, s.Token); err != nil || res.Claim.Proof != "the token in a TXT record at _probity-claim.mcp.example.test" {
			t.Fatalf("Check(dns) = %+v, %v", res, err)
		}

		// npm and PyPI.
		npmEntry := e.entry(t, "npm", store.KindNPM, "pkg:npm/%40acme/tool")
		s = e.claimStartCheckFails(t, a, npmEntry, MethodNPM, "@acme/tool")
		if s.What != "probity-claim: "+s.Token {
			t.Errorf("npm instructions: %q", s.What)
		}
		e.readme.set("npm:@acme/tool", "# Tool\n\n"+s.What+"\n")
		if res, err := e.check(t, a, npmEntry.Slug, s.Token); err != nil || res.Claim.Proof != "the token in the README of @acme/tool 2.0.0" {
			t.Fatalf("Check(npm) = %+v, %v", res, err)
		}
		pypiEntry := e.entry(t, "pypi", store.KindPyPI, "pkg:pypi/acme-tool")
		s = e.claimStartCheckFails(t, a, pypiEntry, MethodPyPI, "acme-tool")
		e.readme.set("pypi:acme-tool", "Acme tool.\n"+s.What)
		if res, err := e.check(t, a, pypiEntry.Slug, s.Token); err != nil || res.Claim.Proof != "the token in the description of acme-tool 1.2.0" {
			t.Fatalf("Check(pypi) = %+v, %v", res, err)
		}

		// A file on the repository's default branch.
		repo := e.entry(t, "repo", store.KindGitHub, "https://github.com/acme/tool")
		s = e.claimStartCheckFails(t, a, repo, MethodRepoFile, "there is no .well-known/probity-claim on the default branch of acme/tool")
		e.gh.SetFile("acme/tool", RepoFilePath, s.Token+"\n", false)
		if res, err := e.check(t, a, repo.Slug, s.Token); err != nil || res.Claim.Proof != "the token in .well-known/probity-claim on the default branch of acme/tool" {
			t.Fatalf("Check(repo-file) = %+v, %v", res, err)
		}

		// A role on the repository: withdrawn (GitHub answers the collaborator API only
		// to callers with push access); never offered, refused.
		if _, err := e.svc.Start(ctx, a, repo.Slug, MethodGitHubPermission, repo.Locator); !errors.Is(err, ErrMethod) {
			t.Errorf("Start(github-permission) = %v, want ErrMethod", err)
		}

		// The claims are the accounts' own; the options say so.
		if o, err := e.svc.Options(ctx, a, repo.Slug); err != nil || !o.Claimed || !o.Yours || len(o.Options) != 1 || o.Options[0].Method != MethodRepoFile {
			t.Errorf("Options = %+v, %v", o, err)
		}
		b := e.account(t, "b@example.com")
		if o, err := e.svc.Options(ctx, b, repo.Slug); err != nil || !o.Claimed || o.Yours {
			t.Errorf("Options of another account = %+v, %v", o, err)
		}
	})
}

// claimStartCheckFails starts a claim and checks it before anything is published: the
// check says why, mentioning want.
func (e *env) claimStartCheckFails(t *testing.T, account int64, en store.Entry, method, want string) Started {
	t.Helper()
	s, err := e.svc.Start(t.Context(), account, en.Slug, method, en.Locator)
	if err != nil {
		t.Fatalf("Start(%s) = %v", method, err)
	}
	var np *NotProven
	if _, err := e.check(t, account, en.Slug, s.Token); !errors.As(err, &np) || !strings.Contains(np.Reason, want) {
		t.Fatalf("Check(%s) before publishing = %v, want a reason with %q", method, err, want)
	}
	return s
}

// TestTokens: a token is used once, expires, is its own account's and entry's, and
// must have a token's form; a method the part does not take is refused.
func TestTokens(t *testing.T) {
	forEachStore(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		ctx := t.Context()
		a, b := e.account(t, "a@example.com"), e.account(t, "b@example.com")
		en := e.entry(t, "origin", store.KindRemote, e.origin.URL+"/mcp")
		other := e.entry(t, "other", store.KindRemote, "https://other.example.test/mcp")

		s, _ := e.claimBy(t, a, en, MethodWellKnown, func(s Started) { e.wellKnown.set("body", s.Token) })
		if _, err := e.check(t, a, en.Slug, s.Token); !errors.Is(err, ErrTokenUsed) {
			t.Errorf("second Check = %v, want ErrTokenUsed", err)
		}

		// b publishes its own token, and tries a's (which is on the origin too).
		sb, err := e.svc.Start(ctx, b, en.Slug, MethodWellKnown, en.Locator)
		if err != nil {
			t.Fatal(err)
		}
		e.wellKnown.set("body", s.Token+"\n"+sb.Token)
		if _, err := e.check(t, b, en.Slug, s.Token); !errors.Is(err, ErrBadToken) {
			t.Errorf("Check of another account's token = %v, want ErrBadToken", err)
		}
		if _, err := e.check(t, b, other.Slug, sb.Token); !errors.Is(err, ErrBadToken) {
			t.Errorf("Check of a token for another entry = %v, want ErrBadToken", err)
		}
		for _, bad := range []string{"", "probity-claim-short", strings.Repeat("x", 57), "probity-claim-" + strings.Repeat("A", 42) + "!"} {
			if _, err := e.check(t, b, en.Slug, bad); !errors.Is(err, ErrBadToken) {
				t.Errorf("Check(%q) = %v, want ErrBadToken", bad, err)
			}
		}
		// Expired: a day later.
		e.clock.Add(DefaultTokenLifetime)
		if _, err := e.check(t, b, en.Slug, sb.Token); !errors.Is(err, ErrTokenExpired) {
			t.Errorf("Check of an expired token = %v, want ErrTokenExpired", err)
		}
		// Methods the part does not take, parts the entry does not have.
		for _, c := range []struct{ method, target string }{
			{MethodNPM, en.Locator}, {MethodWellKnown, "https://elsewhere.example.test/mcp"}, {"telepathy", en.Locator},
			{MethodDNS, en.Locator}, // an IP address has no DNS name
		} {
			if _, err := e.svc.Start(ctx, b, en.Slug, c.method, c.target); !errors.Is(err, ErrMethod) {
				t.Errorf("Start(%s, %s) = %v, want ErrMethod", c.method, c.target, err)
			}
		}
		if _, err := e.svc.Start(ctx, b, "no-such-entry", MethodWellKnown, en.Locator); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Start(no such entry) = %v", err)
		}
		// At most store.MaxLiveClaimTokens live tokens per account.
		var last error
		for range store.MaxLiveClaimTokens + 1 {
			_, last = e.svc.Start(ctx, b, en.Slug, MethodWellKnown, en.Locator)
		}
		if !errors.Is(last, ErrTooMany) {
			t.Errorf("Start past the limit = %v, want ErrTooMany", last)
		}
	})
}

// TestRecheck: the daily re-check proves the claims again. A proof gone lapses its
// claim only when it is gone again a day later (a briefly missing file does not), and
// the entry is unclaimed when no live claim is left; a proof that cannot be read keeps
// the claim for MaxUnanswered from the first check without an answer, then lapses it;
// a claim by the withdrawn github-permission method lapses.
func TestRecheck(t *testing.T) {
	forEachStore(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		ctx := t.Context()
		a, b := e.account(t, "a@example.com"), e.account(t, "b@example.com")
		en := e.entry(t, "origin", store.KindRemote, e.origin.URL+"/mcp")
		sa, _ := e.claimBy(t, a, en, MethodWellKnown, func(s Started) { e.wellKnown.set("body", s.Token) })
		_, _ = e.claimBy(t, b, en, MethodWellKnown, func(s Started) { e.wellKnown.set("body", sa.Token+"\n"+s.Token) })
		recheck := func(want RecheckReport) {
			t.Helper()
			if r, err := e.svc.Recheck(ctx); err != nil || r != want {
				t.Fatalf("Recheck = %+v, %v; want %+v", r, err, want)
			}
		}

		// Not due yet: nothing checked.
		recheck(RecheckReport{})
		// A day later, b's token is gone: b's claim stays for now; a's is proven.
		e.clock.Add(26 * time.Hour)
		e.wellKnown.set("body", sa.Token)
		recheck(RecheckReport{Checked: 2, Proven: 1, Gone: 1})
		if cs, _ := st.Claims(ctx, en.ID); !cs[1].Live() || !cs[1].GoneSince.Equal(e.clock.Now()) {
			t.Fatalf("b's claim after its proof was gone once = %+v", cs[1])
		}
		// Gone again a day later: b's claim lapses, a's stays, still claimed.
		e.clock.Add(26 * time.Hour)
		recheck(RecheckReport{Checked: 2, Proven: 1, Gone: 1, Lapsed: 1})
		if got, _ := st.EntryByID(ctx, en.ID); !got.Claimed {
			t.Fatal("unclaimed while a's claim is live")
		}
		cs, err := st.Claims(ctx, en.ID)
		if err != nil || len(cs) != 2 || !cs[0].Live() || cs[1].Live() || !strings.Contains(cs[1].LapseReason, "without this token") {
			t.Fatalf("claims = %+v, %v", cs, err)
		}
		// a's file briefly missing (a 404 on one check), then back: the claim stays.
		e.wellKnown.del("body")
		e.clock.Add(26 * time.Hour)
		recheck(RecheckReport{Checked: 1, Gone: 1})
		e.wellKnown.set("body", sa.Token)
		e.clock.Add(26 * time.Hour)
		recheck(RecheckReport{Checked: 1, Proven: 1})
		if cs, _ := st.Claims(ctx, en.ID); !cs[0].Live() || !cs[0].GoneSince.IsZero() {
			t.Fatalf("a's claim after its file came back = %+v", cs[0])
		}
		// The origin fails for a while: the claim stays, tried every few hours; after
		// MaxUnanswered from the first failure it lapses.
		e.wellKnown.set("down", "1")
		e.clock.Add(26 * time.Hour)
		first := e.clock.Now()
		recheck(RecheckReport{Checked: 1, Unanswered: 1})
		for e.clock.Now().Sub(first) < DefaultMaxUnanswered-4*time.Hour {
			e.clock.Add(4 * time.Hour)
			recheck(RecheckReport{Checked: 1, Unanswered: 1})
		}
		if got, _ := st.EntryByID(ctx, en.ID); !got.Claimed {
			t.Fatal("unclaimed during an outage shorter than MaxUnanswered")
		}
		e.clock.Add(5 * time.Hour)
		recheck(RecheckReport{Checked: 1, Unanswered: 1, Lapsed: 1})
		if got, _ := st.EntryByID(ctx, en.ID); got.Claimed {
			t.Fatal("claimed with every claim lapsed")
		}
		// Claimed again with a new token.
		e.wellKnown.del("down")
		e.claimBy(t, a, en, MethodWellKnown, func(s Started) { e.wellKnown.set("body", s.Token) })

		// A claim by the withdrawn github-permission method (made before it was
		// withdrawn) lapses at its next check.
		repo := e.entry(t, "repo", store.KindGitHub, "https://github.com/acme/tool")
		_, hash := newToken()
		if _, err := st.AddClaimToken(ctx, store.ClaimToken{TokenHash: hash, AccountID: a, EntryID: repo.ID, Method: MethodGitHubPermission,
			Target: repo.Locator, CreatedAt: e.clock.Now(), ExpiresAt: e.clock.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.ProveClaim(ctx, store.ClaimProof{TokenHash: hash, AccountID: a, Proof: "the admin role", At: e.clock.Now()}); err != nil {
			t.Fatal(err)
		}
		if yes, _ := e.svc.IsMaintainer(ctx, a, repo.ID); yes {
			t.Error("a github-permission claim makes a maintainer")
		}
		e.clock.Add(26 * time.Hour)
		if _, err := e.svc.Recheck(ctx); err != nil {
			t.Fatal(err)
		}
		if got, _ := st.EntryByID(ctx, repo.ID); got.Claimed {
			t.Fatal("claimed by the withdrawn method after a re-check")
		}
	})
}

// TestRecheckDNS: a TXT record removed lapses its claim on the second check a day
// apart; a DNS server that does not answer does not; every query asks the fully
// qualified name.
func TestRecheckDNS(t *testing.T) {
	forEachStore(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		ctx := t.Context()
		a := e.account(t, "a@example.com")
		en := e.entry(t, "dns", store.KindRemote, "https://mcp.example.test/mcp")
		e.claimBy(t, a, en, MethodDNS, func(s Started) { e.txt.set("_probity-claim.mcp.example.test.", s.Token) })
		e.dnsDown.set("down", "1")
		e.clock.Add(26 * time.Hour)
		if r, err := e.svc.Recheck(ctx); err != nil || r.Unanswered != 1 || r.Lapsed != 0 {
			t.Fatalf("Recheck with the DNS server down = %+v, %v", r, err)
		}
		e.dnsDown.del("down")
		e.txt.del("_probity-claim.mcp.example.test.")
		e.clock.Add(4 * time.Hour)
		if r, err := e.svc.Recheck(ctx); err != nil || r.Gone != 1 || r.Lapsed != 0 {
			t.Fatalf("Recheck without the record = %+v, %v", r, err)
		}
		e.clock.Add(26 * time.Hour)
		if r, err := e.svc.Recheck(ctx); err != nil || r.Lapsed != 1 {
			t.Fatalf("Recheck without the record a day later = %+v, %v", r, err)
		}
		if got, _ := st.EntryByID(ctx, en.ID); got.Claimed {
			t.Fatal("claimed without its record")
		}
		qs := e.questions.all()
		if len(qs) == 0 {
			t.Fatal("no DNS query")
		}
		for _, q := range qs {
			if q != "_probity-claim.mcp.example.test." {
				t.Errorf("a DNS query for %q, want only the fully qualified _probity-claim.mcp.example.test.", q)
			}
		}
	})
}

// TestTXTName: the TXT record's name is fully qualified (a final dot), so the resolver
// appends no search domain.
func TestTXTName(t *testing.T) {
	for host, want := range map[string]string{"mcp.example.com": "_probity-claim.mcp.example.com.",
		"MCP.Example.com.": "_probity-claim.mcp.example.com.", "localhost": "_probity-claim.localhost."} {
		if got := txtName(host); got != want {
			t.Errorf("txtName(%q) = %q, want %q", host, got, want)
		}
	}
}

// TestHolds: a token is found among other text, other tokens and longer runs of
// token characters are not it.
func TestHolds(t *testing.T) {
	tok, hash := newToken()
	for _, c := range []struct {
		text string
		want bool
	}{
		{tok, true},
		{"probity-claim: " + tok + "\n", true},
		{"x" + tok + "y", false}, // a longer run is another token
		{tok + "_", false},
		{tok[:len(tok)-1], false},
		{strings.Repeat("probity-claim-", 100) + tok, false}, // past the candidates read
		{"probity-claim-" + strings.Repeat("A", 43) + " " + tok, true},
	} {
		if got := holds(c.text, hash); got != c.want {
			t.Errorf("holds(%.60q…) = %v, want %v", c.text, got, c.want)
		}
	}
}

// TestEgressGuard: without AllowLoopback, a proof on a loopback origin is never
// fetched: the check says Probity may not connect, and the origin sees no request.
func TestEgressGuard(t *testing.T) {
	forEachStore(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		guarded, err := New(Config{Store: st, Now: e.clock.Now, Timeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		a := e.account(t, "a@example.com")
		en := e.entry(t, "origin", store.KindRemote, e.origin.URL+"/mcp")
		s, err := guarded.Start(t.Context(), a, en.Slug, MethodWellKnown, en.Locator)
		if err != nil {
			t.Fatal(err)
		}
		e.wellKnown.set("body", s.Token)
		var np *NotProven
		if _, err := guarded.Check(t.Context(), a, en.Slug, s.Token); !errors.As(err, &np) || np.Unanswered || !strings.Contains(np.Reason, "may not connect") {
			t.Fatalf("Check of a loopback origin = %v", err)
		}
		if got, _ := st.EntryByID(t.Context(), en.ID); got.Claimed {
			t.Fatal("claimed through a loopback origin")
		}
	})
}
