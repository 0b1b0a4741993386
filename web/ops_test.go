package web_test

// The operator console (ops.go) over the fakes of ops_fakes_test.go: every route's
// authorization for the anonymous, a signed-in person, a maintainer of another entry,
// a maintainer of the entry and an operator; the cross-origin and csrf refusal of
// every POST; private answers; escaping; the forms' checks.

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/web"
)

type opsSite struct {
	*writeSite
	roles   *fakeRoles
	console *fakeConsole
	desk    *fakeDesk
	nextID  atomic.Int64
}

func newOpsSite(t *testing.T, opts ...writeOpts) *opsSite {
	t.Helper()
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
	w := &writeSite{base: "https://probity.test", st: st, acc: newFakeAccounts(m), fol: newFakeFollows(m, st), hooks: newFakeWebhooks(m),
		mutations: m, slug: e.Slug, entryID: e.ID, evil: evil}
	write := generous
	if len(opts) > 0 && opts[0].base != "" {
		w.base = opts[0].base
	}
	if len(opts) > 0 && opts[0].write.Burst != 0 {
		write = opts[0].write
	}
	o := &opsSite{writeSite: w, roles: newFakeRoles()}
	o.nextID.Store(100)
	o.console = &fakeConsole{st: st, roles: o.roles, mutations: m, claims: []store.ClaimReview{
		{Claim: store.Claim{ID: 3, AccountID: 41, EntryID: e.ID, Method: "well-known", Target: "https://search.example/" + hostileName,
			Proof: "found " + hostileName, VerifiedAt: start, LastCheckedAt: start}, EntrySlug: e.Slug, EntryName: "Search"},
		{Claim: store.Claim{ID: 2, AccountID: 42, EntryID: evil.ID, Method: "dns", Target: "evil.example", Proof: "txt",
			VerifiedAt: start, LastCheckedAt: start, LapsedAt: start, LapseReason: "gone " + hostileName}, EntrySlug: evil.Slug, EntryName: hostileName},
	}}
	o.desk = &fakeDesk{mutations: m, open: []web.OpsDispute{{ID: 7, Slug: e.Slug, Number: 1, RoundID: 9, CheckID: "tool_poisoning", Status: "open",
		Statement: "It is fine.\n" + hostileName, Evidence: "<img src=x onerror=alert(1)>", OpenedAt: start}}}
	w.h, err = web.New(web.Config{Store: st, Keys: doc, BaseURL: w.base, Now: func() time.Time { return start.Add(time.Hour) },
		Logger: slog.New(slog.DiscardHandler), RateLimit: generous, WriteRateLimit: write,
		Accounts: w.acc, Follows: w.fol, Webhooks: w.hooks, Maintainers: o.roles, Operators: o.roles, Console: o.console, DisputeDesk: o.desk})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// addDispute opens a new dispute of the entry and returns its id.
func (o *opsSite) addDispute() int64 {
	id := o.nextID.Add(1)
	o.desk.mu.Lock()
	defer o.desk.mu.Unlock()
	o.desk.open = append(o.desk.open, web.OpsDispute{ID: id, Slug: o.slug, Number: int(id), CheckID: "c", Status: "open", Statement: "s", OpenedAt: time.Now()})
	return id
}

// The roles of the authorization matrix.
const (
	roleAnonymous      = "anonymous"
	roleSignedIn       = "signed in"
	roleOtherMaint     = "maintainer of another entry"
	roleThisMaintainer = "maintainer of this entry"
	roleOperator       = "operator"
)

var opsRoles = []string{roleAnonymous, roleSignedIn, roleOtherMaint, roleThisMaintainer, roleOperator}

// as returns a browser in the role and its csrf token ("" for the anonymous).
func (o *opsSite) as(t *testing.T, role string) (*browser, string) {
	t.Helper()
	b := o.browser(t)
	if role == roleAnonymous {
		return b, ""
	}
	csrf := b.signIn(strings.ReplaceAll(role, " ", "-") + "@example.com")
	id := o.accountOf(t, b)
	switch role {
	case roleOtherMaint:
		o.roles.grant(id, o.evil.ID)
	case roleThisMaintainer:
		o.roles.grant(id, o.entryID)
	case roleOperator:
		o.roles.setOperator(id, true)
	}
	return b, csrf
}

type opsRoute struct {
	name string
	make func(o *opsSite, csrf string) req
	ok   int
}

func opsGet(path string) func(*opsSite, string) req {
	return func(*opsSite, string) req { return req{method: http.MethodGet, path: path} }
}

func opsPost(path func(*opsSite) string, kv ...string) func(*opsSite, string) req {
	return func(o *opsSite, csrf string) req {
		f := url.Values{"csrf": {csrf}}
		for i := 0; i+1 < len(kv); i += 2 {
			f.Set(kv[i], kv[i+1])
		}
		return req{method: http.MethodPost, path: path(o), form: f}
	}
}

func fixedPath(p string) func(*opsSite) string { return func(*opsSite) string { return p } }

// opsGets and opsPosts are every route of the console.
func opsGets() []opsRoute {
	return []opsRoute{
		{"overview", opsGet("/ops"), http.StatusOK},
		{"disputes", opsGet("/ops/disputes"), http.StatusOK},
		{"changes form", opsGet("/ops/changes"), http.StatusOK},
		{"changes", opsGet("/ops/changes?entry=search"), http.StatusOK},
		{"delete confirm", opsGet("/ops/entries/search/delete"), http.StatusOK},
		{"claims", opsGet("/ops/claims"), http.StatusOK},
		{"all claims", opsGet("/ops/claims?all=1"), http.StatusOK},
		{"audit", opsGet("/ops/audit"), http.StatusOK},
	}
}

func opsPosts() []opsRoute {
	return []opsRoute{
		{"decide", opsPost(func(o *opsSite) string { return "/ops/disputes/" + strconv.FormatInt(o.addDispute(), 10) + "/decide" },
			"decision", "uphold", "reason", "the check misread the schema"), http.StatusSeeOther},
		{"hide", opsPost(fixedPath("/ops/changes/hide"), "entry", "search", "number", "1", "reason", "a maintenance page"), http.StatusSeeOther},
		{"unhide", opsPost(fixedPath("/ops/changes/unhide"), "entry", "search", "number", "1"), http.StatusSeeOther},
		{"delete", opsPost(fixedPath("/ops/entries/search/delete"), "confirm", "search", "reason", "asked by its owner"), http.StatusOK},
		{"revoke claim", opsPost(fixedPath("/ops/claims/3/revoke"), "reason", "the domain changed hands"), http.StatusSeeOther},
	}
}

// TestOpsAuthorization: every console route, GET and POST, per role: the anonymous
// are sent to sign in and back, everyone but an operator is refused with 403 (a
// maintainer of the very entry too), the operator is served; every answer is
// private, and only the operator's requests change anything.
func TestOpsAuthorization(t *testing.T) {
	o := newOpsSite(t)
	for _, role := range opsRoles {
		t.Run(role, func(t *testing.T) {
			b, csrf := o.as(t, role)
			var opID int64
			if role == roleOperator {
				opID = o.accountOf(t, b)
			}
			for _, rt := range append(opsGets(), opsPosts()...) {
				r := rt.make(o, csrf)
				if role == roleAnonymous && r.form != nil {
					r.form.Set("csrf", "x")
				}
				before := o.mutations.Load()
				rec := b.do(r)
				changed := o.mutations.Load() - before
				switch role {
				case roleAnonymous:
					loc := rec.Header().Get("Location")
					if rec.Code != http.StatusSeeOther || !strings.HasPrefix(loc, "/signin?return=%2Fops") {
						t.Errorf("%s: %d to %q, want 303 to sign in and back to the console", rt.name, rec.Code, loc)
					}
				case roleOperator:
					if rec.Code != rt.ok {
						t.Errorf("%s: %d, want %d\n%s", rt.name, rec.Code, rt.ok, rec.Body)
					}
					if r.method == http.MethodPost && changed == 0 {
						t.Errorf("%s: nothing changed", rt.name)
					}
					if r.method == http.MethodPost && o.console.last().Actor != opID {
						t.Errorf("%s: recorded as account %d, want the operator's %d", rt.name, o.console.last().Actor, opID)
					}
				default:
					if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "Operators only") {
						t.Errorf("%s: %d, want 403 Operators only", rt.name, rec.Code)
					}
				}
				if role != roleOperator && changed != 0 {
					t.Errorf("%s: %d changes by %s", rt.name, changed, role)
				}
				if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
					t.Errorf("%s: Cache-Control %q, want no-store", rt.name, cc)
				}
			}
		})
	}
}

