package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/probity-dev/probity/accounts"
	"github.com/probity-dev/probity/claims"
	"github.com/probity-dev/probity/notify"
	"github.com/probity-dev/probity/store"
)

// The sign-in, sign-out, account and privacy pages (the write paths of Accounts).

// Bounds of the sign-in forms.
const (
	// maxEmail is the longest e-mail address (RFC 5321's path limit).
	maxEmail = 254
	// maxOAuthParam bounds GitHub's code and state.
	maxOAuthParam = 512
	// maxGitHubCookie bounds the GitHub state cookie (state, verifier and return
	// address, signed).
	maxGitHubCookie = 2048
	// deleteWord is what a person types to confirm deleting their account.
	deleteWord = "DELETE"
)

// signInPage is the data of the sign-in pages (signin, signin_verify).
type signInPage struct {
	// Return is the address to go back to after signing in, already SafeReturn's.
	Return string
	// CSRF is the double-submit token of the forms (the sign-in cookie's value).
	CSRF string
	// Email is the address entered (shown back, escaped).
	Email string
	// Error says what was wrong with the form ("" when nothing).
	Error string
	// ByEmail offers the e-mail code forms; GitHub "Sign in with GitHub".
	ByEmail, GitHub bool
	// SignedInAs names the account already signed in ("" when none).
	SignedInAs string
}

// verifyPage is the data of the code entry page (signin_verify): Sent when a code
// was just asked for.
type verifyPage struct {
	signInPage
	Sent bool
}

// accountLabel names an account on the pages: its address, or its GitHub login.
func accountLabel(a Account) string {
	if a.Email != "" {
		return visibleLine(a.Email)
	}
	if a.GitHubLogin != "" {
		return "@" + visibleLine(a.GitHubLogin) + " on GitHub"
	}
	return "your account"
}

// Label is label for templates.
func (v *viewer) Label() string { return accountLabel(v.Account) }

func (h *handlers) signInData(c *gin.Context, ret string) (signInPage, error) {
	p := signInPage{Return: h.acc.SafeReturn(ret), CSRF: h.signInToken(c), ByEmail: h.acc.EmailEnabled(), GitHub: h.acc.GitHubEnabled()}
	v, err := h.viewer(c)
	if v != nil {
		p.SignedInAs = accountLabel(v.Account)
	}
	return p, err
}

// signIn serves GET /signin: the e-mail form and the GitHub link.
func (h *handlers) signIn(c *gin.Context) {
	p, err := h.signInData(c, c.Query("return"))
	if err != nil {
		h.fail(c, err)
		return
	}
	private(c)
	h.render(c, http.StatusOK, "signin", p)
}

// signInCode serves POST /signin/code: it asks for a code and shows the form to enter
// it, with the same words whether or not the address has an account.
func (h *handlers) signInCode(c *gin.Context) {
	if !h.acc.EmailEnabled() {
		h.fail(c, errNotFound)
		return
	}
	if !h.form(c) || !h.checkSignInToken(c) {
		return
	}
	p, err := h.signInData(c, formValue(c, "return"))
	if err != nil {
		h.fail(c, err)
		return
	}
	private(c)
	p.Email = strings.TrimSpace(formValue(c, "email"))
	if msg := emailProblem(p.Email); msg != "" {
		p.Error = msg
		h.render(c, http.StatusBadRequest, "signin", p)
		return
	}
	err = h.acc.RequestCode(c.Request.Context(), p.Email, c.ClientIP())
	switch {
	case errors.Is(err, ErrInvalidAddress):
		p.Error = "That is not an e-mail address we can send to. Check it and try again."
		h.render(c, http.StatusBadRequest, "signin", p)
		return
	case errors.Is(err, ErrTooMany):
		h.tooMany(c, "signin", p)
		return
	case errors.Is(err, ErrSiteBusy):
		p.Error = siteBusyText
		c.Header("Retry-After", siteBusyRetry)
		h.render(c, http.StatusServiceUnavailable, "signin", p)
		return
	case err != nil:
		h.fail(c, err)
		return
	}
	h.render(c, http.StatusOK, "signin_verify", verifyPage{p, true})
}

