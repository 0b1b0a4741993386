package web_test

// Fakes of the write paths' services (web.Accounts, web.Follows, web.Webhooks) that
// keep their contracts: sessions by token, CSRF tokens as the accounts service makes
// them (HMAC-SHA256 keyed by the session token), SafeReturn by the service's rule,
// follows with a limit, signed-looking unsubscribe tokens bound to an account, an
// action and an entry, and webhooks that belong to one account. Every change counts
// in mutations, so a test can tell that a refused request changed nothing.

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/web"
)

// fakeCode is the sign-in code the fake sends to every address.
const fakeCode = "12345678"

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// safeReturn is the accounts service's rule (issue 17's design): a local absolute
// path, not "//" nor "/\", no scheme, no host, no control characters, at most 512
// bytes; anything else is the Followed page.
func safeReturn(s string) string {
	const fallback = "/followed"
	if s == "" || len(s) > 512 || s[0] != '/' || strings.HasPrefix(s, "//") || strings.HasPrefix(s, `/\`) {
		return fallback
	}
	if strings.ContainsFunc(s, unicode.IsControl) {
		return fallback
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Opaque != "" || u.User != nil {
		return fallback
	}
	return s
}

type fakeAccounts struct {
	mutations *atomic.Int64
	mu        sync.Mutex
	nextID    int64
	accounts  map[int64]web.Account
	byEmail   map[string]int64
	sessions  map[string]int64
	codes     map[string]string
	// requested are the addresses codes were asked for, with their client keys.
	requested []string
	tooMany   bool
	siteBusy  bool // RequestCode answers web.ErrSiteBusy
	deleted   []int64
	signedOut []string
	github    bool
	email     bool
	// githubLogin is the login GitHub's fake answers with.
	githubLogin string
}

func newFakeAccounts(m *atomic.Int64) *fakeAccounts {
	return &fakeAccounts{mutations: m, accounts: map[int64]web.Account{}, byEmail: map[string]int64{},
		sessions: map[string]int64{}, codes: map[string]string{}, github: true, email: true, githubLogin: "octo<b>cat</b>"}
}

func (f *fakeAccounts) RequestCode(ctx context.Context, email, client string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tooMany {
		return fmt.Errorf("accounts: %w", web.ErrTooMany)
	}
	if f.siteBusy {
		return fmt.Errorf("accounts: %w", web.ErrSiteBusy)
	}
	if !strings.Contains(email, "@") || strings.Contains(email, " ") {
		return fmt.Errorf("accounts: %w", web.ErrInvalidAddress)
	}
	f.mutations.Add(1)
	f.requested = append(f.requested, email+" "+client)
	f.codes[strings.ToLower(email)] = fakeCode
	return nil
}

func (f *fakeAccounts) newSession(id int64) web.Session {
	t := randomToken()
	f.sessions[t] = id
	return web.Session{Token: t, AccountID: id, ExpiresAt: time.Now().Add(30 * 24 * time.Hour)}
}

func (f *fakeAccounts) VerifyCode(ctx context.Context, email, code, client string) (web.Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := strings.ToLower(email)
	want, ok := f.codes[key]
	if !ok || subtle.ConstantTimeCompare([]byte(want), []byte(code)) != 1 {
		return web.Session{}, web.ErrBadCode
	}
	delete(f.codes, key)
	f.mutations.Add(1)
	id, ok := f.byEmail[key]
	if !ok {
		f.nextID++
		id = f.nextID
		f.byEmail[key] = id
		f.accounts[id] = web.Account{ID: id, Email: email, CreatedAt: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	}
	return f.newSession(id), nil
}

func (f *fakeAccounts) AddEmail(ctx context.Context, id int64, email, code, client string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := strings.ToLower(email)
	want, ok := f.codes[key]
	if !ok || subtle.ConstantTimeCompare([]byte(want), []byte(code)) != 1 {
		return web.ErrBadCode
	}
	delete(f.codes, key)
	if other, ok := f.byEmail[key]; ok && other != id {
		return fmt.Errorf("accounts: %w", web.ErrAddressTaken)
	}
	f.mutations.Add(1)
	a := f.accounts[id]
	delete(f.byEmail, strings.ToLower(a.Email))
	a.Email, a.EmailKey = email, key
	f.accounts[id] = a
	f.byEmail[key] = id
	return nil
}

func (f *fakeAccounts) GitHubEnabled() bool { return f.github }

func (f *fakeAccounts) EmailEnabled() bool { return f.email }

// GitHubStart binds the state and the return address in the cookie, as the service
// does (signed there; the fake only joins them).
func (f *fakeAccounts) GitHubStart(returnTo string) (string, string, error) {
	state := randomToken()
	return "https://github.test/login/oauth/authorize?state=" + state, state + "." + base64.RawURLEncoding.EncodeToString([]byte(returnTo)), nil
}

func (f *fakeAccounts) GitHubFinish(ctx context.Context, code, state, cookie string) (web.Session, string, error) {
	st, ret, ok := strings.Cut(cookie, ".")
	r, err := base64.RawURLEncoding.DecodeString(ret)
	if !ok || err != nil || subtle.ConstantTimeCompare([]byte(st), []byte(state)) != 1 || code != "good" {
		return web.Session{}, "", web.ErrBadCode
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mutations.Add(1)
	f.nextID++
	id := f.nextID
	f.accounts[id] = web.Account{ID: id, GitHubLogin: f.githubLogin, CreatedAt: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	return f.newSession(id), string(r), nil
}

func (f *fakeAccounts) Session(ctx context.Context, token string) (web.Account, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id, ok := f.sessions[token]
	if !ok {
		return web.Account{}, web.ErrNoSession
	}
	return f.accounts[id], nil
}

func (f *fakeAccounts) SignOut(ctx context.Context, token string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mutations.Add(1)
	f.signedOut = append(f.signedOut, token)
	delete(f.sessions, token)
	return nil
}

func (f *fakeAccounts) SignOutEverywhere(ctx context.Context, id int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mutations.Add(1)
	for t, a := range f.sessions {
		if a == id {
			delete(f.sessions, t)
		}
	}
	return nil
}

// CSRFToken is base64url(HMAC-SHA256(session token, "probity csrf v1")).
func (f *fakeAccounts) CSRFToken(token string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("probity csrf v1"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (f *fakeAccounts) CheckCSRF(token, field string) bool {
	return hmac.Equal([]byte(f.CSRFToken(token)), []byte(field))
}

func (f *fakeAccounts) SafeReturn(s string) string { return safeReturn(s) }

func (f *fakeAccounts) DeleteAccount(ctx context.Context, id int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mutations.Add(1)
	f.deleted = append(f.deleted, id)
	delete(f.accounts, id)
	for e, a := range f.byEmail {
		if a == id {
			delete(f.byEmail, e)
		}
	}
	for t, a := range f.sessions {
		if a == id {
			delete(f.sessions, t)
		}
	}
	return nil
}

// accountID is the id of the account of an address (0 when none).
func (f *fakeAccounts) accountID(email string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.byEmail[strings.ToLower(email)]
}

func (f *fakeAccounts) sessionCount(id int64) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, a := range f.sessions {
		if a == id {
			n++
		}
	}
	return n
}

// unsubToken is what a fake unsubscribe token stands for.
type unsubToken struct {
	account int64
	action  string
	entry   int64
}

type fakeFollows struct {
	mutations *atomic.Int64
	st        store.Store
	mu        sync.Mutex
	limit     int
	follows   map[[2]int64]time.Time
	modes     map[int64]string
	tokens    map[string]unsubToken
	gone      []web.GoneEntry
	failures  []web.MailFailure
	summary   string // the summary of the one change every followed entry shows
}

func newFakeFollows(m *atomic.Int64, st store.Store) *fakeFollows {
	return &fakeFollows{mutations: m, st: st, limit: 200, follows: map[[2]int64]time.Time{}, modes: map[int64]string{},
		tokens: map[string]unsubToken{}, summary: "1 tool added"}
}

// entryID resolves a slug as the service does.
func (f *fakeFollows) entryID(ctx context.Context, slug string) (int64, error) {
	e, err := f.st.Entry(ctx, slug)
	return e.ID, err
}

func (f *fakeFollows) Follow(ctx context.Context, account int64, slug string) error {
	entry, err := f.entryID(ctx, slug)
	if err != nil {
		return err
	}
	return f.follow(account, entry)
}

func (f *fakeFollows) follow(account, entry int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.follows[[2]int64{account, entry}]; ok {
		return nil
	}
	n := 0
	for k := range f.follows {
		if k[0] == account {
			n++
		}
	}
	if n >= f.limit {
		return fmt.Errorf("notify: %w", web.ErrFollowLimit)
	}
	f.mutations.Add(1)
	f.follows[[2]int64{account, entry}] = time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC)
	return nil
}

func (f *fakeFollows) Unfollow(ctx context.Context, account int64, slug string) error {
	entry, err := f.entryID(ctx, slug)
	if err != nil {
		return err
	}
	return f.unfollow(account, entry)
}

func (f *fakeFollows) unfollow(account, entry int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mutations.Add(1)
	delete(f.follows, [2]int64{account, entry})
	return nil
}

func (f *fakeFollows) Following(ctx context.Context, account, entry int64) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.follows[[2]int64{account, entry}]
	return ok, nil
}

func (f *fakeFollows) following(account, entry int64) bool {
	ok, _ := f.Following(context.Background(), account, entry)
	return ok
}

func (f *fakeFollows) mode(account int64) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if m, ok := f.modes[account]; ok {
		return m
	}
	return web.MailHourly
}

func (f *fakeFollows) Followed(ctx context.Context, account int64) (web.Followed, error) {
	mode := f.mode(account)
	f.mu.Lock()
	var ids []int64
	since := map[int64]time.Time{}
	for k, t := range f.follows {
		if k[0] == account {
			ids = append(ids, k[1])
			since[k[1]] = t
		}
	}
	out := web.Followed{Mode: mode, Limit: f.limit, HasEmail: true, Gone: f.gone, Failures: f.failures}
	summary := f.summary
	f.mu.Unlock()
	slices.Sort(ids)
	for _, id := range ids {
		e, err := f.st.EntryByID(ctx, id)
		if err != nil {
			return web.Followed{}, err
		}
		out.Entries = append(out.Entries, web.FollowedEntry{Slug: e.Slug, Name: e.Name, Since: since[id],
			Changes: []web.FollowedChange{{Number: 2, RecordedAt: since[id].Add(time.Hour), Summary: summary}}})
	}
	return out, nil
}

func (f *fakeFollows) SetMode(ctx context.Context, account int64, mode string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mutations.Add(1)
	f.modes[account] = mode
	return nil
}

// token issues an unsubscribe token.
func (f *fakeFollows) token(t unsubToken) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := randomToken()
	f.tokens[s] = t
	return s
}

func (f *fakeFollows) lookup(token string) (unsubToken, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.tokens[token]
	if !ok {
		return unsubToken{}, fmt.Errorf("notify: %w", web.ErrBadToken)
	}
	return t, nil
}

func (f *fakeFollows) action(ctx context.Context, t unsubToken, token string) (web.UnsubscribeAction, error) {
	a := web.UnsubscribeAction{Kind: t.action, Token: token}
	if t.entry != 0 {
		e, err := f.st.EntryByID(ctx, t.entry)
		if errors.Is(err, store.ErrNotFound) { // as notify's: the entry was deleted
			return a, fmt.Errorf("notify: %w", web.ErrEntryGone)
		}
		if err != nil {
			return a, err
		}
		a.EntrySlug, a.EntryName = e.Slug, e.Name
	}
	return a, nil
}

func (f *fakeFollows) UnsubscribePage(ctx context.Context, token string) ([]web.UnsubscribeAction, error) {
	t, err := f.lookup(token)
	if err != nil {
		return nil, err
	}
	var acts []web.UnsubscribeAction
	a, err := f.action(ctx, t, token)
	switch {
	case errors.Is(err, web.ErrEntryGone) && t.action == web.ActionUnfollow:
		// As notify's: e-mails can still be turned off.
	case err != nil:
		return nil, err
	default:
		acts = append(acts, a)
	}
	if t.action == web.ActionUnfollow {
		off := unsubToken{account: t.account, action: web.ActionMailOff}
		acts = append(acts, web.UnsubscribeAction{Kind: web.ActionMailOff, Token: f.token(off)})
	}
	return acts, nil
}

func (f *fakeFollows) Unsubscribe(ctx context.Context, token string) (done, undo web.UnsubscribeAction, err error) {
	t, err := f.lookup(token)
	if err != nil {
		return done, undo, err
	}
	inverse := unsubToken{account: t.account, entry: t.entry}
	switch t.action {
	case web.ActionUnfollow:
		err, inverse.action = f.unfollow(t.account, t.entry), web.ActionFollow
	case web.ActionFollow:
		err, inverse.action = f.follow(t.account, t.entry), web.ActionUnfollow
	case web.ActionMailOff:
		inverse.action = web.ActionMailOnHourly
		switch f.mode(t.account) {
		case web.MailDaily:
			inverse.action = web.ActionMailOnDaily
		case web.MailOff: // as notify's: nothing changes, and there is no undo
			done, err = f.action(ctx, t, token)
			done.Unchanged = true
			return done, web.UnsubscribeAction{}, err
		}
		err = f.SetMode(ctx, t.account, web.MailOff)
	case web.ActionMailOnHourly:
		err, inverse.action = f.SetMode(ctx, t.account, web.MailHourly), web.ActionMailOff
	case web.ActionMailOnDaily:
		err, inverse.action = f.SetMode(ctx, t.account, web.MailDaily), web.ActionMailOff
	}
	if err != nil {
		return done, undo, err
	}
	if done, err = f.action(ctx, t, token); err != nil {
		return done, undo, err
	}
	undo, err = f.action(ctx, inverse, f.token(inverse))
	return done, undo, err
}

func (f *fakeFollows) OneClick(ctx context.Context, token string) error {
	t, err := f.lookup(token)
	if err != nil {
		return err
	}
	return f.SetMode(ctx, t.account, web.MailOff)
}

type fakeWebhook struct {
	web.Webhook
	account int64
}

type fakeWebhooks struct {
	mutations *atomic.Int64
	mu        sync.Mutex
	next      int64
	hooks     map[int64]fakeWebhook
	// deliveries are every webhook's log.
	deliveries []web.WebhookDelivery
}

func newFakeWebhooks(m *atomic.Int64) *fakeWebhooks {
	return &fakeWebhooks{mutations: m, hooks: map[int64]fakeWebhook{}}
}

func (f *fakeWebhooks) Webhooks(ctx context.Context, account int64) ([]web.Webhook, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []web.Webhook
	for id := int64(1); id <= f.next; id++ {
		if w, ok := f.hooks[id]; ok && w.account == account {
			out = append(out, w.Webhook)
		}
	}
	return out, nil
}

func (f *fakeWebhooks) AddWebhook(ctx context.Context, account int64, u string) (web.Webhook, error) {
	if !strings.HasPrefix(u, "https://") {
		return web.Webhook{}, &web.Refusal{Reason: "A webhook address must be https."}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mutations.Add(1)
	f.next++
	w := web.Webhook{ID: f.next, URL: u, CreatedAt: time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC)}
	f.hooks[w.ID] = fakeWebhook{Webhook: w, account: account}
	return w, nil
}

func (f *fakeWebhooks) own(account, id int64) (fakeWebhook, error) {
	w, ok := f.hooks[id]
	if !ok || w.account != account {
		return fakeWebhook{}, store.ErrNotFound
	}
	return w, nil
}

func (f *fakeWebhooks) RemoveWebhook(ctx context.Context, account, id int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.own(account, id); err != nil {
		return err
	}
	f.mutations.Add(1)
	delete(f.hooks, id)
	return nil
}

func (f *fakeWebhooks) EnableWebhook(ctx context.Context, account, id int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	w, err := f.own(account, id)
	if err != nil {
		return err
	}
	f.mutations.Add(1)
	w.DisabledAt, w.DisabledReason, w.ConsecutiveFailures = time.Time{}, "", 0
	f.hooks[id] = w
	return nil
}

// disable disables a webhook as ten failed deliveries would.
func (f *fakeWebhooks) disable(id int64, why string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := f.hooks[id]
	w.DisabledAt, w.DisabledReason, w.ConsecutiveFailures = time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC), why, 10
	f.hooks[id] = w
}

func (f *fakeWebhooks) Deliveries(ctx context.Context, account, id int64) (web.Webhook, []web.WebhookDelivery, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w, err := f.own(account, id)
	if err != nil {
		return web.Webhook{}, nil, err
	}
	return w.Webhook, f.deliveries, nil
}

var (
	_ web.Accounts = (*fakeAccounts)(nil)
	_ web.Follows  = (*fakeFollows)(nil)
	_ web.Webhooks = (*fakeWebhooks)(nil)
)
