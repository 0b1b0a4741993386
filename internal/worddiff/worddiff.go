// Package worddiff compares two texts word by word, for showing a text's before and
// after with the words that changed marked. A word is a run of characters other than
// white space (unicode.IsSpace); white space alone is no change. The words common to
// both texts are a longest common subsequence of their words, found after the common
// beginning and end are set aside, in steps bounded by MaxWords² and a caller's budget
// (Words). It is pure: no I/O, no state, and no escaping; the caller escapes the spans
// for its output.
package worddiff

import (
	"unicode"
	"unicode/utf8"
)

// Bounds of the word diff: beyond them Words does not compare the texts.
const (
	// MaxWords bounds the words of each side that remain once the common beginning
	// and end are set aside; the longest common subsequence of what remains takes
	// MaxWords² steps and cells at most.
	MaxWords = 512
	// MaxBytes bounds the bytes of each side.
	MaxBytes = 16 << 10
)

// Span is a piece of a text in a word diff: changed, or common to both texts.
type Span struct {
	Text    string
	Changed bool
}

// token is a word of a text (a run of characters other than white space) and
// the white space that follows it, as offsets.
type token struct{ start, end, next int }

// words splits s into its words; lead is where the first word starts.
func words(s string) (lead int, ts []token) {
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
		t := token{start: i}
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

// Words compares before and after word by word (a word is a run of characters
// other than white space; white space alone does not count as a change) and returns
// each as spans whose concatenation is the text, the words that are not in a longest
// common subsequence of the two marked Changed. A run of changed words is one span
// with the white space between its words; the white space around it is not marked.
// ok is false, and the spans nil, when a side has more than MaxBytes bytes or
// more than MaxWords words besides the common beginning and end, or when the
// product of those words' counts, the steps the comparison takes, is more than
// *cells; otherwise it is taken from *cells.
func Words(before, after string, cells *int) (b, a []Span, ok bool) {
	if len(before) > MaxBytes || len(after) > MaxBytes {
		return nil, nil, false
	}
	leadB, tb := words(before)
	leadA, ta := words(after)
	word := func(s string, t token) string { return s[t.start:t.end] }
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
	if n > MaxWords || m > MaxWords || n*m > *cells {
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
	// words from i and from j on (at most MaxWords, so uint16 holds it).
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
	return Spans(before, leadB, tb, changedB), Spans(after, leadA, ta, changedA), true
}

// Spans cuts s, whose words are ts after lead, into spans by changed, merging
// neighbours of the same kind: the white space between two changed words is changed.
func Spans(s string, lead int, ts []token, changed []bool) []Span {
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
	out := make([]Span, len(spans))
	for k, sp := range spans {
		out[k] = Span{Text: s[sp.from:sp.to], Changed: sp.changed}
	}
	return out
}
