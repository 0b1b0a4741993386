// Package egress is Probity's outbound-connection guard. Probity probes public MCP
// servers that anyone can submit, so every URL, redirect hop and TCP connection it
// makes is treated as attacker-chosen: a hostile server, URL or DNS answer must never
// make Probity reach a private network, the probing host itself, or a cloud metadata
// service (server-side request forgery, SSRF).
//
// # What is denied
//
// Only public, globally routable unicast addresses are allowed. Denied are:
//
//   - loopback: 127.0.0.0/8 and ::1 (allowed only with Config.AllowLoopback, for tests,
//     the fleet and the demo);
//   - private and local networks: 10/8, 172.16/12, 192.168/16, 100.64/10 (CGNAT),
//     fc00::/7 (unique local), 169.254/16 and fe80::/10 (link-local), fec0::/10;
//   - cloud metadata services: 169.254.169.254 (AWS, GCP, Azure, OCI, ...),
//     169.254.170.2 (AWS ECS), fd00:ec2::254 (AWS IPv6), 100.100.100.200 (Alibaba)
//     and 168.63.129.16 (Azure wireserver, which sits in public address space);
//   - unspecified, "this network", multicast, broadcast, documentation, benchmarking and
//     IANA special-purpose or reserved ranges, and every IPv6 address outside the
//     2000::/3 global unicast space;
//   - IPv6 forms that embed an IPv4 address: IPv4-mapped (::ffff:0:0/96) addresses are
//     unmapped and judged as IPv4, IPv4-compatible (::/96) addresses are always denied,
//     and NAT64 (64:ff9b::/96) and 6to4 (2002::/16) addresses are denied when the
//     embedded IPv4 address is.
//
// The tables in addrs.go cite the RFC or IANA registry for every prefix.
//
// # Where it is enforced
//
// The decisive check happens at dial time, on the resolved IP address:
// Guard.DialContext resolves the host once, checks every address it got (one denied
// address refuses the whole name, so a name answering both public and private
// addresses is refused), and then dials the checked IP literal, never the name again,
// so DNS rebinding between check and connect is impossible. The default dialer's
// Control function checks the socket's actual remote address once more, just before
// connect(2).
//
// Guard.CheckURL and Guard.CheckRedirect refuse URLs early with a precise reason:
// schemes other than http and https, userinfo, IPv6 zones, bad ports, denied IP
// literals, and hosts written in one of the inet_aton numeric forms ("2130706433",
// "0x7f.1", "0177.0.0.1") that some resolvers turn into IP addresses.
//
// Use a Guard as
//
//	client := &http.Client{Transport: g.Transport(), CheckRedirect: g.CheckRedirect}
//
// Refusals are *BlockedError values matching ErrBlocked under errors.Is; their Reason
// is a stable token. Error texts quote and clip attacker-controlled text (host names)
// to 64 bytes.
package egress

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"
)

// Resolver looks up the IP addresses of a host name. *net.Resolver satisfies it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config configures a Guard. The zero Config is the production setting.
type Config struct {
	// AllowLoopback allows 127.0.0.0/8 and ::1 (and their IPv4-mapped forms) for
	// tests, the fleet and the demo; never set it when probing the internet. It does
	// not allow private ranges or metadata addresses.
	AllowLoopback bool
	// Resolver resolves host names; nil means net.DefaultResolver.
	Resolver Resolver
	// Dial connects to an address the guard has already checked, always an "ip:port"
	// literal. Nil means a net.Dialer (5s timeout, TCP keep-alive) whose Control
	// function re-checks the actual remote address at connect time.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// MaxRedirects is the number of redirect hops CheckRedirect follows; 0 (or a
	// negative value) means 3.
	MaxRedirects int
}

// Guard enforces the egress policy. It is immutable after New and safe for
// concurrent use.
type Guard struct {
	allowLoopback bool
	resolver      Resolver
	dial          func(ctx context.Context, network, addr string) (net.Conn, error)
	maxRedirects  int
}

const (
	defaultMaxRedirects = 3
	// maxDialAttempts bounds how many checked addresses of one name are tried, so a
	// hostile DNS answer full of black holes cannot stall a probe for long.
	maxDialAttempts = 4
	// maxQuoted is how many bytes of attacker-controlled text an error may carry.
	maxQuoted = 64
)

