package web

import (
	"html/template"
	"strings"

	"github.com/probity-dev/probity/internal/worddiff"
)

// historyDiffCells bounds the steps of all the word diffs of one history page
// (markDetails): four diffs at worddiff.MaxWords, or many small ones.
const historyDiffCells = 4 * worddiff.MaxWords * worddiff.MaxWords

// markedText is a text's before and after for a page, each plain text escaped for
// HTML with the words that changed in <del> (before) and <ins> (after); Marked is
// false when the texts were beyond the word diff's bounds (worddiff.Words) or the
// page's, and are shown whole. What names the text ("Description").
type markedText struct {
	What          string
	Before, After template.HTML
	Marked        bool
}

// markWords returns the text what before and after (plain text, visible already)
// with their changed words marked, built only from HTML-escaped pieces of the texts
// and the literal tags <del>, </del>, <ins> and </ins>; the diff's steps are taken
// from *cells (worddiff.Words).
func markWords(what, before, after string, cells *int) *markedText {
	b, a, ok := worddiff.Words(before, after, cells)
	if !ok {
		b, a = []worddiff.Span{{Text: before}}, []worddiff.Span{{Text: after}}
	}
	return &markedText{What: what, Before: spansHTML(b, "del"), After: spansHTML(a, "ins"), Marked: ok}
}

// spansHTML escapes the spans' text, each changed span in <tag>…</tag> (tag is del or
// ins, never server text).
func spansHTML(spans []worddiff.Span, tag string) template.HTML {
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
