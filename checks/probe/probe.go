// Package probe gathers a checks.Observation from a live remote MCP endpoint: one
// polite, credential-free round of the MCP handshake (server/discover proposing
// 2026-07-28, falling back to initialize proposing 2025-11-25), every page of
// tools/list, one call to a reserved nonexistent tool, and, on a 401, the login
// challenge and its RFC 9728 protected-resource metadata.
//
// Every connection, redirect hop and metadata fetch goes through the egress guard
// (package egress). Every HTTP exchange is recorded with its raw, capped body, and the
// tool list is read from those raw bytes, not from the SDK's parsed view, which drops
// malformed tools: Probity must see what every client sees. A probe never holds more
// than its budget: a total time, a byte cap per response and one for all responses
// together, a request count besides the tools/list pages, and page and tool caps for the
// list. It stops on 429 and on 503 with Retry-After.
//
// # What a probe sends
//
// A probe looks like an anonymous MCP client without any optional feature, so it sees
// the tool list every such client sees. Exactly this goes out:
//
//   - server/discover (a POST of the endpoint URL) with params._meta
//     io.modelcontextprotocol/protocolVersion "2026-07-28",
//     io.modelcontextprotocol/clientInfo {"name":"probity","version":Config.Version} and
//     io.modelcontextprotocol/clientCapabilities {}; then, unless it succeeds,
//     initialize with protocolVersion "2025-11-25", clientInfo as above and
//     capabilities {}, followed by notifications/initialized. Never roots, sampling,
//     elicitation or any experimental capability: servers such as the official
//     TypeScript reference server list more tools to a client that declares them (the
//     go-sdk client declares roots unless told otherwise).
//   - every page of tools/list (params {} or {"cursor":…}), and one tools/call of
//     ReservedToolName with arguments {} unless the list names it.
//   - on a legacy SSE endpoint (the POST answered 400, 404 or 405), one GET of the
//     endpoint for its event stream and the same requests POSTed to the message endpoint
//     it names, on the endpoint's origin only.
//   - on a 401, one GET of the RFC 9728 metadata URL (Accept: application/json).
//
// Every request carries User-Agent "probity/<Config.Version> (+<Config.DirectoryURL>/probe)"
// and Accept-Encoding: gzip; the JSON-RPC POSTs carry Content-Type: application/json
// and Accept: application/json, text/event-stream, server/discover Mcp-Method:
// server/discover and Mcp-Protocol-Version: 2026-07-28, the requests after a
// handshake its Mcp-Protocol-Version and the Mcp-Session-Id the server assigned.
// Authorization, Cookie and Proxy-Authorization are stripped from every request; a
// probe never sends credentials.
//
// A server-to-client request (roots/list, sampling/createMessage, elicitation/create,
// anything but ping) that reaches the probe's MCP session is answered with the JSON-RPC
// error -32601 "Method not found", as JSON-RPC 2.0 answers a method the receiver does
// not offer; MCP has parties use only negotiated capabilities, and an answer lets a
// server that waits on it go on. The input requests of a multi-round-trip result
// (2026-07-28) are never fulfilled. On a Streamable HTTP session negotiated with
// initialize the probe POSTs tools/list and tools/call itself and reads only the
// response to its own request: a request the server puts on that stream is not answered
// at all.
//
// # Reading what was answered
//
// A JSON-RPC message of a tools/list page or a handshake answer in which one object
// repeats a member name (compared after Unicode NFC, as attest's canonical form compares
// them) is read by no parser the same way: encoding/json keeps the last value, others
// the first, strict ones reject it. The probe reads no tools from such a page
// (ToolsList.Partial duplicate_member) and marks such a handshake
// (Handshake.DuplicateMember), naming the member by a constant token
// (see checks.IsMemberToken), never by its server-chosen name.
//
// The transport is recorded only from an exchange that determines it (see the
// transport check): a handshake POSTed to the endpoint and answered with its JSON-RPC
// response shows Streamable HTTP, a GET whose event stream begins with the endpoint
// event shows legacy SSE, whatever later requests are answered with, a 401 included.
//
// # Memory
//
// Every body the probe reads goes through one reader that holds it to the caps of
// Budget (see the recorder in record.go): each response, the metadata fetch and every
// redirect hop included, to MaxResponseBytes; the legacy SSE session stream, which
// carries every response of the session, to MaxResponseBytes per event and for all it
// carries besides responses, and to MaxTotalBytes in all; every byte read, decompressed,
// counts against MaxTotalBytes. The probe asks for gzip and decompresses it itself, so
// the decompressed bytes count against the caps; the compressed bytes of a response are
// held to that response's cap as well (read, never kept), but are not added to
// MaxTotalBytes. What was read is kept
// once: the tool list is a set of views of the recorded pages, snapshots share the
// bodies, a body cut at a cap keeps only a 64 KiB prefix, and event streams keep only
// the events that can answer a request. A probe's heap thus stays near what its caps
// let it read (the hostile corpus of checks/fixtures measures it; see
// BenchmarkHostileProbeMemory).
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
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/checks"
	"github.com/probity-dev/probity/checks/probe/egress"
	"github.com/probity-dev/probity/locator"
)

