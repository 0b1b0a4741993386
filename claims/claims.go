package claims

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/probity-dev/probity/checks/probe/egress"
	"github.com/probity-dev/probity/checks/supply"
	"github.com/probity-dev/probity/store"
)

// The methods of proof (store.ClaimToken.Method, store.Claim.Method).
const (
	MethodWellKnown = "well-known" // a remote's origin serves the token at WellKnownPath
	MethodDNS       = "dns"        // a TXT record at DNSPrefix + the remote's host
	MethodNPM       = "npm"        // the npm package's newest version's README
	MethodPyPI      = "pypi"       // the PyPI project's newest version's description
	MethodRepoFile  = "repo-file"  // RepoFilePath on the repository's default branch
	// MethodGitHubPermission (the admin or maintain role on the repository, per GitHub)
	// is withdrawn: no claim is made by it, and a claim made by it lapses at its next
	// re-check (claims/doc.go, "Methods"). The name stays: stored claims carry it.
	MethodGitHubPermission = "github-permission"
)

// errWithdrawn is the lapse reason of a claim by a withdrawn method.
var errWithdrawn = errors.New("this way of proving control (the role on the GitHub repository) is no longer offered; claim again by another way")

// Where the proofs are.
const (
	// WellKnownPath is the path of the token on a remote endpoint's origin.
	WellKnownPath = "/.well-known/probity-claim"
	// DNSPrefix is prefixed to a remote endpoint's host for the TXT record.
	DNSPrefix = "_probity-claim."
	// RepoFilePath is the file holding the token on a repository's default branch.
	RepoFilePath = ".well-known/probity-claim"
	// TokenPrefix starts every token.
	TokenPrefix = "probity-claim-"
)

// Defaults of a Config.
const (
	DefaultTokenLifetime   = 24 * time.Hour
	DefaultRecheckInterval = 24 * time.Hour
	DefaultMaxUnanswered   = 7 * 24 * time.Hour
	DefaultTimeout         = 10 * time.Second
	DefaultMaxBody         = 64 << 10
	// TokenKeep is how long a token's hash is kept after it expired or was used
	// (Recheck prunes it).
	TokenKeep = 24 * time.Hour
	// DefaultRecheckEvery is how often the re-check job runs; each run proves at most
	// RecheckBatch due claims.
	DefaultRecheckEvery = 5 * time.Minute
)

// The re-check's bounds.
const (
	// RecheckBatch is the most claims one run of the re-check proves.
	RecheckBatch = 32
	// RecheckConcurrency is how many of them are proven at once.
	RecheckConcurrency = 4
	// GoneFor is how long a proof must be found gone, on two checks at least this far
	// apart, before its claim lapses.
	GoneFor = 24 * time.Hour
)

// The throttle of Check (one person's checks of their token).
const (
	// CheckEvery is the least time between two checks of one token.
	CheckEvery = 10 * time.Second
	// ChecksPerHour is the most checks of one account in an hour.
	ChecksPerHour = 30
)

// tokenLen is the length of a token: the prefix and 32 bytes of base64url.
var tokenLen = len(TokenPrefix) + base64.RawURLEncoding.EncodedLen(32)

// maxCandidates bounds the token-like substrings of a fetched text that are hashed.
const maxCandidates = 64

// Store is the part of store.Store the claims use.
type Store interface {
	Entry(ctx context.Context, slug string) (store.Entry, error)
	EntryByID(ctx context.Context, id int64) (store.Entry, error)
	EntryListing(ctx context.Context, entryID int64) (store.Listing, []store.Part, error)
	AccountByID(ctx context.Context, id int64) (store.Account, error)
	DueTimes(ctx context.Context, entryID int64) ([]store.Due, error)
	SetDue(ctx context.Context, entryID int64, u store.DueUpdate) error
	AddClaimToken(ctx context.Context, t store.ClaimToken) (int64, error)
	ClaimToken(ctx context.Context, tokenHash []byte) (store.ClaimToken, error)
	ProveClaim(ctx context.Context, p store.ClaimProof) (store.Claim, error)
	ClaimsDue(ctx context.Context, now time.Time, limit int) ([]store.Claim, error)
	RecheckClaim(ctx context.Context, id int64, r store.ClaimRecheck) (store.Claim, error)
	MaintainsEntry(ctx context.Context, accountID, entryID int64) (bool, error)
	Claims(ctx context.Context, entryID int64) ([]store.Claim, error)
	PruneClaimTokens(ctx context.Context, before time.Time) (int64, error)
}

