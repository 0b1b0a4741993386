package web_test

// The write paths at the handler level, over the fakes of write_fakes_test.go and a
// real SQLite store with two entries: cross-origin refusal, csrf fields, sign-in
// redirects and return addresses, cookies, sessions, account deletion, body bounds,
// the unsubscribe pages and the one-click route, escaping, the write bucket.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/probity-dev/probity/accounts"
	"github.com/probity-dev/probity/notify"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/web"
)

// hostileName is an entry name (server text) and a login (GitHub's text) that would
// be markup if a page did not escape it.
const hostileName = `Evil <script>alert(1)</script> "quoted"`

// writeSite is a site with write paths over the fakes.
type writeSite struct {
	h         http.Handler
	base      string
	st        store.Store
	acc       *fakeAccounts
	fol       *fakeFollows
	hooks     *fakeWebhooks
	mutations *atomic.Int64
	slug      string // an entry
	entryID   int64
	evil      store.Entry // an entry named hostileName
}

type writeOpts struct {
	base  string
	write web.RateLimit
}

func newWriteSite(t *testing.T, o writeOpts) *writeSite {
	t.Helper()
	if o.base == "" {
		o.base = "https://probity.test"
	}
	start := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	st, doc, _ := openStore(t, start)
	ctx := context.Background()
	e, _, err := st.AddEntry(ctx, store.NewEntry{SlugBase: "search", Kind: store.KindRemote, Locator: "https://search.example/mcp", Name: "Search", Source: "import"})
	if err != nil {
		t.Fatal(err)
	}
	evil, _, err := st.AddEntry(ctx, store.NewEntry{SlugBase: "evil", Kind: store.KindRemote, Locator: "https://evil.example/mcp", Name: hostileName, Source: "import"})
	if err != nil {
		t.Fatal(err)
	}
	m := new(atomic.Int64)
	w := &writeSite{base: o.base, st: st, acc: newFakeAccounts(m), fol: newFakeFollows(m, st), hooks: newFakeWebhooks(m),
		mutations: m, slug: e.Slug, entryID: e.ID, evil: evil}
	rl := o.write
	if rl.Burst == 0 {
		rl = generous
	}
	w.h, err = web.New(web.Config{Store: st, Keys: doc, BaseURL: o.base, Now: func() time.Time { return start.Add(time.Hour) },
		Logger: slog.New(slog.DiscardHandler), RateLimit: generous, WriteRateLimit: rl,
		Accounts: w.acc, Follows: w.fol, Webhooks: w.hooks})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// browser is a client with a cookie jar that sends what a same-origin form of the
// site sends unless told otherwise.
type browser struct {
	t       *testing.T
	w       *writeSite
	cookies map[string]*http.Cookie
	// last are the cookies the last response set, by name.
	last map[string]*http.Cookie
}

func (w *writeSite) browser(t *testing.T) *browser {
	return &browser{t: t, w: w, cookies: map[string]*http.Cookie{}}
}

// req is one request: headers beyond the defaults (an empty value removes one).
type req struct {
	method, path string
	form         url.Values
	body         io.Reader // instead of form
	ctype        string
	header       map[string]string
}

func (b *browser) do(r req) *httptest.ResponseRecorder {
	b.t.Helper()
	body := r.body
	if body == nil && r.form != nil {
		body = strings.NewReader(r.form.Encode())
	}
	q := httptest.NewRequest(r.method, r.path, body)
	q.Host = strings.TrimPrefix(strings.TrimPrefix(b.w.base, "https://"), "http://")
	if r.method == http.MethodPost {
		q.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		q.Header.Set("Sec-Fetch-Site", "same-origin")
		q.Header.Set("Origin", b.w.base)
	}
	if r.ctype != "" {
		q.Header.Set("Content-Type", r.ctype)
	}
	for k, v := range r.header {
		if v == "" {
			q.Header.Del(k)
		} else {
			q.Header.Set(k, v)
		}
	}
	for _, c := range b.cookies {
		q.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
	}
	rec := httptest.NewRecorder()
	b.w.h.ServeHTTP(rec, q)
	b.last = map[string]*http.Cookie{}
	for _, c := range rec.Result().Cookies() {
		b.last[c.Name] = c
		if c.MaxAge < 0 {
			delete(b.cookies, c.Name)
		} else {
			b.cookies[c.Name] = c
		}
	}
	return rec
}

func (b *browser) get(path string) *httptest.ResponseRecorder {
	return b.do(req{method: http.MethodGet, path: path})
}

func (b *browser) post(path string, form url.Values) *httptest.ResponseRecorder {
	return b.do(req{method: http.MethodPost, path: path, form: form})
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrfOf is the csrf field of the first form of a page.
func csrfOf(t *testing.T, body string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no csrf field in the page:\n%s", body)
	}
	return m[1]
}

// signIn signs the browser in with an e-mail code and returns the page's csrf token
// for signed-in forms.
func (b *browser) signIn(email string) string {
	b.t.Helper()
	rec := b.get("/signin")
	if rec.Code != http.StatusOK {
		b.t.Fatalf("GET /signin: %d", rec.Code)
	}
	tok := csrfOf(b.t, rec.Body.String())
	rec = b.post("/signin/code", url.Values{"csrf": {tok}, "email": {email}})
	if rec.Code != http.StatusOK {
		b.t.Fatalf("POST /signin/code: %d\n%s", rec.Code, rec.Body)
	}
	rec = b.post("/signin/verify", url.Values{"csrf": {tok}, "email": {email}, "code": {fakeCode}})
	if rec.Code != http.StatusSeeOther {
		b.t.Fatalf("POST /signin/verify: %d\n%s", rec.Code, rec.Body)
	}
	return b.csrf()
}

// csrf reads the csrf field of the account page.
func (b *browser) csrf() string {
	b.t.Helper()
	rec := b.get("/account")
	if rec.Code != http.StatusOK {
		b.t.Fatalf("GET /account: %d", rec.Code)
	}
	return csrfOf(b.t, rec.Body.String())
}

// session is the browser's session token.
func (b *browser) session() string {
	for n, c := range b.cookies {
		if strings.HasSuffix(n, "probity_session") {
			return c.Value
		}
	}
	return ""
}

func (w *writeSite) accountOf(t *testing.T, b *browser) int64 {
	t.Helper()
	a, err := w.acc.Session(context.Background(), b.session())
	if err != nil {
		t.Fatalf("the browser has no session: %v", err)
	}
	return a.ID
}

// writeRoute is a state-changing request of a signed-in browser, and what answers it
// when it is allowed.
type writeRoute struct {
	name string
	// make builds the request for the browser b, whose csrf token is csrf.
	make func(w *writeSite, b *browser, csrf string) req
	ok   int
}

func withCSRF(extra ...string) func(*writeSite, *browser, string) url.Values {
	return func(w *writeSite, b *browser, csrf string) url.Values {
		v := url.Values{"csrf": {csrf}}
		for i := 0; i+1 < len(extra); i += 2 {
			v.Set(extra[i], extra[i+1])
		}
		return v
	}
}

// signedInRoutes are every POST of a signed-in person.
func signedInRoutes() []writeRoute {
	fixed := func(p string) func(*writeSite) string { return func(*writeSite) string { return p } }
	return []writeRoute{
		{"signout", func(w *writeSite, b *browser, c string) req {
			return req{method: "POST", path: "/signout", form: url.Values{"csrf": {c}}}
		}, http.StatusSeeOther},
		{"signout everywhere", func(w *writeSite, b *browser, c string) req {
			return req{method: "POST", path: "/signout/everywhere", form: url.Values{"csrf": {c}}}
		}, http.StatusOK},
		{"mode", formPostFn(fixed("/followed/mode"), withCSRF("mode", "daily")), http.StatusSeeOther},
		{"follow", formPostFn(func(w *writeSite) string { return "/s/" + w.slug + "/follow" }, withCSRF()), http.StatusSeeOther},
		{"unfollow", formPostFn(func(w *writeSite) string { return "/s/" + w.slug + "/unfollow" }, withCSRF()), http.StatusSeeOther},
		{"delete account", formPostFn(fixed("/account/delete"), withCSRF("confirm", "DELETE")), http.StatusOK},
		{"add webhook", formPostFn(fixed("/account/webhooks"), withCSRF("url", "https://hooks.example/x")), http.StatusSeeOther},
		{"remove webhook", func(w *writeSite, b *browser, c string) req {
			wh, err := w.hooks.AddWebhook(context.Background(), w.accountOf(b.t, b), "https://hooks.example/y")
			if err != nil {
				b.t.Fatal(err)
			}
			return req{method: "POST", path: fmt.Sprintf("/account/webhooks/%d/delete", wh.ID), form: url.Values{"csrf": {c}}}
		}, http.StatusSeeOther},
		{"e-mail address", formPostFn(fixed("/account/email"), withCSRF("email", "new@example.com")), http.StatusOK},
		{"e-mail address code", func(w *writeSite, b *browser, c string) req {
			if err := w.acc.RequestCode(context.Background(), "newer@example.com", "test"); err != nil {
				b.t.Fatal(err)
			}
			return req{method: "POST", path: "/account/email/verify", form: url.Values{"csrf": {c}, "email": {"newer@example.com"}, "code": {fakeCode}}}
		}, http.StatusSeeOther},
		{"enable webhook", func(w *writeSite, b *browser, c string) req {
			wh, err := w.hooks.AddWebhook(context.Background(), w.accountOf(b.t, b), "https://hooks.example/z")
			if err != nil {
				b.t.Fatal(err)
			}
			w.hooks.disable(wh.ID, "10 deliveries failed in a row")
			return req{method: "POST", path: fmt.Sprintf("/account/webhooks/%d/enable", wh.ID), form: url.Values{"csrf": {c}}}
		}, http.StatusSeeOther},
	}
}

func formPostFn(path func(*writeSite) string, f func(*writeSite, *browser, string) url.Values) func(*writeSite, *browser, string) req {
	return func(w *writeSite, b *browser, c string) req {
		return req{method: http.MethodPost, path: path(w), form: f(w, b, c)}
	}
}

// crossOriginVariants are the ways a browser marks a request from another origin.
var crossOriginVariants = []struct {
	name   string
	header map[string]string
}{
	{"Sec-Fetch-Site cross-site", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.test"}},
	{"Sec-Fetch-Site same-site", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "https://sub.probity.test"}},
	{"Origin mismatch (no Sec-Fetch-Site)", map[string]string{"Sec-Fetch-Site": "", "Origin": "https://evil.test"}},
	{"Origin null (no Sec-Fetch-Site)", map[string]string{"Sec-Fetch-Site": "", "Origin": "null"}},
}

// TestCrossOriginRefused: every write route refuses a cross-origin POST with 403 and
// changes nothing, though the session cookie and the csrf field are right; the same
// request from the site's own origin goes through. The one-click route alone takes
// cross-origin posts.
func TestCrossOriginRefused(t *testing.T) {
	w := newWriteSite(t, writeOpts{})
	for _, rt := range signedInRoutes() {
		t.Run(rt.name, func(t *testing.T) {
			b := w.browser(t)
			csrf := b.signIn("ada@example.com")
			for _, v := range crossOriginVariants {
				r := rt.make(w, b, csrf)
				r.header = v.header
				before := w.mutations.Load()
				rec := b.do(r)
				if rec.Code != http.StatusForbidden {
					t.Errorf("%s: %d, want 403", v.name, rec.Code)
				}
				if n := w.mutations.Load() - before; n != 0 {
					t.Errorf("%s: %d changes made", v.name, n)
				}
				if !strings.Contains(rec.Body.String(), "sent from another site") {
					t.Errorf("%s: the page does not say why", v.name)
				}
			}
			r := rt.make(w, b, csrf)
			before := w.mutations.Load()
			if rec := b.do(r); rec.Code != rt.ok {
				t.Errorf("same origin: %d, want %d\n%s", rec.Code, rt.ok, rec.Body)
			}
			if w.mutations.Load() == before {
				t.Error("same origin: nothing changed")
			}
		})
	}

	// The sign-in forms.
	b := w.browser(t)
	tok := csrfOf(t, b.get("/signin").Body.String())
	for _, path := range []string{"/signin/code", "/signin/verify"} {
		for _, v := range crossOriginVariants {
			before := w.mutations.Load()
			rec := b.do(req{method: "POST", path: path, form: url.Values{"csrf": {tok}, "email": {"ada@example.com"}, "code": {fakeCode}}, header: v.header})
			if rec.Code != http.StatusForbidden || w.mutations.Load() != before {
				t.Errorf("%s, %s: %d, %d changes", path, v.name, rec.Code, w.mutations.Load()-before)
			}
		}
	}

	// The unsubscribe POST (token-authenticated, but a page's button: same origin only).
	b = w.browser(t)
	b.signIn("ada@example.com")
	acct := w.accountOf(t, b)
	tok = w.fol.token(unsubToken{account: acct, action: web.ActionMailOff})
	for _, v := range crossOriginVariants {
		rec := b.do(req{method: "POST", path: "/unsubscribe/" + tok, form: url.Values{}, header: v.header})
		if rec.Code != http.StatusForbidden || w.fol.mode(acct) != web.MailHourly {
			t.Errorf("unsubscribe, %s: %d, mode %s", v.name, rec.Code, w.fol.mode(acct))
		}
	}

	// One-click: taken from anywhere.
	for _, v := range crossOriginVariants {
		_ = w.fol.SetMode(context.Background(), acct, web.MailHourly)
		rec := b.do(req{method: "POST", path: "/unsubscribe/" + tok + "/one-click", form: url.Values{"List-Unsubscribe": {"One-Click"}}, header: v.header})
		if rec.Code != http.StatusOK || w.fol.mode(acct) != web.MailOff {
			t.Errorf("one-click, %s: %d, mode %s", v.name, rec.Code, w.fol.mode(acct))
		}
	}
}

// TestCSRFField: a signed-in form without its csrf field, or with another session's,
// is refused and changes nothing; so is a sign-in form whose token does not match its
// cookie, or that comes without the cookie.
func TestCSRFField(t *testing.T) {
	w := newWriteSite(t, writeOpts{})
	other := w.browser(t)
	otherCSRF := other.signIn("eve@example.com")
	for _, rt := range signedInRoutes() {
		t.Run(rt.name, func(t *testing.T) {
			b := w.browser(t)
			csrf := b.signIn("ada@example.com")
			for name, bad := range map[string]string{"missing": "", "another session's": otherCSRF, "garbage": "x", "too long": strings.Repeat("a", 4000)} {
				r := rt.make(w, b, csrf)
				if bad == "" {
					r.form.Del("csrf")
				} else {
					r.form.Set("csrf", bad)
				}
				before := w.mutations.Load()
				rec := b.do(r)
				if rec.Code != http.StatusForbidden || w.mutations.Load() != before {
					t.Errorf("%s csrf field: %d, %d changes", name, rec.Code, w.mutations.Load()-before)
				}
			}
		})
	}

	b := w.browser(t)
	tok := csrfOf(t, b.get("/signin").Body.String())
	forms := map[string]url.Values{
		"/signin/code":   {"email": {"ada@example.com"}},
		"/signin/verify": {"email": {"ada@example.com"}, "code": {fakeCode}},
	}
	for path, f := range forms {
		for name, fn := range map[string]func() (url.Values, map[string]*http.Cookie){
			"missing field": func() (url.Values, map[string]*http.Cookie) { return f, b.cookies },
			"wrong field": func() (url.Values, map[string]*http.Cookie) {
				g := url.Values{"csrf": {randomToken()}}
				for k, v := range f {
					g[k] = v
				}
				return g, b.cookies
			},
			"no cookie": func() (url.Values, map[string]*http.Cookie) {
				g := url.Values{"csrf": {tok}}
				for k, v := range f {
					g[k] = v
				}
				return g, map[string]*http.Cookie{}
			},
		} {
			form, jar := fn()
			c := &browser{t: t, w: w, cookies: jar}
			before := w.mutations.Load()
			rec := c.post(path, form)
			if rec.Code != http.StatusForbidden || w.mutations.Load() != before {
				t.Errorf("%s, %s: %d, %d changes", path, name, rec.Code, w.mutations.Load()-before)
			}
		}
	}
}

// TestAnonymousRedirect: a page or form that needs a session sends an anonymous
// browser to sign in, with the address to come back to.
func TestAnonymousRedirect(t *testing.T) {
	w := newWriteSite(t, writeOpts{})
	b := w.browser(t)
	for _, tc := range []struct {
		r    req
		want string
	}{
		{req{method: "GET", path: "/followed"}, "/signin?return=%2Ffollowed"},
		{req{method: "GET", path: "/account"}, "/signin?return=%2Faccount"},
		{req{method: "GET", path: "/account/webhooks"}, "/signin?return=%2Faccount%2Fwebhooks"},
		{req{method: "GET", path: "/account/webhooks/1"}, "/signin?return=%2Faccount%2Fwebhooks%2F1"},
		{req{method: "POST", path: "/s/" + w.slug + "/follow", form: url.Values{"csrf": {"x"}}}, "/signin?return=%2Fs%2F" + w.slug},
		{req{method: "POST", path: "/s/" + w.slug + "/follow", form: url.Values{"csrf": {"x"}, "return": {"/s/" + w.slug + "/history"}}}, "/signin?return=%2Fs%2F" + w.slug + "%2Fhistory"},
		{req{method: "POST", path: "/followed/mode", form: url.Values{"mode": {"off"}}}, "/signin?return=%2Ffollowed"},
		{req{method: "POST", path: "/account/delete", form: url.Values{"confirm": {"DELETE"}}}, "/signin?return=%2Faccount"},
	} {
		rec := b.do(tc.r)
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != tc.want {
			t.Errorf("%s %s: %d to %q, want 303 to %q", tc.r.method, tc.r.path, rec.Code, rec.Header().Get("Location"), tc.want)
		}
	}
	if w.mutations.Load() != 0 {
		t.Errorf("%d changes made by anonymous requests", w.mutations.Load())
	}
	rec := b.get("/followed.json")
	if rec.Code != http.StatusUnauthorized || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Errorf("/followed.json anonymous: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
}

// sameSite reports whether a Location stays on the site, as a browser resolves it.
func sameSite(base, loc string) bool {
	b, _ := url.Parse(base + "/signin")
	u, err := url.Parse(loc)
	if err != nil {
		return false
	}
	r := b.ResolveReference(u)
	return r.Scheme == b.Scheme && r.Host == b.Host && !strings.HasPrefix(loc, "//") && !strings.ContainsAny(loc, "\\\r\n\t")
}

// openRedirects are return addresses that would leave the site if followed.
var openRedirects = []string{
	"//evil.test", "//evil.test/followed", `/\evil.test`, `\\evil.test`, "https://evil.test/", "http:evil.test",
	"javascript:alert(1)", "data:text/html,x", "///evil.test", "/\t/evil.test", " //evil.test", "\n//evil.test",
	"/%0d%0aSet-Cookie:x=y", "/followed\r\nLocation: https://evil.test", "evil.test", "//%65vil.test",
	"/" + strings.Repeat("a", 600), "https:/\\evil.test", "/.//evil.test", "",
}

// TestOpenRedirect: whatever return address a sign-in (code or GitHub), a Follow form
// or the sign-in link carries, the browser is never sent off the site.
func TestOpenRedirect(t *testing.T) {
	w := newWriteSite(t, writeOpts{})
	for _, ret := range openRedirects {
		// E-mail code: the return address travels in the forms.
		b := w.browser(t)
		page := b.get("/signin?return=" + url.QueryEscape(ret)).Body.String()
		tok := csrfOf(t, page)
		b.post("/signin/code", url.Values{"csrf": {tok}, "email": {"ada@example.com"}, "return": {ret}})
		rec := b.post("/signin/verify", url.Values{"csrf": {tok}, "email": {"ada@example.com"}, "code": {fakeCode}, "return": {ret}})
		if loc := rec.Header().Get("Location"); rec.Code != http.StatusSeeOther || !sameSite(w.base, loc) {
			t.Errorf("code sign-in, return %q: %d to %q", ret, rec.Code, loc)
		}
		// The signed-in Follow form.
		csrf := b.csrf()
		rec = b.post("/s/"+w.slug+"/follow", url.Values{"csrf": {csrf}, "return": {ret}})
		if loc := rec.Header().Get("Location"); rec.Code != http.StatusSeeOther || !sameSite(w.base, loc) {
			t.Errorf("follow, return %q: %d to %q", ret, rec.Code, loc)
		}
		// GitHub: the return address goes through the state cookie.
		g := w.browser(t)
		rec = g.get("/signin/github?return=" + url.QueryEscape(ret))
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("/signin/github: %d", rec.Code)
		}
		state := mustQuery(t, rec.Header().Get("Location"), "state")
		rec = g.get("/signin/github/callback?code=good&state=" + url.QueryEscape(state))
		if loc := rec.Header().Get("Location"); rec.Code != http.StatusSeeOther || !sameSite(w.base, loc) {
			t.Errorf("GitHub sign-in, return %q: %d to %q", ret, rec.Code, loc)
		}
	}
	// A good return address is kept.
	b := w.browser(t)
	tok := csrfOf(t, b.get("/signin?return=%2Fs%2Fsearch%2Fhistory").Body.String())
	b.post("/signin/code", url.Values{"csrf": {tok}, "email": {"ada@example.com"}, "return": {"/s/search/history"}})
	rec := b.post("/signin/verify", url.Values{"csrf": {tok}, "email": {"ada@example.com"}, "code": {fakeCode}, "return": {"/s/search/history"}})
	if loc := rec.Header().Get("Location"); loc != "/s/search/history" {
		t.Errorf("return /s/search/history: to %q", loc)
	}
}

func mustQuery(t *testing.T, u, key string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return p.Query().Get(key)
}

// TestCookieAttributes: the session cookie is HttpOnly, SameSite=Lax, Path=/, no
// Domain, Secure with the __Host- prefix on an https site, and plain on http over
// loopback; the sign-in and GitHub cookies alike. An http site elsewhere is refused.
func TestCookieAttributes(t *testing.T) {
	for _, tc := range []struct {
		base   string
		secure bool
	}{
		{"https://probity.test", true},
		{"http://127.0.0.1:8080", false},
		{"http://localhost:8080", false},
	} {
		t.Run(tc.base, func(t *testing.T) {
			w := newWriteSite(t, writeOpts{base: tc.base})
			prefix := ""
			if tc.secure {
				prefix = "__Host-"
			}
			b := w.browser(t)
			b.get("/signin")
			checkCookie(t, b.last[prefix+"probity_signin"], tc.secure, 3600)
			tok := csrfOf(t, b.get("/signin").Body.String())
			b.post("/signin/code", url.Values{"csrf": {tok}, "email": {"ada@example.com"}})
			b.post("/signin/verify", url.Values{"csrf": {tok}, "email": {"ada@example.com"}, "code": {fakeCode}})
			checkCookie(t, b.last[prefix+"probity_session"], tc.secure, 29*24*3600)
			if c := b.last[prefix+"probity_signin"]; c == nil || c.MaxAge >= 0 {
				t.Errorf("the sign-in cookie is not deleted at sign-in: %v", c)
			}
			g := w.browser(t)
			g.get("/signin/github")
			checkCookie(t, g.last[prefix+"probity_github"], tc.secure, 600)
		})
	}
	_, doc, _ := openStore(t, time.Now())
	st := newWriteSite(t, writeOpts{}).st
	for _, base := range []string{"http://probity.example", "http://10.0.0.1:8080"} {
		m := new(atomic.Int64)
		_, err := web.New(web.Config{Store: st, Keys: doc, BaseURL: base, Accounts: newFakeAccounts(m)})
		if err == nil {
			t.Errorf("BaseURL %s with accounts: accepted", base)
		}
	}
}

func checkCookie(t *testing.T, c *http.Cookie, secure bool, minAge int) {
	t.Helper()
	if c == nil {
		t.Fatal("cookie not set")
	}
	if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Domain != "" || c.Secure != secure {
		t.Errorf("cookie %s: HttpOnly %v SameSite %v Path %q Domain %q Secure %v", c.Name, c.HttpOnly, c.SameSite, c.Path, c.Domain, c.Secure)
	}
	if c.MaxAge < minAge {
		t.Errorf("cookie %s: Max-Age %d, want at least %d", c.Name, c.MaxAge, minAge)
	}
	if strings.HasPrefix(c.Name, "__Host-") != secure {
		t.Errorf("cookie %s: __Host- prefix %v with Secure %v", c.Name, !secure, secure)
	}
}

// TestSessionOnlyFromCookie: a session id in the query string or the form is not a
// session; and a sign-in never keeps a session id the browser had before (fixation).
func TestSessionOnlyFromCookie(t *testing.T) {
	w := newWriteSite(t, writeOpts{})
	b := w.browser(t)
	csrf := b.signIn("ada@example.com")
	token := b.session()
	acct := w.accountOf(t, b)

	anon := w.browser(t)
	for _, name := range []string{"probity_session", "__Host-probity_session", "session", "token"} {
		rec := anon.get("/account?" + name + "=" + url.QueryEscape(token))
		if rec.Code != http.StatusSeeOther {
			t.Errorf("session in the query as %s: %d", name, rec.Code)
		}
		rec = anon.post("/s/"+w.slug+"/follow", url.Values{name: {token}, "csrf": {csrf}})
		if rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), "/signin") || w.fol.following(acct, w.entryID) {
			t.Errorf("session in the form as %s: %d to %s", name, rec.Code, rec.Header().Get("Location"))
		}
	}

	// Fixation: a session id planted before sign-in (known to the attacker) is
	// replaced, and the old session is ended.
	planted := w.browser(t)
	planted.signIn("eve@example.com")
	old := planted.session()
	tok := csrfOf(t, planted.get("/signin").Body.String())
	planted.post("/signin/code", url.Values{"csrf": {tok}, "email": {"ada@example.com"}})
	planted.post("/signin/verify", url.Values{"csrf": {tok}, "email": {"ada@example.com"}, "code": {fakeCode}})
	if planted.session() == old || planted.session() == "" {
		t.Error("the session id did not change at sign-in")
	}
	if _, err := w.acc.Session(context.Background(), old); err == nil {
		t.Error("the session from before sign-in still works")
	}

	// A cookie with an unknown session is no session, and is deleted.
	x := w.browser(t)
	x.cookies["__Host-probity_session"] = &http.Cookie{Name: "__Host-probity_session", Value: randomToken()}
	rec := x.get("/account")
	if rec.Code != http.StatusSeeOther {
		t.Errorf("unknown session: %d", rec.Code)
	}
	if c := x.last["__Host-probity_session"]; c == nil || c.MaxAge >= 0 {
		t.Error("the cookie of an unknown session is not deleted")
	}
}

