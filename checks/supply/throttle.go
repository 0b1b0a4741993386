package supply

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limit is a token bucket: Requests per Per on average, at most Burst at once. In any
// window of length Per it lets at most Burst+Requests requests through, so a Limit
// under a published quota of Q requests per Per has Burst+Requests ≤ Q. A Limit with
// Requests or Per zero does not throttle.
type Limit struct {
	Requests int
	Per      time.Duration
	Burst    int
}

func (l Limit) off() bool { return l.Requests <= 0 || l.Per <= 0 }

func (l Limit) String() string {
	per := l.Per.String()
	switch l.Per {
	case time.Second:
		per = "a second"
	case time.Minute:
		per = "a minute"
	case time.Hour:
		per = "an hour"
	}
	return fmt.Sprintf("%d requests %s, bursts of %d", l.Requests, per, max(l.Burst, 1))
}

// HostLimit is Probity's own throttle of one source host, applied before a request is
// sent, so a source's quota is kept to rather than discovered by a 429.
type HostLimit struct {
	// Anonymous applies to requests without credentials; Token to requests with
	// (the GitHub source's token). A zero Limit does not throttle.
	Anonymous, Token Limit
	// FreeNotModified: a 304 answer to a conditional request with credentials does
	// not count against the quota (GitHub's primary rate limit). Such a revalidation
	// takes no token before it is sent, and one after it unless the answer is 304.
	FreeNotModified bool
	// Source is where the quota is published, or a note that none is.
	Source string
}

// Hosts of the public sources, as DefaultLimits keys them.
const (
	hostGitHub    = "api.github.com"
	hostNPM       = "registry.npmjs.org"
	hostPyPI      = "pypi.org"
	hostDepsDev   = "api.deps.dev"
	hostOSV       = "api.osv.dev"
	hostScorecard = "api.securityscorecards.dev"
)

// politeLimit is the rate of a public source that publishes no numeric quota: 5
// requests a second with bursts of 10 (at most 15 in any second), far below what the
// CDN-fronted registries serve and what a run of the supply checks needs (a few
// requests per entry).
var politeLimit = Limit{Requests: 5, Per: time.Second, Burst: 10}

// DefaultLimits returns the throttle of the public sources by host (a new map each
// call; edit it to change a default):
//
//   - api.github.com: 60 requests an hour without a token, 5,000 with one (GitHub's
//     primary rate limits, https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api);
//     Probity uses 50 an hour with bursts of 10 without a token (≤ 60 in any hour)
//     and 4,500 an hour with bursts of 500 with one (≤ 5,000 in any hour, and ≤ 575
//     in any minute, under the secondary limit of 900 points a minute for REST). A
//     304 to an authenticated conditional request is free ("does not count against
//     your primary rate limit if a 304 response is returned and the request was made
//     while correctly authorized with an Authorization header",
//     https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api);
//     an unauthenticated one counts. The X-RateLimit-* headers are honoured on top.
//   - registry.npmjs.org: npm publishes no numeric quota for registry reads (they
//     are CDN-fronted, abusive traffic is throttled at the edge): the polite rate.
//   - pypi.org: "there is currently no rate limiting of PyPI APIs at the edge", and
//     PyPI asks not to make thousands of requests in minutes
//     (https://docs.pypi.org/api/): the polite rate, at most 900 a minute.
//   - api.deps.dev, api.osv.dev, api.securityscorecards.dev: their API documentation
//     (https://docs.deps.dev/api/v3/, https://google.github.io/osv.dev/api/,
//     https://api.securityscorecards.dev) states no numeric quota that we found
//     (checked December 2026): the polite rate.
//
// The polite rate is 5 requests a second with bursts of 10. Hosts not listed
// (mirrors, local test servers) are not throttled unless configured.
func DefaultLimits() map[string]HostLimit {
	const noQuota = "no numeric quota published; a polite rate"
	return map[string]HostLimit{
		hostGitHub: {
			Anonymous:       Limit{Requests: 50, Per: time.Hour, Burst: 10},
			Token:           Limit{Requests: 4500, Per: time.Hour, Burst: 500},
			FreeNotModified: true,
			Source:          "https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api",
		},
		hostNPM:       {Anonymous: politeLimit, Token: politeLimit, Source: "registry.npmjs.org: " + noQuota},
		hostPyPI:      {Anonymous: politeLimit, Token: politeLimit, Source: "https://docs.pypi.org/api/: " + noQuota},
		hostDepsDev:   {Anonymous: politeLimit, Token: politeLimit, Source: "https://docs.deps.dev/api/v3/: " + noQuota},
		hostOSV:       {Anonymous: politeLimit, Token: politeLimit, Source: "https://google.github.io/osv.dev/api/: " + noQuota},
		hostScorecard: {Anonymous: politeLimit, Token: politeLimit, Source: "https://api.securityscorecards.dev: " + noQuota},
	}
}

