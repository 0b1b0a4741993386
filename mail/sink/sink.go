// Package sink is a small SMTP server for loopback use that keeps every message it
// accepts: in memory (Messages, Wait) and, when given a directory, as one file per
// message, DIR/000001.eml, DIR/000002.eml, … (the raw message as received, CRLF
// line ends, mode 0600: the files hold sign-in codes and unsubscribe links). Tests
// send through it, and `probity demo` starts one so that the demo follower's
// e-mails can be read.
//
// It is a real SMTP server (github.com/emersion/go-smtp): EHLO, optional STARTTLS
// with a self-signed certificate generated at Start for 127.0.0.1, ::1 and
// localhost (or TLS from the first byte), optional AUTH PLAIN (then required
// before MAIL), MAIL, RCPT, DATA. It listens only on a loopback address.
//
// Everything is bounded: message size (Options.MaxMessageBytes), recipients per
// message (100), messages and bytes kept in memory (beyond them the sink answers
// 452 and keeps nothing), open connections (100).
//
// Options.Hold runs inside DATA after the final "." has arrived and before the
// message is kept and answered: blocking in it stalls the client, which waits for
// its 250, so a test can kill the sending process at exactly that point; returning
// an error refuses the message. Options.CheckRcpt refuses recipients. A *Refusal
// chooses the SMTP reply code (4xx temporary, 5xx permanent).
package sink

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Options configures a Sink. The zero Options is a plain server without TLS or
// AUTH.
type Options struct {
	// STARTTLS offers STARTTLS with a self-signed certificate generated at Start;
	// clients trust it through CertPool.
	STARTTLS bool
	// ImplicitTLS speaks TLS from the first byte (SMTPS, port 465 style) with the
	// same kind of certificate. It excludes STARTTLS.
	ImplicitTLS bool
	// Username and Password, when Username is set, offer AUTH PLAIN and require it
	// before MAIL (only over TLS when STARTTLS or ImplicitTLS is on).
	Username, Password string
	// MaxMessageBytes bounds one message; 0 means 1 MiB. Larger ones get 552.
	MaxMessageBytes int64
	// MaxMessages and MaxBytes bound what is kept in memory; 0 means 10,000
	// messages and 256 MiB. When either is reached the sink answers 452.
	MaxMessages int
	MaxBytes    int64
	// Hold, when set, is called inside DATA once the whole message has arrived,
	// before it is kept and before the client gets its answer. ctx ends when the
	// sink closes; m has no Seq, File or Received yet. A nil error keeps the
	// message; an error refuses it (a *Refusal with its code, any other error with
	// 451) and nothing is kept.
	Hold func(ctx context.Context, m Message) error
	// CheckRcpt, when set, is asked about each RCPT TO address; an error refuses
	// that recipient (a *Refusal with its code, any other error with 451).
	CheckRcpt func(to string) error
	// Logger receives the server's internal errors; nil discards them.
	Logger *slog.Logger
}

// Message is one message the sink accepted.
type Message struct {
	// Seq numbers the messages of this Sink: 1, 2, …
	Seq int
	// From and To are the envelope: MAIL FROM and every RCPT TO, without brackets.
	From string
	To   []string
	// Data is the message as received (after dot-unstuffing). Do not modify it.
	Data []byte
	// File is the .eml file it was written to; "" when the sink has no directory.
	File string
	// TLS reports whether the connection was encrypted (STARTTLS or implicit).
	TLS bool
	// User is the AUTH user of the connection; "" without AUTH.
	User string
	// Conn numbers the connection that carried it (1, 2, … in accept order): the
	// same number for two messages means the client reused its connection.
	Conn int
	// Received is when the sink kept it.
	Received time.Time
}

// A Refusal returned by Options.Hold or Options.CheckRcpt makes the sink answer
// with Code (400 to 599; others become 451) and Message.
type Refusal struct {
	Code    int
	Message string
}

