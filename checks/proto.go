package checks

import (
	"slices"
)

// protocolVersions is the matrix of known MCP revisions, oldest first.
var protocolVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

// ProtocolVersions returns the MCP protocol revisions the suite knows, oldest first.
// protocol_revision accepts exactly these.
func ProtocolVersions() []string { return slices.Clone(protocolVersions) }

func knownVersion(v string) bool { return slices.Contains(protocolVersions, v) }

// versionToken is v when it is a known revision, else "unknown": a server-chosen string
// outside the matrix is never signed.
func versionToken(v string) string {
	if knownVersion(v) {
		return v
	}
	return "unknown"
}

// The exchanges that determine an endpoint's transport, as reason parameters of transport.
const (
	// EvidenceHandshakeResponse: a handshake (server/discover or initialize) POSTed to the
	// endpoint got its JSON-RPC response. The MCP transport spec's backwards-compatibility
	// rule: "If it succeeds, the client can assume this is a server supporting the new
	// Streamable HTTP transport."
	EvidenceHandshakeResponse = "handshake_response"
	// EvidenceSSEEndpointEvent: a GET of the endpoint opened an event stream whose first
	// event was "endpoint": "When the endpoint event arrives, the client can assume this
	// is a server running the old HTTP+SSE transport."
	EvidenceSSEEndpointEvent = "sse_endpoint_event"
)

// checkTransport relies on Transport, which the probe sets only from an exchange that
// determines it: streamable_http from a handshake POSTed to the endpoint that got its
// JSON-RPC response (EvidenceHandshakeResponse), sse from a GET whose event stream
// began with the endpoint event (EvidenceSSEEndpointEvent). Either stands whatever
// came after it, a 401 to tools/list or to the POSTs of the SSE session included, so an
// auth_required round signs the transport it saw before the login challenge. A 401 to
// the handshake's POST determines nothing: MCP's authorization spec has every HTTP
// transport answer a client without credentials with 401, and the transport spec's
// backwards-compatibility rule treats any 4xx to that POST as "not shown to be
// Streamable HTTP"; such a round is UNVERIFIED challenged_before_transport (Handshake.
// Unauthorized with no Transport).
func checkTransport(in *input) Result {
	switch t := in.obs.Transport; t {
	case TransportStreamableHTTP:
		return verified("detected", params("transport", string(t), "evidence", EvidenceHandshakeResponse))
	case TransportSSE:
		return verified("detected", params("transport", string(t), "evidence", EvidenceSSEEndpointEvent))
	}
	if in.obs.Handshake.Unauthorized || in.obs.Tools.Unauthorized {
		return unverified("challenged_before_transport", nil)
	}
	return unverified("not_detected", nil)
}

// checkProtocolRevision relies on Handshake.Completed(), Handshake.ProtocolVersion and
// Handshake.ProposedVersion. Dates in the matrix compare as strings.
func checkProtocolRevision(in *input) Result {
	h := in.obs.Handshake
	if h.Unauthorized && !h.Completed() {
		return unverified(credentialRequired.Key, nil)
	}
	if !h.Completed() {
		return unverified("no_handshake", nil)
	}
	v := h.ProtocolVersion
	if !knownVersion(v) {
		return failed("unknown_version", nil, Evidence{Field: "protocolVersion", Sample: escape(v, MaxSampleLen), Note: "the version the server chose"})
	}
	if knownVersion(h.ProposedVersion) && v > h.ProposedVersion {
		return failed("newer_than_proposed", params("version", v, "proposed", h.ProposedVersion))
	}
	return verified("negotiated", params("version", v))
}

// budgetStop reports whether the probe stopped for a reason of its own or a rate limit,
// rather than because of what the server answered.
func budgetStop(s StopReason) bool {
	return s == StopTimeBudget || s == StopRequests || s == StopRateLimited
}

// checkDiscoveryHandshake relies on Handshake (Discover*/Initialize*, Unauthorized,
// Error as evidence), Reach.Failure, Reach.FirstStatus and Stop. FAILED needs the
// endpoint to have answered and the initialize fallback to have been tried to its end.
func checkDiscoveryHandshake(in *input) Result {
	o := in.obs
	h := o.Handshake
	var ev []Evidence
	if h.Error != "" {
		ev = []Evidence{{Field: "handshake", Sample: escape(h.Error, MaxSampleLen), Note: "the handshake error"}}
	}
	switch {
	case h.DuplicateMember != "":
		// Parsers that keep the first value, keep the last or reject the document read
		// different handshakes (another version, server name or instructions).
		return failed("duplicate_member", params("member", memberToken(h.DuplicateMember)), ev...)
	case h.DiscoverOK:
		return verified("discover_ok", params("version", versionToken(h.ProtocolVersion)))
	case h.InitializeOK:
		return verified("initialize_fallback", params("version", versionToken(h.ProtocolVersion)))
	case h.Unauthorized:
		return unverified(credentialRequired.Key, nil, ev...)
	case (o.Reach.Failure != ReachOK && o.Reach.FirstStatus <= 0) || !(h.DiscoverTried || h.InitializeTried):
		// Not reached: no HTTP answer at all. A 5xx or a rate limit is an answer, judged
		// below like any other.
		return unverified("not_reached", nil, ev...)
	case budgetStop(o.Stop) || !h.InitializeTried:
		return unverified("handshake_interrupted", nil, ev...)
	}
	return failed("handshake_failed", nil, ev...)
}

