package web_test

// The maintainer's listing routes (listing.go) over the roles' fakes and the real
// listing service, history processor and SQLite store: the authorization matrix of
// every route, bounds with clear errors that keep the typed text, the operator's text
// as plain text on the entry page, its JSON, its Markdown, its history and feed, and the
// re-check's interval.

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/listing"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/web"
)

// listingSite is newWriteSite's site with the roles and the maintainer's listing.
type listingSite struct {
	*writeSite
	roles *fakeRoles
	svc   *listing.Service
	now   time.Time
}

func newListingSite(t *testing.T) *listingSite {
	t.Helper()
	return newListingSiteAt(t, "")
}

// newListingSiteAt is newListingSite at the base address base ("": the default).
func newListingSiteAt(t *testing.T, base string) *listingSite {
	t.Helper()
	w := newWriteSite(t, writeOpts{base: base})
	start := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	now := start.Add(time.Hour)
	_, doc, signer := openStore(t, start) // the key document and a signer; the site reads w's store
	proc, err := history.NewProcessor(history.Config{Store: w.st, Signer: signer, ToolVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := listing.New(listing.Config{Store: w.st, History: proc, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	roles := newFakeRoles()
	w.h, err = web.New(web.Config{Store: w.st, Keys: doc, BaseURL: w.base, Now: func() time.Time { return now },
		Logger: slog.New(slog.DiscardHandler), RateLimit: generous, WriteRateLimit: generous,
		Accounts: w.acc, Follows: w.fol, Webhooks: w.hooks, Maintainers: roles, Operators: roles, Listings: svc})
	if err != nil {
		t.Fatal(err)
	}
	return &listingSite{writeSite: w, roles: roles, svc: svc, now: now}
}

// untouched fails the test when the entry's listing was saved, a change recorded or a
// re-check asked for.
func (w *listingSite) untouched(t *testing.T, what string) {
	t.Helper()
	ctx := context.Background()
	l, err := w.st.MaintainerListing(ctx, w.entryID)
	if err != nil || l.Revision != 0 {
		t.Errorf("%s: the listing was saved: %+v, %v", what, l, err)
	}
	cs, err := w.st.Changes(ctx, store.ChangeFilter{EntryID: w.entryID})
	if err != nil || len(cs) != 0 {
		t.Errorf("%s: %d changes recorded, %v", what, len(cs), err)
	}
	ds, err := w.st.DueTimes(ctx, w.entryID)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.Reason == store.ReasonManual {
			t.Errorf("%s: a re-check was asked for", what)
		}
	}
}

func editForm(csrf, description string, links ...string) url.Values {
	v := url.Values{"csrf": {csrf}, "description": {description}, "setup_notes": {""}}
	for i := 0; i+1 < len(links); i += 2 {
		n := strconv.Itoa(i/2 + 1)
		v.Set("link_label_"+n, links[i])
		v.Set("link_url_"+n, links[i+1])
	}
	return v
}

// TestListingRoutesAuthorization: every maintainer route, for each role: the
// anonymous are sent to sign in (back to the edit page), the signed-in without a role,
// a maintainer of another entry and an operator without a claim get 403, and none of
// them changes anything; a maintainer of this entry passes; an unknown entry is 404.
func TestListingRoutesAuthorization(t *testing.T) {
	w := newListingSite(t)
	routes := []struct {
		name   string
		method string
		path   string
		form   func(csrf string) url.Values
		ok     int
	}{
		{"edit page", "GET", "/s/" + w.slug + "/edit", nil, http.StatusOK},
		{"save", "POST", "/s/" + w.slug + "/edit", func(c string) url.Values { return editForm(c, "Our words.") }, http.StatusOK},
		{"recheck", "POST", "/s/" + w.slug + "/recheck", func(c string) url.Values { return url.Values{"csrf": {c}} }, http.StatusAccepted},
	}
	do := func(b *browser, csrf, method, path string, form func(string) url.Values) int {
		if method == "GET" {
			return b.get(path).Code
		}
		return b.post(path, form(csrf)).Code
	}

	anon := w.browser(t)
	for _, r := range routes {
		rec := anon.do(req{method: r.method, path: r.path, form: func() url.Values {
			if r.form == nil {
				return nil
			}
			return r.form("x")
		}()})
		if want := "/signin?return=%2Fs%2F" + w.slug + "%2Fedit"; rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != want {
			t.Errorf("anonymous %s: %d to %q, want 303 to %q", r.name, rec.Code, rec.Header().Get("Location"), want)
		}
	}
	w.untouched(t, "anonymous")

	signedIn := w.browser(t)
	csrfS := signedIn.signIn("someone@example.com")
	other := w.browser(t)
	csrfO := other.signIn("other@example.com")
	w.roles.grant(w.accountOf(t, other), w.evil.ID)
	op := w.browser(t)
	csrfOp := op.signIn("op@example.com")
	w.roles.operator(w.accountOf(t, op))
	for _, who := range []struct {
		name string
		b    *browser
		csrf string
	}{{"signed in", signedIn, csrfS}, {"maintainer of another entry", other, csrfO}, {"operator", op, csrfOp}} {
		for _, r := range routes {
			if code := do(who.b, who.csrf, r.method, r.path, r.form); code != http.StatusForbidden {
				t.Errorf("%s, %s: %d, want 403", who.name, r.name, code)
			}
		}
		w.untouched(t, who.name)
	}
	// The maintainer of the other entry may edit that one.
	if code := do(other, csrfO, "GET", "/s/"+w.evil.Slug+"/edit", nil); code != http.StatusOK {
		t.Errorf("maintainer of the other entry, its own edit page: %d", code)
	}

	m := w.browser(t)
	csrfM := m.signIn("maintainer@example.com")
	w.roles.grant(w.accountOf(t, m), w.entryID)
	// Without the csrf field, or with another session's: refused, nothing changed.
	for _, c := range []string{"", csrfS} {
		for _, r := range routes[1:] {
			if code := do(m, c, r.method, r.path, r.form); code != http.StatusForbidden {
				t.Errorf("maintainer, %s with csrf %q: %d, want 403", r.name, c, code)
			}
		}
	}
	w.untouched(t, "maintainer without the csrf field")
	for _, r := range routes {
		if code := do(m, csrfM, r.method, r.path, r.form); code != r.ok {
			t.Errorf("maintainer, %s: %d, want %d", r.name, code, r.ok)
		}
	}
	for _, r := range routes {
		if code := do(m, csrfM, r.method, "/s/no-such-entry/"+strings.TrimPrefix(r.path, "/s/"+w.slug+"/"), r.form); code != http.StatusNotFound {
			t.Errorf("maintainer, %s of no entry: %d, want 404", r.name, code)
		}
	}
	// The GET answer is private.
	if cc := m.get("/s/" + w.slug + "/edit").Header().Get("Cache-Control"); !strings.Contains(cc, "no-store") && !strings.Contains(cc, "private") {
		t.Errorf("edit page Cache-Control %q", cc)
	}
}

// TestListingEditPlainText: what a maintainer writes is shown as text everywhere: the
// entry page (links https only, rel="nofollow ugc noopener"), its JSON and Markdown,
// the history page and feed as an edit by the server's operator with the text before
// and after, never who made it; a refused form keeps what was typed.
func TestListingEditPlainText(t *testing.T) {
	w := newListingSite(t)
	m := w.browser(t)
	csrf := m.signIn("maintainer@example.com")
	w.roles.grant(w.accountOf(t, m), w.entryID)
	edit := "/s/" + w.slug + "/edit"

	hostile := `<script>alert(1)</script> & <a href="https://evil.test">click</a>`
	// A javascript: link is refused, with the typed text kept (escaped).
	rec := m.post(edit, editForm(csrf, hostile, "Docs", "javascript:alert(1)"))
	body := rec.Body.String()
	if rec.Code != http.StatusBadRequest || !strings.Contains(body, "must start with https://") ||
		!strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") || strings.Contains(body, "<script>alert") {
		t.Fatalf("javascript link: %d\n%s", rec.Code, body)
	}
	// An http link, a link with no label: refused.
	for _, links := range [][]string{{"Docs", "http://docs.example/"}, {"", "https://docs.example/"}} {
		if rec := m.post(edit, editForm(csrf, "x", links...)); rec.Code != http.StatusBadRequest {
			t.Errorf("links %q: %d, want 400", links, rec.Code)
		}
	}
	w.untouched(t, "refused edits")

	anon := w.browser(t)
	// Pages rendered before the edit (whatever a page keeps) say nothing of it.
	if page := anon.get("/s/" + w.slug).Body.String(); strings.Contains(page, "From the server's operator") || !strings.Contains(page, "Edit the listing or re-check now") {
		t.Errorf("the entry page before any edit:\n%s", page)
	}
	anon.get("/?q=search")
	form := editForm(csrf, hostile, `Docs <b>bold</b>`, "https://docs.example/start?a=1&b=2")
	form.Set("setup_notes", "secret-ish <i>setup</i>\n`npx search`")
	if rec := m.post(edit, form); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "Listing saved") {
		t.Fatalf("save: %d\n%s", rec.Code, rec.Body)
	}
	// The form shows the saved values.
	if body := m.get(edit).Body.String(); !strings.Contains(body, "&lt;script&gt;") || !strings.Contains(body, `value="https://docs.example/start?a=1&amp;b=2"`) {
		t.Errorf("the edit page lacks the saved values:\n%s", body)
	}

	page := anon.get("/s/" + w.slug).Body.String()
	for _, want := range []string{
		`<h2>From the server's operator</h2>`,
		`&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;a href=&#34;https://evil.test&#34;&gt;click&lt;/a&gt;`,
		`<a href="https://docs.example/start?a=1&amp;b=2" rel="nofollow ugc noopener">Docs &lt;b&gt;bold&lt;/b&gt;</a>`,
		"secret-ish &lt;i&gt;setup&lt;/i&gt;",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the entry page lacks %q", want)
		}
	}
	for _, bad := range []string{"<script>alert", `<a href="https://evil.test">`, "maintainer@example.com", "<b>bold"} {
		if strings.Contains(page, bad) {
			t.Errorf("the entry page holds %q", bad)
		}
	}

	var j struct {
		Operator *struct {
			Description, SetupNotes string
			Links                   []struct{ Label, URL string }
		} `json:"operator"`
	}
	if err := json.Unmarshal(anon.get("/s/"+w.slug+".json").Body.Bytes(), &j); err != nil || j.Operator == nil ||
		j.Operator.Description != hostile || len(j.Operator.Links) != 1 || j.Operator.Links[0].URL != "https://docs.example/start?a=1&b=2" {
		t.Errorf("JSON operator: %+v, %v", j.Operator, err)
	}
	md := anon.get("/s/" + w.slug + ".md").Body.String()
	if !strings.Contains(md, "From the server's operator") || strings.Contains(md, "<script>") || strings.Contains(md, "<a href") {
		t.Errorf("Markdown:\n%s", md)
	}

	hist := anon.get("/s/" + w.slug + "/history").Body.String()
	for _, want := range []string{"description edited by the operator", "setup notes edited by the operator", "links edited by the operator",
		"server operator", "The server's operator edited <code>description</code>",
		"&lt;script&gt;alert(1)&lt;/script&gt;", "Docs &lt;b&gt;bold&lt;/b&gt; &lt;https://docs.example/start?a=1&amp;b=2&gt;"} {
		if !strings.Contains(hist, want) {
			t.Errorf("the history page lacks %q", want)
		}
	}
	for _, bad := range []string{"<script>alert", "secret-ish", "maintainer@example.com"} {
		if strings.Contains(hist, bad) {
			t.Errorf("the history page holds %q", bad)
		}
	}
	// The next edit is on the pages at once.
	if rec := m.post(edit, editForm(csrf, "Second words.")); rec.Code != http.StatusOK {
		t.Fatalf("second save: %d", rec.Code)
	}
	if page := anon.get("/s/" + w.slug).Body.String(); !strings.Contains(page, "Second words.") || strings.Contains(page, "evil.test") {
		t.Errorf("the entry page after the second edit lacks it")
	}
	feed := anon.get("/s/" + w.slug + "/history.xml").Body.String()
	if !strings.Contains(feed, "description edited by the operator") || !strings.Contains(feed, "by the server&#39;s operator") ||
		strings.Contains(feed, "secret-ish") || strings.Contains(feed, "maintainer@example.com") {
		t.Errorf("feed:\n%s", feed)
	}
}

