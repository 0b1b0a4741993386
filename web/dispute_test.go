package web_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/web"
)

// disputeSite is a site with write paths, roles and the contest form over a store
// holding real signed rounds of the entry w.slug, and another entry.
type disputeSite struct {
	*writeSite
	roles   *fakeRoles
	fd      *fakeDisputes
	round   int64 // the entry's newest signed round (store id)
	otherID int64
}

func newDisputeSite(t *testing.T, write web.RateLimit) *disputeSite {
	t.Helper()
	f := setup(t, generous)
	ctx := context.Background()
	e, err := f.st.Entry(ctx, f.slug)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := f.st.Rounds(ctx, e.ID, 1)
	if err != nil || len(rs) != 1 || !rs[0].Signed {
		t.Fatalf("rounds: %+v, %v", rs, err)
	}
	other, _, err := f.st.AddEntry(ctx, store.NewEntry{SlugBase: "other", Kind: store.KindRemote, Locator: "https://other.example/mcp", Name: "Other", Source: "import"})
	if err != nil {
		t.Fatal(err)
	}
	m := new(atomic.Int64)
	roles := newFakeRoles()
	fd := &fakeDisputes{st: f.st, roles: roles, mutations: m, limit: 3, opened: map[int64]int{}}
	w := &writeSite{base: "https://probity.test", st: f.st, acc: newFakeAccounts(m), fol: newFakeFollows(m, f.st), hooks: newFakeWebhooks(m),
		mutations: m, slug: e.Slug, entryID: e.ID}
	if write.Burst == 0 {
		write = generous
	}
	_, doc, _ := openStore(t, f.now)
	w.h, err = web.New(web.Config{Store: f.st, Keys: doc, BaseURL: w.base, Now: func() time.Time { return f.now },
		Logger: slog.New(slog.DiscardHandler), RateLimit: generous, WriteRateLimit: write,
		Accounts: w.acc, Follows: w.fol, Webhooks: w.hooks, Maintainers: roles, Operators: roles, Disputes: fd})
	if err != nil {
		t.Fatal(err)
	}
	return &disputeSite{writeSite: w, roles: roles, fd: fd, round: rs[0].ID, otherID: other.ID}
}

func (d *disputeSite) contestPath() string { return "/s/" + d.slug + "/contest" }

func (d *disputeSite) contestQuery(check string) string {
	return d.contestPath() + "?" + url.Values{"round": {strconv.FormatInt(d.round, 10)}, "check": {check}}.Encode()
}

func (d *disputeSite) contestForm(csrf, check, statement, evidence string) url.Values {
	return url.Values{"csrf": {csrf}, "round": {strconv.FormatInt(d.round, 10)}, "check": {check}, "statement": {statement}, "evidence": {evidence}}
}

