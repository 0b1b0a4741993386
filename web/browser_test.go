package web_test

// TestBrowser drives the real site in headless Chromium (Debian's chromium package
// at /usr/bin/chromium, which .ci/run installs) with chromedp. It is skipped when
// /usr/bin/chromium is missing, unless CI=true, where that is a failure.
//
// It saves a full-page PNG screenshot of the entry page: under the test's temporary
// directory (removed when the test ends) by default, or at the path in the
// environment variable PROBITY_SCREENSHOT when that is set, e.g.
//
//	PROBITY_SCREENSHOT=/tmp/entry.png go test -run TestBrowser -v ./web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

const chromiumPath = "/usr/bin/chromium"

// Parts of the hostile tool description: each would set window.__pwned if the
// browser ran it.
const (
	pwnScript = `<script>window.__pwned=1</script>`
	pwnImg    = `<img src=x onerror="window.__pwned=2">`
	// browserHostile also carries a zero-width space, which the site shows as \u200b.
	browserHostile = "Search. " + pwnScript + " " + pwnImg + " zero\u200bwidth"
)

// cspWatch runs before any script of every document the tab loads (DevTools
// injects it, so no <script> element and no CSP applies to it) and records every
// Content-Security-Policy violation of the page.
const cspWatch = `window.__csp = [];
document.addEventListener('securitypolicyviolation', function (e) {
	window.__csp.push(e.violatedDirective + ' blocked ' + (e.blockedURI || 'inline') + ' at ' + e.sourceFile + ':' + e.lineNumber);
});`

// pageState is what inspect reads from the current document.
type pageState struct {
	Pwned    string   `json:"pwned"`    // typeof window.__pwned
	Scripts  int      `json:"scripts"`  // <script> elements
	ImgX     int      `json:"imgX"`     // <img> whose src attribute is "x"
	OnError  int      `json:"onError"`  // elements with an onerror attribute
	CSP      []string `json:"csp"`      // securitypolicyviolation events seen
	Text     string   `json:"text"`     // document.body.innerText
	Target   string   `json:"target"`   // id of the :target element, or ""
	Location string   `json:"location"` // location.href
}

const inspectJS = `({
	pwned: typeof window.__pwned,
	scripts: document.querySelectorAll('script').length,
	imgX: Array.from(document.images).filter(function (i) { return i.getAttribute('src') === 'x'; }).length,
	onError: document.querySelectorAll('[onerror]').length,
	csp: window.__csp || ['the CSP watch did not run'],
	text: document.body ? document.body.innerText : '',
	target: (document.querySelector(':target') || {}).id || '',
	location: location.href
})`

func inspect(ctx context.Context) (pageState, error) {
	return chromedp.Run(ctx, chromedp.Evaluate[pageState](inspectJS))
}

// open navigates the tab to url and fails the test unless the document answered 200.
// A same-document (fragment) navigation has no response and is accepted as it is.
func open(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(url))
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	if resp != nil && resp.Status != http.StatusOK {
		t.Fatalf("open %s: HTTP %d", url, resp.Status)
	}
}

// mustBeInert fails unless nothing of the hostile description became markup or ran.
func mustBeInert(t *testing.T, where string, st pageState, wantNoCSP bool) {
	t.Helper()
	if st.Pwned != "undefined" {
		t.Errorf("%s: window.__pwned is %s: the hostile description ran", where, st.Pwned)
	}
	if st.Scripts != 0 {
		t.Errorf("%s: %d <script> elements in the document", where, st.Scripts)
	}
	if st.ImgX != 0 || st.OnError != 0 {
		t.Errorf("%s: %d <img src=x>, %d onerror attributes in the document", where, st.ImgX, st.OnError)
	}
	if wantNoCSP && len(st.CSP) != 0 {
		t.Errorf("%s: Content-Security-Policy violations: %q", where, st.CSP)
	}
}

// mustShowHostileText fails unless the visible text holds the description as text.
func mustShowHostileText(t *testing.T, where string, st pageState) {
	t.Helper()
	for _, want := range []string{pwnScript, pwnImg, `zero\u200bwidth`} {
		if !strings.Contains(st.Text, want) {
			t.Errorf("%s: visible text lacks %q", where, want)
		}
	}
	if strings.Contains(st.Text, "\u200b") {
		t.Errorf("%s: visible text holds an invisible zero-width space", where)
	}
}