// TestSignInCode: the code request answers alike for any address, shows an invalid
// one, says "try again later" over the limits, and a wrong code signs nobody in.
func TestSignInCode(t *testing.T) {
	w := newWriteSite(t, writeOpts{})
	b := w.browser(t)
	tok := csrfOf(t, b.get("/signin").Body.String())
	var bodies []string
	for _, email := range []string{"known@example.com", "unknown@example.com"} {
		rec := b.post("/signin/code", url.Values{"csrf": {tok}, "email": {email}})
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d", email, rec.Code)
		}
		bodies = append(bodies, strings.ReplaceAll(rec.Body.String(), email, "ADDRESS"))
	}
	if bodies[0] != bodies[1] {
		t.Error("the answers to two addresses differ beyond the address")
	}
	rec := b.post("/signin/code", url.Values{"csrf": {tok}, "email": {"not an address <b>"}})
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "not an e-mail address") || strings.Contains(rec.Body.String(), "<b>") {
		t.Errorf("invalid address: %d\n%s", rec.Code, rec.Body)
	}
	w.acc.tooMany = true
	rec = b.post("/signin/code", url.Values{"csrf": {tok}, "email": {"known@example.com"}})
	if rec.Code != http.StatusTooManyRequests || !strings.Contains(rec.Body.String(), "try again") {
		t.Errorf("over the limit: %d", rec.Code)
	}
	w.acc.tooMany = false
	for _, code := range []string{"00000000", "1234567", "abcdefgh", ""} {
		rec = b.post("/signin/verify", url.Values{"csrf": {tok}, "email": {"known@example.com"}, "code": {code}})
		if rec.Code != http.StatusBadRequest || b.session() != "" {
			t.Errorf("code %q: %d, session %q", code, rec.Code, b.session())
		}
	}
	// A code with spaces, as people copy it, works.
	rec = b.post("/signin/verify", url.Values{"csrf": {tok}, "email": {"known@example.com"}, "code": {"1234 5678"}})
	if rec.Code != http.StatusSeeOther || b.session() == "" {
		t.Errorf("code with a space: %d", rec.Code)
	}
	// GitHub: a state that does not match the cookie signs nobody in.
	g := w.browser(t)
	g.get("/signin/github")
	rec = g.get("/signin/github/callback?code=good&state=forged")
	if rec.Code != http.StatusBadRequest || g.session() != "" {
		t.Errorf("GitHub with a forged state: %d", rec.Code)
	}
	rec = w.browser(t).get("/signin/github/callback?code=good&state=x")
	if rec.Code != http.StatusBadRequest {
		t.Errorf("GitHub without the state cookie: %d", rec.Code)
	}
	rec = g.get("/signin/github/callback?error=access_denied&error_description=%3Cscript%3E")
	if rec.Code != http.StatusBadRequest || strings.Contains(rec.Body.String(), "<script>") {
		t.Errorf("GitHub refused: %d", rec.Code)
	}
}

