package checks

import (
	"reflect"
	"testing"
)

// TestEvaluateProbe: EvaluateProbe gives Evaluate's results and the fingerprints, and
// builds no surface document.
func TestEvaluateProbe(t *testing.T) {
	for _, o := range []*Observation{fullObs(), authObs(), {}} {
		ev := EvaluateProbe(o)
		results, coverage, signed := Evaluate(o)
		if !reflect.DeepEqual(ev.Results, results) || ev.Coverage != coverage || ev.Signed != signed {
			t.Errorf("%s: EvaluateProbe differs from Evaluate", o.URL)
		}
		got, err1 := ev.Fingerprints()
		want, err2 := Fingerprints(o)
		if !reflect.DeepEqual(got, want) || (err1 == nil) != (err2 == nil) {
			t.Errorf("%s: fingerprints %+v, want %+v", o.URL, got, want)
		}
		if ev.Surface() != nil {
			t.Errorf("%s: a surface document", o.URL)
		}
	}
}
