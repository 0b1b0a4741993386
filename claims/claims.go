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
	MethodWellKnown        = "well-known"        // a remote's origin serves the token at WellKnownPath
	MethodDNS              = "dns"               // a TXT record at DNSPrefix + the remote's host
	MethodNPM              = "npm"               // the npm package's newest version's README
	MethodPyPI             = "pypi"              // the PyPI project's newest version's description
	MethodRepoFile         = "repo-file"         // RepoFilePath on the repository's default branch
	MethodGitHubPermission = "github-permission" // admin or maintain on the repository, per GitHub
)

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
	AccountClaims(ctx context.Context, accountID int64) ([]store.Claim, error)
	ClaimsToCheck(ctx context.Context, before time.Time, afterID int64, limit int) ([]store.Claim, error)
	RecheckClaim(ctx context.Context, id int64, at time.Time, lapseReason string) (store.Claim, error)
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
	// GitHubToken authenticates the GitHub API reads (MethodGitHubPermission needs
	// one); never logged.
	GitHubToken string
	// TokenLifetime is how long a token can be checked; default 24 h, 10 min to 7 days.
	TokenLifetime time.Duration
	// RecheckInterval is how often a claim is proven again; default 24 h.
	RecheckInterval time.Duration
	// MaxUnanswered is how long a claim stays live while its proof cannot be read (a
	// timeout, a 5xx); default 7 days.
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
	cfg   Config
	st    Store
	guard *egress.Guard
	http  *http.Client
	npm   *supply.NPM
	pypi  *supply.PyPI
	log   *slog.Logger
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
	return &Service{
		cfg:   cfg,
		st:    cfg.Store,
		guard: guard,
		http:  &http.Client{Transport: tr, CheckRedirect: guard.CheckRedirect, Timeout: cfg.Timeout},
		npm:   supply.NewNPM(supply.NPMConfig{BaseURL: cfg.NPMURL, Client: sc}),
		pypi:  supply.NewPyPI(supply.PyPIConfig{BaseURL: cfg.PyPIURL, Client: sc}),
		log:   log,
	}, nil
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
	// ErrNoGitHub is MethodGitHubPermission for an account that did not sign in with
	// GitHub, or a site without a GitHub token.
	ErrNoGitHub = errors.New("this method needs an account signed in with GitHub, on a site that reads GitHub's permissions")
)

// NotProven is a check that did not find the proof: Reason says what was looked for,
// where, and what was found instead, in plain words (no secret, clipped server text).
type NotProven struct {
	Reason string
	// Unanswered is true when the source gave no answer (a timeout, a refused
	// connection, a 5xx): the proof may well be there.
	Unanswered bool
}

func (e *NotProven) Error() string { return e.Reason }

func notProven(format string, args ...any) *NotProven {
	return &NotProven{Reason: fmt.Sprintf(format, args...)}
}

func unanswered(format string, args ...any) *NotProven {
	return &NotProven{Reason: fmt.Sprintf(format, args...), Unanswered: true}
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
