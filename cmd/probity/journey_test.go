package main

// TestBrowserFollowerJourney walks a follower's whole journey in headless Chromium
// (Debian's chromium at /usr/bin/chromium, as the web package's browser tests; skipped
// when it is missing, unless CI=true, where that is a failure; axe-core from
// PROBITY_AXE_JS, required under CI=true):
//
//  1. The site is what `serve --accounts` runs, in process: accountFlags.build's write
//     paths (accounts with the SMTP sender, webhooks, the key document) published by
//     publish, with change e-mails through a real SMTP server on loopback (mail/sink).
//     Only the notify service is made anew, on the test's clock (followerRig), so that
//     the rounds, the 5-minute settling and the planning need no waiting.
//  2. In the browser: open the entry, "Sign in to follow", ask for a code, read the
//     code from the e-mail the SMTP server received, sign in, press Follow.
//  3. The MCP server drifts; real rounds (a probe of it, the history processor) record
//     the difference and, a minute later on the clock, confirm it; the browser sees
//     the change in the entry's history.
//  4. The planner and the sender run (notify.Plan and Deliver, as the periodic jobs
//     do); the e-mail arrives at the SMTP server. Its MIME: List-Unsubscribe (the
//     one-click address), List-Unsubscribe-Post, Message-ID, List-Id, Auto-Submitted,
//     a text and an HTML part, both linking the change, no server text anywhere.
//  5. The e-mail's unsubscribe link in the browser: buttons, and opening it (or the
//     List-Unsubscribe address) changed nothing; "Turn off change e-mails" turns them
//     off (the account still follows)
//     and offers Undo; Undo turns them back on. axe-core on both pages.
//  6. A mail app's RFC 8058 one-click POST (List-Unsubscribe=One-Click, no cookie, no
//     browser) to the List-Unsubscribe address turns change e-mails off, and the
//     account keeps following.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/http"
	netmail "net/mail"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/probity-dev/probity/mail"
	"github.com/probity-dev/probity/mail/sink"
	"github.com/probity-dev/probity/notify"
	"github.com/probity-dev/probity/store"
)

// chromiumPath and axeEnv are where the web package's browser tests find Chromium and
// axe-core.
const (
	chromiumPath = "/usr/bin/chromium"
	axeEnv       = "PROBITY_AXE_JS"
)

