package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/web"
)

// reportIDOf is the first report link of the queue page.
var reportLink = regexp.MustCompile(`href="/ops/reports/(\d+)"`)

// TestReportRoutesAuthorization is the authorization matrix of the report routes: the
// report form is anyone's (anonymous included); the console is the operators' only
// (anonymous: sign in; signed in, a maintainer of another entry or of this one: 403).
func TestReportRoutesAuthorization(t *testing.T) {
	rs := newReportSite(t)
	// One open report for the console's report routes.
	if _, err := rs.svc.Submit(t.Context(), rs.slug, "It uploads files.", "", "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	q, err := rs.svc.Queue(t.Context())
	if err != nil || len(q) != 1 {
		t.Fatalf("queue: %v %v", q, err)
	}
	id := q[0].ID
	roles := []struct {
		name, email string
		operator    bool
	}{
		{"anonymous", "", false},
		{"signed in", "someone@example.org", false},
		{"maintainer of another entry", "other@example.org", false},
		{"maintainer of this entry", "maint@example.org", false},
		{"operator", "op@example.org", true},
	}
	for _, role := range roles {
		t.Run(role.name, func(t *testing.T) {
			b := rs.browser(t)
			csrf := ""
			if role.email != "" {
				csrf = b.signIn(role.email)
			}
			// The report form: everyone.
			rec := b.get("/s/" + rs.slug + "/report")
			if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "Report a harmful server") {
				t.Fatalf("GET report form: %d", rec.Code)
			}
			if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
				t.Errorf("report form Cache-Control %q", cc)
			}
			tok := csrfOf(t, rec.Body.String())
			rec = b.post("/s/"+rs.slug+"/report", url.Values{"csrf": {tok}, "text": {"It reads ~/.ssh as " + role.name}})
			if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "Thank you") {
				t.Fatalf("POST report: %d\n%s", rec.Code, rec.Body)
			}
			// The console.
			for _, r := range []struct {
				method, path string
				form         url.Values
			}{
				{http.MethodGet, "/ops/reports", nil},
				{http.MethodGet, "/ops/reports/" + itoa(id), nil},
				{http.MethodPost, "/ops/reports/" + itoa(id) + "/decline", url.Values{"csrf": {csrf}, "reason": {"Not harmful."}}},
				{http.MethodPost, "/ops/reports/restore", url.Values{"csrf": {csrf}, "slug": {rs.slug}, "reason": {"Fixed."}}},
			} {
				rec := b.do(req{method: r.method, path: r.path, form: r.form})
				switch {
				case role.email == "":
					if rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), "/signin?return=") {
						t.Errorf("%s %s: %d %q, want a redirect to sign in", r.method, r.path, rec.Code, rec.Header().Get("Location"))
					}
				case !role.operator:
					if rec.Code != http.StatusForbidden {
						t.Errorf("%s %s: %d, want 403", r.method, r.path, rec.Code)
					}
				default:
					// The operator: the decline answers the report, the restore finds
					// nothing withdrawn (409): both reached the service.
					want := map[string]int{"/ops/reports": 200, "/ops/reports/" + itoa(id): 200,
						"/ops/reports/" + itoa(id) + "/decline": 200, "/ops/reports/restore": 409}[r.path]
					if rec.Code != want {
						t.Errorf("%s %s: %d, want %d\n%s", r.method, r.path, rec.Code, want, rec.Body)
					}
				}
			}
			// A console POST without the session's csrf field is refused, operator or not.
			if role.operator {
				rec := b.post("/ops/reports/restore", url.Values{"slug": {rs.slug}, "reason": {"x"}})
				if rec.Code != http.StatusForbidden {
					t.Errorf("restore without csrf: %d", rec.Code)
				}
			}
		})
	}
	if len(rs.audit.actions) != 1 || rs.audit.actions[0].Action != "report.decline" {
		t.Errorf("audit = %+v", rs.audit.actions)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestReportFormDefences: the report form's double-submit token, bounds, plain text,
// and an entry that is not Verified.
func TestReportFormDefences(t *testing.T) {
	rs := newReportSite(t)
	b := rs.browser(t)
	path := "/s/" + rs.slug + "/report"
	tok := csrfOf(t, b.get(path).Body.String())
	if rec := b.post(path, url.Values{"text": {"x"}}); rec.Code != http.StatusForbidden {
		t.Errorf("no token: %d", rec.Code)
	}
	if rec := b.post(path, url.Values{"csrf": {"forged"}, "text": {"x"}}); rec.Code != http.StatusForbidden {
		t.Errorf("forged token: %d", rec.Code)
	}
	other := rs.browser(t) // another browser: no cookie for the token
	if rec := other.post(path, url.Values{"csrf": {tok}, "text": {"x"}}); rec.Code != http.StatusForbidden {
		t.Errorf("token without its cookie: %d", rec.Code)
	}
	if rec := b.do(req{method: http.MethodPost, path: path, form: url.Values{"csrf": {tok}, "text": {"x"}},
		header: map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}}); rec.Code != http.StatusForbidden {
		t.Errorf("cross-origin: %d", rec.Code)
	}
	if rec := b.post(path, url.Values{"csrf": {tok}, "text": {strings.Repeat("x", 4001)}}); rec.Code != http.StatusBadRequest {
		t.Errorf("too long: %d", rec.Code)
	}
	// The longest report, in characters of 4 bytes (12 once form-encoded), is read whole.
	if rec := b.post(path, url.Values{"csrf": {tok}, "text": {strings.Repeat("𝄞", 4000)}}); rec.Code != http.StatusOK {
		t.Errorf("a report of 4,000 four-byte characters: %d", rec.Code)
	}
	if rec := b.post(path, url.Values{"csrf": {tok}, "text": {"x"}, "contact": {"not an address"}}); rec.Code != http.StatusBadRequest {
		t.Errorf("bad contact: %d", rec.Code)
	}
	rec := b.post(path, url.Values{"csrf": {tok}, "text": {"<script>alert(1)</script>\nline two"}, "contact": {"me@example.org"}})
	body := rec.Body.String()
	if rec.Code != http.StatusOK || strings.Contains(body, "<script>alert") || !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;\nline two") {
		t.Errorf("report shown back: %d\n%s", rec.Code, body)
	}
	if strings.Contains(body, "me@example.org") {
		t.Error("the contact address is shown back")
	}
	// Not Verified: no form, and no report.
	if rec := b.get("/s/" + rs.evil.Slug + "/report"); rec.Code != http.StatusConflict || strings.Contains(rec.Body.String(), "<script>alert") {
		t.Errorf("report form of an entry not Verified: %d", rec.Code)
	}
	if rec := b.post("/s/"+rs.evil.Slug+"/report", url.Values{"csrf": {tok}, "text": {"x"}}); rec.Code != http.StatusConflict {
		t.Errorf("report of an entry not Verified: %d", rec.Code)
	}
	if rec := b.get("/s/nope/report"); rec.Code != http.StatusNotFound {
		t.Errorf("report of no entry: %d", rec.Code)
	}
}

