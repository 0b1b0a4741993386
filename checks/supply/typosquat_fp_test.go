package supply

import (
	"fmt"
	"strings"
	"testing"
)

// squatFalsePositives checks every name of the popular list against the other names of
// its ecosystem under an edit budget rule, as the package_name check would if that name
// were published anew, and counts those flagged: similar to another popular package of
// another owner. Every name on the list is a real, popular package, so each one flagged
// is a false positive. Owners are told apart as the check does, with what the list
// records in place of a verified provenance: the same npm scope, or recorded
// repositories of one GitHub owner, is the same owner.
func squatFalsePositives(l *PopularList, budget budgetFunc) (flagged, total int, examples []string) {
	for eco, ix := range l.eco {
		for i, p := range ix.pkgs {
			total++
			for _, m := range ix.similar(p.Name, i, budget) {
				if squatSameOwner(eco, p, m.Popular) {
					continue
				}
				flagged++
				examples = append(examples, fmt.Sprintf("%s %s ~ %s (%s %d)", eco, p.Name, m.Popular.Name, m.Kind, m.Distance))
				break
			}
		}
	}
	return flagged, total, examples
}

func squatSameOwner(eco string, a, b PopularPackage) bool {
	if eco == "npm" {
		s1, _ := splitScope(a.Name)
		s2, _ := splitScope(b.Name)
		if s1 != "" && s1 == s2 {
			return true
		}
	}
	o1, _, ok1 := ParseGitHubURL(a.Repository)
	o2, _, ok2 := ParseGitHubURL(b.Repository)
	return ok1 && ok2 && strings.EqualFold(o1, o2)
}

// budgetRule is an edit budget: one edit from min1 characters of stem, two from min2
// (0: never); with scoped, two edits only between names of the same npm scope.
func budgetRule(min1, min2 int, scoped bool) budgetFunc {
	return func(name, popular string, a, b []rune) int {
		n := min(stemLen(a, b), len(a), len(b))
		e := 0
		switch {
		case min2 > 0 && n >= min2:
			e = 2
		case min1 > 0 && n >= min1:
			e = 1
		}
		if scoped && e > 1 && scopesDiffer(name, popular) {
			e = 1
		}
		return e
	}
}

// TestTyposquatFalsePositives measures the package_name check's false positives against
// the popular list itself (every popular name checked against the others) for the
// rule in force and the alternatives considered, prints the rates, and holds the rule in
// force to its measured rate.
func TestTyposquatFalsePositives(t *testing.T) {
	l, err := EmbeddedPopularList()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		note       string
		min1, min2 int
		scoped     bool
	}{
		{"variants only", 0, 0, false},
		{"1 edit from 4, never 2", 4, 0, false},
		{"1 edit from 3 to 7, 2 from 8", 3, 8, false},
		{"1 edit from 4 to 5, 2 from 6", 4, 6, false},
		{"2 edits from 4", 4, 4, false},
		{"1 edit from 4 to 7, 2 from 8 (before)", 4, 8, false},
		{"1 edit from 5 to 9, 2 from 10", 5, 10, false},
		{"1 edit from 4 to 7, 2 from 8 within a scope (in force)", 4, 8, true},
		{"2 edits from 6, within a scope", 4, 6, true},
		{"2 edits from 4, within a scope", 4, 4, true},
	} {
		n, total, _ := squatFalsePositives(l, budgetRule(c.min1, c.min2, c.scoped))
		t.Logf("%-56s %4d of %d popular names flagged: %.2f %%", c.note, n, total, 100*float64(n)/float64(total))
	}
	n, total, ex := squatFalsePositives(l, editBudget)
	t.Logf("in force: %d of %d popular names flagged (%.2f %%)", n, total, 100*float64(n)/float64(total))
	for _, eco := range []string{"npm", "pypi"} {
		k := 0
		for _, e := range ex {
			if strings.HasPrefix(e, eco+" ") {
				k++
			}
		}
		t.Logf("in force, %s: %d of %d (%.2f %%)", eco, k, l.LenEcosystem(eco), 100*float64(k)/float64(l.LenEcosystem(eco)))
	}
	if testing.Verbose() {
		for _, e := range ex {
			t.Log("  ", e)
		}
	}
	if rate := float64(n) / float64(total); rate > 0.03 {
		t.Errorf("the rule in force flags %d of %d popular names (%.2f %%), above 3 %%", n, total, 100*rate)
	}
	// The candidate rule above and the one in force agree.
	if m, _, _ := squatFalsePositives(l, budgetRule(minEditLen, twoEditLen, true)); m != n {
		t.Errorf("budgetRule(%d, %d, true) flags %d, editBudget %d", minEditLen, twoEditLen, m, n)
	}
}
