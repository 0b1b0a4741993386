package probe

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/probity-dev/probity/checks"
	"github.com/probity-dev/probity/checks/probe/egress"
)

// errRequestBudget ends a probe that would send more requests than its budget allows.
var errRequestBudget = errors.New("probe: request budget exhausted")

// errResponseTooLarge is returned to the reader of a response body over the cap.
var errResponseTooLarge = errors.New("probe: response exceeds the size cap")

// errOffOrigin refuses a request the server steered away from the endpoint's origin.
var errOffOrigin = errors.New("probe: request to another origin refused")

// metadataRequest marks the context of the RFC 9728 metadata fetch, which may leave the
// endpoint's origin.
type metadataRequest struct{}

// originOf is scheme://host[:port] of u, in lower case.
func originOf(u *url.URL) string {
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

// errStopped is returned for every request after a 429 or a 503 with Retry-After.
var errStopped = errors.New("probe: stopped: the server asked us to back off")

// recorder is the probe's http.RoundTripper. It records every exchange (JSON-RPC
// method, status, selected headers, latency, capped raw body), enforces the request
// budget and the body cap, stamps the User-Agent, strips anything credential-like from
// requests, and notes the first TLS connection and the first transport failure.
type recorder struct {
	base        http.RoundTripper
	userAgent   string
	maxBody     int64
	maxRequests int // requests besides tools/list pages
	// budget ends with the probe's time budget: no request starts after it and every
	// request still running is cancelled then, whatever context the SDK gave it (its
	// best-effort notifications/cancelled is sent without the caller's deadline).
	budget context.Context

	mu           sync.Mutex
	exchanges    []*exchange
	requests     int
	tls          *tls.ConnectionState
	failure      checks.ReachFailure // of the first request that got no response
	failDetail   string
	tlsErr       error
	stopped      atomic.Bool // a 429, or a 503 with Retry-After, was seen
	overBudget   atomic.Bool // a request was refused for the request budget
	origin       string      // scheme://host of the endpoint
	offOrigin    []string    // requests refused for leaving the origin; guarded by mu
	maxPages     int         // tools/list requests, redirect hops included
	pageRequests int         // guarded by mu
	maxTotal     int64       // body bytes recorded per probe, all responses together
	total        int64       // body bytes recorded so far; guarded by mu
	retryAfter   time.Duration
	start        time.Time
}

// exchange is a checks.Exchange under construction: its body fills while the SDK reads.
type exchange struct {
	checks.Exchange
	id      string // the JSON-RPC request id, for matching the response
	body    bytes.Buffer
	started time.Time
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	method, id := rpcMethod(req)
	if r.budget != nil && r.budget.Err() != nil {
		return nil, r.budget.Err()
	}
	// Requests leave only for the endpoint's own origin, for redirect hops (the guard
	// checks each) and for the metadata fetch. A legacy SSE "endpoint" event pointing
	// elsewhere (another host, or http:// from https://) is refused and recorded.
	if req.Response == nil && req.Context().Value(metadataRequest{}) == nil && r.origin != "" && originOf(req.URL) != r.origin {
		r.mu.Lock()
		r.offOrigin = append(r.offOrigin, req.URL.Redacted())
		r.mu.Unlock()
		return nil, errOffOrigin
	}
	r.mu.Lock()
	if r.stopped.Load() {
		r.mu.Unlock()
		return nil, errStopped
	}
	// Pages of tools/list have their own cap, which their redirect hops count against too.
	if method == "tools/list" {
		r.pageRequests++
		if r.maxPages > 0 && r.pageRequests > r.maxPages {
			r.overBudget.Store(true)
			r.mu.Unlock()
			return nil, errRequestBudget
		}
	} else {
		r.requests++
		if r.requests > r.maxRequests {
			r.overBudget.Store(true)
			r.mu.Unlock()
			return nil, errRequestBudget
		}
	}
	ex := &exchange{Exchange: checks.Exchange{Method: method, URL: req.URL.Redacted()}, id: id, started: time.Now()}
	r.exchanges = append(r.exchanges, ex)
	r.mu.Unlock()

	// Never send credentials: nothing of the kind is set by the SDK, and this makes
	// sure nothing is.
	ctx, cancel := context.WithCancel(req.Context())
	release := func() { cancel() }
	if r.budget != nil {
		stop := context.AfterFunc(r.budget, cancel)
		release = func() { stop(); cancel() }
	}
	req = req.Clone(ctx)
	for _, h := range []string{"Authorization", "Cookie", "Proxy-Authorization"} {
		req.Header.Del(h)
	}
	req.Header.Set("User-Agent", r.userAgent)

	resp, err := r.base.RoundTrip(req)
	elapsed := time.Since(ex.started)
	r.mu.Lock()
	defer r.mu.Unlock()
	ex.LatencyMs = elapsed.Milliseconds()
	if err != nil {
		release()
		ex.Err = clip(err.Error(), 200)
		if r.failure == checks.ReachOK && len(r.exchanges) > 0 && r.allFailed() {
			r.failure, r.failDetail = classify(err)
		}
		var cv *tls.CertificateVerificationError
		if errors.As(err, &cv) && r.tlsErr == nil {
			r.tlsErr = cv.Err
		}
		return nil, err
	}
	ex.Status = resp.StatusCode
	ex.Header = map[string][]string{}
	for _, h := range []string{"WWW-Authenticate", "Mcp-Session-Id", "Content-Type", "Retry-After", "Location"} {
		if v := resp.Header.Values(h); len(v) > 0 {
			ex.Header[h] = clipAll(v)
		}
	}
	if resp.TLS != nil && r.tls == nil {
		cs := *resp.TLS
		r.tls = &cs
	}
	if resp.StatusCode == http.StatusTooManyRequests || (resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "") {
		r.stopped.Store(true)
		r.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	max := r.maxBody
	if req.Method == http.MethodGet {
		// The long-lived event stream of a legacy SSE session carries every response of
		// the session: it is held to the probe's total, and each event to the
		// per-response cap by the SDK's MaxEventSize.
		max = r.maxTotal
	}
	resp.Body = &cappedBody{rc: resp.Body, ex: ex, max: max, mu: &r.mu, release: release, rec: r}
	return resp, nil
}

// allFailed reports whether no exchange so far got a response; called with mu held.
func (r *recorder) allFailed() bool {
	for _, e := range r.exchanges {
		if e.Status != 0 {
			return false
		}
	}
	return true
}

// snapshot returns the recorded exchanges as plain values.
func (r *recorder) snapshot() []checks.Exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]checks.Exchange, len(r.exchanges))
	for i, e := range r.exchanges {
		out[i] = e.Exchange
		out[i].Body = bytes.Clone(e.body.Bytes())
	}
	return out
}

