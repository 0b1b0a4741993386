package web

import (
	"strings"
	"testing"
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
		"<script>alert(1)</script>":       `&lt;script&gt;alert\(1\)&lt;\/script&gt;`,
		"[click](https://evil.example)":   `\[click\]\(https\:\/\/evil\.example\)`,
		"![x](y) **b** _i_ `c` # h | t ~": `\!\[x\]\(y\) \*\*b\*\* \_i\_ \` + "`" + `c\` + "`" + ` \# h \| t \~`,
		"a & b\nnext":                     `a &amp; b next`,
		"www.example.com":                 `www\.example\.com`,
		"zero\u200bwidth":                 `zero\\u200bwidth`,
	} {
		if got := markdown(in); got != want {
			t.Errorf("markdown(%q) = %q, want %q", in, got, want)
		}
	}
}
