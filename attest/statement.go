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

// Statement is an in-toto Statement v1 whose predicate is any Probity predicate.
type Statement struct {
	Type          string    `json:"_type"`
	Subject       []Subject `json:"subject"`
	PredicateType string    `json:"predicateType"`
	Predicate     any       `json:"predicate"`
}

// Subject names what a statement is about and pins it with a digest.
type Subject struct {
	Name   string    `json:"name"`
	Digest DigestSet `json:"digest"`
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

// Status is the outcome of one check in one round.
type Status string

// The four check statuses.
const (
	// StatusVerified: the check observed what it looks for and it holds.
	StatusVerified Status = "VERIFIED"
	// StatusFailed: a determinate fact contradicts the check.
	StatusFailed Status = "FAILED"
	// StatusObservedRisk: the check observed something worth a closer look.
	StatusObservedRisk Status = "OBSERVED_RISK"
	// StatusUnverified: the check could not observe; its reason says why.
	StatusUnverified Status = "UNVERIFIED"
)

// Statuses lists every Status value, in schema order.
var Statuses = []Status{StatusVerified, StatusFailed, StatusObservedRisk, StatusUnverified}

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
	Probe           ProbeInfo     `json:"probe"`
	Target          Target        `json:"target"`
	ObservedAt      string        `json:"observedAt"`
	RoundID         string        `json:"roundId"`
	Coverage        Coverage      `json:"coverage"`
	ProtocolVersion string        `json:"protocolVersion,omitempty"`
	ServerInfo      *ServerInfo   `json:"serverInfo,omitempty"`
	Fingerprints    *Fingerprints `json:"fingerprints,omitempty"`
	ToolCount       int           `json:"toolCount"`
	Pages           int           `json:"pages"`
	Checks          []CheckResult `json:"checks"`
	Timings         Timings       `json:"timings"`
}

// ProbeInfo identifies the software that made the observation and the exact check suite.
type ProbeInfo struct {
	ToolVersion  string `json:"toolVersion"`
	SuiteVersion string `json:"suiteVersion"`
	SuiteDigest  string `json:"suiteDigest"`
}

// Target is the directory entry that was probed.
type Target struct {
	Kind string `json:"kind"`
	URL  string `json:"url,omitempty"`
	// Package is the ecosystem's package reference (purl without version) for package kinds.
	Package string `json:"package,omitempty"`
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
	Toolset      string `json:"toolset"`
	Schema       string `json:"schema"`
	Surface      string `json:"surface"`
	Instructions string `json:"instructions"`
}

// CheckResult is one check's outcome in one round.
type CheckResult struct {
	ID     string  `json:"id"`
	Status Status  `json:"status"`
	Reason *Reason `json:"reason,omitempty"`
}

// Reason explains a status with a stable key and bounded parameters: numbers or short
// constant tokens, never server-supplied text.
type Reason struct {
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