func TestBrowserFollowerJourney(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing in CI (.ci/run installs Debian's chromium): %v", chromiumPath, err)
		}
		t.Skipf("%s is missing (apt-get install chromium): %v", chromiumPath, err)
	}
	var axeJS []byte
	if p := os.Getenv(axeEnv); p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%s: %v", axeEnv, err)
		}
		axeJS = b
	} else if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not set in CI (.ci/run installs axe-core 4.14.1 and sets it)", axeEnv)
	} else {
		t.Logf("%s is not set: no accessibility checks", axeEnv)
	}
	began := time.Now()

	// 1. The store, the entry and its baseline an hour ago on the test's clock; the
	// SMTP server; the site with serve's write paths.
	start := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	r := newFollowerRig(t, "", start)
	r.round(t, 0)
	mails, err := sink.Start("127.0.0.1:0", filepath.Join(t.TempDir(), "mail"), sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer mails.Close()
	addr := freeAddr(t)
	base := "http://" + addr
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	af := accountFlags{on: true, smtp: mail.Config{Host: mails.Host(), Port: mails.Port(), Security: "none", From: "Probity test <notify@probity.test>"}}
	w, err := af.build(r.st, r.keyDir, r.dataDir, base, true, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	w.notify = r.notifyService(t, base, notify.SenderFunc(func(ctx context.Context, m notify.Message) error {
		return w.sender.Send(ctx, mail.Message(m))
	}))
	siteCtx, stopSite := context.WithCancel(context.Background())
	srv, err := publish(siteCtx, r.st, w.doc, filepath.Join(r.dataDir, "log"), addr, "", siteOptions{write: w}, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { stopSite(); srv.Shutdown(context.Background()) }()

	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	allocCtx, allocCancel := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath), chromedp.Headless, chromedp.NoSandbox, chromedp.NoFirstRun,
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
	)...)
	defer allocCancel() // waits for Chromium to exit, before t.TempDir's cleanup
	tab, tabCancel := chromedp.NewContext(allocCtx)
	defer tabCancel()
	if axeJS != nil {
		if err := chromedp.Do(tab, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: string(axeJS)})
			return err
		})); err != nil {
			t.Fatalf("new tab: %v", err)
		}
	}
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(tab, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// load runs the steps, waits for the document they load, and wants HTTP 200. A
	// same-document (fragment) navigation has no response and is accepted as it is.
	load := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		resp, err := chromedp.RunResponse(tab, steps...)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if resp != nil && resp.Status != http.StatusOK {
			t.Fatalf("%s: HTTP %d", what, resp.Status)
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
	mode := func() (string, bool) {
		t.Helper()
		acct := accountOf(t, r, "follower@example.org")
		s, err := r.st.NotifySettings(r.ctx, acct)
		if err != nil {
			t.Fatal(err)
		}
		following, err := w.notify.Following(r.ctx, acct, r.entry.ID)
		if err != nil {
			t.Fatal(err)
		}
		return s.Mode, following
	}
	entry := "/s/" + r.entry.Slug

	// 2. Sign in with the code from the e-mail, and follow.
	load("the entry page", chromedp.Navigate(base+entry))
	load("Sign in to follow", chromedp.Click(chromedp.CSS(`.follow a[href^="/signin"]`)))
	do("enter the address", chromedp.SetValue(chromedp.CSS("#signin-email"), "follower@example.org"))
	load("ask for a code", chromedp.Click(chromedp.CSS(`form[action="/signin/code"] button`)))
	got, err := mails.Wait(ctx, 1)
	if err != nil {
		t.Fatalf("no sign-in e-mail: %v\n%s", err, tail(logs.String(), 2000))
	}
	code := regexp.MustCompile(`\b(\d{8})\b`).FindSubmatch(got[0].Data)
	if code == nil || len(got[0].To) != 1 || got[0].To[0] != "follower@example.org" {
		t.Fatalf("the sign-in e-mail to %v holds no 8-digit code:\n%s", got[0].To, got[0].Data)
	}
	do("enter the code", chromedp.SetValue(chromedp.CSS("#verify-code"), string(code[1])))
	load("sign in", chromedp.Click(chromedp.CSS(`form[action="/signin/verify"] button`)))
	if loc, _ := chromedp.Run(tab, chromedp.Location()); loc != base+entry {
		t.Errorf("signing in led to %s, want back to the entry %s", loc, base+entry)
	}
	// The follow begins a minute after the baseline, on the clock: only changes
	// recorded after it are e-mailed.
	r.clock.Set(start.Add(time.Minute))
	load("Follow", chromedp.Click(chromedp.CSS(`form[action="`+entry+`/follow"] button`)))
	if got := text(); !strings.Contains(got, "You follow this entry") {
		t.Fatalf("after Follow the entry page says %q", got)
	}
	if m, following := mode(); m != store.MailHourly || !following {
		t.Fatalf("after Follow: mode %q, following %v; want %q and following", m, following, store.MailHourly)
	}

	// 3. The drift, read and confirmed by real rounds; the history shows it.
	change := r.driftConfirmed(t, 2*time.Minute)
	anchor := fmt.Sprintf("ch-%d", change.Number)
	load("the history", chromedp.Navigate(base+entry+"/history"))
	if n, err := chromedp.Run(tab, chromedp.Evaluate[int](`document.querySelectorAll('[id="`+anchor+`"]').length`)); err != nil || n != 1 {
		t.Fatalf("the history shows no change %s (%d, %v): %q", anchor, n, err, text())
	}

	// 4. Once the change has settled (5 min), the planner and the sender run.
	r.clock.Set(change.RecordedAt.Add(notify.DefaultSettle + time.Minute))
	if rep, err := w.notify.Plan(r.ctx); err != nil || rep.Hourly != 1 {
		t.Fatalf("planning: %+v, %v; want one hourly e-mail", rep, err)
	}
	if n, err := w.notify.Deliver(r.ctx); err != nil || n != 1 {
		t.Fatalf("delivery: %d, %v; want one e-mail\n%s", n, err, tail(logs.String(), 2000))
	}
	got, err = mails.Wait(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	msg := got[1]
	if len(got) != 2 || len(msg.To) != 1 || msg.To[0] != "follower@example.org" {
		t.Fatalf("%d messages; the change e-mail went to %v", len(got), msg.To)
	}
	changeLink := base + entry + "/history#" + anchor
	em := parseChangeEmail(t, msg.Data, base)
	for _, part := range []struct{ name, body string }{{"text", em.text}, {"HTML", em.html}} {
		if !strings.Contains(part.body, changeLink) {
			t.Errorf("the %s part does not link the change %s:\n%s", part.name, changeLink, part.body)
		}
		if !strings.Contains(part.body, em.unsubscribe) {
			t.Errorf("the %s part does not link the unsubscribe page %s", part.name, em.unsubscribe)
		}
	}
	if !strings.Contains(em.text, r.entry.Slug+": 1 tool added") {
		t.Errorf("the text part does not sum up the change as %q:\n%s", r.entry.Slug+": 1 tool added", em.text)
	}
	if m, following := mode(); m != store.MailHourly || !following {
		t.Fatalf("after the e-mail: mode %q, following %v", m, following)
	}
	load("the e-mail's link to the change", chromedp.Navigate(changeLink))
	if target, err := chromedp.Run(tab, chromedp.Evaluate[string](`(document.querySelector(':target') || {}).id || ''`)); err != nil || target != anchor {
		t.Errorf("the e-mail's link opened a page whose :target is %q (%v), want %q", target, err, anchor)
	}

	// 5. The unsubscribe page: buttons, and opening it changed nothing.
	load("the e-mail's unsubscribe link", chromedp.Navigate(em.unsubscribe))
	page := text()
	// The page names the entry by its listed name, as text: its markup stays text.
	for _, want := range []string{"Nothing changes until you press a button", "Unfollow " + r.entry.Name, "Turn off change e-mails"} {
		if !strings.Contains(page, want) {
			t.Errorf("the unsubscribe page lacks %q: %q", want, page)
		}
	}
	if n, err := chromedp.Run(tab, chromedp.Evaluate[int](`document.querySelectorAll('main b, main script').length`)); err != nil || n != 0 {
		t.Errorf("the entry's listed name became markup on the unsubscribe page (%d elements, %v)", n, err)
	}
	if n, err := chromedp.Run(tab, chromedp.Evaluate[int](`document.querySelectorAll('main form[method="post"] button').length`)); err != nil || n != 2 {
		t.Errorf("the unsubscribe page has %d buttons (%v), want 2 (unfollow, e-mails off)", n, err)
	}
	if m, following := mode(); m != store.MailHourly || !following {
		t.Fatalf("opening the unsubscribe page changed something: mode %q, following %v", m, following)
	}
	if axeJS != nil {
		runAxe(t, tab, "the unsubscribe page")
	}
	// A mail filter or app may open the List-Unsubscribe address too: the same buttons.
	load("the List-Unsubscribe address, opened", chromedp.Navigate(em.listUnsubscribe))
	if got := text(); !strings.Contains(got, "Nothing changes until you press a button") {
		t.Errorf("the List-Unsubscribe address, opened, shows %q", got)
	}
	if m, following := mode(); m != store.MailHourly || !following {
		t.Fatalf("opening the List-Unsubscribe address changed something: mode %q, following %v", m, following)
	}
	load("the e-mail's unsubscribe link, again", chromedp.Navigate(em.unsubscribe))
	load("Turn off change e-mails", chromedp.Click(chromedp.Search(`//main//button[normalize-space()="Turn off change e-mails"]`)))
	if got := text(); !strings.Contains(got, "Change e-mails are off") || !strings.Contains(got, "Undo") {
		t.Errorf("after Turn off change e-mails the page says %q, want that they are off and an Undo", got)
	}
	if m, following := mode(); m != store.MailOff || !following {
		t.Fatalf("after Turn off change e-mails: mode %q, following %v; want off and following", m, following)
	}
	if axeJS != nil {
		runAxe(t, tab, "the unsubscribe page after its button")
	}
	load("Undo", chromedp.Click(chromedp.Search(`//main//button[starts-with(normalize-space(), "Undo")]`)))
	if got := text(); !strings.Contains(got, "Change e-mails are on again") {
		t.Errorf("after Undo the page says %q", got)
	}
	if m, following := mode(); m != store.MailHourly || !following {
		t.Fatalf("after Undo: mode %q, following %v; want %q and following", m, following, store.MailHourly)
	}
	load("the Followed page", chromedp.Navigate(base+"/followed"))
	if checked, err := chromedp.Run(tab, chromedp.Evaluate[string](`(document.querySelector('input[name=mode]:checked') || {}).value || ''`)); err != nil || checked != store.MailHourly {
		t.Errorf("after Undo the Followed page's e-mail setting is %q (%v), want %q", checked, err, store.MailHourly)
	}

	// 6. One click, as a mail app posts it: no cookie, no browser, another origin.
	form := "List-Unsubscribe=One-Click"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, em.listUnsubscribe, strings.NewReader(form))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://mail.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the one-click POST: HTTP %d\n%.500s", resp.StatusCode, body)
	}
	if m, following := mode(); m != store.MailOff || !following {
		t.Errorf("after the one-click POST: mode %q, following %v; want off and still following", m, following)
	}
	if strings.Contains(logs.String(), string(code[1])) || strings.Contains(logs.String(), strings.TrimPrefix(em.unsubscribe, base+"/unsubscribe/")) {
		t.Error("the site's log holds the sign-in code or an unsubscribe token")
	}
	t.Logf("the follower's journey took %.1f s", time.Since(began).Seconds())
}