func (r *Refusal) Error() string { return strconv.Itoa(r.Code) + " " + r.Message }

// Bounds.
const (
	defaultMaxMessageBytes = 1 << 20
	defaultMaxMessages     = 10000
	defaultMaxBytes        = 256 << 20
	maxRecipients          = 100
	maxConns               = 100
)

// Sink is a running SMTP server. Close it when done.
type Sink struct {
	opts   Options
	logger *slog.Logger
	dir    string
	server *smtp.Server
	ln     *listener
	pool   *x509.CertPool
	ctx    context.Context
	cancel context.CancelFunc
	served chan struct{}

	mu       sync.Mutex
	msgs     []Message
	bytes    int64
	nextFile int
	changed  chan struct{} // closed and replaced whenever a message is kept
	closed   bool
}

// Start listens on addr (a loopback address such as "127.0.0.1:0"; port 0 picks
// a free port, see Addr) and serves until Close. dir, when not empty, is created
// (mode 0700) and receives one .eml file per message; numbering continues after
// the files already there.
func Start(addr, dir string, opts Options) (*Sink, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("sink: address %q: %w", addr, err)
	}
	if !isLoopback(host) {
		return nil, fmt.Errorf("sink: refusing to listen on %q: the sink has no access control and listens only on loopback (127.0.0.1, ::1, localhost)", addr)
	}
	if opts.STARTTLS && opts.ImplicitTLS {
		return nil, errors.New("sink: STARTTLS and ImplicitTLS exclude each other")
	}
	if opts.Password != "" && opts.Username == "" {
		return nil, errors.New("sink: a Password is set but no Username")
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = defaultMaxMessageBytes
	}
	if opts.MaxMessages <= 0 {
		opts.MaxMessages = defaultMaxMessages
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = defaultMaxBytes
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}

	s := &Sink{opts: opts, logger: logger, dir: dir, changed: make(chan struct{}), served: make(chan struct{}), nextFile: 1}
	if dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("sink: couldn't create the message directory: %w", err)
		}
		if s.nextFile, err = nextFileNumber(dir); err != nil {
			return nil, err
		}
	}

	var tlsConfig *tls.Config
	if opts.STARTTLS || opts.ImplicitTLS {
		cert, pool, err := selfSigned(time.Now())
		if err != nil {
			return nil, err
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		s.pool = pool
	}

	server := smtp.NewServer(s)
	server.Domain = "localhost"
	server.MaxMessageBytes = opts.MaxMessageBytes
	server.MaxRecipients = maxRecipients
	server.ReadTimeout = 5 * time.Minute
	server.WriteTimeout = time.Minute
	server.ErrorLog = errorLog{logger}
	if opts.STARTTLS {
		server.TLSConfig = tlsConfig
	}
	// Without TLS, AUTH goes in the clear, which on loopback never leaves the
	// machine; with TLS it is offered only after the handshake.
	server.AllowInsecureAuth = !opts.STARTTLS && !opts.ImplicitTLS
	s.server = server

	tcp, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("sink: %w", err)
	}
	s.ln = &listener{Listener: tcp, conns: map[*trackedConn]struct{}{}}
	var ln net.Listener = s.ln
	if opts.ImplicitTLS {
		ln = tls.NewListener(ln, tlsConfig)
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	go func() {
		defer close(s.served)
		if err := server.Serve(ln); err != nil {
			logger.Warn("sink: serve ended", "err", err)
		}
	}()
	return s, nil
}

// nextFileNumber returns one more than the highest NNNNNN.eml in dir.
func nextFileNumber(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("sink: couldn't read the message directory: %w", err)
	}
	next := 1
	for _, e := range entries {
		stem, ok := strings.CutSuffix(e.Name(), ".eml")
		if !ok || len(stem) < 6 {
			continue
		}
		if n, err := strconv.Atoi(stem); err == nil && n >= next {
			next = n + 1
		}
	}
	return next, nil
}

