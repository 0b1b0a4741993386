package refusals

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// A flood of refusals from one client writes at most one line per minute, and every
// refusal is counted.
func TestFloodLogsOncePerMinute(t *testing.T) {
	var buf bytes.Buffer
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	l := New(slog.New(slog.NewTextHandler(&buf, nil)), clk.now)
	ctx := context.Background()

	// 10 minutes of 1,000 refusals a second from one client, plus one other client.
	const seconds, perSecond = 600, 1000
	for s := range seconds {
		for range perSecond {
			l.Refused(ctx, "203.0.113.7", "rate_limited")
			clk.t = clk.t.Add(time.Second / perSecond)
		}
		if s == 30 {
			l.Refused(ctx, "198.51.100.9", "rate_limited", slog.String("route", "/s/:slug"))
		}
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var flood, other int
	for _, ln := range lines {
		switch {
		case strings.Contains(ln, "client=203.0.113.7"):
			flood++
		case strings.Contains(ln, "client=198.51.100.9"):
			other++
			if !strings.Contains(ln, "route=/s/:slug") {
				t.Errorf("line lost its attributes: %s", ln)
			}
		}
	}
	if flood != seconds/60 {
		t.Errorf("flooding client: %d lines in %d minutes, want %d", flood, seconds/60, seconds/60)
	}
	if other != 1 {
		t.Errorf("other client: %d lines, want 1", other)
	}
	// The second line of the flood reports the refusals the first minute did not log.
	if len(lines) < 3 || !strings.Contains(lines[2], fmt.Sprintf("unlogged=%d", 60*perSecond-1)) {
		t.Errorf("second line of the flood = %q, want unlogged=%d", lines[2], 60*perSecond-1)
	}
	if got := l.Counts()["rate_limited"]; got != seconds*perSecond+1 {
		t.Errorf("counted %d refusals, want %d", got, seconds*perSecond+1)
	}
	if len(buf.Bytes()) > 4096 {
		t.Errorf("%d bytes of log for a 10-minute flood", buf.Len())
	}
}

// A clock that goes back does not silence a client for ever.
func TestClockBack(t *testing.T) {
	var buf bytes.Buffer
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	l := New(slog.New(slog.NewTextHandler(&buf, nil)), clk.now)
	l.Refused(context.Background(), "a", "rate_limited")
	clk.t = clk.t.Add(-time.Hour)
	l.Refused(context.Background(), "a", "rate_limited")
	if n := strings.Count(buf.String(), "request refused"); n != 2 {
		t.Errorf("%d lines, want 2", n)
	}
}

// An address flood keeps at most MaxClients clients and keeps counting.
func TestClientsBounded(t *testing.T) {
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	l := New(nil, clk.now)
	for i := range 3 * MaxClients {
		l.Refused(context.Background(), fmt.Sprintf("10.0.%d.%d", i/256, i%256), "rate_limited")
	}
	if n := len(l.clients); n > MaxClients {
		t.Errorf("%d clients remembered, want at most %d", n, MaxClients)
	}
	if got := l.Counts()["rate_limited"]; got != 3*MaxClients {
		t.Errorf("counted %d, want %d", got, 3*MaxClients)
	}
}
