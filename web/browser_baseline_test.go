package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/probity-dev/probity/web"
)

// TestBrowserBaselinePage opens a maintainer's baseline page in headless Chromium (as
// TestBrowserWritePages does the other write pages): an approved baseline beside a
// drifted newest round, at 1280 and 390 px, inert, without sideways scrolling (the
// fingerprints are long), without a serious or critical axe violation (PROBITY_AXE_JS),
// and its Approve button approves.
func TestBrowserBaselinePage(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing in CI: %v", chromiumPath, err)
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
	} else {
		t.Logf("%s is not set: no accessibility checks", axeEnv)
	}
	var siteHandler atomic.Pointer[http.Handler]
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*siteHandler.Load()).ServeHTTP(w, r)
	}))
	defer site.Close()
	w, roles, fb, _ := newBaselineClaimSite(t, web.RateLimit{}, site.URL)
	siteHandler.Store(&w.h)

	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	allocCtx, allocCancel := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath), chromedp.Headless, chromedp.NoSandbox, chromedp.NoFirstRun,
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("hide-scrollbars", false), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
	)...)
	defer allocCancel()
	tab, tabCancel := chromedp.NewContext(allocCtx)
	defer tabCancel()
	if err := chromedp.Do(tab, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		for _, src := range []string{cspWatch, string(axeJS)} {
			if src == "" {
				continue
			}
			if _, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: src}); err != nil {
				return err
			}
		}
		return nil
	})); err != nil {
		t.Fatalf("new tab: %v", err)
	}

	// Sign in through the forms; ada maintains the entry, whose baseline 1 the newest
	// round no longer matches.
	if err := chromedp.Do(tab, chromedp.Navigate(site.URL+"/signin"), chromedp.SetValue(chromedp.CSS("#signin-email"), "ada@example.com")); err != nil {
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
	roles.maintain(acct, w.entryID)
	fb.setNewest(w.entryID, 3, "v1")
	if _, err := fb.Approve(context.Background(), acct, w.slug); err != nil {
		t.Fatal(err)
	}
	fb.setNewest(w.entryID, 4, "v2")

	path := "/s/" + w.slug + "/baseline"
	for _, width := range []int64{1280, 390} {
		where := fmt.Sprintf("%s at %d px", path, width)
		if err := chromedp.Do(tab, chromedp.EmulateViewport(width, 900)); err != nil {
			t.Fatal(err)
		}
		resp, err := chromedp.RunResponse(tab, chromedp.Navigate(site.URL+path))
		if err != nil || resp.Status != 200 {
			t.Fatalf("%s: %v, %v", where, resp, err)
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
			runAxe(t, tab, where, `{resultTypes: ['violations']}`)
		}
	}
	resp, err := chromedp.RunResponse(tab, chromedp.Click(chromedp.CSS(`form[action="`+path+`"] button`)))
	if err != nil || resp.Status != 200 {
		t.Fatalf("approve: %v, %v", resp, err)
	}
	text, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil || !strings.Contains(text, "Baseline 2 approved") {
		t.Errorf("after Approve: %v\n%s", err, text)
	}
	if axeJS != nil {
		runAxe(t, tab, "baseline approved", `{resultTypes: ['violations']}`)
	}
}
