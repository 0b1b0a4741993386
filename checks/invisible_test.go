package checks

import "testing"

func TestInvisibleCount(t *testing.T) {
	england := "\U0001F3F4\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F"
	for _, tc := range []struct {
		note, text string
		want       int
	}{
		{"empty", "", 0},
		{"tabs and line breaks", "Reads a file.\n\tTabs and line breaks are fine.", 0},
		{"zero-width space", "Reads\u200b a file.", 1},
		{"runs are counted by character", "Reads\u200b\u200b\u2062 a file\u202e.", 4},
		{"tag characters", "\U000E0069\U000E0067\U000E006E", 3},
		{"ZWJ inside an emoji sequence", "\U0001F468\u200D\U0001F469", 0},
		{"ZWNJ between Arabic letters", "\u0645\u200C\u0646", 0},
		{"ZWNJ between Latin letters", "a\u200Cb", 1},
		{"RLM in right-to-left text", "\u05E9\u05DC\u05D5\u05DD \u200F", 0},
		{"ANSI escape", "escape \x1b[31m red", 1},
		{"soft hyphen and BOM", "soft\u00ADhyphen and a BOM \uFEFF", 2},
		{"England's flag", england, 0},
	} {
		if got := InvisibleCount(tc.text); got != tc.want {
			t.Errorf("%s: InvisibleCount(%+q) = %d, want %d", tc.note, tc.text, got, tc.want)
		}
	}
}