// emailProblem bounds an address before the service checks it.
func emailProblem(s string) string {
	switch {
	case s == "":
		return "Enter your e-mail address."
	case len(s) > maxEmail:
		return "That address is longer than an e-mail address can be."
	case !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "That is not an e-mail address we can send to. Check it and try again."
	}
	return ""
}

// tooMany answers 429 with page p saying to try again later (and nothing about the
// address).
// siteBusyText and siteBusyRetry answer a code asked for past the site's hourly cap
// (ErrSiteBusy): the same for every address, known or not; the cap's window slides, so
// a code may go again before the hour is over.
const (
	siteBusyText  = "This site has sent as many sign-in codes as it sends in an hour. Please try again later."
	siteBusyRetry = "600"
)

func (h *handlers) tooMany(c *gin.Context, page string, p signInPage) {
	p.Error = "There were too many sign-in attempts. Please try again in an hour."
	c.Header("Retry-After", "3600")
	h.render(c, http.StatusTooManyRequests, page, verifyPage{p, false})
}

// signInVerify serves GET /signin/verify (the form to enter a code) and POST
// /signin/verify (signing in with it).
func (h *handlers) signInVerify(c *gin.Context) {
	if !h.acc.EmailEnabled() {
		h.fail(c, errNotFound)
		return
	}
	private(c)
	if c.Request.Method != http.MethodPost {
		p, err := h.signInData(c, c.Query("return"))
		if err != nil {
			h.fail(c, err)
			return
		}
		if e := strings.TrimSpace(c.Query("email")); emailProblem(e) == "" {
			p.Email = e
		}
		h.render(c, http.StatusOK, "signin_verify", verifyPage{p, false})
		return
	}
	if !h.form(c) || !h.checkSignInToken(c) {
		return
	}
	p, err := h.signInData(c, formValue(c, "return"))
	if err != nil {
		h.fail(c, err)
		return
	}
	p.Email = strings.TrimSpace(formValue(c, "email"))
	code, codeOK := accounts.NormalizeCode(formValue(c, "code"))
	again := func(status int, msg string) {
		p.Error = msg
		h.render(c, status, "signin_verify", verifyPage{p, false})
	}
	if msg := emailProblem(p.Email); msg != "" {
		again(http.StatusBadRequest, msg)
		return
	}
	if !codeOK {
		again(http.StatusBadRequest, "The code is the 8 digits in the e-mail we sent.")
		return
	}
	sess, err := h.acc.VerifyCode(c.Request.Context(), p.Email, code, c.ClientIP())
	switch {
	case errors.Is(err, ErrBadCode), errors.Is(err, ErrInvalidAddress):
		again(http.StatusBadRequest, "That code is wrong, used or expired. A code works once, for 10 minutes, and five wrong tries end it: ask for a new one if you need to.")
		return
	case errors.Is(err, ErrTooMany):
		h.tooMany(c, "signin_verify", p)
		return
	case err != nil:
		h.fail(c, err)
		return
	}
	h.startSession(c, sess)
	h.jar.set(c, cookieSignIn, "", -1)
	h.redirect(c, h.acc.SafeReturn(p.Return))
}

// startSession sets the cookie of a new session. A session the browser had before
// is ended: a sign-in never keeps or upgrades an older session id (fixation).
func (h *handlers) startSession(c *gin.Context, s Session) {
	if old := h.jar.get(c, cookieSession); old != "" && old != s.Token {
		if err := h.acc.SignOut(c.Request.Context(), old); err != nil {
			_ = c.Error(err) // logged; the new session stands
		}
	}
	life := sessionLifetime
	if !s.ExpiresAt.IsZero() {
		if d := s.ExpiresAt.Sub(h.site.now()); d > 0 && d < life {
			life = d
		}
	}
	h.jar.set(c, cookieSession, s.Token, life)
}

// gitHubStart serves GET /signin/github: to GitHub's authorization page, with the
// state in a cookie of its own.
func (h *handlers) gitHubStart(c *gin.Context) {
	if !h.acc.GitHubEnabled() {
		h.fail(c, errNotFound)
		return
	}
	authURL, state, err := h.acc.GitHubStart(h.acc.SafeReturn(c.Query("return")))
	if err != nil {
		h.fail(c, err)
		return
	}
	h.jar.set(c, cookieGitHub, state, gitHubLifetime)
	// GitHub's address comes from the configuration, never from the request.
	c.Header("Location", authURL)
	c.Header("Cache-Control", "no-store")
	c.Status(http.StatusSeeOther)
}

