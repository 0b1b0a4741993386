package checks

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/probity-dev/probity/attest"
)

// SuiteVersion names this release of the remote check suite; statements carry it as
// probe.suiteVersion next to SuiteDigest. Bump it together with any change to the
// catalog's data (ids, groups, statuses, reason keys, parameters).
const SuiteVersion = "2026.12.1"

// The groups of the catalog, as in DESIGN.md.
const (
	GroupReach = "reach" // can the endpoint be reached, how fast, over what TLS
	GroupProto = "proto" // does it speak MCP as specified
	GroupSec   = "sec"   // what an agent connecting to it is exposed to
	GroupDrift = "drift" // is its tool surface computable and unchanged
)

// The kinds of reason parameters. Every parameter is one of these, so a signed reason
// never carries server-supplied text.
const (
	// KindInt is an integer within ±2^53, signed as a JSON number.
	KindInt = "int"
	// KindToken is a constant token of this suite (never server text), at most 64
	// characters of [A-Za-z0-9_.:+/-].
	KindToken = "token"
	// KindBool is a JSON boolean.
	KindBool = "bool"
)

// Check is one entry of the catalog: a pure function of an Observation and the reasons
// it can give. The exported fields are the catalog's data; SuiteDigest covers ID, Group,
// Statuses and Reasons (keys, statuses, parameters), not the human wording.
type Check struct {
	ID    string
	Group string
	// Title says in plain words what the check looks at.
	Title string
	// Statuses are the statuses the check can give, in attest.Statuses order; they are
	// exactly the statuses of its Reasons.
	Statuses []attest.CheckStatus
	// Reasons are every reason the check can give. Every result carries one of them,
	// VERIFIED included.
	Reasons []ReasonSpec

	run func(*input) Result
}

// ReasonSpec declares one reason key of a check: the status it goes with, its
// parameters, and a plain-English template for humans.
type ReasonSpec struct {
	Key    string
	Status attest.CheckStatus
	Params []ParamSpec
	// Text is a sentence with {name} placeholders for the parameters; Describe fills it.
	// It also documents when the check gives this reason.
	Text string
}

// ParamSpec declares one parameter of a reason.
type ParamSpec struct {
	Name string
	// Kind is KindInt, KindToken or KindBool.
	Kind string
}

// Reason returns the ReasonSpec of key, if the check declares it.
func (c Check) Reason(key string) (ReasonSpec, bool) {
	for _, r := range c.Reasons {
		if r.Key == key {
			return r, true
		}
	}
	return ReasonSpec{}, false
}

func ip(name string) ParamSpec { return ParamSpec{Name: name, Kind: KindInt} }
func tp(name string) ParamSpec { return ParamSpec{Name: name, Kind: KindToken} }
func bp(name string) ParamSpec { return ParamSpec{Name: name, Kind: KindBool} }

func ok(key, text string, p ...ParamSpec) ReasonSpec {
	return ReasonSpec{Key: key, Status: attest.StatusVerified, Params: p, Text: text}
}
func fail(key, text string, p ...ParamSpec) ReasonSpec {
	return ReasonSpec{Key: key, Status: attest.StatusFailed, Params: p, Text: text}
}
func risk(key, text string, p ...ParamSpec) ReasonSpec {
	return ReasonSpec{Key: key, Status: attest.StatusObservedRisk, Params: p, Text: text}
}
func unv(key, text string, p ...ParamSpec) ReasonSpec {
	return ReasonSpec{Key: key, Status: attest.StatusUnverified, Params: p, Text: text}
}

// credentialRequired is added to every check outside attest.AuthRequiredChecks: an
// auth_required round gives it to all of them.
var credentialRequired = unv(attest.ReasonCredentialRequired,
	"The endpoint asked for a login (HTTP 401) before this could be observed; Probity never sends credentials.")

func fingerprintReasons(what string) []ReasonSpec {
	return []ReasonSpec{
		ok("computed", "The "+what+" fingerprint was computed over the whole tool list of {tools} tools.", ip("tools")),
		fail("unfingerprintable", "The tool list was read completely, but a tool in it is not a JSON object with a string name, so no "+what+" fingerprint exists."),
		unv("partial_list", "Only part of the tool list was read ({tools} tools), and a partial list is never fingerprinted as whole.", ip("tools")),
		unv("no_list", "No tool list was read in this round."),
	}
}