// The protocol versions the probe proposes.
const (
	DiscoverVersion   = "2026-07-28"
	InitializeVersion = "2025-11-25"
)

// ReservedToolName is the tool the probe calls to observe the server's error for an
// unknown tool. It is never called when a server lists a tool of that name.
const ReservedToolName = "probity_reserved_nonexistent_tool"

// Budget bounds one probe.
type Budget struct {
	Total            time.Duration // default 15 s
	MaxResponseBytes int64         // per response; default 4 MiB
	MaxTotalBytes    int64         // all responses of a probe together; default 32 MiB
	MaxRequests      int           // besides tools/list pages; default 8
	MaxPages         int           // default 100
	MaxTools         int           // default 10,000
}

func (b Budget) withDefaults() Budget {
	if b.Total <= 0 {
		b.Total = 15 * time.Second
	}
	if b.MaxResponseBytes <= 0 {
		b.MaxResponseBytes = 4 << 20
	}
	if b.MaxTotalBytes <= 0 {
		b.MaxTotalBytes = 32 << 20
	}
	if b.MaxRequests <= 0 {
		b.MaxRequests = 8
	}
	if b.MaxPages <= 0 {
		b.MaxPages = 100
	}
	if b.MaxTools <= 0 {
		b.MaxTools = attest.MaxTools
	}
	return b
}

// Config configures a Prober.
type Config struct {
	// Version is Probity's version, for the User-Agent.
	Version string
	// DirectoryURL is the public directory's base URL; the User-Agent points at
	// DirectoryURL + "/probe", where the probe is described.
	DirectoryURL string
	// AllowLoopback lets the probe reach 127.0.0.0/8 and ::1: tests, the fleet and the
	// demo only.
	AllowLoopback bool
	// RootCAs replaces the system roots when set (probity probe --ca-file).
	RootCAs *x509.CertPool
	// Resolver resolves names for the egress guard; nil uses the system resolver.
	Resolver egress.Resolver
	Budget   Budget
	// Approved is looked up per URL for the *_unchanged_vs_approved checks; nil: none.
	Approved func(url string) *attest.Fingerprints
	Now      func() time.Time
	Logger   *slog.Logger
}

// Prober runs probes. It is safe for concurrent use; each probe has its own
// connections.
type Prober struct {
	cfg   Config
	guard *egress.Guard
}

// New returns a Prober.
func New(cfg Config) *Prober {
	cfg.Budget = cfg.Budget.withDefaults()
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.DirectoryURL == "" {
		cfg.DirectoryURL = "https://probity.dev"
	}
	return &Prober{cfg: cfg, guard: egress.New(egress.Config{AllowLoopback: cfg.AllowLoopback, Resolver: cfg.Resolver})}
}

