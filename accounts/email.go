package accounts

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/big"
	mathrand "math/rand/v2"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/probity-dev/probity/store"
)

// codeDigits is a sign-in code's length: 10⁸ codes.
const codeDigits = 8

// maxCodeInput bounds what VerifyCode reads of a code as typed (digits with spaces or
// hyphens between them).
const maxCodeInput = 32

// RequestCode sends a sign-in code to email. It answers the same, nil, whether or not
// the address has an account; ErrInvalidEmail for an address this site does not send
// to; ErrTooMany over a limit (per client, per address); ErrSiteBusy over the site's
// hourly cap; ErrEmailOff without a mailer; another error when the code could not be
// stored or sent. client is the request's client address (ClientKey; stored hashed).
func (s *Service) RequestCode(ctx context.Context, email, client string) error {
	addr, key, err := parseAddress(email)
	if err != nil {
		return err
	}
	if s.mailer == nil {
		return ErrEmailOff
	}
	now := s.now()
	ah := addressHash(key)
	for _, t := range []store.ThrottleTake{
		{Scope: store.ThrottleClient, KeyHash: clientHash(ClientKey(client)), Limit: ClientRequestsPerHour},
		{Scope: store.ThrottleAddress, KeyHash: ah, Limit: CodesPerAddressPerHour},
	} {
		t.At, t.Window = now, ThrottleWindow
		ok, err := s.st.TakeThrottle(ctx, t)
		if err != nil {
			return err
		}
		if !ok {
			s.log.Info("sign-in code refused: limit reached", "scope", string(t.Scope))
			return ErrTooMany
		}
	}
	// The site's cap comes last, so that a request another limit refuses does not use
	// it up; it is the same for every address, known or not.
	switch ok, err := s.takeSiteCode(ctx, now); {
	case err != nil:
		return err
	case !ok:
		s.log.Warn("sign-in code refused: the site's hourly cap is reached", "cap", s.siteCap)
		return ErrSiteBusy
	}
	code, err := newCode()
	if err != nil {
		return err
	}
	if _, err := s.st.AddSignInCode(ctx, store.SignInCode{AddressHash: ah, CodeHash: codeHash(s.codeKey, key, code),
		CreatedAt: now, ExpiresAt: now.Add(CodeLifetime)}); err != nil {
		return err
	}
	if err := s.mailer.SendCode(ctx, s.codeMail(addr, code)); err != nil {
		return fmt.Errorf("couldn't send the sign-in code: %w", err)
	}
	s.log.Info("sign-in code sent")
	return nil
}

// VerifyCode signs in with a code RequestCode sent to email: it returns a new session
// of the address's account, made now when the address has none. ErrBadCode for a code
// that is wrong, expired, used or out of tries (the same error for each, and for an
// address that never asked for one); ErrTooMany over the client's limit of checks;
// ErrInvalidEmail for an invalid address.
func (s *Service) VerifyCode(ctx context.Context, email, code, client string) (Session, error) {
	addr, key, now, err := s.useCode(ctx, email, code, client)
	if err != nil {
		return Session{}, err
	}
	a, created, err := s.st.EmailAccount(ctx, addr, key, now)
	if err != nil {
		return Session{}, err
	}
	sess, err := s.newSession(ctx, a.ID)
	if err != nil {
		return Session{}, err
	}
	s.log.Info("signed in by e-mail code", "account", a.ID, "new_account", created)
	return sess, nil
}

// AddEmail gives a signed-in account the address email (a GitHub account adds one to
// receive e-mails; an account changes its own), proven by a code RequestCode sent to
// it. The errors are VerifyCode's, and ErrAddressTaken when another account has the
// address.
func (s *Service) AddEmail(ctx context.Context, accountID int64, email, code, client string) error {
	addr, key, _, err := s.useCode(ctx, email, code, client)
	if err != nil {
		return err
	}
	switch err := s.st.SetAccountEmail(ctx, accountID, addr, key); {
	case errors.Is(err, store.ErrAddressTaken):
		return ErrAddressTaken
	case errors.Is(err, store.ErrNotFound):
		return ErrNoAccount
	case err != nil:
		return err
	}
	s.log.Info("address added", "account", accountID)
	return nil
}

