package accounts

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/probity-dev/probity/store"
)

// The rules, as the package documentation describes them.
const (
	// CodeLifetime is how long a sign-in code is valid.
	CodeLifetime = 10 * time.Minute
	// MaxCodeTries is how often a code may be compared before it is dead.
	MaxCodeTries = store.MaxSignInCodeTries
	// CodesPerAddressPerHour is how many codes one address is sent in any hour.
	CodesPerAddressPerHour = 5
	// ClientRequestsPerHour is how many codes one client may ask for in any hour.
	ClientRequestsPerHour = 20
	// ClientChecksPerHour is how many codes one client may enter in any hour.
	ClientChecksPerHour = 30
	// DefaultSiteCodesPerHour is how many codes the whole site sends in any hour unless
	// Config.SiteCodesPerHour says otherwise.
	DefaultSiteCodesPerHour = 256
	// MaxSiteCodesPerHour bounds Config.SiteCodesPerHour (the site-wide count is kept in
	// siteShards(n) throttles of at most store.MaxThrottleLimit each).
	MaxSiteCodesPerHour = 4096
	// MinSecretSize is the least size of Config.Secret.
	MinSecretSize = 32
	// SessionLifetime is how long a session lasts after its last renewal.
	SessionLifetime = 30 * 24 * time.Hour
	// SessionRenewEvery is how old a session's last renewal must be for a use to renew
	// it again.
	SessionRenewEvery = time.Hour
	// GitHubStateLifetime is how long a GitHub sign-in may take from GitHubStart to
	// GitHubFinish.
	GitHubStateLifetime = 10 * time.Minute
	// ThrottleWindow is the window of every sign-in limit; a limit's count is kept
	// for ThrottleWindow after the last request it counts.
	ThrottleWindow = time.Hour
)

// Errors callers branch on; each says what the person can do.
var (
	// ErrInvalidEmail: the address is not one this site sends to.
	ErrInvalidEmail = errors.New("that is not an e-mail address this site can send a code to: enter an address like name@example.org")
	// ErrTooMany: a sign-in limit is reached.
	ErrTooMany = errors.New("too many sign-in attempts: try again later")
	// ErrSiteBusy: the site has sent as many sign-in codes as it sends in an hour
	// (Config.SiteCodesPerHour), to whomever.
	ErrSiteBusy = errors.New("this site has sent as many sign-in codes as it sends in an hour: try again later")
	// ErrBadCode: the code is wrong, expired, used or has no tries left.
	ErrBadCode = errors.New("that code is wrong or no longer valid: check it, or ask for a new code")
	// ErrNoSession: the session token is unknown, malformed or expired.
	ErrNoSession = errors.New("not signed in: sign in again")
	// ErrEmailOff: no CodeMailer is configured.
	ErrEmailOff = errors.New("sign-in by e-mail is not available on this site")
	// ErrGitHubOff: GitHub sign-in is not configured.
	ErrGitHubOff = errors.New("sign-in with GitHub is not available on this site")
	// ErrGitHubState: the GitHub callback does not belong to a sign-in this browser
	// started, or it took too long.
	ErrGitHubState = errors.New("this GitHub sign-in was not started in this browser, or took too long: start again")
	// ErrGitHubDenied: the person cancelled at GitHub.
	ErrGitHubDenied = errors.New("the sign-in was cancelled at GitHub")
	// ErrAddressTaken: another account has the address (AddEmail).
	ErrAddressTaken = errors.New("that address belongs to another account: sign in with it there, or delete that account first")
	// ErrNoAccount: the account does not exist.
	ErrNoAccount = errors.New("no such account")
)

// Account is a signed-in person's account.
type Account = store.Account

// Store is what the accounts package needs of the store; *store.Store implements it.
// Every method is one atomic statement or a bounded compare-and-swap loop (see
// store/sql_accounts.go); none of them sees a secret in clear.
type Store interface {
	EmailAccount(ctx context.Context, email, emailKey string, at time.Time) (store.Account, bool, error)
	GitHubAccount(ctx context.Context, githubID int64, login string, at time.Time) (store.Account, bool, error)
	AccountByID(ctx context.Context, id int64) (store.Account, error)
	SetAccountEmail(ctx context.Context, id int64, email, emailKey string) error
	DeleteAccount(ctx context.Context, id int64) error
	CreateSession(ctx context.Context, r store.SessionRecord) error
	SessionByHash(ctx context.Context, idHash []byte, now time.Time) (store.SessionRecord, store.Account, error)
	RenewSession(ctx context.Context, idHash []byte, renewedAt, expiresAt time.Time) error
	DeleteSession(ctx context.Context, idHash []byte) error
	DeleteAccountSessions(ctx context.Context, accountID int64) (int64, error)
	AddSignInCode(ctx context.Context, c store.SignInCode) (int64, error)
	ClaimSignInCodeTry(ctx context.Context, addressHash []byte, now time.Time) ([]store.SignInCode, error)
	UseSignInCode(ctx context.Context, addressHash []byte, id int64) (bool, error)
	ForgetAddress(ctx context.Context, addressHash []byte) error
	TakeThrottle(ctx context.Context, t store.ThrottleTake) (bool, error)
	PruneSignIn(ctx context.Context, now time.Time) (int64, error)
}

// CodeMail is the e-mail that carries a sign-in code: plain text, holding nothing but
// the site's name, the code and its lifetime.
type CodeMail struct {
	To      string // the address as it was entered (validated)
	Subject string
	Text    string
}

