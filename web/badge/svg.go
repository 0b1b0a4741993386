package badge

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxTextRunes bounds the label and the message: a longer text is cut to
// MaxTextRunes-1 runes and an ellipsis, so that no input can make a badge
// arbitrarily wide or slow to draw.
const MaxTextRunes = 100

// The fixed parts of the flat style, as badge-maker 6.0.0 writes them.
const (
	height       = 20     // px
	horizPadding = 5      // px either side of each text
	labelColor   = "#555" // the left half's background
	fontFamily   = "Verdana,Geneva,DejaVu Sans,sans-serif"
	// Texts are drawn at ten times their size and scaled down by .1, which
	// lets every coordinate be an integer (shields.io PR 1132).
	scaleUp = 10
)

// SVG renders b as a flat badge. The output depends on b alone and is
// always well-formed XML: the texts are cleaned (see MaxTextRunes; invalid
// UTF-8, control and other non-XML characters become U+FFFD, which also makes
// invisible characters visible) and then escaped (&, <, >, " and '), and a
// color that is not hex is replaced by ColorNotYetChecked.
func SVG(b Badge) []byte {
	label, message := clean(b.Label), clean(b.Message)
	color := svgColor(b.Color)

	hasLabel := label != ""
	leftColor := labelColor
	labelWidth, leftWidth := 0, 0
	if hasLabel {
		labelWidth = textWidth(label)
		leftWidth = labelWidth + 2*horizPadding
	} else {
		leftColor = color
	}
	messageWidth := textWidth(message)
	rightWidth := messageWidth + 2*horizPadding
	width := leftWidth + rightWidth

	// The texts' left margins, as badge-maker computes them without a logo.
	labelMargin := 1
	messageMargin := leftWidth
	if message != "" {
		messageMargin--
	}
	if !hasLabel {
		messageMargin++
	}

	accessible := message
	if hasLabel {
		accessible = label + ": " + message
	}

	w := make([]byte, 0, 1400+6*(len(label)+len(message)))
	w = append(w, `<svg xmlns="http://www.w3.org/2000/svg" width="`...)
	w = strconv.AppendInt(w, int64(width), 10)
	w = append(w, `" height="20" role="img" aria-label="`...)
	w = appendEscaped(w, accessible)
	w = append(w, `"><title>`...)
	w = appendEscaped(w, accessible)
	w = append(w, `</title><filter id="blur"><feGaussianBlur stdDeviation="16"/></filter>`+
		`<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>`+
		`<clipPath id="r"><rect width="`...)
	w = strconv.AppendInt(w, int64(width), 10)
	w = append(w, `" height="20" rx="3"/></clipPath><g clip-path="url(#r)"><rect width="`...)
	w = strconv.AppendInt(w, int64(leftWidth), 10)
	w = append(w, `" height="20" fill="`...)
	w = appendEscaped(w, leftColor)
	w = append(w, `"/><rect x="`...)
	w = strconv.AppendInt(w, int64(leftWidth), 10)
	w = append(w, `" width="`...)
	w = strconv.AppendInt(w, int64(rightWidth), 10)
	w = append(w, `" height="20" fill="`...)
	w = appendEscaped(w, color)
	w = append(w, `"/><rect width="`...)
	w = strconv.AppendInt(w, int64(width), 10)
	w = append(w, `" height="20" fill="url(#s)"/></g>`+
		`<g fill="#fff" text-anchor="middle" font-family="`+fontFamily+`" text-rendering="geometricPrecision" font-size="110">`...)
	w = appendText(w, label, leftColor, labelMargin, labelWidth)
	w = appendText(w, message, color, messageMargin, messageWidth)
	w = append(w, `</g></svg>`...)
	return w
}

