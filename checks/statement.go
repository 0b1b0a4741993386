package checks

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/probity-dev/probity/attest"
)

// maxShortText is the schema's bound on serverInfo strings, in characters.
const maxShortText = 256

// maxMillis is the schema's bound on timings.
const maxMillis = 600000

// Statement builds the in-toto statement of a signed round of a remote endpoint, by the
// rules of attest's format (attest/doc.go, "Statement and predicate"):
//
//   - the subject name and target.url are obs.URL;
//   - full: the subject digest is the surface fingerprint's hex, fingerprints are set
//     from Fingerprints(obs), with protocolVersion, serverInfo, toolCount and pages;
//   - auth_required: the subject digest is attest.AuthRequiredDigest(obs.URL), and there
//     are no fingerprints, protocolVersion or serverInfo (what lies behind the login is
//     not covered), toolCount and pages 0;
//   - serverInfo name and version are NFC, cut to 256 characters, with control
//     characters removed and invalid UTF-8 replaced; it is left out when both are empty;
//   - timings are obs.Timings clamped to the schema's 0–600000 ms;
//   - observedAt is attest.FormatTime(obs.StartedAt).
//
// results must be Evaluate's: one per catalog check, in catalog order. An empty
// probe.SuiteVersion or probe.SuiteDigest is filled with this suite's; different ones
// are an error, as is a coverage Evaluate would not sign under. The statement is checked
// with attest.DecodeStatement before it is returned, so a statement Statement returns
// always passes the verifier's rules.
func Statement(obs *Observation, results []Result, coverage attest.Coverage, probe attest.ProbeInfo, roundID string) (*attest.Statement, error) {
	if obs == nil {
		return nil, errors.New("checks: statement: no observation")
	}
	return statement(newInput(obs), results, coverage, probe, roundID)
}

// statement is Statement over in, whose fingerprints may have been computed already.
func statement(in *input, results []Result, coverage attest.Coverage, probe attest.ProbeInfo, roundID string) (*attest.Statement, error) {
	obs := in.obs
	if len(results) != len(catalog) {
		return nil, fmt.Errorf("checks: statement: %d results for %d checks", len(results), len(catalog))
	}
	for i, r := range results {
		if r.ID != catalog[i].ID {
			return nil, fmt.Errorf("checks: statement: result %d is %q, want %q", i, r.ID, catalog[i].ID)
		}
	}
	if probe.SuiteVersion == "" {
		probe.SuiteVersion = SuiteVersion
	}
	if probe.SuiteDigest == "" {
		probe.SuiteDigest = SuiteDigest()
	}
	if probe.SuiteVersion != SuiteVersion || probe.SuiteDigest != SuiteDigest() {
		return nil, fmt.Errorf("checks: statement: probe names suite %s %s, this is %s %s", probe.SuiteVersion, probe.SuiteDigest, SuiteVersion, SuiteDigest())
	}
	if got := in.coverage(); got != coverage {
		return nil, fmt.Errorf("checks: statement: coverage %q, but the observation supports %q", coverage, got)
	}
	pred := &attest.ProbePredicate{
		Probe:      probe,
		Target:     attest.Target{Kind: "remote", URL: obs.URL},
		ObservedAt: attest.FormatTime(obs.StartedAt),
		RoundID:    roundID,
		Coverage:   coverage,
		Timings: attest.Timings{
			HandshakeMs: clampMillis(obs.Timings.HandshakeMs),
			ToolsListMs: clampMillis(obs.Timings.ToolsListMs),
			TotalMs:     clampMillis(obs.Timings.TotalMs),
		},
		Checks: make([]attest.CheckResult, len(results)),
	}
	for i, r := range results {
		pred.Checks[i] = r.Signed()
	}
	var digest string
	switch coverage {
	case attest.CoverageFull:
		fp, err := in.fingerprints()
		if err != nil || fp == nil {
			return nil, fmt.Errorf("checks: statement: no fingerprints for a full round: %v", err)
		}
		pred.Fingerprints = fp
		pred.ProtocolVersion = obs.Handshake.ProtocolVersion
		pred.ToolCount = len(obs.Tools.Tools)
		pred.Pages = obs.Tools.Pages
		pred.ServerInfo = serverInfo(obs.Handshake.ServerName, obs.Handshake.ServerVersion)
		digest = strings.TrimPrefix(fp.Surface, "sha256:")
	case attest.CoverageAuthRequired:
		digest = attest.AuthRequiredDigest(obs.URL)
	default:
		return nil, fmt.Errorf("checks: statement: coverage %q is not signed", coverage)
	}
	st := &attest.Statement{
		Type:          attest.StatementType,
		Subject:       []attest.Subject{{Name: obs.URL, Digest: attest.DigestSet{"sha256": digest}}},
		PredicateType: attest.ProbePredicateType,
		Predicate:     pred,
	}
	payload, err := attest.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("checks: statement: %w", err)
	}
	if _, err := attest.DecodeStatement(payload); err != nil {
		return nil, fmt.Errorf("checks: statement: %w", err)
	}
	return st, nil
}

func clampMillis(ms int64) int64 { return max(0, min(ms, maxMillis)) }

func serverInfo(name, version string) *attest.ServerInfo {
	name, version = shortText(name), shortText(version)
	if name == "" && version == "" {
		return nil
	}
	return &attest.ServerInfo{Name: name, Version: version}
}

// shortText makes server-reported text fit the schema's shortText: valid UTF-8, NFC (as
// it will be signed), no control characters, at most 256 characters.
func shortText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
	full := []rune(norm.NFC.String(s))
	if len(full) <= maxShortText {
		return string(full)
	}
	// A cut can leave a prefix whose NFC form is longer; cut shorter until it fits.
	for k := maxShortText; k > 0; k-- {
		if out := norm.NFC.String(string(full[:k])); utf8.RuneCountInString(out) <= maxShortText {
			return out
		}
	}
	return ""
}
