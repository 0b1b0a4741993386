package diff

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
)

// baseTool is the tool most cases edit.
const baseTool = `{"name":"get_file","title":"Get file","description":"Reads a file. Returns its bytes.",
	"inputSchema":{"type":"object","properties":{
		"path":{"type":"string","description":"File path."},
		"opts":{"type":"object","properties":{"depth":{"type":"number","description":"Depth."}}},
		"files":{"type":"array","items":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}
	},"required":["path"]},
	"annotations":{"readOnlyHint":true}}`

// del deletes a member in edit.
var del = &struct{}{}

// edit returns the JSON object doc with the member at path ("/"-separated keys) set to
// v, or deleted when v is del; edits come in pairs of path and value.
func edit(doc string, edits ...any) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		panic(err)
	}
	for i := 0; i < len(edits); i += 2 {
		keys := strings.Split(edits[i].(string), "/")
		cur := m
		for _, k := range keys[:len(keys)-1] {
			next, ok := cur[k].(map[string]any)
			if !ok {
				next = map[string]any{}
				cur[k] = next
			}
			cur = next
		}
		last := keys[len(keys)-1]
		if edits[i+1] == del {
			delete(cur, last)
		} else {
			cur[last] = edits[i+1]
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// raw parses a JSON literal for edit values.
func raw(s string) any {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		panic(err)
	}
	return v
}

func surface(tools ...string) Surface {
	var s Surface
	for _, t := range tools {
		s.Tools = append(s.Tools, json.RawMessage(t))
	}
	return s
}

func bp(b bool) *bool       { return &b }
func sp(s string) *string   { return &s }
func dump(c *Change) string { b, _ := json.MarshalIndent(c, "", "  "); return string(b) }

const (
	pathLong = "get_file.inputSchema.properties."
)

func TestCompare(t *testing.T) {
	listDir := `{"name":"list_dir","description":"Lists a directory. Recursively, if asked."}`
	withInstructions := func(s Surface, ins *string) Surface { s.Instructions = ins; return s }
	withVersion := func(s Surface, v string) Surface { s.Version = v; return s }
	base := surface(baseTool)
	changed := func(tc ToolChange) []ToolChange {
		tc.Name = "get_file"
		return []ToolChange{tc}
	}
	for _, tc := range []struct {
		name          string
		before, after Surface
		want          Change
	}{
		{name: "no change", before: base, after: surface(baseTool)},
		{name: "tool added", before: base, after: surface(baseTool, listDir),
			want: Change{Added: []ToolRef{{"list_dir", "Lists a directory."}}}},
		{name: "tool removed", before: surface(baseTool, listDir), after: base,
			want: Change{Removed: []ToolRef{{"list_dir", "Lists a directory."}},
				Breaking: []Breaking{{Kind: BreakingToolRemoved, Tool: "list_dir", Path: "list_dir"}}}},
		{name: "rename is one added and one removed", before: base, after: surface(edit(baseTool, "name", "read_file")),
			want: Change{Added: []ToolRef{{"read_file", "Get file"}}, Removed: []ToolRef{{"get_file", "Get file"}},
				Breaking: []Breaking{{Kind: BreakingToolRemoved, Tool: "get_file", Path: "get_file"}}}},
		{name: "title", before: base, after: surface(edit(baseTool, "title", "Read file")),
			want: Change{Changed: changed(ToolChange{TitleChanged: true, TitleBefore: "Get file", TitleAfter: "Read file"})}},
		{name: "annotations.title stands in for a missing title",
			before: surface(edit(baseTool, "title", del, "annotations/title", "Get")),
			after:  surface(edit(baseTool, "title", del, "annotations/title", "Fetch")),
			want:   Change{Changed: changed(ToolChange{TitleChanged: true, TitleBefore: "Get", TitleAfter: "Fetch"})}},
		{name: "description", before: base, after: surface(edit(baseTool, "description", "Reads a file or a directory.")),
			want: Change{Changed: changed(ToolChange{DescriptionChanged: true,
				DescriptionBefore: "Reads a file. Returns its bytes.", DescriptionAfter: "Reads a file or a directory."})}},
		{name: "param added", before: base, after: surface(edit(baseTool, "inputSchema/properties/opts/properties/verbose", raw(`{"type":"boolean"}`))),
			want: Change{Changed: changed(ToolChange{ParamsAdded: []string{"opts.verbose"}, InputSchemaChanged: true})}},
		{name: "param removed", before: base, after: surface(edit(baseTool, "inputSchema/properties/opts", del)),
			want: Change{Changed: changed(ToolChange{ParamsRemoved: []string{"opts"}, InputSchemaChanged: true}),
				Breaking: []Breaking{{Kind: BreakingParamRemoved, Tool: "get_file", Path: pathLong + "opts"}}}},
		{name: "param newly required", before: base, after: surface(edit(baseTool, "inputSchema/required", []string{"opts", "path"})),
			want: Change{Changed: changed(ToolChange{ParamsNewlyRequired: []string{"opts"}, InputSchemaChanged: true}),
				Breaking: []Breaking{{Kind: BreakingParamNewlyRequired, Tool: "get_file", Path: pathLong + "opts"}},
				Badges:   []Badge{{BadgeNewlyRequiredParam, "get_file"}}}},
		{name: "new required param", before: base,
			after: surface(edit(baseTool, "inputSchema/properties/mode", raw(`{"type":"string"}`), "inputSchema/required", []string{"path", "mode"})),
			want: Change{Changed: changed(ToolChange{ParamsAdded: []string{"mode"}, ParamsNewlyRequired: []string{"mode"}, InputSchemaChanged: true}),
				Breaking: []Breaking{{Kind: BreakingParamNewlyRequired, Tool: "get_file", Path: pathLong + "mode"}},
				Badges:   []Badge{{BadgeNewlyRequiredParam, "get_file"}}}},
		{name: "required no more is a schema change", before: base, after: surface(edit(baseTool, "inputSchema/required", []string{})),
			want: Change{Changed: changed(ToolChange{InputSchemaChanged: true})}},
		{name: "param description", before: base, after: surface(edit(baseTool, "inputSchema/properties/path/description", "Path of the file.")),
			want: Change{Changed: changed(ToolChange{ParamDescriptionsChanged: []string{"path"}})}},
		{name: "nested param title added", before: base, after: surface(edit(baseTool, "inputSchema/properties/opts/properties/depth/title", "Depth")),
			want: Change{Changed: changed(ToolChange{ParamDescriptionsChanged: []string{"opts.depth"}})}},
		{name: "param description removed", before: base, after: surface(edit(baseTool, "inputSchema/properties/path/description", del)),
			want: Change{Changed: changed(ToolChange{ParamDescriptionsChanged: []string{"path"}})}},
		{name: "param type", before: base, after: surface(edit(baseTool, "inputSchema/properties/path/type", "integer")),
			want: Change{Changed: changed(ToolChange{InputSchemaChanged: true}),
				Breaking: []Breaking{{Kind: BreakingParamTypeChanged, Tool: "get_file", Path: pathLong + "path", Before: "string", After: "integer"}}}},
		{name: "nested number to integer narrows", before: base, after: surface(edit(baseTool, "inputSchema/properties/opts/properties/depth/type", "integer")),
			want: Change{Changed: changed(ToolChange{InputSchemaChanged: true}),
				Breaking: []Breaking{{Kind: BreakingParamTypeChanged, Tool: "get_file", Path: pathLong + "opts.properties.depth",
					Before: "number", After: "integer", Narrowing: true}}}},
		{name: "integer to number widens", before: surface(edit(baseTool, "inputSchema/properties/opts/properties/depth/type", "integer")), after: base,
			want: Change{Changed: changed(ToolChange{InputSchemaChanged: true})}},
		{name: "anyOf with null widens", before: base,
			after: surface(edit(baseTool, "inputSchema/properties/path", raw(`{"anyOf":[{"type":"string"},{"type":"null"}],"description":"File path."}`))),
			want:  Change{Changed: changed(ToolChange{InputSchemaChanged: true})}},
		{name: "type array with null widens", before: base, after: surface(edit(baseTool, "inputSchema/properties/path/type", []string{"null", "string"})),
			want: Change{Changed: changed(ToolChange{InputSchemaChanged: true})}},
		{name: "anyOf with null to single type narrows",
			before: surface(edit(baseTool, "inputSchema/properties/path", raw(`{"anyOf":[{"type":"string"},{"type":"null"}],"description":"File path."}`))),
			after:  base,
			want: Change{Changed: changed(ToolChange{InputSchemaChanged: true}),
				Breaking: []Breaking{{Kind: BreakingParamTypeChanged, Tool: "get_file", Path: pathLong + "path",
					Before: "string|null", After: "string", Narrowing: true}}}},
		{name: "oneOf of other types", before: base,
			after: surface(edit(baseTool, "inputSchema/properties/path", raw(`{"oneOf":[{"type":"integer"},{"type":"null"}]}`))),
			want: Change{Changed: changed(ToolChange{InputSchemaChanged: true, ParamDescriptionsChanged: []string{"path"}}),
				Breaking: []Breaking{{Kind: BreakingParamTypeChanged, Tool: "get_file", Path: pathLong + "path",
					Before: "string", After: "integer|null"}}}},
		{name: "anyOf with an untyped branch declares no type", before: base,
			after: surface(edit(baseTool, "inputSchema/properties/path", raw(`{"anyOf":[{"type":"string"},{"$ref":"#/$defs/p"}],"description":"File path."}`))),
			want:  Change{Changed: changed(ToolChange{InputSchemaChanged: true})}},
		{name: "type arrays are sets",
			before: surface(edit(baseTool, "inputSchema/properties/path/type", []string{"string", "null"})),
			after:  surface(edit(baseTool, "inputSchema/properties/path/type", []string{"null", "string", "string"}))},
		{name: "required lists are sets",
			before: surface(edit(baseTool, "inputSchema/required", []string{"path", "opts"})),
			after:  surface(edit(baseTool, "inputSchema/required", []string{"opts", "path", "opts"}))},
		{name: "type dropped widens", before: base, after: surface(edit(baseTool, "inputSchema/properties/path/type", del)),
			want: Change{Changed: changed(ToolChange{InputSchemaChanged: true})}},
		{name: "type declared narrows", before: surface(edit(baseTool, "inputSchema/properties/path/type", del)), after: base,
			want: Change{Changed: changed(ToolChange{InputSchemaChanged: true}),
				Breaking: []Breaking{{Kind: BreakingParamTypeChanged, Tool: "get_file", Path: pathLong + "path",
					Before: "", After: "string", Narrowing: true}}}},
		{name: "object made nullable keeps its parameters", before: base,
			after: surface(edit(baseTool, "inputSchema/properties/opts", raw(`{"anyOf":[{"type":"object","properties":{"depth":{"type":"number","description":"Depth."}}},{"type":"null"}]}`))),
			want:  Change{Changed: changed(ToolChange{InputSchemaChanged: true})}},
		{name: "nullable object changes inside", before: base,
			after: surface(edit(baseTool, "inputSchema/properties/opts", raw(`{"anyOf":[{"type":"object","properties":{"depth":{"type":"integer","description":"Depth."}},"required":["depth"]},{"type":"null"}]}`))),
			want: Change{Changed: changed(ToolChange{ParamsNewlyRequired: []string{"opts.depth"}, InputSchemaChanged: true}),
				Breaking: []Breaking{
					{Kind: BreakingParamNewlyRequired, Tool: "get_file", Path: pathLong + "opts.properties.depth"},
					{Kind: BreakingParamTypeChanged, Tool: "get_file", Path: pathLong + "opts.properties.depth", Before: "number", After: "integer", Narrowing: true},
				},
				Badges: []Badge{{BadgeNewlyRequiredParam, "get_file"}}}},
		{name: "items: property removed, added, type changed", before: base,
			after: surface(edit(baseTool, "inputSchema/properties/files/items", raw(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`))),
			want: Change{Changed: changed(ToolChange{ParamsAdded: []string{"files[].name"}, ParamsRemoved: []string{"files[].path"},
				ParamsNewlyRequired: []string{"files[].name"}, InputSchemaChanged: true}),
				Breaking: []Breaking{
					{Kind: BreakingParamNewlyRequired, Tool: "get_file", Path: pathLong + "files.items.properties.name"},
					{Kind: BreakingParamRemoved, Tool: "get_file", Path: pathLong + "files.items.properties.path"},
				},
				Badges: []Badge{{BadgeNewlyRequiredParam, "get_file"}}}},
		{name: "items type", before: base, after: surface(edit(baseTool, "inputSchema/properties/files/items", raw(`{"type":"string"}`))),
			want: Change{Changed: changed(ToolChange{ParamsRemoved: []string{"files[].path"}, InputSchemaChanged: true}),
				Breaking: []Breaking{
					{Kind: BreakingParamTypeChanged, Tool: "get_file", Path: pathLong + "files.items", Before: "object", After: "string"},
					{Kind: BreakingParamRemoved, Tool: "get_file", Path: pathLong + "files.items.properties.path"},
				}}},
		{name: "deeply nested", before: surface(edit(baseTool, "inputSchema/properties/opts/properties/filter", raw(`{"type":"object","properties":{"by":{"type":"object","properties":{"a.b":{"type":"string"}}}}}`))),
			after: surface(edit(baseTool, "inputSchema/properties/opts/properties/filter", raw(`{"type":"object","properties":{"by":{"type":"object","properties":{"a.b":{"type":"boolean"}},"required":["a.b"]}}}`))),
			want: Change{Changed: changed(ToolChange{ParamsNewlyRequired: []string{`opts.filter.by."a.b"`}, InputSchemaChanged: true}),
				Breaking: []Breaking{
					{Kind: BreakingParamNewlyRequired, Tool: "get_file", Path: pathLong + `opts.properties.filter.properties.by.properties."a.b"`},
					{Kind: BreakingParamTypeChanged, Tool: "get_file", Path: pathLong + `opts.properties.filter.properties.by.properties."a.b"`, Before: "string", After: "boolean"},
				},
				Badges: []Badge{{BadgeNewlyRequiredParam, "get_file"}}}},
		{name: "enum is a schema change, not a breaking one", before: base, after: surface(edit(baseTool, "inputSchema/properties/path/enum", []string{"a", "b"})),
			want: Change{Changed: changed(ToolChange{InputSchemaChanged: true})}},
		{name: "output schema", before: base, after: surface(edit(baseTool, "outputSchema", raw(`{"type":"object"}`))),
			want: Change{Changed: changed(ToolChange{OutputSchemaChanged: true})}},
		{name: "output schema property removed is not breaking",
			before: surface(edit(baseTool, "outputSchema", raw(`{"type":"object","properties":{"a":{"type":"string"}}}`))),
			after:  surface(edit(baseTool, "outputSchema", raw(`{"type":"object","properties":{}}`))),
			want:   Change{Changed: changed(ToolChange{OutputSchemaChanged: true})}},
		{name: "no longer read-only", before: base, after: surface(edit(baseTool, "annotations/readOnlyHint", false)),
			want: Change{Changed: changed(ToolChange{Hints: []HintChange{{"readOnlyHint", bp(true), bp(false)}}}),
				Badges: []Badge{{BadgeNoLongerReadOnly, "get_file"}}}},
		{name: "read-only hint dropped", before: base, after: surface(edit(baseTool, "annotations", del)),
			want: Change{Changed: changed(ToolChange{Hints: []HintChange{{"readOnlyHint", bp(true), nil}}}),
				Badges: []Badge{{BadgeNoLongerReadOnly, "get_file"}}}},
		{name: "absent and false differ", before: base, after: surface(edit(baseTool, "annotations/idempotentHint", false, "annotations/openWorldHint", true)),
			want: Change{Changed: changed(ToolChange{Hints: []HintChange{{"idempotentHint", nil, bp(false)}, {"openWorldHint", nil, bp(true)}}})}},
		{name: "a hint that is not a boolean is absent", before: base, after: surface(edit(baseTool, "annotations/idempotentHint", "yes"))},
		{name: "newly destructive", before: surface(edit(baseTool, "annotations", raw(`{"destructiveHint":false}`))),
			after: surface(edit(baseTool, "annotations", raw(`{"destructiveHint":true}`))),
			want: Change{Changed: changed(ToolChange{Hints: []HintChange{{"destructiveHint", bp(false), bp(true)}}}),
				Badges: []Badge{{BadgeNewlyDestructive, "get_file"}}}},
		{name: "read-only to destructive", before: base, after: surface(edit(baseTool, "annotations", raw(`{"readOnlyHint":false,"destructiveHint":true}`))),
			want: Change{Changed: changed(ToolChange{Hints: []HintChange{{"readOnlyHint", bp(true), bp(false)}, {"destructiveHint", nil, bp(true)}}}),
				Badges: []Badge{{BadgeNoLongerReadOnly, "get_file"}, {BadgeNewlyDestructive, "get_file"}}}},
		{name: "new destructive tool", before: base,
			after: surface(baseTool, `{"name":"rm","annotations":{"destructiveHint":true}}`, `{"name":"touch","annotations":{"readOnlyHint":false}}`),
			want:  Change{Added: []ToolRef{{"rm", ""}, {"touch", ""}}, Badges: []Badge{{BadgeNewDestructiveTool, "rm"}}}},
		{name: "invisible characters in a description", before: base, after: surface(edit(baseTool, "description", "Reads a file.\u200b Returns its bytes.")),
			want: Change{Changed: changed(ToolChange{DescriptionChanged: true, DescriptionBefore: "Reads a file. Returns its bytes.",
				DescriptionAfter: "Reads a file.\u200b Returns its bytes.", InvisibleNew: true}),
				Badges: []Badge{{BadgeInvisibleChars, "get_file"}}}},
		{name: "invisible characters in a parameter description", before: base,
			after: surface(edit(baseTool, "inputSchema/properties/files/items/properties/path/description", "\U000E0069\U000E0067\U000E006E")),
			want: Change{Changed: changed(ToolChange{ParamDescriptionsChanged: []string{"files[].path"}, InvisibleNew: true}),
				Badges: []Badge{{BadgeInvisibleChars, "get_file"}}}},
		{name: "invisible characters already there", before: surface(edit(baseTool, "description", "Reads\u200b a file.")),
			after: surface(edit(baseTool, "description", "Reads\u200b a file or a directory.")),
			want: Change{Changed: changed(ToolChange{DescriptionChanged: true, DescriptionBefore: "Reads\u200b a file.",
				DescriptionAfter: "Reads\u200b a file or a directory."})}},
		{name: "invisible characters in a parameter name", before: base,
			after: surface(edit(baseTool, "inputSchema/properties/path", del, "inputSchema/properties/pa\u200bth", raw(`{"type":"string","description":"File path."}`))),
			want: Change{Changed: changed(ToolChange{ParamsAdded: []string{`"pa\u200bth"`}, ParamsRemoved: []string{"path"}, InputSchemaChanged: true, InvisibleNew: true}),
				Breaking: []Breaking{{Kind: BreakingParamRemoved, Tool: "get_file", Path: pathLong + "path"}},
				Badges:   []Badge{{BadgeInvisibleChars, "get_file"}}}},
		{name: "added tool with invisible characters", before: base, after: surface(baseTool, `{"name":"x","description":"Lists.\u2062"}`),
			want: Change{Added: []ToolRef{{"x", "Lists.\u2062"}}, Badges: []Badge{{BadgeInvisibleChars, "x"}}}},
		{name: "instructions added", before: base, after: withInstructions(surface(baseTool), sp("Use get_file first.")),
			want: Change{InstructionsChanged: true, InstructionsAfter: sp("Use get_file first."), Badges: []Badge{{BadgeNewInstructions, ""}}}},
		{name: "instructions changed", before: withInstructions(surface(baseTool), sp("Use get_file first.")), after: withInstructions(surface(baseTool), sp("Use get_file last.")),
			want: Change{InstructionsChanged: true, InstructionsBefore: sp("Use get_file first."), InstructionsAfter: sp("Use get_file last."),
				Badges: []Badge{{BadgeNewInstructions, ""}}}},
		{name: "instructions removed", before: withInstructions(surface(baseTool), sp("Use get_file first.")), after: base,
			want: Change{InstructionsChanged: true, InstructionsBefore: sp("Use get_file first.")}},
		{name: "no instructions and empty instructions are equal", before: base, after: withInstructions(surface(baseTool), sp(""))},
		{name: "instructions differ in the date only", before: withInstructions(surface(baseTool), sp("Today is 2026-11-30. Today is Monday.")),
			after: withInstructions(surface(baseTool), sp("Today is 2026-12-01. Today is Tuesday."))},
		{name: "instructions with invisible characters", before: base, after: withInstructions(surface(baseTool), sp("Be nice.\u202e")),
			want: Change{InstructionsChanged: true, InstructionsAfter: sp("Be nice.\u202e"),
				Badges: []Badge{{BadgeInvisibleChars, ""}, {BadgeNewInstructions, ""}}}},
		{name: "version", before: withVersion(surface(baseTool), "1.2.0"), after: withVersion(surface(baseTool), "1.3.0"),
			want: Change{VersionChanged: true, VersionBefore: "1.2.0", VersionAfter: "1.3.0"}},
		{name: "members outside the surface are ignored", before: base, after: surface(edit(baseTool, "_meta", raw(`{"a":1}`), "icons", raw(`[]`), "annotations/x", 1))},
		{name: "canonical form: member order, spacing, escapes, NFD",
			before: surface(`{"name":"caf\u00e9","description":"\u00e9t\u00e9 \"x\"","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}}}`),
			after:  surface(" {\"inputSchema\" : {\"properties\":{\"a\":{\"type\":\"string\"}},\"type\":\"object\"},\n \"description\":\"e\u0301te\u0301 \\\"x\\\"\", \"name\":\"cafe\\u0301\"} ")},
		{name: "duplicate name: one copy gone", before: surface(baseTool, baseTool), after: base,
			want: Change{Removed: []ToolRef{{"get_file", "Get file"}}}},
		{name: "duplicate name: one copy more", before: base, after: surface(baseTool, edit(baseTool, "title", "Other")),
			want: Change{Added: []ToolRef{{"get_file", "Other"}}}},
		{name: "duplicate name: one copy changed", before: surface(baseTool, edit(baseTool, "title", "A")),
			after: surface(edit(baseTool, "title", "B"), baseTool),
			want:  Change{Changed: changed(ToolChange{TitleChanged: true, TitleBefore: "A", TitleAfter: "B"})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Compare(tc.before, tc.after, Options{Now: testNow})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("got %s\nwant %s", dump(got), dump(&tc.want))
			}
			if got.Empty() != reflect.DeepEqual(tc.want, Change{}) {
				t.Errorf("Empty() = %v", got.Empty())
			}
		})
	}
}

func TestCompareDates(t *testing.T) {
	desc := func(d string) Surface { return surface(edit(baseTool, "description", d)) }
	param := func(d string) Surface { return surface(edit(baseTool, "inputSchema/properties/path/description", d)) }
	for _, tc := range []struct {
		name          string
		before, after Surface
		now           time.Time
		description   bool // a description change is reported
		param         bool // a parameter description change is reported
	}{
		{"ISO date", desc("Current date: 2026-11-30"), desc("Current date: 2026-12-01"), testNow, false, false},
		{"written date", desc("Data as of November 30, 2026"), desc("Data as of December 1, 2026"), testNow, false, false},
		{"date-time", desc("Generated 2026-11-30T06:45:12.5Z."), desc("Generated 2026-12-01T06:45:13.25+01:00."), testNow, false, false},
		{"RFC 1123", desc("Last-Modified: Mon, 30 Nov 2026 06:45:12 GMT"), desc("Last-Modified: Tue, 01 Dec 2026 07:00:00 GMT"), testNow, false, false},
		{"numeric", desc("Stand: 30.11.2026, 06:45"), desc("Stand: 1.12.2026, 18:02"), testNow, false, false},
		{"an old date", desc("Current date: 2026-01-15"), desc("Current date: 2026-12-01"), testNow, false, false},
		{"weekday", desc("Today is Monday."), desc("Today is Tuesday."), testNow, false, false},
		{"weekday, no date known", desc("Today is Monday."), desc("Today is Tuesday."), time.Time{}, true, false},
		{"weekday, not today", desc("Runs every Monday."), desc("Runs every Friday."), testNow, true, false},
		{"day and month", desc("News of Nov 30."), desc("News of Dec 1."), testNow, false, false},
		{"parameter description", param("Before 2026-11-30."), param("Before 2026-12-01."), testNow, false, false},
		{"wording next to a date", desc("Data as of November 30, 2026"), desc("Prices as of December 1, 2026"), testNow, true, false},
		{"wording next to a date in a parameter", param("Since 2026-11-30"), param("Until 2026-12-01"), testNow, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Compare(tc.before, tc.after, Options{Now: tc.now})
			if err != nil {
				t.Fatal(err)
			}
			var d, p bool
			for _, c := range got.Changed {
				d = d || c.DescriptionChanged
				p = p || len(c.ParamDescriptionsChanged) > 0
				if c.InputSchemaChanged {
					t.Errorf("InputSchemaChanged")
				}
				if c.DescriptionChanged && (c.DescriptionBefore != text(mustTool(t, tc.before.Tools[0]).v.get("description")) ||
					c.DescriptionAfter != text(mustTool(t, tc.after.Tools[0]).v.get("description"))) {
					t.Errorf("the change shows masked text: %q → %q", c.DescriptionBefore, c.DescriptionAfter)
				}
			}
			if d != tc.description || p != tc.param {
				t.Errorf("description changed %v, parameter description changed %v; want %v, %v\n%s", d, p, tc.description, tc.param, dump(got))
			}
		})
	}
}

func mustTool(t *testing.T, raw []byte) *tool {
	t.Helper()
	tl, err := newTool(raw, &decoder{})
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func TestToolRefTitle(t *testing.T) {
	long := strings.Repeat("é", 130)
	for _, tc := range []struct{ tool, want string }{
		{`{"name":"a","title":"  Get   a file ","description":"Reads."}`, "Get a file"},
		{`{"name":"a","annotations":{"title":"Fetch"},"description":"Reads."}`, "Fetch"},
		{`{"name":"a","title":"","description":"Reads a file. Then more."}`, "Reads a file."},
		{`{"name":"a","description":"Reads v1.2 files! Fast."}`, "Reads v1.2 files!"},
		{`{"name":"a","description":"First line\nSecond line."}`, "First line"},
		{`{"name":"a","description":"No stop at all"}`, "No stop at all"},
		{`{"name":"a"}`, ""},
		{`{"name":"a","description":"` + long + `"}`, strings.Repeat("é", 119) + "…"},
		{`{"name":"a","title":"` + strings.Repeat("x", 120) + `"}`, strings.Repeat("x", 120)},
	} {
		if got := mustTool(t, []byte(tc.tool)).ref().Title; got != tc.want {
			t.Errorf("%s: title %q, want %q", tc.tool, got, tc.want)
		}
	}
}

func TestCompareErrors(t *testing.T) {
	many := make([]string, MaxTools+1)
	for i := range many {
		many[i] = `{"name":"t"}`
	}
	deepJSON := `{"name":"d","inputSchema":` + strings.Repeat(`[`, 70) + strings.Repeat(`]`, 70) + `}`
	deepItems := `{"name":"d","inputSchema":{"type":"object","properties":{"p":` + strings.Repeat(`{"type":"array","items":`, 40) + `{}` + strings.Repeat(`}`, 40) + `}}}`
	deepItems2 := strings.Replace(deepItems, `{}`, `{"type":"string"}`, 1)
	huge := strings.Repeat("x", MaxSurfaceBytes)
	for _, tc := range []struct {
		name          string
		before, after Surface
		tooLarge      bool
	}{
		{"too many tools before", surface(many...), surface(), true},
		{"too many tools after", surface(), surface(many...), true},
		{"too many bytes", surface(), Surface{Instructions: &huge, Version: "1"}, true},
		{"JSON nested too deep", surface(), surface(deepJSON), false},
		{"items nested too deep", surface(deepItems), surface(deepItems2), true},
		{"invalid JSON", surface(), surface(`{"name":"a"`), false},
		{"not an object", surface(), surface(`["a"]`), false},
		{"no name", surface(), surface(`{"title":"a"}`), false},
		{"name not a string", surface(), surface(`{"name":1}`), false},
		{"duplicate members", surface(), surface(`{"name":"a","name":"b"}`), false},
		{"equal invalid tools", surface(`{"name":"a","x":1,"x":2}`), surface(`{"name":"a","x":1,"x":2}`), false},
		{"equal tools without a name", surface(`{"title":"a"}`), surface(`{"title":"a"}`), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Compare(tc.before, tc.after, Options{Now: testNow})
			if err == nil {
				t.Fatalf("no error; change %s", c.Summary())
			}
			if errors.Is(err, ErrTooLarge) != tc.tooLarge {
				t.Errorf("error %q: ErrTooLarge %v, want %v", err, errors.Is(err, ErrTooLarge), tc.tooLarge)
			}
		})
	}
}

// TestCompareDeepest compares the deepest parameters the canonical profile allows.
func TestCompareDeepest(t *testing.T) {
	nest := func(leaf string) string {
		s := leaf
		for range 30 {
			s = `{"type":"object","properties":{"p":` + s + `}}`
		}
		return `{"name":"d","inputSchema":` + s + `}`
	}
	c, err := Compare(surface(nest(`{"type":"number"}`)), surface(nest(`{"type":"integer"}`)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Breaking) != 1 || !c.Breaking[0].Narrowing || strings.Count(c.Breaking[0].Path, ".properties.p") != 30 {
		t.Errorf("got %s", dump(c))
	}
}

// TestCompareReportBound checks that a change whose paths would be too large to report
// is an error, not gigabytes of paths.
func TestCompareReportBound(t *testing.T) {
	name := strings.Repeat("n", 100_000)
	nest := func(leaf string) string {
		s := leaf
		for range 30 {
			s = `{"type":"object","properties":{"` + name + `":` + s + `}}`
		}
		return `{"name":"d","inputSchema":` + s + `}`
	}
	var props []string
	for i := range 10 {
		props = append(props, `"p`+string(rune('0'+i))+`":{}`)
	}
	before := nest(`{"type":"object","properties":{` + strings.Join(props, ",") + `}}`)
	after := nest(`{"type":"object","properties":{}}`)
	_, err := Compare(surface(before), surface(after), Options{})
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("error %v, want ErrTooLarge", err)
	}
}

func TestParse(t *testing.T) {
	tools := []json.RawMessage{json.RawMessage(baseTool), json.RawMessage(`{"name":"b","description":"B."}`)}
	doc := mustSurfaceDocument(t, tools)
	ins := "Be brief."
	s, err := Parse(doc, &ins, "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	ins = "changed"
	if len(s.Tools) != 2 || *s.Instructions != "Be brief." || s.Version != "1.0.0" {
		t.Fatalf("got %+v", s)
	}
	doc[1] = 'x' // the Surface does not share the document
	want := surface(baseTool, `{"name":"b","description":"B."}`)
	want.Instructions, want.Version = sp("Be brief."), "1.0.0"
	c, err := Compare(want, s, Options{})
	if err != nil || !c.Empty() {
		t.Fatalf("Compare: %v, %v", c, err)
	}
	for _, bad := range []string{``, `{"tools":[]}`, `[{"name":"a"}`, `[1]`, `[{"title":"a"}]`, `[{"name":"a"}] x`, `"x"`} {
		if _, err := Parse([]byte(bad), nil, ""); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
	many := "[" + strings.Repeat(`{"name":"t"},`, MaxTools) + `{"name":"t"}]`
	if _, err := Parse([]byte(many), nil, ""); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Parse of %d tools: %v", MaxTools+1, err)
	}
	if _, err := Parse([]byte(" [ ] "), nil, ""); err != nil {
		t.Errorf("Parse of an empty list: %v", err)
	}
}

func mustSurfaceDocument(t *testing.T, tools []json.RawMessage) []byte {
	t.Helper()
	doc, err := attest.SurfaceDocument(tools)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}
