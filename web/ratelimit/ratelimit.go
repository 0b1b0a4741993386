// Package ratelimit is the one per-client rate limit of Probity's public endpoints: a
// token bucket (golang.org/x/time/rate) per client key, at most MaxClients of them.
// Package web limits the site with it, package web/mcpserver limits /mcp; each decides
// what a client key is and how a refusal is answered, counted and logged.
package ratelimit

import (
	"errors"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Config configures a Limiter.
type Config struct {
	// PerSecond is the rate at which a client's bucket refills, in requests a second;
	// it must be positive (math.Inf(1) lets every request through).
	PerSecond float64
	// Burst is the size of a client's bucket: the requests it may make at once, at
	// least 1.
	Burst int
	// MaxClients bounds the buckets kept, at least 1. When it is reached, a new
	// client first evicts every bucket that has refilled and, when none has, an
	// arbitrary tenth of them.
	MaxClients int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Limiter keeps a token bucket per client. The zero value is not usable; call New.
// Safe for concurrent use.
type Limiter struct {
	rate       rate.Limit
	burst      int
	maxClients int
	now        func() time.Time

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

// New returns a Limiter for cfg, or an error naming the setting that is out of range.
func New(cfg Config) (*Limiter, error) {
	switch {
	case math.IsNaN(cfg.PerSecond) || cfg.PerSecond <= 0:
		return nil, errors.New("ratelimit: the rate must be a positive number of requests a second")
	case cfg.Burst < 1:
		return nil, errors.New("ratelimit: the burst must be at least 1")
	case cfg.MaxClients < 1:
		return nil, errors.New("ratelimit: MaxClients must be at least 1")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Limiter{
		rate:       rate.Limit(cfg.PerSecond), // +Inf is rate.Inf
		burst:      cfg.Burst,
		maxClients: cfg.MaxClients,
		now:        cfg.Now,
		buckets:    make(map[string]*rate.Limiter),
	}, nil
}

// Allow takes a token from client's bucket (a new client starts with a full one). When
// there is none it takes nothing and returns false and how long until there is one, at
// least a millisecond.
func (l *Limiter) Allow(client string) (bool, time.Duration) {
	if l.rate == rate.Inf {
		return true, 0
	}
	now := l.now()
	// One lock over the lookup, the reservation and its cancellation: a refused request
	// takes no token, also when the same client sends others at the same time.
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[client]
	if !ok {
		if len(l.buckets) >= l.maxClients {
			l.evict(now)
		}
		b = rate.NewLimiter(l.rate, l.burst)
		l.buckets[client] = b
	}
	r := b.ReserveN(now, 1) // never more than the burst: always OK
	if wait := r.DelayFrom(now); wait > 0 {
		r.CancelAt(now)
		return false, max(wait, time.Millisecond)
	}
	return true, 0
}

// Clients is the number of buckets kept.
func (l *Limiter) Clients() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// evict makes room for a new client: it drops every bucket that has refilled (its
// client has been idle long enough to be indistinguishable from a new one) and, when
// that frees nothing, an arbitrary tenth of the buckets (map order is random), so a
// flood of new addresses costs bounded memory and bounded work per eviction.
func (l *Limiter) evict(now time.Time) {
	full := float64(l.burst)
	for k, b := range l.buckets {
		if b.TokensAt(now) >= full {
			delete(l.buckets, k)
		}
	}
	if len(l.buckets) < l.maxClients {
		return
	}
	n := max(1, l.maxClients/10)
	for k := range l.buckets {
		if n == 0 {
			break
		}
		delete(l.buckets, k)
		n--
	}
}