// Scheduler moves an entry's due times when its claimed state flips
// (rounds.Schedule implements it).
type Scheduler interface {
	ClaimedDue(e store.Entry, due []store.Due, now time.Time) []store.DueUpdate
}

// Config configures a Service. Store is required; every other field has a default.
type Config struct {
	Store Store
	// Schedule moves the cadence due time when an entry's claimed state flips; nil
	// leaves due times alone.
	Schedule Scheduler
	// Egress is the guard's configuration for every fetch (AllowLoopback for tests and
	// the demo only).
	Egress egress.Config
	// RootCAs, when set, are the CAs the HTTPS fetches trust instead of the system's
	// (the demo's CA).
	RootCAs *x509.CertPool
	// DNSServer is the resolver TXT records are asked of, host:port; "" the system's.
	DNSServer string
	// NPMURL, PyPIURL and GitHubAPIURL are the registries' and GitHub's API base URLs;
	// defaults those of checks/supply.
	NPMURL, PyPIURL, GitHubAPIURL string
	// GitHubToken authenticates the GitHub API reads (MethodRepoFile; without one
	// they are anonymous, 60 an hour); never logged.
	GitHubToken string
	// TokenLifetime is how long a token can be checked; default 24 h, 10 min to 7 days.
	TokenLifetime time.Duration
	// RecheckInterval is how often a claim is proven again (each claim on its own
	// time, ± 1/12 of it); default 24 h.
	RecheckInterval time.Duration
	// RecheckEvery is how often the re-check job runs; default 5 min.
	RecheckEvery time.Duration
	// MaxUnanswered is how long a claim stays live while its proof cannot be read (a
	// timeout, a 5xx), counted from the first check without an answer; default 7
	// days.
	MaxUnanswered time.Duration
	// Timeout bounds one fetch; default 10 s. MaxBody bounds what one reads; default
	// 64 KiB.
	Timeout time.Duration
	MaxBody int64
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Logger receives one event per check (never a token); default discards.
	Logger *slog.Logger
}

// Service makes and checks claims. It is safe for concurrent use.
type Service struct {
	cfg    Config
	st     Store
	guard  *egress.Guard
	http   *http.Client
	npm    *supply.NPM
	pypi   *supply.PyPI
	github *supply.GitHub
	log    *slog.Logger
	checks *checkLimiter
}

// New returns a Service for cfg.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil {
		return nil, errors.New("claims: a Store is required")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&cfg.TokenLifetime, DefaultTokenLifetime)
	def(&cfg.RecheckInterval, DefaultRecheckInterval)
	def(&cfg.MaxUnanswered, DefaultMaxUnanswered)
	def(&cfg.RecheckEvery, DefaultRecheckEvery)
	def(&cfg.Timeout, DefaultTimeout)
	if cfg.TokenLifetime < 10*time.Minute || cfg.TokenLifetime > 7*24*time.Hour {
		return nil, fmt.Errorf("claims: the token lifetime is %s; it must be from 10m to 168h", cfg.TokenLifetime)
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.GitHubAPIURL == "" {
		cfg.GitHubAPIURL = supply.DefaultGitHubURL
	}
	cfg.GitHubAPIURL = strings.TrimRight(cfg.GitHubAPIURL, "/")
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	guard := egress.New(cfg.Egress)
	tr := guard.Transport()
	if cfg.RootCAs != nil {
		tr.TLSClientConfig.RootCAs = cfg.RootCAs
	}
	// The supply sources' client always revalidates (MaxAge < 0) and keeps nothing
	// beyond memory: a README published a minute ago must count.
	sc := supply.NewClient(supply.ClientConfig{AllowLoopback: cfg.Egress.AllowLoopback, Resolver: cfg.Egress.Resolver,
		Transport: tr, Timeout: cfg.Timeout, MaxAge: -1, MaxRetries: -1, MaxThrottleWait: -1, Now: cfg.Now, Logger: log})
	s := &Service{
		cfg:    cfg,
		st:     cfg.Store,
		guard:  guard,
		npm:    supply.NewNPM(supply.NPMConfig{BaseURL: cfg.NPMURL, Client: sc}),
		pypi:   supply.NewPyPI(supply.PyPIConfig{BaseURL: cfg.PyPIURL, Client: sc}),
		github: supply.NewGitHub(supply.GitHubConfig{BaseURL: cfg.GitHubAPIURL, Token: cfg.GitHubToken, Client: sc, MaxBody: cfg.MaxBody}),
		log:    log,
		checks: newCheckLimiter(),
	}
	s.http = &http.Client{Transport: tr, CheckRedirect: s.sameOriginRedirect, Timeout: cfg.Timeout}
	return s, nil
}