// accountOf is the id of the account of the e-mail address.
func accountOf(t *testing.T, r *followerRig, email string) int64 {
	t.Helper()
	a, created, err := r.st.EmailAccount(r.ctx, email, email, r.clock.Now())
	if err != nil || created {
		t.Fatalf("no account of %s (created %v, %v)", email, created, err)
	}
	return a.ID
}

// changeEmail is what parseChangeEmail read of a change e-mail.
type changeEmail struct {
	header          netmail.Header
	text, html      string
	listUnsubscribe string // the one-click address of List-Unsubscribe
	unsubscribe     string // the unsubscribe page the parts link
}

// parseChangeEmail parses a change e-mail as received and checks its form: the
// headers, a multipart/alternative of a text and an HTML part, the unsubscribe links
// on base, and no server text in any header or part.
func parseChangeEmail(t *testing.T, raw []byte, base string) changeEmail {
	t.Helper()
	m, err := netmail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("the e-mail does not parse: %v\n%s", err, raw)
	}
	em := changeEmail{header: m.Header}
	h := m.Header
	host := strings.TrimPrefix(base, "http://")
	if host, _, _ = strings.Cut(host, ":"); host == "" {
		t.Fatalf("base %q has no host", base)
	}
	if id := h.Get("Message-Id"); !regexp.MustCompile(`^<[^<>@\s]+@` + regexp.QuoteMeta(host) + `>$`).MatchString(id) {
		t.Errorf("Message-ID %q, want <…@%s>", id, host)
	}
	if id := h.Get("List-Id"); !strings.Contains(id, "<changes."+host+">") {
		t.Errorf("List-Id %q, want …<changes.%s>", id, host)
	}
	if p := h.Get("List-Unsubscribe-Post"); p != "List-Unsubscribe=One-Click" {
		t.Errorf("List-Unsubscribe-Post %q, want List-Unsubscribe=One-Click", p)
	}
	if a := h.Get("Auto-Submitted"); a != "auto-generated" {
		t.Errorf("Auto-Submitted %q", a)
	}
	lu := regexp.MustCompile(`^<(` + regexp.QuoteMeta(base) + `/unsubscribe/[A-Za-z0-9_-]+/one-click)>$`).FindStringSubmatch(h.Get("List-Unsubscribe"))
	if lu == nil {
		t.Fatalf("List-Unsubscribe %q, want <%s/unsubscribe/TOKEN/one-click> (an https URL in production; this site is on loopback)", h.Get("List-Unsubscribe"), base)
	}
	em.listUnsubscribe = lu[1]
	if d, err := h.Date(); err != nil || d.IsZero() {
		t.Errorf("Date %q: %v", h.Get("Date"), err)
	}
	ct, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil || ct != "multipart/alternative" {
		t.Fatalf("Content-Type %q (%v), want multipart/alternative", h.Get("Content-Type"), err)
	}
	mr := multipart.NewReader(m.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the parts: %v", err)
		}
		pct, pparams, err := mime.ParseMediaType(p.Header.Get("Content-Type"))
		if err != nil || !strings.EqualFold(pparams["charset"], "utf-8") {
			t.Errorf("a part's Content-Type %q (%v), want UTF-8", p.Header.Get("Content-Type"), err)
		}
		// multipart.Part decodes quoted-printable itself and drops the header; any
		// other encoding is read as it is.
		var r io.Reader = p
		if strings.EqualFold(p.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
			r = quotedprintable.NewReader(p)
		}
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("the %s part: %v", pct, err)
		}
		switch pct {
		case "text/plain":
			em.text = string(b)
		case "text/html":
			em.html = string(b)
		default:
			t.Errorf("an unexpected %s part", pct)
		}
	}
	if em.text == "" || em.html == "" {
		t.Fatalf("the e-mail lacks a text or an HTML part:\n%s", raw)
	}
	u := regexp.MustCompile(regexp.QuoteMeta(base) + `/unsubscribe/[A-Za-z0-9_-]+`).FindString(em.text)
	if u == "" {
		t.Fatalf("the text part links no unsubscribe page:\n%s", em.text)
	}
	em.unsubscribe = u
	if _, err := url.Parse(u); err != nil {
		t.Fatal(err)
	}
	// No server text anywhere: not in a header, not in a part.
	var headers strings.Builder
	for k, vs := range h {
		dec := new(mime.WordDecoder)
		for _, v := range vs {
			if d, err := dec.DecodeHeader(v); err == nil {
				v = d
			}
			fmt.Fprintf(&headers, "%s: %s\n", k, v)
		}
	}
	for _, where := range []struct{ name, s string }{{"a header", headers.String()}, {"the text part", em.text}, {"the HTML part", em.html}} {
		for _, bad := range serverTexts {
			if strings.Contains(where.s, bad) {
				t.Errorf("%s quotes server text %q:\n%s", where.name, bad, where.s)
			}
		}
	}
	return em
}

// axeRunJS runs axe-core on the document and returns its violations (as the web
// package's browser tests do).
const axeRunJS = `axe.run(document, {resultTypes: ['violations']}).then(r => r.violations.map(v => ({
	id: v.id, impact: v.impact || '', help: v.help,
	nodes: v.nodes.slice(0, 5).map(n => n.target.join(' ') + '  ' + n.html.slice(0, 200))
})))`

type axeViolation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// runAxe fails the test on every serious or critical axe-core violation of the tab's
// document and logs the others.
func runAxe(t *testing.T, tab context.Context, where string) {
	t.Helper()
	vs, err := chromedp.Run(tab, chromedp.Evaluate[[]axeViolation](axeRunJS, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Errorf("%s: axe-core: %v", where, err)
		return
	}
	for _, v := range vs {
		msg := fmt.Sprintf("%s: axe %s (%s): %s\n\t%s", where, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "\n\t"))
		if v.Impact == "serious" || v.Impact == "critical" {
			t.Error(msg)
		} else {
			t.Log(msg)
		}
	}
}