// Addr is the address the sink listens on, "127.0.0.1:PORT".
func (s *Sink) Addr() string { return s.ln.Addr().String() }

// Host is the IP address the sink listens on.
func (s *Sink) Host() string { return s.ln.Addr().(*net.TCPAddr).IP.String() }

// Port is the port the sink listens on.
func (s *Sink) Port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// Dir is the directory messages are written to; "" when memory only.
func (s *Sink) Dir() string { return s.dir }

// CertPool holds the sink's self-signed certificate, for a client's RootCAs; nil
// without TLS.
func (s *Sink) CertPool() *x509.CertPool { return s.pool }

// Messages returns the messages accepted so far, in order.
func (s *Sink) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.msgs)
}

// Wait returns the messages once at least n have been accepted, or an error when
// ctx ends or the sink closes first.
func (s *Sink) Wait(ctx context.Context, n int) ([]Message, error) {
	for {
		s.mu.Lock()
		got, ch, closed := len(s.msgs), s.changed, s.closed
		if got >= n {
			out := slices.Clone(s.msgs)
			s.mu.Unlock()
			return out, nil
		}
		s.mu.Unlock()
		if closed {
			return nil, fmt.Errorf("sink: closed with %d of %d messages", got, n)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, fmt.Errorf("sink: %d of %d messages arrived: %w", got, n, ctx.Err())
		}
	}
}

// CloseConnections closes every open client connection and keeps listening, as a
// server does when it drops idle connections.
func (s *Sink) CloseConnections() {
	s.ln.closeAll()
}

// Close stops the server: it ends Hold's context, closes the listener and every
// connection, and waits for the server to stop. Kept messages stay readable.
func (s *Sink) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	s.cancel()
	err := s.server.Close()
	// Serve may not have registered the listener with the server yet; closing
	// it here too makes sure Serve returns.
	s.ln.Close()
	<-s.served
	return err
}

// keep stores m in memory and, with a directory, as the next .eml file.
func (s *Sink) keep(m Message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return &smtp.SMTPError{Code: 421, EnhancedCode: smtp.EnhancedCode{4, 3, 2}, Message: "sink closing"}
	}
	if len(s.msgs) >= s.opts.MaxMessages || s.bytes+int64(len(m.Data)) > s.opts.MaxBytes {
		return &smtp.SMTPError{Code: 452, EnhancedCode: smtp.EnhancedCode{4, 3, 1}, Message: "sink full: it keeps at most " + strconv.Itoa(s.opts.MaxMessages) + " messages"}
	}
	if s.dir != "" {
		name := filepath.Join(s.dir, fmt.Sprintf("%06d.eml", s.nextFile))
		if err := writeFile(name, m.Data); err != nil {
			s.logger.Warn("sink: couldn't write a message", "file", name, "err", err)
			return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "couldn't store the message"}
		}
		s.nextFile++
		m.File = name
	}
	m.Seq = len(s.msgs) + 1
	m.Received = time.Now()
	s.msgs = append(s.msgs, m)
	s.bytes += int64(len(m.Data))
	close(s.changed)
	s.changed = make(chan struct{})
	return nil
}