// TestDeleteAccountNeedsConfirmation: deletion happens only with DELETE typed.
func TestDeleteAccountNeedsConfirmation(t *testing.T) {
	w := newWriteSite(t, writeOpts{})
	b := w.browser(t)
	csrf := b.signIn("ada@example.com")
	acct := w.accountOf(t, b)
	for _, typed := range []string{"", "delete", "DELET", "yes", "DELETE ME", "Delete"} {
		rec := b.post("/account/delete", url.Values{"csrf": {csrf}, "confirm": {typed}})
		if rec.Code != http.StatusBadRequest || len(w.acc.deleted) != 0 {
			t.Errorf("confirm %q: %d, deleted %v", typed, rec.Code, w.acc.deleted)
		}
		if !strings.Contains(rec.Body.String(), "Nothing was deleted") {
			t.Errorf("confirm %q: the page does not say nothing was deleted", typed)
		}
	}
	rec := b.post("/account/delete", url.Values{"csrf": {csrf}, "confirm": {"DELETE"}})
	if rec.Code != http.StatusOK || len(w.acc.deleted) != 1 || w.acc.deleted[0] != acct {
		t.Fatalf("confirm DELETE: %d, deleted %v", rec.Code, w.acc.deleted)
	}
	if c := b.last["__Host-probity_session"]; c == nil || c.MaxAge >= 0 {
		t.Error("the session cookie is not deleted with the account")
	}
	if rec := b.get("/account"); rec.Code != http.StatusSeeOther {
		t.Errorf("after deletion /account: %d", rec.Code)
	}
}