// TestOpsCrossOriginRefused: every POST of the console refuses a cross-origin request
// and a request without the session's csrf field with 403, even from an operator,
// and changes nothing.
func TestOpsCrossOriginRefused(t *testing.T) {
	o := newOpsSite(t)
	b, csrf := o.as(t, roleOperator)
	_, otherCSRF := o.as(t, roleOperator)
	for _, rt := range opsPosts() {
		t.Run(rt.name, func(t *testing.T) {
			for _, v := range crossOriginVariants {
				r := rt.make(o, csrf)
				r.header = v.header
				before := o.mutations.Load()
				rec := b.do(r)
				if rec.Code != http.StatusForbidden || o.mutations.Load() != before {
					t.Errorf("%s: %d, %d changes; want 403 and none", v.name, rec.Code, o.mutations.Load()-before)
				}
				if !strings.Contains(rec.Body.String(), "sent from another site") {
					t.Errorf("%s: the page does not say why", v.name)
				}
			}
			for name, bad := range map[string]string{"missing": "", "another session's": otherCSRF, "garbage": "x"} {
				r := rt.make(o, csrf)
				if bad == "" {
					r.form.Del("csrf")
				} else {
					r.form.Set("csrf", bad)
				}
				before := o.mutations.Load()
				if rec := b.do(r); rec.Code != http.StatusForbidden || o.mutations.Load() != before {
					t.Errorf("%s csrf field: %d, %d changes", name, rec.Code, o.mutations.Load()-before)
				}
			}
			before := o.mutations.Load()
			if rec := b.do(rt.make(o, csrf)); rec.Code != rt.ok || o.mutations.Load() == before {
				t.Errorf("same origin: %d, %d changes; want %d and a change", rec.Code, o.mutations.Load()-before, rt.ok)
			}
		})
	}
}