// useCode checks a code entered for email and uses it up: it counts the check
// against the client's limit, spends a try of each live code of the address, compares
// them in constant time and deletes the matching one with the address's other codes.
// It returns the address, its key and the time of the check.
func (s *Service) useCode(ctx context.Context, email, code, client string) (addr, key string, now time.Time, err error) {
	addr, key, err = parseAddress(email)
	if err != nil {
		return "", "", now, err
	}
	now = s.now()
	ok, err := s.st.TakeThrottle(ctx, store.ThrottleTake{Scope: store.ThrottleVerify, KeyHash: clientHash(ClientKey(client)),
		At: now, Window: ThrottleWindow, Limit: ClientChecksPerHour})
	if err != nil {
		return "", "", now, err
	}
	if !ok {
		s.log.Info("sign-in code check refused: limit reached")
		return "", "", now, ErrTooMany
	}
	code, ok = NormalizeCode(code)
	if !ok {
		return "", "", now, ErrBadCode
	}
	ah := addressHash(key)
	live, err := s.st.ClaimSignInCodeTry(ctx, ah, now)
	if err != nil {
		return "", "", now, err
	}
	if s.codeKey == nil {
		return "", "", now, ErrEmailOff // no code was ever sent
	}
	want := codeHash(s.codeKey, key, code)
	var match int64
	for _, c := range live {
		// Every live code is compared, in constant time, whichever matches.
		if hmac.Equal(c.CodeHash, want) {
			match = c.ID
		}
	}
	if match == 0 {
		s.log.Info("sign-in code check failed", "live_codes", len(live))
		return "", "", now, ErrBadCode
	}
	used, err := s.st.UseSignInCode(ctx, ah, match)
	if !used {
		if err != nil {
			return "", "", now, err
		}
		return "", "", now, ErrBadCode // a concurrent check used it first
	}
	return addr, key, now, nil
}

// codeMail is the e-mail that carries code to addr.
func (s *Service) codeMail(addr, code string) CodeMail {
	return CodeMail{
		To:      addr,
		Subject: "Your sign-in code for " + s.siteName,
		Text: "Your sign-in code for " + s.siteName + " is\n\n" +
			"    " + code + "\n\n" +
			"Enter it on the page where you asked for it. It is valid for " +
			fmt.Sprint(int(CodeLifetime.Minutes())) + " minutes and works once.\n\n" +
			"If you did not ask for it, ignore this e-mail: nobody can sign in without the code.\n",
	}
}

// newCode returns codeDigits random decimal digits, uniformly from crypto/rand.
func newCode() (string, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(100_000_000))
	if err != nil {
		return "", fmt.Errorf("couldn't make a sign-in code: %w", err)
	}
	return fmt.Sprintf("%0*d", codeDigits, n.Int64()), nil
}

// NormalizeCode returns a code as typed without spaces, tabs and hyphens, when it is
// then exactly the 8 ASCII digits of a sign-in code: the one rule of a code's form, which
// the site's forms check before they ask VerifyCode.
func NormalizeCode(s string) (string, bool) {
	if len(s) > maxCodeInput {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			b.WriteByte(c)
		case c == ' ' || c == '-' || c == '\t':
		default:
			return "", false
		}
	}
	if b.Len() != codeDigits {
		return "", false
	}
	return b.String(), true
}

// addressHash is what an address's codes and limit are filed under.
func addressHash(emailKey string) []byte {
	h := sha256.Sum256([]byte("probity address v1\x00" + emailKey))
	return h[:]
}

// clientHash is what a client's limits are filed under (of its ClientKey).
func clientHash(clientKey string) []byte {
	h := sha256.Sum256([]byte("probity client v1\x00" + clientKey))
	return h[:]
}

// ClientKey is what the per-client limits count of a request's client address: an
// IPv4 address itself, an IPv6 address's /64 (the usual allocation of one subscriber,
// who can pick any address in it at will), an IPv4-mapped IPv6 address as IPv4, and
// anything that is no IP address as it is.
func ClientKey(client string) string {
	a, err := netip.ParseAddr(client)
	if err != nil {
		return client
	}
	a = a.Unmap().WithZone("")
	if a.Is4() {
		return a.String()
	}
	p, err := a.Prefix(64)
	if err != nil {
		return client // cannot happen: a is IPv6
	}
	return p.String()
}