// unknownLength hides a body's length, so only the reader's bound can stop it.
type unknownLength struct{ io.Reader }

// TestBodyLimits: a POST body over 8 KiB is refused (with or without
// Content-Length), one under it is read; other methods keep the 1 KiB bound.
func TestBodyLimits(t *testing.T) {
	w := newWriteSite(t, writeOpts{})
	b := w.browser(t)
	csrf := b.signIn("ada@example.com")
	acct := w.accountOf(t, b)
	form := func(pad int) string {
		return url.Values{"csrf": {csrf}, "mode": {"daily"}, "pad": {strings.Repeat("a", pad)}}.Encode()
	}
	for _, known := range []bool{true, false} {
		var body io.Reader = strings.NewReader(form(9 << 10))
		if !known {
			body = unknownLength{body}
		}
		rec := b.do(req{method: "POST", path: "/followed/mode", body: body})
		if rec.Code != http.StatusRequestEntityTooLarge || w.fol.mode(acct) != web.MailHourly {
			t.Errorf("9 KiB form (length known %v): %d, mode %s", known, rec.Code, w.fol.mode(acct))
		}
	}
	rec := b.do(req{method: "POST", path: "/followed/mode", body: strings.NewReader(form(7 << 10))})
	if rec.Code != http.StatusSeeOther || w.fol.mode(acct) != web.MailDaily {
		t.Errorf("7 KiB form: %d, mode %s", rec.Code, w.fol.mode(acct))
	}
	rec = b.do(req{method: "GET", path: "/followed", body: strings.NewReader(strings.Repeat("a", 2<<10))})
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("GET with a 2 KiB body: %d", rec.Code)
	}
	// One-click, multipart, too large.
	var mp bytes.Buffer
	mw := multipart.NewWriter(&mp)
	_ = mw.WriteField("List-Unsubscribe", "One-Click")
	_ = mw.WriteField("pad", strings.Repeat("a", 9<<10))
	_ = mw.Close()
	tok := w.fol.token(unsubToken{account: acct, action: web.ActionMailOff})
	rec = b.do(req{method: "POST", path: "/unsubscribe/" + tok + "/one-click", body: unknownLength{&mp}, ctype: mw.FormDataContentType()})
	if rec.Code != http.StatusRequestEntityTooLarge || w.fol.mode(acct) != web.MailDaily {
		t.Errorf("9 KiB one-click: %d, mode %s", rec.Code, w.fol.mode(acct))
	}
}

