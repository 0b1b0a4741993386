package web_test

import (
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/web"
)

// newBaselineSite is newWriteSite's site with the baseline pages and the roles' fakes.
func newBaselineSite(t *testing.T, write web.RateLimit) (*writeSite, *baselineRoles, *fakeBaselines) {
	w, roles, fb, _ := newBaselineClaimSite(t, write, "")
	return w, roles, fb
}

// newBaselineClaimSite is newBaselineSite with the claim pages too.
func newBaselineClaimSite(t *testing.T, write web.RateLimit, base string) (*writeSite, *baselineRoles, *fakeBaselines, *fakeClaims) {
	t.Helper()
	w := newWriteSite(t, writeOpts{base: base})
	start := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	now := func() time.Time { return start.Add(time.Hour) }
	roles := newBaselineRoles()
	fb := newFakeBaselines(w.st, roles, w.mutations, now)
	fc := newFakeClaims(w.st, w.mutations, now)
	if write.Burst == 0 {
		write = generous
	}
	_, doc, _ := openStore(t, start) // the key document; the site reads w's store
	h, err := web.New(web.Config{Store: w.st, Keys: doc, BaseURL: w.base, Now: now,
		Logger: slog.New(slog.DiscardHandler), RateLimit: generous, WriteRateLimit: write,
		Accounts: w.acc, Follows: w.fol, Webhooks: w.hooks, Claims: fc, Maintainers: roles, Operators: roles, Baselines: fb})
	if err != nil {
		t.Fatal(err)
	}
	w.h = h
	return w, roles, fb, fc
}

// TestClaimPageLinksBaseline: the claim page points a maintainer of the entry to its
// baseline page, and no one else.
func TestClaimPageLinksBaseline(t *testing.T) {
	w, _, _, fc := newBaselineClaimSite(t, web.RateLimit{}, "")
	b := w.browser(t)
	b.signIn("ada@example.com")
	link := `<a href="/s/` + w.slug + `/baseline">`
	if rec := b.get("/s/" + w.slug + "/claim"); rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), link) {
		t.Errorf("claim page of a non-maintainer: %d, links the baseline page: %v", rec.Code, strings.Contains(rec.Body.String(), link))
	}
	fc.mu.Lock()
	fc.claimed[w.slug] = map[int64]bool{w.accountOf(t, b): true}
	fc.mu.Unlock()
	if rec := b.get("/s/" + w.slug + "/claim"); !strings.Contains(rec.Body.String(), link) {
		t.Errorf("claim page of a maintainer does not link the baseline page:\n%s", rec.Body)
	}
}

// TestBaselineAuthorization is the route matrix of GET and POST /s/{slug}/baseline:
// anonymous → sign in (and back to the page), signed in → 403, maintainer of another
// entry → 403, operator without a claim → 403, maintainer of this entry → the page and
// the approval. A refused request changes nothing; no such entry is 404.
func TestBaselineAuthorization(t *testing.T) {
	w, roles, fb := newBaselineSite(t, web.RateLimit{})
	fb.setNewest(w.entryID, 3, "v1")
	path := "/s/" + w.slug + "/baseline"

	anon := w.browser(t)
	for _, r := range []req{{method: "GET", path: path}, {method: "POST", path: path, form: url.Values{"csrf": {"x"}}}} {
		rec := anon.do(r)
		if want := "/signin?return=%2Fs%2F" + w.slug + "%2Fbaseline"; rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != want {
			t.Errorf("anonymous %s: %d to %q, want 303 to %q", r.method, rec.Code, rec.Header().Get("Location"), want)
		}
	}

	type who struct {
		name  string
		setup func(b *browser)
		get   int
		post  int
	}
	for _, c := range []who{
		{"signed in", func(b *browser) {}, http.StatusForbidden, http.StatusForbidden},
		{"maintainer of another entry", func(b *browser) { roles.maintain(w.accountOf(t, b), w.evil.ID) }, http.StatusForbidden, http.StatusForbidden},
		{"operator without a claim", func(b *browser) { roles.operator(w.accountOf(t, b)) }, http.StatusForbidden, http.StatusForbidden},
		{"maintainer of this entry", func(b *browser) { roles.maintain(w.accountOf(t, b), w.entryID) }, http.StatusOK, http.StatusOK},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := w.browser(t)
			csrf := b.signIn(strings.ReplaceAll(c.name, " ", "-") + "@example.com")
			c.setup(b)
			before := w.mutations.Load()
			rec := b.get(path)
			if rec.Code != c.get || rec.Header().Get("Cache-Control") != "no-store" {
				t.Errorf("GET: %d %q, want %d no-store\n%s", rec.Code, rec.Header().Get("Cache-Control"), c.get, rec.Body)
			}
			rec = b.post(path, seenForm(t, b, path, csrf))
			if rec.Code != c.post {
				t.Errorf("POST: %d, want %d\n%s", rec.Code, c.post, rec.Body)
			}
			if changed := w.mutations.Load() != before; changed != (c.post == http.StatusOK) {
				t.Errorf("POST changed something: %v", changed)
			}
			if rec := b.post("/s/no-such-entry/baseline", url.Values{"csrf": {csrf}}); rec.Code != http.StatusNotFound {
				t.Errorf("POST of no entry: %d, want 404", rec.Code)
			}
		})
	}
}