// DefaultMaxThrottleWait is the longest a request waits for the throttle (Probity's
// own limit or a quota reset a server announced) by default; a longer wait is refused
// with a "throttled, retry later" or "quota exhausted" error.
const DefaultMaxThrottleWait = 30 * time.Second

// errThrottled marks a request Probity did not send because of its own limit: not
// the source's trouble, retried later.
var errThrottled = errors.New("throttled")

// throttle keeps one bucket per service, host and whether the request carries
// credentials: Probity's own token bucket for the host (HostLimit), and the quota the
// server announced in X-RateLimit-Limit / -Remaining / -Reset.
type throttle struct {
	limits map[string]HostLimit
	now    func() time.Time

	mu      sync.Mutex
	buckets map[bucketKey]*bucket
}

type bucketKey struct {
	service, host string
	auth          bool
}

type bucket struct {
	own     *rate.Limiter // nil: no limit of Probity's own for the host
	desc    string        // the own limit, for errors: "api.github.com without a token (…)"
	free304 bool

	// The server's announced quota, while its window lasts (reset in the future).
	// remaining counts down with each request sent and is corrected by each answer.
	srvLimit  int64
	remaining int64
	reset     time.Time
	next      time.Time // earliest next send while pacing the last requests
}

// grant is a throttle's permission to send one request now or after delay.
type grant struct {
	delay       time.Duration
	own         *rate.Reservation // the own token taken, nil when none
	conditional bool
	at          time.Time
}

func newThrottle(limits map[string]HostLimit, now func() time.Time) *throttle {
	return &throttle{limits: limits, now: now, buckets: map[bucketKey]*bucket{}}
}

// keyOf is the bucket of r.
func keyOf(r request) bucketKey {
	k := bucketKey{service: r.service, auth: r.auth != ""}
	if u, err := url.Parse(r.url); err == nil {
		k.host = strings.ToLower(u.Host)
	}
	return k
}

// bucket returns k's bucket, creating it; t.mu is held.
func (t *throttle) bucket(k bucketKey) *bucket {
	if b, ok := t.buckets[k]; ok {
		return b
	}
	b := &bucket{}
	if hl, ok := t.limits[k.host]; ok {
		l, who := hl.Anonymous, "without a token"
		if k.auth {
			l, who = hl.Token, "with a token"
		}
		if !l.off() {
			b.own = rate.NewLimiter(rate.Limit(float64(l.Requests)/l.Per.Seconds()), max(l.Burst, 1))
			b.desc = k.host + " " + who + " (" + l.String() + ")"
			b.free304 = hl.FreeNotModified && k.auth
		}
	}
	t.buckets[k] = b
	return b
}

