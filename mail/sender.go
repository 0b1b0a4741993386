// Package mail sends Probity's e-mails over SMTP: it renders a Message as MIME
// (github.com/wneessen/go-mail), signs it with DKIM when a key is configured
// (github.com/emersion/go-msgauth) and delivers it to one configured SMTP server,
// the relay that sends mail on to the recipients (a provider's submission port or a
// local MTA).
//
// # What a message looks like
//
// One recipient; From from the configuration; Subject; Date; Message-ID;
// MIME-Version; Auto-Submitted: auto-generated (RFC 3834); optionally List-Id
// (RFC 2919), List-Unsubscribe (RFC 2369) and List-Unsubscribe-Post (RFC 8058
// one-click); a text/plain part and, when given, a text/html alternative
// (multipart/alternative), both UTF-8, quoted-printable. With DKIM, a
// DKIM-Signature (relaxed/relaxed, SHA-256, Ed25519 or RSA) covers From, To,
// Subject, Date, Message-ID, MIME-Version, Content-Type, List-Id, List-Unsubscribe,
// List-Unsubscribe-Post and Auto-Submitted, the most sensitive of them oversigned.
//
// Every header value is checked before anything is sent: CR, LF and other control
// characters are refused, so no value can add a header field or end the header
// (header injection). Lengths are bounded: header values 900 bytes (no line may
// exceed RFC 5322's 998), each part 1 MiB.
//
// # Transport
//
// Config.Security chooses how the connection is protected:
//
//   - "starttls" (the default; port 587): plain TCP, then STARTTLS, which is
//     required; the server's certificate is verified.
//   - "tls" (port 465): TLS from the first byte (RFC 8314).
//   - "none" (port 25): no encryption, allowed only to a loopback host
//     ("localhost", 127.0.0.0/8, ::1), for a local MTA, tests and the demo; the
//     dialer checks the connected address once more.
//
// When Config.Username is set the sender authenticates (AUTH PLAIN, else LOGIN),
// only after TLS except on loopback.
//
// # Timeouts
//
// The sender waits for each reply as long as RFC 5321 (section 4.5.3.2) tells a client
// to: 5 minutes for the greeting (and here for EHLO, STARTTLS and AUTH), for
// MAIL and for RCPT, 2 minutes for DATA's 354, 3 minutes for each 64 KiB block of the
// message to be taken, and 10 minutes for the reply to the final "." (the server may
// be delivering or filtering the message meanwhile); a TCP connect waits a minute.
// Config.Timeout shortens every one of these waits (tests), and Config.SendTimeout
// (DefaultSendTimeout, 15 minutes: the end of DATA's 10 and 5 for the rest) bounds one
// Send as a whole, waiting for a free connection included. A caller that records the
// outcome under a lease (notify's outbox) must hold it longer than SendTimeout. Connections are kept open and reused for the
// next message (at most Config.MaxConns at once, idle ones closed after 30 s), which
// is what makes hundreds of messages a second possible.
//
// # Errors
//
// A refusal the server gives with a 5xx reply to MAIL, RCPT, DATA or the message
// itself, and a Message that can never be sent (an invalid address, a header with
// a line break), match ErrPermanent under errors.Is: retrying cannot help. Every
// other failure (4xx replies, connection or TLS or AUTH failures, timeouts, a
// cancelled context) is temporary.
//
// # Exactly once
//
// A message counts as sent when the server answers 250 to the final "." of DATA.
// A send that fails before the final "." reached the server leaves nothing there,
// and the caller sends again: nothing lost, nothing doubled. The one window for a
// duplicate runs from the server receiving the final "." (it may keep the message
// even if its 250 never arrives) until the caller has recorded the success. Both
// copies carry the caller's Message-ID, which lets a reader (and some servers)
// recognise the second.
package mail

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	netmail "net/mail"
	"net/netip"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/emersion/go-msgauth/dkim"
	gomail "github.com/wneessen/go-mail"
	gosmtp "github.com/wneessen/go-mail/smtp"
)

// ErrPermanent is matched (errors.Is) by every error that sending the same message
// again would repeat: a 5xx refusal by the SMTP server, or a Message that can
// never be sent. Other errors are temporary: retry later.
var ErrPermanent = errors.New("permanent failure, sending it again will fail the same way")

