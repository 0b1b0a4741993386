package web_test

// TestBrowserOpsPages opens every page of the operator console in headless Chromium,
// as TestBrowserWritePages does the write paths' (same checks: nothing runs, no CSP
// violation, no sideways scrolling at 1280 and 390 px, no serious or critical axe
// violation, dark-scheme contrast), signed in through the forms as an operator, with
// an open dispute, a live and a lapsed claim, and a hidden change in the audit log.

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
)

func TestBrowserOpsPages(t *testing.T) {
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
	o := newOpsSite(t, writeOpts{base: site.URL})
	siteHandler.Store(&o.h)

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

	// Sign in through the forms, then become an operator.
	if err := chromedp.Do(tab,
		chromedp.Navigate(site.URL+"/signin"),
		chromedp.SetValue(chromedp.CSS("#signin-email"), "op@example.com"),
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
	acct := o.acc.accountID("op@example.com")
	if acct == 0 {
		t.Fatal("the browser did not sign in")
	}
	o.roles.setOperator(acct, true)

	pages := []pageCase{
		{"ops", "/ops", 200, true},
		{"ops-disputes", "/ops/disputes", 200, true},
		{"ops-changes-form", "/ops/changes", 200, false},
		{"ops-changes", "/ops/changes?entry=" + o.evil.Slug, 200, true},
		{"ops-delete", "/ops/entries/" + o.evil.Slug + "/delete", 200, true},
		{"ops-claims", "/ops/claims?all=1", 200, true},
		{"ops-audit", "/ops/audit", 200, true},
	}
	// An audit row with a long reason, to show the table at its widest.
	if err := o.console.HideChange(context.Background(), opsActor(acct), o.slug, 1, true, strings.Repeat("a maintenance page ", 10)); err != nil {
		t.Fatal(err)
	}
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
