package worddiff

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// unbounded is a budget of diff steps no test spends.
var unbounded = 1 << 62

// marked renders spans with [-…-] around a removed and {+…+} around an added run.
func marked(spans []Span, open, close string) string {
	var b strings.Builder
	for _, s := range spans {
		if s.Changed {
			b.WriteString(open + s.Text + close)
		} else {
			b.WriteString(s.Text)
		}
	}
	return b.String()
}

func TestWords(t *testing.T) {
	for _, c := range []struct{ before, after, wantB, wantA string }{
		{"", "", "", ""},
		{"same text", "same text", "same text", "same text"},
		{"", "new words", "", "{+new words+}"},
		{"old words", "", "[-old words-]", ""},
		{"Search the catalog.", "Search the whole catalog.", "Search the catalog.", "Search the {+whole+} catalog."},
		{"Read a file from disk.", "Read a page from the web.", "Read a [-file-] from [-disk.-]", "Read a {+page+} from {+the web.+}"},
		// A run of changed words is one mark with the space between them; the space
		// around it is not marked.
		{"a b c d e", "a x y e", "a [-b c d-] e", "a {+x y+} e"},
		// White space alone is no change, and is kept as it was on each side.
		{"  two\twords\n", "two   words", "  two\twords\n", "two   words"},
		{"lead  x", "\nlead y ", "lead  [-x-]", "\nlead {+y+} "},
		// Words are compared whole: punctuation makes a different word.
		{"Search the catalog.", "Search. <script>alert(1)</script>", "[-Search the catalog.-]", "{+Search. <script>alert(1)</script>+}"},
		{`zero\u200bwidth`, `zero\u200bwidth here`, `zero\u200bwidth`, `zero\u200bwidth {+here+}`},
		{"a b a b", "b a b a", "[-a-] b a b", "b a b {+a+}"},
	} {
		b, a, ok := Words(c.before, c.after, &unbounded)
		if !ok {
			t.Errorf("Words(%q, %q) not ok", c.before, c.after)
			continue
		}
		if gb, ga := marked(b, "[-", "-]"), marked(a, "{+", "+}"); gb != c.wantB || ga != c.wantA {
			t.Errorf("Words(%q, %q):\n got %q / %q\nwant %q / %q", c.before, c.after, gb, ga, c.wantB, c.wantA)
		}
	}
}

// wordsOf is the words of s, for the checks.
func wordsOf(s string) []string { return strings.Fields(s) }

// lcsLen is the length of a longest common subsequence of a and b, the plain way.
func lcsLen(a, b []string) int {
	prev := make([]int, len(b)+1)
	for i := range a {
		cur := make([]int, len(b)+1)
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev = cur
	}
	return prev[len(b)]
}

// checkWords holds wordDiff's result to its promises: each side's spans make up
// its text, no span is empty and neighbours differ in kind, the unchanged words of
// both sides are the same sequence, and it is a longest common one.
func checkWords(t *testing.T, before, after string, b, a []Span) {
	t.Helper()
	unchanged := func(side string, text string, spans []Span) []string {
		var whole strings.Builder
		var kept []string
		for i, s := range spans {
			if s.Text == "" || i > 0 && spans[i-1].Changed == s.Changed {
				t.Fatalf("%s of %q: spans %+v", side, text, spans)
			}
			if s.Changed && strings.TrimSpace(s.Text) != s.Text {
				t.Fatalf("%s of %q: a marked span begins or ends with white space: %+v", side, text, spans)
			}
			whole.WriteString(s.Text)
			if !s.Changed {
				kept = append(kept, wordsOf(s.Text)...)
			}
		}
		if whole.String() != text {
			t.Fatalf("%s: spans make %q, not %q", side, whole.String(), text)
		}
		return kept
	}
	kb, ka := unchanged("before", before, b), unchanged("after", after, a)
	if strings.Join(kb, "\x00") != strings.Join(ka, "\x00") {
		t.Fatalf("unchanged words differ: %q / %q", kb, ka)
	}
	if want := lcsLen(wordsOf(before), wordsOf(after)); len(kb) != want {
		t.Fatalf("%d words unchanged, a longest common subsequence has %d: %q / %q", len(kb), want, before, after)
	}
}

func TestWordsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 16))
	vocab := []string{"a", "b", "c", "read", "<b>", "&amp;", "\u200b"}
	spaces := []string{" ", "  ", "\n", "\t"}
	text := func() string {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(vocab[r.IntN(len(vocab))])
			b.WriteString(spaces[r.IntN(len(spaces))])
		}
		return b.String()
	}
	for range 2000 {
		before, after := text(), text()
		b, a, ok := Words(before, after, &unbounded)
		if !ok {
			t.Fatalf("Words(%q, %q) not ok", before, after)
		}
		checkWords(t, before, after, b, a)
	}
}

// TestWordsBound: beyond MaxWords words on a side that are not in the common
// beginning and end, or beyond MaxBytes, the texts are not compared; a long text
// with a small change in it is.
func TestWordsBound(t *testing.T) {
	many := func(prefix string, n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = prefix + strings.Repeat("x", i%3)
		}
		return strings.Join(ws, " ")
	}
	if _, _, ok := Words(many("a", MaxWords), many("b", MaxWords), &unbounded); !ok {
		t.Errorf("%d words on each side, all changed: not compared", MaxWords)
	}
	if _, _, ok := Words(many("a", MaxWords+1), "b", &unbounded); ok {
		t.Errorf("%d changed words before: compared", MaxWords+1)
	}
	if _, _, ok := Words("a", many("b", MaxWords+1), &unbounded); ok {
		t.Errorf("%d changed words after: compared", MaxWords+1)
	}
	// 3000 words each, one changed in the middle: the common ends are set aside.
	long := many("w", 3000)
	mid := len(long)/2 + strings.IndexByte(long[len(long)/2:], ' ') + 1
	changed := long[:mid] + "CHANGED " + long[mid:]
	b, a, ok := Words(long, changed, &unbounded)
	if !ok {
		t.Fatal("a long text with one added word: not compared")
	}
	checkWords(t, long, changed, b, a)
	if n := strings.Count(marked(a, "{+", "+}"), "{+"); n != 1 || !strings.Contains(marked(a, "{+", "+}"), "{+CHANGED+}") {
		t.Errorf("marks after: %d", n)
	}
	if _, _, ok := Words(strings.Repeat("a ", MaxBytes/2+1), "a", &unbounded); ok {
		t.Errorf("more than %d bytes: compared", MaxBytes)
	}

	// The worst case within the bound stays quick: every word changed, distinct.
	began := time.Now()
	for range 10 {
		cells := MaxWords * MaxWords
		if _, _, ok := Words(many("p", MaxWords), many("q", MaxWords), &cells); !ok || cells != 0 {
			t.Fatalf("a diff at the bound: %v, %d cells left", ok, cells)
		}
	}
	t.Logf("a diff at the bound: %v", time.Since(began)/10)
	if d := time.Since(began) / 10; d > 200*time.Millisecond {
		t.Errorf("a diff at the bound took %v", d)
	}
}

func FuzzWords(f *testing.F) {
	f.Add("Search the catalog.", "Search. <script>alert(1)</script> zero\u200bwidth")
	f.Add("a b c", "a  c\n")
	f.Add("", "x")
	f.Add("\xff\xfe a", "a \u00a0 b")
	f.Add("a b a b", "b a b a")
	f.Fuzz(func(t *testing.T, before, after string) {
		b, a, ok := Words(before, after, &unbounded)
		if !ok {
			if len(before) <= MaxBytes && len(after) <= MaxBytes && len(wordsOf(before)) <= MaxWords && len(wordsOf(after)) <= MaxWords {
				t.Fatalf("not compared: %q / %q", before, after)
			}
			return
		}
		checkWords(t, before, after, b, a)
	})
}