// Config configures a Sender.
type Config struct {
	// Host is the SMTP server's host name or IP address.
	Host string
	// Port is its port; 0 means 587 for "starttls", 465 for "tls", 25 for "none".
	Port int
	// Username and Password authenticate (AUTH PLAIN or LOGIN) when Username is
	// set. The password is never logged nor put into an error.
	Username, Password string
	// From is the sender, "notify@probity.example" or
	// "Probity <notify@probity.example>"; it is also the envelope sender.
	From string
	// Security is "starttls" (also when empty), "tls" or "none" (loopback only).
	Security string
	// HeloName is the name given in EHLO; empty means the machine's host name.
	HeloName string
	// DKIM, when set, signs every message.
	DKIM *DKIMConfig
	// RootCAs verifies the server's certificate; nil means the system's roots.
	// Tests and the demo pass the sink's certificate (sink.CertPool).
	RootCAs *x509.CertPool
	// Timeout, when set, shortens each of RFC 5321's waits (see Timeouts in the
	// package documentation) to at most Timeout; 0 keeps them.
	Timeout time.Duration
	// SendTimeout bounds one Send as a whole, waiting for a free connection included;
	// 0 means DefaultSendTimeout. The caller's context may end it sooner.
	SendTimeout time.Duration
	// MaxConns is how many connections (and so concurrent Sends) at most; 0 means 4.
	MaxConns int
	// Now is the clock for the Date field; nil means time.Now.
	Now func() time.Time
}

// DefaultSendTimeout is Config.SendTimeout's default: RFC 5321's 10 minutes for the
// reply to the end of the message, and 5 for everything before it.
const DefaultSendTimeout = 15 * time.Minute

// RFC 5321's timeouts (section 4.5.3.2): how long the sender waits for each reply.
const (
	greetingWait = 5 * time.Minute  // 4.5.3.2.1 the 220 greeting; here also EHLO, STARTTLS and AUTH
	mailWait     = 5 * time.Minute  // 4.5.3.2.2 MAIL (and RSET)
	rcptWait     = 5 * time.Minute  // 4.5.3.2.3 RCPT
	dataWait     = 2 * time.Minute  // 4.5.3.2.4 DATA's 354
	blockWait    = 3 * time.Minute  // 4.5.3.2.5 each block of the message written
	dataEndWait  = 10 * time.Minute // 4.5.3.2.6 the reply to the final "."
	connectWait  = time.Minute      // a TCP connect (RFC 5321 names none)
	blockSize    = 64 << 10         // the block of blockWait
)

// errSendTimeout is the cause of a Send that took SendTimeout.
var errSendTimeout = errors.New("the send took as long as one send may (SendTimeout)")

// Connection reuse bounds.
const (
	maxIdle        = 30 * time.Second // an idle connection older than this is closed, not reused
	maxSentPerConn = 500              // messages per connection before a fresh one
)

// Sender sends Messages to the configured SMTP server. It is safe for concurrent
// use; Close it to close its idle connections.
type Sender struct {
	addr       string // host:port
	host       string
	security   string
	username   string
	password   string
	from       *netmail.Address
	fromDomain string
	dkim       *dkim.SignOptions
	tls        *tls.Config
	client     *gomail.Client // dials, greets and does STARTTLS
	cap        time.Duration  // Config.Timeout: 0, or the longest wait
	sendLimit  time.Duration  // Config.SendTimeout
	now        func() time.Time
	// wrapConn, when set, wraps each new TCP connection (tests watch the deadlines).
	wrapConn func(net.Conn) net.Conn
	slots    chan struct{}

	mu     sync.Mutex
	idle   []*conn
	closed bool
}

// conn is one open, greeted (and authenticated) SMTP connection.
type conn struct {
	c         *gosmtp.Client
	raw       net.Conn // the TCP connection under any TLS, for deadlines
	idleSince time.Time
	sent      int
}