// recorded is a snapshot of one exchange with its JSON-RPC request id.
type recorded struct {
	checks.Exchange
	id string
}

// all returns every exchange so far, with bodies as read so far.
func (r *recorder) all() []recorded {
	return r.matching(func(*exchange) bool { return true })
}

// matching returns the exchanges so far that keep selects, copying only their bodies.
func (r *recorder) matching(keep func(*exchange) bool) []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []recorded
	for _, e := range r.exchanges {
		if keep(e) {
			x := recorded{Exchange: e.Exchange, id: e.id}
			x.Body = bytes.Clone(e.body.Bytes())
			out = append(out, x)
		}
	}
	return out
}

// count returns how many exchanges for a JSON-RPC method were recorded.
func (r *recorder) count(method string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.exchanges {
		if e.Method == method {
			n++
		}
	}
	return n
}

// last returns the most recent exchange for a JSON-RPC method.
func (r *recorder) last(method string) (recorded, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.exchanges) - 1; i >= 0; i-- {
		if e := r.exchanges[i]; e.Method == method {
			x := recorded{Exchange: e.Exchange, id: e.id}
			x.Body = bytes.Clone(e.body.Bytes())
			return x, true
		}
	}
	return recorded{}, false
}

// responseTo finds the JSON-RPC response to a recorded request: in the response to the
// POST itself (Streamable HTTP, as JSON or an event stream), or, for legacy SSE, in the
// long-lived event stream of the session's GET.
func (r *recorder) responseTo(req recorded) (rpcResponse, bool) {
	if resp, ok := responseFor(req.Exchange, req.id); ok {
		return resp, true
	}
	if req.id == "" {
		return rpcResponse{}, false
	}
	for _, ex := range r.matching(func(e *exchange) bool { return e.Method == http.MethodGet }) {
		if resp, ok := responseFor(ex.Exchange, req.id); ok {
			return resp, true
		}
	}
	return rpcResponse{}, false
}

