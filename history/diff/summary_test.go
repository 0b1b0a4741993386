package diff

import "testing"

func TestSummary(t *testing.T) {
	ref := func(names ...string) []ToolRef {
		var l []ToolRef
		for _, n := range names {
			l = append(l, ToolRef{Name: n, Title: "<b>" + n + "</b>"})
		}
		return l
	}
	for _, tc := range []struct {
		c    Change
		want string
	}{
		{Change{}, "no change"},
		{Change{Added: ref("a", "b"), Removed: ref("c")}, "2 tools added, 1 removed"},
		{Change{Added: ref("a")}, "1 tool added"},
		{Change{Removed: ref("a", "b")}, "2 tools removed"},
		{Change{Changed: []ToolChange{{Name: "<script>", DescriptionChanged: true, DescriptionAfter: "<script>"}}}, "1 tool changed: description"},
		{Change{Changed: []ToolChange{
			{Name: "a", TitleChanged: true, ParamsAdded: []string{"x"}, InputSchemaChanged: true},
			{Name: "b", ParamDescriptionsChanged: []string{"y"}, OutputSchemaChanged: true},
			{Name: "c", Hints: []HintChange{{Hint: "readOnlyHint"}}, InvisibleNew: true, DescriptionChanged: true},
		}}, "3 tools changed: title, description, parameters, parameter descriptions, output schema, hints, invisible characters"},
		{Change{Changed: []ToolChange{{Name: "a", InputSchemaChanged: true}}}, "1 tool changed: input schema"},
		{Change{InstructionsChanged: true, InstructionsBefore: sp("a"), InstructionsAfter: sp("b")}, "instructions changed"},
		{Change{InstructionsChanged: true, InstructionsAfter: sp("b")}, "instructions added"},
		{Change{InstructionsChanged: true, InstructionsBefore: sp("a"), InstructionsAfter: sp("")}, "instructions removed"},
		{Change{VersionChanged: true, VersionBefore: "1.2.0", VersionAfter: "1.3.0"}, "version 1.2.0 → 1.3.0"},
		{Change{VersionChanged: true, VersionBefore: "", VersionAfter: "v2.0.0-beta.1+build.5"}, "version v2.0.0-beta.1+build.5"},
		{Change{VersionChanged: true, VersionBefore: "1.2.0", VersionAfter: "1.3.0 <img src=x>"}, "version changed"},
		{Change{VersionChanged: true, VersionBefore: "1.2.0", VersionAfter: "latest"}, "version changed"},
		{Change{VersionChanged: true, VersionBefore: "1.2.0", VersionAfter: "01.2.0"}, "version changed"},
		{Change{Removed: ref("a"), Changed: []ToolChange{{Name: "b", InputSchemaChanged: true}, {Name: "c", OutputSchemaChanged: true}},
			VersionChanged: true, VersionBefore: "x", VersionAfter: "y"}, "1 tool removed; 2 tools changed: input schema, output schema; version changed"},
	} {
		if got := tc.c.Summary(); got != tc.want {
			t.Errorf("Summary() = %q, want %q", got, tc.want)
		}
	}
}

func TestKinds(t *testing.T) {
	text := ToolChange{Name: "a", DescriptionChanged: true}
	params := ToolChange{Name: "b", ParamDescriptionsChanged: []string{"x"}, InvisibleNew: true}
	schema := ToolChange{Name: "c", ParamsAdded: []string{"x"}, InputSchemaChanged: true}
	hints := ToolChange{Name: "d", Hints: []HintChange{{Hint: "readOnlyHint"}}}
	for _, tc := range []struct {
		name string
		c    Change
		want Kinds
	}{
		{"empty", Change{}, Kinds{}},
		{"descriptions only", Change{Changed: []ToolChange{text, params}}, Kinds{DescriptionOnly: true}},
		{"descriptions and instructions", Change{Changed: []ToolChange{text}, InstructionsChanged: true}, Kinds{DescriptionOnly: true}},
		{"descriptions and a schema", Change{Changed: []ToolChange{text, schema}}, Kinds{SchemaChangedNamesSame: true}},
		{"hints are not descriptions", Change{Changed: []ToolChange{text, hints}}, Kinds{}},
		{"added", Change{Added: []ToolRef{{Name: "x"}}, Changed: []ToolChange{text}}, Kinds{ToolsAdded: true, NamesChanged: true}},
		{"removed, breaking", Change{Removed: []ToolRef{{Name: "x"}}, Breaking: []Breaking{{Kind: BreakingToolRemoved}}},
			Kinds{ToolsRemoved: true, NamesChanged: true, Breaking: true}},
		{"schema with tools added", Change{Added: []ToolRef{{Name: "x"}}, Changed: []ToolChange{schema}},
			Kinds{ToolsAdded: true, NamesChanged: true, SchemaChangedNamesSame: true}},
		{"output schema", Change{Changed: []ToolChange{{Name: "e", OutputSchemaChanged: true}}}, Kinds{SchemaChangedNamesSame: true}},
	} {
		if got := tc.c.Kinds(); got != tc.want {
			t.Errorf("%s: Kinds() = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
