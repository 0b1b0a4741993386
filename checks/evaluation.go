package checks

import "github.com/probity-dev/probity/attest"

// Evaluation is what a round is built from: Evaluate's results and coverage, and the
// tool list's fingerprints and surface document, computed once for the checks, the
// statement and the store. A list of 10,000 tools is tens of MB, and computing its
// fingerprints puts every tool in canonical form, so a round does it once.
type Evaluation struct {
	// Results, Coverage and Signed are what Evaluate(obs) returns.
	Results  []Result
	Coverage attest.Coverage
	Signed   bool

	in *input
}

// EvaluateRound evaluates obs as Evaluate does and keeps the fingerprints and surface
// document it computed along the way. The Evaluation refers to obs, which must not
// change while it is used.
func EvaluateRound(obs *Observation) *Evaluation {
	in := newInput(obs)
	in.withSurface = true
	ev := &Evaluation{in: in}
	ev.Results, ev.Coverage, ev.Signed = evaluate(in)
	return ev
}

// EvaluateProbe evaluates obs as Evaluate does and keeps the fingerprints it computed,
// without building the surface document (Surface returns nil): for a probe that reports
// the fingerprints and stores nothing, such as probity probe.
func EvaluateProbe(obs *Observation) *Evaluation {
	ev := &Evaluation{in: newInput(obs)}
	ev.Results, ev.Coverage, ev.Signed = evaluate(ev.in)
	return ev
}

// Fingerprints is Fingerprints(obs) for the evaluated observation.
func (e *Evaluation) Fingerprints() (*attest.Fingerprints, error) { return e.in.fingerprints() }

// Surface returns attest.SurfaceDocument(obs.Tools.Tools), whose digest is the surface
// fingerprint, when Fingerprints is set and the Evaluation is EvaluateRound's; otherwise
// nil.
func (e *Evaluation) Surface() []byte {
	if fp, err := e.in.fingerprints(); err != nil || fp == nil {
		return nil
	}
	return e.in.surface
}

// Statement is Statement(obs, e.Results, e.Coverage, probe, roundID), reusing the
// fingerprints computed for the checks: the statement, checked once.
func (e *Evaluation) Statement(probe attest.ProbeInfo, roundID string) (*attest.Checked, error) {
	return statement(e.in, e.Results, e.Coverage, probe, roundID)
}
