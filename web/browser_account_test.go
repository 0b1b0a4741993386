package web_test

// TestBrowserWritePages opens every page of the write paths in headless Chromium, as
// TestBrowserPages does the read-only ones (browser_pages_test.go: Chromium, axe-core
// from PROBITY_AXE_JS, screenshots in PROBITY_SCREENSHOT_DIR): anonymous (sign-in,
// code entry, privacy, an entry's "Sign in to follow"), then signed in through the
// forms (an entry's Follow button, Followed with a delivery failure and a deleted
// entry, account, webhooks, a delivery log, an unsubscribe page and its Undo). Each
// page at 1280 and 390 px: nothing runs, no CSP violation, no sideways scrolling, no
// serious or critical axe violation, dark-scheme contrast at 390 px.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/probity-dev/probity/web"
)

func TestBrowserWritePages(t *testing.T) {
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
	shots := os.Getenv(screenshotDirEnv)
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}

	var siteHandler atomic.Pointer[http.Handler]
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*siteHandler.Load()).ServeHTTP(w, r)
	}))
	defer site.Close()
	w := newWriteSite(t, writeOpts{base: site.URL})
	siteHandler.Store(&w.h)
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	w.fol.failures = []web.MailFailure{{PlannedAt: now, Attempts: 6, Error: "550 5.1.1 <ada@example.com>: Recipient address rejected: User unknown in virtual mailbox table"}}
	w.fol.gone = []web.GoneEntry{{Slug: "old-weather", Name: "Old weather server", DeletedAt: now.Add(-time.Hour)}}
	w.hooks.deliveries = []web.WebhookDelivery{
		{MessageID: "msg_2Nq8pJ6hXk4vT0", EntrySlug: w.slug, ChangeNumber: 2, CreatedAt: now, State: web.DeliveryDelivered, Attempts: 1, LastAttemptAt: now, LastStatus: 200},
		{MessageID: "msg_2Nq8pJ6hXk4vS9", EntrySlug: w.slug, ChangeNumber: 1, CreatedAt: now.Add(-time.Hour), State: web.DeliveryFailed, Attempts: 6,
			LastAttemptAt: now.Add(-time.Minute), LastError: "dial tcp: lookup hooks.example: no such host"},
		{MessageID: "msg_2Nq8pJ6hXk4vU1", ChangeNumber: 3, CreatedAt: now, State: web.DeliveryPending},
	}

	ctx, cancel := context.WithTimeout(t.Context(), 240*time.Second)
	defer cancel()
	allocCtx, allocCancel := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath), chromedp.Headless, chromedp.NoSandbox, chromedp.NoFirstRun,
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("hide-scrollbars", false),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
	)...)
	defer allocCancel()
	tab, tabCancel := chromedp.NewContext(allocCtx)
	defer tabCancel()
	err := chromedp.Do(tab, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		for _, src := range []string{cspWatch, string(axeJS)} {
			if src == "" {
				continue
			}
			if _, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: src}); err != nil {
				return err
			}
		}
		return nil
	}))
	if err != nil {
		t.Fatalf("new tab: %v", err)
	}

	check := func(pages []pageCase) {
		t.Helper()
		for _, width := range []int64{1280, 390} {
			if err := chromedp.Do(tab, chromedp.EmulateViewport(width, 900)); err != nil {
				t.Fatal(err)
			}
			for _, pc := range pages {
				where := fmt.Sprintf("%s at %d px", pc.path, width)
				resp, err := chromedp.Run(tab, chromedp.NavigateResponse(site.URL+pc.path))
				if err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				if resp.Status != int64(pc.status) {
					t.Errorf("%s: HTTP %d, want %d", where, resp.Status, pc.status)
					continue
				}
				st, err := inspect(tab)
				if err != nil {
					t.Fatal(err)
				}
				mustBeInert(t, where, st, true)
				of, err := chromedp.Run(tab, chromedp.Evaluate[overflow](overflowJS))
				if err != nil {
					t.Fatal(err)
				}
				if of.ScrollWidth > of.InnerWidth {
					t.Errorf("%s: the page scrolls sideways (%d px wide in a %d px window): %s", where, of.ScrollWidth, of.InnerWidth, strings.Join(of.Wide, ", "))
				}
				if axeJS != nil {
					if width == 1280 {
						runAxe(t, tab, where, `{resultTypes: ['violations']}`)
					} else {
						runAxe(t, tab, where, `{runOnly: {type: 'rule', values: ['scrollable-region-focusable', 'target-size', 'meta-viewport', 'meta-viewport-large']}, resultTypes: ['violations']}`)
					}
				}
				jpg, err := chromedp.Run(tab, chromedp.FullScreenshot(80))
				if err == nil {
					err = os.WriteFile(filepath.Join(shots, fmt.Sprintf("%s-%d.jpg", pc.name, width)), jpg, 0o644)
				}
				if err != nil {
					t.Errorf("screenshot %s: %v", where, err)
				}
				if width == 390 && pc.dark {
					if err := setColorScheme(tab, "dark"); err != nil {
						t.Fatal(err)
					}
					if axeJS != nil {
						runAxe(t, tab, where+" (dark)", `{runOnly: {type: 'rule', values: ['color-contrast']}, resultTypes: ['violations']}`)
					}
					if err := setColorScheme(tab, ""); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}

	entry := "/s/" + w.slug
	check([]pageCase{
		{"signin", "/signin?return=" + entry, 200, true},
		{"signin-verify", "/signin/verify", 200, false},
		{"privacy", "/privacy", 200, true},
		{"entry-anonymous", entry, 200, false},
	})

	// Sign in through the forms.
	if err := chromedp.Do(tab,
		chromedp.Navigate(site.URL+"/signin"),
		chromedp.SetValue(chromedp.CSS("#signin-email"), "ada@example.com"),
	); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.RunResponse(tab, chromedp.Click(chromedp.CSS(`form[action="/signin/code"] button`))); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tab, chromedp.SetValue(chromedp.CSS("#verify-code"), fakeCode)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.RunResponse(tab, chromedp.Click(chromedp.CSS(`form[action="/signin/verify"] button`))); err != nil {
		t.Fatal(err)
	}
	acct := w.acc.accountID("ada@example.com")
	if acct == 0 {
		t.Fatal("the browser did not sign in")
	}
	bg := context.Background()
	if err := w.fol.Follow(bg, acct, w.evil.Slug); err != nil {
		t.Fatal(err)
	}
	if _, err := w.hooks.AddWebhook(bg, acct, "https://hooks.example/probity/"+strings.Repeat("long-path-", 12)); err != nil {
		t.Fatal(err)
	}
	tok := w.fol.token(unsubToken{account: acct, action: web.ActionUnfollow, entry: w.evil.ID})
	check([]pageCase{
		{"entry-signed-in", entry, 200, true},
		{"entry-followed", "/s/" + w.evil.Slug, 200, false},
		{"followed", "/followed", 200, true},
		{"account", "/account", 200, true},
		{"webhooks", "/account/webhooks", 200, true},
		{"webhook-log", "/account/webhooks/1", 200, false},
		{"unsubscribe", "/unsubscribe/" + tok, 200, false},
	})
	// The unsubscribe page after its button, with Undo.
	if _, err := chromedp.RunResponse(tab, chromedp.Navigate(site.URL+"/unsubscribe/"+tok)); err != nil {
		t.Fatal(err)
	}
	resp, err := chromedp.RunResponse(tab, chromedp.Click(chromedp.CSS(`form[action="/unsubscribe/`+tok+`"] button`)))
	if err != nil || resp.Status != 200 {
		t.Fatalf("unsubscribe: %v, %v", resp, err)
	}
	if axeJS != nil {
		runAxe(t, tab, "unsubscribe done", `{resultTypes: ['violations']}`)
	}
	if w.fol.following(acct, w.evil.ID) {
		t.Error("the unsubscribe button did not unfollow")
	}
}