// UserAgent is the User-Agent every probe request carries.
func (p *Prober) UserAgent() string {
	return fmt.Sprintf("probity/%s (+%s/probe)", p.cfg.Version, strings.TrimSuffix(p.cfg.DirectoryURL, "/"))
}

// Probe runs one round against the endpoint at rawURL and returns what it observed.
// The error is non-nil only for a URL that cannot be probed at all (not http(s), user
// information, a guard-refused literal address); everything that happens on the wire is
// recorded in the Observation.
func (p *Prober) Probe(ctx context.Context, rawURL string) (*checks.Observation, error) {
	endpoint, err := locator.NormalizeURL(rawURL)
	if err != nil {
		return nil, err
	}
	u, _ := url.Parse(endpoint)
	obs := &checks.Observation{URL: endpoint, StartedAt: p.cfg.Now().UTC().Truncate(time.Millisecond)}
	if p.cfg.Approved != nil {
		obs.Approved = p.cfg.Approved(endpoint)
	}
	if err := p.guard.CheckURL(u); err != nil {
		obs.Reach = checks.Reach{Failure: checks.ReachBlocked, Detail: "the egress guard refused the URL"}
		obs.Stop = checks.StopUnreachable
		return obs, nil
	}

	b := p.cfg.Budget
	ctx, cancel := context.WithTimeout(ctx, b.Total)
	defer cancel()

	transport := p.guard.Transport()
	// The recorder asks for gzip and decompresses within the caps; the transport must
	// never decompress on its own, where no cap counts the decompressed bytes.
	transport.DisableCompression = true
	if p.cfg.RootCAs != nil {
		transport.TLSClientConfig.RootCAs = p.cfg.RootCAs
	}
	defer transport.CloseIdleConnections()
	rec := &recorder{base: transport, userAgent: p.UserAgent(), maxBody: b.MaxResponseBytes, maxTotal: b.MaxTotalBytes, origin: originOf(u), maxRequests: b.MaxRequests, maxPages: b.MaxPages, budget: ctx, start: time.Now()}
	hc := &http.Client{Transport: rec, CheckRedirect: p.redirectPolicy(obs)}

	r := &round{p: p, obs: obs, rec: rec, hc: hc, endpoint: endpoint}
	r.run(ctx)

	obs.Exchanges = rec.snapshot()
	rec.mu.Lock()
	for _, to := range rec.offOrigin {
		hop := checks.Redirect{From: endpoint, To: to}
		if tu, err := url.Parse(to); err == nil {
			hop.CrossHost = !strings.EqualFold(tu.Host, u.Host)
			hop.Downgrade = u.Scheme == "https" && tu.Scheme == "http"
		}
		obs.Redirects = append(obs.Redirects, hop)
	}
	rec.mu.Unlock()
	obs.Timings.TotalMs = time.Since(rec.start).Milliseconds()
	if rec.tls != nil {
		obs.TLS = tlsFacts(rec.tls)
	} else if rec.tlsErr != nil {
		obs.TLS = tlsFailure(rec.tlsErr)
	}
	if rec.stopped.Load() {
		obs.Stop = checks.StopRateLimited
		obs.RetryAfter = rec.retryAfter
	}
	if rec.overBudget.Load() && (obs.Stop == checks.StopNone || obs.Stop == checks.StopUnreachable) {
		obs.Stop = checks.StopRequests
	}
	if ctx.Err() != nil && obs.Stop == checks.StopNone {
		obs.Stop = checks.StopTimeBudget
	}
	p.cfg.Logger.Info("probe", "url", endpoint, "reach", string(obs.Reach.Failure), "transport", string(obs.Transport),
		"protocol", obs.Handshake.ProtocolVersion, "tools", len(obs.Tools.Tools), "pages", obs.Tools.Pages,
		"complete", obs.Tools.Complete, "stop", string(obs.Stop), "handshake_ms", obs.Timings.HandshakeMs,
		"tools_list_ms", obs.Timings.ToolsListMs, "total_ms", obs.Timings.TotalMs, "requests", len(obs.Exchanges), "bytes_read", rec.read())
	return obs, nil
}

