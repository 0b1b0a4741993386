// Package checks holds Probity's check catalog and the pure checks that turn the
// Observation of one probe round into exactly one Result per catalog check, in catalog
// order. Gathering the Observation from a live endpoint is checks/probe's job; nothing
// here does I/O.
//
// The catalog (Catalog, SuiteVersion, SuiteDigest) is data: every check declares the
// statuses and reason keys it can give, each with typed parameters (KindInt, KindToken,
// KindBool) and a plain-English sentence that Describe fills in. Evaluate runs the
// checks and decides the round's coverage; Statement builds the in-toto statement of a
// signed round (attest.NewProbeStatement) and checks it once by the verifier's rules
// (attest.Check); Fingerprints gives the tool-list fingerprints the statement pins, and
// EvaluateRound computes them once for the checks, the statement and the store.
//
// Signed reasons carry only numbers, booleans and constant tokens of this suite, never
// server-supplied text. What a check found in server text goes into its Evidence,
// escaped and bounded, which is stored but never signed. A round's results are stored as
// JSON in the form EncodeResults writes, and every reader decodes them with
// DecodeResults (stored.go).
//
// # Judging like the spec
//
// Each check's function comment holds its rules; these are the ones an observer of the
// wire most often gets wrong (suite 2026.12):
//
//   - error_taxonomy (checkErrorTaxonomy) has three tiers: a JSON-RPC error is
//     VERIFIED, a result with isError true (the official TypeScript SDK's answer to an
//     unknown tool) OBSERVED_RISK result_is_error, any other result FAILED.
//   - transport (checkTransport) is signed only from an exchange that determines it,
//     also in an auth_required round: a handshake POSTed and answered with its JSON-RPC
//     response (Streamable HTTP), or a GET whose event stream began with the endpoint
//     event (legacy SSE). A 401 to the handshake's POST shows no transport: UNVERIFIED
//     challenged_before_transport.
//   - redirect_policy (checkRedirects) is VERIFIED same_host only for chains that stay
//     on the host over https and end; loops are FAILED, plain-http hops OBSERVED_RISK,
//     chains cut at the hop limit UNVERIFIED.
//   - A tools/list page or handshake answer that repeats a JSON member name in one
//     object is never VERIFIED: tools_list and discovery_handshake are FAILED
//     duplicate_member (the member named by a token, see IsMemberToken),
//     hidden_instructions cannot be none_found, and the round gets no full coverage.
//     An auth_required round (tools/list answered 401 after such a handshake) is still
//     signed: its statement carries nothing of the handshake's answer, and
//     discovery_handshake is UNVERIFIED credential_required there like every check
//     outside attest.AuthRequiredChecks.
//   - destructive_annotations says no_contradictory_hints, with the number of tools,
//     when no tool is named like a destructive operation, instead of "every one of the
//     0 tools … declares destructiveHint".
//   - tools_list's malformed_page names the page that failed (page = pages read + 1).
package checks
