package probe

import (
	"bytes"
	"compress/gzip"
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

// metadataRequest is the context key that marks the RFC 9728 metadata fetch, which may
// leave the endpoint's origin; its value is a *metadataFetch.
type metadataRequest struct{}

// metadataFetch receives the exchange of the metadata fetch's last hop, whose recorded
// body the probe parses instead of reading the response a second time.
type metadataFetch struct {
	ex *exchange // guarded by the recorder's mu
}

// originOf is scheme://host[:port] of u, in lower case.
func originOf(u *url.URL) string {
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

// errStopped is returned for every request after a 429 or a 503 with Retry-After.
var errStopped = errors.New("probe: stopped: the server asked us to back off")

// recorder is the probe's http.RoundTripper. It records every exchange (JSON-RPC
// method, status, selected headers, latency, capped raw body), enforces the request
// budget and the body caps, stamps the User-Agent, strips anything credential-like from
// requests, and notes the first TLS connection and the first transport failure.
//
// Every response body is read through the recorder, which holds it to the caps:
//
//   - a response is at most maxBody bytes, an event stream answering a POST too;
//   - the legacy SSE session stream (a GET answered with text/event-stream) may carry
//     every response of the session: each of its events is held to maxBody and the
//     stream to maxTotal, but what it carries besides responses (comments,
//     notifications, requests) to maxBody;
//   - every byte read, of every response, counts against maxTotal;
//   - the probe asks for gzip (Accept-Encoding: gzip, as common HTTP clients do) and
//     decompresses it itself: the decompressed bytes count against the caps, and the
//     compressed ones are held to the response's own cap (not added to maxTotal), so
//     neither a gzip bomb nor a stream of empty gzip members reads past a cap. Other encodings are recorded as sent (no client the probe
//     stands for asked for them).
//
// The recorder keeps one copy of what it read, which the probe parses in place:
// snapshots share it. A response cut at a cap is never parsed, and only its first
// truncatedPrefix bytes are kept as evidence; of an event stream only the events that
// can answer a request are kept (comments, requests and notifications are read and
// counted, not kept).
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
	maxTotal     int64       // body bytes read per probe, all responses together
	total        int64       // body bytes read so far; guarded by mu
	retryAfter   time.Duration
	start        time.Time
}

// exchange is a checks.Exchange under construction: its body fills while the SDK reads.
type exchange struct {
	checks.Exchange
	id string // the JSON-RPC request id, for matching the response
	// body is what was recorded. It is only ever appended to (in place or into a new
	// array), or replaced, under the recorder's mu, so snapshots may share it.
	body    []byte
	started time.Time
}

// truncatedPrefix is how much of a response cut at a cap the recorder keeps.
const truncatedPrefix = 64 << 10

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
	// The end of the time budget cancels the request with the budget's cause, so that a
	// request cut off by it is classified as a timeout, not as a failed connection,
	// whichever of the two contexts the transport notices first.
	ctx, cancel := context.WithCancelCause(req.Context())
	release := func() { cancel(nil) }
	if r.budget != nil {
		stop := context.AfterFunc(r.budget, func() { cancel(context.Cause(r.budget)) })
		release = func() { stop(); cancel(nil) }
	}
	req = req.Clone(ctx)
	for _, h := range []string{"Authorization", "Cookie", "Proxy-Authorization"} {
		req.Header.Del(h)
	}
	req.Header.Set("User-Agent", r.userAgent)
	// Asking for gzip explicitly also keeps the transport from decompressing on its own:
	// the recorder decompresses, within the caps.
	req.Header.Set("Accept-Encoding", "gzip")

	resp, err := r.base.RoundTrip(req)
	elapsed := time.Since(ex.started)
	r.mu.Lock()
	defer r.mu.Unlock()
	ex.LatencyMs = elapsed.Milliseconds()
	if err != nil {
		cause := err
		if ctx.Err() != nil {
			cause = errors.Join(err, context.Cause(ctx))
		}
		release()
		ex.Err = clip(err.Error(), 200)
		if r.failure == checks.ReachOK && len(r.exchanges) > 0 && r.allFailed() {
			r.failure, r.failDetail = classify(cause)
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
	mf, _ := req.Context().Value(metadataRequest{}).(*metadataFetch)
	if mf != nil {
		mf.ex = ex
	}
	b := &cappedBody{rec: r, ex: ex, max: r.maxBody, raw: resp.Body, release: release}
	b.src = b.raw
	if ct := strings.ToLower(resp.Header.Get("Content-Type")); strings.HasPrefix(strings.TrimSpace(ct), "text/event-stream") {
		b.events = &eventFilter{}
		if req.Method == http.MethodGet && mf == nil {
			// The long-lived event stream of a legacy SSE session carries every response
			// of the session: it is held to the probe's total, each event to the
			// per-response cap.
			b.max = r.maxTotal
		}
	}
	switch enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))); enc {
	case "gzip", "x-gzip":
		// The compressed bytes are held to the response's cap as well: a stream of empty
		// gzip members decompresses to nothing.
		b.wire = &wireLimit{r: resp.Body, left: b.max}
		resp.Header.Del("Content-Encoding")
		resp.Header.Del("Content-Length")
		resp.ContentLength = -1
		resp.Uncompressed = true
	case "", "identity":
		if resp.ContentLength > 0 {
			b.hint = resp.ContentLength
		}
	}
	resp.Body = b
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
		out[i].Body = e.shared()
	}
	return out
}