// gitHubCallback serves GET /signin/github/callback, where GitHub sends the browser
// back with a code and the state.
func (h *handlers) gitHubCallback(c *gin.Context) {
	if !h.acc.GitHubEnabled() {
		h.fail(c, errNotFound)
		return
	}
	private(c)
	q := c.Request.URL.Query()
	state := h.gitHubCookie(c)
	h.jar.set(c, cookieGitHub, "", -1)
	if q.Get("error") != "" {
		// GitHub's error text is not shown: anyone can put it in this address.
		h.message(c, http.StatusBadRequest, "Sign-in cancelled", "GitHub did not sign you in (it was cancelled or refused). You can try again, or sign in with an e-mail code.", signInLink)
		return
	}
	code, st := q.Get("code"), q.Get("state")
	if state == "" || code == "" || st == "" || len(code) > maxOAuthParam || len(st) > maxOAuthParam {
		h.message(c, http.StatusBadRequest, "Sign-in did not complete", "This sign-in with GitHub began in another browser or took longer than 10 minutes. Please start again.", signInLink)
		return
	}
	sess, ret, err := h.acc.GitHubFinish(c.Request.Context(), code, st, state)
	switch {
	case errors.Is(err, accounts.ErrGitHubState), errors.Is(err, accounts.ErrGitHubDenied), errors.Is(err, ErrBadCode):
		h.message(c, http.StatusBadRequest, "Sign-in did not complete", "GitHub's answer did not match this sign-in, or GitHub refused the code. Please start again.", signInLink)
		return
	case err != nil:
		h.fail(c, err)
		return
	}
	h.startSession(c, sess)
	h.redirect(c, h.acc.SafeReturn(ret))
}

// gitHubCookie is the GitHub state cookie's value, "" when absent or out of bounds.
func (h *handlers) gitHubCookie(c *gin.Context) string {
	ck, err := c.Request.Cookie(h.jar.name(cookieGitHub))
	if err != nil || len(ck.Value) > maxGitHubCookie {
		return ""
	}
	return ck.Value
}

// signOut serves POST /signout: this browser's session ends.
func (h *handlers) signOut(c *gin.Context) {
	v, ok := h.postSignedIn(c, "/")
	if !ok {
		return
	}
	if err := h.acc.SignOut(c.Request.Context(), v.token); err != nil {
		h.fail(c, err)
		return
	}
	h.jar.set(c, cookieSession, "", -1)
	h.redirect(c, "/")
}

// signOutEverywhere serves POST /signout/everywhere: every session of the account
// ends.
func (h *handlers) signOutEverywhere(c *gin.Context) {
	v, ok := h.postSignedIn(c, "/account")
	if !ok {
		return
	}
	if err := h.acc.SignOutEverywhere(c.Request.Context(), v.ID); err != nil {
		h.fail(c, err)
		return
	}
	h.jar.set(c, cookieSession, "", -1)
	private(c)
	h.message(c, http.StatusOK, "Signed out everywhere", "Every browser and device that was signed in to "+accountLabel(v.Account)+" is signed out, this one too.", signInLink)
}

// accountPage is the data of the account page.
type accountPage struct {
	V        *viewer
	Webhooks bool
	Follows  bool
	// ByEmail offers the form of the address e-mails go to.
	ByEmail bool
	// Error is the deletion form's; EmailError and Email the address form's.
	Error      string
	EmailError string
	Email      string
}

// accountPage is the account page of v, the site's features on.
func (h *handlers) accountPage(v *viewer) accountPage {
	return accountPage{V: v, Webhooks: h.hooks != nil, Follows: h.follows != nil, ByEmail: h.acc.EmailEnabled()}
}

// withError is p with the deletion form's error.
func (p accountPage) withError(msg string) accountPage { p.Error = msg; return p }

// withEmailError is p with the address form's address and error.
func (p accountPage) withEmailError(email, msg string) accountPage {
	p.Email, p.EmailError = email, msg
	return p
}

