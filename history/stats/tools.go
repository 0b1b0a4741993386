package stats

import (
	"fmt"
	"strings"
	"time"
	"unicode"
)

// ToolCounts are the per-tool counts of one change (a Read's Change), as seed 003
// tallies them: what happened to single tools, compared with the seeds' digest (name,
// description and input schema of each tool; package doc, What drift compares).
type ToolCounts struct {
	// Added and Removed are the tools added and removed (a renamed tool is one of each).
	Added   int `json:"added"`
	Removed int `json:"removed"`
	// Descriptions are the remaining tools whose description changed other than in
	// dates; of them, DescriptionsNumbersOnly and DescriptionsWhitespaceOnly differ
	// only in numbers or only in white space (ClassifyText).
	Descriptions               int `json:"descriptions"`
	DescriptionsNumbersOnly    int `json:"descriptionsNumbersOnly"`
	DescriptionsWhitespaceOnly int `json:"descriptionsWhitespaceOnly"`
	// ParamDescriptions are the remaining tools whose parameters' descriptions or
	// titles changed.
	ParamDescriptions int `json:"paramDescriptions"`
	// Schemas are the remaining tools whose input schema changed other than in texts.
	Schemas int `json:"schemas"`
	// NumberToInteger are the parameters whose declared type went from number to
	// integer; OtherTypeChanges the other parameters whose declared type changed so that
	// it may reject a value it used to accept (the diff's param_type_changed findings).
	NumberToInteger  int `json:"numberToInteger"`
	OtherTypeChanges int `json:"otherTypeChanges"`
}

// The ways two texts can differ (ClassifyText).
const (
	TextSame           = "same"
	TextWhitespaceOnly = "whitespace_only"
	TextNumbersOnly    = "numbers_only"
	TextOther          = "other"
)

// ClassifyText says how the text after differs from the text before: TextSame when
// equal; TextWhitespaceOnly when they are equal once every white space character
// (Unicode) is removed; TextNumbersOnly when they are equal once every number is
// replaced by one placeholder, a number being a run of ASCII digits and of '.' or ','
// between two digits (3, 1,024, 2.5, 2026-11-30 is three numbers, v1.2.3 one); else
// TextOther. White space is tried first, so the two are exclusive.
func ClassifyText(before, after string) string {
	switch {
	case before == after:
		return TextSame
	case withoutSpace(before) == withoutSpace(after):
		return TextWhitespaceOnly
	case withoutNumbers(before) == withoutNumbers(after):
		return TextNumbersOnly
	}
	return TextOther
}

func withoutSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

