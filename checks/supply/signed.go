package supply

import "github.com/probity-dev/probity/attest"

// Outcomes returns the verdict's results as attest.NewSupplyPredicate takes them: each
// check's status, points and seriousness by check id.
func (v Verdict) Outcomes() map[string]attest.SupplyOutcome {
	out := make(map[string]attest.SupplyOutcome, len(v.Results))
	for _, r := range v.Results {
		out[r.ID] = attest.SupplyOutcome{Status: r.Status, Points: r.Points, Serious: r.Serious}
	}
	return out
}
