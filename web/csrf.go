package web

// Cookies, sessions and the defences against cross-site request forgery of the write
// paths. Three layers, each enough against a different attacker:
//
//  1. Every request passes http.CrossOriginProtection (crossOrigin): a POST the
//     browser marks as cross-origin (Sec-Fetch-Site other than same-origin or none,
//     or an Origin that is not this host) is refused with 403. The one exception is
//     RFC 8058's one-click unsubscribe, which a mail provider posts from anywhere and
//     which its signed token authenticates.
//  2. Every form of a signed-in person carries a hidden csrf field, the HMAC of the
//     session token (Accounts.CSRFToken), checked in constant time
//     (Accounts.CheckCSRF): a forged form cannot know it.
//  3. The sign-in forms, sent before there is a session, carry a double-submit token:
//     a random value in a cookie of its own and in the form, compared in constant
//     time. With the __Host- prefix no other host (a sibling subdomain) can set it.
//
// The session cookie is HttpOnly and SameSite=Lax, Secure unless the site is served
// over http on a loopback host, and then named __Host-probity_session (Path=/, no
// Domain: only this host ever receives or sets it). The session token is read from
// that cookie only, never from the query or the form.

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

// Cookie names without their __Host- prefix.
const (
	cookieSession = "probity_session"
	cookieSignIn  = "probity_signin" // the sign-in forms' double-submit token
	cookieGitHub  = "probity_github" // the GitHub sign-in's state
)

// Bounds of the write paths.
const (
	// maxPostBody is the most of a POST body read: the largest form (a webhook
	// address of 2048 bytes with its fields) fits with room to spare.
	maxPostBody = 8 << 10
	// sessionLifetime is the session cookie's Max-Age; the service's session lasts as
	// long and slides on use, and the cookie is renewed on the account pages.
	sessionLifetime = 30 * 24 * time.Hour
	// signInLifetime is the double-submit cookie's Max-Age: time to fetch a code.
	signInLifetime = time.Hour
	// gitHubLifetime is the state cookie's Max-Age: time to answer GitHub.
	gitHubLifetime = 10 * time.Minute
	// maxToken bounds a token read from a cookie, a form or a path.
	maxToken = 256
	// maxLocation bounds a Location header the site writes: the sign-in page's
	// address with a return address of 512 bytes, escaped.
	maxLocation = 4 << 10
)

// cookieJar names and sets the site's cookies.
type cookieJar struct {
	secure bool
	prefix string // "__Host-" when secure
}

// newCookieJar decides from the site's base URL whether cookies are Secure: always,
// but for http on a loopback host (a developer's machine, tests, the demo). A site
// served over http anywhere else would send its sessions in clear: refused.
func newCookieJar(base string) (cookieJar, error) {
	u, err := url.Parse(base)
	if err != nil {
		return cookieJar{}, err
	}
	switch {
	case u.Scheme == "https":
		return cookieJar{secure: true, prefix: "__Host-"}, nil
	case u.Scheme == "http" && loopbackHost(u.Hostname()):
		return cookieJar{}, nil
	}
	return cookieJar{}, fmt.Errorf("web: sign-in needs an https BaseURL (http only on a loopback host), not %q", base)
}

// loopbackHost reports whether host is localhost or a loopback address.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (j cookieJar) name(base string) string { return j.prefix + base }

// set sets cookie base to value for maxAge (negative: delete it).
func (j cookieJar) set(c *gin.Context, base, value string, maxAge time.Duration) {
	ck := &http.Cookie{
		Name:     j.name(base),
		Value:    value,
		Path:     "/",
		HttpOnly: true,
		Secure:   j.secure,
		SameSite: http.SameSiteLaxMode,
	}
	if maxAge < 0 {
		ck.MaxAge = -1
	} else {
		ck.MaxAge = int(maxAge / time.Second)
	}
	http.SetCookie(c.Writer, ck)
}

// get reads cookie base; "" when absent or not a token.
func (j cookieJar) get(c *gin.Context, base string) string {
	ck, err := c.Request.Cookie(j.name(base))
	if err != nil || !tokenOK(ck.Value) {
		return ""
	}
	return ck.Value
}

