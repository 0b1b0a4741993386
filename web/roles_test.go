package web_test

// TestEveryRouteHasItsRole is the route-by-role authorization table of issue 18, taken
// from the router itself: every route a site with every write path registers is
// classified, and every maintainer and operator route is requested by five people —
// anonymous, signed in, the maintainer of another entry, the maintainer of this entry,
// and an operator who has not claimed the entry — with a valid session and csrf field,
// so that only the role decides. A route added later without a class fails the test
// until it is put in one, so no write path can be added without saying who may use it.
// Every maintainer and operator POST is also sent forged, by the person it admits: from
// another site, and without the csrf field.

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/listing"
	"github.com/probity-dev/probity/reports"
	"github.com/probity-dev/probity/web"
)

// routeClass says who may use a route.
type routeClass int

const (
	classPublic     routeClass = iota // anyone, without signing in (pages, feeds, sign-in, unsubscribe, reports)
	classSignedIn                     // any signed-in account (account, follows, webhooks, claiming)
	classMaintainer                   // a maintainer of the route's entry only
	classOperator                     // an operator only
)

// classOf classifies a route by its method and gin path; ok false: unclassified.
func classOf(method, path string) (routeClass, bool) {
	switch {
	case strings.HasPrefix(path, "/ops"):
		return classOperator, true
	}
	for _, s := range []string{"/edit", "/recheck", "/baseline", "/contest"} {
		if path == "/s/:slug"+s {
			return classMaintainer, true
		}
	}
	for _, p := range []string{"/account", "/followed", "/s/:slug/follow", "/s/:slug/unfollow", "/s/:slug/claim", "/signout"} {
		if path == p || strings.HasPrefix(path, p+"/") || strings.HasPrefix(path, p+".") {
			return classSignedIn, true
		}
	}
	for _, p := range []string{"/signin", "/unsubscribe/", "/s/:slug/report", "/privacy"} {
		if strings.HasPrefix(path, p) {
			return classPublic, true
		}
	}
	if method == http.MethodGet || method == http.MethodHead {
		return classPublic, true // the read-only site (pages, feeds, API, log, badges)
	}
	return 0, false
}