// TestUnsubscribe: the link's GET (what a mail filter does) changes nothing and shows
// buttons; the POST does it and offers Undo, which undoes it; a forged token is
// refused. One-click turns e-mails off and keeps the follows, for url-encoded and
// multipart posts, and needs RFC 8058's body.
func TestUnsubscribe(t *testing.T) {
	w := newWriteSite(t, writeOpts{})
	b := w.browser(t)
	b.signIn("ada@example.com")
	acct := w.accountOf(t, b)
	ctx := context.Background()
	if err := w.fol.Follow(ctx, acct, w.evil.Slug); err != nil {
		t.Fatal(err)
	}
	tok := w.fol.token(unsubToken{account: acct, action: web.ActionUnfollow, entry: w.evil.ID})
	anon := w.browser(t) // the unsubscribe link works without signing in
	before := w.mutations.Load()
	for _, p := range []string{"/unsubscribe/" + tok, "/unsubscribe/" + tok + "/one-click"} {
		for _, m := range []string{"GET", "HEAD"} {
			rec := anon.do(req{method: m, path: p})
			if rec.Code != http.StatusOK {
				t.Errorf("%s %s: %d", m, p, rec.Code)
			}
			if m == "GET" {
				body := rec.Body.String()
				if !strings.Contains(body, "Turn off change e-mails") || !strings.Contains(body, "Unfollow Evil &lt;script&gt;") {
					t.Errorf("GET %s: buttons missing\n%s", p, body)
				}
				if strings.Contains(body, "<script>") {
					t.Errorf("GET %s: the entry name is not escaped", p)
				}
			}
		}
	}
	if w.mutations.Load() != before || !w.fol.following(acct, w.evil.ID) || w.fol.mode(acct) != web.MailHourly {
		t.Fatal("opening the unsubscribe link changed something")
	}
	rec := anon.post("/unsubscribe/"+tok, url.Values{})
	if rec.Code != http.StatusOK || w.fol.following(acct, w.evil.ID) {
		t.Fatalf("POST unsubscribe: %d, still following", rec.Code)
	}
	body := rec.Body.String()
	if !strings.Contains(body, "You no longer follow") || !strings.Contains(body, "Undo") {
		t.Errorf("POST unsubscribe: no Undo\n%s", body)
	}
	m := regexp.MustCompile(`action="/unsubscribe/([A-Za-z0-9_-]+)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatal("no undo form")
	}
	if rec := anon.post("/unsubscribe/"+m[1], url.Values{}); rec.Code != http.StatusOK || !w.fol.following(acct, w.evil.ID) {
		t.Errorf("Undo: %d, following %v", rec.Code, w.fol.following(acct, w.evil.ID))
	}
	for _, bad := range []string{randomToken(), "a%3Cb", strings.Repeat("a", 300)} {
		for _, m := range []string{"GET", "POST"} {
			rec := anon.do(req{method: m, path: "/unsubscribe/" + bad, form: url.Values{}})
			if rec.Code != http.StatusBadRequest {
				t.Errorf("%s forged token %.20s: %d", m, bad, rec.Code)
			}
		}
	}

	// One-click.
	off := w.fol.token(unsubToken{account: acct, action: web.ActionMailOff})
	rec = anon.do(req{method: "POST", path: "/unsubscribe/" + off + "/one-click", form: url.Values{}, header: map[string]string{"Sec-Fetch-Site": "cross-site"}})
	if rec.Code != http.StatusBadRequest || w.fol.mode(acct) != web.MailHourly {
		t.Errorf("one-click without its body: %d, mode %s", rec.Code, w.fol.mode(acct))
	}
	var mp bytes.Buffer
	mw := multipart.NewWriter(&mp)
	_ = mw.WriteField("List-Unsubscribe", "One-Click")
	_ = mw.Close()
	rec = anon.do(req{method: "POST", path: "/unsubscribe/" + tok + "/one-click", body: &mp, ctype: mw.FormDataContentType(),
		header: map[string]string{"Sec-Fetch-Site": "", "Origin": ""}})
	if rec.Code != http.StatusOK || w.fol.mode(acct) != web.MailOff || !w.fol.following(acct, w.evil.ID) {
		t.Errorf("one-click (multipart, a token about one entry): %d, mode %s, following %v", rec.Code, w.fol.mode(acct), w.fol.following(acct, w.evil.ID))
	}
	rec = anon.do(req{method: "POST", path: "/unsubscribe/" + randomToken() + "/one-click", form: url.Values{"List-Unsubscribe": {"One-Click"}}})
	if rec.Code != http.StatusBadRequest {
		t.Errorf("one-click with a forged token: %d", rec.Code)
	}
	// A mail app that posts the one click to the page's address (List-Unsubscribe
	// naming /unsubscribe/TOKEN) gets the same: e-mails off, follows kept.
	_ = w.fol.SetMode(ctx, acct, web.MailDaily)
	rec = anon.do(req{method: "POST", path: "/unsubscribe/" + tok, form: url.Values{"List-Unsubscribe": {"One-Click"}}, header: map[string]string{"Sec-Fetch-Site": "", "Origin": ""}})
	if rec.Code != http.StatusOK || w.fol.mode(acct) != web.MailOff || !w.fol.following(acct, w.evil.ID) {
		t.Errorf("one-click to the page's address: %d, mode %s, following %v", rec.Code, w.fol.mode(acct), w.fol.following(acct, w.evil.ID))
	}
}

// TestUnsubscribeMailAlreadyOff: turning e-mails off when they are off already says
// so and offers no Undo (which would turn on e-mails the person had turned off).
func TestUnsubscribeMailAlreadyOff(t *testing.T) {
	w := newWriteSite(t, writeOpts{})
	b := w.browser(t)
	b.signIn("ada@example.com")
	acct := w.accountOf(t, b)
	if err := w.fol.SetMode(context.Background(), acct, web.MailOff); err != nil {
		t.Fatal(err)
	}
	off := w.fol.token(unsubToken{account: acct, action: web.ActionMailOff})
	rec := w.browser(t).post("/unsubscribe/"+off, url.Values{})
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(body, "Change e-mails were already off.") {
		t.Fatalf("mail off when off: %d\n%s", rec.Code, body)
	}
	if strings.Contains(body, "Undo") || strings.Contains(body, `action="/unsubscribe/`) {
		t.Errorf("mail off when off offers an Undo\n%s", body)
	}
	if w.fol.mode(acct) != web.MailOff {
		t.Errorf("mode %s, want off", w.fol.mode(acct))
	}
}