// account serves GET /account.
func (h *handlers) account(c *gin.Context) {
	v, ok := h.signedIn(c, "/account")
	if !ok {
		return
	}
	h.renewSession(c, v)
	h.render(c, http.StatusOK, "account", h.accountPage(v))
}

// renewSession renews the session cookie's Max-Age on the account pages (the
// service's session slides on use) and marks the response private.
func (h *handlers) renewSession(c *gin.Context, v *viewer) {
	h.jar.set(c, cookieSession, v.token, sessionLifetime)
	private(c)
}

// deleteAccount serves POST /account/delete: with DELETE typed in the confirm
// field, the account and everything that is its are deleted.
func (h *handlers) deleteAccount(c *gin.Context) {
	v, ok := h.postSignedIn(c, "/account")
	if !ok {
		return
	}
	private(c)
	if strings.TrimSpace(formValue(c, "confirm")) != deleteWord {
		h.render(c, http.StatusBadRequest, "account", h.accountPage(v).withError("Nothing was deleted: type DELETE, in capitals, into the box to confirm."))
		return
	}
	if err := h.acc.DeleteAccount(c.Request.Context(), v.ID); err != nil {
		h.fail(c, err)
		return
	}
	h.jar.set(c, cookieSession, "", -1)
	h.message(c, http.StatusOK, "Account deleted", "Your account is deleted, with the entries you followed, your sessions, your webhooks and every e-mail not sent yet. Nothing of it is kept.", link{Href: "/", Text: "Back to the directory"})
}

// privacyPage is the privacy page's data: the features on, and the durations it
// states, spelled from the constants of the packages that keep and prune the data
// (one owner each: the page never repeats a number).
type privacyPage struct {
	Webhooks, Follows, GitHub, Claims bool
	// ClaimTokenKeep is how long a claim token's hash is kept after it expired or was
	// used (claims' Recheck prunes it); ClaimUnanswered how long a claim whose proof
	// cannot be read stays; ClaimGone the span between the two checks that must both
	// find a proof gone (package claims).
	ClaimTokenKeep, ClaimUnanswered, ClaimGone string
	// Session is how long a session lasts after its last use (accounts), and
	// Code a sign-in code, Throttle a sign-in limit's count after the last request
	// it counts; SessionCookie and GitHubCookie are the cookies' lives.
	Session, Code, Throttle, SessionCookie, GitHubCookie string
	// NotifyKeep is how long a finished change e-mail's record, and a deleted
	// followed entry once told, are kept; NotifyKeepUntold a deleted followed entry
	// no e-mail told (notify, whose PruneNotify deletes them).
	NotifyKeep, NotifyKeepUntold string
	// WebhookLog is how many deliveries a webhook's log keeps (store).
	WebhookLog int
	// Reports says the site takes reports (reports.go); ReportKept is how long a closed
	// report keeps its contact address.
	Reports    bool
	ReportKept string
}

// privacy serves GET /privacy.
func (h *handlers) privacy(c *gin.Context) {
	c.Header("Cache-Control", "public, max-age=3600")
	h.render(c, http.StatusOK, "privacy", privacyPage{
		Webhooks: h.hooks != nil, Follows: h.follows != nil, GitHub: h.acc.GitHubEnabled(), Claims: h.claims != nil,
		ClaimTokenKeep: spellDuration(claims.TokenKeep), ClaimUnanswered: spellDuration(claims.DefaultMaxUnanswered),
		ClaimGone: spellDuration(claims.GoneFor),
		Session:   spellDuration(accounts.SessionLifetime), Code: spellDuration(accounts.CodeLifetime),
		Throttle:      spellDuration(accounts.ThrottleWindow),
		SessionCookie: spellDuration(sessionLifetime), GitHubCookie: spellDuration(gitHubLifetime),
		NotifyKeep: spellDuration(notify.DefaultKeep), NotifyKeepUntold: spellDuration(notify.KeepUntold),
		WebhookLog: store.MaxWebhookLog,
		Reports:    h.reports != nil, ReportKept: spellDuration(store.ReportContactKept),
	})
}

