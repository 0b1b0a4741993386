package attest

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestNewSupplyPredicate: the constructor maps outcomes onto checks by attest's rules
// (skipped when missing, points by status, partial kept strictly inside the weight,
// serious only when failed) and the statement it makes passes the verifier's rules.
func TestNewSupplyPredicate(t *testing.T) {
	outcomes := map[string]SupplyOutcome{
		SupplySourceRepository:  {Status: SupplyPassed, Points: 10},
		SupplyPackageRepository: {Status: SupplyPassed, Serious: true},
		SupplyBuildProvenance:   {Status: SupplyFailed, Serious: true},
		SupplyLicense:           {Status: SupplyFailed, Points: 3},
		SupplyScorecard:         {Status: SupplyPartial, Points: 9.45},
		SupplyAdvisories:        {Status: SupplySkipped},
		SupplyHidden:            {Status: SupplyPassed},
	}
	at := time.Date(2026, 11, 30, 6, 45, 12, 345e6, time.UTC)
	entry := ChangeEntry{Kind: "npm", Slug: "npm-acme-mcp", Package: "pkg:npm/%40acme/mcp"}
	p := NewSupplyPredicate(entry, at, "2", "0.1.0", outcomes)
	want := []SupplyCheck{
		{ID: SupplySourceRepository, Weight: 10, Status: SupplyPassed, PointsMilli: 10000},
		{ID: SupplyPackageRepository, Weight: 5, Status: SupplyPassed, PointsMilli: 5000},
		{ID: SupplyBuildProvenance, Weight: 10, Status: SupplyFailed, Serious: true},
		{ID: SupplyLicense, Weight: 5, Status: SupplyFailed},
		{ID: SupplyMaintenance, Weight: 5, Status: SupplySkipped},
		{ID: SupplyScorecard, Weight: 15, Status: SupplyPartial, PointsMilli: 9450},
		{ID: SupplyPackageName, Weight: 10, Status: SupplySkipped},
		{ID: SupplyAdvisories, Weight: 15, Status: SupplySkipped},
		{ID: SupplyHidden, Weight: 15, Status: SupplyPassed, PointsMilli: 15000},
		{ID: SupplyDestructive, Weight: 5, Status: SupplySkipped},
		{ID: SupplyHandshake, Weight: 5, Status: SupplySkipped},
	}
	if !reflect.DeepEqual(p.Checks, want) {
		t.Fatalf("checks\n got %+v\nwant %+v", p.Checks, want)
	}
	if p.EvaluatedAt != "2026-11-30T06:45:12.345Z" || p.Entry != entry || p.SuiteVersion != "2" || p.ToolVersion != "0.1.0" {
		t.Errorf("predicate %+v", p)
	}
	// 39.45 of 60 points: 66; a serious finding withholds Verified.
	if p.WeightRan != 60 || p.Score != 66 || p.Verified {
		t.Errorf("weightRan %d, score %d, verified %v", p.WeightRan, p.Score, p.Verified)
	}
	if _, err := Check(NewSupplyStatement(p, strings.Repeat("0", 64))); err != nil {
		t.Fatal(err)
	}

	// A partial share is kept strictly between 0 and the weight.
	for points, milli := range map[float64]int{0: 1, 0.0001: 1, 15: 14999, 20: 14999} {
		p := NewSupplyPredicate(entry, at, "2", "0.1.0", map[string]SupplyOutcome{SupplyScorecard: {Status: SupplyPartial, Points: points}})
		if got := p.Checks[5].PointsMilli; got != milli {
			t.Errorf("partial %v points: %d milli, want %d", points, got, milli)
		}
	}

	// Verified at the thresholds, and not below them.
	all := map[string]SupplyOutcome{}
	for _, id := range SupplyCheckIDs {
		all[id] = SupplyOutcome{Status: SupplyPassed}
	}
	if p := NewSupplyPredicate(entry, at, "2", "0.1.0", all); !p.Verified || p.Score != 100 || p.WeightRan != 100 {
		t.Errorf("all passed: %+v", p)
	}
	delete(all, SupplySourceRepository)
	if p := NewSupplyPredicate(entry, at, "2", "0.1.0", all); p.Verified {
		t.Errorf("verified without %s", SupplyVerifiedNeeds)
	}
}
