package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestSiteCodeCap: past the site's hourly cap of sign-in codes, the sign-in page and
// the account's e-mail form say so (503, Retry-After), in the same words for an address
// with an account and one without.
func TestSiteCodeCap(t *testing.T) {
	w := newWriteSite(t, writeOpts{})
	b := w.browser(t)
	csrf := b.signIn("member@example.com")
	w.acc.siteBusy = true
	defer func() { w.acc.siteBusy = false }()

	rec := b.post("/account/email", url.Values{"csrf": {csrf}, "email": {"other@example.com"}})
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" ||
		!strings.Contains(rec.Body.String(), "as many sign-in codes as it sends in an hour") {
		t.Errorf("the account's e-mail form over the site's cap: %d\n%s", rec.Code, rec.Body)
	}

	v := w.browser(t)
	tok := csrfOf(t, v.get("/signin").Body.String())
	var bodies []string
	for _, email := range []string{"member@example.com", "stranger@example.com"} {
		rec := v.post("/signin/code", url.Values{"csrf": {tok}, "email": {email}})
		if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" ||
			!strings.Contains(rec.Body.String(), "Please try again later") {
			t.Errorf("%s over the site's cap: %d\n%s", email, rec.Code, rec.Body)
		}
		bodies = append(bodies, strings.ReplaceAll(rec.Body.String(), email, "ADDRESS"))
	}
	if len(bodies) == 2 && bodies[0] != bodies[1] {
		t.Error("the answers over the site's cap differ between an address with an account and one without")
	}
}