// TestBaselineApprove walks a maintainer through the page: nothing approved, the
// defences of the form (csrf, origin), an approval, a second one refused while the
// surface is the approved one, a drift shown as such and approved as number 2; an
// entry without a signed round cannot be approved; server text is escaped.
func TestBaselineApprove(t *testing.T) {
	w, roles, fb := newBaselineSite(t, web.RateLimit{})
	b := w.browser(t)
	csrf := b.signIn("ada@example.com")
	roles.maintain(w.accountOf(t, b), w.entryID)
	roles.maintain(w.accountOf(t, b), w.evil.ID)
	path := "/s/" + w.slug + "/baseline"

	// No signed round yet: nothing to approve, no form.
	rec := b.get(path)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "No baseline is approved yet") || strings.Contains(rec.Body.String(), "Approve these tools") ||
		!strings.Contains(rec.Body.String(), "no successful signed round") {
		t.Fatalf("GET before any round: %d\n%s", rec.Code, rec.Body)
	}
	if rec := b.post(path, url.Values{"csrf": {csrf}}); rec.Code != http.StatusConflict {
		t.Errorf("POST before any round: %d, want 409", rec.Code)
	}

	fb.setNewest(w.entryID, 3, "v1")
	rec = b.get(path)
	if !strings.Contains(rec.Body.String(), "Approve these tools") || !strings.Contains(rec.Body.String(), fb.newest[w.entryID].Fingerprints.Surface) {
		t.Fatalf("GET with a round:\n%s", rec.Body)
	}
	before := w.mutations.Load()
	for name, r := range map[string]req{
		"no csrf":      {method: "POST", path: path, form: url.Values{}},
		"wrong csrf":   {method: "POST", path: path, form: url.Values{"csrf": {"x" + csrf}}},
		"cross-origin": {method: "POST", path: path, form: url.Values{"csrf": {csrf}}, header: map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.test"}},
	} {
		if rec := b.do(r); rec.Code != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, rec.Code)
		}
	}
	if rec := b.do(req{method: "POST", path: path, body: strings.NewReader("csrf=" + csrf + "&x=" + strings.Repeat("a", 1<<20))}); rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("a 1 MB form: %d, want 413", rec.Code)
	}
	if w.mutations.Load() != before {
		t.Fatal("a refused form approved a baseline")
	}

	rec = b.post(path, seenForm(t, b, path, csrf))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "Baseline 1 approved") || strings.Contains(rec.Body.String(), "Approve these tools") {
		t.Fatalf("approve: %d\n%s", rec.Code, rec.Body)
	}
	if rec := b.post(path, seenForm(t, b, path, csrf)); rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "approved baseline already") {
		t.Errorf("approve again: %d\n%s", rec.Code, rec.Body)
	}
	// The tools drift: the page says so, and the new surface can be approved.
	fb.setNewest(w.entryID, 4, "v2")
	rec = b.get(path)
	if !strings.Contains(rec.Body.String(), "differ from the approved baseline") || !strings.Contains(rec.Body.String(), "Approve these tools") {
		t.Fatalf("after a drift:\n%s", rec.Body)
	}
	if rec := b.post(path, seenForm(t, b, path, csrf)); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "Baseline 2 approved") {
		t.Errorf("approve the drift: %d\n%s", rec.Code, rec.Body)
	}
	// Who approved is never on the page.
	if strings.Contains(rec.Body.String(), "ada") {
		t.Error("the page names the approver")
	}
	// Server text is escaped.
	rec = b.get("/s/" + w.evil.Slug + "/baseline")
	if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), "<script>alert") || !strings.Contains(rec.Body.String(), "&lt;script&gt;") {
		t.Errorf("hostile entry name: %d\n%s", rec.Code, rec.Body)
	}
}

