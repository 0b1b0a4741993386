package web_test

// TestBrowserCrossOriginPost signs in through the real forms in headless Chromium
// (see browser_test.go for how Chromium is found), then lets a page of another
// loopback origin post a forged Follow form to the site, with the victim's session
// cookie (127.0.0.1 on another port is the same site, so SameSite=Lax sends it) and
// even the right csrf field: the site refuses it, because the browser marks it
// cross-origin (http.CrossOriginProtection). The same form from the site's own page
// goes through, and the one-click unsubscribe route takes the other origin's post.

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/probity-dev/probity/web"
)

func TestBrowserCrossOriginPost(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing in CI (.ci/run installs Debian's chromium): %v", chromiumPath, err)
		}
		t.Skipf("%s is missing (apt-get install chromium): %v", chromiumPath, err)
	}
	// The site on its own loopback origin, which is its BaseURL (http on loopback:
	// cookies without Secure).
	var siteHandler atomic.Pointer[http.Handler]
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*siteHandler.Load()).ServeHTTP(w, r)
	}))
	defer site.Close()
	w := newWriteSite(t, writeOpts{base: site.URL})
	siteHandler.Store(&w.h)

	// The attacker's pages, on a second loopback origin: a form for each target,
	// with the fields given in the query.
	attacker := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		var fields strings.Builder
		for k, vs := range q {
			if k == "action" {
				continue
			}
			fmt.Fprintf(&fields, `<input type="hidden" name="%s" value="%s">`, html.EscapeString(k), html.EscapeString(vs[0]))
		}
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(rw, `<!doctype html><html><head><title>Win a prize</title></head><body>
<form id="f" method="post" action="%s">%s<button id="go" type="submit">Win a prize</button></form></body></html>`,
			html.EscapeString(q.Get("action")), fields.String())
	}))
	defer attacker.Close()
	if !strings.HasPrefix(site.URL, "http://127.0.0.1:") || !strings.HasPrefix(attacker.URL, "http://127.0.0.1:") || site.URL == attacker.URL {
		t.Fatalf("servers not on two loopback origins: %s, %s", site.URL, attacker.URL)
	}
	// The same attacker as another site: localhost is not 127.0.0.1's site.
	crossSite := strings.Replace(attacker.URL, "127.0.0.1", "localhost", 1)

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	allocCtx, allocCancel := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)...)
	defer allocCancel()
	tab, tabCancel := chromedp.NewContext(allocCtx)
	defer tabCancel()

	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(tab, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// load runs the steps, waits for the page they load, and wants status.
	load := func(what string, status int64, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		resp, err := chromedp.RunResponse(tab, steps...)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if resp.Status != status {
			t.Errorf("%s: HTTP %d, want %d", what, resp.Status, status)
		}
	}
	text := func() string {
		t.Helper()
		s, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS("main")))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	entry := "/s/" + w.slug

	// Sign in with an e-mail code, through the site's forms.
	load("the sign-in page", 200, chromedp.Navigate(site.URL+"/signin?return="+url.QueryEscape(entry)))
	do("enter the address", chromedp.SetValue(chromedp.CSS("#signin-email"), "ada@example.com"))
	load("ask for a code", 200, chromedp.Click(chromedp.CSS(`form[action="/signin/code"] button`)))
	do("enter the code", chromedp.SetValue(chromedp.CSS("#verify-code"), fakeCode))
	load("sign in", 200, chromedp.Click(chromedp.CSS(`form[action="/signin/verify"] button`)))
	csrf, err := chromedp.Run(tab, chromedp.Evaluate[string](`(document.querySelector('form[action$="/follow"] input[name=csrf]') || {}).value || ''`))
	if err != nil || csrf == "" {
		t.Fatalf("no Follow form with a csrf field after signing in (%v): %q", err, text())
	}
	acct := w.acc.accountID("ada@example.com")

	// The forged Follow form, from the second origin (same site) and from another
	// site: refused, nothing changed.
	for _, origin := range []string{attacker.URL, crossSite} {
		page := origin + "/?" + url.Values{"action": {site.URL + entry + "/follow"}, "csrf": {csrf}, "return": {entry}}.Encode()
		load("the attacker's page at "+origin, 200, chromedp.Navigate(page))
		load("the forged post from "+origin, http.StatusForbidden, chromedp.Click(chromedp.ID("go")))
		if got := text(); !strings.Contains(got, "sent from another site") {
			t.Errorf("forged post from %s: the site answered %q", origin, got)
		}
		if w.fol.following(acct, w.entryID) {
			t.Fatalf("forged post from %s: the account follows the entry", origin)
		}
	}

	// One-click unsubscribe takes the other origin's post.
	tok := w.fol.token(unsubToken{account: acct, action: web.ActionMailOff})
	load("the one-click page", 200, chromedp.Navigate(attacker.URL+"/?"+url.Values{"action": {site.URL + "/unsubscribe/" + tok + "/one-click"}, "List-Unsubscribe": {"One-Click"}}.Encode()))
	load("one-click from the other origin", 200, chromedp.Click(chromedp.ID("go")))
	if got := text(); w.fol.mode(acct) != web.MailOff || !strings.Contains(got, "Change e-mails are off") {
		t.Errorf("one-click from another origin: mode %s, page %q", w.fol.mode(acct), got)
	}

	// The control: the site's own Follow button, same cookie, same csrf, goes through.
	load("the entry page", 200, chromedp.Navigate(site.URL+entry))
	load("follow from the site's own page", 200, chromedp.Click(chromedp.CSS(`form[action="`+entry+`/follow"] button`)))
	if !w.fol.following(acct, w.entryID) {
		t.Errorf("the site's own Follow button did not follow: %q", text())
	}
}