// TestUnsubscribeEntryGoneAndLimit: a link whose entry was deleted since the e-mail
// gets the "entry gone" page (410), not a 500; an unfollow link of such an entry
// still offers turning e-mails off; "follow again" past the limit gets the Follow
// button's limit page.
func TestUnsubscribeEntryGoneAndLimit(t *testing.T) {
	w := newWriteSite(t, writeOpts{})
	b := w.browser(t)
	b.signIn("ada@example.com")
	acct := w.accountOf(t, b)
	anon := w.browser(t)
	const gone = 1 << 40 // no such entry: deleted since the e-mail
	follow := w.fol.token(unsubToken{account: acct, action: web.ActionFollow, entry: gone})
	unfollow := w.fol.token(unsubToken{account: acct, action: web.ActionUnfollow, entry: gone})
	for _, c := range []struct{ method, what, tok string }{{"GET", "follow", follow}, {"POST", "follow", follow}, {"POST", "unfollow", unfollow}} {
		rec := anon.do(req{method: c.method, path: "/unsubscribe/" + c.tok, form: url.Values{}})
		if rec.Code != http.StatusGone || !strings.Contains(rec.Body.String(), "has been deleted from the directory") {
			t.Errorf("%s %s of a deleted entry: %d\n%s", c.method, c.what, rec.Code, rec.Body.String())
		}
	}
	rec := anon.get("/unsubscribe/" + unfollow)
	if body := rec.Body.String(); rec.Code != http.StatusOK || !strings.Contains(body, "Turn off change e-mails") || strings.Contains(body, "Unfollow") {
		t.Errorf("GET unfollow of a deleted entry: %d, want the mail-off button alone\n%s", rec.Code, body)
	}

	w.fol.limit = 0
	again := w.fol.token(unsubToken{account: acct, action: web.ActionFollow, entry: w.evil.ID})
	rec = anon.post("/unsubscribe/"+again, url.Values{})
	if body := rec.Body.String(); rec.Code != http.StatusConflict || !strings.Contains(body, "You follow as many entries as an account may") ||
		!strings.Contains(body, "Unfollow one on your Followed page") {
		t.Errorf("follow again at the limit: %d\n%s", rec.Code, body)
	}
	if w.fol.following(acct, w.evil.ID) {
		t.Error("follow again at the limit followed")
	}
}

// TestFollowButton: every page of an entry has the Follow button for a signed-in
// person (private, with the csrf field), or the link to sign in to follow; Follow and
// Unfollow work, and the limit is told.
func TestFollowButton(t *testing.T) {
	w := newWriteSite(t, writeOpts{})
	pages := []string{"/s/" + w.slug, "/s/" + w.slug + "/history", "/s/" + w.slug + "/checks", "/s/" + w.slug + "/faq"}
	anon := w.browser(t)
	for _, p := range pages {
		rec := anon.get(p)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d", p, rec.Code)
		}
		if want := `<a href="/signin?return=` + url.QueryEscape(p) + `">Sign in to follow</a>`; !strings.Contains(rec.Body.String(), strings.ReplaceAll(want, "%2F", "%2f")) {
			t.Errorf("%s: no sign-in link %s", p, want)
		}
		if len(rec.Result().Cookies()) != 0 {
			t.Errorf("%s: an anonymous page sets a cookie", p)
		}
	}
	b := w.browser(t)
	csrf := b.signIn("ada@example.com")
	acct := w.accountOf(t, b)
	for _, p := range pages {
		rec := b.get(p)
		body := rec.Body.String()
		if !strings.Contains(body, `action="/s/`+w.slug+`/follow"`) || !strings.Contains(body, `name="csrf" value="`+csrf+`"`) {
			t.Errorf("%s: no Follow form with the csrf field", p)
		}
		if rec.Header().Get("Cache-Control") != "no-store" || !strings.Contains(rec.Header().Get("Vary"), "Cookie") {
			t.Errorf("%s: Cache-Control %q, Vary %q", p, rec.Header().Get("Cache-Control"), rec.Header().Get("Vary"))
		}
	}
	rec := b.post("/s/"+w.slug+"/follow", url.Values{"csrf": {csrf}, "return": {"/s/" + w.slug + "/history"}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/s/"+w.slug+"/history" || !w.fol.following(acct, w.entryID) {
		t.Fatalf("follow: %d to %s", rec.Code, rec.Header().Get("Location"))
	}
	if body := b.get("/s/" + w.slug).Body.String(); !strings.Contains(body, `action="/s/`+w.slug+`/unfollow"`) || !strings.Contains(body, "You follow this entry") {
		t.Error("a followed entry has no Unfollow button")
	}
	followed := b.get("/followed").Body.String()
	if !strings.Contains(followed, `href="/s/`+w.slug+`"`) || !strings.Contains(followed, `action="/s/`+w.slug+`/unfollow"`) {
		t.Errorf("the Followed page does not list the entry with its Unfollow button\n%s", followed)
	}
	rec = b.post("/s/"+w.slug+"/unfollow", url.Values{"csrf": {csrf}, "return": {"/followed"}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/followed" || w.fol.following(acct, w.entryID) {
		t.Errorf("unfollow: %d to %s", rec.Code, rec.Header().Get("Location"))
	}
	if rec := b.post("/s/no-such-entry/follow", url.Values{"csrf": {csrf}}); rec.Code != http.StatusNotFound {
		t.Errorf("follow a missing entry: %d", rec.Code)
	}
	w.fol.limit = 0
	rec = b.post("/s/"+w.slug+"/follow", url.Values{"csrf": {csrf}})
	if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "Unfollow one on your Followed page") {
		t.Errorf("over the limit: %d\n%s", rec.Code, rec.Body)
	}
}

