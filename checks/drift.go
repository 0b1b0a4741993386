package checks

import (
	"github.com/probity-dev/probity/attest"
)

// Fingerprints returns the four fingerprints of obs's tool list and server instructions
// (attest.ComputeFingerprints over Tools.Tools and Handshake.Instructions). It returns
// nil and no error when the list was not read completely (or was refused with a 401),
// and nil with the error when a complete list cannot be fingerprinted. The round builder
// puts the result in a full statement.
func Fingerprints(obs *Observation) (*attest.Fingerprints, error) {
	fp, _, err := fingerprintsOf(obs, false)
	return fp, err
}

// fingerprintsOf is Fingerprints(obs), with the surface document of the same tools
// (attest.ComputeSurface) when withSurface is set; the document is nil when there are
// no fingerprints.
func fingerprintsOf(obs *Observation, withSurface bool) (*attest.Fingerprints, []byte, error) {
	if obs == nil || !obs.Tools.Complete || obs.Tools.Unauthorized {
		return nil, nil, nil
	}
	var (
		fp  attest.Fingerprints
		doc []byte
		err error
	)
	if withSurface {
		fp, doc, err = attest.ComputeSurface(obs.Tools.Tools, obs.Handshake.Instructions)
	} else {
		fp, err = attest.ComputeFingerprints(obs.Tools.Tools, obs.Handshake.Instructions)
	}
	if err != nil {
		return nil, nil, err
	}
	return &fp, doc, nil
}

// fingerprintCheck serves toolset_fingerprint, schema_fingerprint and
// surface_fingerprint: the three are computed together and stand or fall together. It
// relies on Tools (Unauthorized, Attempted, Complete, Tools) and Handshake.Instructions.
func fingerprintCheck(in *input) Result {
	t := in.obs.Tools
	switch {
	case t.Unauthorized:
		return unverified(credentialRequired.Key, nil)
	case !listAttempted(t):
		return unverified("no_list", nil)
	case !t.Complete:
		return unverified("partial_list", params("tools", len(t.Tools)))
	}
	if _, err := in.fingerprints(); err != nil {
		return failed("unfingerprintable", nil, Evidence{Field: "tools", Sample: escape(err.Error(), MaxSampleLen), Note: "why the list cannot be fingerprinted"})
	}
	return verified("computed", params("tools", len(t.Tools)))
}

// baselineCheck serves the *_unchanged_vs_approved checks: pick selects the fingerprint
// compared. They rely on Approved (nil, or an empty member, means no baseline) and the
// round's fingerprints.
func baselineCheck(pick func(*attest.Fingerprints) string) func(*input) Result {
	return func(in *input) Result {
		if in.obs.Tools.Unauthorized {
			return unverified(credentialRequired.Key, nil)
		}
		if in.obs.Approved == nil || pick(in.obs.Approved) == "" {
			return unverified("no_baseline", nil)
		}
		fp, err := in.fingerprints()
		if err != nil || fp == nil {
			return unverified("no_fingerprint", nil)
		}
		if pick(fp) == pick(in.obs.Approved) {
			return verified("unchanged", nil)
		}
		return failed("changed", nil, Evidence{Field: "fingerprint", Sample: pick(in.obs.Approved), Note: "the approved fingerprint; this round's is " + pick(fp)})
	}
}

// listAttempted reports whether tools/list was requested; a Complete list counts even
// if the probe forgot to set Attempted.
func listAttempted(t ToolsList) bool { return t.Attempted || t.Complete }