// NewSender checks cfg and returns a Sender. It does not connect yet: the first
// Send does.
func NewSender(cfg Config) (*Sender, error) {
	s := &Sender{username: cfg.Username, password: cfg.Password, cap: cfg.Timeout, sendLimit: cfg.SendTimeout, now: cfg.Now}
	if cfg.Timeout < 0 || cfg.SendTimeout < 0 {
		return nil, errors.New("mail: Timeout and SendTimeout must not be negative (0 for the defaults)")
	}
	if s.sendLimit == 0 {
		s.sendLimit = DefaultSendTimeout
	}
	if s.now == nil {
		s.now = time.Now
	}
	if cfg.MaxConns < 0 || cfg.MaxConns > 100 {
		return nil, fmt.Errorf("mail: MaxConns %d is out of range (0 for the default 4, at most 100)", cfg.MaxConns)
	}
	n := cfg.MaxConns
	if n == 0 {
		n = 4
	}
	s.slots = make(chan struct{}, n)

	host := strings.TrimSuffix(strings.TrimPrefix(cfg.Host, "["), "]")
	if host == "" {
		return nil, errors.New("mail: Host is empty: give the SMTP server's host name")
	}
	if _, err := netip.ParseAddr(host); err != nil && !isDomain(host) && !isLabel(host) {
		return nil, fmt.Errorf("mail: Host %q is neither a host name nor an IP address", clip(cfg.Host))
	}
	s.host = host

	var opts []gomail.Option
	port := cfg.Port
	switch cfg.Security {
	case "", "starttls":
		s.security = "starttls"
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
		if port == 0 {
			port = 587
		}
	case "tls":
		s.security = "tls"
		opts = append(opts, gomail.WithSSL())
		if port == 0 {
			port = 465
		}
	case "none":
		if !isLoopbackHost(host) {
			return nil, fmt.Errorf("mail: Security \"none\" sends mail and password unencrypted, so it is allowed only to a loopback host (localhost, 127.0.0.1, ::1), not %q: use \"starttls\" or \"tls\"", host)
		}
		s.security = "none"
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
		if port == 0 {
			port = 25
		}
	default:
		return nil, fmt.Errorf("mail: Security %q is unknown: use \"starttls\", \"tls\" or \"none\" (loopback only)", cfg.Security)
	}
	if port < 1 || port > 65535 {
		return nil, fmt.Errorf("mail: Port %d is out of range", port)
	}
	s.addr = net.JoinHostPort(host, strconv.Itoa(port))

	if cfg.Password != "" && cfg.Username == "" {
		return nil, errors.New("mail: a Password is set but no Username")
	}
	if strings.ContainsAny(cfg.Username+cfg.Password, "\x00\r\n") {
		return nil, errors.New("mail: the Username or Password contains a NUL, CR or LF, which SMTP AUTH cannot carry")
	}

	from, err := parseAddress("From", cfg.From)
	if err != nil {
		return nil, fmt.Errorf("mail: Config.From: %w", err)
	}
	s.from = from
	s.fromDomain = from.Address[strings.LastIndexByte(from.Address, '@')+1:]

	if cfg.HeloName != "" {
		if _, err := netip.ParseAddr(cfg.HeloName); err != nil && !isDomain(cfg.HeloName) && !isLabel(cfg.HeloName) {
			return nil, fmt.Errorf("mail: HeloName %q is not a host name", clip(cfg.HeloName))
		}
		opts = append(opts, gomail.WithHELO(cfg.HeloName))
	}

	if cfg.DKIM != nil {
		if s.dkim, err = newDKIM(*cfg.DKIM, s.fromDomain); err != nil {
			return nil, err
		}
	}

	s.tls = &tls.Config{ServerName: host, RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12}
	opts = append(opts,
		gomail.WithPort(port),
		gomail.WithTimeout(s.wait(greetingWait)), // go-mail's: connecting, the greeting, EHLO and STARTTLS
		gomail.WithTLSConfig(s.tls),
		gomail.WithDialContextFunc(s.dial),
	)
	if s.client, err = gomail.NewClient(host, opts...); err != nil {
		return nil, fmt.Errorf("mail: %w", err)
	}
	return s, nil
}

