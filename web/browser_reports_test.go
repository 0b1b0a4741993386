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
)

// TestBrowserReportPages walks the report pages in headless Chromium: a Verified
// entry's page with its report link, the report form, sending it, then an operator
// (signed in through the forms) with the queue, the report, withdrawing Verified, and
// the entry page that says so. Each page at 1280 and 390 px: nothing runs, no CSP
// violation, no sideways scrolling, no serious or critical axe violation
// (PROBITY_AXE_JS).
func TestBrowserReportPages(t *testing.T) {
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
	} else if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not set in CI", axeEnv)
	}
	var siteHandler atomic.Pointer[http.Handler]
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*siteHandler.Load()).ServeHTTP(w, r)
	}))
	defer site.Close()
	rs := newReportSiteAt(t, site.URL, generous)
	siteHandler.Store(&rs.h)

	ctx, cancel := context.WithTimeout(t.Context(), 180*time.Second)
	defer cancel()
	allocCtx, allocCancel := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath), chromedp.Headless, chromedp.NoSandbox, chromedp.NoFirstRun,
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-background-networking", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
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
	check := func(path string, status int64) {
		t.Helper()
		for _, width := range []int64{1280, 390} {
			where := fmt.Sprintf("%s at %d px", path, width)
			if err := chromedp.Do(tab, chromedp.EmulateViewport(width, 900)); err != nil {
				t.Fatal(err)
			}
			resp, err := chromedp.Run(tab, chromedp.NavigateResponse(site.URL+path))
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			if resp.Status != status {
				t.Errorf("%s: HTTP %d, want %d", where, resp.Status, status)
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
				t.Errorf("%s: the page scrolls sideways (%d px in %d)", where, of.ScrollWidth, of.InnerWidth)
			}
			if axeJS != nil && width == 1280 {
				runAxe(t, tab, where, `{resultTypes: ['violations']}`)
			}
		}
	}
	entry := "/s/" + rs.slug
	check(entry, 200)
	check(entry+"/report", 200)
	// Send a report through the form.
	if err := chromedp.Do(tab, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(site.URL+entry+"/report"),
		chromedp.SetValue(chromedp.CSS("#report-text"), "It uploads the files it reads to <b>elsewhere</b>.")); err != nil {
		t.Fatal(err)
	}
	resp, err := chromedp.RunResponse(tab, chromedp.Click(chromedp.CSS(`form[action="`+entry+`/report"] button`)))
	if err != nil || resp.Status != 200 {
		t.Fatalf("sending the report: %v, %v", resp, err)
	}
	if axeJS != nil {
		runAxe(t, tab, "report sent", `{resultTypes: ['violations']}`)
	}
	// The operator signs in through the forms.
	if err := chromedp.Do(tab, chromedp.Navigate(site.URL+"/signin"), chromedp.SetValue(chromedp.CSS("#signin-email"), "op@example.org")); err != nil {
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
	check("/ops/reports", 200)
	check("/ops/reports/1", 200)
	if err := chromedp.Do(tab, chromedp.Navigate(site.URL+"/ops/reports/1"),
		chromedp.SetValue(chromedp.CSS("#withdraw-reason"), "It uploads the files it reads.")); err != nil {
		t.Fatal(err)
	}
	resp, err = chromedp.RunResponse(tab, chromedp.Click(chromedp.CSS(`form[action="/ops/reports/1/withdraw"] button`)))
	if err != nil || resp.Status != 200 {
		t.Fatalf("withdrawing: %v, %v", resp, err)
	}
	check(entry, 200)
	text, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS("main")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "Verified withdrawn on") {
		t.Errorf("the entry page does not say Verified withdrawn:\n%.600s", text)
	}
}
