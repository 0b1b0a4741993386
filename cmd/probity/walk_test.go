package main

// TestBrowserMaintainerWalk walks a maintainer's whole way through issue 18 in headless
// Chromium (as TestBrowserFollowerJourney: /usr/bin/chromium, skipped when it is
// missing unless CI=true; axe-core from PROBITY_AXE_JS, required under CI=true, run on
// every page, failing on serious and critical violations):
//
//  0. The site is what `serve --accounts` runs, in process: accountFlags.build's write
//     paths with the claims, listings, disputes, operators, reports and baselines added
//     by serve's own functions (addClaims … addBaselines, in serve's order), published
//     by publish. The entry is a real MCP server on loopback over https, whose origin
//     also serves /.well-known/probity-claim; serve trusts its certificate as with
//     --ca-file. The rounds are real (a probe of the server, the history processor, the
//     approved baselines: envFlags.runner's parts) on the test's clock, so that a
//     difference is confirmed without waiting a minute.
//  1. Sign in with the code from the e-mail, "Claim this entry", the well-known way:
//     the token read from the page is served at the origin, Check: a maintainer. The
//     entry says claimed, and no public page names the maintainer's address. Before the
//     claim the edit and baseline pages are 403; the console is 403 to the maintainer,
//     and to the operator's account until it is granted the role.
//  2. Edit the listing twice: the entry shows the description, markup included, as
//     text and the link; the history shows the operator's edit with before and after.
//  3. Approve the baseline; a round after it: the three *_unchanged_vs_approved checks
//     are VERIFIED on the Checks tab. The server drifts, rounds confirm it: they are
//     not passing any more (FAILED).
//  4. Contest a finding from the Checks tab's Contest link: statement with markup
//     (shown as text), evidence URL; the entry shows the open dispute, its record.
//  5. An operator (granted as `probity operators add` does) decides it on
//     /ops/disputes, which shows the statement as text; the entry shows the outcome,
//     its reason as text, and the outcome's bundle.

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/probity-dev/probity/baseline"
	"github.com/probity-dev/probity/checks/probe"
	"github.com/probity-dev/probity/claims"
	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/listing"
	"github.com/probity-dev/probity/locator"
	"github.com/probity-dev/probity/mail"
	"github.com/probity-dev/probity/mail/sink"
	"github.com/probity-dev/probity/operators"
	"github.com/probity-dev/probity/rounds"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/translog"
)

// approvedChecks are the checks that compare a round with the approved baseline.
var approvedChecks = []string{"toolset_unchanged_vs_approved", "schema_unchanged_vs_approved", "surface_unchanged_vs_approved"}