// Errors callers branch on.
var (
	// ErrBadToken is a token that is malformed, unknown, another account's, or not of
	// the entry it is checked for.
	ErrBadToken = errors.New("this claim token is not valid for this account and entry")
	// ErrTokenUsed is a token that made a claim already: start again for a new one.
	ErrTokenUsed = errors.New("this claim token was used already; start again for a new one")
	// ErrTokenExpired is a token past its end: start again for a new one.
	ErrTokenExpired = errors.New("this claim token expired; start again for a new one")
	// ErrMethod is a method the part does not take, or a part the entry does not have.
	ErrMethod = errors.New("this entry has no such part, or the part cannot be proven this way")
	// ErrTooMany is an account holding the most live tokens (store.MaxLiveClaimTokens).
	ErrTooMany = errors.New("you have too many claim tokens waiting; check or let one expire first")
	// ErrRevoked: an operator revoked the account's claim on the entry; the account
	// cannot claim the entry again (a claim proves control, and the operator decided
	// against this maintainer all the same).
	ErrRevoked = errors.New("an operator revoked your claim on this entry; you cannot claim it again")
)

// TooSoon is a check refused by the throttle (CheckEvery per token, ChecksPerHour
// per account): nothing was fetched; RetryAfter says when to try again.
type TooSoon struct {
	RetryAfter time.Duration
}

func (e *TooSoon) Error() string {
	return fmt.Sprintf("too many checks; try again in %s", e.RetryAfter.Round(time.Second))
}

// NotProven is a check that did not find the proof: Reason says what was looked for,
// where, and what was found instead, in plain words (no secret, clipped server text).
type NotProven struct {
	Reason string
	// Unanswered is true when the source gave no answer (a timeout, a refused
	// connection, a 5xx, a SERVFAIL): the proof may well be there.
	Unanswered bool
	// Throttled (with Unanswered) is a source that asked Probity to wait (a 429, a
	// Retry-After, a spent rate limit): no answer, and no failure of the source's.
	Throttled bool
	// Gone is a definite answer that the proof is not there: a 404 or 410, a TXT
	// record set (or none) without the token, a 200 whose body lacks it.
	Gone bool
}

func (e *NotProven) Error() string { return e.Reason }

func notProven(format string, args ...any) *NotProven {
	return &NotProven{Reason: fmt.Sprintf(format, args...)}
}

func unanswered(format string, args ...any) *NotProven {
	return &NotProven{Reason: fmt.Sprintf(format, args...), Unanswered: true}
}

func throttled(format string, args ...any) *NotProven {
	return &NotProven{Reason: fmt.Sprintf(format, args...), Unanswered: true, Throttled: true}
}

func gone(format string, args ...any) *NotProven {
	return &NotProven{Reason: fmt.Sprintf(format, args...), Gone: true}
}

// newToken returns a new token and its SHA-256.
func newToken() (string, []byte) {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	t := TokenPrefix + base64.RawURLEncoding.EncodeToString(b)
	return t, hashToken(t)
}

func hashToken(t string) []byte {
	h := sha256.Sum256([]byte(t))
	return h[:]
}

// TokenOK reports whether s has a token's form.
func TokenOK(s string) bool {
	if len(s) != tokenLen || !strings.HasPrefix(s, TokenPrefix) {
		return false
	}
	for i := len(TokenPrefix); i < len(s); i++ {
		if !b64(s[i]) {
			return false
		}
	}
	return true
}

func b64(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// holds reports whether text holds a token whose hash is want: each of the first
// maxCandidates token-shaped substrings is hashed and compared in constant time.
func holds(text string, want []byte) bool {
	found := false
	for n := 0; n < maxCandidates; n++ {
		i := strings.Index(text, TokenPrefix)
		if i < 0 {
			break
		}
		text = text[i:]
		if len(text) >= tokenLen && TokenOK(text[:tokenLen]) && (len(text) == tokenLen || !b64(text[tokenLen])) {
			if subtle.ConstantTimeCompare(hashToken(text[:tokenLen]), want) == 1 {
				found = true
			}
		}
		text = text[len(TokenPrefix):]
	}
	return found
}

// revokedPrefix begins the lapse reason of a claim an operator revoked (RevokedReason).
const revokedPrefix = "revoked by an operator: "

// RevokedReason is the lapse reason of a claim an operator revoked for reason.
func RevokedReason(reason string) string { return revokedPrefix + reason }

// Revoked reports whether an operator revoked the claim.
func Revoked(c store.Claim) bool { return strings.HasPrefix(c.LapseReason, revokedPrefix) }
