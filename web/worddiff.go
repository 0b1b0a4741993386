package web

import (
	"html/template"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds of the word diff: beyond them a text's before and after are shown whole,
// without marks.
const (
	// maxDiffWords bounds the words of each side that remain once the common beginning
	// and end are set aside; the longest common subsequence of what remains takes
	// maxDiffWords² steps and cells at most.
	maxDiffWords = 512
	// maxDiffBytes bounds the bytes of each side (visible cuts server text at
	// maxShown already).
	maxDiffBytes = 4 * maxShown
	// historyDiffCells bounds the steps of all the word diffs of one history page
	// (markDetails): four diffs at maxDiffWords, or many small ones.
	historyDiffCells = 4 * maxDiffWords * maxDiffWords
)

// wordSpan is a piece of a text, changed or not, in a word diff.
type wordSpan struct {
	Text    string
	Changed bool
}

// wordToken is a word of a text (a run of characters other than white space) and
// the white space that follows it, as offsets.
type wordToken struct{ start, end, next int }

// words splits s into its words; lead is where the first word starts.
func words(s string) (lead int, ts []wordToken) {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			break
		}
		i += n
	}
	lead = i
	for i < len(s) {
		t := wordToken{start: i}
		for i < len(s) {
			r, n := utf8.DecodeRuneInString(s[i:])
			if unicode.IsSpace(r) {
				break
			}
			i += n
		}
		t.end = i
		for i < len(s) {
			r, n := utf8.DecodeRuneInString(s[i:])
			if !unicode.IsSpace(r) {
				break
			}
			i += n
		}
		t.next = i
		ts = append(ts, t)
	}
	return lead, ts
}

// wordDiff compares before and after word by word (a word is a run of characters
// other than white space; white space alone does not count as a change) and returns
// each as spans whose concatenation is the text, the words that are not in a longest
// common subsequence of the two marked Changed. A run of changed words is one span
// with the white space between its words; the white space around it is not marked.
// ok is false, and the spans nil, when a side has more than maxDiffBytes bytes or
// more than maxDiffWords words besides the common beginning and end, or when the
// product of those words' counts, the steps the comparison takes, is more than
// *cells; otherwise it is taken from *cells.
func wordDiff(before, after string, cells *int) (b, a []wordSpan, ok bool) {
	if len(before) > maxDiffBytes || len(after) > maxDiffBytes {
		return nil, nil, false
	}
	leadB, tb := words(before)
	leadA, ta := words(after)
	word := func(s string, t wordToken) string { return s[t.start:t.end] }
	same := func(i, j int) bool { return word(before, tb[i]) == word(after, ta[j]) }

	// The common beginning and end are unchanged.
	pre := 0
	for pre < len(tb) && pre < len(ta) && same(pre, pre) {
		pre++
	}
	suf := 0
	for suf < len(tb)-pre && suf < len(ta)-pre && same(len(tb)-1-suf, len(ta)-1-suf) {
		suf++
	}
	n, m := len(tb)-pre-suf, len(ta)-pre-suf
	if n > maxDiffWords || m > maxDiffWords || n*m > *cells {
		return nil, nil, false
	}
	*cells -= n * m
	changedB, changedA := make([]bool, len(tb)), make([]bool, len(ta))
	// The middle words as numbers, equal for equal words: the table compares numbers.
	ids := make(map[string]int32, n+m)
	id := func(w string) int32 {
		k, ok := ids[w]
		if !ok {
			k = int32(len(ids))
			ids[w] = k
		}
		return k
	}
	wb, wa := make([]int32, n), make([]int32, m)
	for i := range wb {
		wb[i] = id(word(before, tb[pre+i]))
	}
	for j := range wa {
		wa[j] = id(word(after, ta[pre+j]))
	}
	// lcs[i*(m+1)+j] is the length of a longest common subsequence of the middle
	// words from i and from j on (at most maxDiffWords, so uint16 holds it).
	lcs := make([]uint16, (n+1)*(m+1))
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if wb[i] == wa[j] {
				lcs[i*(m+1)+j] = lcs[(i+1)*(m+1)+j+1] + 1
			} else {
				lcs[i*(m+1)+j] = max(lcs[(i+1)*(m+1)+j], lcs[i*(m+1)+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && wb[i] == wa[j]:
			i, j = i+1, j+1
		case j == m || i < n && lcs[(i+1)*(m+1)+j] >= lcs[i*(m+1)+j+1]:
			changedB[pre+i] = true
			i++
		default:
			changedA[pre+j] = true
			j++
		}
	}
	return wordSpans(before, leadB, tb, changedB), wordSpans(after, leadA, ta, changedA), true
}

// wordSpans cuts s, whose words are ts after lead, into spans by changed, merging
// neighbours of the same kind: the white space between two changed words is changed.
func wordSpans(s string, lead int, ts []wordToken, changed []bool) []wordSpan {
	// Spans are built from offsets, so merging is extending the last span's end.
	type span struct {
		from, to int
		changed  bool
	}
	var spans []span
	put := func(from, to int, c bool) {
		if from == to {
			return
		}
		if k := len(spans) - 1; k >= 0 && spans[k].changed == c && spans[k].to == from {
			spans[k].to = to
			return
		}
		spans = append(spans, span{from, to, c})
	}
	put(0, lead, false)
	for k, t := range ts {
		put(t.start, t.end, changed[k])
		put(t.end, t.next, changed[k] && k+1 < len(ts) && changed[k+1])
	}
	out := make([]wordSpan, len(spans))
	for k, sp := range spans {
		out[k] = wordSpan{Text: s[sp.from:sp.to], Changed: sp.changed}
	}
	return out
}

// markedText is a text's before and after for a page, each plain text escaped for
// HTML with the words that changed in <del> (before) and <ins> (after); Marked is
// false when the texts were beyond the word diff's bounds (or its page's) and are
// shown whole. What names the text ("Description").
type markedText struct {
	What          string
	Before, After template.HTML
	Marked        bool
}

// markWords returns the text what before and after (plain text, visible already)
// with their changed words marked, built only from HTML-escaped pieces of the texts
// and the literal tags <del>, </del>, <ins> and </ins>; the diff's steps are taken
// from *cells (wordDiff).
func markWords(what, before, after string, cells *int) *markedText {
	b, a, ok := wordDiff(before, after, cells)
	if !ok {
		b, a = []wordSpan{{Text: before}}, []wordSpan{{Text: after}}
	}
	return &markedText{What: what, Before: spansHTML(b, "del"), After: spansHTML(a, "ins"), Marked: ok}
}

// spansHTML escapes the spans' text, each changed span in <tag>…</tag> (tag is del or
// ins, never server text).
func spansHTML(spans []wordSpan, tag string) template.HTML {
	var sb strings.Builder
	for _, sp := range spans {
		if sp.Changed {
			sb.WriteString("<" + tag + ">")
		}
		sb.WriteString(template.HTMLEscapeString(sp.Text))
		if sp.Changed {
			sb.WriteString("</" + tag + ">")
		}
	}
	return template.HTML(sb.String()) // escaped text and our own tags only
}