// checkToolsList relies on Tools (Attempted, Unauthorized, Complete, Partial, Pages,
// len(Tools), DuplicateMember) and Stop: a page that failed while the probe was out of
// budget or rate limited is budget_exhausted, not malformed_page. Pages counts the pages
// read whole, so the page that ended the list is page Pages+1.
func checkToolsList(in *input) Result {
	o := in.obs
	t := o.Tools
	pages := max(t.Pages, 0)
	page := pages + 1
	switch {
	case t.Unauthorized:
		return unverified(credentialRequired.Key, nil)
	case t.Complete:
		return verified("complete", params("pages", pages, "tools", len(t.Tools)))
	case !t.Attempted:
		return unverified("not_attempted", nil)
	}
	switch t.Partial {
	case PartialCursorLoop:
		return failed("cursor_loop", params("pages", pages))
	case PartialError:
		if budgetStop(o.Stop) {
			return unverified("budget_exhausted", params("pages", pages))
		}
		return failed("malformed_page", params("page", page, "pages", pages))
	case PartialDuplicate:
		// A page whose objects repeat a member name lists different tools to parsers
		// that keep the first value, keep the last or reject it.
		return failed("duplicate_member", params("member", memberToken(t.DuplicateMember), "page", page))
	case PartialPageCap, PartialToolCap, PartialSizeCap:
		return unverified("cap_reached", params("cap", string(t.Partial), "pages", pages))
	case PartialBudget:
		return unverified("budget_exhausted", params("pages", pages))
	}
	return unverified("incomplete", params("pages", pages))
}

// checkErrorTaxonomy relies on ErrorProbe. It judges in three tiers: a JSON-RPC error is
// VERIFIED jsonrpc_error (MCP: "Unknown tool" is a protocol error); a result whose isError
// is true is OBSERVED_RISK result_is_error, which is what the official TypeScript SDK
// answers for an unknown tool (an agent sees a tool failure, not a protocol error, and
// may retry or misreport it); any other result is FAILED result_for_unknown_tool, the
// server pretending a tool exists that does not. A 401 or 403 to the call (a server that
// lists tools openly but guards calls) is UNVERIFIED credential_required; no HTTP status,
// 429 and 5xx are UNVERIFIED no_answer; any other status without a JSON-RPC error or
// result is FAILED non_jsonrpc_answer.
func checkErrorTaxonomy(in *input) Result {
	e := in.obs.ErrorProbe
	switch {
	case e.Withheld:
		return unverified("name_collision", nil)
	case !e.Attempted:
		return unverified("not_attempted", nil)
	case e.JSONRPCError:
		return verified("jsonrpc_error", params("code", e.Code))
	case e.Result && e.ResultIsError:
		return observedRisk("result_is_error", nil)
	case e.Result:
		return failed("result_for_unknown_tool", nil)
	case e.HTTPStatus == 401 || e.HTTPStatus == 403:
		return unverified(credentialRequired.Key, nil)
	case e.HTTPStatus <= 0 || e.HTTPStatus == 429 || e.HTTPStatus >= 500:
		return unverified("no_answer", params("status", max(e.HTTPStatus, 0)))
	}
	return failed("non_jsonrpc_answer", params("status", e.HTTPStatus))
}

// duplicateMembers are the tokens a repeated JSON member name is signed as, in the
// duplicate_member reasons (Handshake.DuplicateMember and ToolsList.DuplicateMember):
// the members of a result object, of a tool and of serverInfo that MCP defines, by
// name. Member names are server text, so any other member is signed as its group:
// "result.member" (another member of the result object, or a member nested in one),
// "tool.member" (another member of a tool), "serverInfo.member", "result" (the result
// itself repeated) or "message" (another member of the JSON-RPC message).
var duplicateMembers = []string{
	"message", "result", "result.member",
	"tools", "nextCursor", "protocolVersion", "supportedVersions", "capabilities", "instructions", "serverInfo", "_meta",
	"tool.member", "tool.name", "tool.title", "tool.description", "tool.inputSchema", "tool.outputSchema",
	"tool.annotations", "tool._meta", "tool.icons",
	"serverInfo.member", "serverInfo.name", "serverInfo.version", "serverInfo.title",
}

// IsMemberToken reports whether token is one a repeated member name is signed as.
func IsMemberToken(token string) bool { return slices.Contains(duplicateMembers, token) }

// memberToken is m when IsMemberToken(m), else "unknown": only constant tokens of this
// suite are signed.
func memberToken(m string) string {
	if IsMemberToken(m) {
		return m
	}
	return "unknown"
}