func baselineReasons(what string) []ReasonSpec {
	return []ReasonSpec{
		ok("unchanged", "The "+what+" fingerprint equals the one the maintainer approved."),
		fail("changed", "The "+what+" fingerprint differs from the one the maintainer approved."),
		unv("no_baseline", "The maintainer has not approved a "+what+" fingerprint yet, so there is nothing to compare with."),
		unv("no_fingerprint", "This round has no "+what+" fingerprint (the tool list was not read completely or could not be fingerprinted)."),
	}
}

// catalog is the check catalog, in DESIGN.md's order.
var catalog = buildCatalog([]Check{
	{
		ID: "reachability", Group: GroupReach, Title: "The endpoint answers",
		Reasons: []ReasonSpec{
			ok("answered", "The endpoint answered with HTTP status {status}; any status counts, a 401 login challenge included.", ip("status")),
			fail("dns_failure", "The host name did not resolve."),
			fail("connect_failure", "The TCP connection was refused or the host was unreachable."),
			fail("timeout", "No complete response arrived within the time budget."),
			fail("tls_handshake_failed", "The TLS handshake with the endpoint failed."),
			fail("http_5xx", "The handshake was answered with the server error HTTP {status}.", ip("status")),
			unv("blocked_by_egress_guard", "The endpoint's address is not a public unicast address, so Probity did not connect to it."),
			unv("rate_limited", "The endpoint asked Probity to slow down (HTTP 429, or 503 with Retry-After) and asked it to wait {retryAfterS} seconds (0 when it did not say).", ip("retryAfterS")),
			unv("no_response", "The probe recorded no HTTP response and no reason for its absence."),
			unv("unrecognized_failure", "The probe reported a failure this version of the suite does not know."),
		},
		run: checkReachability,
	},
	{
		ID: "latency", Group: GroupReach, Title: "How long the handshake and the tool list took",
		Reasons: []ReasonSpec{
			ok("measured", "The handshake took {handshakeMs} ms and reading the tool list took {toolsListMs} ms.", ip("handshakeMs"), ip("toolsListMs")),
			ok("handshake_only", "The handshake took {handshakeMs} ms; the tool list was not read.", ip("handshakeMs")),
			unv("not_measured", "No handshake completed, so nothing was timed."),
		},
		run: checkLatency,
	},
	{
		ID: "tls_certificate", Group: GroupReach, Title: "The TLS certificate is trusted, matches the host and is not about to expire",
		Reasons: []ReasonSpec{
			ok("valid", "The certificate chain is trusted, matches the host name and expires in {daysLeft} days; the connection used {version}.", ip("daysLeft"), tp("version")),
			risk("expires_soon", "The certificate is valid but expires in {daysLeft} days (fewer than 14).", ip("daysLeft")),
			fail("expired", "The certificate expired {daysAgo} days before the round started.", ip("daysAgo")),
			fail("chain_untrusted", "The certificate chain does not lead to a trusted root."),
			fail("hostname_mismatch", "The certificate does not name the endpoint's host."),
			fail("plain_http", "The endpoint URL uses plain http://, so nothing it sends or receives is protected."),
			unv("no_tls_connection", "No TLS connection was made, so there was no certificate to check."),
			unv("expiry_unknown", "The certificate is trusted and matches the host, but its expiry or the round's start time was not recorded."),
		},
		run: checkTLS,
	},
	{
		ID: "transport", Group: GroupProto, Title: "The MCP transport the endpoint speaks",
		Reasons: []ReasonSpec{
			ok("detected", "The endpoint was observed speaking {transport}: {evidence}. This stands even when a login was asked for afterwards.", tp("transport"), tp("evidence")),
			unv("challenged_before_transport", "The endpoint asked for a login (HTTP 401) before any exchange showed its transport: every MCP transport answers a request without credentials with 401, so the 401 itself shows none."),
			unv("not_detected", "Neither Streamable HTTP nor the legacy SSE transport was observed."),
		},
		run: checkTransport,
	},
	{
		ID: "protocol_revision", Group: GroupProto, Title: "The negotiated MCP protocol version is a known one",
		Reasons: []ReasonSpec{
			ok("negotiated", "The server chose protocol version {version}, a known revision no newer than the one Probity proposed.", tp("version")),
			fail("unknown_version", "The server chose a protocol version that is not a known MCP revision."),
			fail("newer_than_proposed", "The server chose {version}, newer than the {proposed} Probity proposed, so negotiation failed.", tp("version"), tp("proposed")),
			unv("no_handshake", "No handshake completed, so no version was negotiated."),
		},
		run: checkProtocolRevision,
	},
	{
		ID: "discovery_handshake", Group: GroupProto, Title: "server/discover, or its initialize fallback, works",
		Reasons: []ReasonSpec{
			ok("discover_ok", "server/discover succeeded and negotiated {version}.", tp("version")),
			fail("duplicate_member", "The handshake's answer repeats the member name {member} in one object, so clients that keep the first value, keep the last or reject it read different handshakes.", tp("member")),
			ok("initialize_fallback", "server/discover did not succeed; the initialize fallback did and negotiated {version}.", tp("version")),
			fail("handshake_failed", "The endpoint answered, but neither server/discover nor initialize succeeded."),
			unv("handshake_interrupted", "The handshake was cut short by the probe's budget or a rate limit."),
			unv("not_reached", "The endpoint was not reached, so no handshake was attempted."),
		},
		run: checkDiscoveryHandshake,
	},
	{
		ID: "tools_list", Group: GroupProto, Title: "Every page of tools/list was read",
		Reasons: []ReasonSpec{
			ok("complete", "Every page of tools/list was read ({pages} pages): {tools} tools.", ip("pages"), ip("tools")),
			fail("cursor_loop", "The server sent a cursor it had sent before, after {pages} pages; following it would never end.", ip("pages")),
			fail("malformed_page", "Page {page} of tools/list was malformed or answered with an error, after {pages} pages were read.", ip("page"), ip("pages")),
			fail("duplicate_member", "Page {page} of tools/list repeats the member name {member} in one object, so clients that keep the first value, keep the last or reject it see different tools.", tp("member"), ip("page")),
			unv("cap_reached", "Reading stopped at a cap ({cap}: 100 pages, 10,000 tools or 4 MiB per response) after {pages} pages; the list is partial.", tp("cap"), ip("pages")),
			unv("budget_exhausted", "The probe's budget ran out after {pages} pages; the list is partial.", ip("pages")),
			unv("incomplete", "The list was not read completely after {pages} pages, for a reason the probe did not record.", ip("pages")),
			unv("not_attempted", "tools/list was not requested in this round."),
		},
		run: checkToolsList,
	},
	{
		ID: "error_taxonomy", Group: GroupProto, Title: "Calling a nonexistent tool gets a JSON-RPC error",
		Reasons: []ReasonSpec{
			ok("jsonrpc_error", "Calling a reserved nonexistent tool name got a JSON-RPC error with code {code}.", ip("code")),
			risk("result_is_error", "Calling a reserved nonexistent tool name got a tool result with isError true instead of a JSON-RPC error: an agent sees a failed tool call, not an unknown tool."),
			fail("result_for_unknown_tool", "Calling a reserved nonexistent tool name got a successful result, as if the tool existed."),
			fail("non_jsonrpc_answer", "Calling a reserved nonexistent tool name got HTTP {status} without a JSON-RPC answer.", ip("status")),
			unv("no_answer", "Calling a reserved nonexistent tool name got no usable answer (HTTP {status}: none, rate limited or a server error).", ip("status")),
			unv("name_collision", "The server lists a tool with the reserved name, so the call was withheld."),
			unv("not_attempted", "The nonexistent tool was not called in this round."),
		},
		run: checkErrorTaxonomy,
	},
	{
		ID: "redirect_policy", Group: GroupSec, Title: "Redirects stay on the host and on https",
		Reasons: []ReasonSpec{
			ok("no_redirect", "The endpoint answered without redirecting."),
			ok("same_host", "The endpoint redirected {hops} times, always to the same host over https, and every chain ended.", ip("hops")),
			risk("cross_host", "The endpoint redirected to another host ({hops} redirects in all).", ip("hops")),
			risk("plain_http_hop", "{plainHops} of the {hops} redirects were answered over plain http, where anyone on the path can rewrite where they lead.", ip("hops"), ip("plainHops")),
			fail("downgrade_refused", "The endpoint redirected from https to plain http; Probity refused to follow ({hops} redirects in all).", ip("hops")),
			fail("blocked_target", "The endpoint redirected to an address that is not public; Probity refused to follow ({hops} redirects in all).", ip("hops")),
			fail("redirect_loop", "The endpoint redirected back to a URL it had already redirected from, a loop that never ends ({hops} redirects in all).", ip("hops")),
			unv("hop_limit", "A redirect chain reached Probity's limit of 3 hops and was not followed further, so where it ends was not seen ({hops} redirects in all).", ip("hops")),
			unv("not_reached", "The endpoint did not answer, so no redirect could be observed."),
		},
		run: checkRedirects,
	},
	{
		ID: "auth_metadata", Group: GroupSec, Title: "The login challenge and its RFC 9728 metadata are consistent",
		Reasons: []ReasonSpec{
			ok("metadata_consistent", "The 401 challenge leads to RFC 9728 metadata that names this endpoint and {authorizationServers} https authorization servers, with scopes consistent with the challenge.", ip("authorizationServers")),
			risk("challenge_without_header", "The endpoint answered 401 without a WWW-Authenticate challenge, so a client cannot learn how to log in."),
			risk("challenge_unparseable", "The endpoint's WWW-Authenticate header could not be parsed."),
			risk("no_metadata", "The 401 challenge points to no protected-resource metadata and none is published at the well-known URL."),
			fail("metadata_unreachable", "The protected-resource metadata answered with HTTP {status}.", ip("status")),
			fail("metadata_invalid", "The protected-resource metadata is not a valid RFC 9728 JSON document (or lacks its resource)."),
			fail("resource_mismatch", "The metadata's resource names something other than this endpoint (neither its URL nor a parent path on the same origin)."),
			fail("no_authorization_server", "The metadata names no authorization server."),
			fail("authorization_server_not_https", "{servers} of the authorization servers in the metadata are not https URLs.", ip("servers")),
			fail("scope_contradiction", "The challenge asks for {scopes} scopes that the metadata's scopes_supported does not list.", ip("scopes")),
			unv("metadata_not_fetched", "The metadata's location is known but it could not be fetched (network failure, budget, or the egress guard)."),
			unv("no_challenge", "No response was a 401 login challenge, so there was nothing to check."),
		},
		run: checkAuthMetadata,
	},
	{
		ID: "hidden_instructions", Group: GroupSec, Title: "No invisible characters or text aimed at the model in tool text",
		Reasons: []ReasonSpec{
			ok("none_found", "No invisible characters and no model-directed text were found in the names, titles, descriptions, parameter descriptions and instructions of {tools} tools.", ip("tools")),
			risk("invisible_characters", "{findings} runs of invisible characters (zero-width, bidi controls, tag characters, private use, escapes or other controls) were found in {tools} tools (server instructions affected: {instructions}).", ip("tools"), ip("findings"), bp("instructions")),
			risk("model_directed_text", "{findings} passages of text aimed at the model (override phrases, pseudo-system tags, concealment from the user, sensitive paths to read or send) were found in {tools} tools (server instructions affected: {instructions}).", ip("tools"), ip("findings"), bp("instructions")),
			risk("invisible_and_model_directed", "Both invisible characters and text aimed at the model were found: {findings} findings in {tools} tools (server instructions affected: {instructions}).", ip("tools"), ip("findings"), bp("instructions")),
			unv("partial_list", "Nothing was found in the {tools} tools read, but the tool list was not read completely.", ip("tools")),
			unv("duplicate_member", "Nothing was found, but the handshake's answer repeats the member name {member}, so other clients may read other instructions than the ones scanned.", tp("member")),
			unv("scan_incomplete", "Nothing was found, but the {tools} tools and instructions hold more text than one round scans for model-directed text (64 MiB of candidate text).", ip("tools")),
			unv("no_text_observed", "No tool and no server instructions were observed, so there was no text to scan."),
		},
		run: checkHiddenInstructions,
	},
	{
		ID: "destructive_annotations", Group: GroupSec, Title: "Tools named like destructive operations declare it",
		Reasons: []ReasonSpec{
			ok("consistent", "Every one of the {destructiveTools} tools named like a destructive operation declares destructiveHint, and no tool's hints contradict each other.", ip("destructiveTools")),
			ok("no_contradictory_hints", "None of the {tools} tools is named like a destructive operation, and none declares readOnlyHint and destructiveHint both true.", ip("tools")),
			risk("missing_destructive_hint", "{tools} tools are named like destructive operations (delete, drop, exec and the like) without declaring destructiveHint true; {contradictory} tools have contradictory hints.", ip("tools"), ip("contradictory")),
			risk("contradictory_hints", "{tools} tools declare both readOnlyHint and destructiveHint true.", ip("tools")),
			unv("partial_list", "Nothing inconsistent was found, but the tool list was not read completely."),
			unv("no_tools", "The server lists no tools, or no tool list was read."),
		},
		run: checkDestructive,
	},
	{
		ID: "toolset_fingerprint", Group: GroupDrift, Title: "The fingerprint of the tool names",
		Reasons: fingerprintReasons("toolset"), run: fingerprintCheck,
	},
	{
		ID: "schema_fingerprint", Group: GroupDrift, Title: "The fingerprint of the tool names and input schemas",
		Reasons: fingerprintReasons("schema"), run: fingerprintCheck,
	},
	{
		ID: "surface_fingerprint", Group: GroupDrift, Title: "The fingerprint of everything an agent sees of the tools",
		Reasons: fingerprintReasons("surface"), run: fingerprintCheck,
	},
	{
		ID: "toolset_unchanged_vs_approved", Group: GroupDrift, Title: "The tool names equal the approved baseline",
		Reasons: baselineReasons("toolset"), run: baselineCheck(func(f *attest.Fingerprints) string { return f.Toolset }),
	},
	{
		ID: "schema_unchanged_vs_approved", Group: GroupDrift, Title: "The tool schemas equal the approved baseline",
		Reasons: baselineReasons("schema"), run: baselineCheck(func(f *attest.Fingerprints) string { return f.Schema }),
	},
	{
		ID: "surface_unchanged_vs_approved", Group: GroupDrift, Title: "The whole tool surface equals the approved baseline",
		Reasons: baselineReasons("surface"), run: baselineCheck(func(f *attest.Fingerprints) string { return f.Surface }),
	},
})

