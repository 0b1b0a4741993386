package attest

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestSupplySchemaMatchesTypes(t *testing.T) {
	var root map[string]any
	if err := json.Unmarshal(supplySchemaJSON, &root); err != nil {
		t.Fatal(err)
	}
	compare(t, root, root, reflect.TypeFor[SupplyPredicate](), "")
	sum := 0
	for _, w := range SupplyWeights {
		sum += w
	}
	if sum != 100 || len(SupplyWeights) != len(SupplyCheckIDs) {
		t.Errorf("weights sum to %d over %d checks", sum, len(SupplyWeights))
	}
}

// supplyChecks builds checks from a status per check (p: passed, f: failed, s: skipped,
// F: failed and serious).
func supplyChecks(statuses string) []SupplyCheck {
	cs := make([]SupplyCheck, len(SupplyCheckIDs))
	for i, id := range SupplyCheckIDs {
		c := SupplyCheck{ID: id, Weight: SupplyWeights[i]}
		switch statuses[i] {
		case 'p':
			c.Status, c.PointsMilli = SupplyPassed, c.Weight*1000
		case 'f':
			c.Status = SupplyFailed
		case 'F':
			c.Status, c.Serious = SupplyFailed, true
		case 's':
			c.Status = SupplySkipped
		}
		cs[i] = c
	}
	return cs
}

func sampleSupply(statuses string) *SupplyPredicate {
	cs := supplyChecks(statuses)
	score, ran := SupplyScore(cs)
	return &SupplyPredicate{
		Checks: cs, Entry: ChangeEntry{Kind: "npm", Slug: "npm-acme-mcp", Package: "pkg:npm/%40acme/mcp"},
		EvaluatedAt: "2026-11-30T06:45:12.345Z", PackageVersion: "1.2.3", Score: score, WeightRan: ran,
		Verified: SupplyVerified(cs), SuiteVersion: "2026.11", ToolVersion: "0.1.0",
	}
}

func TestSupplyScoreAndVerified(t *testing.T) {
	cases := []struct {
		statuses string
		score    int
		ran      int
		verified bool
	}{
		{"ppppppppppp", 100, 100, true},
		{"pssssssssss", 100, 10, false}, // too little checked
		{"ppspppppppf", 94, 90, true},   // mcp handshake failed, not serious: 85/90
		{"ppspppppppF", 94, 90, false},  // plain HTTP: serious
		{"fpppppppppp", 90, 100, false}, // source repository failed
		{"sppppppppps", 100, 85, false}, // source repository skipped
		{"pppppfppppp", 85, 100, true},  // scorecard failed outright
		{"ppppppFpppp", 90, 100, false}, // typosquat
		{"pppppffpppp", 75, 100, false}, // below 80
		{"ppssspppppp", 100, 80, true},  // provenance, license, maintenance skipped
		{"sssssspppps", 100, 45, false}, // under 60 checked
		{"ffsffffffff", 0, 90, false},   // everything failed
		{"sssssssssss", 0, 0, false},    // nothing ran
	}
	for _, c := range cases {
		cs := supplyChecks(c.statuses)
		score, ran := SupplyScore(cs)
		if score != c.score || ran != c.ran || SupplyVerified(cs) != c.verified {
			t.Errorf("%s: score %d ran %d verified %v, want %d %d %v", c.statuses, score, ran, SupplyVerified(cs), c.score, c.ran, c.verified)
		}
	}
	// A proportional Scorecard share: 15 × 6.5/10 = 9.75 points.
	cs := supplyChecks("ppppppppppp")
	cs[5].Status, cs[5].PointsMilli = SupplyPartial, 9750
	if score, _ := SupplyScore(cs); score != 95 { // 94.75 rounds to 95
		t.Errorf("partial scorecard: score %d, want 95", score)
	}
}

func TestSupplyStatementRules(t *testing.T) {
	good := sampleSupply("ppppppppppp")
	st := NewSupplyStatement(good, strings.Repeat("ab", 32))
	canon, err := Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := DecodeStatement(canon)
	if err != nil || ds.Supply == nil || !ds.Supply.Verified {
		t.Fatalf("good supply statement: %v", err)
	}
	bad := map[string]func(p *SupplyPredicate){
		"claims verified":      func(p *SupplyPredicate) { *p = *sampleSupply("fpppppppppp"); p.Verified = true },
		"wrong score":          func(p *SupplyPredicate) { p.Score = 99 },
		"wrong weight ran":     func(p *SupplyPredicate) { p.WeightRan = 90 },
		"points for a failure": func(p *SupplyPredicate) { p.Checks[0].Status = SupplyFailed },
		"serious pass":         func(p *SupplyPredicate) { p.Checks[6].Serious = true },
		"reordered":            func(p *SupplyPredicate) { p.Checks[0], p.Checks[1] = p.Checks[1], p.Checks[0] },
		"wrong weight":         func(p *SupplyPredicate) { p.Checks[1].Weight, p.Checks[1].PointsMilli = 6, 6000 },
		"remote with package":  func(p *SupplyPredicate) { p.Entry.Kind = "remote" },
	}
	for name, mutate := range bad {
		p := sampleSupply("ppppppppppp")
		mutate(p)
		canon, err := Marshal(NewSupplyStatement(p, strings.Repeat("ab", 32)))
		if err != nil {
			t.Fatal(err)
		}
		_, err = DecodeStatement(canon)
		var se *StatementError
		var sch *SchemaError
		if !errors.As(err, &se) && !errors.As(err, &sch) {
			t.Errorf("%s: DecodeStatement = %v, want a statement or schema error", name, err)
		}
	}
}