// errRedirectLoop stops a redirect chain that comes back to a URL it visited.
var errRedirectLoop = errors.New("probe: redirect loop")

// redirectPolicy records every redirect hop and applies the guard's rules to it. A hop
// back to a URL of its own chain is recorded as a loop and not followed; a hop the guard
// refuses for the chain's length is recorded as having reached the limit.
func (p *Prober) redirectPolicy(obs *checks.Observation) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		prev := via[len(via)-1]
		hop := checks.Redirect{From: prev.URL.Redacted(), To: req.URL.Redacted(), CrossHost: !strings.EqualFold(prev.URL.Host, req.URL.Host)}
		if req.Response != nil {
			hop.Status = req.Response.StatusCode
		}
		err := p.guard.CheckRedirect(req, via)
		var be *egress.BlockedError
		if errors.As(err, &be) {
			switch be.Reason {
			case "redirect_downgrade":
				hop.Downgrade = true
			case "too_many_redirects":
				// Refused for its length, not its target.
				hop.LimitReached = true
			default:
				hop.Blocked = true
			}
		}
		if err == nil || hop.LimitReached {
			target := req.URL.String()
			if slices.ContainsFunc(via, func(v *http.Request) bool { return v.URL.String() == target }) {
				hop.Loop, hop.LimitReached = true, false
				err = errRedirectLoop
			}
		}
		obs.Redirects = append(obs.Redirects, hop)
		return err
	}
}

// round is the state of one probe.
type round struct {
	p        *Prober
	obs      *checks.Observation
	rec      *recorder
	hc       *http.Client
	endpoint string
	seq      int // ids of the requests post sends
}

func (r *round) run(ctx context.Context) {
	obs := r.obs
	started := time.Now()
	cs := r.handshake(ctx)
	obs.Timings.HandshakeMs = time.Since(started).Milliseconds()
	r.reach()
	if cs != nil {
		defer cs.Close()
		listStart := time.Now()
		r.listTools(ctx, cs)
		obs.Timings.ToolsListMs = time.Since(listStart).Milliseconds()
		r.callReserved(ctx, cs)
	}
	r.auth(ctx)
}

// handshake connects over Streamable HTTP, falling back to legacy SSE when the endpoint
// speaks only that, and records what the handshake showed.
func (r *round) handshake(ctx context.Context) *mcp.ClientSession {
	h := &r.obs.Handshake
	h.ProposedVersion = DiscoverVersion
	client := anonymousClient(r.p.cfg.Version)
	st := &mcp.StreamableClientTransport{Endpoint: r.endpoint, HTTPClient: r.hc, MaxRetries: -1, DisableStandaloneSSE: true, MaxEventSize: int(r.p.cfg.Budget.MaxResponseBytes)}
	cs, err := client.Connect(ctx, st, &mcp.ClientSessionOptions{ProtocolVersion: DiscoverVersion})
	r.readHandshake()
	if err != nil && !h.InitializeTried && !h.Completed() && !h.Unauthorized && !r.rec.stopped.Load() && ctx.Err() == nil && r.answered() {
		// An answer to server/discover that is not JSON-RPC at all (an HTML page, a
		// broken body) closes the SDK's connection before its initialize fallback is
		// sent: send initialize on a fresh connection.
		st = &mcp.StreamableClientTransport{Endpoint: r.endpoint, HTTPClient: r.hc, MaxRetries: -1, DisableStandaloneSSE: true, MaxEventSize: int(r.p.cfg.Budget.MaxResponseBytes)}
		cs, err = client.Connect(ctx, st, &mcp.ClientSessionOptions{ProtocolVersion: InitializeVersion})
		r.readHandshake()
	}
	if err == nil || h.Completed() {
		// A handshake answered over Streamable HTTP shows the transport, even when the
		// SDK then refuses the session (an unknown protocol version).
		r.obs.Transport = checks.TransportStreamableHTTP
	}
	if err == nil {
		return cs
	}
	h.Error = clip(err.Error(), 200)
	if h.Completed() || h.Unauthorized || r.rec.stopped.Load() || ctx.Err() != nil || !r.worthSSE() {
		return nil
	}
	// The endpoint answered, but not as Streamable HTTP: try legacy SSE.
	sse := &mcp.SSEClientTransport{Endpoint: r.endpoint, HTTPClient: r.hc, MaxEventSize: int(r.p.cfg.Budget.MaxResponseBytes)}
	cs, err = client.Connect(ctx, sse, &mcp.ClientSessionOptions{ProtocolVersion: InitializeVersion})
	r.readHandshake()
	if err != nil {
		// The endpoint event shows legacy SSE even when the session's POSTs are then
		// refused, with a 401 or otherwise.
		if r.sseEndpointShown() {
			r.obs.Transport = checks.TransportSSE
		}
		return nil
	}
	h.Error = ""
	r.obs.Transport = checks.TransportSSE
	return cs
}

