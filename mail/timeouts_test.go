package mail_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/probity-dev/probity/mail"
	"github.com/probity-dev/probity/mail/sink"
)

// deadlineConn records, for each write, the first line written and how far ahead the
// connection's deadline was set last.
type deadlineConn struct {
	net.Conn
	mu     *sync.Mutex
	ahead  time.Duration
	writes *[]deadlineWrite
}

type deadlineWrite struct {
	line  string // the first line of the write
	last  bool   // the write ends the message ("\r\n.\r\n")
	ahead time.Duration
}

func (c *deadlineConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	c.ahead = time.Until(t)
	c.mu.Unlock()
	return c.Conn.SetDeadline(t)
}

func (c *deadlineConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	line, _, _ := strings.Cut(string(b), "\r\n")
	*c.writes = append(*c.writes, deadlineWrite{line: line, last: strings.HasSuffix(string(b), "\r\n.\r\n"), ahead: c.ahead})
	c.mu.Unlock()
	return c.Conn.Write(b)
}

// TestRFC5321Waits: the sender waits for each reply as long as RFC 5321 section
// 4.5.3.2 says: 5 minutes for EHLO (after the greeting), MAIL and RCPT, 2 for DATA, 3
// for each block of the message, and 10 for the reply to the final ".".
func TestRFC5321Waits(t *testing.T) {
	sk := startSink(t, sink.Options{})
	cfg := config(sk)
	cfg.Security, cfg.Username, cfg.Password, cfg.Timeout = "none", "", "", 0
	s := newSender(t, cfg)
	var (
		mu     sync.Mutex
		writes []deadlineWrite
	)
	mail.WrapConns(s, func(c net.Conn) net.Conn { return &deadlineConn{Conn: c, mu: &mu, writes: &writes} })
	m := sample()
	m.HTML = ""
	m.Text = strings.Repeat("A line of a long e-mail, to be written in several blocks.\n", 4000) // ~230 KiB
	if err := s.Send(ctxT(t), m); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	near := func(got, want time.Duration) bool { return got > want-30*time.Second && got <= want }
	seen := map[string]bool{}
	for _, w := range writes {
		var want time.Duration
		var what string
		switch {
		case strings.HasPrefix(w.line, "EHLO"):
			what, want = "EHLO", 5*time.Minute
		case strings.HasPrefix(w.line, "MAIL FROM"):
			what, want = "MAIL", 5*time.Minute
		case strings.HasPrefix(w.line, "RCPT TO"):
			what, want = "RCPT", 5*time.Minute
		case w.line == "DATA":
			what, want = "DATA", 2*time.Minute
		case w.last:
			what, want = "the end of the message", 10*time.Minute
		default:
			what, want = "a block of the message", 3*time.Minute
		}
		seen[what] = true
		if !near(w.ahead, want) {
			t.Errorf("%s (%.20q) was written with a deadline %v ahead, want %v", what, w.line, w.ahead.Round(time.Second), want)
		}
	}
	for _, what := range []string{"EHLO", "MAIL", "RCPT", "DATA", "a block of the message", "the end of the message"} {
		if !seen[what] {
			t.Errorf("no write of %s seen", what)
		}
	}
}

// TestSendTimeoutBoundsASend: a server that takes the message and never answers the
// final "." holds a Send no longer than SendTimeout, however long RFC 5321's wait for
// that reply; the failure is temporary and says why.
func TestSendTimeoutBoundsASend(t *testing.T) {
	sk := secureSink(t, func(o *sink.Options) {
		o.Hold = func(ctx context.Context, _ sink.Message) error {
			<-ctx.Done() // until the sink closes
			return ctx.Err()
		}
	})
	cfg := config(sk)
	cfg.Timeout, cfg.SendTimeout = 0, 500*time.Millisecond
	s := newSender(t, cfg)
	err := s.Send(ctxT(t), sample())
	if !errors.Is(err, mail.ErrSendTimeout) || errors.Is(err, mail.ErrPermanent) || !strings.Contains(err.Error(), "the end of the message") {
		t.Fatalf("Send = %v, want a temporary ErrSendTimeout at the end of the message", err)
	}
	if _, err := mail.NewSender(mail.Config{Host: "localhost", Security: "none", From: "notify@probity.example", SendTimeout: -time.Second}); err == nil {
		t.Error("a negative SendTimeout was accepted")
	}
}
