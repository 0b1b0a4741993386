package supply

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestJudgeLicense(t *testing.T) {
	osi, err := osiSet()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		expr   string
		osi    bool
		notOSI []string
		bad    bool
	}{
		{expr: "MIT", osi: true},
		{expr: "mit", osi: true},
		{expr: "Apache-2.0", osi: true},
		{expr: "GPL-2.0", osi: true},  // deprecated id, still on the list
		{expr: "GPL-2.0+", osi: true}, // deprecated id with +
		{expr: "LGPL-2.1-or-later", osi: true},
		{expr: "Apache-2.0+", osi: true}, // + on an OSI id
		{expr: "MIT OR Apache-2.0", osi: true},
		{expr: "MIT or Apache-2.0", osi: true}, // operators in any case
		{expr: "(MIT OR Apache-2.0)", osi: true},
		{expr: "MIT AND Apache-2.0", osi: true},
		{expr: "MIT AND CC-BY-4.0", notOSI: []string{"CC-BY-4.0"}},
		{expr: "CC-BY-4.0 OR MIT", osi: true},
		{expr: "CC-BY-4.0 OR LicenseRef-Proprietary", notOSI: []string{"CC-BY-4.0", "LicenseRef-Proprietary"}},
		{expr: "GPL-2.0-only WITH Classpath-exception-2.0", osi: true},
		{expr: "GPL-3.0-or-later WITH GCC-exception-3.1 OR CC0-1.0", osi: true},
		{expr: "(MIT AND CC-BY-4.0) OR (Apache-2.0 AND BSD-3-Clause)", osi: true},
		{expr: "MIT AND (CC-BY-4.0 OR WTFPL)", notOSI: []string{"CC-BY-4.0", "WTFPL"}},
		{expr: "MIT OR CC-BY-4.0 AND WTFPL", osi: true}, // AND binds tighter
		{expr: "CC0-1.0", notOSI: []string{"CC0-1.0"}},
		{expr: "LicenseRef-Custom", notOSI: []string{"LicenseRef-Custom"}},
		{expr: "DocumentRef-spdx-tool-1.2:LicenseRef-MIT-Style-2", notOSI: []string{"DocumentRef-spdx-tool-1.2:LicenseRef-MIT-Style-2"}},
		{expr: "Apache2", notOSI: []string{"Apache2"}},
		{expr: "", bad: true},
		{expr: "MIT License", bad: true},
		{expr: "SEE LICENSE IN LICENSE.md", bad: true},
		{expr: "MIT OR", bad: true},
		{expr: "AND MIT", bad: true},
		{expr: "(MIT", bad: true},
		{expr: "MIT)", bad: true},
		{expr: "MIT WITH", bad: true},
		{expr: "MIT WITH AND", bad: true},
		{expr: "MIT/Apache-2.0", bad: true},
		{expr: "MIT <IMPORTANT>", bad: true},
		{expr: strings.Repeat("(", 33) + "MIT" + strings.Repeat(")", 33), bad: true},
		{expr: strings.Repeat("(", 32) + "MIT" + strings.Repeat(")", 32), osi: true},
		{expr: strings.Repeat("MIT OR ", 200) + "MIT", bad: true}, // over 1,024 bytes
	} {
		v, err := judgeLicense(tc.expr, osi)
		if tc.bad {
			if !errors.Is(err, errLicenseSyntax) {
				t.Errorf("judgeLicense(%q) = %+v, %v; want a syntax error", tc.expr, v, err)
			}
			continue
		}
		if err != nil || v.OSI != tc.osi || (!tc.osi && !slices.Equal(v.NotOSI, tc.notOSI)) {
			t.Errorf("judgeLicense(%q) = %+v, %v; want osi %v, not %v", tc.expr, v, err, tc.osi, tc.notOSI)
		}
	}
}

func TestOSIList(t *testing.T) {
	osi, err := osiSet()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"MIT", "Apache-2.0", "BSD-3-Clause", "ISC", "MPL-2.0", "0BSD", "Unlicense"} {
		if !osi[strings.ToLower(id)] {
			t.Errorf("%s is not OSI-approved in the list", id)
		}
	}
	for _, id := range []string{"CC-BY-4.0", "CC0-1.0", "WTFPL", "SSPL-1.0", "BUSL-1.1", "NOASSERTION"} {
		if osi[strings.ToLower(id)] {
			t.Errorf("%s is OSI-approved in the list", id)
		}
	}
}

func FuzzJudgeLicense(f *testing.F) {
	for _, s := range []string{"MIT", "(MIT OR Apache-2.0) AND BSD-3-Clause", "GPL-2.0+ WITH Classpath-exception-2.0", "((", "a OR (b AND"} {
		f.Add(s)
	}
	osi, err := osiSet()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		v, err := judgeLicense(expr, osi)
		if err == nil && len(v.NotOSI) > 8 {
			t.Fatalf("%d ids", len(v.NotOSI))
		}
	})
}