// answered reports whether any request so far got an HTTP response.
func (r *round) answered() bool {
	return slices.ContainsFunc(r.rec.snapshot(), func(ex checks.Exchange) bool { return ex.Status != 0 })
}

// worthSSE reports whether the streamable attempt got an HTTP answer that suggests a
// legacy SSE server: 404 or 405 to the POST, or a non-MCP content type.
func (r *round) worthSSE() bool {
	for _, ex := range r.rec.snapshot() {
		if ex.Method != "server/discover" && ex.Method != "initialize" {
			continue
		}
		switch ex.Status {
		case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusBadRequest:
			return true
		}
	}
	return false
}

// readHandshake fills the handshake record from the raw discover and initialize
// exchanges.
func (r *round) readHandshake() {
	h := &r.obs.Handshake
	for _, ex := range r.rec.all() {
		switch ex.Method {
		case "server/discover", "initialize":
		default:
			continue
		}
		if ex.Status == http.StatusUnauthorized {
			h.Unauthorized = true
		}
		resp, ok := r.rec.responseTo(ex)
		if ex.Method == "server/discover" {
			h.DiscoverTried = true
		} else {
			h.InitializeTried = true
			h.ProposedVersion = InitializeVersion
		}
		if !ok || resp.Result == nil {
			continue
		}
		hr, ok := parseHandshake(resp.Result)
		if !ok {
			continue
		}
		if h.DuplicateMember == "" {
			h.DuplicateMember = duplicateMember(resp.Raw)
		}
		if ex.Method == "server/discover" {
			if !slices.Contains(hr.SupportedVersions, DiscoverVersion) {
				continue
			}
			h.DiscoverOK, h.Method, h.ProtocolVersion = true, "server/discover", DiscoverVersion
			if hr.Instructions != nil {
				h.Instructions = hr.Instructions
			}
			h.ServerName, h.ServerVersion = hr.ServerName, hr.ServerVersion
			continue
		}
		h.InitializeOK, h.Method, h.ProtocolVersion = hr.ProtocolVersion != "", "initialize", hr.ProtocolVersion
		h.Instructions = hr.Instructions
		h.ServerName, h.ServerVersion = hr.ServerName, hr.ServerVersion
	}
	// A 401 to one handshake request does not make the round auth_required when another
	// handshake request then succeeded: the server is open to clients.
	if h.Completed() {
		h.Unauthorized = false
	}
}