// New returns a Guard for cfg.
func New(cfg Config) *Guard {
	g := &Guard{
		allowLoopback: cfg.AllowLoopback,
		resolver:      cfg.Resolver,
		dial:          cfg.Dial,
		maxRedirects:  cfg.MaxRedirects,
	}
	if g.resolver == nil {
		g.resolver = net.DefaultResolver
	}
	if g.maxRedirects <= 0 {
		g.maxRedirects = defaultMaxRedirects
	}
	if g.dial == nil {
		d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second, Control: g.Control}
		g.dial = d.DialContext
	}
	return g
}

// ErrBlocked is matched (errors.Is) by every refusal of the guard.
var ErrBlocked = errors.New("egress: destination not allowed")

// Reason tokens of BlockedError.
const (
	reasonLoopback      = "loopback"
	reasonPrivate       = "private"
	reasonLinkLocal     = "link_local"
	reasonCGNAT         = "cgnat"
	reasonMulticast     = "multicast"
	reasonBroadcast     = "broadcast"
	reasonUnspecified   = "unspecified"
	reasonReserved      = "reserved"
	reasonDocumentation = "documentation"
	reasonBenchmarking  = "benchmarking"
	reasonMetadata      = "metadata"
	reasonMapped        = "ipv4_mapped_private"
	reasonCompatible    = "ipv4_compatible"
	reasonNAT64         = "nat64_private"
	reason6to4          = "6to4_private"
	reasonZone          = "zone"
	reasonInvalidAddr   = "invalid_address"

	reasonUserinfo       = "userinfo"
	reasonScheme         = "scheme"
	reasonNumericHost    = "numeric_host_form"
	reasonMissingHost    = "missing_host"
	reasonInvalidHost    = "invalid_host"
	reasonPort           = "port"
	reasonNetwork        = "network"
	reasonInvalidURL     = "invalid_url"
	reasonDowngrade      = "redirect_downgrade"
	reasonTooManyRedirec = "too_many_redirects"
)

// BlockedError is a refusal by the guard. It matches ErrBlocked under errors.Is.
type BlockedError struct {
	// Host is the refused host name or literal as written, clipped to 64 bytes; empty
	// when the refusal concerns an address only (CheckAddr, Control).
	Host string
	// Addr is the refused IP address, the zero Addr if the refusal is not about an
	// address (scheme, userinfo, numeric host form, redirects, ...).
	Addr netip.Addr
	// Reason is a stable token:
	//
	// address reasons: "loopback", "private", "link_local", "cgnat", "multicast",
	// "broadcast", "unspecified", "reserved", "documentation", "benchmarking",
	// "metadata", "ipv4_mapped_private" (an IPv4-mapped IPv6 address of a denied
	// IPv4 address), "ipv4_compatible" (deprecated ::a.b.c.d form), "nat64_private"
	// and "6to4_private" (NAT64 or 6to4 address embedding a denied IPv4 address),
	// "zone" (an IPv6 zone), "invalid_address";
	//
	// URL and dial reasons: "userinfo", "scheme", "numeric_host_form",
	// "missing_host", "invalid_host", "port", "network" (not a TCP network),
	// "invalid_url";
	//
	// redirect reasons: "redirect_downgrade", "too_many_redirects".
	Reason string
}

// Error describes the refusal; attacker-controlled text is quoted and clipped.
func (e *BlockedError) Error() string {
	if e == nil {
		return ErrBlocked.Error()
	}
	var b strings.Builder
	b.WriteString(ErrBlocked.Error())
	b.WriteString(": ")
	b.WriteString(safe(e.Reason))
	if e.Host != "" {
		b.WriteString(" host ")
		b.WriteString(quote(e.Host))
	}
	if e.Addr.IsValid() {
		b.WriteString(" addr ")
		b.WriteString(safe(e.Addr.String()))
	}
	return b.String()
}

// Is reports whether target is ErrBlocked.
func (e *BlockedError) Is(target error) bool { return target == ErrBlocked }

func blocked(host string, a netip.Addr, reason string) *BlockedError {
	return &BlockedError{Host: safe(host), Addr: a, Reason: reason}
}

