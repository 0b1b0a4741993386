package accounts

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/probity-dev/probity/store"
)

// tokenBytes is the size of a session token's random part.
const tokenBytes = 32

// tokenLen is a session token's length: tokenBytes in base64url without padding.
const tokenLen = 43

// csrfMessage is what a session's CSRF token is the HMAC of.
const csrfMessage = "probity csrf v1"

// Session is a new session, made at sign-in.
type Session struct {
	// Token is the session cookie's value. It is a secret: never log it, never put it
	// in a URL.
	Token     string
	AccountID int64
	ExpiresAt time.Time
}

// newSession makes and stores a new session of the account.
func (s *Service) newSession(ctx context.Context, accountID int64) (Session, error) {
	raw := make([]byte, tokenBytes)
	_, _ = rand.Read(raw) // never fails (crypto/rand)
	h := sha256.Sum256(raw)
	now := s.now().UTC()
	r := store.SessionRecord{IDHash: h[:], AccountID: accountID, CreatedAt: now, RenewedAt: now, ExpiresAt: now.Add(SessionLifetime)}
	if err := s.st.CreateSession(ctx, r); err != nil {
		return Session{}, err
	}
	return Session{Token: base64.RawURLEncoding.EncodeToString(raw), AccountID: accountID, ExpiresAt: r.ExpiresAt}, nil
}

// decodeToken returns a session token's random bytes, or false when it is not a
// token's shape.
func decodeToken(token string) ([]byte, bool) {
	if len(token) != tokenLen {
		return nil, false
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(token)
	if err != nil || len(raw) != tokenBytes {
		return nil, false
	}
	return raw, true
}

// tokenHash is a session token as stored.
func tokenHash(raw []byte) []byte {
	h := sha256.Sum256(raw)
	return h[:]
}

// Session returns the account signed in with the session token, renewing the session
// when its last renewal is SessionRenewEvery old or more. ErrNoSession when the token
// is malformed, unknown or expired.
func (s *Service) Session(ctx context.Context, token string) (Account, error) {
	raw, ok := decodeToken(token)
	if !ok {
		return Account{}, ErrNoSession
	}
	h := tokenHash(raw)
	now := s.now().UTC()
	r, a, err := s.st.SessionByHash(ctx, h, now)
	if errors.Is(err, store.ErrNotFound) {
		return Account{}, ErrNoSession
	}
	if err != nil {
		return Account{}, err
	}
	if now.Sub(r.RenewedAt) >= SessionRenewEvery {
		if err := s.st.RenewSession(ctx, h, now, now.Add(SessionLifetime)); err != nil {
			// The session stays valid until its stored end; the next use tries again.
			s.log.Warn("couldn't renew a session", "account", a.ID, "err", err)
		}
	}
	return a, nil
}

// SignOut ends the session of the token; a malformed, unknown or expired token is
// signed out already.
func (s *Service) SignOut(ctx context.Context, token string) error {
	raw, ok := decodeToken(token)
	if !ok {
		return nil
	}
	return s.st.DeleteSession(ctx, tokenHash(raw))
}

// SignOutEverywhere ends every session of the account, in every browser.
func (s *Service) SignOutEverywhere(ctx context.Context, accountID int64) error {
	n, err := s.st.DeleteAccountSessions(ctx, accountID)
	if err != nil {
		return err
	}
	s.log.Info("signed out everywhere", "account", accountID, "sessions", n)
	return nil
}

// CSRFToken returns the CSRF token of a session token (see the package
// documentation), or "" for a string that is not a session token.
func CSRFToken(token string) string {
	raw, ok := decodeToken(token)
	if !ok {
		return ""
	}
	m := hmac.New(sha256.New, raw)
	m.Write([]byte(csrfMessage))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// CheckCSRF reports whether got is the CSRF token of the session token, comparing in
// constant time.
func CheckCSRF(token, got string) bool {
	want := CSRFToken(token)
	return want != "" && hmac.Equal([]byte(want), []byte(got))
}

// DefaultReturn is where SafeReturn sends anything it does not accept.
const DefaultReturn = "/followed"

// MaxReturnLength bounds a return address.
const MaxReturnLength = 512

// SafeReturn returns s when it is a local absolute path a sign-in may return to, and
// DefaultReturn otherwise. It accepts "/" followed by printable ASCII without spaces
// or backslashes, at most MaxReturnLength bytes, that parses as a URL with no scheme,
// host or user, and whose path, percent-decoded, holds no "//", no backslash and no
// "." or ".." segment: nothing a browser, or a later decoding or cleaning, could turn
// into another origin ("//evil.com", "/\evil.com", "https://evil.com", "javascript:…",
// "/%2F%2Fevil.com", "/.//evil.com", or a path with a tab or newline, which browsers
// drop).
func SafeReturn(s string) string {
	if len(s) == 0 || len(s) > MaxReturnLength || s[0] != '/' {
		return DefaultReturn
	}
	if !printableASCII(s, false) || strings.IndexByte(s, '\\') >= 0 {
		return DefaultReturn
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return DefaultReturn
	}
	p := u.Path
	if !strings.HasPrefix(p, "/") || strings.Contains(p, "//") || strings.ContainsAny(p, "\\\x00\t\r\n") {
		return DefaultReturn
	}
	for _, seg := range strings.Split(p[1:], "/") {
		if seg == "." || seg == ".." {
			return DefaultReturn
		}
	}
	return s
}

// CSRFToken is CSRFToken as a method, CheckCSRF and SafeReturn likewise: the site
// declares what it calls of the service as one interface (web.Accounts).
func (s *Service) CSRFToken(token string) string { return CSRFToken(token) }

// CheckCSRF is CheckCSRF as a method.
func (s *Service) CheckCSRF(token, field string) bool { return CheckCSRF(token, field) }

// SafeReturn is SafeReturn as a method.
func (s *Service) SafeReturn(v string) string { return SafeReturn(v) }
