package web_test

// TestBrowserListingPages opens the maintainer's listing pages in headless Chromium as
// TestBrowserWritePages does the other write pages (axe-core from PROBITY_AXE_JS): a
// maintainer signs in through the forms, opens the edit form, types hostile text and
// saves it through the form; the form refused with its typed text kept, the entry page
// with the operator's text, and the history with the edit: at 1280 and 390 px, nothing
// runs, no CSP violation, no sideways scrolling, no serious or critical axe violation.

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

func TestBrowserListingPages(t *testing.T) {
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
	} else {
		t.Logf("%s is not set: no accessibility checks", axeEnv)
	}
	var siteHandler atomic.Pointer[http.Handler]
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*siteHandler.Load()).ServeHTTP(w, r)
	}))
	defer site.Close()
	w := newListingSiteAt(t, site.URL)
	siteHandler.Store(&w.h)

	ctx, cancel := context.WithTimeout(t.Context(), 180*time.Second)
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
	// here checks the page the tab shows.
	here := func(where string, width int64) {
		t.Helper()
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
	}
	check := func(paths ...string) {
		t.Helper()
		for _, width := range []int64{1280, 390} {
			if err := chromedp.Do(tab, chromedp.EmulateViewport(width, 900)); err != nil {
				t.Fatal(err)
			}
			for _, p := range paths {
				where := fmt.Sprintf("%s at %d px", p, width)
				resp, err := chromedp.Run(tab, chromedp.NavigateResponse(site.URL+p))
				if err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				if resp.Status != 200 {
					t.Errorf("%s: HTTP %d", where, resp.Status)
					continue
				}
				here(where, width)
			}
		}
	}

	// Sign in through the forms; the account maintains the entry.
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
	w.roles.grant(acct, w.entryID)
	edit := "/s/" + w.slug + "/edit"
	check(edit)

	// A refused form keeps what was typed; then a good one is saved.
	hostile := `<img src=x onerror="document.title='pwned'"> <script>document.title='pwned'</script>`
	if err := chromedp.Do(tab, chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(site.URL+edit),
		chromedp.SetValue(chromedp.CSS("#description"), hostile),
		chromedp.SetValue(chromedp.CSS("#link_label_1"), "Docs"),
		chromedp.SetValue(chromedp.CSS("#link_url_1"), "https://docs.example/<b>"),
		chromedp.SetValue(chromedp.CSS("#link_label_2"), "only a label"),
	); err != nil {
		t.Fatal(err)
	}
	resp, err := chromedp.RunResponse(tab, chromedp.Click(chromedp.CSS(`form[action="`+edit+`"] button`)))
	if err != nil || resp.Status != http.StatusBadRequest {
		t.Fatalf("the refused form: %v, %v", resp, err)
	}
	here("the refused form", 1280)
	if typed, err := chromedp.Run(tab, chromedp.Value(chromedp.CSS("#description"))); err != nil || typed != hostile {
		t.Errorf("the refused form lost the typed text: %q, %v", typed, err)
	}
	if err := chromedp.Do(tab, chromedp.Clear(chromedp.CSS("#link_label_2"))); err != nil {
		t.Fatal(err)
	}
	if resp, err = chromedp.RunResponse(tab, chromedp.Click(chromedp.CSS(`form[action="`+edit+`"] button`))); err != nil || resp.Status != http.StatusOK {
		t.Fatalf("saving: %v, %v", resp, err)
	}
	l, err := w.st.MaintainerListing(context.Background(), w.entryID)
	if err != nil || l.Description != hostile || len(l.Links) != 1 {
		t.Fatalf("the saved listing: %+v, %v", l, err)
	}
	check("/s/"+w.slug, "/s/"+w.slug+"/history")
	if title, err := chromedp.Run(tab, chromedp.Title()); err != nil || strings.Contains(title, "pwned") {
		t.Errorf("the maintainer's text ran: title %q, %v", title, err)
	}
}
