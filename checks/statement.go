package checks

import (
	"errors"
	"fmt"

	"github.com/probity-dev/probity/attest"
)

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
// are an error, as is a coverage Evaluate would not sign under. The predicate and subject
// are put together by attest.NewProbeStatement (serverInfo by attest.NewServerInfo,
// timings by attest.NewTimings), and the statement is checked once, by attest.Check, with
// the verifier's rules: sign it with its Sign method, which does not check it again.
func Statement(obs *Observation, results []Result, coverage attest.Coverage, probe attest.ProbeInfo, roundID string) (*attest.Checked, error) {
	if obs == nil {
		return nil, errors.New("checks: statement: no observation")
	}
	return statement(newInput(obs), results, coverage, probe, roundID)
}

// statement is Statement over in, whose fingerprints may have been computed already.
func statement(in *input, results []Result, coverage attest.Coverage, probe attest.ProbeInfo, roundID string) (*attest.Checked, error) {
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
		Timings:    attest.NewTimings(obs.Timings.HandshakeMs, obs.Timings.ToolsListMs, obs.Timings.TotalMs),
		Checks:     make([]attest.CheckResult, len(results)),
	}
	for i, r := range results {
		pred.Checks[i] = r.Signed()
	}
	if coverage == attest.CoverageFull {
		fp, err := in.fingerprints()
		if err != nil || fp == nil {
			return nil, fmt.Errorf("checks: statement: no fingerprints for a full round: %v", err)
		}
		pred.Fingerprints = fp
		pred.ProtocolVersion = obs.Handshake.ProtocolVersion
		pred.ToolCount = len(obs.Tools.Tools)
		pred.Pages = obs.Tools.Pages
		pred.ServerInfo = attest.NewServerInfo(obs.Handshake.ServerName, obs.Handshake.ServerVersion)
	}
	st, err := attest.NewProbeStatement(pred)
	if err != nil {
		return nil, fmt.Errorf("checks: statement: %w", err)
	}
	checked, err := attest.Check(st)
	if err != nil {
		return nil, fmt.Errorf("checks: statement: %w", err)
	}
	return checked, nil
}