// TestOpsForms: each form's checks refuse what the action cannot take, and change
// nothing; the role taken meanwhile refuses the next action.
func TestOpsForms(t *testing.T) {
	o := newOpsSite(t)
	b, csrf := o.as(t, roleOperator)
	post := func(path string, kv ...string) (int, string) {
		t.Helper()
		f := url.Values{"csrf": {csrf}}
		for i := 0; i+1 < len(kv); i += 2 {
			f.Set(kv[i], kv[i+1])
		}
		rec := b.post(path, f)
		return rec.Code, rec.Body.String()
	}
	refused := []struct {
		name, path string
		kv         []string
		status     int
	}{
		{"no decision", "/ops/disputes/7/decide", []string{"reason", "r"}, 400},
		{"unknown decision", "/ops/disputes/7/decide", []string{"decision", "delete", "reason", "r"}, 400},
		{"corrected without a version", "/ops/disputes/7/decide", []string{"decision", "corrected", "reason", "r"}, 400},
		{"corrected with a bad version", "/ops/disputes/7/decide", []string{"decision", "corrected", "suite_version", "1.0 <b>", "reason", "r"}, 400},
		{"decision without a reason", "/ops/disputes/7/decide", []string{"decision", "reject"}, 400},
		{"decision with two lines", "/ops/disputes/7/decide", []string{"decision", "reject", "reason", "a\nb"}, 400},
		{"no such dispute", "/ops/disputes/99/decide", []string{"decision", "reject", "reason", "r"}, 404},
		{"malformed dispute id", "/ops/disputes/x/decide", []string{"decision", "reject", "reason", "r"}, 404},
		{"hide without a reason", "/ops/changes/hide", []string{"entry", "search", "number", "1"}, 400},
		{"hide without a number", "/ops/changes/hide", []string{"entry", "search", "reason", "r"}, 400},
		{"hide of no entry", "/ops/changes/hide", []string{"entry", "nosuch", "number", "1", "reason", "r"}, 404},
		{"delete unconfirmed", "/ops/entries/search/delete", []string{"confirm", "evil", "reason", "r"}, 400},
		{"delete without a reason", "/ops/entries/search/delete", []string{"confirm", "search"}, 400},
		{"delete of no entry", "/ops/entries/nosuch/delete", []string{"confirm", "nosuch", "reason", "r"}, 404},
		{"revoke without a reason", "/ops/claims/3/revoke", nil, 400},
		{"revoke a lapsed claim", "/ops/claims/2/revoke", []string{"reason", "r"}, 404},
		{"revoke no claim", "/ops/claims/0/revoke", []string{"reason", "r"}, 404},
	}
	for _, tc := range refused {
		before := o.mutations.Load()
		if code, body := post(tc.path, tc.kv...); code != tc.status || o.mutations.Load() != before {
			t.Errorf("%s: %d, %d changes; want %d and none\n%.400s", tc.name, code, o.mutations.Load()-before, tc.status, body)
		}
	}
	for _, path := range []string{"/ops/audit?before=x", "/ops/claims?before=-1", "/ops/changes?entry=search&before=0"} {
		if rec := b.get(path); rec.Code != http.StatusBadRequest {
			t.Errorf("GET %s: %d, want 400", path, rec.Code)
		}
	}
	if rec := b.get("/ops/changes?entry=No%20Such"); rec.Code != http.StatusNotFound {
		t.Errorf("GET changes of a malformed slug: %d, want 404", rec.Code)
	}

	// A correction names its suite version, to the desk and the audit log.
	if code, body := post("/ops/disputes/7/decide", "decision", "corrected", "suite_version", "2.1.0", "reason", "fixed in the suite"); code != http.StatusSeeOther {
		t.Fatalf("corrected: %d\n%s", code, body)
	}
	if got := o.desk.decided; len(got) != 1 || got[0] != "7 corrected 2.1.0 fixed in the suite" {
		t.Errorf("desk decided %q", got)
	}
	if c := o.console.last(); c.Op != "decided" || c.Slug != o.slug || c.ID != 7 || c.Version != "2.1.0" || c.Extra != "corrected" {
		t.Errorf("audit call %+v", c)
	}
	if rec := b.get("/ops/disputes"); !strings.Contains(rec.Body.String(), "No open dispute") {
		t.Error("the decided dispute is still in the queue")
	}

	// The role taken meanwhile: the next form is refused.
	o.roles.setOperator(o.accountOf(t, b), false)
	before := o.mutations.Load()
	if code, _ := post("/ops/changes/hide", "entry", "search", "number", "1", "reason", "r"); code != http.StatusForbidden || o.mutations.Load() != before {
		t.Errorf("after the role was taken: %d", code)
	}
}