// Send delivers m. It returns nil once the server has accepted the message (250
// after DATA). Errors matching ErrPermanent will repeat; others are temporary.
// Cancelling ctx stops the exchange at once (the server keeps nothing unless it
// had already received the final ".").
func (s *Sender) Send(ctx context.Context, m Message) error {
	raw, rcpt, err := s.build(m)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, s.sendLimit, fmt.Errorf("%w: %v", errSendTimeout, s.sendLimit))
	defer cancel()
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("mail: gave up waiting for a free connection: %w", ctx.Err())
	}
	defer func() { <-s.slots }()

	for attempt := 0; ; attempt++ {
		cn, reused, err := s.get(ctx)
		if err != nil {
			return err
		}
		stale, err := s.transact(ctx, cn, rcpt, raw)
		if stale && reused && attempt == 0 {
			// The server had closed the idle connection (or said 421) before
			// MAIL FROM was accepted: nothing was sent, try a fresh connection.
			continue
		}
		return err
	}
}

// transact runs MAIL, RCPT and DATA on cn and returns the connection to the pool
// or closes it. stale reports a failure at MAIL FROM that a fresh connection may
// not have (a closed connection, a 421).
func (s *Sender) transact(ctx context.Context, cn *conn, rcpt string, raw []byte) (stale bool, err error) {
	// The connection's deadline is RFC 5321's wait for the reply due next (expect);
	// ctx (its deadline included) interrupts through the AfterFunc, so that a
	// cancellation is always reported as ctx's error.
	stop := context.AfterFunc(ctx, func() { _ = cn.raw.SetDeadline(time.Unix(1, 0)) })

	if err := s.expect(ctx, cn, mailWait); err != nil {
		return s.fail(ctx, cn, stop, "MAIL FROM", rcpt, err)
	}
	if err := cn.c.Mail("<" + s.from.Address + ">"); err != nil {
		return s.fail(ctx, cn, stop, "MAIL FROM", rcpt, err)
	}
	if err := s.expect(ctx, cn, rcptWait); err != nil {
		_, err := s.fail(ctx, cn, stop, "RCPT TO", rcpt, err)
		return false, err
	}
	if err := cn.c.Rcpt("<" + rcpt + ">"); err != nil {
		_, err := s.fail(ctx, cn, stop, "RCPT TO", rcpt, err)
		return false, err
	}
	if err := s.expect(ctx, cn, dataWait); err != nil {
		_, err := s.fail(ctx, cn, stop, "DATA", rcpt, err)
		return false, err
	}
	w, err := cn.c.Data()
	if err != nil {
		_, err := s.fail(ctx, cn, stop, "DATA", rcpt, err)
		return false, err
	}
	for rest := raw; len(rest) > 0; {
		block := rest[:min(len(rest), blockSize)]
		rest = rest[len(block):]
		err := s.expect(ctx, cn, blockWait)
		if err == nil {
			_, err = w.Write(block)
		}
		if err != nil {
			_, err := s.fail(ctx, cn, stop, "the message text", rcpt, err)
			return false, err
		}
	}
	if err := s.expect(ctx, cn, dataEndWait); err != nil {
		_, err := s.fail(ctx, cn, stop, "the end of the message", rcpt, err)
		return false, err
	}
	if err := w.Close(); err != nil {
		_, err := s.fail(ctx, cn, stop, "the end of the message", rcpt, err)
		return false, err
	}
	// Accepted. If ctx ended just now, the deadline was moved into the past and
	// the connection is of no further use, but the message is sent.
	if !stop() {
		s.discard(cn)
		return false, nil
	}
	cn.sent++
	s.put(cn)
	return false, nil
}