// appendText appends one text of the badge with its shadow, centered in a
// box of textWidth px that starts margin+horizPadding px from the left, in
// the colors that stand out on background. An empty text draws nothing.
func appendText(w []byte, text, background string, margin, textWidth int) []byte {
	if text == "" {
		return w
	}
	// x = scaleUp * (margin + textWidth/2 + horizPadding); textWidth is odd,
	// so this is an integer, as in badge-maker.
	x := int64(scaleUp*(margin+horizPadding) + scaleUp*textWidth/2)
	length := int64(scaleUp * textWidth)
	light := isLight(background)

	w = append(w, `<g transform="scale(.1)"><g aria-hidden="true" fill="`...)
	if light {
		w = append(w, `#ccc`...)
	} else {
		w = append(w, `#010101`...)
	}
	w = append(w, `">`...)
	for _, blur := range []bool{true, false} {
		w = append(w, `<text x="`...)
		w = strconv.AppendInt(w, x, 10)
		if blur {
			w = append(w, `" y="150" fill-opacity=".8" filter="url(#blur)" textLength="`...)
		} else {
			w = append(w, `" y="150" fill-opacity=".3" textLength="`...)
		}
		w = strconv.AppendInt(w, length, 10)
		w = append(w, `">`...)
		w = appendEscaped(w, text)
		w = append(w, `</text>`...)
	}
	w = append(w, `</g><text x="`...)
	w = strconv.AppendInt(w, x, 10)
	w = append(w, `" y="140" textLength="`...)
	w = strconv.AppendInt(w, length, 10)
	if light {
		w = append(w, `" fill="#333`...)
	}
	w = append(w, `">`...)
	w = appendEscaped(w, text)
	w = append(w, `</text></g>`...)
	return w
}

// isLight reports whether text on background should be dark: badge-maker's
// rule, a perceived brightness (ITU-R BT.601 weights) above 0.69 after
// rounding to two decimals. background is a color that svgColor returned.
func isLight(background string) bool {
	r, g, b, ok := parseHex(background)
	if !ok {
		return false
	}
	// brightness = (299r + 587g + 114b) / 255000; rounded to two decimals it
	// exceeds 0.69 exactly when the numerator exceeds 0.695 * 255000.
	return 299*r+587*g+114*b > 177225
}

// svgColor returns c if it is "#" and 3 or 6 hex digits, in lower case, and
// ColorNotYetChecked otherwise.
func svgColor(c string) string {
	if _, _, _, ok := parseHex(c); !ok {
		return ColorNotYetChecked
	}
	return strings.ToLower(c)
}

// parseHex parses "#rgb" or "#rrggbb".
func parseHex(c string) (r, g, b int, ok bool) {
	if len(c) != 4 && len(c) != 7 || c[0] != '#' {
		return 0, 0, 0, false
	}
	var v [6]int
	digits := c[1:]
	for i := 0; i < len(digits); i++ {
		d := hexDigit(digits[i])
		if d < 0 {
			return 0, 0, 0, false
		}
		v[i] = d
	}
	if len(digits) == 3 {
		return v[0] * 17, v[1] * 17, v[2] * 17, true
	}
	return v[0]*16 + v[1], v[2]*16 + v[3], v[4]*16 + v[5], true
}

func hexDigit(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// clean makes s safe to draw and to measure: every rune that is not allowed
// in XML 1.0 or is a control or format character (invalid UTF-8, C0 and C1
// controls including tab and newline, zero-width and bidi marks, noncharacters)
// becomes U+FFFD, so nothing in a badge is invisible; and a text longer than
// MaxTextRunes runes is cut to MaxTextRunes-1 runes and "…".
func clean(s string) string {
	n := 0
	dirty := !utf8.ValidString(s)
	for _, r := range s {
		n++
		if !drawable(r) {
			dirty = true
		}
	}
	if !dirty && n <= MaxTextRunes {
		return s
	}
	var sb strings.Builder
	sb.Grow(len(s))
	i := 0
	for _, r := range s {
		if n > MaxTextRunes && i == MaxTextRunes-1 {
			sb.WriteRune('…')
			break
		}
		if !drawable(r) {
			r = utf8.RuneError
		}
		sb.WriteRune(r)
		i++
	}
	return sb.String()
}

// drawable reports whether r may appear in a badge as it is. utf8.RuneError
// itself is drawable (it is what clean draws instead).
func drawable(r rune) bool {
	switch {
	case r >= 0x20 && r <= 0x7e:
		return true
	case r < 0x20 || r == 0x7f:
		return false
	case 0xd800 <= r && r <= 0xdfff, r == 0xfffe, r == 0xffff, r > unicode.MaxRune:
		// Not XML characters.
		return false
	case unicode.Is(unicode.Cc, r), unicode.Is(unicode.Cf, r), unicode.Is(unicode.Noncharacter_Code_Point, r):
		return false
	}
	return true
}

// appendEscaped appends s to w with the five XML special characters
// escaped, as badge-maker escapes them. s must have been cleaned.
func appendEscaped(w []byte, s string) []byte {
	last := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '"':
			esc = "&quot;"
		case '\'':
			esc = "&apos;"
		default:
			continue
		}
		w = append(w, s[last:i]...)
		w = append(w, esc...)
		last = i + 1
	}
	return append(w, s[last:]...)
}