// TestContestAuthorization is the route matrix of GET and POST /s/{slug}/contest:
// anonymous → sign in; signed in, maintainer of another entry, operator without a
// claim → 403; maintainer of this entry → the form, and the dispute opened. Only the
// last changes anything.
func TestContestAuthorization(t *testing.T) {
	d := newDisputeSite(t, web.RateLimit{})
	get := d.contestQuery("reachability")

	anon := d.browser(t)
	wantSignIn := "/signin?return=" + url.QueryEscape(get)
	if rec := anon.get(get); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != wantSignIn {
		t.Errorf("anonymous GET: %d to %q, want 303 to %q", rec.Code, rec.Header().Get("Location"), wantSignIn)
	}
	if rec := anon.post(d.contestPath(), d.contestForm("x", "reachability", "wrong", "")); rec.Code != http.StatusSeeOther ||
		!strings.HasPrefix(rec.Header().Get("Location"), "/signin?return=") {
		t.Errorf("anonymous POST: %d to %q", rec.Code, rec.Header().Get("Location"))
	}

	type who struct {
		name  string
		setup func(account int64)
		ok    bool
	}
	for _, c := range []who{
		{"signed in", func(int64) {}, false},
		{"maintainer of another entry", func(a int64) { d.roles.grant(a, d.otherID) }, false},
		{"operator", func(a int64) { d.roles.operator(a) }, false},
		{"maintainer of this entry", func(a int64) { d.roles.grant(a, d.entryID) }, true},
	} {
		b := d.browser(t)
		csrf := b.signIn(strings.ReplaceAll(c.name, " ", ".") + "@example.com")
		c.setup(d.accountOf(t, b))
		before := d.mutations.Load()
		rec := b.get(get)
		switch {
		case c.ok && (rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `<textarea id="statement" name="statement"`)):
			t.Errorf("%s GET: %d\n%s", c.name, rec.Code, rec.Body)
		case !c.ok && (rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "Maintainers only")):
			t.Errorf("%s GET: %d, want 403", c.name, rec.Code)
		}
		if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
			t.Errorf("%s GET: Cache-Control %q", c.name, cc)
		}
		rec = b.post(d.contestPath(), d.contestForm(csrf, "reachability", "The endpoint answered.", ""))
		switch {
		case c.ok && (rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "Dispute opened")):
			t.Errorf("%s POST: %d\n%s", c.name, rec.Code, rec.Body)
		case !c.ok && rec.Code != http.StatusForbidden:
			t.Errorf("%s POST: %d, want 403", c.name, rec.Code)
		}
		if changed := d.mutations.Load() != before; changed != c.ok {
			t.Errorf("%s: changed %v", c.name, changed)
		}
	}
	// No such entry: 404, for anyone.
	b := d.browser(t)
	b.signIn("someone@example.com")
	if rec := b.get("/s/no-such-entry/contest?round=1&check=reachability"); rec.Code != http.StatusNotFound {
		t.Errorf("GET of no entry: %d", rec.Code)
	}
	// A malformed round or check: 404 before anything else.
	for _, q := range []string{"?round=x&check=reachability", "?round=1&check=Bad-Check", "?round=01&check=a", "?check=a"} {
		if rec := b.get(d.contestPath() + q); rec.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d", q, rec.Code)
		}
	}
	// Only GET, HEAD and POST.
	if rec := b.do(req{method: http.MethodPut, path: d.contestPath()}); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("PUT: %d", rec.Code)
	}
}