// TestWithdrawnEverywhere: a report, the queue's 72-hour clock, an operator's
// withdrawal, and Verified withdrawn on the entry page (with the date, the reason as
// plain text and the record's bundle), the badge, the directory, the API and the
// report link; then a restoration.
func TestWithdrawnEverywhere(t *testing.T) {
	rs := newReportSite(t)
	b := rs.browser(t)
	page := b.get("/s/" + rs.slug).Body.String()
	if !strings.Contains(page, `href="/s/`+rs.slug+`/report">Report a harmful server`) {
		t.Fatal("no report link on a Verified entry's page")
	}
	// Before: Verified everywhere (so that the checks after the withdrawal mean something).
	var badge struct{ Message string }
	if err := json.Unmarshal(b.get("/badge/"+rs.slug+".json").Body.Bytes(), &badge); err != nil || badge.Message != "verified" {
		t.Fatalf("badge before = %+v, %v", badge, err)
	}
	var api map[string]any
	if err := json.Unmarshal(b.get("/api/v1/servers/"+rs.slug).Body.Bytes(), &api); err != nil || apiVerified(api) != "true true Verified" {
		t.Fatalf("API before = %v, %v", api, err)
	}
	if p := b.get("/?verified=1").Body.String(); !strings.Contains(p, `href="/s/`+rs.slug+`"`) {
		t.Fatal("the directory's Verified filter does not list the Verified entry")
	}
	if p := b.get("/s/" + rs.evil.Slug).Body.String(); strings.Contains(p, "Report a harmful server") {
		t.Error("a report link on an entry that is not Verified")
	}
	tok := csrfOf(t, b.get("/s/"+rs.slug+"/report").Body.String())
	if rec := b.post("/s/"+rs.slug+"/report", url.Values{"csrf": {tok}, "text": {"It uploads files."}}); rec.Code != http.StatusOK {
		t.Fatalf("report: %d", rec.Code)
	}
	op := rs.browser(t)
	csrf := op.signIn("op@example.org")
	queue := op.get("/ops/reports").Body.String()
	if !strings.Contains(queue, "72 hours left") {
		t.Errorf("queue without its clock:\n%s", queue)
	}
	rs.now = rs.now.Add(73 * time.Hour)
	queue = op.get("/ops/reports").Body.String()
	if !strings.Contains(queue, "overdue by 1 hour") {
		t.Errorf("queue without overdue:\n%s", queue)
	}
	m := reportLink.FindStringSubmatch(queue)
	if m == nil {
		t.Fatal("no report in the queue")
	}
	if rec := op.post("/ops/reports/"+m[1]+"/withdraw", url.Values{"csrf": {csrf}, "reason": {"It uploads <b>files</b> it reads."}}); rec.Code != http.StatusOK {
		t.Fatalf("withdraw: %d\n%s", rec.Code, rec.Body)
	}
	page = b.get("/s/" + rs.slug).Body.String()
	day := rs.now.UTC().Format(time.DateOnly)
	if !strings.Contains(page, "Verified withdrawn on <time>"+day+"</time>") || !strings.Contains(page, "It uploads &lt;b&gt;files&lt;/b&gt; it reads.") ||
		!regexp.MustCompile(`href="/bundle/\d+\.json"`).MatchString(page) {
		t.Errorf("entry page without its withdrawal:\n%s", page)
	}
	if strings.Contains(page, "Report a harmful server") {
		t.Error("a report link on a withdrawn entry")
	}
	if err := json.Unmarshal(b.get("/badge/"+rs.slug+".json").Body.Bytes(), &badge); err != nil || badge.Message == "verified" {
		t.Errorf("badge = %+v, %v", badge, err)
	}
	api = nil
	if err := json.Unmarshal(b.get("/api/v1/servers/"+rs.slug).Body.Bytes(), &api); err != nil {
		t.Fatal(err)
	}
	if w, ok := api["verifiedWithdrawn"].(map[string]any); !ok || w["reason"] != "It uploads <b>files</b> it reads." || !strings.HasPrefix(fmt.Sprint(w["bundle"]), "https://probity.test/bundle/") {
		t.Errorf("API verifiedWithdrawn = %v", api["verifiedWithdrawn"])
	}
	if v := apiVerified(api); v != "false false signed" {
		t.Errorf("API after the withdrawal: card, supply, badge state = %s", v)
	}
	if p := b.get("/?verified=1").Body.String(); strings.Contains(p, `href="/s/`+rs.slug+`"`) {
		t.Error("the directory's Verified filter lists the withdrawn entry")
	}
	// A later Verified run does not give it back; a restoration does.
	e, err := rs.st.Entry(t.Context(), rs.slug)
	if err != nil {
		t.Fatal(err)
	}
	rs.verify(t, e)
	if p := b.get("/s/" + rs.slug).Body.String(); !strings.Contains(p, "Verified withdrawn on") {
		t.Error("a later Verified run restored Verified")
	}
	if rec := op.post("/ops/reports/restore", url.Values{"csrf": {csrf}, "slug": {rs.slug}, "reason": {"Fixed in 1.2."}}); rec.Code != http.StatusOK {
		t.Fatalf("restore: %d\n%s", rec.Code, rec.Body)
	}
	page = b.get("/s/" + rs.slug).Body.String()
	if strings.Contains(page, "Verified withdrawn on") || !strings.Contains(page, "Report a harmful server") {
		t.Error("restored entry page still withdrawn")
	}
	if err := json.Unmarshal(b.get("/badge/"+rs.slug+".json").Body.Bytes(), &badge); err != nil || badge.Message != "verified" {
		t.Errorf("badge after restoring = %+v, %v", badge, err)
	}
	api = nil
	if err := json.Unmarshal(b.get("/api/v1/servers/"+rs.slug).Body.Bytes(), &api); err != nil || apiVerified(api) != "true true Verified" || api["verifiedWithdrawn"] != nil {
		t.Errorf("API after restoring: %s, %v, %v", apiVerified(api), api["verifiedWithdrawn"], err)
	}
	if p := b.get("/privacy").Body.String(); !strings.Contains(p, `id="reports"`) || !strings.Contains(p, "30 days after the report is answered") {
		t.Error("the privacy page does not say what a report keeps")
	}
}