// spellDuration spells a duration of whole days, hours or minutes in words ("30
// days", "one hour", "10 minutes"), the coarsest unit that is exact.
func spellDuration(d time.Duration) string {
	n, unit := int64(d/time.Minute), "minute"
	switch {
	case d%(24*time.Hour) == 0:
		n, unit = int64(d/(24*time.Hour)), "day"
	case d%time.Hour == 0:
		n, unit = int64(d/time.Hour), "hour"
	}
	if n == 1 {
		return "one " + unit
	}
	return strconv.FormatInt(n, 10) + " " + unit + "s"
}

// link is a link a message page offers.
type link struct{ Href, Text string }

var signInLink = link{Href: "/signin", Text: "Sign in"}

// message renders a short page: a title, one paragraph, and links.
func (h *handlers) message(c *gin.Context, status int, title, msg string, links ...link) {
	h.render(c, status, "message", struct {
		Title, Message string
		Links          []link
	}{title, msg, links})
}

// accountEmailPage is the data of the page that enters the code of a new address.
type accountEmailPage struct {
	V     *viewer
	Email string
	Error string
	Sent  bool
}

// accountEmail serves POST /account/email: a code to the address the account wants
// its e-mails at (a GitHub account has none; an e-mail account changes its own).
func (h *handlers) accountEmail(c *gin.Context) {
	if !h.acc.EmailEnabled() {
		h.fail(c, errNotFound)
		return
	}
	v, ok := h.postSignedIn(c, "/account")
	if !ok {
		return
	}
	private(c)
	p := accountEmailPage{V: v, Email: strings.TrimSpace(formValue(c, "email"))}
	if msg := emailProblem(p.Email); msg != "" {
		h.render(c, http.StatusBadRequest, "account", h.accountPage(v).withEmailError(p.Email, msg))
		return
	}
	err := h.acc.RequestCode(c.Request.Context(), p.Email, c.ClientIP())
	switch {
	case errors.Is(err, ErrInvalidAddress):
		h.render(c, http.StatusBadRequest, "account", h.accountPage(v).withEmailError(p.Email, "That is not an e-mail address we can send to. Check it and try again."))
		return
	case errors.Is(err, ErrTooMany):
		c.Header("Retry-After", "3600")
		h.render(c, http.StatusTooManyRequests, "account", h.accountPage(v).withEmailError(p.Email, "There were too many codes asked for. Please try again in an hour."))
		return
	case errors.Is(err, ErrSiteBusy):
		c.Header("Retry-After", siteBusyRetry)
		h.render(c, http.StatusServiceUnavailable, "account", h.accountPage(v).withEmailError(p.Email, siteBusyText))
		return
	case err != nil:
		h.fail(c, err)
		return
	}
	p.Sent = true
	h.render(c, http.StatusOK, "account_email", p)
}

// accountEmailVerify serves POST /account/email/verify: the code sent to the new
// address makes it the account's.
func (h *handlers) accountEmailVerify(c *gin.Context) {
	if !h.acc.EmailEnabled() {
		h.fail(c, errNotFound)
		return
	}
	v, ok := h.postSignedIn(c, "/account")
	if !ok {
		return
	}
	private(c)
	p := accountEmailPage{V: v, Email: strings.TrimSpace(formValue(c, "email"))}
	code, codeOK := accounts.NormalizeCode(formValue(c, "code"))
	again := func(status int, msg string) {
		p.Error = msg
		h.render(c, status, "account_email", p)
	}
	if msg := emailProblem(p.Email); msg != "" {
		again(http.StatusBadRequest, msg)
		return
	}
	if !codeOK {
		again(http.StatusBadRequest, "The code is the 8 digits in the e-mail we sent.")
		return
	}
	err := h.acc.AddEmail(c.Request.Context(), v.ID, p.Email, code, c.ClientIP())
	switch {
	case errors.Is(err, ErrBadCode), errors.Is(err, ErrInvalidAddress):
		again(http.StatusBadRequest, "That code is wrong, used or expired. A code works once, for 10 minutes: ask for a new one if you need to.")
		return
	case errors.Is(err, ErrAddressTaken):
		again(http.StatusConflict, "That address belongs to another account. Sign in with it there, or delete that account first.")
		return
	case errors.Is(err, ErrTooMany):
		c.Header("Retry-After", "3600")
		again(http.StatusTooManyRequests, "There were too many attempts. Please try again in an hour.")
		return
	case err != nil:
		h.fail(c, err)
		return
	}
	h.redirect(c, "/account")
}