// TestContestForm: a maintainer's contest passes the write defences (csrf, origin),
// bounds its text (a statement of 2,000 characters of any script fits the body bound; a
// longer one is refused, as are control characters and a non-https evidence URL), is
// refused for a second open dispute of the same check, for a check the round does not
// hold, and past the daily limit; the dispute and its outcome are then on the entry
// page, the Checks tab and the JSON API as plain text, never who opened or decided it.
func TestContestForm(t *testing.T) {
	d := newDisputeSite(t, web.RateLimit{})
	b := d.browser(t)
	csrf := b.signIn("maint@example.com")
	d.roles.grant(d.accountOf(t, b), d.entryID)
	path := d.contestPath()
	before := d.mutations.Load()
	for name, r := range map[string]req{
		"no csrf":      {method: "POST", path: path, form: url.Values{"round": {strconv.FormatInt(d.round, 10)}, "check": {"reachability"}, "statement": {"x"}}},
		"wrong csrf":   {method: "POST", path: path, form: d.contestForm("x"+csrf, "reachability", "x", "")},
		"cross-origin": {method: "POST", path: path, form: d.contestForm(csrf, "reachability", "x", ""), header: map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.test"}},
	} {
		if rec := b.do(r); rec.Code != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, rec.Code)
		}
	}
	for name, c := range map[string]struct {
		form url.Values
		code int
	}{
		"empty statement": {d.contestForm(csrf, "reachability", "", ""), http.StatusBadRequest},
		"long statement":  {d.contestForm(csrf, "reachability", strings.Repeat("a", attest.MaxDisputeText+1), ""), http.StatusBadRequest},
		"control":         {d.contestForm(csrf, "reachability", "a\x1bb", ""), http.StatusBadRequest},
		"http evidence":   {d.contestForm(csrf, "reachability", "x", "http://example.com/"), http.StatusBadRequest},
		"script evidence": {d.contestForm(csrf, "reachability", "x", "javascript:alert(1)"), http.StatusBadRequest},
		"no such check":   {d.contestForm(csrf, "no_such_check_at_all", "x", ""), http.StatusNotFound},
		"no round":        {url.Values{"csrf": {csrf}, "check": {"reachability"}, "statement": {"x"}}, http.StatusBadRequest},
		"huge body":       {d.contestForm(csrf, "reachability", strings.Repeat("ä", 20000), ""), http.StatusRequestEntityTooLarge},
		"another's round": {url.Values{"csrf": {csrf}, "round": {"999999"}, "check": {"reachability"}, "statement": {"x"}}, http.StatusNotFound},
	} {
		if rec := b.post(path, c.form); rec.Code != c.code {
			t.Errorf("%s: %d, want %d\n%.300s", name, rec.Code, c.code, rec.Body)
		}
	}
	if d.mutations.Load() != before {
		t.Fatal("a refused contest changed something")
	}

	// 2,000 characters of a non-Latin script: 18 KB percent-encoded, above the other
	// forms' bound, within this one's.
	long := strings.Repeat("漢", attest.MaxDisputeText)
	if rec := b.post(path, d.contestForm(csrf, "latency", long, "")); rec.Code != http.StatusOK {
		t.Fatalf("a statement of %d characters: %d\n%.300s", attest.MaxDisputeText, rec.Code, rec.Body)
	}
	statement := "It is <script>alert(1)</script> read-only.\nSecond line\u202e reversed"
	evidence := `https://evil.example/"><script>alert(2)</script>`
	if rec := b.post(path, d.contestForm(csrf, "reachability", statement, "https://docs.example/why")); rec.Code != http.StatusOK {
		t.Fatalf("contest: %d\n%s", rec.Code, rec.Body)
	}
	if rec := b.post(path, d.contestForm(csrf, "reachability", "again", "")); rec.Code != http.StatusConflict {
		t.Errorf("a second open dispute: %d, want 409", rec.Code)
	}
	if rec := b.post(path, d.contestForm(csrf, "tls_certificate", "x", evidence)); rec.Code != http.StatusBadRequest {
		t.Errorf("evidence with markup: %d, want 400 (white space and quotes are not a URL)", rec.Code)
	}
	if rec := b.post(path, d.contestForm(csrf, "transport", "three", "")); rec.Code != http.StatusOK {
		t.Errorf("third: %d", rec.Code)
	}
	if rec := b.post(path, d.contestForm(csrf, "redirect_policy", "four", "")); rec.Code != http.StatusTooManyRequests {
		t.Errorf("past the daily limit: %d, want 429", rec.Code)
	}

	// An operator's outcome of dispute 2 (the reachability one), stored as the console
	// would through package disputes.
	ctx := context.Background()
	ds, err := d.st.Disputes(ctx, store.DisputeFilter{EntryID: d.entryID})
	if err != nil || len(ds) != 3 {
		t.Fatalf("disputes: %+v, %v", ds, err)
	}
	var reach store.DisputeRecord
	for _, x := range ds {
		if x.CheckID == "reachability" {
			reach = x
		}
	}
	env := `{"payloadType":"application/vnd.in-toto+json","payload":"` + base64.StdEncoding.EncodeToString([]byte(`{"outcome":1}`)) + `","signatures":[{"keyid":"fake","sig":"c2ln"}]}`
	if _, err := d.st.SaveOutcome(ctx, store.NewOutcome{DisputeID: reach.ID, Decision: attest.DecisionCorrected, SuiteVersion: "2026.12",
		Reason: "Fixed <b>now</b>.", DecidedAt: time.Now(), Envelope: []byte(env), KeyID: "fake"}); err != nil {
		t.Fatal(err)
	}

	anon := d.browser(t)
	for _, p := range []string{"/s/" + d.slug, "/s/" + d.slug + "/checks"} {
		body := anon.get(p).Body.String()
		for _, want := range []string{
			`id="dispute-2"`, "It is &lt;script&gt;alert(1)&lt;/script&gt; read-only.<br>Second line\\u202e reversed",
			"<code class=\"url\">https://docs.example/why</code>", "corrected in check suite version 2026.12", "Fixed &lt;b&gt;now&lt;/b&gt;.",
			fmt.Sprintf("record %d", reach.Seq), "Open: an operator has not decided it yet.",
		} {
			if !strings.Contains(body, want) {
				t.Errorf("%s lacks %q", p, want)
			}
		}
		for _, bad := range []string{"<script>alert(1)", `href="https://docs.example/why"`, "maint@example.com", "\u202e"} {
			if strings.Contains(body, bad) {
				t.Errorf("%s shows %q", p, bad)
			}
		}
	}
	checks := anon.get("/s/" + d.slug + "/checks").Body.String()
	if !strings.Contains(checks, "/s/"+d.slug+"/contest?round="+strconv.FormatInt(d.round, 10)+"&amp;check=reachability") {
		t.Errorf("the Checks tab has no contest link per check:\n%s", checks)
	}
	var api struct {
		Disputes []struct {
			Number    int64  `json:"number"`
			CheckID   string `json:"checkId"`
			Statement string `json:"statement"`
			Evidence  string `json:"evidence"`
			Seq       int64  `json:"seq"`
			Outcome   *struct {
				Decision     string `json:"decision"`
				SuiteVersion string `json:"suiteVersion"`
				Reason       string `json:"reason"`
			} `json:"outcome"`
		} `json:"disputes"`
	}
	rec := anon.get("/api/v1/servers/" + d.slug)
	if err := json.Unmarshal(rec.Body.Bytes(), &api); err != nil || len(api.Disputes) != 3 {
		t.Fatalf("API: %v, %d disputes\n%.500s", err, len(api.Disputes), rec.Body)
	}
	got := api.Disputes[1]
	if got.Number != 2 || got.CheckID != "reachability" || got.Statement != strings.ReplaceAll(statement, "\u202e", `\u202e`) ||
		got.Evidence != "https://docs.example/why" || got.Outcome == nil || got.Outcome.Decision != "corrected" || got.Outcome.SuiteVersion != "2026.12" {
		t.Errorf("API dispute: %+v", got)
	}
	if strings.Contains(rec.Body.String(), "maint@") || strings.Contains(rec.Body.String(), "openedBy") {
		t.Error("the API names who opened a dispute")
	}
}