// reach records whether the endpoint answered at all.
func (r *round) reach() {
	obs := r.obs
	for _, ex := range r.rec.snapshot() {
		if ex.Status != 0 {
			obs.Reach.FirstStatus = ex.Status
			break
		}
	}
	switch {
	case r.rec.stopped.Load():
		obs.Reach.Failure = checks.ReachRateLimited
		obs.RetryAfter = r.rec.retryAfter
	case obs.Reach.FirstStatus >= 500 && !obs.Handshake.Completed():
		obs.Reach.Failure = checks.ReachHTTP5xx
	case obs.Reach.FirstStatus != 0:
		obs.Reach.Failure = checks.ReachOK
	case r.rec.failure != checks.ReachOK:
		obs.Reach.Failure, obs.Reach.Detail = r.rec.failure, r.rec.failDetail
	default:
		obs.Reach.Failure, obs.Reach.Detail = checks.ReachTimeout, "no response within the time budget"
	}
	if obs.Reach.Failure != checks.ReachOK && obs.Stop == checks.StopNone && !r.rec.stopped.Load() {
		obs.Stop = checks.StopUnreachable
	}
}

// listTools reads every page of tools/list from the raw responses, with a page cap, a
// tool cap and a seen-cursor set against loops.
func (r *round) listTools(ctx context.Context, cs *mcp.ClientSession) {
	t := &r.obs.Tools
	t.Attempted = true
	b := r.p.cfg.Budget
	seen := map[string]bool{}
	cursor := ""
	for {
		if t.Pages == b.MaxPages {
			t.Partial = checks.PartialPageCap
			return
		}
		before := r.rec.count("tools/list")
		var sdkErr error
		if r.direct() {
			params := map[string]any{}
			if cursor != "" {
				params["cursor"] = cursor
			}
			sdkErr = r.post(ctx, "tools/list", params)
		} else {
			_, sdkErr = cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		}
		ex, ok := r.rec.last("tools/list")
		if !ok || r.rec.count("tools/list") == before {
			// The request never went out (budget spent, or a 429 stopped the probe):
			// the previous page must not be read again.
			t.Partial = checks.PartialError
			if ctx.Err() != nil || r.rec.stopped.Load() || r.rec.overBudget.Load() {
				t.Partial = checks.PartialBudget
			}
			return
		}
		if ex.Status == http.StatusUnauthorized {
			t.Unauthorized = true
			t.Partial = checks.PartialError
			return
		}
		if ex.Truncated {
			t.Partial = checks.PartialSizeCap
			return
		}
		resp, found := r.rec.responseTo(ex)
		var page toolsPage
		// A JSON-RPC error is a failed page, not an empty last one; so is an HTTP error
		// status, whatever its body says (clients see an error). Legacy SSE answers a
		// POST with 202 and the page on the session stream.
		found = found && resp.Result != nil && (ex.Status == 0 || ex.Status < 300)
		if found {
			page, found = parseToolsPage(resp.Result)
		}
		if !found {
			switch {
			case ctx.Err() != nil, r.rec.overBudget.Load(), r.rec.stopped.Load():
				t.Partial = checks.PartialBudget
			default:
				t.Partial = checks.PartialError
			}
			r.p.cfg.Logger.Debug("tools/list page unreadable", "url", r.endpoint, "page", t.Pages, "sdk_error", errString(sdkErr))
			return
		}
		if m := duplicateMember(resp.Raw); m != "" {
			// Parsers disagree on what this page lists: it is read by none.
			t.Partial, t.DuplicateMember = checks.PartialDuplicate, m
			return
		}
		t.Pages++
		if len(t.Tools)+len(page.Tools) > b.MaxTools {
			t.Tools = append(t.Tools, page.Tools[:b.MaxTools-len(t.Tools)]...)
			t.Partial = checks.PartialToolCap
			return
		}
		t.Tools = append(t.Tools, page.Tools...)
		if page.NextCursor == "" {
			t.Complete = true
			return
		}
		if seen[page.NextCursor] || page.NextCursor == cursor {
			t.Partial = checks.PartialCursorLoop
			return
		}
		seen[page.NextCursor] = true
		cursor = page.NextCursor
	}
}

