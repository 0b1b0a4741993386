package web

import (
	"sync"
	"time"
)

// limiter keeps a token bucket per client, at most cfg.MaxClients of them.
type limiter struct {
	cfg RateLimit
	now func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newLimiter(cfg RateLimit, now func() time.Time) *limiter {
	return &limiter{cfg: cfg, now: now, buckets: make(map[string]*bucket)}
}

// allow takes a token from client's bucket. When there is none it returns false and
// how long until there is one.
func (l *limiter) allow(client string) (bool, time.Duration) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[client]
	if !ok {
		if len(l.buckets) >= l.cfg.MaxClients {
			l.evict(now)
		}
		b = &bucket{tokens: float64(l.cfg.Burst), last: now}
		l.buckets[client] = b
	}
	if elapsed := now.Sub(b.last); elapsed > 0 {
		b.tokens = min(float64(l.cfg.Burst), b.tokens+elapsed.Seconds()*l.cfg.PerSecond)
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	wait := time.Duration((1 - b.tokens) / l.cfg.PerSecond * float64(time.Second))
	return false, max(wait, time.Millisecond)
}

// evict makes room for a new client: it drops every bucket that has refilled (its
// client has been idle long enough to be indistinguishable from a new one) and, when
// none has, an arbitrary tenth of the buckets (map order is random), so a flood of new
// addresses costs bounded memory and bounded work per eviction.
func (l *limiter) evict(now time.Time) {
	full := time.Duration(float64(l.cfg.Burst) / l.cfg.PerSecond * float64(time.Second))
	for k, b := range l.buckets {
		if now.Sub(b.last) >= full {
			delete(l.buckets, k)
		}
	}
	if len(l.buckets) < l.cfg.MaxClients {
		return
	}
	n := max(1, l.cfg.MaxClients/10)
	for k := range l.buckets {
		if n == 0 {
			break
		}
		delete(l.buckets, k)
		n--
	}
}