// TestBaselineRateLimit: the approval form is on the write routes' bucket.
func TestBaselineRateLimit(t *testing.T) {
	w, roles, _ := newBaselineSite(t, web.RateLimit{PerSecond: 0.001, Burst: 4})
	b := w.browser(t)
	csrf := b.signIn("ada@example.com") // two POSTs
	roles.maintain(w.accountOf(t, b), w.entryID)
	var codes []int
	for range 4 {
		codes = append(codes, b.post("/s/"+w.slug+"/baseline", seenForm(t, b, "/s/"+w.slug+"/baseline", csrf)).Code)
	}
	if codes[0] != http.StatusConflict || codes[2] != http.StatusTooManyRequests || codes[3] != http.StatusTooManyRequests {
		t.Errorf("baseline statuses: %v", codes)
	}
}

// TestEntryPageSaysToolsDiffer: the summary card of an entry whose newest signed round
// found its tools changed against the approved baseline says so, linked to the check;
// an entry without such a finding does not.
func TestEntryPageSaysToolsDiffer(t *testing.T) {
	ts := newTabsSite(t)
	const note = `<a href="/s/drift/checks#check-surface_unchanged_vs_approved">The current tools differ from the approved baseline.</a>`
	if page := ts.get(http.MethodGet, "/s/drift").Body.String(); !strings.Contains(page, note) {
		t.Errorf("the drifted entry's page has no note:\n%s", page)
	}
	for _, slug := range []string{"healthy", "hidden", "never"} {
		if page := ts.get(http.MethodGet, "/s/"+slug).Body.String(); strings.Contains(page, "differ from the approved baseline") {
			t.Errorf("%s: the page says the tools differ from the approved baseline", slug)
		}
	}
}

var seenField = regexp.MustCompile(`name="surface" value="([^"]+)"`)

// seenForm is the approval form as the baseline page at path sends it: the csrf field
// and the surface fingerprint the page shows (none when it shows no round).
func seenForm(t *testing.T, b *browser, path, csrf string) url.Values {
	t.Helper()
	v := url.Values{"csrf": {csrf}}
	if m := seenField.FindStringSubmatch(b.get(path).Body.String()); m != nil {
		v.Set("surface", m[1])
	}
	return v
}

// TestBaselineApproveSeen: a round that lands between the page and the click is not
// approved unseen: 409, nothing approved; the page then shows the new round.
func TestBaselineApproveSeen(t *testing.T) {
	w, roles, fb := newBaselineSite(t, web.RateLimit{})
	b := w.browser(t)
	csrf := b.signIn("maint@example.org")
	roles.maintain(w.accountOf(t, b), w.entryID)
	path := "/s/" + w.slug + "/baseline"
	fb.setNewest(w.entryID, 2, "sha256:"+strings.Repeat("a", 64))
	form := seenForm(t, b, path, csrf)
	fb.setNewest(w.entryID, 3, "sha256:"+strings.Repeat("b", 64)) // a round lands
	before := w.mutations.Load()
	if rec := b.post(path, form); rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "changed since the page was shown") {
		t.Errorf("approving tools no longer newest: %d", rec.Code)
	}
	if w.mutations.Load() != before {
		t.Error("tools the maintainer never saw were approved")
	}
	if rec := b.post(path, seenForm(t, b, path, csrf)); rec.Code != http.StatusOK {
		t.Errorf("approving the tools shown now: %d", rec.Code)
	}
}