// direct reports whether tools/list and tools/call go out as plain JSON-RPC POSTs
// rather than through the SDK session: on a Streamable HTTP session negotiated with
// initialize (before 2026-07-28, whose requests carry per-request metadata the SDK
// adds). Probity reads these answers from the raw bytes anyway; the SDK's typed
// ListTools decodes and validates every tool's schema a second time, which was the
// largest share of a probe's CPU.
func (r *round) direct() bool {
	h := r.obs.Handshake
	return r.obs.Transport == checks.TransportStreamableHTTP && h.InitializeOK && h.Method == "initialize" && h.ProtocolVersion < DiscoverVersion
}

// post sends one JSON-RPC request on the session the handshake opened, with the
// session id and protocol version headers, and reads the whole answer (the recorder
// keeps it, capped).
func (r *round) post(ctx context.Context, method string, params any) error {
	r.seq++
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": fmt.Sprintf("probity-%d", r.seq), "method": method, "params": params})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", r.obs.Handshake.ProtocolVersion)
	if id := r.sessionID(); id != "" {
		req.Header.Set("Mcp-Session-Id", id)
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	// An event-stream answer may stay open after the response: stop reading once an
	// event has brought the response to this request.
	stream := strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if stream && n > 0 && (bytes.Contains(buf[:n], []byte("\n\n")) || bytes.Contains(buf[:n], []byte("\r\n\r\n"))) {
			if ex, ok := r.rec.last(method); ok {
				if _, done := r.rec.responseTo(ex); done {
					return nil
				}
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// sessionID is the Mcp-Session-Id the server assigned in its answer to initialize.
func (r *round) sessionID() string {
	ex, ok := r.rec.last("initialize")
	if !ok {
		return ""
	}
	return firstHeader(ex.Exchange, "Mcp-Session-Id")
}

// callReserved calls the reserved nonexistent tool once, unless the list names it.
func (r *round) callReserved(ctx context.Context, cs *mcp.ClientSession) {
	e := &r.obs.ErrorProbe
	for _, raw := range r.obs.Tools.Tools {
		// Decode only tools that could name it (the name may be escaped, so look for a
		// distinctive part of it), and read "name" by its exact spelling.
		if !bytes.Contains(raw, []byte("nonexistent")) && !bytes.Contains(raw, []byte(`\u`)) {
			continue
		}
		var name string
		if json.Unmarshal(object(raw)["name"], &name) == nil && name == ReservedToolName {
			e.Withheld = true
			return
		}
	}
	if !r.obs.Tools.Complete || r.rec.stopped.Load() || ctx.Err() != nil {
		return
	}
	e.Attempted = true
	if r.direct() {
		_ = r.post(ctx, "tools/call", map[string]any{"name": ReservedToolName, "arguments": map[string]any{}})
	} else {
		_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: ReservedToolName, Arguments: map[string]any{}})
	}
	ex, ok := r.rec.last("tools/call")
	if !ok {
		return
	}
	e.HTTPStatus = ex.Status
	if resp, ok := r.rec.responseTo(ex); ok {
		if resp.Error != nil {
			e.JSONRPCError, e.Code = true, resp.Error.Code
		} else {
			e.Result, e.ResultIsError = true, isToolError(resp.Result)
		}
	}
}

// auth parses the login challenges of every 401 and fetches the RFC 9728 metadata.
func (r *round) auth(ctx context.Context) {
	a := &r.obs.Auth
	var headers []string
	for _, ex := range r.rec.snapshot() {
		if ex.Status == http.StatusUnauthorized {
			a.Challenged = true
			// Each request of the handshake may repeat the same challenge; keep one.
			for _, h := range ex.Header["WWW-Authenticate"] {
				if !slices.Contains(headers, h) {
					headers = append(headers, h)
				}
			}
		}
	}
	if !a.Challenged {
		return
	}
	challenges, err := oauthex.ParseWWWAuthenticate(headers)
	if err != nil {
		a.ChallengeError = clip(err.Error(), 200)
	}
	for _, c := range challenges {
		a.Challenges = append(a.Challenges, checks.Challenge{Scheme: c.Scheme, Params: c.Params})
		if m := c.Params["resource_metadata"]; m != "" && a.MetadataURL == "" {
			a.MetadataURL = m
		}
	}
	if a.MetadataURL == "" {
		a.MetadataURL = wellKnownMetadataURL(r.endpoint)
	}
	if r.rec.stopped.Load() || ctx.Err() != nil {
		return
	}
	mu, err := url.Parse(a.MetadataURL)
	if err != nil || r.p.guard.CheckURL(mu) != nil {
		a.MetadataError = "metadata URL refused"
		return
	}
	// The metadata may live on another origin; its redirects are not the endpoint's.
	mf := &metadataFetch{}
	mctx := context.WithValue(ctx, metadataRequest{}, mf)
	req, err := http.NewRequestWithContext(mctx, http.MethodGet, a.MetadataURL, nil)
	if err != nil {
		a.MetadataError = "metadata URL invalid"
		return
	}
	req.Header.Set("Accept", "application/json")
	mc := &http.Client{Transport: r.rec, CheckRedirect: r.p.guard.CheckRedirect}
	resp, err := mc.Do(req)
	if err != nil {
		a.MetadataError = clip(err.Error(), 200)
		return
	}
	defer resp.Body.Close()
	a.MetadataStatus = resp.StatusCode
	// The recorder keeps what is read, held to the per-response cap: drain the body and
	// parse the recorded bytes rather than holding a second copy.
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		a.MetadataError = clip(err.Error(), 200)
		return
	}
	body := r.rec.metadataBody(mf)
	// An HTTP answer arrived: the check judges its status and, for 200, its body.
	a.MetadataFetched = true
	if resp.StatusCode != http.StatusOK {
		return
	}
	var prm oauthex.ProtectedResourceMetadata
	if err := json.Unmarshal(body, &prm); err != nil {
		a.MetadataError = "metadata is not a JSON object"
		return
	}
	a.Resource = prm.Resource
	a.AuthorizationServers = prm.AuthorizationServers
	a.ScopesSupported = prm.ScopesSupported
}

