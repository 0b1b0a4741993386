package checks

import (
	"encoding/json"
	"time"

	"github.com/probity-dev/probity/attest"
)

// Observation is everything one probe round saw of one remote MCP endpoint, as plain
// data. checks/probe gathers it; the checks of the catalog are pure functions of it.
// Server-supplied text (tool descriptions, instructions, header values) appears here
// as received and must never reach a signed reason parameter.
type Observation struct {
	// URL is the normalized endpoint URL that was probed (the statement's subject name).
	URL       string
	StartedAt time.Time

	Reach      Reach
	TLS        *TLSFacts // nil when no TLS connection was made (plain http, or none at all)
	Redirects  []Redirect
	Transport  Transport
	Handshake  Handshake
	Tools      ToolsList
	ErrorProbe ErrorProbe
	Auth       Auth

	// Approved holds the maintainer-approved fingerprints; nil when none exist yet.
	Approved *attest.Fingerprints
	// Stop says why the probe ended early ("" when it ran to completion).
	Stop StopReason
	// RetryAfter is the delay a 429 or 503 asked for, when one did.
	RetryAfter time.Duration

	Timings   attest.Timings
	Exchanges []Exchange
}

// Transport is the MCP transport an endpoint was observed to speak.
type Transport string

// The transports.
const (
	TransportUnknown        Transport = ""
	TransportStreamableHTTP Transport = "streamable_http"
	TransportSSE            Transport = "sse"
)

// ReachFailure says why an endpoint could not be reached; "" means it answered.
type ReachFailure string

// The ways reaching an endpoint can fail.
const (
	ReachOK          ReachFailure = ""
	ReachDNS         ReachFailure = "dns"          // the name did not resolve
	ReachConnect     ReachFailure = "connect"      // TCP connection refused or unreachable
	ReachTimeout     ReachFailure = "timeout"      // no complete response within the budget
	ReachBlocked     ReachFailure = "blocked"      // the egress guard refused the address
	ReachTLS         ReachFailure = "tls"          // the TLS handshake failed
	ReachRateLimited ReachFailure = "rate_limited" // 429, or 503 with Retry-After
	ReachHTTP5xx     ReachFailure = "http_5xx"     // the handshake got an HTTP 5xx
)

// Reach records whether the endpoint answered at all.
type Reach struct {
	Failure ReachFailure
	// FirstStatus is the HTTP status of the first response (0 when none came).
	FirstStatus int
	// Detail is a short diagnostic for logs and evidence; never signed.
	Detail string
}

// TLSFacts are what the TLS handshake with the endpoint showed.
type TLSFacts struct {
	Version          string // "TLS1.2", "TLS1.3"
	ChainVerified    bool
	HostnameVerified bool
	NotAfter         time.Time // of the leaf certificate
	Error            string    // the verification error, when verification failed
}

// Redirect is one redirect hop the endpoint answered with.
type Redirect struct {
	From, To  string
	Status    int
	CrossHost bool
	Downgrade bool // https to http; refused, never followed
	Blocked   bool // the egress guard refused the target
	// Loop is set when the hop's target is a URL its own redirect chain visited before;
	// the probe stops the chain there.
	Loop bool
	// LimitReached is set when the hop was refused because the chain reached the
	// guard's hop limit, so where the chain ends was never seen.
	LimitReached bool
}

// Handshake records server/discover and initialize.
type Handshake struct {
	DiscoverTried   bool
	DiscoverOK      bool
	InitializeTried bool
	InitializeOK    bool
	// Method is the handshake that succeeded: "server/discover" or "initialize".
	Method          string
	ProposedVersion string
	// ProtocolVersion is the version the server chose.
	ProtocolVersion string
	ServerName      string
	ServerVersion   string
	Instructions    *string
	// Unauthorized is set when the handshake was answered with 401.
	Unauthorized bool
	// DuplicateMember names (as a token of this suite, see IsMemberToken) the first
	// member name that repeats in one object of the handshake's JSON-RPC response: parsers that
	// keep the first value, keep the last or reject the document read different
	// results. "" when none repeats.
	DuplicateMember string
	// Error describes a failed handshake; never signed.
	Error string
}