func TestEveryRouteHasItsRole(t *testing.T) {
	w := newWriteSite(t, writeOpts{})
	start := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	now := func() time.Time { return start.Add(time.Hour) }
	_, doc, signer := openStore(t, start)
	roles := newFakeRoles()
	// The fake baseline service asks its own roles again, as the real one does.
	baselineRoles := newBaselineRoles()
	m := w.mutations
	proc, err := history.NewProcessor(history.Config{Store: w.st, Signer: signer, ToolVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	listings, err := listing.New(listing.Config{Store: w.st, History: proc, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	reps, err := reports.New(reports.Config{Store: w.st, Signer: signer, Auditor: &fakeAudit{}, ToolVersion: "0.1.0", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	cfg := web.Config{Store: w.st, Keys: doc, BaseURL: w.base, Now: now,
		Logger: slog.New(slog.DiscardHandler), RateLimit: generous, WriteRateLimit: generous,
		Accounts: w.acc, Follows: w.fol, Webhooks: w.hooks, Claims: newFakeClaims(w.st, m, now),
		Maintainers: roles, Operators: roles, Listings: listings, Reports: reps,
		Baselines:   newFakeBaselines(w.st, baselineRoles, m, now),
		Disputes:    &fakeDisputes{st: w.st, roles: roles, mutations: m, limit: 3, opened: map[int64]int{}},
		Console:     &fakeConsole{st: w.st, roles: roles, mutations: m},
		DisputeDesk: &fakeDesk{mutations: m}}
	h, err := web.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w.h = h
	engine, ok := h.(*gin.Engine)
	if !ok {
		t.Fatalf("web.New returned %T, want the router (*gin.Engine) when no MCP endpoint is served", h)
	}

	// The five people. Each signs in (a valid session, and its csrf field) first.
	type person struct {
		name string
		b    *browser
		csrf string
	}
	var people []person
	for _, p := range []struct{ name, email string }{
		{"anonymous", ""}, {"signed in", "someone@example.org"}, {"maintainer of another entry", "other@example.org"},
		{"maintainer of this entry", "maint@example.org"}, {"operator", "op@example.org"},
	} {
		b := w.browser(t)
		csrf := ""
		if p.email != "" {
			csrf = b.signIn(p.email)
		}
		people = append(people, person{p.name, b, csrf})
	}
	roles.grant(w.accountOf(t, people[2].b), w.evil.ID)
	roles.grant(w.accountOf(t, people[3].b), w.entryID)
	baselineRoles.maintain(w.accountOf(t, people[3].b), w.entryID)
	roles.operator(w.accountOf(t, people[4].b))

	var maintainerRoutes, operatorRoutes int
	for _, r := range engine.Routes() {
		if r.Method == http.MethodHead {
			continue
		}
		class, ok := classOf(r.Method, r.Path)
		if !ok {
			t.Errorf("%s %s has no role: put it in classOf (who may use it?) and give it a test", r.Method, r.Path)
			continue
		}
		if class != classMaintainer && class != classOperator {
			continue
		}
		path := strings.NewReplacer(":slug", w.slug, ":id", "7", "*path", "x").Replace(r.Path)
		if r.Method == http.MethodGet && r.Path == "/s/:slug/contest" {
			path += "?round=1&check=tools_list" // the Checks tab's link names the finding
		}
		if class == classMaintainer {
			maintainerRoutes++
		} else {
			operatorRoutes++
		}
		if r.Method == http.MethodPost {
			// The person the route admits, with a forged request: from another site
			// (a valid csrf field), or without the csrf field. Both are refused, and
			// nothing changes.
			p := people[3]
			if class == classOperator {
				p = people[4]
			}
			before := m.Load()
			form := url.Values{"csrf": {p.csrf}, "reason": {"a reason"}}
			cross := p.b.do(req{method: http.MethodPost, path: path, form: form,
				header: map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}})
			if cross.Code != http.StatusForbidden {
				t.Errorf("POST %s from another site by the %s: %d, want 403", r.Path, p.name, cross.Code)
			}
			if rec := p.b.post(path, url.Values{"reason": {"a reason"}}); rec.Code != http.StatusForbidden {
				t.Errorf("POST %s without the csrf field by the %s: %d, want 403", r.Path, p.name, rec.Code)
			}
			if m.Load() != before {
				t.Errorf("a forged POST %s changed something", r.Path)
			}
		}
		for i, p := range people {
			before := m.Load()
			var rec interface {
				Result() *http.Response
			}
			if r.Method == http.MethodPost {
				rec = p.b.post(path, url.Values{"csrf": {p.csrf}, "reason": {"a reason"}})
			} else {
				rec = p.b.get(path)
			}
			res := rec.Result()
			allowed := class == classMaintainer && i == 3 || class == classOperator && i == 4
			switch {
			case i == 0:
				if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/signin") {
					t.Errorf("%s %s by the %s: %d Location %q, want 303 to /signin", r.Method, r.Path, p.name, res.StatusCode, loc)
				}
			case allowed:
				if res.StatusCode == http.StatusForbidden || res.StatusCode == http.StatusNotFound && !strings.Contains(r.Path, ":id") ||
					strings.HasPrefix(res.Header.Get("Location"), "/signin") {
					t.Errorf("%s %s by the %s: %d, want the route to admit them", r.Method, r.Path, p.name, res.StatusCode)
				}
			default:
				if res.StatusCode != http.StatusForbidden {
					t.Errorf("%s %s by the %s: %d, want 403", r.Method, r.Path, p.name, res.StatusCode)
				}
			}
			if !allowed && m.Load() != before {
				t.Errorf("%s %s by the %s changed something", r.Method, r.Path, p.name)
			}
			if cc := res.Header.Get("Cache-Control"); i > 0 && !strings.Contains(cc, "no-store") && !strings.Contains(cc, "private") {
				t.Errorf("%s %s by the %s: Cache-Control %q, want a private answer", r.Method, r.Path, p.name, cc)
			}
		}
	}
	// The routes are all there: edit, re-check, baseline (GET, POST), contest
	// (GET, POST), and the console's pages and forms.
	if maintainerRoutes < 7 || operatorRoutes < 10 {
		t.Errorf("%d maintainer and %d operator routes checked; the site with every write path has at least 7 and 10", maintainerRoutes, operatorRoutes)
	}
}