// TestOpsPagesEscape: names, statements, evidence, claim parts, reasons and audit
// details are shown as text, never markup; public pages do not link the console or
// name an operator.
func TestOpsPagesEscape(t *testing.T) {
	o := newOpsSite(t)
	b, csrf := o.as(t, roleOperator)
	if rec := b.post("/ops/changes/hide", url.Values{"csrf": {csrf}, "entry": {"evil"}, "number": {"1"}, "reason": {hostileName}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("hide: %d\n%s", rec.Code, rec.Body)
	}
	for _, path := range []string{"/ops", "/ops/disputes", "/ops/changes?entry=evil", "/ops/entries/evil/delete", "/ops/claims?all=1", "/ops/audit"} {
		rec := b.get(path)
		body := rec.Body.String()
		if rec.Code != http.StatusOK {
			t.Errorf("%s: %d", path, rec.Code)
		}
		if strings.Contains(body, "<script>") || strings.Contains(body, "<img") || strings.Contains(body, "<b>") {
			t.Errorf("%s: unescaped markup:\n%s", path, body)
		}
	}
	if body := b.get("/ops/disputes").Body.String(); !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") || !strings.Contains(body, "&lt;img src=x") {
		t.Error("the dispute's statement and evidence are not shown as text")
	}
	if body := b.get("/ops/audit").Body.String(); !strings.Contains(body, "&lt;script&gt;") {
		t.Error("the audit log does not show the reason as text")
	}
	anon := o.browser(t)
	for _, path := range []string{"/", "/s/search", "/s/evil", "/changes"} {
		body := anon.get(path).Body.String()
		if strings.Contains(body, "/ops") || strings.Contains(body, "operator@example.com") {
			t.Errorf("%s links the console or names an operator", path)
		}
	}
}

// TestOpsWriteRateLimit: the console's POSTs spend the write routes' bucket; over it,
// 429 and nothing changes.
func TestOpsWriteRateLimit(t *testing.T) {
	o := newOpsSite(t, writeOpts{write: web.RateLimit{PerSecond: 0.001, Burst: 4}})
	b, csrf := o.as(t, roleOperator) // the sign-in forms spend some of it
	hide := func() int {
		return b.post("/ops/changes/hide", url.Values{"csrf": {csrf}, "entry": {"search"}, "number": {"1"}, "reason": {"r"}}).Code
	}
	if code := hide(); code != http.StatusSeeOther {
		t.Fatalf("first hide: %d", code)
	}
	for hide() != http.StatusTooManyRequests {
		if o.mutations.Load() > 10 {
			t.Fatal("the console's POSTs are not rate-limited")
		}
	}
	before := o.mutations.Load()
	if code := hide(); code != http.StatusTooManyRequests || o.mutations.Load() != before {
		t.Errorf("over the limit: %d, %d changes", code, o.mutations.Load()-before)
	}
}