// TestListingEditBounds: a field over its bound is refused with a clear error and the
// typed text kept; the form may be larger than the other forms' bound, and no larger
// than its own.
func TestListingEditBounds(t *testing.T) {
	w := newListingSite(t)
	m := w.browser(t)
	csrf := m.signIn("maintainer@example.com")
	w.roles.grant(w.accountOf(t, m), w.entryID)
	edit := "/s/" + w.slug + "/edit"

	long := strings.Repeat("ü", store.MaxListingDescription) + "xyz"
	rec := m.post(edit, editForm(csrf, long))
	if body := rec.Body.String(); rec.Code != http.StatusBadRequest || !strings.Contains(body, "1003 characters, more than 1000") || !strings.Contains(body, long) {
		t.Errorf("long description: %d\n%.400s", rec.Code, body)
	}
	// Setup notes at their bound in four-byte characters: about 48 KiB encoded, more
	// than the other forms' 8 KiB.
	form := editForm(csrf, "ok")
	form.Set("setup_notes", strings.Repeat("😀", store.MaxListingSetupNotes))
	if rec := m.post(edit, form); rec.Code != http.StatusOK {
		t.Errorf("setup notes at their bound: %d\n%.400s", rec.Code, rec.Body)
	}
	form.Set("setup_notes", strings.Repeat("a", 200<<10))
	if rec := m.post(edit, form); rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("a 200 KiB form: %d, want 413", rec.Code)
	}
	// Other forms keep their bound.
	if rec := m.post("/s/"+w.slug+"/recheck", url.Values{"csrf": {csrf}, "pad": {strings.Repeat("a", 20<<10)}}); rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("a 20 KiB re-check form: %d, want 413", rec.Code)
	}
}

