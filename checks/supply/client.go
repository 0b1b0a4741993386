package supply

import (
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/probity-dev/probity/checks/probe/egress"
)

// Defaults of a ClientConfig.
const (
	DefaultTimeout    = 10 * time.Second
	DefaultMaxBody    = 8 << 20
	DefaultMaxAge     = time.Hour
	DefaultMaxRetries = 2
	// MaxRetryWait is the longest a Client waits, in total, on Retry-After answers for
	// one request; a server asking for more gets a SourceFailed outcome instead.
	MaxRetryWait = 30 * time.Second
	// DefaultUserAgent identifies Probity to the services it reads.
	DefaultUserAgent = "probity-supply/1 (+https://probity.dev)"
)

// ClientConfig configures a Client. Every field has a working default, and the zero
// value is the production setting.
type ClientConfig struct {
	// AllowLoopback lets the client reach sources on 127.0.0.0/8 and ::1: tests, and
	// mirrors on the same host, with probity's --allow-loopback. Never set it for the
	// public sources. Private ranges and metadata addresses stay refused regardless.
	AllowLoopback bool
	// Resolver resolves the sources' host names for the egress guard; nil:
	// net.DefaultResolver.
	Resolver egress.Resolver
	// Transport replaces the guarded transport, for tests and benchmarks that answer
	// from fixtures without a network. The guard still checks every request's URL and
	// every redirect hop, but cannot check the addresses a replaced transport
	// connects to: never set it for real sources. Default: the egress guard's
	// transport, which checks every connection's resolved address.
	Transport http.RoundTripper
	// UserAgent is sent with every request; default DefaultUserAgent.
	UserAgent string
	// Timeout bounds one attempt of one request, reading the body included; default
	// 10 s.
	Timeout time.Duration
	// MaxBody caps a response body; a source may set its own cap. Default 8 MiB.
	MaxBody int64
	// Cache keeps responses for revalidation and for the warm cache; default a
	// MemoryCache of 4,096 entries and 64 MiB.
	Cache Cache
	// Store is the persistent level under Cache (CacheStore): a response missing or
	// stale in memory is read from it, and 200 (and 404/410) answers are kept in it,
	// so a restart revalidates instead of starting cold. Nil: memory only.
	Store CacheStore
	// Limits is Probity's own throttle per source host, applied before a request is
	// sent; nil: DefaultLimits(). A non-nil map replaces the defaults (start from
	// DefaultLimits() to keep them); a host not in it is not throttled.
	Limits map[string]HostLimit
	// MaxThrottleWait bounds how long one request waits for the throttle (its own
	// limit, or the reset of a quota a server announced as used up); a longer wait,
	// or one beyond the context's deadline, fails the request with a "throttled,
	// retry after" or "quota exhausted until" error instead. Default
	// DefaultMaxThrottleWait (30 s); negative: never wait.
	MaxThrottleWait time.Duration
	// MaxAge is how long a cached response is served without a request; older entries
	// are revalidated with If-None-Match / If-Modified-Since. Default 1 h; a negative
	// value always revalidates.
	MaxAge time.Duration
	// MaxWait bounds the total time spent waiting on Retry-After for one request;
	// default and ceiling MaxRetryWait (30 s).
	MaxWait time.Duration
	// MaxRetries is how often a request answered 429 (or 503 with Retry-After) is
	// retried; default 2, negative for none.
	MaxRetries int
	// Now is the clock for cache freshness and quota resets; default time.Now.
	Now func() time.Time
	// Logger receives one debug event per request (never headers or tokens); default
	// discards.
	Logger *slog.Logger
}

// Client is the HTTP client every source uses: a response cache with revalidation
// (in memory, over an optional persistent CacheStore), a throttle that keeps each
// source under its published quota before a 429 (HostLimit, and the quota headers
// X-RateLimit-Limit / -Remaining / -Reset), Retry-After handling, size caps and
// bounded attempts. It is safe for concurrent use.
//
// A response served from the cache, memory or store, sends nothing and takes no
// throttle token; a revalidation is a request and takes one, except where the
// source does not count a 304 (GitHub with a token: HostLimit.FreeNotModified).
//
// Every request goes through the egress guard (checks/probe/egress), as the probe's
// do: a source's base URL and each redirect hop are checked before the request is
// sent, at most 3 redirects are followed and never from https to http, and every
// connection, redirects included, is dialled only to a resolved address the guard
// allows. So a hostile mirror, a misconfigured base URL or a redirect cannot make the
// supply checks reach private networks, the host itself (without AllowLoopback) or a
// cloud metadata service.
type Client struct {
	guard       *egress.Guard
	http        *http.Client
	userAgent   string
	timeout     time.Duration
	maxBody     int64
	cache       Cache
	store       CacheStore
	throttle    *throttle
	maxThrottle time.Duration
	maxAge      time.Duration
	maxWait     time.Duration
	maxRetries  int
	now         func() time.Time
	log         *slog.Logger
	// sleep waits d or until ctx is done; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
}