// safe makes attacker-controlled text fit for an error message: invalid UTF-8,
// non-printable runes, quotes and backslashes become '?', and the result is clipped to
// maxQuoted bytes on a rune boundary, a cut marked with "...".
func safe(s string) string {
	if len(s) > 4*maxQuoted {
		s = s[:4*maxQuoted] // the loop below stops long before; bound its work
	}
	var b strings.Builder
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) || r == '"' || r == '\\' {
			r = '?'
		}
		if b.Len()+utf8.RuneLen(r) > maxQuoted {
			b.WriteString("...")
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}

// quote is safe(s) in double quotes.
func quote(s string) string { return `"` + safe(s) + `"` }

// CheckAddr returns nil only for an allowed address: public global unicast, or
// loopback when Config.AllowLoopback is set. Otherwise it returns a *BlockedError.
func (g *Guard) CheckAddr(a netip.Addr) error {
	if reason := classify(a, g.allowLoopback); reason != "" {
		if reason == reasonZone {
			a = a.WithZone("")
		}
		return blocked("", a, reason)
	}
	return nil
}

// CheckURL refuses a URL the probe must not fetch: schemes other than http and https,
// any userinfo (even an empty one), a missing host, a port outside 1..65535, IPv6
// zones, an IP-literal host that CheckAddr denies, a host in any inet_aton numeric
// form ("2130706433", "0177.0.0.1", "0x7f.1", ...), and hosts with characters no host
// name has. Host names are not resolved here; DialContext checks what they resolve to.
func (g *Guard) CheckURL(u *url.URL) error {
	if u == nil {
		return blocked("", netip.Addr{}, reasonInvalidURL)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	default:
		return blocked("", netip.Addr{}, reasonScheme)
	}
	host := u.Hostname()
	if u.User != nil {
		return blocked(host, netip.Addr{}, reasonUserinfo)
	}
	if u.Opaque != "" || host == "" {
		return blocked(host, netip.Addr{}, reasonMissingHost)
	}
	if p := u.Port(); p != "" {
		if _, ok := parsePort(p); !ok {
			return blocked(host, netip.Addr{}, reasonPort)
		}
	}
	_, err := g.checkHost(host, true)
	return err
}

// checkHost judges a host as written. It returns the address for an IP literal (nil
// error) or the zero Addr for a name that still needs resolving. unicodeOK admits
// non-ASCII (IDN) names, as found in URLs; at dial time names must be ASCII.
func (g *Guard) checkHost(host string, unicodeOK bool) (netip.Addr, error) {
	name := strings.TrimSuffix(host, ".")
	if a, err := netip.ParseAddr(name); err == nil {
		if a.Zone() != "" {
			return netip.Addr{}, blocked(host, a.WithZone(""), reasonZone)
		}
		if reason := classify(a, g.allowLoopback); reason != "" {
			return netip.Addr{}, blocked(host, a, reason)
		}
		return a, nil
	}
	if isNumericHost(name) {
		return netip.Addr{}, blocked(host, netip.Addr{}, reasonNumericHost)
	}
	if strings.ContainsRune(name, '%') && strings.ContainsRune(name, ':') {
		// An IPv6 literal with a zone that ParseAddr rejected anyway.
		return netip.Addr{}, blocked(host, netip.Addr{}, reasonZone)
	}
	if !validHostname(name, unicodeOK) {
		return netip.Addr{}, blocked(host, netip.Addr{}, reasonInvalidHost)
	}
	return netip.Addr{}, nil
}

// parsePort parses a decimal port in 1..65535.
func parsePort(s string) (uint16, bool) {
	if s == "" || len(s) > 5 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if n < 1 || n > 65535 {
		return 0, false
	}
	return uint16(n), true
}

// isNumericHost reports whether name is a host that inet_aton, a URL parser or an
// IDNA mapping could read as an IPv4 address: its last label is a decimal, octal or
// hexadecimal number ("127.1", "0x7f000001", "0177.0.0.1", "1.2.3.4.5"). Compatibility
// digits and full stops (fullwidth "１２７．１", circled "①") count as their ASCII
// forms. Canonical dotted quads are parsed as addresses before this is asked.
func isNumericHost(name string) bool {
	name = strings.TrimSuffix(foldNumeric(name), ".")
	label := name[strings.LastIndexByte(name, '.')+1:]
	if label == "" {
		return false
	}
	if rest, ok := strings.CutPrefix(label, "0x"); ok {
		for _, r := range rest {
			if !isHexDigit(r) && !isCompatDigit(r) {
				return false
			}
		}
		return true
	}
	for _, r := range label {
		if (r < '0' || r > '9') && !isCompatDigit(r) {
			return false
		}
	}
	return true
}

