package badge

// Text widths. Badges are drawn in Verdana 11 px (falling back to Geneva and
// DejaVu Sans), and each text's box is sized from the advance widths of its
// characters, exactly as shields.io's badge-maker does: the widths of the
// text's code points are added left to right as float64 (the same IEEE
// arithmetic as JavaScript, so the same last digit), the sum is truncated to
// an integer, and an even result is rounded up to the next odd number "to
// increase the chances of pixel grid alignment".
//
// Source of verdanaASCII: the npm package anafanafo 2.0.0 (MIT, Metabolize
// LLC; the table badge-maker 6.0.0 measures with), file
// data/verdana-11px-normal.json, which records the advance widths that a
// browser canvas measured for "11px Verdana", rounded to 1/100 px. Only
// printable ASCII (U+0020 to U+007E) is embedded; anafanafo's own rule for a
// code point its table does not cover is to guess the width of "m", and that
// is the fallback used here for every other rune. For text beyond ASCII this
// overestimates most letters (the badge gets a little wider, never clipped);
// Probity's own badge texts are all ASCII.

// verdanaASCII holds the advance width in px of each printable ASCII
// character, indexed by the character minus 0x20.
var verdanaASCII = [95]float64{
	3.87,  // ' '
	4.33,  // '!'
	5.05,  // '"'
	9,     // '#'
	6.99,  // '$'
	11.84, // '%'
	7.99,  // '&'
	2.95,  // "'"
	5,     // '('
	5,     // ')'
	6.99,  // '*'
	9,     // '+'
	4,     // ','
	5,     // '-'
	4,     // '.'
	5,     // '/'
	6.99,  // '0'
	6.99,  // '1'
	6.99,  // '2'
	6.99,  // '3'
	6.99,  // '4'
	6.99,  // '5'
	6.99,  // '6'
	6.99,  // '7'
	6.99,  // '8'
	6.99,  // '9'
	5,     // ':'
	5,     // ';'
	9,     // '<'
	9,     // '='
	9,     // '>'
	6,     // '?'
	11,    // '@'
	7.52,  // 'A'
	7.54,  // 'B'
	7.68,  // 'C'
	8.48,  // 'D'
	6.96,  // 'E'
	6.32,  // 'F'
	8.53,  // 'G'
	8.27,  // 'H'
	4.63,  // 'I'
	5,     // 'J'
	7.62,  // 'K'
	6.12,  // 'L'
	9.27,  // 'M'
	8.23,  // 'N'
	8.66,  // 'O'
	6.63,  // 'P'
	8.66,  // 'Q'
	7.65,  // 'R'
	7.52,  // 'S'
	6.78,  // 'T'
	8.05,  // 'U'
	7.52,  // 'V'
	10.88, // 'W'
	7.54,  // 'X'
	6.77,  // 'Y'
	7.54,  // 'Z'
	5,     // '['
	5,     // '\\'
	5,     // ']'
	9,     // '^'
	6.99,  // '_'
	6.99,  // `
	6.61,  // 'a'
	6.85,  // 'b'
	5.73,  // 'c'
	6.85,  // 'd'
	6.55,  // 'e'
	3.87,  // 'f'
	6.85,  // 'g'
	6.96,  // 'h'
	3.02,  // 'i'
	3.79,  // 'j'
	6.51,  // 'k'
	3.02,  // 'l'
	10.7,  // 'm'
	6.96,  // 'n'
	6.68,  // 'o'
	6.85,  // 'p'
	6.85,  // 'q'
	4.69,  // 'r'
	5.73,  // 's'
	4.33,  // 't'
	6.96,  // 'u'
	6.51,  // 'v'
	9,     // 'w'
	6.51,  // 'x'
	6.51,  // 'y'
	5.78,  // 'z'
	6.98,  // '{'
	5,     // '|'
	6.98,  // '}'
	9,     // '~'
}

// fallbackWidth is the width guessed for a rune outside printable ASCII: the
// width of "m", as anafanafo guesses for a code point its table lacks.
const fallbackWidth = 10.7

// runeWidth returns the advance width in px of r in Verdana 11 px.
func runeWidth(r rune) float64 {
	if r >= 0x20 && r <= 0x7e {
		return verdanaASCII[r-0x20]
	}
	return fallbackWidth
}

// textWidth returns the width in px that a badge reserves for s: the sum of
// its runes' advance widths, truncated, and rounded up to an odd number.
func textWidth(s string) int {
	var sum float64
	for _, r := range s {
		sum += runeWidth(r)
	}
	w := int(sum)
	if w%2 == 0 {
		w++
	}
	return w
}
