package web_test

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/checks"
	"github.com/probity-dev/probity/checks/fixtures"
	"github.com/probity-dev/probity/checks/probe"
	"github.com/probity-dev/probity/checks/supply"
	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/keys/signing"
	"github.com/probity-dev/probity/rounds"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/verifier"
	"github.com/probity-dev/probity/verifier/cli"
	"github.com/probity-dev/probity/web"
)

// hostile is a tool description with markup and a zero-width space.
const hostile = "Search. <script>alert(1)</script> <img src=x onerror=alert(1)> zero\u200bwidth"

// hiddenText is the text of the change that is hidden; it must appear nowhere.
const hiddenText = "HIDDEN-OPERATOR-TEXT"

// scripted is a Prober that answers with a real observation of a fleet server, its
// tools replaced by the current script, at the fake clock's time.
type scripted struct {
	template *checks.Observation
	now      *time.Time
	tools    []json.RawMessage
}

func (s *scripted) Probe(ctx context.Context, url string) (*checks.Observation, error) {
	obs := *s.template
	obs.URL, obs.StartedAt = url, *s.now
	obs.Tools.Tools = s.tools
	return &obs, nil
}

// canned is a supply Collector with the facts of a well-kept repository.
type canned struct{}

func (canned) Collect(ctx context.Context, target supply.Target, tools []json.RawMessage, ep *supply.EndpointFacts) *supply.Facts {
	kind, locator := target.Kind, target.Locator
	now := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	repo := "https://github.com/acme/search-mcp"
	return &supply.Facts{
		Kind: kind, Locator: locator,
		Repo: &supply.RepoFacts{Source: supply.Source{Outcome: supply.SourceOK, FetchedAt: now, URL: repo}, URL: repo, Owner: "acme",
			Name: "search-mcp", Exists: true, LicenseSPDX: "MIT", LastPush: now.Add(-48 * time.Hour), LastCommit: now.Add(-48 * time.Hour),
			HeadCommit: "0123456789abcdef0123456789abcdef01234567"},
		Tools:    tools,
		Endpoint: ep,
	}
}

type fixture struct {
	h    http.Handler
	st   store.Store
	slug string
	now  time.Time
	logs *strings.Builder
	// toolsChange is the number of the recorded tools change.
	toolsChange int64
}

func tool(name, desc string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"name": name, "description": desc, "inputSchema": map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}})
	return b
}

// setup builds a SQLite store with one remote entry: a baseline, a confirmed tools
// change that brings the hostile description and a new tool, an operator edit that is
// hidden, and a supply run.
func setup(t *testing.T, rl web.RateLimit) *fixture {
	t.Helper()
	return setupWith(t, rl, hostile)
}

// openStore returns a migrated SQLite store in a temporary directory, closed at the
// end of the test, and a signing key made an hour before at, opened at at.
func openStore(tb testing.TB, at time.Time) (store.Store, *keys.Document, *signing.Signer) {
	tb.Helper()
	ctx := context.Background()
	dir := tb.TempDir()
	st, err := store.Open(ctx, store.Config{SQLitePath: filepath.Join(dir, "probity.db")})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		tb.Fatal(err)
	}
	keyDir := filepath.Join(dir, "keys")
	if _, err := signing.GenerateDir(keyDir, "https://probity.test", at.Add(-time.Hour), nil); err != nil {
		tb.Fatal(err)
	}
	doc, signer, err := signing.OpenDir(keyDir, at)
	if err != nil {
		tb.Fatal(err)
	}
	return st, doc, signer
}

