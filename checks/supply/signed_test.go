package supply

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
)

// TestCatalogIsAttests: the suite runs attest's checks, in attest's order, with attest's
// weights (the one home of ids and weights, which the verifier checks).
func TestCatalogIsAttests(t *testing.T) {
	cat := Catalog()
	if len(cat) != len(attest.SupplyCheckIDs) {
		t.Fatalf("%d checks, attest has %d", len(cat), len(attest.SupplyCheckIDs))
	}
	for i, c := range cat {
		if c.ID != attest.SupplyCheckIDs[i] || c.Weight != attest.SupplyWeights[i] {
			t.Errorf("check %d is %s weighing %d; attest has %s weighing %d", i, c.ID, c.Weight, attest.SupplyCheckIDs[i], attest.SupplyWeights[i])
		}
	}
	if VerifiedMinScore != attest.SupplyVerifiedMinScore || VerifiedMinWeightRan != attest.SupplyVerifiedMinWeightRan {
		t.Errorf("thresholds %d, %d; attest's %d, %d", VerifiedMinScore, VerifiedMinWeightRan, attest.SupplyVerifiedMinScore, attest.SupplyVerifiedMinWeightRan)
	}
}

// TestVerdictIsWhatIsSigned: for random verdicts (every status, serious failures, the
// Scorecard's partial share in hundredths), the suite's score and Verified decision are
// the ones the signed predicate carries and the verifier recomputes, and the reasons the
// suite gives for withholding Verified agree with attest's rules.
func TestVerdictIsWhatIsSigned(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 2026))
	statuses := []attest.SupplyStatus{StatusPassed, StatusFailed, StatusSkipped}
	verified, notVerified := 0, 0
	for n := range 20000 {
		v := Verdict{SuiteVersion: SuiteVersion}
		for _, c := range catalog {
			r := Result{ID: c.ID, Weight: c.Weight, Status: statuses[rng.IntN(len(statuses))]}
			// Most runs pass most checks, so that Verified is decided both ways.
			if rng.IntN(3) > 0 {
				r.Status = StatusPassed
			}
			switch {
			case r.Status == StatusPassed:
				r.Points = float64(c.Weight)
			case c.ID == CheckScorecard && rng.IntN(2) == 0:
				r.Status = StatusPartial
				score := float64(1+rng.IntN(699)) / 100 // 0.01 … 6.99
				r.Points = float64(int(15*score*10+0.5)) / 100
			case r.Status == StatusFailed:
				r.Serious = rng.IntN(8) == 0
			}
			v.Results = append(v.Results, r)
		}
		decide(&v)
		p := attest.NewSupplyPredicate(attest.ChangeEntry{Kind: "npm", Slug: "x", Package: "pkg:npm/x"}, time.Unix(0, 0), SuiteVersion, "0.1.0", v.Outcomes())
		if p.Score != v.Score || p.WeightRan != v.WeightRan || p.Verified != v.Verified {
			t.Fatalf("verdict %d: suite score %d of %d, verified %v; signed %d of %d, verified %v\n%+v",
				n, v.Score, v.WeightRan, v.Verified, p.Score, p.WeightRan, p.Verified, v.Results)
		}
		// The reasons explain the decision: none exactly when Verified, and never the
		// fallback that marks reasons disagreeing with attest's rules.
		if v.Verified != (len(v.NotVerified) == 0) || slices.Contains(v.NotVerified, "the signed checks do not meet the rules of Verified") {
			t.Fatalf("verdict %d: verified %v with reasons %q\n%+v", n, v.Verified, v.NotVerified, v.Results)
		}
		if v.Verified {
			verified++
		} else {
			notVerified++
		}
	}
	if verified < 1000 || notVerified < 1000 {
		t.Fatalf("%d verified and %d not: the sample does not decide both ways", verified, notVerified)
	}
}