// buildCatalog adds credential_required to the checks outside auth_required coverage and
// derives each check's Statuses from its reasons.
func buildCatalog(cs []Check) []Check {
	for i := range cs {
		c := &cs[i]
		if !slices.Contains(attest.AuthRequiredChecks, c.ID) {
			if _, has := c.Reason(attest.ReasonCredentialRequired); !has {
				c.Reasons = append(c.Reasons, credentialRequired)
			}
		}
		c.Statuses = nil
		for _, st := range attest.Statuses {
			if slices.ContainsFunc(c.Reasons, func(r ReasonSpec) bool { return r.Status == st }) {
				c.Statuses = append(c.Statuses, st)
			}
		}
	}
	return cs
}

// Catalog returns a deep copy of the check catalog, in evaluation order.
func Catalog() []Check {
	out := make([]Check, len(catalog))
	for i, c := range catalog {
		c.Statuses = slices.Clone(c.Statuses)
		c.Reasons = slices.Clone(c.Reasons)
		for j := range c.Reasons {
			c.Reasons[j].Params = slices.Clone(c.Reasons[j].Params)
		}
		out[i] = c
	}
	return out
}

// CheckIDs returns the ids of the catalog's checks, in order.
func CheckIDs() []string {
	ids := make([]string, len(catalog))
	for i, c := range catalog {
		ids[i] = c.ID
	}
	return ids
}