// TestRecheckInterval: a re-check sets the entry due at once; a second within the
// interval is 429 with Retry-After and when the next is allowed, and changes nothing.
func TestRecheckInterval(t *testing.T) {
	w := newListingSite(t)
	m := w.browser(t)
	csrf := m.signIn("maintainer@example.com")
	w.roles.grant(w.accountOf(t, m), w.entryID)
	path := "/s/" + w.slug + "/recheck"
	if rec := m.post(path, url.Values{"csrf": {csrf}}); rec.Code != http.StatusAccepted {
		t.Fatalf("re-check: %d\n%s", rec.Code, rec.Body)
	}
	due := func() time.Time {
		ds, err := w.st.DueTimes(context.Background(), w.entryID)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			if d.Reason == store.ReasonManual {
				return d.At
			}
		}
		return time.Time{}
	}
	if at := due(); !at.Equal(w.now) {
		t.Fatalf("manual due time %v, want %v", at, w.now)
	}
	rec := m.post(path, url.Values{"csrf": {csrf}})
	next := w.now.Add(listing.DefaultRecheckInterval)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != fmt.Sprint(int(listing.DefaultRecheckInterval.Seconds())) ||
		!strings.Contains(rec.Body.String(), next.UTC().Format("2006-01-02 15:04 UTC")) {
		t.Fatalf("second re-check: %d Retry-After %q\n%s", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
}
