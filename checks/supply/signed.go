package supply

import "github.com/probity-dev/probity/attest"

// Outcomes returns the verdict's results as attest.NewSupplyPredicate takes them: each
// check's status, points and seriousness by check id.
func (v Verdict) Outcomes() map[string]attest.SupplyOutcome {
	out := make(map[string]attest.SupplyOutcome, len(v.Results))
	for _, r := range v.Results {
		st := r.Status
		if st == StatusNotRun {
			// Not run is signed as skipped: both count neither way, and the supply/v1
			// predicate has no fifth status (attest/doc.go).
			st = StatusSkipped
		}
		out[r.ID] = attest.SupplyOutcome{Status: st, Points: r.Points, Serious: r.Serious}
	}
	return out
}