// codeKeyOf derives the key of the code hashes from the server's secret.
func codeKeyOf(secret []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("probity sign-in code key v1"))
	return m.Sum(nil)
}

// codeHash is a code as stored: HMAC-SHA256 keyed by the code key (from the server's
// secret) of the address's email key, a NUL and the code.
func codeHash(codeKey []byte, emailKey, code string) []byte {
	m := hmac.New(sha256.New, codeKey)
	m.Write([]byte(emailKey))
	m.Write([]byte{0})
	m.Write([]byte(code))
	return m.Sum(nil)
}

// takeSiteCode counts one code against the site's hourly cap and reports whether it
// may be sent. A throttle of the store keeps at most store.MaxThrottleLimit events, so
// the cap is spread over siteShards throttles (filed under siteHash, which no address
// hashes to), tried from a random one on: a code is refused when all are full.
func (s *Service) takeSiteCode(ctx context.Context, now time.Time) (bool, error) {
	n := siteShards(s.siteCap)
	first := mathrand.IntN(n)
	for i := range n {
		shard := (first + i) % n
		ok, err := s.st.TakeThrottle(ctx, store.ThrottleTake{Scope: store.ThrottleAddress, KeyHash: siteHash(shard),
			At: now, Window: ThrottleWindow, Limit: siteShardLimit(s.siteCap, shard)})
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// siteShards is how many throttles count a site cap of n codes an hour.
func siteShards(n int) int {
	return (n + store.MaxThrottleLimit - 1) / store.MaxThrottleLimit
}

// siteShardLimit is how many of a site cap of n codes an hour shard i counts: n
// spread evenly over siteShards(n) throttles.
func siteShardLimit(n, i int) int {
	shards := siteShards(n)
	l := n / shards
	if i < n%shards {
		l++
	}
	return l
}

// siteHash is what shard i of the site's cap is filed under.
func siteHash(i int) []byte {
	h := sha256.Sum256([]byte("probity site codes v1\x00" + strconv.Itoa(i)))
	return h[:]
}

// parseAddress validates an e-mail address as entered and returns it trimmed, and its
// key (lower-cased). It accepts what a person types: ASCII, no spaces, one @, a local
// part of at most 64 of RFC 5322's atom characters and dots (no quoting), and a domain
// of two or more labels of letters, digits and hyphens. Anything else is
// ErrInvalidEmail.
func parseAddress(s string) (addr, key string, err error) {
	addr = strings.TrimSpace(s)
	if len(addr) < 3 || len(addr) > 254 || !printableASCII(addr, false) {
		return "", "", ErrInvalidEmail
	}
	local, domain, ok := strings.Cut(addr, "@")
	if !ok || strings.Contains(domain, "@") || len(local) == 0 || len(local) > 64 ||
		local[0] == '.' || local[len(local)-1] == '.' || strings.Contains(local, "..") {
		return "", "", ErrInvalidEmail
	}
	for i := 0; i < len(local); i++ {
		if !atomChar(local[i]) && local[i] != '.' {
			return "", "", ErrInvalidEmail
		}
	}
	labels := strings.Split(domain, ".")
	if len(labels) < 2 {
		return "", "", ErrInvalidEmail
	}
	for _, l := range labels {
		if len(l) == 0 || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return "", "", ErrInvalidEmail
		}
		for i := 0; i < len(l); i++ {
			c := l[i] | 0x20 // lower-case letters; digits and '-' are unchanged
			if !(c >= 'a' && c <= 'z') && !(l[i] >= '0' && l[i] <= '9') && l[i] != '-' {
				return "", "", ErrInvalidEmail
			}
		}
	}
	if tld := labels[len(labels)-1]; strings.Trim(tld, "0123456789") == "" {
		return "", "", ErrInvalidEmail // an IP address, not a domain
	}
	return addr, strings.ToLower(addr), nil
}

// atomChar reports whether c is an atext character of RFC 5322.
func atomChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		strings.IndexByte("!#$%&'*+-/=?^_`{|}~", c) >= 0
}