func checkByID(id string) (*Check, bool) {
	for i := range catalog {
		if catalog[i].ID == id {
			return &catalog[i], true
		}
	}
	return nil, false
}

var suiteDigest = sync.OnceValue(func() string { return digestOf(catalog) })

// digestOf computes SuiteDigest over a catalog.
func digestOf(cs []Check) string {
	type param struct {
		Kind string `json:"kind"`
		Name string `json:"name"`
	}
	type reason struct {
		Key    string  `json:"key"`
		Params []param `json:"params"`
		Status string  `json:"status"`
	}
	type check struct {
		Group    string               `json:"group"`
		ID       string               `json:"id"`
		Reasons  []reason             `json:"reasons"`
		Statuses []attest.CheckStatus `json:"statuses"`
	}
	var data struct {
		Checks []check `json:"checks"`
	}
	for _, c := range cs {
		cc := check{Group: c.Group, ID: c.ID, Statuses: c.Statuses, Reasons: []reason{}}
		for _, r := range c.Reasons {
			rr := reason{Key: r.Key, Status: string(r.Status), Params: []param{}}
			for _, p := range r.Params {
				rr.Params = append(rr.Params, param{Kind: p.Kind, Name: p.Name})
			}
			cc.Reasons = append(cc.Reasons, rr)
		}
		data.Checks = append(data.Checks, cc)
	}
	b, err := attest.Marshal(data)
	if err != nil {
		// The catalog is constant data; failing to encode it is a build defect.
		panic("checks: cannot encode the catalog: " + err.Error())
	}
	return attest.Digest(b)
}

