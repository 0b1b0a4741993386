package sink_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net/smtp"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/mail/sink"
)

const msg = "From: a@example.org\r\nTo: b@example.org\r\nSubject: hi\r\n\r\nhello\r\n.dot line\r\n"

func start(t *testing.T, dir string, opts sink.Options) *sink.Sink {
	t.Helper()
	s, err := sink.Start("127.0.0.1:0", dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func wait(t *testing.T, s *sink.Sink, n int) []sink.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	msgs, err := s.Wait(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

func code(err error) int {
	var te *textproto.Error
	if errors.As(err, &te) {
		return te.Code
	}
	return 0
}

func TestLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", ":0", "192.0.2.1:0", "example.org:25"} {
		if s, err := sink.Start(addr, "", sink.Options{}); err == nil {
			s.Close()
			t.Errorf("Start(%q) listened; want a refusal (loopback only)", addr)
		}
	}
}

// TestKeepsMessages: messages are kept in memory and as NNNNNN.eml files (0600 in
// a 0700 directory), byte for byte as received; a new sink on the same directory
// continues the numbering.
func TestKeepsMessages(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mail")
	s := start(t, dir, sink.Options{})
	for _, to := range []string{"b@example.org", "c@example.org"} {
		if err := smtp.SendMail(s.Addr(), nil, "a@example.org", []string{to}, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	msgs := wait(t, s, 2)
	for i, m := range msgs {
		wantFile := filepath.Join(dir, []string{"000001.eml", "000002.eml"}[i])
		if m.Seq != i+1 || m.File != wantFile || m.From != "a@example.org" || m.TLS || m.User != "" {
			t.Errorf("message %d = seq %d file %q from %q TLS %v user %q", i, m.Seq, m.File, m.From, m.TLS, m.User)
		}
		if string(m.Data) != msg {
			t.Errorf("message %d = %q, want %q", i, m.Data, msg)
		}
		b, err := os.ReadFile(m.File)
		if err != nil || string(b) != msg {
			t.Errorf("file %s = %q (%v)", m.File, b, err)
		}
		if fi, err := os.Stat(m.File); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("file %s mode %v (%v), want 0600", m.File, fi.Mode(), err)
		}
	}
	if msgs[0].To[0] != "b@example.org" || msgs[1].To[0] != "c@example.org" {
		t.Errorf("recipients %q, %q", msgs[0].To, msgs[1].To)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v (%v), want 0700", fi.Mode(), err)
	}
	s.Close()

	s2 := start(t, dir, sink.Options{})
	if err := smtp.SendMail(s2.Addr(), nil, "a@example.org", []string{"b@example.org"}, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	if m := wait(t, s2, 1)[0]; m.File != filepath.Join(dir, "000003.eml") || m.Seq != 1 {
		t.Errorf("after a restart: file %q seq %d, want 000003.eml and seq 1", m.File, m.Seq)
	}
}

// TestSTARTTLSAndAuth: AUTH is offered only after STARTTLS, MAIL is refused
// before AUTH, a wrong password is refused, and the kept message records TLS and
// the user.
func TestSTARTTLSAndAuth(t *testing.T) {
	s := start(t, "", sink.Options{STARTTLS: true, Username: "u", Password: "p"})
	dial := func() *smtp.Client {
		c, err := smtp.Dial(s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if err := c.Hello("client.example"); err != nil {
			t.Fatal(err)
		}
		if ok, _ := c.Extension("AUTH"); ok {
			t.Error("AUTH offered before STARTTLS")
		}
		if ok, _ := c.Extension("STARTTLS"); !ok {
			t.Fatal("STARTTLS not offered")
		}
		if err := c.StartTLS(&tls.Config{ServerName: "127.0.0.1", RootCAs: s.CertPool()}); err != nil {
			t.Fatal(err)
		}
		if ok, mechs := c.Extension("AUTH"); !ok || mechs != "PLAIN" {
			t.Errorf("AUTH after STARTTLS = %v %q, want PLAIN", ok, mechs)
		}
		return c
	}

	c := dial()
	if err := c.Mail("a@example.org"); code(err) != 530 {
		t.Errorf("MAIL before AUTH = %v, want 530", err)
	}
	if err := c.Auth(smtp.PlainAuth("", "u", "wrong", "127.0.0.1")); code(err) != 535 {
		t.Errorf("AUTH with a wrong password = %v, want 535", err)
	}

	c = dial()
	if err := c.Auth(smtp.PlainAuth("", "u", "p", "127.0.0.1")); err != nil {
		t.Fatal(err)
	}
	if err := c.Mail("a@example.org"); err != nil {
		t.Fatal(err)
	}
	if err := c.Rcpt("b@example.org"); err != nil {
		t.Fatal(err)
	}
	w, err := c.Data()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	m := wait(t, s, 1)[0]
	if !m.TLS || m.User != "u" || m.File != "" {
		t.Errorf("TLS %v user %q file %q; want TLS, user u, memory only", m.TLS, m.User, m.File)
	}
}

// TestBounds: an oversized message gets 552 and the sink keeps at most
// MaxMessages (then 452); Wait gives up with its context.
func TestBounds(t *testing.T) {
	s := start(t, "", sink.Options{MaxMessageBytes: 1024, MaxMessages: 1})
	big := msg + strings.Repeat("0123456789abcdef\r\n", 128)
	if err := smtp.SendMail(s.Addr(), nil, "a@example.org", []string{"b@example.org"}, []byte(big)); code(err) != 552 {
		t.Errorf("oversized message: %v, want 552", err)
	}
	if err := smtp.SendMail(s.Addr(), nil, "a@example.org", []string{"b@example.org"}, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	if err := smtp.SendMail(s.Addr(), nil, "a@example.org", []string{"b@example.org"}, []byte(msg)); code(err) != 452 {
		t.Errorf("message beyond MaxMessages: %v, want 452", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := s.Wait(ctx, 2); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait for a message that never comes = %v", err)
	}
	if n := len(s.Messages()); n != 1 {
		t.Errorf("%d messages kept, want 1", n)
	}
}

// TestHooks: CheckRcpt and Hold refuse with the code of a *Refusal (451 for other
// errors); a refused message is not kept.
func TestHooks(t *testing.T) {
	s := start(t, "", sink.Options{
		CheckRcpt: func(to string) error {
			switch to {
			case "nobody@example.org":
				return &sink.Refusal{Code: 550, Message: "5.1.1 no such user"}
			case "busy@example.org":
				return errors.New("busy")
			}
			return nil
		},
		Hold: func(_ context.Context, m sink.Message) error {
			if m.To[0] == "spam@example.org" {
				return &sink.Refusal{Code: 554, Message: "5.7.1 rejected"}
			}
			return nil
		},
	})
	for to, want := range map[string]int{"nobody@example.org": 550, "busy@example.org": 451, "spam@example.org": 554} {
		if err := smtp.SendMail(s.Addr(), nil, "a@example.org", []string{to}, []byte(msg)); code(err) != want {
			t.Errorf("to %s: %v, want %d", to, err, want)
		}
	}
	if n := len(s.Messages()); n != 0 {
		t.Errorf("%d refused messages kept", n)
	}
}

// TestHoldStallsUntilClose: a Hold that blocks is released by Close through its
// context, and Wait returns once the sink is closed.
func TestHoldStallsUntilClose(t *testing.T) {
	entered := make(chan struct{})
	s, err := sink.Start("127.0.0.1:0", "", sink.Options{Hold: func(ctx context.Context, _ sink.Message) error {
		close(entered)
		<-ctx.Done()
		return ctx.Err()
	}})
	if err != nil {
		t.Fatal(err)
	}
	sent := make(chan error, 1)
	go func() {
		sent <- smtp.SendMail(s.Addr(), nil, "a@example.org", []string{"b@example.org"}, []byte(msg))
	}()
	<-entered
	waited := make(chan error, 1)
	go func() {
		_, err := s.Wait(context.Background(), 1)
		waited <- err
	}()
	if err := s.Close(); err != nil {
		t.Error(err)
	}
	if err := <-sent; err == nil {
		t.Error("the held message was accepted")
	}
	if err := <-waited; err == nil {
		t.Error("Wait returned no error after Close")
	}
	if n := len(s.Messages()); n != 0 {
		t.Errorf("%d messages kept", n)
	}
}
