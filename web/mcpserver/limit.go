package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// maxClients bounds the token buckets kept; beyond it idle buckets are evicted.
const maxClients = 10000

// guard puts the rate limit and the body limit in front of next.
//
// The client is r.RemoteAddr's address; forwarded headers (X-Forwarded-For and the
// like) are never trusted, since anyone can send them. An IPv6 client is its /64, the
// block one host usually holds, so one host cannot take a fresh bucket per address.
//
// The body is read here, at most MaxBody bytes, before next sees it: a larger body gets
// 413 whether or not it declared its length (the SDK would read any body whole).
func guard(lim *limiter, log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ok, wait := lim.allow(clientKey(r.RemoteAddr)); !ok {
			secs := max(1, int(math.Ceil(wait.Seconds())))
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			writeError(w, http.StatusTooManyRequests, "too many requests; retry after "+strconv.Itoa(secs)+" s", secs)
			return
		}
		if r.ContentLength > MaxBody {
			writeError(w, http.StatusRequestEntityTooLarge, "request body larger than 1 MiB", 0)
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
			if err != nil {
				var tooLarge *http.MaxBytesError
				if errors.As(err, &tooLarge) {
					writeError(w, http.StatusRequestEntityTooLarge, "request body larger than 1 MiB", 0)
					return
				}
				log.Debug("mcp: couldn't read request body", "err", err)
				writeError(w, http.StatusBadRequest, "couldn't read the request body", 0)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		next.ServeHTTP(w, r)
	})
}

// writeError writes a small JSON error body; retryAfter > 0 adds it in seconds.
func writeError(w http.ResponseWriter, status int, msg string, retryAfter int) {
	body := struct {
		Error      string `json:"error"`
		RetryAfter int    `json:"retry_after,omitempty"`
	}{msg, retryAfter}
	b, _ := json.Marshal(body) // a struct of a string and an int always encodes
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// clientKey is the rate-limit key of a remote address "host:port": the IPv4 address,
// or the /64 of an IPv6 address. An address that does not parse is its own key.
func clientKey(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	a = a.Unmap().WithZone("")
	if a.Is6() {
		p, _ := a.Prefix(64) // cannot fail for an IPv6 address without a zone
		return p.String()
	}
	return a.String()
}

// limiter keeps a token bucket per client, at most maxClients of them. Safe for
// concurrent use.
type limiter struct {
	rate       float64 // tokens a second
	burst      float64
	maxClients int
	now        func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newLimiter(rate float64, burst, maxClients int, now func() time.Time) *limiter {
	return &limiter{rate: rate, burst: float64(burst), maxClients: maxClients, now: now, buckets: make(map[string]*bucket)}
}

// allow takes a token from client's bucket. When there is none it returns false and how
// long until there is one.
func (l *limiter) allow(client string) (bool, time.Duration) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[client]
	if !ok {
		if len(l.buckets) >= l.maxClients {
			l.evict(now)
		}
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[client] = b
	}
	if elapsed := now.Sub(b.last); elapsed > 0 {
		b.tokens = min(l.burst, b.tokens+elapsed.Seconds()*l.rate)
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / l.rate * float64(time.Second))
}

// evict makes room for a new client: it drops every bucket that has refilled (its
// client is indistinguishable from a new one) and, when that frees nothing, an
// arbitrary tenth of the buckets (map order is random), so a flood of addresses costs
// bounded memory and bounded work per eviction.
func (l *limiter) evict(now time.Time) {
	full := time.Duration(l.burst / l.rate * float64(time.Second))
	for k, b := range l.buckets {
		if now.Sub(b.last) >= full {
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