// fail classifies err from the given stage, and keeps cn when the server answered
// (the session is still in step) or closes it otherwise.
func (s *Sender) fail(ctx context.Context, cn *conn, stop func() bool, stage, rcpt string, err error) (stale bool, _ error) {
	cancelled := !stop() || ctx.Err() != nil
	var te *textproto.Error
	if !cancelled && errors.As(err, &te) {
		closing := te.Code == 421 // the server is closing the connection
		switch {
		case closing:
			s.discard(cn)
		case stage == "the end of the message":
			s.put(cn) // the transaction is over either way
		default:
			if s.expect(ctx, cn, mailWait) != nil || cn.c.Reset() != nil { // RSET ends the half-done transaction
				s.discard(cn)
			} else {
				s.put(cn)
			}
		}
		if te.Code >= 500 && te.Code <= 599 {
			return false, fmt.Errorf("mail: the SMTP server %s refused %s for the recipient: %d %s: %w", s.addr, stage, te.Code, clip(redact(te.Msg, rcpt)), ErrPermanent)
		}
		return closing && stage == "MAIL FROM", fmt.Errorf("mail: the SMTP server %s answered %s for the recipient with %d %s (temporary; try again later)", s.addr, stage, te.Code, clip(redact(te.Msg, rcpt)))
	}
	s.discard(cn)
	if cancelled {
		return false, fmt.Errorf("mail: sending stopped during %s: %w", stage, context.Cause(ctx))
	}
	return stage == "MAIL FROM", fmt.Errorf("mail: sending through %s failed during %s: %w", s.addr, stage, err)
}

// wait is RFC 5321's wait d, or Config.Timeout when that is shorter.
func (s *Sender) wait(d time.Duration) time.Duration {
	if s.cap > 0 && s.cap < d {
		return s.cap
	}
	return d
}

// expect sets cn's deadline for the reply (or the write) due next: wait (RFC 5321's)
// from now. When ctx has ended meanwhile, the deadline stays in the past, where
// transact's AfterFunc put it.
func (s *Sender) expect(ctx context.Context, cn *conn, wait time.Duration) error {
	if err := cn.raw.SetDeadline(time.Now().Add(s.wait(wait))); err != nil {
		return fmt.Errorf("connection unusable: %w", err)
	}
	if ctx.Err() != nil {
		_ = cn.raw.SetDeadline(time.Unix(1, 0))
	}
	return nil
}

// redact replaces the recipient's address in a server's answer: errors are logged, and
// the log never holds an address (the privacy page says so).
func redact(msg, rcpt string) string {
	if rcpt == "" {
		return msg
	}
	return strings.ReplaceAll(strings.ReplaceAll(msg, rcpt, "(the recipient)"), strings.ToLower(rcpt), "(the recipient)")
}

// get returns an idle connection (reused true) or a new one.
func (s *Sender) get(ctx context.Context) (*conn, bool, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, false, errors.New("mail: the Sender is closed")
	}
	var old []*conn
	var cn *conn
	now := time.Now()
	for cn == nil && len(s.idle) > 0 {
		c := s.idle[len(s.idle)-1]
		s.idle = s.idle[:len(s.idle)-1]
		if now.Sub(c.idleSince) > maxIdle || c.sent >= maxSentPerConn {
			old = append(old, c)
			continue
		}
		cn = c
	}
	s.mu.Unlock()
	for _, c := range old {
		s.quit(c)
	}
	if cn != nil {
		return cn, true, nil
	}
	cn, err := s.connect(ctx)
	return cn, false, err
}

// put returns cn to the idle pool.
func (s *Sender) put(cn *conn) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.quit(cn)
		return
	}
	cn.idleSince = time.Now()
	s.idle = append(s.idle, cn)
	s.mu.Unlock()
}

// discard closes cn without a QUIT: it is broken or out of step.
func (s *Sender) discard(cn *conn) {
	_ = cn.raw.Close()
}

// quit ends cn politely, waiting at most a second.
func (s *Sender) quit(cn *conn) {
	_ = cn.raw.SetDeadline(time.Now().Add(time.Second))
	_ = cn.c.Quit()
	_ = cn.raw.Close()
}

// Close closes the idle connections; connections in use close when their Send
// ends. Send fails after Close.
func (s *Sender) Close() error {
	s.mu.Lock()
	idle := s.idle
	s.idle, s.closed = nil, true
	s.mu.Unlock()
	for _, cn := range idle {
		s.quit(cn)
	}
	return nil
}

// rawConnKey carries a *rawHolder from connect to dial through the context that
// go-mail passes on.
type rawConnKey struct{}

// rawHolder hands the TCP connection made by dial to connect, and lets a
// cancelled context interrupt the greeting, STARTTLS and AUTH.
type rawHolder struct {
	mu        sync.Mutex
	c         net.Conn
	cancelled bool
}

