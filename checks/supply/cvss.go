package supply

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// CriticalCVSS is the CVSS base score from which an advisory is critical.
const CriticalCVSS = 9.0

var errCVSS = errors.New("bad CVSS v3 vector")

// CVSS v3.1 base metric weights (specification section 7.4).
var (
	cvssAV = map[string]float64{"N": 0.85, "A": 0.62, "L": 0.55, "P": 0.2}
	cvssAC = map[string]float64{"L": 0.77, "H": 0.44}
	// Privileges Required: unchanged scope, and changed scope.
	cvssPRU = map[string]float64{"N": 0.85, "L": 0.62, "H": 0.27}
	cvssPRC = map[string]float64{"N": 0.85, "L": 0.68, "H": 0.5}
	cvssUI  = map[string]float64{"N": 0.85, "R": 0.62}
	cvssCIA = map[string]float64{"H": 0.56, "L": 0.22, "N": 0}
)

// cvssOptional are the temporal and environmental metrics a vector may carry, with
// their allowed values; they do not change the base score.
var cvssOptional = map[string]string{
	"E": "XUPFH", "RL": "XOTWU", "RC": "XURC", "CR": "XLMH", "IR": "XLMH", "AR": "XLMH",
	"MAV": "XNALP", "MAC": "XLH", "MPR": "XNLH", "MUI": "XNR", "MS": "XUC",
	"MC": "XNLH", "MI": "XNLH", "MA": "XNLH",
}

// CVSS3BaseScore computes the base score of a CVSS v3.0 or v3.1 vector
// ("CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H" → 9.8) with the v3.1 formula and
// its Roundup (which v3.1 introduced to fix floating-point artefacts of v3.0's; the
// two agree except on those). Every base metric must appear exactly once; temporal and
// environmental metrics are checked and ignored.
func CVSS3BaseScore(vector string) (float64, error) {
	rest, ok := strings.CutPrefix(vector, "CVSS:3.1/")
	if !ok {
		if rest, ok = strings.CutPrefix(vector, "CVSS:3.0/"); !ok {
			return 0, fmt.Errorf("%w: want the prefix CVSS:3.0/ or CVSS:3.1/", errCVSS)
		}
	}
	if len(rest) > 200 {
		return 0, fmt.Errorf("%w: too long", errCVSS)
	}
	m := map[string]string{}
	for _, part := range strings.Split(rest, "/") {
		k, v, ok := strings.Cut(part, ":")
		if !ok || k == "" || v == "" {
			return 0, fmt.Errorf("%w: %q is not METRIC:VALUE", errCVSS, clip(part, 20))
		}
		if _, dup := m[k]; dup {
			return 0, fmt.Errorf("%w: metric %s repeated", errCVSS, clip(k, 10))
		}
		m[k] = v
	}
	base := []struct {
		name    string
		weights map[string]float64
	}{{"AV", cvssAV}, {"AC", cvssAC}, {"PR", cvssPRU}, {"UI", cvssUI}, {"C", cvssCIA}, {"I", cvssCIA}, {"A", cvssCIA}}
	for _, b := range base {
		if _, ok := b.weights[m[b.name]]; !ok {
			return 0, fmt.Errorf("%w: base metric %s missing or invalid", errCVSS, b.name)
		}
	}
	scope := m["S"]
	if scope != "U" && scope != "C" {
		return 0, fmt.Errorf("%w: base metric S missing or invalid", errCVSS)
	}
	for k, v := range m {
		switch k {
		case "AV", "AC", "PR", "UI", "S", "C", "I", "A":
			continue
		}
		allowed, ok := cvssOptional[k]
		if !ok || len(v) != 1 || !strings.Contains(allowed, v) {
			return 0, fmt.Errorf("%w: unknown metric %s:%s", errCVSS, clip(k, 10), clip(v, 10))
		}
	}
	changed := scope == "C"
	pr := cvssPRU[m["PR"]]
	if changed {
		pr = cvssPRC[m["PR"]]
	}
	iss := 1 - (1-cvssCIA[m["C"]])*(1-cvssCIA[m["I"]])*(1-cvssCIA[m["A"]])
	var impact float64
	if changed {
		impact = 7.52*(iss-0.029) - 3.25*math.Pow(iss-0.02, 15)
	} else {
		impact = 6.42 * iss
	}
	exploitability := 8.22 * cvssAV[m["AV"]] * cvssAC[m["AC"]] * pr * cvssUI[m["UI"]]
	if impact <= 0 {
		return 0, nil
	}
	if changed {
		return cvssRoundup(math.Min(1.08*(impact+exploitability), 10)), nil
	}
	return cvssRoundup(math.Min(impact+exploitability, 10)), nil
}

// cvssRoundup is the CVSS v3.1 Roundup (Appendix A): the smallest number, to one
// decimal place, equal to or higher than its input, computed on integers.
func cvssRoundup(x float64) float64 {
	i := int64(math.Round(x * 100000))
	if i%10000 == 0 {
		return float64(i) / 100000
	}
	return float64(i/10000+1) / 10
}
