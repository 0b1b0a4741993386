package attest

import (
	"encoding/json"
	"fmt"
)

// The constant identifiers of the attestation format.
const (
	// PayloadType is the DSSE payloadType of every Probity envelope.
	PayloadType = "application/vnd.in-toto+json"
	// StatementType is the in-toto Statement v1 type URI.
	StatementType = "https://in-toto.io/Statement/v1"
	// ProbePredicateType identifies the probe predicate, major version 1.
	ProbePredicateType = "https://probity.dev/attestation/probe/v1"
	// CanonicalProfile names the canonical encoding: NFC, then RFC 8785.
	CanonicalProfile = "nfc-jcs/v1"
)

// The struct fields of this file are declared in RFC 8785 order of their JSON names, so
// that encoding/json already writes members in canonical order and Marshal need not
// reorder them (TestTypesDeclareCanonicalOrder holds them to it). That is worth about a
// sixth of the time to canonicalize and sign a statement.

// Statement is an in-toto Statement v1 whose predicate is any Probity predicate.
type Statement struct {
	Type          string    `json:"_type"`
	Predicate     any       `json:"predicate"`
	PredicateType string    `json:"predicateType"`
	Subject       []Subject `json:"subject"`
}

// Subject names what a statement is about and pins it with a digest.
type Subject struct {
	Digest DigestSet `json:"digest"`
	Name   string    `json:"name"`
}

// DigestSet maps an algorithm name to a lowercase hex digest. Remote servers use sha256;
// npm packages use sha512, as their registry publishes it.
type DigestSet map[string]string

// Coverage says how much of a round a signed statement covers.
type Coverage string

// The coverages a signed probe statement can have. A round that never completed a
// handshake is not signed at all.
const (
	// CoverageFull: the handshake completed and the whole tool list was read.
	CoverageFull Coverage = "full"
	// CoverageAuthRequired: the round stopped at a 401 login challenge; only
	// reachability, redirect policy, transport and auth metadata are covered.
	CoverageAuthRequired Coverage = "auth_required"
)

// Coverages lists every Coverage value, in schema order.
var Coverages = []Coverage{CoverageFull, CoverageAuthRequired}

// CheckStatus is the outcome of one check in one round.
type CheckStatus string

// The four check statuses.
const (
	// StatusVerified: the check observed what it looks for and it holds.
	StatusVerified CheckStatus = "VERIFIED"
	// StatusFailed: a determinate fact contradicts the check.
	StatusFailed CheckStatus = "FAILED"
	// StatusObservedRisk: the check observed something worth a closer look.
	StatusObservedRisk CheckStatus = "OBSERVED_RISK"
	// StatusUnverified: the check could not observe; its reason says why.
	StatusUnverified CheckStatus = "UNVERIFIED"
)

// Statuses lists every CheckStatus value, in schema order.
var Statuses = []CheckStatus{StatusVerified, StatusFailed, StatusObservedRisk, StatusUnverified}

// TargetKinds lists the kinds of entries a statement can be about, in schema order.
var TargetKinds = []string{"remote", "npm", "pypi", "github"}

// AuthRequiredChecks are the checks an auth_required round covers; every other check in
// such a round is UNVERIFIED with the reason key ReasonCredentialRequired.
var AuthRequiredChecks = []string{"reachability", "redirect_policy", "transport", "auth_metadata"}

// ReasonCredentialRequired is the reason key of checks an auth_required round cannot cover.
const ReasonCredentialRequired = "credential_required"

// ProbePredicate is the predicate of https://probity.dev/attestation/probe/v1. It holds
// facts Probity observed and digests of third-party text, never the text itself.
type ProbePredicate struct {
	Checks          []CheckResult `json:"checks"`
	Coverage        Coverage      `json:"coverage"`
	Fingerprints    *Fingerprints `json:"fingerprints,omitempty"`
	ObservedAt      string        `json:"observedAt"`
	Pages           int           `json:"pages"`
	Probe           ProbeInfo     `json:"probe"`
	ProtocolVersion string        `json:"protocolVersion,omitempty"`
	RoundID         string        `json:"roundId"`
	ServerInfo      *ServerInfo   `json:"serverInfo,omitempty"`
	Target          Target        `json:"target"`
	Timings         Timings       `json:"timings"`
	ToolCount       int           `json:"toolCount"`
}

// ProbeInfo identifies the software that made the observation and the exact check suite.
type ProbeInfo struct {
	SuiteDigest  string `json:"suiteDigest"`
	SuiteVersion string `json:"suiteVersion"`
	ToolVersion  string `json:"toolVersion"`
}

// Target is the directory entry that was probed.
type Target struct {
	Kind string `json:"kind"`
	// Package is the ecosystem's package reference (purl without version) for package kinds.
	Package string `json:"package,omitempty"`
	URL     string `json:"url,omitempty"`
	Version string `json:"version,omitempty"`
}

// ServerInfo is the name and version a server reported in its handshake, bounded in
// length by the schema.
type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// Fingerprints are the four digests of a tools/list result defined in this package's doc.
type Fingerprints struct {
	Instructions string `json:"instructions"`
	Schema       string `json:"schema"`
	Surface      string `json:"surface"`
	Toolset      string `json:"toolset"`
}

// CheckResult is one check's outcome in one round.
type CheckResult struct {
	ID     string       `json:"id"`
	Reason *CheckReason `json:"reason,omitempty"`
	Status CheckStatus  `json:"status"`
}

// CheckReason explains a check's status with a stable key and bounded parameters:
// numbers or short constant tokens, never server-supplied text.
type CheckReason struct {
	Key    string         `json:"key"`
	Params map[string]any `json:"params,omitempty"`
}

// Timings are the round's phase durations in milliseconds.
type Timings struct {
	HandshakeMs int64 `json:"handshakeMs"`
	ToolsListMs int64 `json:"toolsListMs"`
	TotalMs     int64 `json:"totalMs"`
}

// Marshal encodes a Go value with encoding/json and returns its canonical form. Strings
// holding invalid UTF-8 are rejected rather than silently replaced.
func Marshal(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("attest: encode: %w", err)
	}
	return canonicalize(raw, true)
}