// SuiteDigest is attest.Digest of the canonical JSON of the catalog's data: for each
// check in order its id, group and statuses, and for each reason its key, status and
// parameter names and kinds (not the human wording). A statement names the exact suite
// that produced it with this digest and SuiteVersion.
func SuiteDigest() string { return suiteDigest() }

// Describe renders r's reason in plain words, its parameters filled in. A result whose
// check or reason is not in the catalog is described by its id, status and key.
func Describe(r Result) string {
	c, found := checkByID(r.ID)
	if r.Reason == nil {
		if found {
			return c.Title + ": " + string(r.Status)
		}
		return r.ID + ": " + string(r.Status)
	}
	spec, known := ReasonSpec{}, false
	if found {
		spec, known = c.Reason(r.Reason.Key)
	}
	if !known {
		return r.ID + ": " + string(r.Status) + " (" + r.Reason.Key + ")"
	}
	var b strings.Builder
	text := spec.Text
	for {
		i := strings.IndexByte(text, '{')
		if i < 0 {
			b.WriteString(text)
			break
		}
		j := strings.IndexByte(text[i:], '}')
		if j < 0 {
			b.WriteString(text)
			break
		}
		b.WriteString(text[:i])
		name := text[i+1 : i+j]
		v, ok := r.Reason.Params[name]
		if phrase, found := tokenPhrases[name+"="+formatParam(v)]; ok && found {
			b.WriteString(phrase)
		} else if ok {
			b.WriteString(formatParam(v))
		} else {
			b.WriteString("?")
		}
		text = text[i+j+1:]
		if ok && isOne(v) {
			text = singular(text)
		}
	}
	return b.String()
}