// shared returns the recorded body for a snapshot, without copying it: a snapshot may
// read it while the body grows (the recorder never writes where a snapshot reads) and
// cannot append to it. Called with the recorder's mu held.
func (e *exchange) shared() []byte {
	if len(e.body) == 0 {
		return nil
	}
	return e.body[:len(e.body):len(e.body)]
}

// read is how many body bytes the probe read, all responses together, decompressed.
func (r *recorder) read() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

// metadataBody is the recorded body of the metadata fetch's last hop.
func (r *recorder) metadataBody(mf *metadataFetch) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	if mf.ex == nil {
		return nil
	}
	return mf.ex.shared()
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
			x.Body = e.shared()
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
			x.Body = e.shared()
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

// cappedBody records what the reader reads and fails past the caps.
type cappedBody struct {
	rec  *recorder
	ex   *exchange
	raw  io.ReadCloser // the response body as received
	wire *wireLimit    // raw, held to the per-response cap; set for gzip
	src  io.Reader     // what the reader reads: raw, or the gzip stream of wire
	// max caps the bytes read (decompressed) of this response; for an event stream that
	// is the legacy SSE session's, the stream's total, each event being held to maxBody.
	max     int64
	n       int64
	hint    int64        // the declared Content-Length of an uncompressed body, or 0
	events  *eventFilter // for event streams; nil otherwise
	release func()       // cancels the request's context, once the body is closed
}

