package web_test

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/probity-dev/probity/claims"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/web"
)

// fakeClaims is web.Claims with package claims' contract: one way per remote entry
// (the well-known file), tokens bound to the account, the entry and the way, used
// once, expiring; a check finds a token only once the test published it. Every change
// counts in mutations.
type fakeClaims struct {
	st        store.Store
	mutations *atomic.Int64
	now       func() time.Time
	mu        sync.Mutex
	tokens    map[string]*fakeClaimToken
	published map[string]bool
	claimed   map[string]map[int64]bool // slug → accounts
	// checkErr, when set, is every Check's answer (the throttle, a removed part).
	checkErr error
}

type fakeClaimToken struct {
	account      int64
	slug, target string
	used         bool
	expires      time.Time
}

func newFakeClaims(st store.Store, m *atomic.Int64, now func() time.Time) *fakeClaims {
	return &fakeClaims{st: st, mutations: m, now: now, tokens: map[string]*fakeClaimToken{},
		published: map[string]bool{}, claimed: map[string]map[int64]bool{}}
}

func (f *fakeClaims) Options(ctx context.Context, account int64, slug string) (web.ClaimOptions, error) {
	e, err := f.st.Entry(ctx, slug)
	if err != nil {
		return web.ClaimOptions{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return web.ClaimOptions{Entry: e, Claimed: len(f.claimed[slug]) > 0, Yours: f.claimed[slug][account],
		Options: []claims.Option{{Method: claims.MethodWellKnown, Target: e.Locator, Label: "Serve a file at " + e.Locator + claims.WellKnownPath + " " + e.Name}}}, nil
}

func (f *fakeClaims) Start(ctx context.Context, account int64, slug, method, target string) (web.ClaimStarted, error) {
	o, err := f.Options(ctx, account, slug)
	if err != nil {
		return web.ClaimStarted{}, err
	}
	if method != claims.MethodWellKnown || target != o.Entry.Locator {
		return web.ClaimStarted{}, claims.ErrMethod
	}
	tok := claims.TokenPrefix + randomToken()[:43]
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokens[tok] = &fakeClaimToken{account: account, slug: slug, target: target, expires: f.now().Add(24 * time.Hour)}
	f.mutations.Add(1)
	return f.started(tok, target), nil
}

func (f *fakeClaims) started(tok, target string) web.ClaimStarted {
	return web.ClaimStarted{Option: claims.Option{Method: claims.MethodWellKnown, Target: target}, Token: tok,
		ExpiresAt: f.tokens[tok].expires, Where: target + claims.WellKnownPath, What: tok, Steps: []string{"Serve it.", "Press Check."}}
}

// live returns the account's live token for the entry; f.mu is held.
func (f *fakeClaims) live(account int64, slug, tok string) (*fakeClaimToken, error) {
	t, ok := f.tokens[tok]
	switch {
	case !ok || t.account != account || t.slug != slug:
		return nil, claims.ErrBadToken
	case t.used:
		return nil, claims.ErrTokenUsed
	case !f.now().Before(t.expires):
		return nil, claims.ErrTokenExpired
	}
	return t, nil
}

func (f *fakeClaims) Pending(ctx context.Context, account int64, slug, tok string) (web.ClaimStarted, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, err := f.live(account, slug, tok)
	if err != nil {
		return web.ClaimStarted{}, err
	}
	return f.started(tok, t.target), nil
}

func (f *fakeClaims) Check(ctx context.Context, account int64, slug, tok string) (web.ClaimResult, error) {
	e, err := f.st.Entry(ctx, slug)
	if err != nil {
		return web.ClaimResult{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	t, err := f.live(account, slug, tok)
	if err != nil {
		return web.ClaimResult{}, err
	}
	if f.checkErr != nil {
		return web.ClaimResult{}, f.checkErr
	}
	if !f.published[tok] {
		return web.ClaimResult{}, &claims.NotProven{Reason: t.target + claims.WellKnownPath + " answered HTTP 404 <b>not found</b>"}
	}
	t.used = true
	if f.claimed[slug] == nil {
		f.claimed[slug] = map[int64]bool{}
	}
	f.claimed[slug][account] = true
	f.mutations.Add(1)
	e.Claimed = true
	return web.ClaimResult{Entry: e}, nil
}

func (f *fakeClaims) publish(tok string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.published[tok] = true
}

// newClaimSite is newWriteSite's site with the claim pages.
func newClaimSite(t *testing.T, write web.RateLimit) (*writeSite, *fakeClaims) {
	t.Helper()
	w := newWriteSite(t, writeOpts{})
	start := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	now := func() time.Time { return start.Add(time.Hour) }
	fc := newFakeClaims(w.st, w.mutations, now)
	if write.Burst == 0 {
		write = generous
	}
	_, doc, _ := openStore(t, start) // the key document; the site reads w's store
	h, err := web.New(web.Config{Store: w.st, Keys: doc, BaseURL: w.base, Now: now,
		Logger: slog.New(slog.DiscardHandler), RateLimit: generous, WriteRateLimit: write,
		Accounts: w.acc, Follows: w.fol, Webhooks: w.hooks, Claims: fc})
	if err != nil {
		t.Fatal(err)
	}
	w.h = h
	return w, fc
}

var tokenField = regexp.MustCompile(`name="token" value="(probity-claim-[A-Za-z0-9_-]{43})"`)

// TestClaimAnonymous: every claim route sends an anonymous browser to sign in, with
// the claim page to come back to, and changes nothing.
func TestClaimAnonymous(t *testing.T) {
	w, _ := newClaimSite(t, web.RateLimit{})
	b := w.browser(t)
	want := "/signin?return=%2Fs%2F" + w.slug + "%2Fclaim"
	for _, r := range []req{
		{method: "GET", path: "/s/" + w.slug + "/claim"},
		{method: "POST", path: "/s/" + w.slug + "/claim", form: url.Values{"csrf": {"x"}, "method": {"well-known"}, "target": {"https://search.example/mcp"}}},
		{method: "POST", path: "/s/" + w.slug + "/claim/check", form: url.Values{"csrf": {"x"}, "token": {claims.TokenPrefix + strings.Repeat("A", 43)}}},
	} {
		rec := b.do(r)
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != want {
			t.Errorf("%s %s: %d to %q, want 303 to %q", r.method, r.path, rec.Code, rec.Header().Get("Location"), want)
		}
	}
	if w.mutations.Load() != 0 {
		t.Errorf("%d changes made by anonymous requests", w.mutations.Load())
	}
	// The entry page links to the claim page, for everyone.
	if rec := b.get("/s/" + w.slug); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `href="/s/`+w.slug+`/claim">Claim this entry</a>`) {
		t.Errorf("entry page: %d, no claim link", rec.Code)
	}
}

// TestClaimSignedIn walks a signed-in person through a claim: the ways, a token and
// its steps, a check before the proof is there (the reason, escaped, and the token
// still offered), a check after (claimed), the token used once; another account cannot
// use it; the forms need their csrf field and the site's origin.
func TestClaimSignedIn(t *testing.T) {
	w, fc := newClaimSite(t, web.RateLimit{})
	b := w.browser(t)
	csrf := b.signIn("ada@example.com")
	base := "/s/" + w.slug + "/claim"

	rec := b.get(base)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "Get a token") || rec.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("GET claim: %d %q\n%s", rec.Code, rec.Header().Get("Cache-Control"), rec.Body)
	}
	start := url.Values{"csrf": {csrf}, "method": {claims.MethodWellKnown}, "target": {"https://search.example/mcp"}}

	// The defences first: no csrf, a wrong one, another origin; nothing changes.
	before := w.mutations.Load()
	for name, r := range map[string]req{
		"no csrf":      {method: "POST", path: base, form: url.Values{"method": start["method"], "target": start["target"]}},
		"wrong csrf":   {method: "POST", path: base, form: url.Values{"csrf": {"x" + csrf}, "method": start["method"], "target": start["target"]}},
		"cross-origin": {method: "POST", path: base, form: start, header: map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.test"}},
	} {
		if rec := b.do(r); rec.Code != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, rec.Code)
		}
	}
	if w.mutations.Load() != before {
		t.Fatal("a refused claim form changed something")
	}
	// Bad choices.
	for _, f := range []url.Values{
		{"csrf": {csrf}, "method": {"telepathy"}, "target": start["target"]},
		{"csrf": {csrf}, "method": start["method"], "target": {"https://elsewhere.example/mcp"}},
		{"csrf": {csrf}},
		{"csrf": {csrf}, "method": start["method"], "target": {strings.Repeat("x", 3000)}},
	} {
		if rec := b.post(base, f); rec.Code != http.StatusBadRequest {
			t.Errorf("POST claim %v: %d, want 400", f, rec.Code)
		}
	}
	if rec := b.post("/s/no-such-entry/claim", start); rec.Code != http.StatusNotFound {
		t.Errorf("POST claim of no entry: %d, want 404", rec.Code)
	}

	rec = b.post(base, start)
	m := tokenField.FindStringSubmatch(rec.Body.String())
	if rec.Code != http.StatusOK || m == nil || !strings.Contains(rec.Body.String(), "https://search.example/mcp"+claims.WellKnownPath) {
		t.Fatalf("POST claim: %d\n%s", rec.Code, rec.Body)
	}
	tok := m[1]
	check := url.Values{"csrf": {csrf}, "token": {tok}}
	rec = b.post(base+"/check", check)
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "Not claimed yet") ||
		!strings.Contains(rec.Body.String(), "&lt;b&gt;not found&lt;/b&gt;") || !strings.Contains(rec.Body.String(), tok) {
		t.Fatalf("check before publishing: %d\n%s", rec.Code, rec.Body)
	}
	// Another account cannot check ada's token.
	other := w.browser(t)
	ocsrf := other.signIn("bob@example.com")
	fc.publish(tok)
	if rec := other.post(base+"/check", url.Values{"csrf": {ocsrf}, "token": {tok}}); rec.Code != http.StatusBadRequest || strings.Contains(rec.Body.String(), "Claimed") {
		t.Errorf("check of another account's token: %d", rec.Code)
	}
	rec = b.post(base+"/check", check)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "You are a maintainer of Search now") {
		t.Fatalf("check: %d\n%s", rec.Code, rec.Body)
	}
	if rec := b.post(base+"/check", check); rec.Code != http.StatusGone || !strings.Contains(rec.Body.String(), "used already") {
		t.Errorf("second check: %d\n%s", rec.Code, rec.Body)
	}
	for _, bad := range []string{"", "nonsense", strings.Repeat("A", 5000)} {
		if rec := b.post(base+"/check", url.Values{"csrf": {csrf}, "token": {bad}}); rec.Code != http.StatusBadRequest && rec.Code != http.StatusRequestEntityTooLarge {
			t.Errorf("check of %.20q: %d", bad, rec.Code)
		}
	}
	// The claim page says it is claimed, to ada as hers, to bob without who.
	if rec := b.get(base); !strings.Contains(rec.Body.String(), "You are a maintainer of this entry") {
		t.Errorf("claim page of the maintainer:\n%s", rec.Body)
	}
	if rec := other.get(base); !strings.Contains(rec.Body.String(), "This entry has a maintainer") || strings.Contains(rec.Body.String(), "ada") {
		t.Errorf("claim page of another account:\n%s", rec.Body)
	}
}