func (h *rawHolder) set(c net.Conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.c = c
	if h.cancelled {
		_ = c.SetDeadline(time.Unix(1, 0))
	}
}

func (h *rawHolder) cancel() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cancelled = true
	if h.c != nil {
		_ = h.c.SetDeadline(time.Unix(1, 0))
	}
}

func (h *rawHolder) get() net.Conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.c
}

// dial is go-mail's DialContextFunc: it connects to s.addr (never a name go-mail
// formatted), checks the remote address for "none", and does the TLS handshake for
// "tls".
func (s *Sender) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	d := net.Dialer{Timeout: s.wait(connectWait)}
	if s.security == "none" {
		d.Control = loopbackOnly
	}
	raw, err := d.DialContext(ctx, "tcp", s.addr)
	if err != nil {
		return nil, err
	}
	if s.wrapConn != nil {
		raw = s.wrapConn(raw)
	}
	if h, ok := ctx.Value(rawConnKey{}).(*rawHolder); ok {
		h.set(raw)
	}
	if s.security != "tls" {
		return raw, nil
	}
	tc := tls.Client(raw, s.tls)
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = raw.Close()
		return nil, fmt.Errorf("TLS handshake: %w", err)
	}
	return tc, nil
}

// loopbackOnly is the dialer's Control for Security "none": the address actually
// connected to must be loopback, whatever "localhost" resolved to.
func loopbackOnly(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	a, err := netip.ParseAddr(host)
	if err != nil || !a.Unmap().IsLoopback() {
		return fmt.Errorf("mail: Security \"none\" refuses to connect to %s, which is not a loopback address", address)
	}
	return nil
}

// connect opens, greets, secures and authenticates a new connection.
func (s *Sender) connect(ctx context.Context) (*conn, error) {
	h := &rawHolder{}
	stop := context.AfterFunc(ctx, h.cancel)
	defer stop()
	c, err := s.client.DialToSMTPClientWithContext(context.WithValue(ctx, rawConnKey{}, h))
	raw := h.get()
	if err != nil {
		if raw != nil {
			_ = raw.Close() // go-mail leaves it open when EHLO or STARTTLS fails
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("mail: connecting to %s stopped: %w", s.addr, context.Cause(ctx))
		}
		return nil, fmt.Errorf("mail: couldn't connect to the SMTP server %s (%s): %w", s.addr, s.security, err)
	}
	if raw == nil { // cannot happen: dial always sets it
		_ = c.Close()
		return nil, errors.New("mail: internal error: no connection recorded")
	}
	cn := &conn{c: c, raw: raw}
	err = s.expect(ctx, cn, greetingWait)
	if err == nil {
		err = s.auth(cn)
	}
	if err != nil {
		s.discard(cn)
		if ctx.Err() != nil {
			return nil, fmt.Errorf("mail: authenticating to %s stopped: %w", s.addr, context.Cause(ctx))
		}
		return nil, err
	}
	return cn, nil
}

// auth authenticates with PLAIN, else LOGIN, when a user is configured.
func (s *Sender) auth(cn *conn) error {
	if s.username == "" {
		return nil
	}
	ok, mechs := cn.c.Extension("AUTH")
	if !ok {
		return fmt.Errorf("mail: a Username is configured but the SMTP server %s offers no AUTH (over %s)", s.addr, s.security)
	}
	// "none" only ever reaches loopback (checked twice), where the
	// unencrypted exchange never leaves the machine.
	loopback := s.security == "none"
	var a gosmtp.Auth
	switch list := strings.Fields(strings.ToUpper(mechs)); {
	case contains(list, "PLAIN"):
		a = gosmtp.PlainAuth("", s.username, s.password, s.host, loopback)
	case contains(list, "LOGIN"):
		a = gosmtp.LoginAuth(s.username, s.password, s.host, loopback)
	default:
		return fmt.Errorf("mail: the SMTP server %s offers AUTH %s; Probity speaks PLAIN and LOGIN", s.addr, clip(mechs))
	}
	if err := cn.c.Auth(a); err != nil {
		return fmt.Errorf("mail: SMTP AUTH as %q at %s failed: %w", s.username, s.addr, err)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
