package stats

import (
	"strings"
	"testing"
)

func TestClassifyText(t *testing.T) {
	for _, c := range []struct{ before, after, want string }{
		{"Lists 3 items.", "Lists 3 items.", TextSame},
		{"Lists 3 items.", "Lists 12 items.", TextNumbersOnly},
		{"Version 1.2.3, 1,024 rows", "Version 1.10.0, 2,048 rows", TextNumbersOnly},
		{"As of 2026-11-30", "As of 2026-12-01", TextNumbersOnly},
		{"Lists  items.", "Lists items.\n", TextWhitespaceOnly},
		{"Lists 3 items.", "Lists 3 things.", TextOther},
		{"Lists 3 items.", "Lists 3.5 items", TextOther}, // the period is gone too
		{"a 1", "a 1 2", TextOther},                      // one number became two
		{"a\x00", "a5", TextOther},                       // a NUL is not a number
	} {
		if got := ClassifyText(c.before, c.after); got != c.want {
			t.Errorf("ClassifyText(%q, %q) = %s, want %s", c.before, c.after, got, c.want)
		}
	}
}

func TestToolChangesKnownAnswers(t *testing.T) {
	// Server 1: a change before the 30-day window (not counted), two inside it, one of
	// them descriptions only. Server 2: one change with a type narrowed. Server 3:
	// claimed, not counted.
	desc := &Change{DescriptionOnly: true, Tools: ToolCounts{Descriptions: 2, DescriptionsNumbersOnly: 1, ParamDescriptions: 1}}
	add := &Change{ToolsAdded: true, Tools: ToolCounts{Added: 3, Descriptions: 1, DescriptionsWhitespaceOnly: 1, Schemas: 1}}
	typ := &Change{SchemaChangedNamesSame: true, Breaking: true, Tools: ToolCounts{Schemas: 2, NumberToInteger: 4, OtherTypeChanges: 1}}
	servers := []Server{
		{ID: 1, Reads: []Read{rd(1, 0, "a", "1a", nil), rd(5, 0, "a b", "1b", add), rd(30, 0, "a b", "1c", desc), rd(31, 0, "a b c d e", "1d", add)}},
		{ID: 2, Reads: []Read{rd(40, 0, "a", "2a", nil), rd(41, 0, "a", "2b", typ)}},
		{ID: 3, Claimed: true, Reads: []Read{rd(40, 0, "a", "3a", nil), rd(41, 0, "a", "3b", typ)}},
	}
	got := Compute(servers, fixOpts).ToolChanges
	want := ToolChanges{Days: 30, From: at(20, 23), To: fixNow, ChangedLists: 3,
		Added: ServerCount{1, 3}, Descriptions: ServerCount{1, 3}, DescriptionsNumbersOnly: ServerCount{1, 1},
		DescriptionsWhitespaceOnly: ServerCount{1, 1}, ParamDescriptions: ServerCount{1, 1}, Schemas: ServerCount{2, 3},
		NumberToInteger: ServerCount{1, 4}, OtherTypeChanges: ServerCount{1, 1}, OnlyTextLists: 1}
	if got != want {
		t.Errorf("ToolChanges\n got %+v\nwant %+v", got, want)
	}
	md := (&Report{ToolChanges: got}).Markdown()
	for _, s := range []string{"| Tools added | 3 | 1 |", "| Parameter types number → integer | 4 | 1 |", "1 of the 3 changed lists changed only descriptions"} {
		if !strings.Contains(md, s) {
			t.Errorf("Markdown lacks %q", s)
		}
	}
}

func TestDuplicateCheck(t *testing.T) {
	for _, c := range []struct {
		t    ChangeTypes
		want string
	}{
		{ChangeTypes{}, "There were no changes to check for repeated names."},
		{ChangeTypes{Changes: 5}, "No change came from a repeated name alone: every change added or removed at least one name."},
		{ChangeTypes{Changes: 5, DuplicatesOnly: Part{Count: 2}}, "2 changes came only from a repeated name (a name listed once more or once less), with no name added or removed."},
	} {
		if got := c.t.DuplicateCheck(); got != c.want {
			t.Errorf("%+v: %q", c.t, got)
		}
	}
}