// tokenOK bounds a token before it goes further: 1 to maxToken bytes of base64url
// (the alphabet every token of the site is written in), with '.' for tokens made of
// parts.
func tokenOK(s string) bool {
	if s == "" || len(s) > maxToken {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// newToken is 32 random bytes, base64url.
func newToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

// crossOrigin refuses a state-changing request the browser marks as cross-origin
// (http.CrossOriginProtection; its bypass is the one-click route only).
func (h *handlers) crossOrigin(c *gin.Context) {
	if err := h.cop.Check(c.Request); err != nil {
		h.problem(c, http.StatusForbidden, "This form was sent from another site, so it was refused. Use the forms on this site's own pages.")
		c.Abort()
		return
	}
	c.Next()
}

// newCrossOriginProtection is the site's http.CrossOriginProtection: the site's own
// origin is trusted (a proxy may rewrite the Host the browser's Origin is compared
// with), and the one-click route is the one bypass.
func newCrossOriginProtection(base string) (*http.CrossOriginProtection, error) {
	cop := http.NewCrossOriginProtection()
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	if err := cop.AddTrustedOrigin(u.Scheme + "://" + u.Host); err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	cop.AddInsecureBypassPattern("POST " + oneClickPattern)
	return cop, nil
}

// oneClickPattern is the one-click route as a ServeMux pattern (the bypass of
// CrossOriginProtection).
const oneClickPattern = "/unsubscribe/{token}/one-click"

// viewer is the signed-in person of a request.
type viewer struct {
	Account
	token string // the session token of the cookie
	// CSRF is the hidden csrf field of the forms shown to them.
	CSRF string
}

// ctxViewer caches the request's viewer in the gin context.
const ctxViewer = "probity.viewer"

// viewer returns the signed-in person of the request, or nil. The session token
// comes from the session cookie only; a cookie whose session is gone is deleted.
func (h *handlers) viewer(c *gin.Context) (*viewer, error) {
	if h.acc == nil {
		return nil, nil
	}
	if v, ok := c.Get(ctxViewer); ok {
		vv, _ := v.(*viewer)
		return vv, nil
	}
	var v *viewer
	if token := h.jar.get(c, cookieSession); token != "" {
		a, err := h.acc.Session(c.Request.Context(), token)
		switch {
		case err == nil:
			v = &viewer{Account: a, token: token, CSRF: h.acc.CSRFToken(token)}
		case errors.Is(err, ErrNoSession):
			h.jar.set(c, cookieSession, "", -1)
		default:
			return nil, err
		}
	}
	c.Set(ctxViewer, v)
	return v, nil
}

// signedIn returns the signed-in person, or answers with a redirect to the sign-in
// page that comes back to ret (or, for a GET, to the page asked for) and false.
func (h *handlers) signedIn(c *gin.Context, ret string) (*viewer, bool) {
	v, err := h.viewer(c)
	if err != nil {
		h.fail(c, err)
		return nil, false
	}
	if v != nil {
		return v, true
	}
	if c.Request.Method == http.MethodGet || c.Request.Method == http.MethodHead {
		ret = c.Request.URL.RequestURI()
	}
	h.redirect(c, "/signin?return="+url.QueryEscape(h.acc.SafeReturn(ret)))
	return nil, false
}

// redirect answers 303 See Other to loc, a path of this site (SafeReturn's, or the
// site's own). Anything else goes to the Followed page: a Location that is not a
// local path is never written.
func (h *handlers) redirect(c *gin.Context, loc string) {
	if !localPath(loc) {
		loc = "/followed"
	}
	c.Header("Location", loc)
	c.Header("Cache-Control", "no-store")
	c.Status(http.StatusSeeOther)
	c.Abort()
}

// localPath is the last check before a Location header: a path that starts with one
// "/" (not "//" nor "/\", which browsers read as another host) and holds no control
// character.
func localPath(s string) bool {
	if len(s) == 0 || len(s) > maxLocation || s[0] != '/' || len(s) > 1 && (s[1] == '/' || s[1] == '\\') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return false
		}
	}
	return true
}