// TestFollowedPage: the page, its JSON and its e-mail setting.
func TestFollowedPage(t *testing.T) {
	w := newWriteSite(t, writeOpts{})
	b := w.browser(t)
	csrf := b.signIn("ada@example.com")
	acct := w.accountOf(t, b)
	_ = w.fol.Follow(context.Background(), acct, w.slug)
	body := b.get("/followed").Body.String()
	for _, want := range []string{`value="hourly" checked`, "at most one e-mail an hour (default)", "A daily summary", "No e-mails", "1 of at most 200",
		`href="/s/` + w.slug + `/history#ch-2"`} {
		if !strings.Contains(body, want) {
			t.Errorf("Followed page lacks %q", want)
		}
	}
	for _, m := range []string{"daily", "off", "hourly"} {
		if rec := b.post("/followed/mode", url.Values{"csrf": {csrf}, "mode": {m}}); rec.Code != http.StatusSeeOther || w.fol.mode(acct) != m {
			t.Errorf("mode %s: %d, %s", m, rec.Code, w.fol.mode(acct))
		}
	}
	for _, m := range []string{"", "weekly", "OFF"} {
		if rec := b.post("/followed/mode", url.Values{"csrf": {csrf}, "mode": {m}}); rec.Code != http.StatusBadRequest {
			t.Errorf("mode %q: %d", m, rec.Code)
		}
	}
	rec := b.get("/followed.json")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"slug": "`+w.slug+`"`) || rec.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("/followed.json: %d %s\n%s", rec.Code, rec.Header().Get("Cache-Control"), rec.Body)
	}
}

// TestWritePagesEscape: text from people (an address, a webhook address), from GitHub
// (a login), from servers (an entry's name, a change summary) and from mail servers
// (a delivery failure) is escaped on every page that shows it.
func TestWritePagesEscape(t *testing.T) {
	w := newWriteSite(t, writeOpts{})
	w.fol.summary = "<img src=x onerror=alert(1)>"
	w.fol.gone = []web.GoneEntry{{Slug: "gone", Name: "<script>gone()</script>", DeletedAt: time.Now()}}
	w.fol.failures = []web.MailFailure{{PlannedAt: time.Now(), Error: "550 <script>smtp()</script>", Attempts: 1}}
	w.acc.githubLogin = "<script>login()</script>"
	g := w.browser(t)
	state := mustQuery(t, g.get("/signin/github").Header().Get("Location"), "state")
	g.get("/signin/github/callback?code=good&state=" + url.QueryEscape(state))
	csrf := g.csrf()
	acct := w.accountOf(t, g)
	_ = w.fol.Follow(context.Background(), acct, w.evil.Slug)
	rec := g.post("/account/webhooks", url.Values{"csrf": {csrf}, "url": {`http://x/"><script>hook()</script>`}})
	if rec.Code != http.StatusBadRequest {
		t.Errorf("refused webhook: %d", rec.Code)
	}
	pages := map[string]string{"webhooks (refused)": rec.Body.String()}
	g.post("/account/webhooks", url.Values{"csrf": {csrf}, "url": {`https://x/"><script>hook()</script>`}})
	w.hooks.deliveries = []web.WebhookDelivery{{CreatedAt: time.Now(), MessageID: "<script>id()</script>", EntrySlug: "<script>", State: web.DeliveryFailed,
		LastAttemptAt: time.Now(), LastError: "<script>err()</script>"}}
	w.hooks.disable(1, "<script>why()</script>")
	for _, p := range []string{"/followed", "/followed.json", "/account", "/account/webhooks", "/account/webhooks/1", "/s/" + w.evil.Slug, "/s/" + w.evil.Slug + "/history"} {
		rec := g.get(p)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d", p, rec.Code)
		}
		pages[p] = rec.Body.String()
	}
	b := w.browser(t)
	tok := csrfOf(t, b.get("/signin").Body.String())
	pages["signin (invalid)"] = b.post("/signin/code", url.Values{"csrf": {tok}, "email": {`"><script>mail()</script>`}}).Body.String()
	pages["signin (sent)"] = b.post("/signin/code", url.Values{"csrf": {tok}, "email": {`a"><script>mail()</script>@example.com`}}).Body.String()
	for name, body := range pages {
		for _, bad := range []string{"<script>", "<img src=x"} {
			if strings.Contains(body, bad) {
				t.Errorf("%s: holds %q unescaped", name, bad)
			}
		}
	}
	for name, want := range map[string]string{"/followed": "&lt;script&gt;gone()", "/account": "@&lt;script&gt;login()", "/account/webhooks": "&lt;script&gt;hook()",
		"/account/webhooks/1": "&lt;script&gt;err()", "/followed.json": `\u003cscript\u003egone()`} {
		if !strings.Contains(pages[name], want) {
			t.Errorf("%s: lacks %q", name, want)
		}
	}
}

// TestWebhookPages: adding (and a refusal shown), the list, another account's webhook
// is not found, removing.
func TestWebhookPages(t *testing.T) {
	w := newWriteSite(t, writeOpts{})
	b := w.browser(t)
	csrf := b.signIn("ada@example.com")
	rec := b.post("/account/webhooks", url.Values{"csrf": {csrf}, "url": {"https://hooks.example/probity"}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/account/webhooks" {
		t.Fatalf("add: %d", rec.Code)
	}
	if body := b.get("/account/webhooks").Body.String(); !strings.Contains(body, "https://hooks.example/probity") {
		t.Error("the webhook is not listed")
	}
	rec = b.post("/account/webhooks", url.Values{"csrf": {csrf}, "url": {"http://hooks.example/plain"}})
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "must be https") {
		t.Errorf("refused: %d", rec.Code)
	}
	if rec := b.post("/account/webhooks", url.Values{"csrf": {csrf}, "url": {"https://x/" + strings.Repeat("a", 2100)}}); rec.Code != http.StatusBadRequest {
		t.Errorf("too long: %d", rec.Code)
	}
	eve := w.browser(t)
	eveCSRF := eve.signIn("eve@example.com")
	if rec := eve.get("/account/webhooks/1"); rec.Code != http.StatusNotFound {
		t.Errorf("another account's delivery log: %d", rec.Code)
	}
	if rec := eve.post("/account/webhooks/1/delete", url.Values{"csrf": {eveCSRF}}); rec.Code != http.StatusNotFound {
		t.Errorf("removing another account's webhook: %d", rec.Code)
	}
	for _, id := range []string{"0", "-1", "x", "99999999999999999999"} {
		if rec := b.get("/account/webhooks/" + id); rec.Code != http.StatusNotFound {
			t.Errorf("webhook %s: %d", id, rec.Code)
		}
	}
	w.hooks.disable(1, "10 deliveries failed in a row: HTTP 500")
	if body := b.get("/account/webhooks").Body.String(); !strings.Contains(body, "10 deliveries failed in a row: HTTP 500") || !strings.Contains(body, `action="/account/webhooks/1/enable"`) {
		t.Error("a disabled webhook does not say why, or has no Enable button")
	}
	if rec := eve.post("/account/webhooks/1/enable", url.Values{"csrf": {eveCSRF}}); rec.Code != http.StatusNotFound {
		t.Errorf("enabling another account's webhook: %d", rec.Code)
	}
	if rec := b.post("/account/webhooks/1/enable", url.Values{"csrf": {csrf}}); rec.Code != http.StatusSeeOther {
		t.Errorf("enable: %d", rec.Code)
	}
	if hs, _ := w.hooks.Webhooks(context.Background(), w.accountOf(t, b)); len(hs) != 1 || !hs[0].DisabledAt.IsZero() {
		t.Errorf("after enabling: %+v", hs)
	}
	if rec := b.post("/account/webhooks/1/delete", url.Values{"csrf": {csrf}}); rec.Code != http.StatusSeeOther {
		t.Errorf("remove: %d", rec.Code)
	}
	if hs, _ := w.hooks.Webhooks(context.Background(), w.accountOf(t, b)); len(hs) != 0 {
		t.Errorf("after removal: %v", hs)
	}
}

// TestSignOut: signing out ends this session; signing out everywhere ends them all.
func TestSignOut(t *testing.T) {
	w := newWriteSite(t, writeOpts{})
	one, two := w.browser(t), w.browser(t)
	csrf := one.signIn("ada@example.com")
	two.signIn("ada@example.com")
	acct := w.accountOf(t, one)
	if n := w.acc.sessionCount(acct); n != 2 {
		t.Fatalf("%d sessions", n)
	}
	rec := one.post("/signout/everywhere", url.Values{"csrf": {csrf}})
	if rec.Code != http.StatusOK || w.acc.sessionCount(acct) != 0 {
		t.Errorf("sign out everywhere: %d, %d sessions left", rec.Code, w.acc.sessionCount(acct))
	}
	if rec := two.get("/account"); rec.Code != http.StatusSeeOther {
		t.Errorf("the other browser is still signed in: %d", rec.Code)
	}
	csrf = one.signIn("ada@example.com")
	rec = one.post("/signout", url.Values{"csrf": {csrf}})
	if rec.Code != http.StatusSeeOther || one.session() != "" || w.acc.sessionCount(acct) != 0 {
		t.Errorf("sign out: %d, cookie %q", rec.Code, one.session())
	}
}