// apiVerified is what an entry's API answer says of Verified: the card's, the supply
// run's and the badge's state.
func apiVerified(api map[string]any) string {
	field := func(m any, k string) any {
		if mm, ok := m.(map[string]any); ok {
			return mm[k]
		}
		return nil
	}
	return fmt.Sprint(field(api["card"], "verified"), " ", field(api["supply"], "verified"), " ", field(api["badge"], "state"))
}

// TestReportRateLimited: the report form's POST draws on the write routes' bucket per
// client, so one client cannot flood the queue (the per-entry cap is the service's).
func TestReportRateLimited(t *testing.T) {
	rs := newReportSiteLimited(t, web.RateLimit{PerSecond: 0.001, Burst: 2})
	b := rs.browser(t)
	path := "/s/" + rs.slug + "/report"
	tok := csrfOf(t, b.get(path).Body.String())
	codes := []int{}
	for range 3 {
		codes = append(codes, b.post(path, url.Values{"csrf": {tok}, "text": {"It uploads files."}}).Code)
	}
	if codes[0] != http.StatusOK || codes[1] != http.StatusOK || codes[2] != http.StatusTooManyRequests {
		t.Errorf("three reports: %v, want 200 200 429", codes)
	}
	// Reading the form is not a write: it stays open.
	if rec := b.get(path); rec.Code != http.StatusOK {
		t.Errorf("GET after the limit: %d", rec.Code)
	}
}