func TestBrowser(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing in CI (.ci/run installs Debian's chromium): %v", chromiumPath, err)
		}
		t.Skipf("%s is missing (apt-get install chromium): %v", chromiumPath, err)
	}
	began := time.Now()
	f := setupWith(t, generous, browserHostile)
	chN := f.toolsChange

	// The control page puts the same description into a page unescaped, with the
	// site's own Content-Security-Policy: it proves the checks below can see a
	// script run and a violation happen.
	csp := f.get(t, http.MethodGet, "/").Header().Get("Content-Security-Policy")
	if csp == "" {
		t.Fatal("the site sends no Content-Security-Policy")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/__control" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Content-Security-Policy", csp)
			fmt.Fprintf(w, "<!doctype html><html><head><title>control</title></head><body><p>%s</p></body></html>", browserHostile)
			return
		}
		f.h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Fatalf("server not on loopback: %s", srv.URL)
	}
	base := srv.URL
	entry := base + "/s/" + f.slug
	hist := entry + "/history"
	anchor := fmt.Sprintf("ch-%d", chN)

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
	// Runs before t.TempDir's cleanup: it waits for Chromium to exit, so its
	// profile directory can be removed.
	defer allocCancel()

	// newTab opens a tab with the CSP watch installed and, when bypass is set,
	// with the page's Content-Security-Policy switched off.
	newTab := func(parent context.Context, bypass bool) (context.Context, context.CancelFunc) {
		tab, cancel := chromedp.NewContext(parent)
		err := chromedp.Do(tab, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			if _, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: cspWatch}); err != nil {
				return err
			}
			_, err := cdp.Call(ctx, tg, page.SetBypassCSP, page.SetBypassCSPParams{Enabled: bypass})
			return err
		}))
		if err != nil {
			cancel()
			t.Fatalf("new tab: %v", err)
		}
		return tab, cancel
	}

	// 1. As a visitor sees the site, Content-Security-Policy on.
	tab, tabCancel := newTab(allocCtx, false)
	defer tabCancel()
	var (
		mu      sync.Mutex
		console []chromedp.ConsoleMessage
		done    = make(chan struct{})
	)
	consoleCtx, stopConsole := context.WithCancel(tab)
	messages := chromedp.Console(consoleCtx)
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			mu.Lock()
			console = append(console, m)
			mu.Unlock()
		}
	}()

	// The directory lists the entry, its name as text.
	open(t, tab, base+"/")
	st, err := inspect(tab)
	if err != nil {
		t.Fatal(err)
	}
	mustBeInert(t, "directory", st, true)
	name, err := chromedp.Run(tab, chromedp.Evaluate[string](fmt.Sprintf(
		`(document.querySelector('a[href="/s/%s"]') || {}).textContent || ''`, f.slug)))
	if err != nil {
		t.Fatal(err)
	}
	if name != "Search <b>server</b>" {
		t.Errorf("directory: link to the entry has text %q", name)
	}

	// The entry page shows the description as text and runs none of it.
	open(t, tab, entry)
	st, err = inspect(tab)
	if err != nil {
		t.Fatal(err)
	}
	mustBeInert(t, "entry page", st, true)
	mustShowHostileText(t, "entry page", st)
	if !strings.Contains(st.Text, "Search <b>server</b>") {
		t.Error("entry page: the server name is not shown as text")
	}
	shot, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	shotPath := os.Getenv("PROBITY_SCREENSHOT")
	if shotPath == "" {
		shotPath = filepath.Join(t.TempDir(), "entry.png")
	}
	if err := os.WriteFile(shotPath, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the entry page: %s (%d bytes)", shotPath, len(shot))

	// The history, then the change's own address within it.
	open(t, tab, hist)
	st, err = inspect(tab)
	if err != nil {
		t.Fatal(err)
	}
	mustBeInert(t, "history", st, true)
	mustShowHostileText(t, "history", st)
	open(t, tab, hist+"#"+anchor)
	st, err = inspect(tab)
	if err != nil {
		t.Fatal(err)
	}
	mustBeInert(t, "history#"+anchor, st, true)
	if st.Target != anchor || !strings.HasSuffix(st.Location, "/history#"+anchor) {
		t.Errorf("history#%s: :target is %q at %s", anchor, st.Target, st.Location)
	}
	exists, err := chromedp.Run(tab, chromedp.Evaluate[bool](fmt.Sprintf(`document.getElementById(%q) !== null`, anchor)))
	if err != nil || !exists {
		t.Errorf("history: no element with id %s (%v)", anchor, err)
	}

	// Nothing was refused by the Content-Security-Policy (which would mean markup
	// got into a page), and no script error happened.
	stopConsole()
	<-done
	mu.Lock()
	for _, m := range console {
		t.Logf("console: %s (source %q, %s)", m, m.Source, m.URL)
		if m.IsException() || m.Source == "security" || strings.Contains(m.Text, "Content Security Policy") {
			t.Errorf("console: %s", m)
		}
	}
	mu.Unlock()

	// 2. With the Content-Security-Policy switched off, escaping alone keeps the
	// description inert: the CSP is a second wall, not the only one. This tab loads
	// the #ch-N address as a new document.
	tabB, cancelB := newTab(tab, true)
	defer cancelB()
	for _, u := range []string{entry, hist + "#" + anchor} {
		open(t, tabB, u)
		st, err := inspect(tabB)
		if err != nil {
			t.Fatal(err)
		}
		mustBeInert(t, "without CSP: "+u, st, true)
		mustShowHostileText(t, "without CSP: "+u, st)
		if strings.Contains(u, "#") && st.Target != anchor {
			t.Errorf("without CSP: %s: :target is %q", u, st.Target)
		}
	}
	// The same description, unescaped, does run there: the checks can see it.
	open(t, tabB, base+"/__control")
	st, err = inspect(tabB)
	if err != nil {
		t.Fatal(err)
	}
	if st.Pwned == "undefined" || st.Scripts != 1 || st.ImgX != 1 {
		t.Errorf("control without CSP: the unescaped description did not run: %+v", st)
	}

	// 3. With the site's CSP on, the unescaped control is blocked and the watch
	// sees the violations: an empty watch on the site's pages means something.
	tabC, cancelC := newTab(tab, false)
	defer cancelC()
	open(t, tabC, base+"/__control")
	// The violation events are queued tasks: wait (a little) for both.
	if _, err := chromedp.Run(tabC, chromedp.Poll[bool](`window.__csp && window.__csp.length >= 2`,
		chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(5*time.Second))); err != nil {
		t.Errorf("control with CSP: waiting for two violations: %v", err)
	}
	st, err = inspect(tabC)
	if err != nil {
		t.Fatal(err)
	}
	if st.Pwned != "undefined" || len(st.CSP) < 2 {
		t.Errorf("control with CSP: pwned %s, violations %q", st.Pwned, st.CSP)
	}
	t.Logf("control with CSP: violations seen: %q", st.CSP)

	tabCancel()
	allocCancel()
	t.Logf("browser test took %v (with the store setup)", time.Since(began).Round(time.Millisecond))
}