// TestWriteRateLimit: the write routes have their own, stricter bucket; reading is
// not held back by it.
func TestWriteRateLimit(t *testing.T) {
	w := newWriteSite(t, writeOpts{write: web.RateLimit{PerSecond: 0.001, Burst: 5}})
	b := w.browser(t)
	csrf := b.signIn("ada@example.com") // two POSTs
	codes := []int{}
	for range 5 {
		codes = append(codes, b.post("/followed/mode", url.Values{"csrf": {csrf}, "mode": {"daily"}}).Code)
	}
	if codes[2] != http.StatusSeeOther || codes[3] != http.StatusTooManyRequests || codes[4] != http.StatusTooManyRequests {
		t.Errorf("write statuses: %v", codes)
	}
	if rec := b.get("/followed"); rec.Code != http.StatusOK {
		t.Errorf("GET /followed after the write bucket ran dry: %d", rec.Code)
	}
	if rec := b.get("/signin/github"); rec.Code != http.StatusTooManyRequests {
		t.Errorf("GitHub sign-in after the write bucket ran dry: %d", rec.Code)
	}
	// One-click is on the site's bucket: a mail provider posts them for many people.
	tok := w.fol.token(unsubToken{account: w.accountOf(t, b), action: web.ActionMailOff})
	if rec := b.post("/unsubscribe/"+tok+"/one-click", url.Values{"List-Unsubscribe": {"One-Click"}}); rec.Code != http.StatusOK {
		t.Errorf("one-click after the write bucket ran dry: %d", rec.Code)
	}
}

// TestPrivacyDurations: the privacy page states how long each thing is kept as the
// code keeps it: change-e-mail records and a told deleted entry notify.DefaultKeep,
// an untold one notify.KeepUntold, sessions, codes and sign-in limits accounts', the
// webhook log store.MaxWebhookLog deliveries.
func TestPrivacyDurations(t *testing.T) {
	w := newWriteSite(t, writeOpts{})
	rec := w.browser(t).get("/privacy")
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("/privacy: %d", rec.Code)
	}
	days := func(d time.Duration) string { return fmt.Sprintf("%d days", d/(24*time.Hour)) }
	for _, want := range []string{
		"its name kept " + days(notify.DefaultKeep) + " after an e-mail told you, or " + days(notify.KeepUntold) + " after the deletion when none did",
		days(notify.DefaultKeep) + " after the e-mail was made",
		days(accounts.SessionLifetime) + " after the session was last used",
		fmt.Sprintf("%d minutes, or until used", accounts.CodeLifetime/time.Minute),
		"one hour after the last one", // accounts.ThrottleWindow
		fmt.Sprintf("the newest %d deliveries", store.MaxWebhookLog),
		"the session cookie (for " + days(accounts.SessionLifetime) + ",",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/privacy does not say %q", want)
		}
	}
	if strings.Contains(body, "until you were told") {
		t.Error("/privacy still says a deleted entry's name is kept until you were told")
	}
}

// TestWriteMethods: the write routes answer other methods with 405 and the methods
// they take; the read-only site keeps its 405s and has no write route.
func TestWriteMethods(t *testing.T) {
	w := newWriteSite(t, writeOpts{})
	b := w.browser(t)
	for _, tc := range []struct{ method, path, allow string }{
		{"GET", "/signout", "POST"},
		{"PUT", "/followed/mode", "POST"},
		{"GET", "/s/search/follow", "POST"},
		{"DELETE", "/account", "GET, HEAD"},
		{"PUT", "/unsubscribe/abc", "GET, HEAD, POST"},
		{"POST", "/", "GET, HEAD"},
		{"POST", "/privacy", "GET, HEAD"},
	} {
		rec := b.do(req{method: tc.method, path: tc.path, form: url.Values{}})
		if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != tc.allow {
			t.Errorf("%s %s: %d, Allow %q, want %q", tc.method, tc.path, rec.Code, rec.Header().Get("Allow"), tc.allow)
		}
	}
	if rec := b.get("/privacy"); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "SMTP provider") {
		t.Errorf("/privacy: %d", rec.Code)
	}

	// Without Accounts: no write route, no cookie, no link to them.
	f := setup(t, generous)
	for _, p := range []string{"/signin", "/privacy", "/followed", "/account", "/unsubscribe/abc"} {
		if rec := f.get(t, "GET", p); rec.Code != http.StatusNotFound {
			t.Errorf("read-only site, GET %s: %d", p, rec.Code)
		}
	}
	for _, p := range []string{"/signin/code", "/s/" + f.slug + "/follow", "/signout"} {
		if rec := f.get(t, "POST", p); rec.Code != http.StatusMethodNotAllowed && rec.Code != http.StatusNotFound {
			t.Errorf("read-only site, POST %s: %d", p, rec.Code)
		}
	}
	rec := f.get(t, "GET", "/s/"+f.slug)
	if body := rec.Body.String(); strings.Contains(body, `/follow"`) || strings.Contains(body, "Sign in to follow") || strings.Contains(body, "/privacy") || strings.Contains(body, "/account") {
		t.Error("read-only site: the entry page links to write paths")
	}
	if rec.Header().Get("Vary") != "" || len(rec.Result().Cookies()) != 0 {
		t.Error("read-only site: Vary or a cookie")
	}
}

// TestAccountEmail: a GitHub account adds an address with a code sent to it; a wrong
// code or another account's address is refused.
func TestAccountEmail(t *testing.T) {
	w := newWriteSite(t, writeOpts{})
	g := w.browser(t)
	state := mustQuery(t, g.get("/signin/github").Header().Get("Location"), "state")
	g.get("/signin/github/callback?code=good&state=" + url.QueryEscape(state))
	csrf := g.csrf()
	acct := w.accountOf(t, g)
	if body := g.get("/account").Body.String(); !strings.Contains(body, "has no e-mail address") {
		t.Error("the account page of a GitHub account does not offer to add an address")
	}
	w.browser(t).signIn("taken@example.com")
	rec := g.post("/account/email", url.Values{"csrf": {csrf}, "email": {"ada@example.com"}})
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `action="/account/email/verify"`) {
		t.Fatalf("ask for a code: %d", rec.Code)
	}
	rec = g.post("/account/email/verify", url.Values{"csrf": {csrf}, "email": {"ada@example.com"}, "code": {"00000000"}})
	if rec.Code != http.StatusBadRequest {
		t.Errorf("wrong code: %d", rec.Code)
	}
	g.post("/account/email", url.Values{"csrf": {csrf}, "email": {"ada@example.com"}})
	rec = g.post("/account/email/verify", url.Values{"csrf": {csrf}, "email": {"ada@example.com"}, "code": {fakeCode}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/account" {
		t.Fatalf("right code: %d", rec.Code)
	}
	if a, _ := w.acc.Session(context.Background(), g.session()); a.Email != "ada@example.com" || a.ID != acct {
		t.Errorf("after adding: %+v", a)
	}
	g.post("/account/email", url.Values{"csrf": {csrf}, "email": {"taken@example.com"}})
	rec = g.post("/account/email/verify", url.Values{"csrf": {csrf}, "email": {"taken@example.com"}, "code": {fakeCode}})
	if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "belongs to another account") {
		t.Errorf("another account's address: %d", rec.Code)
	}
}

// TestSignInMethodsOff: without a mailer the e-mail code forms are neither offered nor
// served; without GitHub its link and routes are gone.
func TestSignInMethodsOff(t *testing.T) {
	w := newWriteSite(t, writeOpts{})
	b := w.browser(t)
	b.signIn("ada@example.com")
	tok := csrfOf(t, b.get("/signin").Body.String())
	w.acc.email, w.acc.github = false, false
	body := b.get("/signin").Body.String()
	if strings.Contains(body, `action="/signin/code"`) || strings.Contains(body, "/signin/github") || !strings.Contains(body, "not available") {
		t.Errorf("the sign-in page offers a method that is off\n%s", body)
	}
	if body := b.get("/account").Body.String(); strings.Contains(body, `action="/account/email"`) {
		t.Error("the account page offers an address without a mailer")
	}
	for _, p := range []string{"/signin/code", "/signin/verify", "/account/email", "/account/email/verify"} {
		if rec := b.post(p, url.Values{"csrf": {tok}, "email": {"ada@example.com"}, "code": {fakeCode}}); rec.Code != http.StatusNotFound {
			t.Errorf("POST %s without a mailer: %d", p, rec.Code)
		}
	}
	for _, p := range []string{"/signin/verify", "/signin/github", "/signin/github/callback?code=good&state=x"} {
		if rec := b.get(p); rec.Code != http.StatusNotFound {
			t.Errorf("GET %s with the method off: %d", p, rec.Code)
		}
	}
}
