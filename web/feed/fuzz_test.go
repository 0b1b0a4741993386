package feed

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/probity-dev/probity/history/diff"
	"github.com/probity-dev/probity/store"
)

// FuzzFeeds renders both feeds from arbitrary summary, name, badge and details text, as a
// tools change, an operator edit and raw Details, and checks that each is well-formed
// XML with only allowed characters, valid Atom, and parsed by gofeed as encoding/xml
// reads it. Seeds are in testdata/fuzz/FuzzFeeds.
func FuzzFeeds(f *testing.F) {
	f.Add("2 tools added", "DeepWiki", "new_instructions", "Search the docs.", []byte(`{"toolCount":3}`))
	f.Add(hostileText, hostileText, hostileText, hostileText, []byte(`{"field":"description","before":"<b>","after":"]]>"}`))
	f.Fuzz(func(t *testing.T, summary, name, badge, text string, raw []byte) {
		d := diff.Change{
			Added:               []diff.ToolRef{{Name: text, Title: text}},
			Removed:             []diff.ToolRef{{Name: name}},
			Changed:             []diff.ToolChange{{Name: text, TitleChanged: true, TitleBefore: text, DescriptionChanged: true, DescriptionAfter: text, ParamsAdded: []string{text, summary}}},
			InstructionsChanged: true, InstructionsBefore: &text,
			VersionChanged: true, VersionAfter: text,
			Breaking: []diff.Breaking{{Kind: diff.BreakingParamTypeChanged, Tool: text, Path: text, Before: text}},
		}
		tools, err := json.Marshal(map[string]any{"diff": d})
		if err != nil {
			t.Fatal(err)
		}
		edit, err := json.Marshal(map[string]string{"field": summary, "before": text, "after": name})
		if err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
		cs := []store.ChangeRecord{
			{EntrySlug: "x", Number: 3, RecordedAt: at, Origin: summary, Kind: "tools", Summary: summary, Details: tools, Badges: []string{badge}},
			{EntrySlug: "x", Number: 2, RecordedAt: at, Origin: "operator", Kind: "operator_edit", Summary: text, Details: edit},
			{EntrySlug: "x", Number: 1, RecordedAt: at, Origin: "automatic", Kind: "baseline", Summary: name, Details: raw},
		}
		for _, render := range []func() ([]byte, error){
			func() ([]byte, error) { return EntryFeed(testCfg, "x", name, cs, at) },
			func() ([]byte, error) { return DirectoryFeed(Config{BaseURL: testCfg.BaseURL, Title: name}, cs, at) },
		} {
			data, err := render()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := parseChecked(data); err != nil {
				t.Fatalf("%v\n%s", err, data)
			}
		}
	})
}