// foldNumeric lower-cases ASCII letters and maps fullwidth ASCII and the IDNA label
// separators (U+3002, U+FF0E, U+FF61) to their ASCII forms.
func foldNumeric(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z':
			r += 'a' - 'A'
		case r >= 0xFF10 && r <= 0xFF19: // FULLWIDTH DIGIT ZERO..NINE
			r = '0' + (r - 0xFF10)
		case r >= 0xFF21 && r <= 0xFF3A: // FULLWIDTH LATIN CAPITAL LETTER A..Z
			r = 'a' + (r - 0xFF21)
		case r >= 0xFF41 && r <= 0xFF5A: // FULLWIDTH LATIN SMALL LETTER A..Z
			r = 'a' + (r - 0xFF41)
		case r == 0x3002 || r == 0xFF0E || r == 0xFF61: // ideographic, fullwidth, halfwidth full stops
			r = '.'
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isHexDigit(r rune) bool {
	return (r >= '0' && r <= '9') || (r >= 'a' && r <= 'f')
}

// isCompatDigit reports a non-ASCII number character ("①", "²", "٣"), which an
// IDNA or NFKC mapping may turn into ASCII digits.
func isCompatDigit(r rune) bool {
	return r >= utf8.RuneSelf && unicode.IsNumber(r)
}

// validHostname reports whether name (without its trailing dot) is a plausible DNS
// name: at most 253 bytes, non-empty labels of at most 63 bytes of letters, digits,
// '-' and '_'. With unicodeOK, non-ASCII runes are accepted too (an IDN before its
// ASCII conversion) and only the total length is bounded.
func validHostname(name string, unicodeOK bool) bool {
	if name == "" || !utf8.ValidString(name) {
		return false
	}
	ascii := true
	for i := 0; i < len(name); i++ {
		if name[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if !ascii && !unicodeOK {
		return false
	}
	if (ascii && len(name) > 253) || len(name) > 1024 {
		return false
	}
	for label := range strings.SplitSeq(name, ".") {
		if label == "" || (ascii && len(label) > 63) {
			return false
		}
		for _, r := range label {
			switch {
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			case r >= utf8.RuneSelf && unicode.IsGraphic(r) && !unicode.IsSpace(r):
			default:
				return false
			}
		}
	}
	return true
}

// lookupNetwork maps the dial networks the guard serves to resolver networks.
var lookupNetwork = map[string]string{"tcp": "ip", "tcp4": "ip4", "tcp6": "ip6"}

// DialContext connects to addr ("host:port") over TCP through the guard. It parses an
// IP-literal host or resolves a name once through the Resolver, refuses unless every
// resolved address passes CheckAddr, and then dials the checked IP literals (at most
// four, in resolver order) with the configured Dial, never the name again. It has the
// signature of http.Transport.DialContext.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	lookupNet, ok := lookupNetwork[network]
	if !ok {
		return nil, blocked("", netip.Addr{}, reasonNetwork)
	}
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, blocked(addr, netip.Addr{}, reasonInvalidHost)
	}
	if host == "" {
		return nil, blocked("", netip.Addr{}, reasonMissingHost)
	}
	port, ok := parsePort(portStr)
	if !ok {
		return nil, blocked(host, netip.Addr{}, reasonPort)
	}
	lit, err := g.checkHost(host, false)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if lit.IsValid() {
		addrs = []netip.Addr{lit.Unmap()}
	} else if addrs, err = g.resolve(ctx, lookupNet, host); err != nil {
		return nil, err
	}
	var firstErr error
	tried := 0
	for _, a := range addrs {
		if (network == "tcp4" && !a.Is4()) || (network == "tcp6" && !a.Is6()) {
			continue
		}
		if tried == maxDialAttempts {
			break
		}
		if err := ctx.Err(); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			break
		}
		tried++
		c, err := g.dial(ctx, network, netip.AddrPortFrom(a, port).String())
		if err == nil && c != nil {
			return c, nil
		}
		if err == nil {
			err = errors.New("egress: dial returned no connection")
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if firstErr == nil {
		firstErr = &lookupError{host: safe(host), err: &net.DNSError{
			Err: "no address for network " + network, Name: safe(host), IsNotFound: true}}
	}
	return nil, firstErr
}

// resolve looks host up once and checks every answer; one denied answer refuses the
// name. Answers come back unmapped (Go's resolver returns /etc/hosts IPv4 entries in
// IPv4-mapped form) and deduplicated.
func (g *Guard) resolve(ctx context.Context, network, host string) ([]netip.Addr, error) {
	answers, err := g.resolver.LookupNetIP(ctx, network, host)
	if err != nil {
		return nil, &lookupError{host: safe(host), err: err}
	}
	if len(answers) == 0 {
		return nil, &lookupError{host: safe(host), err: &net.DNSError{
			Err: "no addresses", Name: safe(host), IsNotFound: true}}
	}
	addrs := make([]netip.Addr, 0, len(answers))
	seen := make(map[netip.Addr]bool, len(answers))
	for _, a := range answers {
		if a.Zone() != "" {
			return nil, blocked(host, a.WithZone(""), reasonZone)
		}
		a = a.Unmap()
		if reason := classify(a, g.allowLoopback); reason != "" {
			return nil, blocked(host, a, reason)
		}
		if !seen[a] {
			seen[a] = true
			addrs = append(addrs, a)
		}
	}
	return addrs, nil
}

// lookupError is a failed resolution. Its text carries the clipped host and not the
// resolver's own message (which may repeat the full name); Unwrap gives the original
// error, typically a *net.DNSError.
type lookupError struct {
	host string
	err  error
}

func (e *lookupError) Error() string {
	detail := "lookup failed"
	var dnsErr *net.DNSError
	switch {
	case errors.As(e.err, &dnsErr):
		detail = safe(dnsErr.Err)
	case errors.Is(e.err, context.DeadlineExceeded), errors.Is(e.err, context.Canceled):
		detail = safe(e.err.Error())
	}
	return "egress: resolve " + quote(e.host) + ": " + detail
}

func (e *lookupError) Unwrap() error { return e.err }

// Control is the net.Dialer Control function of the default Dial: it refuses the
// connection unless the socket's remote address passes CheckAddr (and its port is in
// 1..65535). It runs after name resolution and before connect(2), so it sees the
// address actually dialed. c is not used.
func (g *Guard) Control(network, address string, c syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return blocked(address, netip.Addr{}, reasonInvalidAddr)
	}
	if err := g.CheckAddr(ap.Addr()); err != nil {
		return err
	}
	if ap.Port() == 0 {
		return blocked("", ap.Addr(), reasonPort)
	}
	return nil
}

// CheckRedirect is an http.Client CheckRedirect function: it allows at most
// Config.MaxRedirects hops, applies CheckURL to every hop, and refuses a hop to http
// once any earlier request of the chain used https ("redirect_downgrade"). Cross-host
// hops are allowed; the probe records them.
func (g *Guard) CheckRedirect(req *http.Request, via []*http.Request) error {
	if req == nil || req.URL == nil {
		return blocked("", netip.Addr{}, reasonInvalidURL)
	}
	if len(via) > g.maxRedirects {
		return blocked(req.URL.Hostname(), netip.Addr{}, reasonTooManyRedirec)
	}
	if err := g.CheckURL(req.URL); err != nil {
		return err
	}
	if strings.EqualFold(req.URL.Scheme, "http") {
		for _, v := range via {
			if v != nil && v.URL != nil && strings.EqualFold(v.URL.Scheme, "https") {
				return blocked(req.URL.Hostname(), netip.Addr{}, reasonDowngrade)
			}
		}
	}
	return nil
}

// Transport returns a new http.Transport that dials through g.DialContext, never uses
// a proxy (environment proxies are ignored), requires TLS 1.2 or later, attempts
// HTTP/2, and bounds handshakes (5s), response headers (10s, 64 KiB) and idle
// connections (30s). Pair it with g.CheckRedirect in the http.Client.
func (g *Guard) Transport() *http.Transport {
	return &http.Transport{
		Proxy:                  nil,
		DialContext:            g.DialContext,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    5 * time.Second,
		ResponseHeaderTimeout:  10 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
		IdleConnTimeout:        30 * time.Second,
		DisableCompression:     false,
	}
}
