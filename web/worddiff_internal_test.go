package web

import (
	"html"
	"html/template"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/probity-dev/probity/internal/worddiff"
)

// unbounded is a budget of diff steps no test spends.
var unbounded = 1 << 62

// TestWordDiffPageBudget: the diffs of a page share a budget of steps; once it is
// spent, the texts are shown whole, and the budget is only taken for what is compared.
func TestWordDiffPageBudget(t *testing.T) {
	long := func(p string) string { return strings.Repeat(p+" ", worddiff.MaxWords) }
	cells := historyDiffCells
	for i := range 4 {
		if m := markWords("Description", long("a"), long("b"), &cells); !m.Marked {
			t.Fatalf("diff %d of 4 at the bound: not marked", i+1)
		}
	}
	if m := markWords("Description", long("a"), long("b"), &cells); m.Marked || cells != 0 {
		t.Fatalf("a fifth diff at the bound: marked %v, %d cells left", m.Marked, cells)
	}
	// Equal beginnings and ends cost nothing: words only added are still marked.
	if m := markWords("Description", long("a"), long("a")+"y", &cells); cells != 0 || !m.Marked || !strings.HasSuffix(string(m.After), "<ins>y</ins>") {
		t.Fatalf("a small change with no budget left: %+v", m)
	}
}

// tagged matches the only tags markWords writes.
var tagged = regexp.MustCompile(`</?(del|ins)>`)

// TestMarkWordsEscapes: hostile server text in either side comes out escaped, with
// our four tags the only markup, and reads back as the text it was.
func TestMarkWordsEscapes(t *testing.T) {
	before := visible("Search the catalog. zero\u200bwidth \"quoted\" & 'single'")
	after := visible("Search <script>alert(1)</script> the <img src=x onerror=alert(1)> catalog. zero\u200bwidth\u202e \"quoted\" & 'single'")
	m := markWords("Description", before, after, &unbounded)
	if !m.Marked {
		t.Fatal("not marked")
	}
	for side, h := range map[string]string{"before": string(m.Before), "after": string(m.After)} {
		rest := tagged.ReplaceAllString(h, "")
		if strings.ContainsAny(rest, "<>\"'") {
			t.Errorf("%s: markup or quotes besides the marks: %s", side, h)
		}
		if strings.ContainsRune(h, '\u200b') || strings.ContainsRune(h, '\u202e') {
			t.Errorf("%s: an invisible character: %q", side, h)
		}
	}
	if got := html.UnescapeString(tagged.ReplaceAllString(string(m.After), "")); got != after {
		t.Errorf("after reads back as %q, not %q", got, after)
	}
	for _, want := range []string{
		`Search <ins>&lt;script&gt;alert(1)&lt;/script&gt;</ins> the <ins>&lt;img src=x onerror=alert(1)&gt;</ins> catalog.`,
		`<ins>zero\u200bwidth\u202e</ins> &#34;quoted&#34; &amp; &#39;single&#39;`,
	} {
		if !strings.Contains(string(m.After), want) {
			t.Errorf("after lacks %s:\n%s", want, m.After)
		}
	}
	if want := `Search the catalog. <del>zero\u200bwidth</del> &#34;quoted&#34;`; !strings.Contains(string(m.Before), want) {
		t.Errorf("before lacks %s:\n%s", want, m.Before)
	}

	// Beyond the bound: both whole, escaped, unmarked.
	long := strings.Repeat("<b>x ", worddiff.MaxWords+1)
	m = markWords("Description", long, "y", &unbounded)
	if m.Marked || tagged.MatchString(string(m.Before)) || string(m.Before) != strings.Repeat("&lt;b&gt;x ", worddiff.MaxWords+1) || m.After != "y" {
		t.Errorf("beyond the bound: %+v", m)
	}
}

// TestMarkWordsRandomHostile: random texts of markup, quotes, invisible characters
// and white space come out escaped, with the marks the only tags, and read back as
// the visible text they were.
func TestMarkWordsRandomHostile(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 1))
	pieces := []string{"<script>", "</pre>", "<del>", "\"", "'", "&amp;", "&", "a", "b", "\u200b", "\u202e", "\x00", "\xff", " ", "\n", "\t", "\u00a0"}
	text := func() string {
		var b strings.Builder
		for range r.IntN(16) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		return b.String()
	}
	for range 3000 {
		before, after := visible(text()), visible(text())
		m := markWords("Text", before, after, &unbounded)
		for _, c := range []struct {
			h    template.HTML
			text string
		}{{m.Before, before}, {m.After, after}} {
			rest := tagged.ReplaceAllString(string(c.h), "")
			if strings.ContainsAny(rest, "<>\"'\x00\u200b\u202e") {
				t.Fatalf("markup, a quote or an invisible character besides the marks: %q", c.h)
			}
			if got := html.UnescapeString(rest); got != c.text {
				t.Fatalf("%q reads back as %q", c.text, got)
			}
		}
	}
}
