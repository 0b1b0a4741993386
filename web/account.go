package web

import (
	"context"
	"time"

	"github.com/probity-dev/probity/accounts"
	"github.com/probity-dev/probity/notify"
	"github.com/probity-dev/probity/store"
)

// The site's write paths call three services, each declared here by what the handlers
// use (package accounts, package notify and package notify/webhook implement them, or
// adapters over them do). With Config.Accounts nil the site has no write route at
// all; Follows and Webhooks need Accounts.
//
// Errors: a service reports the refusals a person can act on with the sentinels below
// (wrapped is fine: the handlers test with errors.Is), a refused webhook address with
// a *Refusal, a row that is not the account's with store.ErrNotFound; any other error
// is a 500 whose detail goes to the log only.

// Accounts is sign-in, sessions and accounts. Tokens are raw session tokens, as the
// session cookie carries them; the service stores their SHA-256 only.
type Accounts interface {
	// RequestCode e-mails a sign-in code to email. It returns nil whether or not the
	// address has an account; ErrInvalidAddress when email is not an address;
	// ErrTooMany over the limits per address or per client; ErrSiteBusy over the
	// site's hourly cap. client is the rate
	// limiter's key of the request's client (the service stores it hashed).
	RequestCode(ctx context.Context, email, client string) error
	// VerifyCode signs in with a code sent to email, creating the account at its first
	// sign-in, and returns a new session. A wrong, used, expired or dead code is
	// ErrBadCode; ErrTooMany over a limit.
	VerifyCode(ctx context.Context, email, code, client string) (Session, error)
	// EmailEnabled reports whether sign-in by e-mail code is configured (a mailer);
	// when it is not, the site offers neither the code forms nor adding an address.
	EmailEnabled() bool
	// GitHubEnabled reports whether sign-in with GitHub is configured; when it is not,
	// the site neither links nor serves it.
	GitHubEnabled() bool
	// GitHubStart returns the address of GitHub's authorization page and the value of
	// the state cookie GitHubFinish checks (state, PKCE verifier and returnTo, bound
	// together). returnTo has been through SafeReturn.
	GitHubStart(returnTo string) (authURL, stateCookie string, err error)
	// GitHubFinish completes the sign-in GitHub redirected back with (code, state)
	// against the state cookie, creating the account at its first sign-in. It returns
	// a new session and the return address. A state that does not match the cookie, or
	// a code GitHub refuses, is ErrBadCode.
	GitHubFinish(ctx context.Context, code, state, stateCookie string) (sess Session, returnTo string, err error)
	// Session returns the account of a session token; ErrNoSession when there is no
	// such session or it expired.
	Session(ctx context.Context, token string) (Account, error)
	// SignOut ends the session of token (no error when there is none).
	SignOut(ctx context.Context, token string) error
	// SignOutEverywhere ends every session of the account.
	SignOutEverywhere(ctx context.Context, accountID int64) error
	// CSRFToken is the anti-forgery token of a session (an HMAC of its token): the
	// hidden csrf field of every form a signed-in person sends.
	CSRFToken(token string) string
	// CheckCSRF reports, in constant time, whether field is the CSRF token of token.
	CheckCSRF(token, field string) bool
	// SafeReturn returns s when it is a local absolute path of this site, and the
	// Followed page's path otherwise: no scheme, no host, not "//" nor "/\", no
	// control characters, at most 512 bytes.
	SafeReturn(s string) string
	// AddEmail gives a signed-in account the address email, proven by a code
	// RequestCode sent to it (a GitHub account adds one to receive e-mails; an account
	// changes its own). VerifyCode's errors, and ErrAddressTaken when another account
	// has the address.
	AddEmail(ctx context.Context, accountID int64, email, code, client string) error
	// DeleteAccount deletes the account and everything that is its: follows,
	// sessions, webhooks and their deliveries, e-mails not sent yet.
	DeleteAccount(ctx context.Context, accountID int64) error
}

// Session is a new session, made at a sign-in; Account a signed-in person's account.
// They are the services' own types: the site shows them, it does not define them.
type (
	Session = accounts.Session
	Account = store.Account
)

// Follows is following entries, the e-mail setting, and unsubscribing by token
// (package notify).
type Follows interface {
	// Follow makes the account follow the entry with the slug; following it already
	// is no error. ErrFollowLimit when the account follows the most entries it may.
	Follow(ctx context.Context, accountID int64, slug string) error
	// Unfollow stops following the entry with the slug; not following it is no error.
	Unfollow(ctx context.Context, accountID int64, slug string) error
	// Following reports whether the account follows the entry (the entry pages'
	// Follow or Unfollow button).
	Following(ctx context.Context, accountID, entryID int64) (bool, error)
	// Followed is the account's Followed page.
	Followed(ctx context.Context, accountID int64) (Followed, error)
	// SetMode sets the account's change e-mails to MailHourly, MailDaily or MailOff.
	SetMode(ctx context.Context, accountID int64, mode string) error
	// UnsubscribePage is what an e-mail's unsubscribe link offers, as buttons: the
	// token's own action and, for a token about one entry, turning change e-mails off
	// as well, each with the token that does it. It changes nothing (a mail filter
	// opens links). ErrBadToken when the token is forged, malformed or expired;
	// ErrEntryGone when the entry of an undo's "follow again" was deleted.
	UnsubscribePage(ctx context.Context, token string) ([]UnsubscribeAction, error)
	// Unsubscribe does what token says (unfollow an entry, turn change e-mails off,
	// or undo one of them) and returns what it did and the button that undoes it:
	// none (a zero undo) when done is Unchanged (e-mails were off already, the entry
	// was not followed, or followed already).
	// ErrBadToken as UnsubscribePage; ErrEntryGone when the token's entry was
	// deleted; ErrFollowLimit for a "follow again" past the limit.
	Unsubscribe(ctx context.Context, token string) (done, undo UnsubscribeAction, err error)
	// OneClick turns off the change e-mails of the token's account (a token of an
	// e-mail: unfollow or mail off); the account keeps following (RFC 8058).
	// ErrBadToken as UnsubscribePage.
	OneClick(ctx context.Context, token string) error
}

