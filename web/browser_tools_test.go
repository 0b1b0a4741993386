package web_test

import (
	"context"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// In a browser, the pages of an entry's tools link each other with plain links that
// resolve to the same entry's next and previous page, with no script and no
// Content-Security-Policy violation.
func TestBrowserToolPages(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing in CI (.ci/run installs Debian's chromium): %v", chromiumPath, err)
		}
		t.Skipf("%s is missing (apt-get install chromium): %v", chromiumPath, err)
	}
	be := newBigEntry(t, 300)
	srv := httptest.NewServer(be.new())
	defer srv.Close()

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	allocCtx, allocCancel := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath), chromedp.Headless, chromedp.NoSandbox, chromedp.NoFirstRun,
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-background-networking", true),
		chromedp.UserDataDir(t.TempDir()),
	)...)
	defer allocCancel()
	tab, tabCancel := chromedp.NewContext(allocCtx)
	defer tabCancel()
	if err := chromedp.Do(tab, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: cspWatch})
		return err
	})); err != nil {
		t.Fatalf("new tab: %v", err)
	}
	link := func(rel string) string {
		t.Helper()
		href, err := chromedp.Run(tab, chromedp.Evaluate[string](`(document.querySelector('a[rel="`+rel+`"]') || {}).href || ''`))
		if err != nil {
			t.Fatal(err)
		}
		return href
	}

	open(t, tab, srv.URL+"/s/big")
	st, err := inspect(tab)
	if err != nil {
		t.Fatal(err)
	}
	mustBeInert(t, "tools page 1", st, true)
	next := link("next")
	if next != srv.URL+"/s/big?tools=2#tools" || link("prev") != "" {
		t.Fatalf("page 1 links next %q, prev %q", next, link("prev"))
	}
	open(t, tab, next)
	if st, err = inspect(tab); err != nil {
		t.Fatal(err)
	}
	mustBeInert(t, "tools page 2", st, true)
	if !strings.Contains(st.Text, "page 2 of") || st.Target != "tools" {
		t.Errorf("page 2: target %q, text lacks its page:\n%.500s", st.Target, st.Text)
	}
	if prev := link("prev"); prev != srv.URL+"/s/big?tools=1#tools" {
		t.Errorf("page 2 links prev %q", prev)
	}
}
