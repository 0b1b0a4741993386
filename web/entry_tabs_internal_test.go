package web

import (
	"html/template"
	"strings"
	"testing"
)

// TestMarkInvisible: the escapes of hidden characters in an evidence sample are marked,
// everything else is escaped text, and a server cannot forge a mark: an escaped
// backslash followed by "u200b", markup, and text that is not the checks' ASCII stay
// text.
func TestMarkInvisible(t *testing.T) {
	m := `<mark class="mark-invisible">`
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"plain text", "plain text"},
		{`Looks up users.\u200bIgnore`, `Looks up users.` + m + `\u200b</mark>Ignore`},
		{`a\u00e9b`, `a\u00e9b`}, // é hides nothing
		{`\U000e0041\u202e`, m + `\U000e0041</mark>` + m + `\u202e</mark>`},
		{`\x00\x1b[31m`, m + `\x00</mark>` + m + `\x1b</mark>[31m`},
		{`tab\tnewline\n`, `tab\tnewline\n`},
		{`\\u200b`, `\\u200b`}, // an escaped backslash, then text
		{`\\\u200b`, `\\` + m + `\u200b</mark>`},
		{`<script>alert(1)</script>\u200b"&'`, `&lt;script&gt;alert(1)&lt;/script&gt;` + m + `\u200b</mark>&#34;&amp;&#39;`},
		{`<mark class="mark-invisible">x</mark>`, `&lt;mark class=&#34;mark-invisible&#34;&gt;x&lt;/mark&gt;`},
		{`\u20`, `\u20`},     // cut short: text
		{`\uzzzz`, `\uzzzz`}, // not hex: text
		{`trailing\`, `trailing\`},
		{"not ascii \u200b <b>", "not ascii \u200b &lt;b&gt;"}, // not the checks' escaping: only escaped
	} {
		if got := markInvisible(c.in); got != template.HTML(c.want) {
			t.Errorf("markInvisible(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzMarkInvisible(f *testing.F) {
	for _, s := range []string{`a\u200bb`, `\\u200b`, `<b>\x00</b>`, `\U0010ffff\U00110000`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := string(markInvisible(s))
		// Without the marks, the output is the input escaped: nothing else is added.
		plain := strings.ReplaceAll(strings.ReplaceAll(got, `<mark class="mark-invisible">`, ""), "</mark>", "")
		if plain != template.HTMLEscapeString(s) {
			t.Fatalf("markInvisible(%q) = %q", s, got)
		}
		if strings.Count(got, "<") != 2*strings.Count(got, `<mark class="mark-invisible">`) {
			t.Fatalf("markInvisible(%q) = %q: a tag that is not a mark", s, got)
		}
	})
}

func TestShellWord(t *testing.T) {
	for in, want := range map[string]string{
		"https://mcp.example.com/mcp":      "https://mcp.example.com/mcp",
		"https://x.example/mcp?a=1&b=2":    "'https://x.example/mcp?a=1&b=2'",
		"https://x.example/it's":           `'https://x.example/it'"'"'s'`,
		"https://x.example/$(rm -rf ~)":    "'https://x.example/$(rm -rf ~)'",
		"":                                 "''",
		"https://x.example/a;b`c`|d>e<f\\": "'https://x.example/a;b`c`|d>e<f\\'",
	} {
		if got := shellWord(in); got != want {
			t.Errorf("shellWord(%q) = %s, want %s", in, got, want)
		}
	}
}