// cappedBody records what the reader reads and fails past the cap.
type cappedBody struct {
	rec     *recorder
	rc      io.ReadCloser
	ex      *exchange
	max     int64
	n       int64
	mu      *sync.Mutex
	release func() // cancels the request's context, once the body is closed
}

func (b *cappedBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	left := min(b.max-b.n, b.rec.totalLeft())
	if left <= 0 {
		b.ex.Truncated = true
		b.mu.Unlock()
		return 0, errResponseTooLarge
	}
	b.mu.Unlock()
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := b.rc.Read(p)
	b.n += int64(n)
	b.mu.Lock()
	b.ex.body.Write(p[:n])
	b.rec.total += int64(n)
	b.mu.Unlock()
	return n, err
}

// totalLeft is how many more body bytes the probe may record; called with mu held.
func (r *recorder) totalLeft() int64 {
	if r.maxTotal <= 0 {
		return 1 << 62
	}
	return r.maxTotal - r.total
}

func (b *cappedBody) Close() error {
	err := b.rc.Close()
	if b.release != nil {
		b.release()
	}
	return err
}

// rpcMethod reads the JSON-RPC method and id of a request without consuming its body.
func rpcMethod(req *http.Request) (method, id string) {
	if req.Body == nil || req.GetBody == nil {
		return req.Method, ""
	}
	body, err := req.GetBody()
	if err != nil {
		return req.Method, ""
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, 64<<10))
	if err != nil {
		return req.Method, ""
	}
	var msg struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	if json.Unmarshal(data, &msg) != nil || msg.Method == "" {
		return req.Method, ""
	}
	return msg.Method, string(msg.ID)
}

// classify maps a transport error to the reach failure it stands for.
func classify(err error) (checks.ReachFailure, string) {
	var dnsErr *net.DNSError
	var cv *tls.CertificateVerificationError
	var rh tls.RecordHeaderError
	switch {
	case errors.Is(err, egress.ErrBlocked):
		return checks.ReachBlocked, "the egress guard refused the destination"
	case errors.As(err, &dnsErr):
		return checks.ReachDNS, "the name did not resolve"
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return checks.ReachTimeout, "no response within the time budget"
	case errors.As(err, &cv), errors.As(err, &rh):
		return checks.ReachTLS, "the TLS handshake failed"
	case errors.Is(err, errRequestBudget), errors.Is(err, errStopped):
		return checks.ReachOK, ""
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" {
		return checks.ReachConnect, "the connection was refused or the host unreachable"
	}
	if errors.As(err, new(x509.UnknownAuthorityError)) || errors.As(err, new(x509.HostnameError)) || errors.As(err, new(x509.CertificateInvalidError)) {
		return checks.ReachTLS, "the TLS handshake failed"
	}
	return checks.ReachConnect, "the connection failed"
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// parseRetryAfter reads a Retry-After header in seconds or as an HTTP date, bounded to a
// day.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	var d time.Duration
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		d = time.Duration(min(s, 86400)) * time.Second // no overflow from huge values
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), 24*time.Hour)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("… (%d bytes)", len(s))
}

// maxHeaderValue bounds a recorded header value. Values are cut, never rewritten, so a
// long WWW-Authenticate challenge still parses (the transport caps all headers at
// 64 KiB).
const maxHeaderValue = 16 << 10

func clipAll(v []string) []string {
	out := make([]string, 0, min(len(v), 8))
	for _, s := range v[:min(len(v), 8)] {
		out = append(out, s[:min(len(s), maxHeaderValue)])
	}
	return out
}