func TestBrowserMaintainerWalk(t *testing.T) {
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
	const (
		maintainerEmail = "maintainer@example.org"
		operatorEmail   = "operator@example.org"
	)

	// 0. The MCP server over https, its origin serving the claim token once told.
	mcpSrv := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	mcpSrv.AddTool(&mcp.Tool{Name: "get_weather", Description: "Returns the weather for a city.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}, noResult)
	var mu sync.Mutex
	wellKnown := ""
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return mcpSrv }, nil)
	origin := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == claims.WellKnownPath {
			mu.Lock()
			b := wellKnown
			mu.Unlock()
			if b == "" {
				http.NotFound(w, r)
				return
			}
			_, _ = io.WriteString(w, b)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	// A probe or a claim check closing its connection early is no failure of this test.
	origin.Config.ErrorLog = log.New(io.Discard, "", 0)
	origin.StartTLS()
	defer origin.Close()
	drift := func() {
		mcpSrv.AddTool(&mcp.Tool{Name: "delete_city", Description: "Deletes a city.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}, noResult)
	}

	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: origin.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	// serve's flags: --data-dir, --allow-loopback, --ca-file, --accounts with the SMTP
	// server, the default claim re-check, re-check interval and schedule.
	ef := envFlags{dataDir: filepath.Join(dir, "data"), allowLoopback: true, caFile: caFile}
	mails, err := sink.Start("127.0.0.1:0", filepath.Join(dir, "mail"), sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer mails.Close()
	af := accountFlags{on: true, smtp: mail.Config{Host: mails.Host(), Port: mails.Port(), Security: "none", From: "Probity test <notify@probity.test>"},
		claims: claimFlags{recheck: claims.DefaultRecheckInterval}}
	lsf := listingFlags{recheck: listing.DefaultRecheckInterval}
	schedule := rounds.Schedule{Cadence: rounds.DefaultCadence, FirstSpread: 15 * time.Minute}
	if err := validateSchedule(schedule); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{SQLitePath: filepath.Join(ef.dataDir, "probity.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	_, signer, err := ef.openSigner(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	base := "http://" + addr
	w, err := af.build(st, ef.keyDirectory(), ef.dataDir, base, ef.allowLoopback, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	// serve's order: claims, listings, disputes, operators, reports, baselines.
	if err := w.addClaims(af.claims, st, &ef, schedule, logger); err != nil {
		t.Fatal(err)
	}
	if err := w.addListings(lsf, st, signer, logger); err != nil {
		t.Fatal(err)
	}
	if err := w.addDisputes(st, signer, logger); err != nil {
		t.Fatal(err)
	}
	if err := w.addOperators(st, schedule, logger); err != nil {
		t.Fatal(err)
	}
	if err := w.addReports(st, signer, reportsAudit{w.operators}, logger); err != nil {
		t.Fatal(err)
	}
	if err := w.addBaselines(st, signer, logger); err != nil {
		t.Fatal(err)
	}
	// The transparency log, as serve starts it (checkpoints as often as the demo's),
	// so that the records' bundles are published.
	siteCtx, stopSite := context.WithCancel(context.Background())
	_, waitLog, err := ef.startLog(siteCtx, st, logFlags{witnessTimeout: translog.DefaultWitnessTimeout, checkpointInterval: translog.MinCheckpointInterval}, logger)
	if err != nil {
		stopSite()
		t.Fatal(err)
	}
	srv, err := publish(siteCtx, st, w.doc, ef.logDirectory(), addr, "", siteOptions{write: w}, logger)
	if err != nil {
		stopSite()
		waitLog()
		t.Fatal(err)
	}
	defer func() { stopSite(); waitLog(); srv.Shutdown(context.Background()) }()

	// The rounds: envFlags.runner's prober (trusting --ca-file), history processor and
	// approved baselines, on the test's clock. The key is valid from openSigner's time.
	start := time.Now().UTC().Truncate(time.Second).Add(time.Second)
	clock := &testClock{t: start}
	pool, err := ef.rootCAs()
	if err != nil {
		t.Fatal(err)
	}
	proc, err := history.NewProcessor(history.Config{Store: st, Signer: signer, ToolVersion: version,
		Baselines: baseline.Approvals{Store: st}, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	runner, err := rounds.NewRunner(rounds.Config{Store: st, Signer: signer, ToolVersion: version, Schedule: schedule,
		Prober:  clockedProber{p: probe.New(probe.Config{Version: version, AllowLoopback: true, RootCAs: pool, Logger: logger}), now: clock.Now},
		History: proc, Baselines: baseline.Approvals{Store: st}, Now: clock.Now, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	loc, err := locator.NormalizeURL(origin.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	entry, _, err := st.AddEntry(ctx, store.NewEntry{SlugBase: "weather", Kind: store.KindRemote, Locator: loc, Name: "Weather", Source: "import"})
	if err != nil {
		t.Fatal(err)
	}
	round := func(at time.Duration) {
		t.Helper()
		clock.Set(start.Add(at))
		e, err := st.Entry(ctx, entry.Slug)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := runner.RunEntry(ctx, e, store.Due{EntryID: e.ID, Reason: store.ReasonCadence, At: clock.Now()}, "")
		if err != nil || rep.Outcome != rounds.SignedFull {
			t.Fatalf("round at %v: %+v, %v; want %s\n%s", at, rep.Outcome, err, rounds.SignedFull, tail(logs.String(), 2000))
		}
	}
	round(0)

	// The browser.
	bctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	allocCtx, allocCancel := chromedp.NewExecAllocator(bctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath), chromedp.Headless, chromedp.NoSandbox, chromedp.NoFirstRun,
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
	)...)
	defer allocCancel()
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
	// load runs the steps, waits for the document they load, wants HTTP 200, and runs
	// axe-core on it.
	load := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		resp, err := chromedp.RunResponse(tab, steps...)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if resp != nil && resp.Status != http.StatusOK {
			t.Fatalf("%s: HTTP %d", what, resp.Status)
		}
		if axeJS != nil {
			runAxe(t, tab, what)
		}
	}
	// refused navigates to url and wants the site to refuse it with HTTP 403.
	refused := func(what, url string) {
		t.Helper()
		resp, err := chromedp.RunResponse(tab, chromedp.Navigate(url))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if resp == nil || resp.Status != http.StatusForbidden {
			t.Errorf("%s: %+v, want HTTP 403", what, resp)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		return s
	}
	count := func(sel string) int {
		t.Helper()
		n, err := chromedp.Run(tab, chromedp.Evaluate[int](`document.querySelectorAll(`+jsString(sel)+`).length`))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	signIn := func(email string, n int) {
		t.Helper()
		do("enter the address", chromedp.SetValue(chromedp.CSS("#signin-email"), email))
		load("ask for a code", chromedp.Click(chromedp.CSS(`form[action="/signin/code"] button`)))
		got, err := mails.Wait(bctx, n)
		if err != nil {
			t.Fatalf("no sign-in e-mail: %v\n%s", err, tail(logs.String(), 2000))
		}
		code := regexp.MustCompile(`\b(\d{8})\b`).FindSubmatch(got[n-1].Data)
		if code == nil || len(got[n-1].To) != 1 || got[n-1].To[0] != email {
			t.Fatalf("the sign-in e-mail to %v holds no 8-digit code:\n%s", got[n-1].To, got[n-1].Data)
		}
		do("enter the code", chromedp.SetValue(chromedp.CSS("#verify-code"), string(code[1])))
		load("sign in", chromedp.Click(chromedp.CSS(`form[action="/signin/verify"] button`)))
	}
	slug := entry.Slug
	entryURL := base + "/s/" + slug

	// 1. Sign in and claim the entry with the well-known file.
	load("the entry page", chromedp.Navigate(entryURL))
	load("Claim this entry", chromedp.Click(chromedp.CSS(`a[href="/s/`+slug+`/claim"]`)))
	signIn(maintainerEmail, 1)
	if loc, _ := chromedp.Run(tab, chromedp.Location()); loc != entryURL+"/claim" {
		t.Fatalf("signing in led to %s, want back to the Claim page", loc)
	}
	refused("the edit page before the claim", entryURL+"/edit")
	refused("the baseline page before the claim", entryURL+"/baseline")
	load("the Claim page, once more", chromedp.Navigate(entryURL+"/claim"))
	load("Get a token (well-known)", chromedp.Click(chromedp.CSS(`form[action="/s/`+slug+`/claim"]:has(input[name=method][value="`+claims.MethodWellKnown+`"]) button`)))
	token := strings.TrimSpace(text(".claim-token"))
	if !strings.HasPrefix(token, claims.TokenPrefix) {
		t.Fatalf("the Claim page shows the token %q", token)
	}
	if where := text(".card-facts dd code"); !strings.Contains(where, origin.URL+claims.WellKnownPath) {
		t.Errorf("the token goes to %q, want %s", where, origin.URL+claims.WellKnownPath)
	}
	mu.Lock()
	wellKnown = token + "\n"
	mu.Unlock()
	load("Check", chromedp.Click(chromedp.CSS(`form[action="/s/`+slug+`/claim/check"] button`)))
	if got := text("main"); text("h1") != "Claimed" || !strings.Contains(got, "You are a maintainer") {
		t.Fatalf("after Check the page says %q", got)
	}
	load("Back to the entry", chromedp.Click(chromedp.CSS(`main a[href="/s/`+slug+`"]`)))
	if count("h1 .state-claimed") != 1 {
		t.Errorf("the entry page does not say claimed: %q", text("h1"))
	}

	// 2. The listing, twice: the history has a before and an after.
	const (
		firstDescription = "Operated by the weather team."
		description      = `Operated by us <b>since 2026</b> <script>window.__pwned=1</script> & more.`
	)
	load("the Claim page, a maintainer's", chromedp.Click(chromedp.CSS(`a[href="/s/`+slug+`/claim"]`)))
	if n := count(`ul.maintain a[href="/s/` + slug + `/edit"], ul.maintain a[href="/s/` + slug + `/baseline"], ul.maintain a[href="/s/` + slug + `/checks"]`); n != 3 {
		t.Errorf("the Claim page of a maintainer links %d of the edit, baseline and Checks pages, want 3", n)
	}
	load("Edit the listing", chromedp.Click(chromedp.CSS(`ul.maintain a[href="/s/`+slug+`/edit"]`)))
	do("the first description", chromedp.SetValue(chromedp.CSS("#description"), firstDescription))
	load("Save", chromedp.Click(chromedp.CSS(`form[action="/s/`+slug+`/edit"] button[type=submit]`)))
	if got := text("main"); !strings.Contains(got, "Listing saved") {
		t.Fatalf("after Save the edit page says %q", got)
	}
	load("the edit page again", chromedp.Navigate(entryURL+"/edit"))
	if got, err := chromedp.Run(tab, chromedp.Value(chromedp.CSS("#description"))); err != nil || got != firstDescription {
		t.Errorf("the edit page shows the saved description %q (%v), want %q", got, err, firstDescription)
	}
	do("the description with markup", chromedp.SetValue(chromedp.CSS("#description"), description))
	do("a link", chromedp.SetValue(chromedp.CSS("#link_label_1"), "Docs <i>here</i>"), chromedp.SetValue(chromedp.CSS("#link_url_1"), "https://docs.example/weather"))
	load("Save again", chromedp.Click(chromedp.CSS(`form[action="/s/`+slug+`/edit"] button[type=submit]`)))
	if got := text("main"); !strings.Contains(got, "Listing saved") {
		t.Fatalf("after the second Save the edit page says %q", got)
	}
	load("the entry with the listing", chromedp.Navigate(entryURL))
	if got := text("#from-operator .operator-text"); got != description {
		t.Errorf("the entry shows the description %q, want it as typed %q", got, description)
	}
	if n := count("#from-operator b, #from-operator i, #from-operator script"); n != 0 {
		t.Errorf("the listing's markup became %d elements", n)
	}
	if pwned, err := chromedp.Run(tab, chromedp.Evaluate[bool](`window.__pwned === 1`)); err != nil || pwned {
		t.Errorf("the listing's script ran (%v)", err)
	}
	if got := text(`#from-operator a[href="https://docs.example/weather"][rel~="nofollow"]`); got != "Docs <i>here</i>" {
		t.Errorf("the link's label is %q", got)
	}
	load("the history", chromedp.Navigate(entryURL+"/history"))
	hist := text("main")
	if want := "description edited by the operator\n\nThe server's operator edited description.\n\nText before\n" + firstDescription + "\nText after\n" + description + "\n"; !strings.Contains(hist, want) {
		t.Errorf("the history lacks the edit with its before and after %q: %q", want, hist)
	}
	for _, want := range []string{"links edited by the operator", "Docs <i>here</i> <https://docs.example/weather>"} {
		if !strings.Contains(hist, want) {
			t.Errorf("the history lacks %q: %q", want, hist)
		}
	}

	// 3. Approve the baseline; a round after it verifies; the drift fails it.
	load("the Claim page, again", chromedp.Navigate(entryURL+"/claim"))
	load("Approve its tools as the baseline", chromedp.Click(chromedp.CSS(`ul.maintain a[href="/s/`+slug+`/baseline"]`)))
	load("Approve these tools", chromedp.Click(chromedp.CSS(`form[action="/s/`+slug+`/baseline"] button`)))
	if got := text("main"); !strings.Contains(got, "approved") || count(`main [role=status]`) != 1 {
		t.Fatalf("after Approve the baseline page says %q", got)
	}
	round(2 * time.Minute)
	status := func(check string) string {
		t.Helper()
		return strings.TrimSpace(text(`#check-` + check + ` td:nth-child(2)`))
	}
	load("the Checks tab after the approval", chromedp.Navigate(entryURL+"/checks"))
	for _, c := range approvedChecks {
		if got := status(c); got != "VERIFIED" {
			t.Errorf("after the approval %s is %s, want VERIFIED", c, got)
		}
	}
	drift()
	round(3 * time.Minute)
	round(4*time.Minute + time.Second)
	changes, err := st.Changes(ctx, store.ChangeFilter{EntryID: entry.ID, WithoutEnvelopes: true, Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	confirmed := false
	for _, c := range changes {
		confirmed = confirmed || c.Kind == history.EventTools
	}
	if !confirmed {
		t.Fatal("the rounds recorded no confirmed tools change")
	}
	load("the history after the drift", chromedp.Navigate(entryURL+"/history"))
	hist = text("main")
	for _, want := range []string{"new approved baseline", "1 tool added\n\ndiffers from the approved baseline\n\nTools added\ndelete_city"} {
		if !strings.Contains(hist, want) {
			t.Errorf("the history after the approval and the drift lacks %q: %q", want, hist)
		}
	}
	load("the Checks tab after the drift", chromedp.Navigate(entryURL+"/checks"))
	for _, c := range approvedChecks {
		if got := status(c); got != "FAILED" {
			t.Errorf("after the drift %s is %s, want FAILED", c, got)
		}
	}

	// 4. Contest a finding from the Checks tab.
	const (
		statement = "We approved <b>this</b> change <script>window.__pwned=2</script> on purpose."
		evidence  = "https://evidence.example/changelog"
	)
	do("open Contest a finding", chromedp.Click(chromedp.CSS(`details.contest summary`)))
	load("Contest toolset_unchanged_vs_approved", chromedp.Click(chromedp.Search(`//details[contains(@class,"contest")]//a[code="toolset_unchanged_vs_approved"]`)))
	do("the statement", chromedp.SetValue(chromedp.CSS("#statement"), statement), chromedp.SetValue(chromedp.CSS("#evidence"), evidence))
	load("Contest in public", chromedp.Click(chromedp.CSS(`form[action="/s/`+slug+`/contest"] button`)))
	load("the entry with the dispute", chromedp.Navigate(entryURL))
	disp := text("#disputes")
	bundleOK(t, tab, "#disputes > ol > li > p:first-child")
	if !regexp.MustCompile(`Dispute 1: the check toolset_unchanged_vs_approved \(FAILED\) of round \S+, opened .* · record \d+`).MatchString(disp) ||
		!strings.Contains(disp, "Open: an operator has not decided it yet.") || !strings.Contains(disp, evidence) {
		t.Errorf("the entry's disputes: %q", disp)
	}
	if got := text("#disputes blockquote.statement"); got != statement {
		t.Errorf("the statement is shown as %q, want as typed %q", got, statement)
	}
	if n := count("#disputes blockquote b, #disputes blockquote script"); n != 0 {
		t.Errorf("the statement's markup became %d elements", n)
	}
	if n := count(`#disputes a[href^="/bundle/"]`); n > 1 {
		t.Errorf("%d bundle links for one record", n)
	}

	// 5. The operator decides it.
	refused("the console's disputes, as the maintainer", base+"/ops/disputes")
	load("the account page", chromedp.Navigate(base+"/account"))
	load("Sign out", chromedp.Click(chromedp.CSS(`form[action="/signout"] button`)))
	load("sign in as the operator", chromedp.Navigate(base+"/signin"))
	signIn(operatorEmail, 2)
	refused("the console's disputes, before the operator role", base+"/ops/disputes")
	ops, err := operators.New(operators.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if _, added, err := ops.Grant(ctx, operators.CLI, operatorEmail); err != nil || !added {
		t.Fatalf("probity operators add %s: added %v, %v", operatorEmail, added, err)
	}
	const reason = "The baseline stands <em>as approved</em>."
	load("the console's disputes", chromedp.Navigate(base+"/ops/disputes"))
	if got := text(`form[action^="/ops/disputes/"]`); got == "" {
		t.Fatal("the console lists no open dispute")
	}
	if got := text(`main section.card pre`); got != statement {
		t.Errorf("the console shows the statement %q, want it as typed %q", got, statement)
	}
	if n := count("main section.card pre b, main section.card pre script"); n != 0 {
		t.Errorf("the statement's markup became %d elements in the console", n)
	}
	do("reject", chromedp.Click(chromedp.CSS(`form[action^="/ops/disputes/"] input[name=decision][value=reject]`)),
		chromedp.SetValue(chromedp.CSS(`form[action^="/ops/disputes/"] input[name=reason]`), reason))
	load("Decide", chromedp.Click(chromedp.CSS(`form[action^="/ops/disputes/"] button`)))
	load("the entry with the outcome", chromedp.Navigate(entryURL))
	disp = text("#disputes")
	if !regexp.MustCompile(`Outcome: rejected: the finding stands, decided .* · record \d+`).MatchString(disp) || !strings.Contains(disp, reason) {
		t.Errorf("the entry's disputes after the decision: %q", disp)
	}
	bundleOK(t, tab, "#disputes > ol > li > p:nth-of-type(3)")
	if n := count("#disputes blockquote em"); n != 0 {
		t.Errorf("the reason's markup became %d elements", n)
	}

	// No public page names the maintainer (or the operator).
	for _, p := range []string{"/s/" + slug, "/s/" + slug + "/history", "/s/" + slug + "/checks", "/s/" + slug + ".json", "/changes"} {
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: HTTP %d", p, resp.StatusCode)
		}
		for _, who := range []string{maintainerEmail, operatorEmail, "maintainer@", "operator@"} {
			if strings.Contains(string(b), who) {
				t.Errorf("the public page %s names %s", p, who)
			}
		}
	}
	if strings.Contains(logs.String(), token) || strings.Contains(logs.String(), token[len(claims.TokenPrefix):]) {
		t.Error("the claim token appears in the site's log")
	}
	t.Logf("the maintainer's walk took %.1f s", time.Since(began).Seconds())
}

// bundleOK wants the bundle link in the element sel of the tab's page to lead to the
// record's bundle within 10 s (once the log's next checkpoint holds it).
func bundleOK(t *testing.T, tab context.Context, sel string) {
	t.Helper()
	href, err := chromedp.Run(tab, chromedp.Evaluate[string](`(document.querySelector(`+jsString(sel+` a[href^="/bundle/"]`)+`) || {}).href || ''`))
	if err != nil || href == "" {
		t.Errorf("no bundle link in %s (%v)", sel, err)
		return
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		resp, err := http.Get(href)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK && json.Valid(b) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("the bundle %s: HTTP %d %.300s", href, resp.StatusCode, b)
			return
		}
	}
}

// jsString quotes s as a JavaScript string literal (for selectors without a backtick).
func jsString(s string) string {
	return "`" + s + "`"
}
