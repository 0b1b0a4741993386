// Package refusals counts the requests a public endpoint refuses (rate limit, body or
// batch limits) and logs them without letting a flood of refusals flood the log: at
// most one line per client per Interval, which names how many refusals of that client
// went unlogged since its previous line. Every refusal is counted, by reason, for the
// metrics, whether or not it was logged.
//
// Package web uses it for its rate limit, package web/mcpserver for every refusal of
// /mcp; both expose the counts on /metrics.
package refusals

import (
	"context"
	"log/slog"
	"maps"
	"sync"
	"time"
)

// Interval is the least time between two log lines about one client.
const Interval = time.Minute

// MaxClients bounds the clients remembered. When it is reached, clients whose last line
// is older than Interval are forgotten first (their next refusal would be logged
// anyway); when none is, an arbitrary tenth is, so an address flood costs bounded
// memory, and each forgotten client can log one line early.
const MaxClients = 10000

// Log counts refusals and logs them at most once per client per Interval. The zero
// value is not usable; call New. Safe for concurrent use.
type Log struct {
	log *slog.Logger
	now func() time.Time

	mu      sync.Mutex
	clients map[string]*client
	counts  map[string]uint64
}

// client is what Log remembers of one client: when its last line was written and how
// many refusals went unlogged since.
type client struct {
	last       time.Time
	suppressed uint64
}

// New returns a Log writing to log (nil discards the lines) with the clock now (nil
// means time.Now).
func New(log *slog.Logger, now func() time.Time) *Log {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if now == nil {
		now = time.Now
	}
	return &Log{log: log, now: now, clients: make(map[string]*client), counts: make(map[string]uint64)}
}

// Refused counts one refusal of client for reason, a short fixed word such as
// "rate_limited" (it becomes a metric label: never pass request data). It writes an
// INFO line "request refused" with the client, the reason, attrs, and "unlogged", the
// refusals of this client not logged since its previous line, unless the client's
// previous line is less than Interval old.
func (l *Log) Refused(ctx context.Context, clientKey, reason string, attrs ...slog.Attr) {
	now := l.now()
	l.mu.Lock()
	l.counts[reason]++
	c, ok := l.clients[clientKey]
	if ok && now.Sub(c.last) < Interval && !now.Before(c.last) {
		c.suppressed++
		l.mu.Unlock()
		return
	}
	if !ok {
		if len(l.clients) >= MaxClients {
			l.evict(now)
		}
		c = &client{}
		l.clients[clientKey] = c
	}
	unlogged := c.suppressed
	c.last, c.suppressed = now, 0
	l.mu.Unlock()

	all := make([]slog.Attr, 0, 3+len(attrs))
	all = append(all, slog.String("client", clientKey), slog.String("reason", reason), slog.Uint64("unlogged", unlogged))
	all = append(all, attrs...)
	l.log.LogAttrs(ctx, slog.LevelInfo, "request refused", all...)
}

// evict makes room for a new client; l.mu is held.
func (l *Log) evict(now time.Time) {
	for k, c := range l.clients {
		if now.Sub(c.last) >= Interval {
			delete(l.clients, k)
		}
	}
	if len(l.clients) < MaxClients {
		return
	}
	n := MaxClients / 10
	for k := range l.clients {
		if n == 0 {
			break
		}
		delete(l.clients, k)
		n--
	}
}

// Counts returns the refusals counted so far by reason, a copy.
func (l *Log) Counts() map[string]uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.counts)
}