// reserve asks to send one request of bucket k now. It returns how long to wait
// first, or an error when that is longer than allowance: the server's quota exhausted
// until its reset (errQuota) or Probity's throttle (errThrottled). A conditional
// request to a host whose 304s are free takes no own token now (observe charges it if
// the answer is not 304).
func (t *throttle) reserve(k bucketKey, conditional bool, allowance time.Duration) (grant, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.bucket(k)
	now := t.now()
	g := grant{conditional: conditional, at: now}

	// The server's announced quota: wait for the reset at 0, and spread the last
	// tenth of it evenly until the reset, so it is not used up before.
	var srvDelay time.Duration
	exhausted := false
	prevRemaining, prevNext := b.remaining, b.next
	if !b.reset.IsZero() && !now.Before(b.reset) {
		b.srvLimit, b.remaining, b.reset, b.next = 0, 0, time.Time{}, time.Time{}
		prevRemaining, prevNext = 0, time.Time{}
	}
	if !b.reset.IsZero() {
		switch {
		case b.remaining <= 0:
			srvDelay, exhausted = b.reset.Sub(now), true
		case b.remaining <= b.srvLimit/10:
			at := now
			if b.next.After(at) {
				at = b.next
			}
			srvDelay = at.Sub(now)
			b.next = at.Add(b.reset.Sub(at) / time.Duration(b.remaining))
			b.remaining--
		default:
			b.remaining--
		}
	}

	var ownDelay time.Duration
	if b.own != nil && !(conditional && b.free304) {
		g.own = b.own.ReserveN(now, 1)
		ownDelay = g.own.DelayFrom(now)
	}
	g.delay = max(srvDelay, ownDelay)
	if g.delay <= max(allowance, 0) {
		return g, nil
	}
	// Refused: give back what was taken.
	if g.own != nil {
		g.own.CancelAt(now)
	}
	b.remaining, b.next = prevRemaining, prevNext
	retry := now.Add(g.delay).UTC().Format(time.RFC3339)
	switch {
	case exhausted:
		return grant{}, quotaError(k.service, b.reset)
	case srvDelay >= ownDelay:
		return grant{}, fmt.Errorf("%s %w: the quota it announced is nearly used up (%d left until %s), retry after %s",
			k.service, errThrottled, b.remaining, b.reset.UTC().Format(time.RFC3339), retry)
	}
	return grant{}, fmt.Errorf("%s %w by Probity's own limit for %s, retry after %s", k.service, errThrottled, b.desc, retry)
}

// cancel gives back g's own token when its request was not sent.
func (t *throttle) cancel(g grant) {
	if g.own != nil {
		g.own.CancelAt(t.now())
	}
}

// observe records an answer of bucket k: it charges a free-304 revalidation that was
// not answered 304, and reads the server's quota headers (GitHub's X-RateLimit-Limit,
// -Remaining, -Reset).
func (t *throttle) observe(k bucketKey, g grant, status int, h http.Header) {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.bucket(k)
	now := t.now()
	if b.own != nil && g.own == nil && g.conditional && b.free304 && status != http.StatusNotModified {
		b.own.ReserveN(now, 1) // counted after all: later requests wait for it
	}
	if h == nil {
		return
	}
	rem := strings.TrimSpace(h.Get("X-RateLimit-Remaining"))
	if rem == "" {
		return
	}
	n, err := strconv.ParseInt(rem, 10, 64)
	if err != nil || n < 0 {
		return
	}
	var until time.Time
	if s, err := strconv.ParseInt(strings.TrimSpace(h.Get("X-RateLimit-Reset")), 10, 64); err == nil && s > 0 {
		until = time.Unix(s, 0)
	} else if n == 0 {
		until = now.Add(time.Hour) // GitHub's window, when the reset is missing
	} else {
		return // nothing to pace against
	}
	if !until.After(now) {
		return // a reset already passed: stale, or another clock
	}
	if until.Sub(now) > 24*time.Hour {
		until = now.Add(24 * time.Hour)
	}
	limit, _ := strconv.ParseInt(strings.TrimSpace(h.Get("X-RateLimit-Limit")), 10, 64)
	switch {
	case b.reset.IsZero() || !now.Before(b.reset) || until.After(b.reset):
		// A new window (or the first answer seen).
		b.srvLimit, b.remaining, b.reset, b.next = max(limit, 0), n, until, time.Time{}
	case until.Equal(b.reset):
		b.remaining = min(b.remaining, n)
		if limit > 0 {
			b.srvLimit = limit
		}
	}
	// An answer of an earlier window (its reset before ours) is stale: ignored.
}

// exhausted reports whether bucket k's announced quota is used up now, and until when.
func (t *throttle) exhausted(k bucketKey) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	b, ok := t.buckets[k]
	if !ok || b.reset.IsZero() || !t.now().Before(b.reset) || b.remaining > 0 {
		return time.Time{}, false
	}
	return b.reset, true
}