func (b *cappedBody) Read(p []byte) (int, error) {
	r := b.rec
	r.mu.Lock()
	left := min(b.max-b.n, r.totalLeft())
	if b.events != nil {
		left = min(left, r.maxBody-b.events.eventBytes())
		if b.events.dropped >= r.maxBody {
			// What the stream carries besides responses is held to the per-response cap.
			left = 0
		}
	}
	if left <= 0 {
		b.cut()
		r.mu.Unlock()
		return 0, errResponseTooLarge
	}
	r.mu.Unlock()
	if b.wire != nil && b.src == b.raw {
		// Read the gzip header here, not in RoundTrip: it may take a while to arrive.
		zr, err := gzip.NewReader(b.wire)
		if err != nil {
			return 0, b.fail(err)
		}
		b.src = zr
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := b.src.Read(p)
	b.n += int64(n)
	r.mu.Lock()
	r.total += int64(n)
	if b.events != nil {
		b.ex.body = b.events.write(b.ex.body, p[:n], r.maxBody, b.max)
	} else {
		b.ex.body = appendCapped(b.ex.body, p[:n], b.hint, b.max)
	}
	if err != nil {
		b.settle()
	}
	r.mu.Unlock()
	if err != nil && err != io.EOF {
		err = b.fail(err)
	}
	return n, err
}

// fail records a read error; past the compressed cap, the response is cut.
func (b *cappedBody) fail(err error) error {
	if errors.Is(err, errResponseTooLarge) {
		b.rec.mu.Lock()
		b.cut()
		b.rec.mu.Unlock()
	}
	return err
}

// cut marks the response as cut at a cap. A cut body is never parsed: only its first
// truncatedPrefix bytes stay, as evidence. An event stream keeps the complete events it
// kept. Called with the recorder's mu held.
func (b *cappedBody) cut() {
	e := b.ex
	if e.Truncated {
		return
	}
	e.Truncated = true
	if b.events != nil {
		b.events.pending = nil
		return
	}
	if len(e.body) > truncatedPrefix {
		e.body = bytes.Clone(e.body[:truncatedPrefix])
	}
}

// settle ends the recording of a body that ended, with an error, at its end or by being
// closed: a body allocated for a declared length it never reached (a server that
// declares 4 MiB, sends a few bytes and closes or stalls) is copied to its size, so
// what the observation holds is bounded by what was read, not by what was declared.
// Bodies grown by doubling, at most about twice their size, are kept as they are.
// Called with the recorder's mu held.
func (b *cappedBody) settle() {
	e := b.ex
	if c := cap(e.body); c > minGrowth && c > 2*len(e.body) {
		e.body = bytes.Clone(e.body)
	}
}

// minGrowth is the capacity a body without a declared length starts with.
const minGrowth = 16 << 10

// appendCapped appends p to buf, growing buf by doubling from hint (a declared length)
// or 16 KiB, never past limit unless p needs it: no body is held at more than about
// twice its size, and one that declares its length is allocated once.
func appendCapped(buf, p []byte, hint, limit int64) []byte {
	need := int64(len(buf) + len(p))
	if need <= int64(cap(buf)) {
		return append(buf, p...)
	}
	size := max(2*int64(cap(buf)), minGrowth)
	if cap(buf) == 0 && hint > 0 {
		size = hint
	}
	size = max(min(size, limit), need)
	nb := make([]byte, len(buf), size)
	copy(nb, buf)
	return append(nb, p...)
}

// totalLeft is how many more body bytes the probe may read; called with mu held.
func (r *recorder) totalLeft() int64 {
	if r.maxTotal <= 0 {
		return 1 << 62
	}
	return r.maxTotal - r.total
}

func (b *cappedBody) Close() error {
	b.rec.mu.Lock()
	b.settle()
	b.rec.mu.Unlock()
	err := b.raw.Close()
	if b.release != nil {
		b.release()
	}
	return err
}

// wireLimit holds a compressed body to the per-response cap.
type wireLimit struct {
	r    io.Reader
	left int64
}

func (w *wireLimit) Read(p []byte) (int, error) {
	if w.left <= 0 {
		return 0, errResponseTooLarge
	}
	if int64(len(p)) > w.left {
		p = p[:w.left]
	}
	n, err := w.r.Read(p)
	w.left -= int64(n)
	return n, err
}

// eventFilter splits a server-sent event stream into events as it is read, the way
// sseData and the SDK split it (lines end at LF, a CR before it dropped; a blank line
// ends an event), and keeps those that can answer a request: events with data that is
// not a JSON-RPC request or notification (responses, the legacy endpoint event, and
// anything unparseable, which the probe must see as the server sent it). Comments,
// events without data, requests and notifications are dropped.
type eventFilter struct {
	pending   []byte // the event being read
	lineStart int    // offset in pending where the current line starts
	dropped   int64  // the bytes of the events dropped so far
}

// eventBytes is the size of the event being read.
func (f *eventFilter) eventBytes() int64 { return int64(len(f.pending)) }

// write feeds p to the filter and returns body with every event p completed and the
// filter keeps appended. The event being read grows by doubling up to eventLimit, the
// body up to bodyLimit.
func (f *eventFilter) write(body, p []byte, eventLimit, bodyLimit int64) []byte {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			f.pending = appendCapped(f.pending, p, 0, eventLimit)
			return body
		}
		f.pending = appendCapped(f.pending, p[:i+1], 0, eventLimit)
		p = p[i+1:]
		line := f.pending[f.lineStart : len(f.pending)-1]
		f.lineStart = len(f.pending)
		if len(bytes.TrimSuffix(line, []byte("\r"))) > 0 {
			continue
		}
		// A blank line ends the event.
		if keepEvent(f.pending) {
			body = appendCapped(body, f.pending, 0, bodyLimit)
		} else {
			f.dropped += int64(len(f.pending))
		}
		f.pending, f.lineStart = f.pending[:0], 0
	}
	return body
}

// keepEvent reports whether a complete event (raw lines, with their ends) is kept.
func keepEvent(raw []byte) bool {
	data := sseData(raw)
	if len(data) == 0 {
		return false
	}
	for _, d := range data {
		if m := object(d); m == nil || m["method"] == nil || m["result"] != nil || m["error"] != nil {
			return true
		}
	}
	return false
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
