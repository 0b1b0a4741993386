package web

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxShown bounds one piece of server-supplied text on a page; longer text is cut and
// marked with "…".
const maxShown = 4096

// visible returns server-supplied text with every character that could hide text from
// a reader written as a Go escape (\u200b, \U000e0041, \x00 for an invalid byte):
// controls other than tab, line feed and carriage return, format characters (zero-width, bidi
// controls, the tag block), private use, surrogates, noncharacters, variation selectors,
// and separators other than the ASCII space. It is stricter than the
// hidden_instructions check: an emoji's joiner is shown as an escape too, which costs
// some looks and hides nothing. The result is plain text: escaping for HTML, JSON or
// Markdown is the output's job.
func visible(s string) string {
	s = cut(s, maxShown)
	clean := true
	for _, r := range s {
		if hides(r) {
			clean = false
			break
		}
	}
	if clean && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])|0x100, 16)[1:])
		case hides(r):
			if r <= 0xFFFF {
				b.WriteString(`\u`)
				b.WriteString(strconv.FormatUint(uint64(r)|0x10000, 16)[1:])
			} else {
				b.WriteString(`\U`)
				b.WriteString(strconv.FormatUint(uint64(r)|0x100000000, 16)[1:])
			}
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// visibleLine is visible with line breaks and tabs turned into spaces, for text shown
// on one line.
func visibleLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, visible(s))
}

// hides reports whether r is shown as an escape by visible.
func hides(r rune) bool {
	switch {
	case r < utf8.RuneSelf: // ASCII: only the controls but tab, line feed and CR
		return (r < ' ' || r == 0x7F) && r != '\t' && r != '\n' && r != '\r'
	case r == '\t' || r == '\n' || r == '\r':
		return false
	case r == ' ':
		return false
	case r == utf8.RuneError:
		return false // a real U+FFFD is visible; invalid bytes are handled by the caller
	case unicode.IsControl(r), unicode.Is(unicode.Cf, r), unicode.Is(unicode.Co, r), unicode.Is(unicode.Cs, r):
		return true
	case unicode.Is(unicode.Zs, r), unicode.Is(unicode.Zl, r), unicode.Is(unicode.Zp, r):
		return true
	case unicode.Is(unicode.Variation_Selector, r):
		return true
	case r >= 0xFDD0 && r <= 0xFDEF, r&0xFFFE == 0xFFFE:
		return true // noncharacters
	case r == 0x115F || r == 0x1160 || r == 0x3164 || r == 0xFFA0 || r == 0x2800:
		return true // fillers that render blank
	}
	return false
}

// cut cuts s to at most n bytes at a character boundary, marking a cut with "…".
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// markdown returns server-supplied text for Markdown output (CommonMark with GitHub's
// extensions), visible and on one line, with a backslash or an entity only where a
// character could start Markdown syntax, so that addresses, versions and names read as
// written (127.0.0.1:8080, io.github.acme/search, delete_all):
//
//   - always: \ ` * ~ [ ] | $ (escapes, code spans, emphasis, strikethrough, links and
//     images, table cells, math), and < and & as &lt; and &amp; (raw HTML, autolinks in
//     angle brackets, entity references, which could spell an invisible character);
//   - _ unless it sits between two letters or digits, where it can neither open nor
//     close emphasis (CommonMark's flanking rules);
//   - # at the start or after a space (a heading, or a heading's closing sequence);
//   - at the start of the text, which may start a line: > (a block quote), - + = (a list
//     item, a thematic break or a setext underline) and the . or ) after leading digits
//     when a space or the end follows (an ordered list: "1. x", but "1.2.0" stays).
//
// The text can thus become neither a link with a hidden target, an image, emphasis, a
// heading, a list, a code span nor raw HTML. A bare URL stays a URL, which a GitHub
// renderer may show as a link: it shows its own target, nothing hidden. Invisible
// characters are escapes made by visible, whose backslash is escaped in turn.
func markdown(s string) string {
	s = visibleLine(s)
	var b strings.Builder
	b.Grow(len(s) + 16)
	var prev rune  // the previous character; 0 at the start
	digits := true // the text so far is digits only
	for i, r := range s {
		next, _ := utf8.DecodeRuneInString(s[i+utf8.RuneLen(r):])
		switch {
		case r == '<':
			b.WriteString("&lt;")
		case r == '&':
			b.WriteString("&amp;")
		case strings.ContainsRune("\\`*~[]|$", r),
			r == '_' && !(isWordChar(prev) && isWordChar(next)),
			r == '#' && (i == 0 || prev == ' '),
			i == 0 && strings.ContainsRune(">-+=", r),
			i > 0 && digits && (r == '.' || r == ')') && (next == ' ' || next == utf8.RuneError):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
		digits = digits && r >= '0' && r <= '9'
		prev = r
	}
	return b.String()
}

// isWordChar reports whether r is a letter or a digit (0, the start or end of the text,
// is not).
func isWordChar(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// markdownURL is an http(s) address (httpLink's) for a Markdown autolink, <u>: an
// autolink ends at the first > and holds no < or space, so those are percent-encoded
// (httpLink refuses spaces and controls already); nothing inside an autolink is
// otherwise interpreted.
func markdownURL(u string) string {
	return strings.NewReplacer("<", "%3C", ">", "%3E").Replace(u)
}
