package mail_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net"
	netmail "net/mail"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/probity-dev/probity/mail"
	"github.com/probity-dev/probity/mail/sink"
)

const (
	testUser = "probity"
	testPass = "correct horse battery staple"
)

var fixedNow = func() time.Time { return time.Date(2026, 12, 2, 6, 30, 0, 0, time.UTC) }

func startSink(t testing.TB, opts sink.Options) *sink.Sink {
	t.Helper()
	s, err := sink.Start("127.0.0.1:0", t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// secureSink is the usual test server: STARTTLS and AUTH PLAIN required.
func secureSink(t testing.TB, mut func(*sink.Options)) *sink.Sink {
	opts := sink.Options{STARTTLS: true, Username: testUser, Password: testPass}
	if mut != nil {
		mut(&opts)
	}
	return startSink(t, opts)
}

func config(sk *sink.Sink) mail.Config {
	return mail.Config{
		Host: sk.Host(), Port: sk.Port(), Username: testUser, Password: testPass,
		From: "Probity <notify@probity.example>", Security: "starttls", HeloName: "probity.example",
		RootCAs: sk.CertPool(), Timeout: 5 * time.Second, Now: fixedNow,
	}
}

func newSender(t testing.TB, cfg mail.Config) *mail.Sender {
	t.Helper()
	s, err := mail.NewSender(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func sample() mail.Message {
	return mail.Message{
		To:              "Ada Lovelace <ada@example.org>",
		Subject:         "filesystem-server changed — 2 tools added, 1 removed",
		Text:            "filesystem-server changed: 2 tools added, 1 removed.\n\nSee the change: https://probity.example/s/filesystem-server/history#ch-7\n",
		HTML:            "<p>filesystem-server changed: 2 tools added, 1 removed.</p>\n<p><a href=\"https://probity.example/s/filesystem-server/history#ch-7\">See the change</a></p>\n",
		MessageID:       "outbox-42.7f3a@probity.example",
		ListID:          "Probity changes <changes.probity.example>",
		ListUnsubscribe: "https://probity.example/unsubscribe/tok123",
		OneClick:        true,
		Date:            time.Date(2026, 12, 2, 6, 29, 0, 0, time.UTC),
		Headers:         map[string]string{"X-Probity-Entries": "1"},
	}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// waitFor returns the sink's messages once n have arrived.
func waitFor(t testing.TB, sk *sink.Sink, n int) []sink.Message {
	t.Helper()
	msgs, err := sk.Wait(ctxT(t), n)
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

func crlfToLF(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

// TestSendOverSTARTTLSWithAuth sends one message through a real SMTP server over
// STARTTLS with AUTH and checks the received MIME message field by field and part
// by part.
func TestSendOverSTARTTLSWithAuth(t *testing.T) {
	sk := secureSink(t, nil)
	s := newSender(t, config(sk))
	want := sample()
	if err := s.Send(ctxT(t), want); err != nil {
		t.Fatal(err)
	}
	msgs, err := sk.Wait(ctxT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	m := msgs[0]
	if m.From != "notify@probity.example" || len(m.To) != 1 || m.To[0] != "ada@example.org" {
		t.Errorf("envelope = %q → %q, want notify@probity.example → [ada@example.org]", m.From, m.To)
	}
	if !m.TLS || m.User != testUser {
		t.Errorf("TLS = %v, AUTH user = %q; want STARTTLS and AUTH as %q", m.TLS, m.User, testUser)
	}
	file, err := os.ReadFile(m.File)
	if err != nil || !bytes.Equal(file, m.Data) {
		t.Errorf("the .eml file %q differs from the message (err %v)", m.File, err)
	}
	if n, crlf := bytes.Count(m.Data, []byte("\n")), bytes.Count(m.Data, []byte("\r\n")); n != crlf {
		t.Errorf("%d line feeds but %d CRLF: every line must end in CRLF", n, crlf)
	}

	msg, err := netmail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		t.Fatal(err)
	}
	h := msg.Header
	dec := new(mime.WordDecoder)
	subject, err := dec.DecodeHeader(h.Get("Subject"))
	if err != nil || subject != want.Subject {
		t.Errorf("Subject = %q (%v), want %q", subject, err, want.Subject)
	}
	from, err := netmail.ParseAddress(h.Get("From"))
	if err != nil || from.Address != "notify@probity.example" || from.Name != "Probity" {
		t.Errorf("From = %q (%v)", h.Get("From"), err)
	}
	to, err := netmail.ParseAddress(h.Get("To"))
	if err != nil || to.Address != "ada@example.org" || to.Name != "Ada Lovelace" {
		t.Errorf("To = %q (%v)", h.Get("To"), err)
	}
	if d, err := h.Date(); err != nil || !d.Equal(want.Date) {
		t.Errorf("Date = %q (%v), want %v", h.Get("Date"), err, want.Date)
	}
	for field, v := range map[string]string{
		"Message-Id":            "<outbox-42.7f3a@probity.example>",
		"List-Id":               "Probity changes <changes.probity.example>",
		"List-Unsubscribe":      "<https://probity.example/unsubscribe/tok123>",
		"List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
		"Auto-Submitted":        "auto-generated",
		"Mime-Version":          "1.0",
		"X-Probity-Entries":     "1",
		"User-Agent":            "",
		"X-Mailer":              "",
		"Bcc":                   "",
	} {
		if got := h.Get(field); got != v {
			t.Errorf("%s = %q, want %q", field, got, v)
		}
		if len(h[field]) > 1 {
			t.Errorf("%s appears %d times", field, len(h[field]))
		}
	}

	mt, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil || mt != "multipart/alternative" {
		t.Fatalf("Content-Type = %q (%v), want multipart/alternative", h.Get("Content-Type"), err)
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for i, wantPart := range []struct{ typ, body string }{{"text/plain", want.Text}, {"text/html", want.HTML}} {
		p, err := mr.NextPart()
		if err != nil {
			t.Fatalf("part %d: %v", i+1, err)
		}
		pt, pp, err := mime.ParseMediaType(p.Header.Get("Content-Type"))
		if err != nil || pt != wantPart.typ || !strings.EqualFold(pp["charset"], "utf-8") {
			t.Errorf("part %d Content-Type = %q (%v), want %s; charset=UTF-8", i+1, p.Header.Get("Content-Type"), err, wantPart.typ)
		}
		body, err := io.ReadAll(p) // multipart decodes quoted-printable
		if err != nil {
			t.Fatal(err)
		}
		if got := crlfToLF(string(body)); got != wantPart.body {
			t.Errorf("part %d body = %q, want %q", i+1, got, wantPart.body)
		}
	}
	if _, err := mr.NextPart(); err != io.EOF {
		t.Errorf("a third part (or %v), want exactly text and HTML", err)
	}
}

// TestTextOnly: without HTML the message is a single text/plain part, and an empty
// MessageID and Date are generated (random id on the From domain, the clock).
func TestTextOnly(t *testing.T) {
	sk := secureSink(t, nil)
	s := newSender(t, config(sk))
	m := sample()
	m.HTML, m.MessageID, m.Date, m.ListID, m.ListUnsubscribe, m.OneClick = "", "", time.Time{}, "", "", false
	if err := s.Send(ctxT(t), m); err != nil {
		t.Fatal(err)
	}
	msgs := waitFor(t, sk, 1)
	msg, err := netmail.ReadMessage(bytes.NewReader(msgs[0].Data))
	if err != nil {
		t.Fatal(err)
	}
	if mt, _, _ := mime.ParseMediaType(msg.Header.Get("Content-Type")); mt != "text/plain" {
		t.Errorf("Content-Type = %q, want text/plain", msg.Header.Get("Content-Type"))
	}
	if id := msg.Header.Get("Message-Id"); !strings.HasPrefix(id, "<") || !strings.HasSuffix(id, "@probity.example>") || len(id) < 30 {
		t.Errorf("generated Message-ID = %q, want <random@probity.example>", id)
	}
	if d, err := msg.Header.Date(); err != nil || !d.Equal(fixedNow()) {
		t.Errorf("Date = %q, want the sender's clock %v", msg.Header.Get("Date"), fixedNow())
	}
	for _, f := range []string{"List-Id", "List-Unsubscribe", "List-Unsubscribe-Post"} {
		if v := msg.Header.Get(f); v != "" {
			t.Errorf("%s = %q, want none", f, v)
		}
	}
}

// TestConnectionReuse: consecutive messages share one connection; a connection
// the server dropped while idle is replaced without losing the message.
func TestConnectionReuse(t *testing.T) {
	sk := secureSink(t, nil)
	s := newSender(t, config(sk))
	ctx := ctxT(t)
	for range 5 {
		if err := s.Send(ctx, sample()); err != nil {
			t.Fatal(err)
		}
	}
	sk.CloseConnections() // as a server does with idle connections
	if err := s.Send(ctx, sample()); err != nil {
		t.Fatalf("send after the server dropped the idle connection: %v", err)
	}
	msgs, err := sk.Wait(ctx, 6)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs[:5] {
		if m.Conn != msgs[0].Conn {
			t.Errorf("message %d came on connection %d, message 1 on %d: want one reused connection", m.Seq, m.Conn, msgs[0].Conn)
		}
	}
	if msgs[5].Conn == msgs[0].Conn {
		t.Errorf("message 6 came on the dropped connection %d", msgs[5].Conn)
	}
}

// TestConcurrentSends: many goroutines share a Sender with MaxConns 2; every
// message arrives once, on at most 2 connections at a time.
func TestConcurrentSends(t *testing.T) {
	sk := secureSink(t, nil)
	cfg := config(sk)
	cfg.MaxConns = 2
	s := newSender(t, cfg)
	ctx := ctxT(t)
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				m := sample()
				m.MessageID = "c" + string(rune('a'+g)) + string(rune('a'+i)) + "@probity.example"
				errs <- s.Send(ctx, m)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	msgs, err := sk.Wait(ctx, 40)
	if err != nil {
		t.Fatal(err)
	}
	ids, conns := map[string]bool{}, map[int]bool{}
	for _, m := range msgs {
		msg, err := netmail.ReadMessage(bytes.NewReader(m.Data))
		if err != nil {
			t.Fatal(err)
		}
		ids[msg.Header.Get("Message-Id")] = true
		conns[m.Conn] = true
	}
	if len(msgs) != 40 || len(ids) != 40 {
		t.Errorf("%d messages with %d distinct ids, want 40 and 40", len(msgs), len(ids))
	}
	if len(conns) > 2 {
		t.Errorf("%d connections used, want at most MaxConns = 2", len(conns))
	}
}

// TestRefusals: a 5xx reply to RCPT or to the message matches ErrPermanent, a 4xx
// does not; either way the connection stays usable for the next message.
func TestRefusals(t *testing.T) {
	for _, tc := range []struct {
		name      string
		rcpt      *sink.Refusal
		data      *sink.Refusal
		permanent bool
	}{
		{"550 to RCPT", &sink.Refusal{Code: 550, Message: "5.1.1 no such user"}, nil, true},
		{"550 naming the recipient", &sink.Refusal{Code: 550, Message: "5.1.1 <" + sample().To + ">: no such user"}, nil, true},
		{"553 to RCPT", &sink.Refusal{Code: 553, Message: "5.1.3 bad address"}, nil, true},
		{"450 to RCPT", &sink.Refusal{Code: 450, Message: "4.2.1 mailbox busy"}, nil, false},
		{"554 to the message", nil, &sink.Refusal{Code: 554, Message: "5.7.1 content rejected"}, true},
		{"552 to the message", nil, &sink.Refusal{Code: 552, Message: "5.3.4 too big"}, true},
		{"451 to the message", nil, &sink.Refusal{Code: 451, Message: "4.3.0 try again later"}, false},
		{"421 to the message", nil, &sink.Refusal{Code: 421, Message: "4.3.2 shutting down"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var refuse sync.Once
			refused := func(r *sink.Refusal) (err error) {
				refuse.Do(func() { err = r })
				return err
			}
			sk := secureSink(t, func(o *sink.Options) {
				if tc.rcpt != nil {
					o.CheckRcpt = func(string) error { return refused(tc.rcpt) }
				}
				if tc.data != nil {
					o.Hold = func(context.Context, sink.Message) error { return refused(tc.data) }
				}
			})
			s := newSender(t, config(sk))
			err := s.Send(ctxT(t), sample())
			if err == nil {
				t.Fatal("sent, want a refusal")
			}
			if got := errors.Is(err, mail.ErrPermanent); got != tc.permanent {
				t.Errorf("errors.Is(%v, ErrPermanent) = %v, want %v", err, got, tc.permanent)
			}
			if strings.Contains(strings.ToLower(err.Error()), strings.ToLower(sample().To)) {
				t.Errorf("the error names the recipient's address (errors are logged): %v", err)
			}
			if len(sk.Messages()) != 0 {
				t.Error("the sink kept a refused message")
			}
			if err := s.Send(ctxT(t), sample()); err != nil {
				t.Fatalf("the next message: %v", err)
			}
		})
	}
}

// TestTransportFailuresAreTemporary: no server, a server without STARTTLS, an
// untrusted certificate, a wrong password: all errors, none permanent, nothing
// sent, and the password never appears in an error.
func TestTransportFailuresAreTemporary(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadPort := closed.Addr().(*net.TCPAddr).Port
	closed.Close()

	plain := startSink(t, sink.Options{})
	secure := secureSink(t, nil)
	for _, tc := range []struct {
		name string
		sk   *sink.Sink
		mut  func(*mail.Config)
		want string
	}{
		{"no server", plain, func(c *mail.Config) { c.Port = deadPort }, "connect"},
		{"server without STARTTLS", plain, nil, "STARTTLS"},
		{"untrusted certificate", secure, func(c *mail.Config) { c.RootCAs = nil }, "certificate"},
		{"wrong password", secure, func(c *mail.Config) { c.Password = "hunter2-wrong" }, "AUTH"},
		{"AUTH not offered", startSink(t, sink.Options{STARTTLS: true}), nil, "no AUTH"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config(tc.sk)
			cfg.Port = tc.sk.Port()
			cfg.RootCAs = tc.sk.CertPool()
			if tc.mut != nil {
				tc.mut(&cfg)
			}
			s := newSender(t, cfg)
			err := s.Send(ctxT(t), sample())
			if err == nil {
				t.Fatal("sent, want an error")
			}
			if errors.Is(err, mail.ErrPermanent) {
				t.Errorf("%v matches ErrPermanent; a transport failure is temporary", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
			if strings.Contains(err.Error(), cfg.Password) {
				t.Errorf("error %q contains the password", err)
			}
			if len(tc.sk.Messages()) != 0 {
				t.Error("a message arrived")
			}
		})
	}
}

// TestHeaderInjectionRefused: CR or LF (or another control character) in any value
// that reaches the header is refused before connecting, as a permanent error.
func TestHeaderInjectionRefused(t *testing.T) {
	sk := secureSink(t, nil)
	s := newSender(t, config(sk))
	for _, tc := range []struct {
		name string
		mut  func(*mail.Message)
	}{
		{"Subject CRLF", func(m *mail.Message) { m.Subject = "Hi\r\nBcc: victim@example.org" }},
		{"Subject LF", func(m *mail.Message) { m.Subject = "Hi\nBcc: victim@example.org" }},
		{"Subject CR", func(m *mail.Message) { m.Subject = "Hi\rBcc: victim@example.org" }},
		{"Subject NUL", func(m *mail.Message) { m.Subject = "Hi\x00" }},
		{"Subject too long", func(m *mail.Message) { m.Subject = strings.Repeat("a", 901) }},
		{"To CRLF", func(m *mail.Message) { m.To = "ada@example.org\r\nBcc: victim@example.org" }},
		{"To name CRLF", func(m *mail.Message) { m.To = "\"Ada\r\nBcc: victim@example.org\" <ada@example.org>" }},
		{"To SMTP command", func(m *mail.Message) { m.To = "<ada@example.org>\r\nRCPT TO:<victim@example.org>" }},
		{"To quoted local part", func(m *mail.Message) { m.To = "\"a>b\"@example.org" }},
		{"List-Id LF", func(m *mail.Message) { m.ListID = "x <a.example>\nBcc: victim@example.org" }},
		{"List-Unsubscribe CRLF", func(m *mail.Message) {
			m.ListUnsubscribe = "https://probity.example/u\r\nBcc: victim@example.org"
		}},
		{"List-Unsubscribe bracket", func(m *mail.Message) {
			m.ListUnsubscribe = "https://probity.example/u>, <mailto:victim@example.org"
		}},
		{"List-Unsubscribe http", func(m *mail.Message) { m.ListUnsubscribe = "http://probity.example/u" }},
		{"Message-ID CRLF", func(m *mail.Message) { m.MessageID = "a@b.example\r\nBcc: victim@example.org" }},
		{"Message-ID bracket", func(m *mail.Message) { m.MessageID = "a>@b.example" }},
		{"header value CRLF", func(m *mail.Message) { m.Headers = map[string]string{"X-A": "v\r\nBcc: victim@example.org"} }},
		{"header name CRLF", func(m *mail.Message) { m.Headers = map[string]string{"X-A\r\nBcc": "victim@example.org"} }},
		{"header name colon", func(m *mail.Message) { m.Headers = map[string]string{"Bcc: victim@example.org\r\nX-A": "v"} }},
		{"header Bcc", func(m *mail.Message) { m.Headers = map[string]string{"Bcc": "victim@example.org"} }},
		{"header From", func(m *mail.Message) { m.Headers = map[string]string{"from": "evil@example.org"} }},
		{"header Content-Type", func(m *mail.Message) { m.Headers = map[string]string{"Content-Type": "text/html"} }},
		{"OneClick without URL", func(m *mail.Message) { m.ListUnsubscribe = "" }},
		{"empty text", func(m *mail.Message) { m.Text = "" }},
		{"text not UTF-8", func(m *mail.Message) { m.Text = "\xff" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := sample()
			tc.mut(&m)
			err := s.Send(ctxT(t), m)
			if err == nil {
				t.Fatal("sent, want a refusal")
			}
			if !errors.Is(err, mail.ErrPermanent) {
				t.Errorf("%v does not match ErrPermanent", err)
			}
		})
	}
	// Nothing was sent and no connection was made: the first real message comes
	// on connection 1.
	if err := s.Send(ctxT(t), sample()); err != nil {
		t.Fatal(err)
	}
	msgs := waitFor(t, sk, 1)
	if len(msgs) != 1 || msgs[0].Conn != 1 {
		t.Errorf("%d messages, the first on connection %d; want 1 on connection 1", len(msgs), msgs[0].Conn)
	}
}

// TestSecurityNone: "none" is refused to any host that is not loopback, and works
// (with AUTH, unencrypted) to loopback.
func TestSecurityNone(t *testing.T) {
	for _, host := range []string{"mail.example.org", "192.0.2.25", "10.0.0.1", "::ffff:10.0.0.1", "0.0.0.0", "localhost.example.org"} {
		_, err := mail.NewSender(mail.Config{Host: host, Security: "none", From: "notify@probity.example"})
		if err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("Security none to %q: %v, want a refusal naming loopback", host, err)
		}
	}
	for _, host := range []string{"localhost", "127.0.0.1", "127.0.0.2", "::1"} {
		if _, err := mail.NewSender(mail.Config{Host: host, Security: "none", From: "notify@probity.example"}); err != nil {
			t.Errorf("Security none to %q: %v", host, err)
		}
	}

	sk := startSink(t, sink.Options{Username: testUser, Password: testPass})
	cfg := config(sk)
	cfg.Security = "none"
	s := newSender(t, cfg)
	if err := s.Send(ctxT(t), sample()); err != nil {
		t.Fatal(err)
	}
	msgs := waitFor(t, sk, 1)
	if msgs[0].TLS || msgs[0].User != testUser {
		t.Errorf("TLS %v, user %q; want plain with AUTH", msgs[0].TLS, msgs[0].User)
	}
}

// TestImplicitTLS: Security "tls" speaks TLS from the first byte.
func TestImplicitTLS(t *testing.T) {
	sk := startSink(t, sink.Options{ImplicitTLS: true, Username: testUser, Password: testPass})
	cfg := config(sk)
	cfg.Security = "tls"
	s := newSender(t, cfg)
	if err := s.Send(ctxT(t), sample()); err != nil {
		t.Fatal(err)
	}
	msgs := waitFor(t, sk, 1)
	if !msgs[0].TLS || msgs[0].User != testUser {
		t.Errorf("TLS %v, user %q", msgs[0].TLS, msgs[0].User)
	}
}

// TestCancelledDuringData: the server holds the message after the final "."
// without answering; the sender gives up when its context ends (temporary error).
// If the server then drops the message (as the kill -9 test's sink does), nothing
// is kept, and the next attempt delivers it once.
func TestCancelledDuringData(t *testing.T) {
	release := make(chan error)
	held := make(chan struct{}, 1)
	var first sync.Once
	sk := secureSink(t, func(o *sink.Options) {
		o.Hold = func(ctx context.Context, _ sink.Message) error {
			var err error
			first.Do(func() {
				held <- struct{}{}
				select {
				case err = <-release:
				case <-ctx.Done():
					err = ctx.Err()
				}
			})
			return err
		}
	})
	s := newSender(t, config(sk))
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	err := s.Send(ctx, sample())
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, mail.ErrPermanent) {
		t.Fatalf("Send = %v, want a temporary context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("Send took %v to give up", d)
	}
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the message never reached DATA")
	}
	release <- errors.New("the client went away")
	if err := s.Send(ctxT(t), sample()); err != nil {
		t.Fatal(err)
	}
	msgs := waitFor(t, sk, 1)
	time.Sleep(50 * time.Millisecond)
	if n := len(sk.Messages()); n != 1 || msgs[0].Seq != 1 {
		t.Errorf("%d messages kept, want exactly 1", n)
	}
}

// TestConfigErrors: NewSender refuses configurations that cannot work, saying why.
func TestConfigErrors(t *testing.T) {
	good := mail.Config{Host: "smtp.example.org", From: "notify@probity.example"}
	if _, err := mail.NewSender(good); err != nil {
		t.Fatalf("good config: %v", err)
	}
	for _, tc := range []struct {
		name string
		mut  func(*mail.Config)
		want string
	}{
		{"no host", func(c *mail.Config) { c.Host = "" }, "Host"},
		{"host with space", func(c *mail.Config) { c.Host = "smtp example.org" }, "Host"},
		{"host CRLF", func(c *mail.Config) { c.Host = "smtp.example.org\r\n" }, "Host"},
		{"unknown security", func(c *mail.Config) { c.Security = "ssl" }, "Security"},
		{"bad port", func(c *mail.Config) { c.Port = 70000 }, "Port"},
		{"no from", func(c *mail.Config) { c.From = "" }, "From"},
		{"bad from", func(c *mail.Config) { c.From = "probity" }, "From"},
		{"from CRLF", func(c *mail.Config) { c.From = "notify@probity.example\r\nBcc: x@example.org" }, "From"},
		{"password without user", func(c *mail.Config) { c.Password = "x" }, "Username"},
		{"user NUL", func(c *mail.Config) { c.Username = "a\x00b" }, "NUL"},
		{"bad HELO", func(c *mail.Config) { c.HeloName = "bad name" }, "HeloName"},
		{"MaxConns", func(c *mail.Config) { c.MaxConns = -1 }, "MaxConns"},
		{"DKIM without key", func(c *mail.Config) {
			c.DKIM = &mail.DKIMConfig{Domain: "probity.example", Selector: "s1"}
		}, "KeyFile"},
		{"DKIM missing key file", func(c *mail.Config) {
			c.DKIM = &mail.DKIMConfig{Domain: "probity.example", Selector: "s1", KeyFile: "/nonexistent/key.pem"}
		}, "DKIM key"},
		{"DKIM other domain", func(c *mail.Config) {
			c.DKIM = &mail.DKIMConfig{Domain: "other.example", Selector: "s1", KeyFile: "/nonexistent/key.pem"}
		}, "DMARC"},
		{"DKIM bad selector", func(c *mail.Config) {
			c.DKIM = &mail.DKIMConfig{Domain: "probity.example", Selector: "a b", KeyFile: "/nonexistent/key.pem"}
		}, "Selector"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := good
			tc.mut(&cfg)
			_, err := mail.NewSender(cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewSender = %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
}

// TestClosedSender: Send after Close fails instead of reconnecting.
func TestClosedSender(t *testing.T) {
	sk := secureSink(t, nil)
	s := newSender(t, config(sk))
	if err := s.Send(ctxT(t), sample()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := s.Send(ctxT(t), sample()); err == nil || errors.Is(err, mail.ErrPermanent) {
		t.Errorf("Send after Close = %v, want a temporary error", err)
	}
}