// The e-mail settings of Follows.SetMode and Followed.Mode (the store's).
const (
	MailHourly = store.MailHourly // as soon as something changes, at most one an hour (the default)
	MailDaily  = store.MailDaily  // one summary a day
	MailOff    = store.MailOff    // no change e-mails
)

// The Followed page and the unsubscribe page show package notify's own types.
type (
	Followed          = notify.Followed
	FollowedEntry     = notify.FollowedEntry
	FollowedChange    = notify.FollowedChange
	GoneEntry         = notify.GoneEntry
	MailFailure       = notify.Failure
	UnsubscribeAction = notify.Action
)

// The actions of an unsubscribe token (package notify's).
const (
	ActionUnfollow     = notify.ActionUnfollow     // stop following one entry
	ActionMailOff      = notify.ActionMailOff      // turn change e-mails off
	ActionFollow       = notify.ActionFollow       // the undo of ActionUnfollow
	ActionMailOnHourly = notify.ActionMailOnHourly // the undo of ActionMailOff: hourly again
	ActionMailOnDaily  = notify.ActionMailOnDaily  // the undo of ActionMailOff: daily again
)

// Webhooks is an account's webhooks and their delivery logs (package
// notify/webhook). Every method takes the account: a webhook of another account is
// store.ErrNotFound.
type Webhooks interface {
	// Webhooks lists the account's webhooks, oldest first.
	Webhooks(ctx context.Context, accountID int64) ([]Webhook, error)
	// AddWebhook registers url for the entries the account follows. An address the
	// service refuses (not https, too long, private, one too many, registered
	// already) is a *Refusal.
	AddWebhook(ctx context.Context, accountID int64, url string) (Webhook, error)
	// RemoveWebhook deletes a webhook of the account with its delivery log.
	RemoveWebhook(ctx context.Context, accountID, webhookID int64) error
	// EnableWebhook enables a disabled webhook of the account again, with no
	// failures counted.
	EnableWebhook(ctx context.Context, accountID, webhookID int64) error
	// Deliveries is a webhook of the account and its delivery log, newest first.
	Deliveries(ctx context.Context, accountID, webhookID int64) (Webhook, []WebhookDelivery, error)
}

// Webhook is a registered webhook (the store's).
type Webhook = store.Webhook

// The states of a webhook delivery.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// WebhookDelivery is a line of a webhook's delivery log: one change posted, or to be
// posted, with the outcome of its last attempt.
type WebhookDelivery struct {
	// MessageID is the webhook-id header.
	MessageID string
	// EntrySlug is the entry the change is of ("" when it is gone); ChangeNumber the
	// change's number.
	EntrySlug    string
	ChangeNumber int64
	CreatedAt    time.Time
	// State is DeliveryPending, DeliveryDelivered or DeliveryFailed.
	State         string
	Attempts      int
	LastAttemptAt time.Time
	// LastStatus is the receiver's HTTP status (0: no answer); LastError what went
	// wrong ("" after a success).
	LastStatus int
	LastError  string
}

// The refusals the services report, which the pages explain: the services' own
// errors, named here by what the pages do with them.
var (
	// ErrNoSession is a session token with no session behind it (never issued,
	// signed out, or expired).
	ErrNoSession = accounts.ErrNoSession
	// ErrTooMany is a limit reached: sign-in codes per address or per client.
	ErrTooMany = accounts.ErrTooMany
	// ErrSiteBusy is the site's hourly cap of sign-in codes reached, for everyone.
	ErrSiteBusy = accounts.ErrSiteBusy
	// ErrInvalidAddress is an e-mail address that is not one.
	ErrInvalidAddress = accounts.ErrInvalidEmail
	// ErrBadCode is a sign-in that cannot complete: a wrong, used or expired code.
	// A GitHub sign-in whose state does not match, or that GitHub refused, is
	// accounts.ErrGitHubState or accounts.ErrGitHubDenied.
	ErrBadCode = accounts.ErrBadCode
	// ErrAddressTaken is an address another account has.
	ErrAddressTaken = accounts.ErrAddressTaken
	// ErrFollowLimit is a follow past the most entries an account may follow.
	ErrFollowLimit = notify.ErrLimit
	// ErrBadToken is an unsubscribe token that is forged, malformed or expired.
	ErrBadToken = notify.ErrBadToken
	// ErrEntryGone is an unsubscribe token's entry deleted since its e-mail.
	ErrEntryGone = notify.ErrNotFound
)

// Refusal is a refusal of what a person entered, with the reason in the service's
// own words (never an echo of the input), shown on the page as plain text.
type Refusal struct {
	Reason string
}

func (r *Refusal) Error() string { return r.Reason }