// tokenPhrases words the suite's tokens that a sentence reads better spelled out, by
// "parameter=token"; any other token is written as it is.
var tokenPhrases = map[string]string{
	"transport=" + string(TransportStreamableHTTP): "the Streamable HTTP transport",
	"transport=" + string(TransportSSE):            "the legacy HTTP+SSE transport",
	"evidence=" + EvidenceHandshakeResponse:        "a handshake POSTed to it got its JSON-RPC answer",
	"evidence=" + EvidenceSSEEndpointEvent:         "a GET opened an event stream whose first event named the message endpoint",
}

// pluralNouns are the counted nouns of the catalog's texts, for "1 tool", not "1 tools".
var pluralNouns = []string{"pages", "tools", "days", "times", "findings", "hops", "servers", "scopes"}

func isOne(v any) bool {
	switch x := v.(type) {
	case int:
		return x == 1
	case int64:
		return x == 1
	case float64:
		return x == 1
	}
	return false
}

// singularVerbs are the verbs that follow a counted noun in the catalog's texts, with
// their singular: "1 tool is named", not "1 tool are named".
var singularVerbs = map[string]string{"are": "is", "were": "was", "have": "has", "declare": "declares", "do": "does"}

// singular turns the counted noun at the start of text (" tools ...") into its singular,
// and the verb right after it, if any.
func singular(text string) string {
	for _, n := range pluralNouns {
		word := strings.TrimRight(n, ",;")
		if strings.HasPrefix(text, " "+word) {
			rest := text[1+len(word):]
			if rest == "" || !isLetter(rest[0]) {
				return " " + strings.TrimSuffix(word, "s") + singularVerb(rest)
			}
		}
	}
	return text
}

// singularVerb turns the verb at the start of rest (" are named ...") into its singular.
func singularVerb(rest string) string {
	for plural, one := range singularVerbs {
		if after, ok := strings.CutPrefix(rest, " "+plural); ok && (after == "" || !isLetter(after[0])) {
			return " " + one + after
		}
	}
	return rest
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func formatParam(v any) string {
	switch x := v.(type) {
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float64:
		// A parameter read back from stored JSON: signed parameters are integers.
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case json.Number:
		return x.String()
	case string:
		return x
	}
	return "?"
}