// wellKnownMetadataURL is RFC 9728 §3.1: the well-known path inserted between the host
// and the resource's path.
func wellKnownMetadataURL(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return ""
	}
	path := strings.TrimSuffix(u.Path, "/")
	return u.Scheme + "://" + u.Host + "/.well-known/oauth-protected-resource" + path
}

// tlsFacts reads the facts of a verified TLS connection.
func tlsFacts(cs *tls.ConnectionState) *checks.TLSFacts {
	f := &checks.TLSFacts{Version: tlsVersion(cs.Version), ChainVerified: true, HostnameVerified: true}
	if len(cs.PeerCertificates) > 0 {
		f.NotAfter = cs.PeerCertificates[0].NotAfter
	}
	return f
}

// tlsFailure describes a connection whose certificate did not verify.
func tlsFailure(err error) *checks.TLSFacts {
	f := &checks.TLSFacts{ChainVerified: true, HostnameVerified: true, Error: clip(err.Error(), 200)}
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	switch {
	case errors.As(err, &ua):
		f.ChainVerified = false
	case errors.As(err, &he):
		f.HostnameVerified = false
	case errors.As(err, &ci):
		f.ChainVerified = false
		if ci.Reason == x509.Expired && ci.Cert != nil {
			f.NotAfter = ci.Cert.NotAfter
		}
	default:
		f.ChainVerified = false
	}
	return f
}

func tlsVersion(v uint16) string {
	switch v {
	case tls.VersionTLS13:
		return "TLS1.3"
	case tls.VersionTLS12:
		return "TLS1.2"
	case tls.VersionTLS11:
		return "TLS1.1"
	case tls.VersionTLS10:
		return "TLS1.0"
	}
	return "unknown"
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return clip(err.Error(), 200)
}