// TestWithdrawnSubregistry: the subregistry's results (_meta) of a listed server say
// Verified until an operator withdraws it, and not after.
func TestWithdrawnSubregistry(t *testing.T) {
	rs := newReportSite(t)
	ctx := t.Context()
	main, err := rs.st.Entry(ctx, rs.slug)
	if err != nil {
		t.Fatal(err)
	}
	doc := example(t, "with-remote.json", "io.github.probity-test/search")
	doc["remotes"].([]any)[0].(map[string]any)["url"] = main.Locator
	if _, err := rs.st.UpsertServer(ctx, store.ServerUpsert{SlugBase: "search", Name: doc["name"].(string), Source: "registry",
		Listing: store.Listing{ServerName: doc["name"].(string), Description: doc["description"].(string), Version: doc["version"].(string),
			Document: mustJSON(t, doc), RegistryMeta: mustJSON(t, official("active", rs.now))},
		Parts: []store.Part{{Kind: store.KindRemote, Locator: main.Locator, Transport: "streamable-http"}}}); err != nil {
		t.Fatal(err)
	}
	b := rs.browser(t)
	results := func() regResults {
		t.Helper()
		rec := b.get("/v0.1/servers/io.github.probity-test%2Fsearch/versions/latest")
		var it regItemJSON
		var res regResults
		if err := json.Unmarshal(rec.Body.Bytes(), &it); err != nil {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		if err := json.Unmarshal(it.Meta[resultsKey], &res); err != nil || res.Supply == nil {
			t.Fatalf("results %s: %v", it.Meta[resultsKey], err)
		}
		return res
	}
	if r := results(); !r.Verified || !r.Supply.Verified {
		t.Fatalf("before: verified %v, supply %+v", r.Verified, r.Supply)
	}
	if _, err := rs.svc.Submit(ctx, rs.slug, "It uploads files.", "", "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	q, err := rs.svc.Queue(ctx)
	if err != nil || len(q) != 1 {
		t.Fatal(q, err)
	}
	if _, err := rs.svc.Withdraw(ctx, 1, q[0].ID, "It uploads files."); err != nil {
		t.Fatal(err)
	}
	if r := results(); r.Verified || r.Supply.Verified {
		t.Errorf("after the withdrawal: verified %v, supply %+v", r.Verified, r.Supply)
	}
}
