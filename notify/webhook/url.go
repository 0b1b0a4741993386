package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/probity-dev/probity/checks/probe/egress"
	"github.com/probity-dev/probity/store"
)

// Errors of registration, which the account page shows (their text says what to do).
var (
	// ErrInvalidURL wraps every refusal of a URL; the error's text says why.
	ErrInvalidURL = errors.New("the webhook URL is not allowed")
	// ErrTooMany: the account has MaxPerAccount webhooks.
	ErrTooMany = fmt.Errorf("an account may register at most %d webhooks; delete one first", MaxPerAccount)
	// ErrExists: the account registered this URL already.
	ErrExists = errors.New("this webhook URL is registered already")
)

// Limits of registration.
const (
	// MaxPerAccount is how many webhooks an account may register.
	MaxPerAccount = store.MaxWebhooksPerAccount
	// MaxURLLen is the longest webhook URL, in bytes.
	MaxURLLen = store.MaxWebhookURL
	// resolveTimeout bounds the look-up of a URL's host at registration.
	resolveTimeout = 5 * time.Second
)

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidURL, fmt.Sprintf(format, args...))
}

// CheckURL checks a webhook URL as registration does and returns it in the form stored:
// at most 2048 bytes of printable text; an absolute https URL (http only when the egress
// guard allows loopback, as tests and the demo do, and then only to a loopback host);
// no user name or password, no fragment; a host the egress guard accepts (no IP literal
// in private, loopback, link-local, metadata or other non-public space, no numeric host
// forms); and a host name whose every address, looked up now, is public. The same
// checks are made again at every delivery's dial, on the address actually dialed: a
// name that resolves elsewhere later is refused then. Errors wrap ErrInvalidURL.
func (s *Service) CheckURL(ctx context.Context, raw string) (string, error) {
	switch {
	case raw == "":
		return "", invalid("enter the URL to POST changes to, e.g. https://example.com/probity-hook")
	case len(raw) > MaxURLLen:
		return "", invalid("it is %d bytes long; at most %d are allowed", len(raw), MaxURLLen)
	case strings.ContainsFunc(raw, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) || r == unicode.ReplacementChar }):
		return "", invalid("it contains spaces or control characters")
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" {
		return "", invalid("it is not an absolute URL such as https://example.com/probity-hook")
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
	case "http":
		if !s.cfg.Egress.AllowLoopback {
			return "", invalid("it must start with https:// (plain http is not allowed)")
		}
	default:
		return "", invalid("it must start with https://")
	}
	if u.User != nil {
		return "", invalid("it must not hold a user name or password")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return "", invalid("it must not have a #fragment")
	}
	if err := s.guard.CheckURL(u); err != nil {
		return "", invalid("%s", refusal(err))
	}
	host := strings.TrimSuffix(u.Hostname(), ".")
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a.Unmap()}
	} else {
		rctx, cancel := context.WithTimeout(ctx, resolveTimeout)
		defer cancel()
		found, err := s.resolver.LookupNetIP(rctx, "ip", host)
		if err != nil || len(found) == 0 {
			return "", invalid("its host name could not be looked up; check the spelling, or try again later")
		}
		for _, a := range found {
			addrs = append(addrs, a.Unmap())
		}
	}
	for _, a := range addrs {
		if err := s.guard.CheckAddr(a); err != nil {
			return "", invalid("its host resolves to an address Probity does not send to (%s); webhooks go to public addresses only", refusal(err))
		}
		if strings.EqualFold(u.Scheme, "http") && !a.IsLoopback() {
			return "", invalid("it must start with https:// (plain http is allowed to loopback only)")
		}
	}
	u.Scheme = strings.ToLower(u.Scheme)
	out := u.String()
	if len(out) > MaxURLLen {
		return "", invalid("it is %d bytes long once written out; at most %d are allowed", len(out), MaxURLLen)
	}
	return out, nil
}

// refusal describes an egress refusal in words; the reason token is stable.
func refusal(err error) string {
	var be *egress.BlockedError
	if !errors.As(err, &be) {
		return "refused by the egress guard"
	}
	switch be.Reason {
	case "loopback":
		return "a loopback address"
	case "private", "cgnat", "ipv4_mapped_private", "nat64_private", "6to4_private", "ipv4_compatible":
		return "a private address"
	case "link_local":
		return "a link-local address"
	case "metadata":
		return "a cloud metadata address"
	case "scheme":
		return "not an http or https URL"
	case "userinfo":
		return "a user name or password in the URL"
	case "numeric_host_form":
		return "a host written as a number"
	case "port":
		return "a port outside 1 to 65535"
	case "missing_host", "invalid_host", "invalid_url", "zone":
		return "not a valid host"
	}
	return "a non-public address (" + be.Reason + ")"
}