// NewClient returns a Client for cfg.
func NewClient(cfg ClientConfig) *Client {
	guard := egress.New(egress.Config{AllowLoopback: cfg.AllowLoopback, Resolver: cfg.Resolver})
	transport := cfg.Transport
	if transport == nil {
		transport = guard.Transport()
	}
	c := &Client{
		guard:       guard,
		http:        &http.Client{Transport: transport, CheckRedirect: guard.CheckRedirect},
		userAgent:   cfg.UserAgent,
		timeout:     cfg.Timeout,
		maxBody:     cfg.MaxBody,
		cache:       cfg.Cache,
		store:       cfg.Store,
		maxThrottle: cfg.MaxThrottleWait,
		maxAge:      cfg.MaxAge,
		maxWait:     cfg.MaxWait,
		maxRetries:  cfg.MaxRetries,
		now:         cfg.Now,
		log:         cfg.Logger,
		sleep:       sleepCtx,
	}
	if c.userAgent == "" {
		c.userAgent = DefaultUserAgent
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.maxBody <= 0 {
		c.maxBody = DefaultMaxBody
	}
	if c.cache == nil {
		c.cache = NewMemoryCache(0, 0)
	}
	if c.maxAge == 0 {
		c.maxAge = DefaultMaxAge
	}
	if c.maxWait <= 0 || c.maxWait > MaxRetryWait {
		c.maxWait = MaxRetryWait
	}
	switch {
	case c.maxRetries == 0:
		c.maxRetries = DefaultMaxRetries
	case c.maxRetries < 0:
		c.maxRetries = 0
	}
	if c.now == nil {
		c.now = time.Now
	}
	switch {
	case c.maxThrottle == 0:
		c.maxThrottle = DefaultMaxThrottleWait
	case c.maxThrottle < 0:
		c.maxThrottle = 0
	}
	limits := cfg.Limits
	if limits == nil {
		limits = DefaultLimits()
	}
	lower := make(map[string]HostLimit, len(limits))
	for host, l := range limits {
		lower[strings.ToLower(host)] = l
	}
	c.throttle = newThrottle(lower, c.now)
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Errors of the client; sources turn them into a SourceFailed outcome with the message.
var (
	errTooLarge    = errors.New("response too large")
	errRateLimited = errors.New("rate limited")
	errQuota       = errors.New("quota exhausted")
	errMalformed   = errors.New("malformed response")
	errStatus      = errors.New("unexpected status")
)

// request is one logical request of a source.
type request struct {
	service string // display name: "npm", "PyPI", "GitHub", "deps.dev", "OSV", "Scorecard"
	method  string // default GET
	url     string
	accept  string
	body    []byte // a JSON request body (POST)
	// auth is an Authorization header value. It is sent only with this request, never
	// logged, never part of an error, and only marks the cache key.
	auth    string
	header  http.Header // further non-secret headers (e.g. X-GitHub-Api-Version)
	maxBody int64       // 0: the client's
	// truncate keeps the first maxBody bytes of a longer body instead of failing (for
	// READMEs, which are cut anyway).
	truncate bool
}

// revalidateKey marks a context whose reads must reach the source (WithRevalidate).
type revalidateKey struct{}

// WithRevalidate returns a context whose reads are never served from a fresh cache
// entry without a request: each is sent, conditionally when the cache has validators,
// so an unchanged answer is a cheap 304. Only when Probity's own limit or an exhausted
// quota keeps a read from the source is a fresh cache entry served instead. A read that must be a real fetch (seed 000's
// confirming re-read a minute later, a cadence read shorter than the cache's max age)
// runs with it.
func WithRevalidate(ctx context.Context) context.Context {
	return context.WithValue(ctx, revalidateKey{}, true)
}

func mustRevalidate(ctx context.Context) bool {
	v, _ := ctx.Value(revalidateKey{}).(bool)
	return v
}

// response is a response as the source sees it: fresh from the network, revalidated
// (a 304 answered with the cached body), or served from the warm cache.
type response struct {
	status    int
	body      []byte
	fetchedAt time.Time
	cached    bool // served without a request
}

// do performs r: from the cache (memory, then the CacheStore) when fresh, else over the
// network behind the throttle, with revalidation, Retry-After handling and size caps.
// A non-nil error means no usable answer (the caller reports SourceFailed); a 404 is a
// response, not an error.
func (c *Client) do(ctx context.Context, r request) (*response, error) {
	start := time.Now()
	if r.method == "" {
		r.method = http.MethodGet
	}
	maxBody := r.maxBody
	if maxBody <= 0 {
		maxBody = c.maxBody
	}
	key := cacheKey(r)
	now := c.now()
	entry, hit, level := c.lookup(ctx, key, maxBody, now)
	fresh := hit && c.fresh(entry, now)
	if fresh && !mustRevalidate(ctx) {
		c.logFetch(ctx, r, entry.Status, "fresh-"+level, 0, start)
		return &response{status: entry.Status, body: entry.Body, fetchedAt: entry.FetchedAt, cached: true}, nil
	}
	conditional := hit && entry.Status == http.StatusOK && (entry.ETag != "" || entry.LastModified != "")
	bk := keyOf(r)
	var waited time.Duration
	for attempt := 0; ; attempt++ {
		g, err := c.throttle.reserve(bk, conditional, c.allowance(ctx))
		if err != nil {
			if fresh {
				// A read asked to revalidate (WithRevalidate) that Probity's own limit or
				// the quota keeps from the source still has a fresh answer: that one.
				c.logFetch(ctx, r, entry.Status, "fresh-"+level+"-throttled", attempt, start)
				return &response{status: entry.Status, body: entry.Body, fetchedAt: entry.FetchedAt, cached: true}, nil
			}
			label := "throttled"
			if errors.Is(err, errQuota) {
				label = "quota"
			}
			c.logFetch(ctx, r, 0, label, attempt, start)
			return nil, err
		}
		if g.delay > 0 {
			if err := c.sleep(ctx, g.delay); err != nil {
				c.throttle.cancel(g)
				c.logFetch(ctx, r, 0, "throttled", attempt, start)
				return nil, fmt.Errorf("%s %w: waiting %s for the throttle: %w", r.service, errThrottled, g.delay, err)
			}
		}
		status, hdr, body, err := c.attempt(ctx, r, entry, conditional, maxBody)
		if err != nil {
			c.logFetch(ctx, r, status, "error", attempt, start)
			return nil, err
		}
		c.throttle.observe(bk, g, status, hdr)
		switch {
		case status == http.StatusNotModified && conditional:
			entry.FetchedAt = c.now()
			entry.Header = mergeKept(entry.Header, hdr)
			c.cache.Put(key, entry)
			c.keep(ctx, key, entry)
			c.logFetch(ctx, r, entry.Status, "revalidated-"+level, attempt, start)
			return &response{status: entry.Status, body: entry.Body, fetchedAt: entry.FetchedAt}, nil
		case status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable ||
			status == http.StatusForbidden && hdr.Get("Retry-After") != "":
			if until, ok := c.throttle.exhausted(bk); ok {
				c.logFetch(ctx, r, status, "quota", attempt, start)
				return nil, quotaError(r.service, until)
			}
			wait, ok := retryAfter(hdr.Get("Retry-After"), c.now())
			if !ok {
				if status != http.StatusTooManyRequests {
					c.logFetch(ctx, r, status, "error", attempt, start)
					return nil, fmt.Errorf("%w: %s answered %d", errStatus, r.service, status)
				}
				wait = time.Second << attempt
			}
			if attempt >= c.maxRetries {
				c.logFetch(ctx, r, status, "rate-limited", attempt, start)
				return nil, fmt.Errorf("%w: %s answered %d after %d retries", errRateLimited, r.service, status, attempt)
			}
			if waited+wait > c.maxWait {
				c.logFetch(ctx, r, status, "rate-limited", attempt, start)
				return nil, fmt.Errorf("%w: %s answered %d asking to wait %s, beyond the %s budget", errRateLimited, r.service, status, wait, c.maxWait)
			}
			if err := c.sleep(ctx, wait); err != nil {
				return nil, fmt.Errorf("%s: waiting to retry: %w", r.service, err)
			}
			waited += wait
			continue
		case status == http.StatusForbidden:
			if until, ok := c.throttle.exhausted(bk); ok {
				c.logFetch(ctx, r, status, "quota", attempt, start)
				return nil, quotaError(r.service, until)
			}
		}
		fetched := c.now()
		if status == http.StatusOK || status == http.StatusNotFound || status == http.StatusGone {
			e := Entry{
				Status:       status,
				Body:         body,
				ETag:         hdr.Get("ETag"),
				LastModified: hdr.Get("Last-Modified"),
				Header:       mergeKept(nil, hdr),
				FetchedAt:    fetched,
			}
			c.cache.Put(key, e)
			c.keep(ctx, key, e)
		}
		c.logFetch(ctx, r, status, "miss", attempt, start)
		return &response{status: status, body: body, fetchedAt: fetched}, nil
	}
}

// allowance is how long a request may wait for the throttle: MaxThrottleWait, or less
// when the context's deadline is nearer.
func (c *Client) allowance(ctx context.Context) time.Duration {
	a := c.maxThrottle
	if dl, ok := ctx.Deadline(); ok {
		a = min(a, time.Until(dl))
	}
	return a
}

// attempt sends r once and reads at most maxBody bytes of the answer.
func (c *Client) attempt(ctx context.Context, r request, entry Entry, conditional bool, maxBody int64) (int, http.Header, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var rd io.Reader
	if r.body != nil {
		rd = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, r.url, rd)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("%s: couldn't build request: %w", r.service, err)
	}
	// Early and precise for a denied IP literal or a bad scheme; the guard's dialer
	// checks every connection's resolved address regardless.
	if err := c.guard.CheckURL(req.URL); err != nil {
		return 0, nil, nil, fmt.Errorf("%s: %w", r.service, &url.Error{Op: r.method, URL: r.url, Err: err})
	}
	req.Header.Set("User-Agent", c.userAgent)
	if r.accept != "" {
		req.Header.Set("Accept", r.accept)
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, vs := range r.header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if r.auth != "" {
		req.Header.Set("Authorization", r.auth)
	}
	if conditional {
		if entry.ETag != "" {
			req.Header.Set("If-None-Match", entry.ETag)
		}
		if entry.LastModified != "" {
			req.Header.Set("If-Modified-Since", entry.LastModified)
		}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// *url.Error carries the method and URL, which hold no secret; headers are not
		// part of it.
		return 0, nil, nil, fmt.Errorf("%s: %w", r.service, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return resp.StatusCode, nil, nil, fmt.Errorf("%s: reading %s: %w", r.service, r.url, err)
	}
	if int64(len(body)) > maxBody {
		if r.truncate {
			return resp.StatusCode, resp.Header, body[:maxBody], nil
		}
		return resp.StatusCode, nil, nil, fmt.Errorf("%w: %s: response exceeds %d bytes", errTooLarge, r.url, maxBody)
	}
	return resp.StatusCode, resp.Header, body, nil
}

// retryAfter parses a Retry-After value: delay-seconds or an HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0, false
		}
		if n > int64(24*time.Hour/time.Second) {
			n = int64(24 * time.Hour / time.Second)
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

// quotaError says a service's quota is exhausted until a time ("GitHub quota
// exhausted until 2026-11-30T12:30:00Z").
func quotaError(service string, until time.Time) error {
	return fmt.Errorf("%s %w until %s", service, errQuota, until.UTC().Format(time.RFC3339))
}

func (c *Client) logFetch(ctx context.Context, r request, status int, cache string, retries int, start time.Time) {
	c.log.LogAttrs(ctx, slog.LevelDebug, "supply fetch",
		slog.String("service", r.service),
		slog.String("method", r.method),
		slog.String("url", r.url),
		slog.Int("status", status),
		slog.String("cache", cache),
		slog.Int("retries", retries),
		slog.Duration("took", time.Since(start)))
}

// cacheKey identifies a response: method, URL, Accept, the further request headers
// (non-secret by request's contract), a hash of the request body, and whether it was
// authenticated (never the credential itself). It is also the CacheStore's key.
func cacheKey(r request) string {
	var b strings.Builder
	b.WriteString(r.method)
	b.WriteByte(' ')
	b.WriteString(r.url)
	b.WriteString(" accept=")
	b.WriteString(r.accept)
	names := slices.Sorted(maps.Keys(r.header))
	for _, k := range names {
		if strings.EqualFold(k, "Authorization") {
			continue // never part of a key (request.auth carries credentials)
		}
		b.WriteByte(' ')
		b.WriteString(http.CanonicalHeaderKey(k))
		b.WriteByte('=')
		b.WriteString(strings.Join(r.header[k], ","))
	}
	if r.body != nil {
		sum := sha256.Sum256(r.body)
		b.WriteString(" body=")
		b.WriteString(hex.EncodeToString(sum[:]))
	}
	if r.auth != "" {
		b.WriteString(" auth")
	}
	return b.String()
}

// decodeJSON decodes one JSON object (want '{') or array (want '[') into v, and
// rejects anything else: other top-level values, null, trailing data.
func decodeJSON(body []byte, want byte, v any) error {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 {
		return fmt.Errorf("%w: empty body", errMalformed)
	}
	if trimmed[0] != want {
		return fmt.Errorf("%w: want a JSON %s", errMalformed, map[byte]string{'{': "object", '[': "array"}[want])
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", errMalformed, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: data after the JSON value", errMalformed)
	}
	return nil
}

// Entry is one cached response.
type Entry struct {
	Status       int
	Body         []byte // shared: never modified by the Client or its callers
	ETag         string
	LastModified string
	// Header holds the kept response headers (Content-Type), nil when none; shared
	// like Body.
	Header    http.Header
	FetchedAt time.Time
}

// Cache keeps responses between requests. Implementations must be safe for concurrent
// use, may drop entries at any time, and must return an entry's Body unmodified; the
// Client never modifies a Body it put or got.
type Cache interface {
	Get(key string) (Entry, bool)
	Put(key string, e Entry)
}

// MemoryCache is an in-memory least-recently-used Cache bounded by entry count and by
// the bytes of keys and bodies together.
type MemoryCache struct {
	maxEntries int
	maxBytes   int64

	mu    sync.Mutex
	ll    *list.List // front: most recently used; values *memEntry
	items map[string]*list.Element
	bytes int64
}

type memEntry struct {
	key string
	e   Entry
}

func (m *memEntry) size() int64 {
	return int64(len(m.key) + len(m.e.Body) + len(m.e.ETag) + len(m.e.LastModified))
}

// NewMemoryCache returns a MemoryCache of at most maxEntries entries (default 4,096)
// and maxBytes bytes (default 64 MiB). An entry larger than maxBytes is not kept.
func NewMemoryCache(maxEntries int, maxBytes int64) *MemoryCache {
	if maxEntries <= 0 {
		maxEntries = 4096
	}
	if maxBytes <= 0 {
		maxBytes = 64 << 20
	}
	return &MemoryCache{maxEntries: maxEntries, maxBytes: maxBytes, ll: list.New(), items: map[string]*list.Element{}}
}

// Get returns the entry for key and marks it recently used.
func (m *MemoryCache) Get(key string) (Entry, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.items[key]
	if !ok {
		return Entry{}, false
	}
	m.ll.MoveToFront(el)
	return el.Value.(*memEntry).e, true
}

// Put stores e under key, evicting the least recently used entries beyond the bounds.
func (m *MemoryCache) Put(key string, e Entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.items[key]; ok {
		m.remove(el)
	}
	me := &memEntry{key: key, e: e}
	if me.size() > m.maxBytes {
		return
	}
	m.items[key] = m.ll.PushFront(me)
	m.bytes += me.size()
	for m.ll.Len() > m.maxEntries || m.bytes > m.maxBytes {
		m.remove(m.ll.Back())
	}
}

// Len returns the number of entries and their bytes.
func (m *MemoryCache) Len() (entries int, bytes int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ll.Len(), m.bytes
}

func (m *MemoryCache) remove(el *list.Element) {
	me := el.Value.(*memEntry)
	m.ll.Remove(el)
	delete(m.items, me.key)
	m.bytes -= me.size()
}

// fetchSource is the Source of a response: its URL, when it was fetched, and the
// outcome for its status (200 OK, 404/410 SourceNoData, anything else SourceFailed).
func fetchSource(service, url string, resp *response, err error, now time.Time) Source {
	if err != nil {
		return Source{Outcome: SourceFailed, URL: url, FetchedAt: now, Error: err.Error()}
	}
	s := Source{URL: url, FetchedAt: resp.fetchedAt}
	switch resp.status {
	case http.StatusOK:
		s.Outcome = SourceOK
	case http.StatusNotFound, http.StatusGone:
		s.Outcome = SourceNoData
		s.Error = fmt.Sprintf("%s answered %d: not found", service, resp.status)
	default:
		s.Outcome = SourceFailed
		s.Error = fmt.Sprintf("%s answered %d", service, resp.status)
	}
	return s
}

// joinURL appends path (already escaped) to base, without doubling the slash.
func joinURL(base, path string) string {
	return strings.TrimRight(base, "/") + path
}
