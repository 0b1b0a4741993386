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

// checkTransport relies on Transport, which the probe sets only from what it observed
// (a Streamable HTTP response, or the legacy SSE endpoint event).
func checkTransport(in *input) Result {
	switch t := in.obs.Transport; t {
	case TransportStreamableHTTP, TransportSSE:
		return verified("detected", params("transport", string(t)))
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
// len(Tools)) and Stop: a page that failed while the probe was out of budget or rate
// limited is budget_exhausted, not malformed_page.
func checkToolsList(in *input) Result {
	o := in.obs
	t := o.Tools
	pages := max(t.Pages, 0)
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
		return failed("malformed_page", params("pages", pages))
	case PartialPageCap, PartialToolCap, PartialSizeCap:
		return unverified("cap_reached", params("cap", string(t.Partial), "pages", pages))
	case PartialBudget:
		return unverified("budget_exhausted", params("pages", pages))
	}
	return unverified("incomplete", params("pages", pages))
}

// checkErrorTaxonomy relies on ErrorProbe. A 401 or 403 to the call (a server that lists
// tools openly but guards calls) is UNVERIFIED credential_required; no HTTP status, 429
// and 5xx are UNVERIFIED no_answer; any other status without a JSON-RPC error or result
// is FAILED non_jsonrpc_answer.
func checkErrorTaxonomy(in *input) Result {
	e := in.obs.ErrorProbe
	switch {
	case e.Withheld:
		return unverified("name_collision", nil)
	case !e.Attempted:
		return unverified("not_attempted", nil)
	case e.JSONRPCError:
		return verified("jsonrpc_error", params("code", e.Code))
	case e.Result:
		return failed("result_for_unknown_tool", nil)
	case e.HTTPStatus == 401 || e.HTTPStatus == 403:
		return unverified(credentialRequired.Key, nil)
	case e.HTTPStatus <= 0 || e.HTTPStatus == 429 || e.HTTPStatus >= 500:
		return unverified("no_answer", params("status", max(e.HTTPStatus, 0)))
	}
	return failed("non_jsonrpc_answer", params("status", e.HTTPStatus))
}