// CodeMailer sends a sign-in code e-mail right away (not through the outbox, which
// must never hold a code in clear). It returns once the mail server accepted the
// message, or with an error. It must not log the text.
type CodeMailer interface {
	SendCode(ctx context.Context, m CodeMail) error
}

// Config configures a Service.
type Config struct {
	// Store is where accounts, sessions, codes and throttles are kept (required).
	Store Store
	// Mailer sends sign-in codes; nil turns sign-in by e-mail off (ErrEmailOff).
	Mailer CodeMailer
	// GitHub configures sign-in with GitHub; nil turns it off (ErrGitHubOff).
	GitHub *GitHubConfig
	// Secret is the server's secret, at least MinSecretSize random bytes kept beside the
	// store, not in it (the data directory's notify.key); required with a Mailer. The
	// key of the stored code hashes is derived from it, so a copy of the store alone
	// cannot test guesses of a code. It must stay the same across restarts, or the codes
	// sent before one stop working.
	Secret []byte
	// SiteCodesPerHour is how many sign-in codes the site sends in any hour, to all
	// addresses together (1 to MaxSiteCodesPerHour); 0 means DefaultSiteCodesPerHour.
	SiteCodesPerHour int
	// SiteName names the site in the code e-mail: at most 64 printable ASCII
	// characters; "Probity" when empty.
	SiteName string
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Logger receives sign-in events (never a code, token or address); nil discards.
	Logger *slog.Logger
}

// Service signs people in. Its methods are safe for concurrent use.
type Service struct {
	st       Store
	mailer   CodeMailer
	codeKey  []byte // the key of the code hashes (codeKeyOf(Config.Secret))
	siteCap  int    // Config.SiteCodesPerHour
	siteName string
	now      func() time.Time
	log      *slog.Logger

	github *githubClient // nil when GitHub sign-in is off
}

// New returns a Service, or an error that says which part of cfg is wrong.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil {
		return nil, errors.New("accounts: Config.Store is required")
	}
	s := &Service{st: cfg.Store, mailer: cfg.Mailer, siteName: cfg.SiteName, now: cfg.Now, log: cfg.Logger}
	if s.siteName == "" {
		s.siteName = "Probity"
	}
	if len(s.siteName) > 64 || !printableASCII(s.siteName, true) {
		return nil, fmt.Errorf("accounts: Config.SiteName must be at most 64 printable ASCII characters, not %q", s.siteName)
	}
	if s.mailer != nil {
		if len(cfg.Secret) < MinSecretSize {
			return nil, fmt.Errorf("accounts: Config.Secret must be at least %d bytes with a Mailer, not %d", MinSecretSize, len(cfg.Secret))
		}
		s.codeKey = codeKeyOf(cfg.Secret)
	}
	switch s.siteCap = cfg.SiteCodesPerHour; {
	case s.siteCap == 0:
		s.siteCap = DefaultSiteCodesPerHour
	case s.siteCap < 1 || s.siteCap > MaxSiteCodesPerHour:
		return nil, fmt.Errorf("accounts: Config.SiteCodesPerHour must be 1 to %d, not %d", MaxSiteCodesPerHour, s.siteCap)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if cfg.GitHub != nil {
		gh, err := newGitHubClient(*cfg.GitHub)
		if err != nil {
			return nil, err
		}
		s.github = gh
	}
	return s, nil
}

// EmailEnabled reports whether sign-in by e-mail code is available.
func (s *Service) EmailEnabled() bool { return s.mailer != nil }

// GitHubEnabled reports whether sign-in with GitHub is available.
func (s *Service) GitHubEnabled() bool { return s.github != nil }

// Account returns the account with the id, or ErrNoAccount.
func (s *Service) Account(ctx context.Context, accountID int64) (Account, error) {
	a, err := s.st.AccountByID(ctx, accountID)
	if errors.Is(err, store.ErrNotFound) {
		return Account{}, ErrNoAccount
	}
	return a, err
}

// DeleteAccount deletes an account and everything that belongs to it: the store
// deletes its sessions, follows, webhooks and pending e-mails through ON DELETE
// CASCADE, and the sign-in codes and address limit of its address are deleted here
// (they are filed by the address's hash, not by the account). ErrNoAccount when there
// is no such account.
func (s *Service) DeleteAccount(ctx context.Context, accountID int64) error {
	a, err := s.st.AccountByID(ctx, accountID)
	if errors.Is(err, store.ErrNotFound) {
		return ErrNoAccount
	}
	if err != nil {
		return err
	}
	if err := s.st.DeleteAccount(ctx, accountID); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return ErrNoAccount
		}
		return err
	}
	if a.EmailKey != "" {
		if err := s.st.ForgetAddress(ctx, addressHash(a.EmailKey)); err != nil {
			return fmt.Errorf("the account is deleted, but its address's sign-in codes are not (they expire within %v): %w", CodeLifetime, err)
		}
	}
	s.log.Info("account deleted", "account", accountID)
	return nil
}

// Prune deletes the expired sessions, sign-in codes and sign-in limits and returns
// how many; run it now and then (hourly is plenty).
func (s *Service) Prune(ctx context.Context) (int64, error) {
	return s.st.PruneSignIn(ctx, s.now())
}

// printableASCII reports whether s holds only printable ASCII, spaces too when
// spaces is set.
func printableASCII(s string, spaces bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c > 0x7e || c < 0x20 || (c == ' ' && !spaces) {
			return false
		}
	}
	return true
}