// TestContestRateLimit: the contest form is on the write routes' bucket.
func TestContestRateLimit(t *testing.T) {
	d := newDisputeSite(t, web.RateLimit{PerSecond: 0.001, Burst: 4})
	b := d.browser(t)
	csrf := b.signIn("maint@example.com") // two POSTs
	d.roles.grant(d.accountOf(t, b), d.entryID)
	var codes []int
	for range 4 {
		codes = append(codes, b.post(d.contestPath(), d.contestForm(csrf, "reachability", "", "")).Code)
	}
	if codes[0] != http.StatusBadRequest || codes[2] != http.StatusTooManyRequests || codes[3] != http.StatusTooManyRequests {
		t.Errorf("contest statuses: %v", codes)
	}
}

// addShowcaseDisputes gives the entry's newest round two disputes, one decided, whose
// statement and reason would be markup if a page did not escape them (the browser
// pages test shows them and runs axe on them).
func addShowcaseDisputes(t *testing.T, st store.Store, entryID int64, at time.Time) {
	t.Helper()
	ctx := context.Background()
	rs, err := st.Rounds(ctx, entryID, 1)
	if err != nil || len(rs) != 1 {
		t.Fatalf("rounds: %+v, %v", rs, err)
	}
	env := func(payload string) []byte {
		return []byte(`{"payloadType":"application/vnd.in-toto+json","payload":"` + base64.StdEncoding.EncodeToString([]byte(payload)) +
			`","signatures":[{"keyid":"showcase","sig":"c2ln"}]}`)
	}
	var first store.DisputeRecord
	for i, check := range []string{"destructive_annotations", "hidden_instructions"} {
		d, err := st.SaveDispute(ctx, store.NewDispute{EntryID: entryID, Number: int64(i + 1), RoundID: rs[0].ID, CheckID: check,
			Status: attest.StatusObservedRisk, Statement: "The tool <b>delete_note</b> asks before it deletes.\nSee our docs.",
			Evidence: "https://docs.example/notes#confirm", OpenedAt: at.Add(time.Duration(i) * time.Minute),
			Envelope: env(fmt.Sprintf(`{"dispute":%d}`, i+1)), KeyID: "showcase"})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = d
		}
	}
	if _, err := st.SaveOutcome(ctx, store.NewOutcome{DisputeID: first.ID, Decision: attest.DecisionRejected,
		Reason: "The signed round shows no confirmation <i>hint</i>.", DecidedAt: at.Add(5 * time.Minute),
		Envelope: env(`{"outcome":1}`), KeyID: "showcase"}); err != nil {
		t.Fatal(err)
	}
}