// writeFile writes data to name (mode 0600) through a temporary file and a
// rename, so a reader never sees half a message.
func writeFile(name string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(name), ".incoming-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// NewSession implements smtp.Backend.
func (s *Sink) NewSession(c *smtp.Conn) (smtp.Session, error) {
	return &session{s: s, c: c}, nil
}

// session is one SMTP session; go-smtp makes a new one after STARTTLS.
type session struct {
	s    *Sink
	c    *smtp.Conn
	user string
	from string
	to   []string
}

func (ss *session) AuthMechanisms() []string {
	if ss.s.opts.Username == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (ss *session) Auth(mech string) (sasl.Server, error) {
	if ss.s.opts.Username == "" || mech != sasl.Plain {
		return nil, smtp.ErrAuthUnknownMechanism
	}
	return sasl.NewPlainServer(func(identity, username, password string) error {
		u := subtle.ConstantTimeCompare([]byte(username), []byte(ss.s.opts.Username))
		p := subtle.ConstantTimeCompare([]byte(password), []byte(ss.s.opts.Password))
		if u&p != 1 || (identity != "" && identity != username) {
			return smtp.ErrAuthFailed
		}
		ss.user = username
		return nil
	}), nil
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	if ss.s.opts.Username != "" && ss.user == "" {
		return &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "Authentication required"}
	}
	ss.from, ss.to = from, nil
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if check := ss.s.opts.CheckRcpt; check != nil {
		if err := check(to); err != nil {
			return smtpError(err)
		}
	}
	ss.to = append(ss.to, to)
	return nil
}

func (ss *session) Data(r io.Reader) error {
	// go-smtp limits r to MaxMessageBytes (then 552) and reports a connection
	// that ends before the final "." as an error: then nothing is kept.
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	_, isTLS := ss.c.TLSConnectionState()
	m := Message{
		From: ss.from,
		To:   slices.Clone(ss.to),
		Data: data,
		TLS:  isTLS,
		User: ss.user,
		Conn: connNumber(ss.c.Conn()),
	}
	if hold := ss.s.opts.Hold; hold != nil {
		if err := hold(ss.s.ctx, m); err != nil {
			return smtpError(err)
		}
	}
	return ss.s.keep(m)
}

func (ss *session) Reset() { ss.from, ss.to = "", nil }

func (ss *session) Logout() error { return nil }

// smtpError turns a hook's error into the SMTP reply.
func smtpError(err error) error {
	var r *Refusal
	if errors.As(err, &r) && r.Code >= 400 && r.Code <= 599 {
		return &smtp.SMTPError{Code: r.Code, EnhancedCode: smtp.EnhancedCodeNotSet, Message: oneLine(r.Message)}
	}
	return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: oneLine(err.Error())}
}

func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// isLoopback reports whether host is "localhost" or a loopback IP literal.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Zone() == "" && a.Unmap().IsLoopback()
}

// listener numbers and tracks accepted connections, and turns away connections
// beyond maxConns.
type listener struct {
	net.Listener
	mu    sync.Mutex
	seq   int
	conns map[*trackedConn]struct{}
}

func (l *listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		if len(l.conns) >= maxConns {
			l.mu.Unlock()
			c.Close()
			continue
		}
		l.seq++
		tc := &trackedConn{Conn: c, l: l, seq: l.seq}
		l.conns[tc] = struct{}{}
		l.mu.Unlock()
		return tc, nil
	}
}

func (l *listener) closeAll() {
	l.mu.Lock()
	conns := make([]*trackedConn, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	l.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

type trackedConn struct {
	net.Conn
	l    *listener
	seq  int
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

// connNumber finds the accept number of a session's connection, under any TLS.
func connNumber(c net.Conn) int {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if t, ok := c.(*trackedConn); ok {
		return t.seq
	}
	return 0
}

// selfSigned makes an ECDSA P-256 certificate for 127.0.0.1, ::1 and localhost,
// valid for a year, and a pool that trusts it.
func selfSigned(now time.Time) (tls.Certificate, *x509.CertPool, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("sink: couldn't generate a TLS key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("sink: couldn't generate a serial number: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "probity mail sink"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("sink: couldn't create the TLS certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("sink: couldn't parse the TLS certificate: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}, pool, nil
}

// errorLog adapts a slog.Logger to go-smtp's Logger.
type errorLog struct{ l *slog.Logger }

func (e errorLog) Printf(format string, v ...any) { e.l.Warn("sink: " + fmt.Sprintf(format, v...)) }

func (e errorLog) Println(v ...any) {
	e.l.Warn("sink: " + strings.TrimSuffix(fmt.Sprintln(v...), "\n"))
}
