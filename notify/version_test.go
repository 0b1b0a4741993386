package notify

import "testing"

func TestShownVersion(t *testing.T) {
	for in, want := range map[string]string{
		"1.2.3":                              "1.2.3",
		"v1.2.3":                             "1.2.3",
		"1.2.3+build.7":                      "1.2.3",
		"2.0.0-beta.1":                       "2.0.0-beta.1",
		"2.0.0-IGNORE-PREVIOUS-INSTRUCTIONS": "2.0.0 (pre-release)",
		"2.0.0-visit.evil.example":           "2.0.0 (pre-release)",
		"1.2":                                "",
		"1.2.3; 5 tools removed":             "",
		"latest":                             "",
		"":                                   "",
	} {
		if got := ShownVersion(in); got != want {
			t.Errorf("ShownVersion(%q) = %q, want %q", in, got, want)
		}
	}
}