func withoutNumbers(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	isDigit := func(i int) bool { return i < len(s) && s[i] >= '0' && s[i] <= '9' }
	for i := 0; i < len(s); {
		switch {
		case isDigit(i):
			for {
				for isDigit(i) {
					i++
				}
				if i < len(s) && (s[i] == '.' || s[i] == ',') && isDigit(i+1) {
					i++
					continue
				}
				break
			}
			b.WriteString("\x00#") // the placeholder; a NUL of the text is written doubled
		case s[i] == 0:
			b.WriteString("\x00\x00")
			i++
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String()
}

// ServerCount counts items and the servers they came from.
type ServerCount struct {
	Servers int `json:"servers"`
	Count   int `json:"count"`
}

// ToolChanges is seed 003's per-tool table: over DriftActivity's servers and window,
// the changes of single tools in the changed lists.
type ToolChanges struct {
	Days         int       `json:"days"`
	From         time.Time `json:"from"` // exclusive
	To           time.Time `json:"to"`   // inclusive
	ChangedLists int       `json:"changedLists"`
	// Each is a sum of ToolCounts over the changed lists, with the servers they came from.
	Added                      ServerCount `json:"added"`
	Removed                    ServerCount `json:"removed"`
	Descriptions               ServerCount `json:"descriptions"`
	DescriptionsNumbersOnly    ServerCount `json:"descriptionsNumbersOnly"`
	DescriptionsWhitespaceOnly ServerCount `json:"descriptionsWhitespaceOnly"`
	ParamDescriptions          ServerCount `json:"paramDescriptions"`
	Schemas                    ServerCount `json:"schemas"`
	NumberToInteger            ServerCount `json:"numberToInteger"`
	OtherTypeChanges           ServerCount `json:"otherTypeChanges"`
	// OnlyTextLists are the changed lists in which no tool was added or removed and no
	// schema or declared type changed: only descriptions (of tools or parameters).
	OnlyTextLists int `json:"onlyTextLists"`
}

// toolTally accumulates ToolChanges.
type toolTally struct {
	start time.Time
	lists int
	text  int
	sum   [9]ServerCount
}

// fields returns the counts of tc in the order of sum.
func (tc *ToolCounts) fields() [9]int {
	return [9]int{tc.Added, tc.Removed, tc.Descriptions, tc.DescriptionsNumbersOnly, tc.DescriptionsWhitespaceOnly,
		tc.ParamDescriptions, tc.Schemas, tc.NumberToInteger, tc.OtherTypeChanges}
}

// add counts an eligible server's changed lists after the window start (the reads
// DriftActivity counts as changed lists).
func (t *toolTally) add(reads []Read) {
	var server [9]int
	for i := firstAfter(reads, t.start); i < len(reads); i++ {
		ch := reads[i].Change
		if ch == nil {
			continue
		}
		t.lists++
		f := ch.Tools.fields()
		for k, n := range f {
			server[k] += n
		}
		if f[0] == 0 && f[1] == 0 && f[6] == 0 && f[7] == 0 && f[8] == 0 && (f[2] > 0 || f[5] > 0) {
			t.text++
		}
	}
	for k, n := range server {
		if n > 0 {
			t.sum[k].Servers++
			t.sum[k].Count += n
		}
	}
}

func (t *toolTally) report(days int, now time.Time) ToolChanges {
	s := t.sum
	return ToolChanges{Days: days, From: t.start, To: now, ChangedLists: t.lists,
		Added: s[0], Removed: s[1], Descriptions: s[2], DescriptionsNumbersOnly: s[3], DescriptionsWhitespaceOnly: s[4],
		ParamDescriptions: s[5], Schemas: s[6], NumberToInteger: s[7], OtherTypeChanges: s[8], OnlyTextLists: t.text}
}

// DigestNote says what the drift tables compare; the page and the Markdown show it.
const DigestNote = "The drift tables compare what seeds 001 and 003 digest: each tool's name, description and input schema. " +
	"The history keeps the whole surface, but a change only in a tool's title, annotations or output schema, or in the instructions, is no change here."

// PaginatedNote says why paginated servers are left out of the toolset and drift
// tables; the page and the Markdown show it.
const PaginatedNote = "Probity reads every page of a paginated tool list; such servers are left out only to keep the seeds' scope, whose probe read the first page alone."

// ToolChangesDefinition says what ToolChanges counts.
const ToolChangesDefinition = "The changed lists of the table above, tool by tool, compared with the seeds' digest. " +
	"A description change is a tool's description that differs other than in dates; numbers only: equal once every number is replaced by a placeholder; white space only: equal once white space is removed. " +
	"A type change is a parameter whose declared type may now reject a value it used to accept (Probity's potentially breaking rule); a widening such as integer → number or adding null is a schema change only."

// ToolChangeRows returns the rows of ToolChanges: label, count, servers.
func (t ToolChanges) ToolChangeRows() [][3]string {
	row := func(label string, c ServerCount) [3]string { return [3]string{label, Count(c.Count), Count(c.Servers)} }
	return [][3]string{
		row("Tools added", t.Added),
		row("Tools removed", t.Removed),
		row("Tool descriptions changed", t.Descriptions),
		row("… differing only in numbers", t.DescriptionsNumbersOnly),
		row("… differing only in white space", t.DescriptionsWhitespaceOnly),
		row("Tools whose parameter descriptions changed", t.ParamDescriptions),
		row("Input schemas changed", t.Schemas),
		row("Parameter types number → integer", t.NumberToInteger),
		row("Other parameter type changes", t.OtherTypeChanges),
	}
}

// ToolChangesNote is the sentence under the ToolChanges table.
func (t ToolChanges) ToolChangesNote() string {
	return fmt.Sprintf("%s of the %s changed only descriptions (of tools or parameters).",
		Count(t.OnlyTextLists), Plural(t.ChangedLists, "changed list", "changed lists"))
}

// markdown writes the ToolChanges section.
func (t ToolChanges) markdown(p func(string, ...any)) {
	p("\n### Single tools in the changed lists\n\n%s\n\n", ToolChangesDefinition)
	p("| Change | Count | Servers |\n|---|---|---|\n")
	for _, r := range t.ToolChangeRows() {
		p("| %s | %s | %s |\n", r[0], r[1], r[2])
	}
	p("\n%s\n", t.ToolChangesNote())
}