// Completed reports whether a handshake succeeded.
func (h Handshake) Completed() bool { return h.DiscoverOK || h.InitializeOK }

// ToolsList is every page of tools/list as received.
type ToolsList struct {
	Attempted bool
	// Tools are the raw tool objects of every page read, in order, as the server sent
	// them: malformed ones included.
	Tools []json.RawMessage
	Pages int
	// Complete is set when every page was read with no cap hit and no error; only a
	// complete list is fingerprinted.
	Complete bool
	// Partial says why an attempted list is not complete.
	Partial PartialReason
	// Unauthorized is set when tools/list was answered with 401.
	Unauthorized bool
	// DuplicateMember names (as a token of this suite, see IsMemberToken) the first
	// member name that repeats in one object of the page that ended the list with
	// PartialDuplicate.
	DuplicateMember string
}

// PartialReason says why a tool list is incomplete.
type PartialReason string

// The reasons a tool list can be partial.
const (
	PartialNone       PartialReason = ""
	PartialPageCap    PartialReason = "page_cap"    // more than 100 pages
	PartialToolCap    PartialReason = "tool_cap"    // more than 10,000 tools
	PartialSizeCap    PartialReason = "size_cap"    // a response over 4 MiB
	PartialCursorLoop PartialReason = "cursor_loop" // a cursor seen before
	PartialError      PartialReason = "error"       // a page failed or was malformed
	PartialBudget     PartialReason = "budget"      // the probe's budget ran out
	// PartialDuplicate: a page repeats a member name in one of its objects, so what it
	// lists depends on the parser.
	PartialDuplicate PartialReason = "duplicate_member"
)

// ErrorProbe records the one tools/call of a reserved nonexistent tool name.
type ErrorProbe struct {
	Attempted bool
	// Withheld is set when the tool list contains the reserved name.
	Withheld bool
	// JSONRPCError is set when the server answered with a JSON-RPC error object.
	JSONRPCError bool
	Code         int
	// Result is set when the server answered with a result instead of an error.
	Result bool
	// ResultIsError is set when that result is a tool error: its isError member is true.
	ResultIsError bool
	HTTPStatus    int
}

// Auth records a 401 login challenge and the RFC 9728 protected-resource metadata.
type Auth struct {
	// Challenged is set when any response was a 401.
	Challenged bool
	Challenges []Challenge
	// ChallengeError describes WWW-Authenticate headers that did not parse.
	ChallengeError string
	// MetadataURL is the resource_metadata URL from a challenge, or the well-known URL.
	MetadataURL     string
	MetadataFetched bool
	MetadataStatus  int
	MetadataError   string
	// The metadata document's members, when it was fetched and parsed.
	Resource             string
	AuthorizationServers []string
	ScopesSupported      []string
}

// Challenge is one WWW-Authenticate challenge.
type Challenge struct {
	Scheme string
	Params map[string]string
}

// StopReason says why a probe ended before running every step.
type StopReason string

// The reasons a probe stops early.
const (
	StopNone        StopReason = ""
	StopTimeBudget  StopReason = "time_budget"    // the total time budget ran out
	StopRequests    StopReason = "request_budget" // too many requests
	StopRateLimited StopReason = "rate_limited"   // 429, or 503 with Retry-After
	StopUnreachable StopReason = "unreachable"    // the endpoint did not answer
)

// Exchange is one HTTP request and response as recorded by the probe, for evidence and
// diagnostics; it is never signed.
type Exchange struct {
	Method    string // the JSON-RPC method, or the HTTP method for non-RPC requests
	URL       string
	Status    int
	Header    map[string][]string // selected response headers: WWW-Authenticate, Mcp-Session-Id, Content-Type, Retry-After, Location
	LatencyMs int64
	Body      []byte // capped
	Truncated bool
	Err       string
}