// TestClaimRateLimit: the claim forms are on the write routes' bucket.
func TestClaimRateLimit(t *testing.T) {
	w, _ := newClaimSite(t, web.RateLimit{PerSecond: 0.001, Burst: 4})
	b := w.browser(t)
	csrf := b.signIn("ada@example.com") // two POSTs
	form := url.Values{"csrf": {csrf}, "method": {claims.MethodWellKnown}, "target": {"https://search.example/mcp"}}
	var codes []int
	for range 4 {
		codes = append(codes, b.post("/s/"+w.slug+"/claim", form).Code)
	}
	if codes[0] != http.StatusOK || codes[2] != http.StatusTooManyRequests || codes[3] != http.StatusTooManyRequests {
		t.Errorf("claim statuses: %v", codes)
	}
}

// TestClaimedEntryNamesNoOne: a claimed entry says "claimed" on its page, and nothing
// of its maintainer appears on the page, its JSON or Markdown (seed 000: "Wer das ist,
// zeigen wir nie").
func TestClaimedEntryNamesNoOne(t *testing.T) {
	w, _ := newClaimSite(t, web.RateLimit{})
	ctx := context.Background()
	a, _, err := w.st.GitHubAccount(ctx, 4242, "maintainer-login", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256([]byte("tok"))
	now := time.Now()
	if _, err := w.st.AddClaimToken(ctx, store.ClaimToken{TokenHash: h[:], AccountID: a.ID, EntryID: w.entryID, Method: claims.MethodWellKnown,
		Target: "https://search.example/mcp", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.st.ProveClaim(ctx, store.ClaimProof{TokenHash: h[:], AccountID: a.ID, Proof: "the token at https://search.example/.well-known/probity-claim", At: now}); err != nil {
		t.Fatal(err)
	}
	b := w.browser(t)
	page := b.get("/s/" + w.slug)
	if page.Code != http.StatusOK || !strings.Contains(page.Body.String(), `<span class="state state-claimed">claimed</span>`) {
		t.Fatalf("entry page of a claimed entry: %d\n%s", page.Code, page.Body)
	}
	for _, path := range []string{"/s/" + w.slug, "/s/" + w.slug + ".json", "/s/" + w.slug + ".md", "/s/" + w.slug + "/setup"} {
		body := b.get(path).Body.String()
		for _, secret := range []string{"maintainer-login", "4242", "probity-claim"} {
			if strings.Contains(body, secret) {
				t.Errorf("%s shows %q", path, secret)
			}
		}
	}
}

// TestClaimCheckThrottled: a check the claims' throttle refuses is a 429 with
// Retry-After in whole seconds, and changes nothing; a check of a token whose part was
// removed is a 400 that says to start again.
func TestClaimCheckThrottled(t *testing.T) {
	w, fc := newClaimSite(t, web.RateLimit{})
	b := w.browser(t)
	csrf := b.signIn("ada@example.com")
	base := "/s/" + w.slug + "/claim"
	rec := b.post(base, url.Values{"csrf": {csrf}, "method": {claims.MethodWellKnown}, "target": {"https://search.example/mcp"}})
	m := tokenField.FindStringSubmatch(rec.Body.String())
	if m == nil {
		t.Fatalf("POST claim: %d\n%s", rec.Code, rec.Body)
	}
	fc.publish(m[1])
	fc.mu.Lock()
	fc.checkErr = &claims.TooSoon{RetryAfter: 6500 * time.Millisecond}
	fc.mu.Unlock()
	before := w.mutations.Load()
	rec = b.post(base+"/check", url.Values{"csrf": {csrf}, "token": {m[1]}})
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "7" || !strings.Contains(rec.Body.String(), "Try again in 7 seconds") {
		t.Fatalf("throttled check: %d %q\n%s", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	if w.mutations.Load() != before {
		t.Error("a throttled check changed something")
	}
	fc.mu.Lock()
	fc.checkErr = claims.ErrMethod
	fc.mu.Unlock()
	if rec := b.post(base+"/check", url.Values{"csrf": {csrf}, "token": {m[1]}}); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "Start again") {
		t.Fatalf("check of a removed part: %d\n%s", rec.Code, rec.Body)
	}
}

// TestClaimPrivacy: with claims, the privacy page says what is kept for a claim and a
// token, and for how long, as package claims keeps them; without, it says nothing of
// claims.
func TestClaimPrivacy(t *testing.T) {
	w, _ := newClaimSite(t, web.RateLimit{})
	body := w.browser(t).get("/privacy").Body.String()
	for _, want := range []string{
		"Claims of an entry", "never the token", "The site never shows who claimed an entry",
		"a token one day after it expired or was used",            // claims.TokenKeep
		"gone on two checks one day apart, unreadable for 7 days", // claims.GoneFor, DefaultMaxUnanswered
		"it learns that someone is claiming the entry, never who",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/privacy with claims does not say %q", want)
		}
	}
	plain := newWriteSite(t, writeOpts{})
	if body := plain.browser(t).get("/privacy").Body.String(); strings.Contains(body, "Claims of an entry") {
		t.Error("/privacy without claims speaks of claims")
	}
}

// claimEntry makes the entry claimed the only way there is: an account's claim on its
// locator (the claims trigger sets entries.claimed).
func claimEntry(ctx context.Context, st store.Store, e store.Entry) error {
	now := time.Now().UTC()
	email := "maintainer-" + e.Slug + "@example.com"
	a, _, err := st.EmailAccount(ctx, email, email, now)
	if err != nil {
		return err
	}
	h := sha256.Sum256([]byte(email))
	if _, err := st.AddClaimToken(ctx, store.ClaimToken{TokenHash: h[:], AccountID: a.ID, EntryID: e.ID, Method: claims.MethodDNS,
		Target: e.Locator, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
		return err
	}
	_, err = st.ProveClaim(ctx, store.ClaimProof{TokenHash: h[:], AccountID: a.ID, Proof: "test", At: now})
	return err
}