// form parses the POST form (the body only, never the query), bounded by
// maxPostBody; on failure it has answered (413 or 400) and returns false.
func (h *handlers) form(c *gin.Context) bool {
	if err := c.Request.ParseForm(); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			h.problem(c, http.StatusRequestEntityTooLarge, fmt.Sprintf("The form is larger than %d KiB.", h.postLimit(c)>>10))
		} else {
			h.problem(c, http.StatusBadRequest, "The form could not be read.")
		}
		c.Abort()
		return false
	}
	return true
}

// formValue is a form field of the body (never of the query). The body is at most
// maxPostBody; each caller bounds the field further.
func formValue(c *gin.Context, name string) string {
	return c.Request.PostForm.Get(name)
}

// checkCSRF answers 403 and returns false unless the form's csrf field is the
// session's token.
func (h *handlers) checkCSRF(c *gin.Context, v *viewer) bool {
	f := formValue(c, "csrf")
	if f == "" || len(f) > maxToken || !h.acc.CheckCSRF(v.token, f) {
		h.problem(c, http.StatusForbidden, "This form is out of date or did not come from this site. Reload the page and send it again.")
		c.Abort()
		return false
	}
	return true
}

// postSignedIn starts every POST of a signed-in person: the bounded form, the
// session (else a redirect to sign in, back to the form's return address or ret),
// and the csrf field.
func (h *handlers) postSignedIn(c *gin.Context, ret string) (*viewer, bool) {
	if !h.form(c) {
		return nil, false
	}
	if r := formValue(c, "return"); r != "" {
		ret = r
	}
	v, ok := h.signedIn(c, ret)
	if !ok || !h.checkCSRF(c, v) {
		return nil, false
	}
	return v, true
}

// signInToken returns the double-submit token of the sign-in forms, setting its
// cookie when the browser has none.
func (h *handlers) signInToken(c *gin.Context) string {
	if t := h.jar.get(c, cookieSignIn); t != "" {
		return t
	}
	t := newToken()
	h.jar.set(c, cookieSignIn, t, signInLifetime)
	return t
}

// checkSignInToken answers 403 and returns false unless the form's csrf field equals
// the sign-in cookie (compared in constant time).
func (h *handlers) checkSignInToken(c *gin.Context) bool {
	return h.checkDoubleSubmit(c, "This sign-in form is out of date or did not come from this site (or your browser refused its cookie). Open the sign-in page again.")
}

// checkDoubleSubmit is checkSignInToken for any form that the anonymous send too (the
// report form, reports.go), answering 403 with msg.
func (h *handlers) checkDoubleSubmit(c *gin.Context, msg string) bool {
	ck := h.jar.get(c, cookieSignIn)
	f := formValue(c, "csrf")
	if ck == "" || subtle.ConstantTimeCompare([]byte(ck), []byte(f)) != 1 {
		h.problem(c, http.StatusForbidden, msg)
		c.Abort()
		return false
	}
	return true
}

// private marks a response for one person: no cache keeps it.
func private(c *gin.Context) {
	c.Header("Cache-Control", "no-store")
}

// Bounds of the forms whose text fields are longer than maxPostBody allows once
// form-encoded (a character of up to 4 bytes, percent-encoded, is 12).
const (
	maxReportBody = 64 << 10 // a report: 4,000 characters and a contact address
	maxOpsBody    = 32 << 10 // a console form: a reason of 2,000 characters
)

// postLimit is the most of the request's POST body read: the write paths' forms
// (postBody), and the forms with longer text fields (the maintainer's listing, the
// contest form, the report form, the console's forms with a reason).
func (h *handlers) postLimit(c *gin.Context) int64 {
	p := c.FullPath()
	switch {
	case h.listings != nil && p == listingEditRoute:
		return maxListingBody
	case h.disputes != nil && contestPath(c.Request.URL.Path):
		return maxContestBody
	case h.reports != nil && p == "/s/:slug/report":
		return maxReportBody
	case h.ops != nil && strings.HasPrefix(p, "/ops/"):
		return maxOpsBody
	}
	return h.postBody
}