// setupWith is setup with desc as the tool description the tools change brings.
func setupWith(t *testing.T, rl web.RateLimit, desc string) *fixture {
	t.Helper()
	ctx := context.Background()
	start := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	now := start
	st, doc, signer := openStore(t, start)
	fleet, err := fixtures.StartFleet(fixtures.FleetConfig{N: 1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fleet.Close() })
	tmpl, err := probe.New(probe.Config{Version: "test", AllowLoopback: true}).Probe(ctx, fleet.URL(0))
	if err != nil {
		t.Fatal(err)
	}
	p := &scripted{template: tmpl, now: &now}
	proc, err := history.NewProcessor(history.Config{Store: st, Signer: signer, ToolVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := rounds.NewRunner(rounds.Config{Store: st, Prober: p, Signer: signer, ToolVersion: "test", History: proc,
		Collector: canned{}, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	e, _, err := st.AddEntry(ctx, store.NewEntry{SlugBase: "search", Kind: store.KindRemote, Locator: fleet.URL(0), Name: "Search <b>server</b>", Source: "import"})
	if err != nil {
		t.Fatal(err)
	}
	round := func(at time.Duration, tools ...json.RawMessage) {
		t.Helper()
		now = start.Add(at)
		p.tools = tools
		o, err := r.RunEntry(ctx, e, store.Due{EntryID: e.ID, Reason: store.ReasonCadence, At: now}, "")
		if err != nil {
			t.Fatal(err)
		}
		if o.Outcome != rounds.SignedFull {
			t.Fatalf("round at %v: %s", at, o.Outcome)
		}
	}
	round(0, tool("search", "Search the catalog."))
	round(time.Hour, tool("search", desc), tool("fetch", "Fetch a page."))
	round(time.Hour+2*time.Minute, tool("search", desc), tool("fetch", "Fetch a page."))

	now = start.Add(90 * time.Minute)
	edit, err := proc.RecordOperatorEdit(ctx, e.ID, "description", "before "+hiddenText, "after "+hiddenText, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.HideChange(ctx, e.ID, edit.Number, true, "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.RunSupply(ctx, e, false); err != nil {
		t.Fatal(err)
	}
	cs, err := st.Changes(ctx, store.ChangeFilter{EntryID: e.ID, IncludeHidden: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 3 || cs[0].Number != 3 || !cs[0].Hidden || cs[1].Kind != attest.ChangeTools {
		t.Fatalf("changes: %+v", cs)
	}

	logs := &strings.Builder{}
	now = start.Add(2 * time.Hour)
	h, err := web.New(web.Config{Store: st, Keys: doc, BaseURL: "https://probity.test", Now: func() time.Time { return now },
		Logger: slog.New(slog.NewTextHandler(&syncWriter{b: logs}, nil)), RateLimit: rl})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{h: h, st: st, slug: e.Slug, now: now, logs: logs, toolsChange: cs[1].Number}
}

type syncWriter struct{ b *strings.Builder }

func (w *syncWriter) Write(p []byte) (int, error) { return w.b.Write(p) }

func (f *fixture) get(t *testing.T, method, path string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	return rec
}

var generous = web.RateLimit{PerSecond: 1000, Burst: 10000}

func TestRoutes(t *testing.T) {
	f := setup(t, generous)
	s := "/s/" + f.slug
	cases := []struct {
		path, ctype string
		status      int
	}{
		{"/", "text/html", 200},
		{"/?q=search", "text/html", 200},
		{"/?q=127.0.0.1", "text/html", 200},
		{"/?kind=remote&verified=1&changed=7d&offline=1", "text/html", 200},
		{"/?changed=7d", "text/html", 200},
		{"/?kind=bogus", "text/html", 400},
		{"/static/style.css", "text/css", 200},
		{s, "text/html", 200},
		{s + "/history", "text/html", 200},
		{s + "/history?page=2", "text/html", 404},
		{s + "/history?page=x", "text/html", 404},
		{s + ".json", "application/json", 200},
		{s + ".md", "text/markdown", 200},
		{s + "/envelopes.jsonl", "application/jsonl", 200},
		{s + "/history.xml", "application/atom+xml", 200},
		{"/changes", "text/html", 200},
		{"/changes.xml", "application/atom+xml", 200},
		{"/badge/" + f.slug + ".svg", "image/svg+xml", 200},
		{"/badge/" + f.slug + ".json", "application/json", 200},
		{"/badge/nope.svg", "text/html", 404},
		{"/.well-known/probity-keys.json", "application/json", 200},
		{"/healthz", "text/plain", 200},
		{"/metrics", "text/plain", 200},
		{"/s/nope", "text/html", 404},
		{"/s/nope.json", "application/json", 404},
		{"/s/nope.md", "text/plain", 404},
		{"/s/nope/history", "text/html", 404},
		{"/s/nope/envelopes.jsonl", "application/json", 404},
		{"/s/Bad%20Slug", "text/html", 404},
		{s + "/r/not-a-round.json", "application/json", 404},
		{s + "/r/x.txt", "text/html", 404},
		{"/no/such/page", "text/html", 404},
	}
	for _, c := range cases {
		for _, m := range []string{http.MethodGet, http.MethodHead} {
			rec := f.get(t, m, c.path)
			if rec.Code != c.status || !strings.HasPrefix(rec.Header().Get("Content-Type"), c.ctype) {
				t.Errorf("%s %s: %d %q, want %d %q", m, c.path, rec.Code, rec.Header().Get("Content-Type"), c.status, c.ctype)
			}
			checkHeaders(t, c.path, rec)
		}
	}

	// The filters filter.
	for q, want := range map[string]bool{
		"/?q=SEARCH":          true,
		"/?q=127.0.0.1":       true,
		"/?q=nothing-like-it": false,
		"/?kind=npm":          false,
		"/?kind=remote":       true,
		"/?changed=7d":        true,
		"/?verified=1":        false, // the supply run did not verify it
		"/?offline=1":         false,
	} {
		body := f.get(t, "GET", q).Body.String()
		if got := strings.Contains(body, `href="/s/`+f.slug+`"`); got != want {
			t.Errorf("%s lists the entry: %v, want %v", q, got, want)
		}
	}

	// The newest round's envelope, by its id from the JSON.
	var j struct {
		Round struct {
			RoundID  string `json:"roundId"`
			Envelope string `json:"envelope"`
		} `json:"round"`
	}
	if err := json.Unmarshal(f.get(t, "GET", s+".json").Body.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	if j.Round.RoundID == "" || j.Round.Envelope != "https://probity.test"+s+"/r/"+j.Round.RoundID+".json" {
		t.Fatalf("round in JSON: %+v", j.Round)
	}
	rec := f.get(t, "GET", s+"/r/"+j.Round.RoundID+".json")
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Fatalf("round envelope: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	if _, _, err := attest.ParseEnvelope(rec.Body.Bytes()); err != nil {
		t.Fatalf("round envelope: %v", err)
	}

	// Atom feeds parse as XML.
	for _, p := range []string{s + "/history.xml", "/changes.xml"} {
		var v struct {
			XMLName xml.Name
			Entries []struct {
				ID string `xml:"id"`
			} `xml:"entry"`
		}
		if err := xml.Unmarshal(f.get(t, "GET", p).Body.Bytes(), &v); err != nil || v.XMLName.Local != "feed" || len(v.Entries) != 2 {
			t.Errorf("%s: %v %+v", p, err, v)
		}
	}

	// One log line per request, with the route and no client path for unknown addresses.
	if !strings.Contains(f.logs.String(), "route=/s/:slug/history") || strings.Contains(f.logs.String(), "/no/such/page") {
		t.Errorf("logs:\n%s", f.logs.String())
	}
	m := f.get(t, "GET", "/metrics").Body.String()
	for _, want := range []string{
		`probity_http_requests_total{route="/s/:slug",status="200"}`,
		`probity_http_request_duration_seconds_bucket{route="/s/:slug",le="+Inf"}`,
		`probity_http_rate_limited_total 0`,
		`probity_web_memo_lookups_total{memo="tools_html",result="hit"}`,
		`probity_web_memo_lookups_total{memo="checks_html",result="miss"}`,
		`probity_web_memo_bytes{memo="supply_html"}`,
		`probity_web_memo_entries{memo="tools"}`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s:\n%s", want, m)
		}
	}
}

func checkHeaders(t *testing.T, path string, rec *httptest.ResponseRecorder) {
	t.Helper()
	h := rec.Header()
	want := map[string]string{
		"Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
	}
	for k, v := range want {
		if h.Get(k) != v {
			t.Errorf("%s: %s = %q, want %q", path, k, h.Get(k), v)
		}
	}
}

func TestMethodNotAllowed(t *testing.T) {
	f := setup(t, generous)
	for _, p := range []string{"/", "/s/" + f.slug, "/s/" + f.slug + "/history", "/healthz"} {
		for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
			rec := f.get(t, m, p)
			if rec.Code != http.StatusMethodNotAllowed {
				t.Errorf("%s %s: %d", m, p, rec.Code)
			}
			checkHeaders(t, p, rec)
		}
	}
}

// TestHostileText checks that server text is escaped and invisible characters are
// shown, everywhere, and that the hidden change appears nowhere.
func TestHostileText(t *testing.T) {
	f := setup(t, generous)
	s := "/s/" + f.slug
	for _, p := range []string{"/", s, s + "/history", s + ".json", s + ".md", "/changes", s + "/history.xml", "/changes.xml", "/badge/" + f.slug + ".json"} {
		body := f.get(t, "GET", p).Body.String()
		// The one image of the site is the entry page's badge.
		if n := strings.Count(body, "<img"); n != strings.Count(body, `<img src="/badge/`+f.slug+`.svg"`) {
			t.Errorf("%s has an image that is not the badge", p)
		}
		for _, bad := range []string{"<script", "<img src=x", "<b>", "\u200b", hiddenText} {
			if strings.Contains(body, bad) {
				t.Errorf("%s contains %q", p, bad)
			}
		}
	}
	page := f.get(t, "GET", s).Body.String()
	if again := f.get(t, "GET", s).Body.String(); again != page {
		t.Errorf("the entry page differs when its sections come from the memo:\n%s\n---\n%s", page, again)
	}
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;img src=x onerror=alert(1)&gt;", `zero\u200bwidth`, "Search &lt;b&gt;server&lt;/b&gt;",
		"probity-verify --keys keys.json envelopes.jsonl", "curl -fsSo envelopes.jsonl https://probity.test" + s + "/envelopes.jsonl",
		"What the checks do not tell you", "hidden_instructions"} {
		if !strings.Contains(page, want) {
			t.Errorf("entry page lacks %q", want)
		}
	}
	if strings.Contains(page, "<script") || strings.Contains(page, " style=") {
		t.Error("entry page has a script or an inline style")
	}
	hist := f.get(t, "GET", s+"/history").Body.String()
	for _, want := range []string{`id="ch-1"`, `id="ch-2"`, `href="#ch-2"`, "&lt;script&gt;", `zero\u200bwidth`, "Search the catalog.", "Tools added", "<code>fetch</code>"} {
		if !strings.Contains(hist, want) {
			t.Errorf("history lacks %q", want)
		}
	}
	if strings.Contains(hist, `id="ch-3"`) || strings.Contains(hist, "edited by the operator") {
		t.Error("history shows the hidden change")
	}

	var j struct {
		Tools []struct {
			Name, Description string
		} `json:"tools"`
		History struct {
			Changes []struct {
				Number int64
				Link   string
			} `json:"changes"`
		} `json:"history"`
	}
	if err := json.Unmarshal(f.get(t, "GET", s+".json").Body.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	var desc string
	for _, tl := range j.Tools {
		if tl.Name == "search" {
			desc = tl.Description
		}
	}
	if want := strings.ReplaceAll(hostile, "\u200b", `\u200b`); desc != want {
		t.Errorf("JSON description %q, want %q", desc, want)
	}
	if len(j.History.Changes) != 2 || j.History.Changes[0].Number != 2 || j.History.Changes[0].Link != "https://probity.test"+s+"/history#ch-2" {
		t.Errorf("JSON history: %+v", j.History)
	}
	md := f.get(t, "GET", s+".md").Body.String()
	for _, want := range []string{`Search &lt;b>server&lt;/b>`, `(ch-2)`, `(ch-1)`, "probity-verify --keys keys.json envelopes.jsonl"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, `(ch-3)`) {
		t.Error("Markdown shows the hidden change")
	}
}

// TestEnvelopesVerify verifies an entry's envelopes JSONL against the served key
// document, offline.
func TestEnvelopesVerify(t *testing.T) {
	f := setup(t, generous)
	dir := t.TempDir()
	keysPath, envPath := filepath.Join(dir, "keys.json"), filepath.Join(dir, "envelopes.jsonl")
	for path, url := range map[string]string{keysPath: "/.well-known/probity-keys.json", envPath: "/s/" + f.slug + "/envelopes.jsonl"} {
		rec := f.get(t, "GET", url)
		if rec.Code != 200 {
			t.Fatalf("%s: %d", url, rec.Code)
		}
		if err := os.WriteFile(path, rec.Body.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	doc, err := keys.Load(keysPath)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	sum, err := cli.VerifyPaths(context.Background(), []string{envPath}, cli.StreamConfig{
		Keys: doc, Policy: verifier.DefaultPolicy(),
		Emit: func(it cli.Item) {
			if it.Err != nil {
				t.Errorf("%s: %v", it.Source, it.Err)
				return
			}
			types = append(types, it.Result.PredicateType)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Three rounds, two visible changes (the hidden one is left out), one supply run.
	if sum.Total != 6 || sum.Verified != 6 {
		t.Fatalf("summary %+v, types %v", sum, types)
	}
	raw, _ := os.ReadFile(envPath)
	if strings.Contains(string(raw), hiddenText) {
		t.Error("JSONL holds the hidden change")
	}
}

func TestRateLimit(t *testing.T) {
	f := setup(t, web.RateLimit{PerSecond: 0.5, Burst: 2})
	for i := range 2 {
		if rec := f.get(t, "GET", "/"); rec.Code != 200 {
			t.Fatalf("request %d: %d", i, rec.Code)
		}
	}
	rec := f.get(t, "GET", "/s/"+f.slug)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "2" {
		t.Fatalf("third request: %d, Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	checkHeaders(t, "/", rec)
	// A forged X-Forwarded-For is not another client: no proxy is trusted.
	spoof := httptest.NewRequest("GET", "/", nil)
	spoof.Header.Set("X-Forwarded-For", "198.51.100.9")
	sr := httptest.NewRecorder()
	f.h.ServeHTTP(sr, spoof)
	if sr.Code != http.StatusTooManyRequests {
		t.Fatalf("X-Forwarded-For escaped the limit: %d", sr.Code)
	}
	// Monitoring is exempt.
	if rec := f.get(t, "GET", "/healthz"); rec.Code != 200 {
		t.Fatalf("healthz while limited: %d", rec.Code)
	}
	if m := f.get(t, "GET", "/metrics").Body.String(); !strings.Contains(m, "probity_http_rate_limited_total 2") {
		t.Errorf("metrics:\n%s", m)
	}
	// Another client has its own bucket.
	req := httptest.NewRequest("GET", "/", nil)
	req.RemoteAddr = "192.0.2.7:1234"
	rr := httptest.NewRecorder()
	f.h.ServeHTTP(rr, req)
	if rr.Code != 200 {
		t.Fatalf("another client: %d", rr.Code)
	}
}

func TestServerTimeouts(t *testing.T) {
	srv := web.Server("127.0.0.1:0", http.NotFoundHandler())
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.WriteTimeout <= 0 || srv.IdleTimeout <= 0 || srv.MaxHeaderBytes <= 0 {
		t.Fatalf("%+v", srv)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	if _, err := web.New(web.Config{}); err == nil {
		t.Error("New accepted an empty Config")
	}
}

func TestBadgePagesSayWhatTheChecksDoNotTell(t *testing.T) {
	f := setup(t, web.RateLimit{})
	for _, path := range []string{"/", "/s/" + f.slug} {
		if body := f.get(t, "GET", path).Body.String(); !strings.Contains(body, "What the checks do not tell you") {
			t.Errorf("%s has no \"what the checks do not tell you\" section", path)
		}
	}
}

// TestClientGone: a request whose client left before the store answered is logged as
// 499 at info level, not as an internal error.
func TestClientGone(t *testing.T) {
	f := setup(t, generous)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/s/"+f.slug, nil).WithContext(ctx))
	if rec.Code != 499 {
		t.Errorf("status %d, want 499", rec.Code)
	}
	logs := f.logs.String()
	if !strings.Contains(logs, "status=499") || strings.Contains(logs, "level=ERROR") {
		t.Errorf("logs:\n%s", logs)
	}
	if m := f.get(t, "GET", "/metrics").Body.String(); !strings.Contains(m, `probity_http_requests_total{route="/s/:slug",status="499"} 1`) {
		t.Errorf("metrics:\n%s", m)
	}
}

// TestDirectoryFeedFollowsChanges: the directory feed is served again while its changes
// are the newest, and rendered anew when they are not (here: one is hidden).
func TestDirectoryFeedFollowsChanges(t *testing.T) {
	f := setup(t, generous)
	first := f.get(t, "GET", "/changes.xml").Body.String()
	if again := f.get(t, "GET", "/changes.xml").Body.String(); again != first {
		t.Fatal("the same changes gave another feed")
	}
	anchor := fmt.Sprintf("s/%s/ch-%d</id>", f.slug, f.toolsChange)
	if !strings.Contains(first, anchor) {
		t.Fatalf("the feed lacks change %d:\n%s", f.toolsChange, first)
	}
	e, err := f.st.Entry(t.Context(), f.slug)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.st.HideChange(t.Context(), e.ID, f.toolsChange, true, "a test"); err != nil {
		t.Fatal(err)
	}
	if after := f.get(t, "GET", "/changes.xml").Body.String(); strings.Contains(after, anchor) {
		t.Errorf("the feed still shows the hidden change %d:\n%s", f.toolsChange, after)
	}
}
