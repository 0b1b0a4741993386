package web

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestVisible(t *testing.T) {
	for in, want := range map[string]string{
		"plain text":          "plain text",
		"zero\u200bwidth":     `zero\u200bwidth`,
		"bidi\u202eevil":      `bidi\u202eevil`,
		"tag\U000E0041":       `tag\U000e0041`,
		"nul\x00bel\x07":      `nul\u0000bel\u0007`,
		"bad\xffbyte":         `bad\xffbyte`,
		"line\nbreak\ttab":    "line\nbreak\ttab",
		"nbsp\u00a0x":         `nbsp\u00a0x`,
		"private\ue000use":    `private\ue000use`,
		"Grüße, 日本語 <b>&amp;": "Grüße, 日本語 <b>&amp;",
	} {
		if got := visible(in); got != want {
			t.Errorf("visible(%q) = %q, want %q", in, got, want)
		}
	}
	if got := visibleLine("a\nb\r\tc"); got != "a b  c" {
		t.Errorf("visibleLine = %q", got)
	}
	long := strings.Repeat("é", maxShown)
	if got := visible(long); len(got) > maxShown+len("…") || !strings.HasSuffix(got, "…") {
		t.Errorf("visible did not cut: %d bytes", len(got))
	}
}

func TestMarkdown(t *testing.T) {
	for in, want := range map[string]string{
		// Left as written: nothing here starts Markdown syntax.
		"127.0.0.1:18102":            "127.0.0.1:18102",
		"http://127.0.0.1:18102/mcp": "http://127.0.0.1:18102/mcp",
		"io.github.acme/search":      "io.github.acme/search",
		"pkg:npm/%40acme/search-mcp": "pkg:npm/%40acme/search-mcp",
		"1.2.0":                      "1.2.0",
		"delete_all files (x2)!":     "delete_all files (x2)!",
		"C# and F#, a > b, 50% @me":  "C# and F#, a > b, 50% @me",
		"www.example.com":            "www.example.com",
		// Raw HTML, entities and angle-bracket autolinks.
		"<script>alert(1)</script>":    "&lt;script>alert(1)&lt;/script>",
		"<img src=x onerror=alert(1)>": "&lt;img src=x onerror=alert(1)>",
		"<https://evil.example>":       "&lt;https://evil.example>",
		"&#x202e;&nbsp;&lt;":           "&amp;#x202e;&amp;nbsp;&amp;lt;",
		"a & b\nnext":                  "a &amp; b next",
		"<!-- hidden -->":              "&lt;!-- hidden -->",
		// Links, images, reference definitions, footnotes.
		"[click](https://evil.example)": `\[click\](https://evil.example)`,
		"[x]: https://evil.example":     `\[x\]: https://evil.example`,
		"![x](https://t.example/p.png)": `!\[x\](https://t.example/p.png)`,
		"see[^1]":                       `see\[^1\]`,
		// Emphasis, code, strikethrough, math, tables, escapes.
		"![x](y) **b** _i_ `c` # h | t ~": "!\\[x\\](y) \\*\\*b\\*\\* \\_i\\_ \\`c\\` \\# h \\| t \\~",
		"snake__case _lead trail_":        `snake\_\_case \_lead trail\_`,
		"a*b*c ~~s~~ $x$":                 `a\*b\*c \~\~s\~\~ \$x\$`,
		`back\slash\`:                     `back\\slash\\`,
		"a|b":                             `a\|b`,
		// Block syntax at the start of the text, and a heading's closing sequence.
		"# Title":   `\# Title`,
		"Title ##":  `Title \##`,
		"- item":    `\- item`,
		"+ item":    `\+ item`,
		"===":       `\===`,
		"---":       `\---`,
		"> quote":   `\> quote`,
		"1. first":  `1\. first`,
		"12) first": `12\) first`,
		"3.":        `3\.`,
		// Invisible characters stay visible escapes, their backslash escaped.
		"zero\u200bwidth": `zero\\u200bwidth`,
		"rlo\u202e":       `rlo\\u202e`,
		"tab\there":       "tab here",
	} {
		if got := markdown(in); got != want {
			t.Errorf("markdown(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzMarkdown holds markdown to its contract on any input: no raw "<", every "&"
// an entity it wrote, every always-escaped character escaped, "_" bare only inside a
// word, nothing at the start that could open a block, one line, and the text reads
// back, unescaped, as visibleLine made it.
func FuzzMarkdown(f *testing.F) {
	for _, s := range []string{"", "127.0.0.1:18102", "<b>&amp;</b>", "[a](b) **c** _d_ `e`", "# h", "- x", "1. y",
		"a_b__c_", "\\*", "\u200b\u202e", "x\xffy", "日本_語", "&#60;script&#62;", "~~$x$~~|"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := markdown(in)
		if strings.ContainsAny(out, "<\n\r\t") {
			t.Fatalf("markdown(%q) = %q holds <, a line break or a tab", in, out)
		}
		var plain strings.Builder
		rs := []rune(out)
		for i := 0; i < len(rs); i++ {
			r := rs[i]
			switch {
			case r == '\\':
				if i+1 == len(rs) || rs[i+1] >= utf8.RuneSelf || !unicode.IsPunct(rs[i+1]) && !unicode.IsSymbol(rs[i+1]) {
					t.Fatalf("markdown(%q) = %q: a backslash that escapes nothing at %d", in, out, i)
				}
				i++
				plain.WriteRune(rs[i])
				continue
			case r == '&':
				rest := string(rs[i:])
				switch {
				case strings.HasPrefix(rest, "&amp;"):
					plain.WriteByte('&')
					i += len("&amp;") - 1
				case strings.HasPrefix(rest, "&lt;"):
					plain.WriteByte('<')
					i += len("&lt;") - 1
				default:
					t.Fatalf("markdown(%q) = %q: a bare & at %d", in, out, i)
				}
				continue
			case strings.ContainsRune("`*~[]|$", r):
				t.Fatalf("markdown(%q) = %q: an unescaped %q at %d", in, out, r, i)
			case r == '_' && (i == 0 || i+1 == len(rs) || !isWordChar(rs[i-1]) || !isWordChar(rs[i+1])):
				t.Fatalf("markdown(%q) = %q: an unescaped _ outside a word at %d", in, out, i)
			case r == '#' && (i == 0 || rs[i-1] == ' '):
				t.Fatalf("markdown(%q) = %q: an unescaped # that could be a heading at %d", in, out, i)
			case i == 0 && strings.ContainsRune(">-+=", r):
				t.Fatalf("markdown(%q) = %q starts with an unescaped %q", in, out, r)
			}
			plain.WriteRune(r)
		}
		if want := visibleLine(in); plain.String() != want {
			t.Fatalf("markdown(%q) = %q reads back as %q, want %q", in, out, plain.String(), want)
		}
	})
}
