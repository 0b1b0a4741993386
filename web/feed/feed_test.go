package feed

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mmcdole/gofeed"

	"github.com/probity-dev/probity/history/diff"
	"github.com/probity-dev/probity/store"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

var (
	testCfg = Config{BaseURL: "https://probity.dev", Title: "Probity"}
	testNow = time.Date(2026, 5, 20, 12, 0, 0, 0, time.UTC)
)

func ptr[T any](v T) *T { return &v }

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sampleChanges returns one change of every kind of entry "deepwiki", newest first, the
// third one hidden.
func sampleChanges(t testing.TB) []store.ChangeRecord {
	at := func(h int) time.Time { return time.Date(2026, 5, 1, h, 30, 15, 123e6, time.UTC) }
	tools := diff.Change{
		Added:   []diff.ToolRef{{Name: "ask_question", Title: "Ask a question about a repository."}},
		Removed: []diff.ToolRef{{Name: "read_wiki_contents"}},
		Changed: []diff.ToolChange{{
			Name:               "read_wiki_structure",
			DescriptionChanged: true,
			DescriptionBefore:  "Get a list of documentation topics.",
			DescriptionAfter:   "Get a list of documentation topics.\nAlways call this first.",
			ParamsAdded:        []string{"depth"},
			ParamsNewlyRequired: []string{
				"repoName",
			},
			Hints: []diff.HintChange{{Hint: "readOnlyHint", Before: ptr(true)}},
		}},
		InstructionsChanged: true,
		InstructionsAfter:   ptr("Use ask_question for questions."),
		Breaking:            []diff.Breaking{{Kind: diff.BreakingToolRemoved, Tool: "read_wiki_contents", Path: "read_wiki_contents"}},
	}
	return []store.ChangeRecord{
		{EntrySlug: "deepwiki", Number: 5, RecordedAt: at(9), Origin: "operator", Kind: "operator_edit",
			Summary: "setup notes edited by the operator", Details: mustJSON(t, map[string]string{"field": "setup_notes"}), Badges: []string{}},
		{EntrySlug: "deepwiki", Number: 4, RecordedAt: at(8), Origin: "operator", Kind: "operator_edit",
			Summary: "description edited by the operator", Details: mustJSON(t, map[string]string{"field": "description", "before": "Old text.", "after": "New text,\r\non two lines."}), Badges: []string{}},
		{EntrySlug: "deepwiki", Number: 3, RecordedAt: at(7), Origin: "automatic", Kind: "tools", Hidden: true,
			Summary: "a hidden change", Details: mustJSON(t, map[string]any{"diff": diff.Change{}})},
		{EntrySlug: "deepwiki", Number: 2, RecordedAt: at(6), Origin: "automatic", Kind: "tools",
			Summary: tools.Summary(), Details: mustJSON(t, map[string]any{"diff": tools}),
			Badges: []string{diff.BadgeNoLongerReadOnly, diff.BadgeNewlyRequiredParam, diff.BadgeNewInstructions}},
		{EntrySlug: "deepwiki", Number: 1, RecordedAt: at(5), Origin: "automatic", Kind: "baseline",
			Summary: "observation started with 3 tools", Details: mustJSON(t, map[string]int{"toolCount": 3}), Badges: []string{}},
	}
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("couldn't read the golden file (run with -update): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update to accept):\n%s", name, got)
	}
}

func TestGolden(t *testing.T) {
	changes := sampleChanges(t)
	entry, err := EntryFeed(testCfg, "deepwiki", "DeepWiki", changes, testNow)
	if err != nil {
		t.Fatal(err)
	}
	checkFeed(t, entry)
	golden(t, "entry.golden.xml", entry)

	other := sampleChanges(t)[3]
	other.EntrySlug, other.RecordedAt = "weather", other.RecordedAt.Add(10*time.Hour)
	dir, err := DirectoryFeed(testCfg, append([]store.ChangeRecord{other}, changes...), testNow)
	if err != nil {
		t.Fatal(err)
	}
	checkFeed(t, dir)
	golden(t, "directory.golden.xml", dir)

	empty, err := DirectoryFeed(testCfg, nil, testNow)
	if err != nil {
		t.Fatal(err)
	}
	checkFeed(t, empty)
	golden(t, "empty.golden.xml", empty)
}

func TestEntryFeedParsed(t *testing.T) {
	changes := sampleChanges(t)
	data, err := EntryFeed(testCfg, "deepwiki", "DeepWiki", changes, testNow)
	if err != nil {
		t.Fatal(err)
	}
	f := checkFeed(t, data)
	if f.FeedType != "atom" || f.FeedVersion != "1.0" {
		t.Errorf("feed type %q %q, want atom 1.0", f.FeedType, f.FeedVersion)
	}
	if f.Title != "Probity: history of DeepWiki" {
		t.Errorf("title %q", f.Title)
	}
	if f.Link != "https://probity.dev/s/deepwiki" || f.FeedLink != "https://probity.dev/s/deepwiki/history.xml" {
		t.Errorf("links %q %q", f.Link, f.FeedLink)
	}
	if f.UpdatedParsed == nil || !f.UpdatedParsed.Equal(changes[0].RecordedAt.Truncate(time.Second)) {
		t.Errorf("updated %v, want the newest change's time %v", f.UpdatedParsed, changes[0].RecordedAt)
	}
	var wantNumbers []int64
	for _, c := range changes {
		if !c.Hidden {
			wantNumbers = append(wantNumbers, c.Number)
		}
	}
	if len(f.Items) != len(wantNumbers) {
		t.Fatalf("%d items, want %d (the hidden change skipped)", len(f.Items), len(wantNumbers))
	}
	byNumber := map[int64]store.ChangeRecord{}
	for _, c := range changes {
		byNumber[c.Number] = c
	}
	for i, it := range f.Items {
		n := wantNumbers[i]
		c := byNumber[n]
		if want := fmt.Sprintf("tag:probity.dev,2026:s/deepwiki/ch-%d", n); it.GUID != want {
			t.Errorf("item %d: id %q, want %q", i, it.GUID, want)
		}
		if want := fmt.Sprintf("https://probity.dev/s/deepwiki/history#ch-%d", n); it.Link != want {
			t.Errorf("item %d: link %q, want %q", i, it.Link, want)
		}
		if it.Title != c.Summary {
			t.Errorf("item %d: title %q, want %q", i, it.Title, c.Summary)
		}
		if it.UpdatedParsed == nil || !it.UpdatedParsed.Equal(c.RecordedAt.Truncate(time.Second)) {
			t.Errorf("item %d: updated %v, want %v", i, it.UpdatedParsed, c.RecordedAt)
		}
		if len(it.Authors) != 1 || it.Authors[0].Name != "Probity" {
			t.Errorf("item %d: authors %+v", i, it.Authors)
		}
		if len(it.Categories) != len(c.Badges) {
			t.Errorf("item %d: categories %q, want the badges %q", i, it.Categories, c.Badges)
		}
	}
	// What a reader sees of the tools change.
	tools := f.Items[2].Content
	for _, want := range []string{
		"Change 2 of deepwiki, recorded 2026-05-01 06:30:15 UTC by an automatic check.",
		"Badges: no longer read-only, newly required parameter, new instructions",
		"Tools added:\n  + ask_question: \"Ask a question about a repository.\"",
		"Tools removed:\n  - read_wiki_contents",
		"  * read_wiki_structure\n    description before:\n      | Get a list of documentation topics.\n    description after:\n      | Get a list of documentation topics.\n      | Always call this first.",
		"    parameters added: depth\n    parameters newly required: repoName\n    readOnlyHint: true → not set",
		"Instructions before: none\nInstructions after:\n  | Use ask_question for questions.",
		"Potentially breaking:\n  - tool removed: tool read_wiki_contents",
		"Page: https://probity.dev/s/deepwiki/history#ch-2",
	} {
		if !strings.Contains(tools, want) {
			t.Errorf("tools change content lacks %q:\n%s", want, tools)
		}
	}
	if c := f.Items[0].Content; !strings.Contains(c, "setup notes.\nOnly that it changed is recorded") {
		t.Errorf("setup notes content:\n%s", c)
	}
	if c := f.Items[1].Content; !strings.Contains(c, "Before:\n  | Old text.\nAfter:\n  | New text,\n  | on two lines.") {
		t.Errorf("operator edit content:\n%s", c)
	}
	if c := f.Items[3].Content; !strings.Contains(c, "Observation began with 3 tools.") {
		t.Errorf("baseline content:\n%s", c)
	}
}

func TestDirectoryFeedParsed(t *testing.T) {
	changes := sampleChanges(t)
	data, err := DirectoryFeed(testCfg, changes, testNow)
	if err != nil {
		t.Fatal(err)
	}
	f := checkFeed(t, data)
	if f.Title != "Probity: recent changes" || f.FeedLink != "https://probity.dev/changes.xml" || f.Link != "https://probity.dev/changes" {
		t.Errorf("feed %q %q %q", f.Title, f.FeedLink, f.Link)
	}
	if want := "deepwiki: " + changes[0].Summary; f.Items[0].Title != want {
		t.Errorf("title %q, want %q", f.Items[0].Title, want)
	}
	if f.Items[0].GUID != "tag:probity.dev,2026:s/deepwiki/ch-5" {
		t.Errorf("id %q", f.Items[0].GUID)
	}
}

// TestSameIDs: a change has the same id in both feeds, whenever they are rendered.
func TestSameIDs(t *testing.T) {
	changes := sampleChanges(t)
	a, _ := EntryFeed(testCfg, "deepwiki", "DeepWiki", changes, testNow)
	b, _ := DirectoryFeed(testCfg, changes, testNow.Add(time.Hour))
	fa, fb := checkFeed(t, a), checkFeed(t, b)
	for i := range fa.Items {
		if fa.Items[i].GUID != fb.Items[i].GUID {
			t.Errorf("item %d: %q in the entry feed, %q in the directory feed", i, fa.Items[i].GUID, fb.Items[i].GUID)
		}
	}
}

func manyChanges(n int, slug string) []store.ChangeRecord {
	cs := make([]store.ChangeRecord, n)
	for i := range cs {
		num := int64(n - i)
		cs[i] = store.ChangeRecord{EntrySlug: slug, Number: num, RecordedAt: testNow.Add(-time.Duration(i) * time.Hour),
			Origin: "automatic", Kind: "version", Summary: fmt.Sprintf("version %d", num),
			Details: []byte(fmt.Sprintf(`{"versionBefore":"1.0.%d","versionAfter":"1.0.%d"}`, num-1, num))}
	}
	return cs
}

func TestCaps(t *testing.T) {
	for _, tc := range []struct {
		name   string
		render func([]store.ChangeRecord) ([]byte, error)
		give   int
		want   int
	}{
		{"entry 31", func(c []store.ChangeRecord) ([]byte, error) { return EntryFeed(testCfg, "x", "X", c, testNow) }, 31, MaxEntryFeed},
		{"entry 30", func(c []store.ChangeRecord) ([]byte, error) { return EntryFeed(testCfg, "x", "X", c, testNow) }, 30, 30},
		{"directory 51", func(c []store.ChangeRecord) ([]byte, error) { return DirectoryFeed(testCfg, c, testNow) }, 51, MaxDirectoryFeed},
		{"directory 50", func(c []store.ChangeRecord) ([]byte, error) { return DirectoryFeed(testCfg, c, testNow) }, 50, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := manyChanges(tc.give, "x")
			data, err := tc.render(cs)
			if err != nil {
				t.Fatal(err)
			}
			f := checkFeed(t, data)
			if len(f.Items) != tc.want {
				t.Fatalf("%d items, want %d", len(f.Items), tc.want)
			}
			if want := fmt.Sprintf("tag:probity.dev,2026:s/x/ch-%d", tc.give); f.Items[0].GUID != want {
				t.Errorf("first item %q, want the newest %q", f.Items[0].GUID, want)
			}
			if want := fmt.Sprintf("tag:probity.dev,2026:s/x/ch-%d", tc.give-tc.want+1); f.Items[tc.want-1].GUID != want {
				t.Errorf("last item %q, want %q", f.Items[tc.want-1].GUID, want)
			}
		})
	}
}

// TestHiddenDoNotCount: hidden changes neither show nor take a place of the 30.
func TestHiddenDoNotCount(t *testing.T) {
	cs := manyChanges(40, "x")
	for i := 0; i < 10; i++ {
		cs[2*i].Hidden = true
	}
	data, err := EntryFeed(testCfg, "x", "X", cs, testNow)
	if err != nil {
		t.Fatal(err)
	}
	f := checkFeed(t, data)
	if len(f.Items) != MaxEntryFeed {
		t.Fatalf("%d items, want %d", len(f.Items), MaxEntryFeed)
	}
	for _, it := range f.Items {
		for _, c := range cs {
			if c.Hidden && it.GUID == fmt.Sprintf("tag:probity.dev,2026:s/x/ch-%d", c.Number) {
				t.Errorf("hidden change %d is in the feed", c.Number)
			}
		}
	}
	// Updated is the newest visible change's time, not the hidden one's.
	if !f.UpdatedParsed.Equal(cs[1].RecordedAt) {
		t.Errorf("updated %v, want %v", f.UpdatedParsed, cs[1].RecordedAt)
	}
}

func TestEmptyFeeds(t *testing.T) {
	allHidden := manyChanges(3, "x")
	for i := range allHidden {
		allHidden[i].Hidden = true
	}
	for name, render := range map[string]func() ([]byte, error){
		"entry":            func() ([]byte, error) { return EntryFeed(testCfg, "x", "", nil, testNow) },
		"entry all hidden": func() ([]byte, error) { return EntryFeed(testCfg, "x", "X", allHidden, testNow) },
		"directory":        func() ([]byte, error) { return DirectoryFeed(testCfg, []store.ChangeRecord{}, testNow) },
	} {
		t.Run(name, func(t *testing.T) {
			data, err := render()
			if err != nil {
				t.Fatal(err)
			}
			f := checkFeed(t, data)
			if len(f.Items) != 0 || f.UpdatedParsed == nil || !f.UpdatedParsed.Equal(testNow) {
				t.Errorf("%d items, updated %v; want none and now", len(f.Items), f.UpdatedParsed)
			}
		})
	}
}

func TestRefused(t *testing.T) {
	cs := manyChanges(2, "x")
	for _, tc := range []struct {
		name string
		err  func() error
	}{
		{"trailing slash", func() error {
			_, err := EntryFeed(Config{BaseURL: "https://probity.dev/"}, "x", "X", cs, testNow)
			return err
		}},
		{"no scheme", func() error { _, err := EntryFeed(Config{BaseURL: "probity.dev"}, "x", "X", cs, testNow); return err }},
		{"ftp", func() error { _, err := DirectoryFeed(Config{BaseURL: "ftp://probity.dev"}, cs, testNow); return err }},
		{"query", func() error {
			_, err := DirectoryFeed(Config{BaseURL: "https://probity.dev?a=1"}, cs, testNow)
			return err
		}},
		{"empty", func() error { _, err := DirectoryFeed(Config{}, cs, testNow); return err }},
		{"bad slug", func() error { _, err := EntryFeed(testCfg, "../x", "X", nil, testNow); return err }},
		{"other entry", func() error { _, err := EntryFeed(testCfg, "y", "Y", cs, testNow); return err }},
		{"directory without slug", func() error {
			_, err := DirectoryFeed(testCfg, []store.ChangeRecord{{Number: 1, Summary: "s"}}, testNow)
			return err
		}},
	} {
		if tc.err() == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// TestTagAuthority: the tag authority is the base URL's host, lower case, without port.
func TestTagAuthority(t *testing.T) {
	data, err := EntryFeed(Config{BaseURL: "http://127.0.0.1:8080", Title: "Probity demo"}, "x", "X", manyChanges(1, "x"), testNow)
	if err != nil {
		t.Fatal(err)
	}
	f := checkFeed(t, data)
	if f.Items[0].GUID != "tag:127.0.0.1,2026:s/x/ch-1" || f.Items[0].Link != "http://127.0.0.1:8080/s/x/history#ch-1" {
		t.Errorf("id %q link %q", f.Items[0].GUID, f.Items[0].Link)
	}
	if f.Items[0].Authors[0].Name != "Probity demo" {
		t.Errorf("author %q", f.Items[0].Authors[0].Name)
	}
}

const hostileText = "<script>alert(1)</script> <img src=x onerror=alert(2)> ]]> &amp; \"'\x00\x01\x1b[31m\x7f\u0085" +
	"\xff\xfe bad \xc3 utf8 \u202eevil\u202c \u200bzero\u200d \U000E0041 \uFEFF \ufffe \uffff \u2028 \r\n<![CDATA[x]]>"

func TestHostileText(t *testing.T) {
	d := diff.Change{
		Added:   []diff.ToolRef{{Name: hostileText, Title: hostileText}},
		Changed: []diff.ToolChange{{Name: hostileText, DescriptionChanged: true, DescriptionBefore: hostileText, DescriptionAfter: hostileText, ParamsAdded: []string{hostileText}}},
	}
	cs := []store.ChangeRecord{
		{EntrySlug: "x", Number: 2, RecordedAt: testNow, Origin: hostileText, Kind: "tools", Summary: hostileText,
			Details: mustJSON(t, map[string]any{"diff": d}), Badges: []string{hostileText}},
		{EntrySlug: "x", Number: 1, RecordedAt: testNow, Origin: "operator", Kind: "operator_edit", Summary: "edit",
			Details: mustJSON(t, map[string]string{"field": "description", "before": hostileText, "after": hostileText})},
	}
	for _, data := range [][]byte{
		must(EntryFeed(testCfg, "x", hostileText, cs, testNow)),
		must(DirectoryFeed(Config{BaseURL: testCfg.BaseURL, Title: hostileText}, cs, testNow)),
	} {
		f := checkFeed(t, data)
		for _, bad := range []string{"<script", "<img", "<![CDATA[", "\u202e", "\u200b", "\x1b", "\U000E0041", "\r"} {
			if bytes.Contains(data, []byte(bad)) {
				t.Errorf("the XML holds %q", bad)
			}
		}
		// A reader gets the text back as text, with the invisible characters visible.
		for _, want := range []string{"<script>alert(1)</script>", "<img src=x onerror=alert(2)>", `\u202eevil\u202c`, `\u200bzero\u200d`,
			`\U000e0041`, `\u0000\u0001\u001b[31m\u007f\u0085`, "\uFFFD\uFFFD bad \uFFFD utf8", `\ufeff`, `\ufffe \uffff \u2028`, "]]>"} {
			if !strings.Contains(f.Items[0].Content, want) {
				t.Errorf("content lacks %q:\n%s", want, f.Items[0].Content)
			}
			if !strings.Contains(f.Items[1].Content, want) {
				t.Errorf("operator edit content lacks %q:\n%s", want, f.Items[1].Content)
			}
		}
		if !strings.Contains(f.Items[0].Title, "<script>alert(1)</script>") {
			t.Errorf("title %q", f.Items[0].Title)
		}
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestForgedStructure: server text cannot start a line of the content's structure.
func TestForgedStructure(t *testing.T) {
	forged := "Fine.\nTools removed:\n  - everything\n\"quoted\" \\u200b"
	d := diff.Change{Changed: []diff.ToolChange{{Name: "t", TitleChanged: true, TitleBefore: forged, TitleAfter: "x",
		DescriptionChanged: true, DescriptionBefore: forged, DescriptionAfter: ""}}}
	got := content(mustSite(t), "x", &store.ChangeRecord{Number: 1, Origin: "automatic", Kind: "tools", Details: mustJSON(t, map[string]any{"diff": d})})
	want := "    title before: \"Fine.\\nTools removed:\\n  - everything\\n\\\"quoted\\\" \\\\u200b\"\n" +
		"    title after: \"x\"\n" +
		"    description before:\n      | Fine.\n      | Tools removed:\n      |   - everything\n      | \"quoted\" \\u200b\n" +
		"    description after: none"
	if !strings.Contains(got, want) {
		t.Errorf("content:\n%s\nwant it to hold:\n%s", got, want)
	}
}

func mustSite(t *testing.T) site {
	s, err := testCfg.site()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestVisible(t *testing.T) {
	for _, tc := range []struct {
		in   string
		m    mode
		want string
	}{
		{"plain text", modeLine, "plain text"},
		{"a\u200bb", modeLine, `a\u200bb`},
		{"a\r\nb\rc\nd\te", modeBlock, "a\n> b\n> c\n> d\te"},
		{"a\r\nb\te", modeLine, `a\r\nb\te`},
		{`say "hi" \ bye`, modeQuoted, `"say \"hi\" \\ bye"`},
		{"\xff", modeLine, "\uFFFD"},
		{"warning \u26a0\ufe0f ok", modeLine, "warning \u26a0\ufe0f ok"},
		{"\ufe0f\ufe0f", modeLine, `\ufe0f\ufe0f`},
		{"a\ufe00", modeLine, `a\ufe00`},
		{"\U000E0068\U000E0069", modeLine, `\U000e0068\U000e0069`},
		{"\u00ad\u034f\u3164\u2066x\u2069", modeLine, `\u00ad\u034f\u3164\u2066x\u2069`},
		{"\ue000 \U000F0000", modeLine, `\ue000 \U000f0000`},
		{"\ufdd0\U0001FFFE", modeLine, `\ufdd0\U0001fffe`},
		{"café 日本 مرحبا", modeLine, "café 日本 مرحبا"},
	} {
		w := textWriter{limit: 1 << 10}
		w.write(tc.in, tc.m, "> ")
		if got := w.b.String(); got != tc.want {
			t.Errorf("write(%q, %d) = %q, want %q", tc.in, tc.m, got, tc.want)
		}
	}
}

func TestLine(t *testing.T) {
	long := strings.Repeat("é", 300)
	if got := line(long, 200); utf8.RuneCountInString(got) != 200 || !strings.HasSuffix(got, "…") {
		t.Errorf("line of 300 runes: %d runes %q", utf8.RuneCountInString(got), got)
	}
	if got := line(strings.Repeat("\u200b", 300), 10); utf8.RuneCountInString(got) != 10 || !strings.HasPrefix(got, `\u200b`) {
		t.Errorf("line of invisibles: %q", got)
	}
	if got := line("short", 200); got != "short" {
		t.Errorf("line(short) = %q", got)
	}
}

func TestContentCut(t *testing.T) {
	huge := strings.Repeat("A long description line.\n", 5000)
	d := diff.Change{Changed: []diff.ToolChange{{Name: "t", DescriptionChanged: true, DescriptionBefore: huge, DescriptionAfter: huge}}}
	for i := 0; i < 10000; i++ {
		d.Added = append(d.Added, diff.ToolRef{Name: fmt.Sprintf("tool_%d", i)})
	}
	cs := []store.ChangeRecord{{EntrySlug: "x", Number: 1, RecordedAt: testNow, Origin: "automatic", Kind: "tools", Summary: "big",
		Details: mustJSON(t, map[string]any{"diff": d})}}
	data, err := EntryFeed(testCfg, "x", "X", cs, testNow)
	if err != nil {
		t.Fatal(err)
	}
	f := checkFeed(t, data)
	c := f.Items[0].Content
	if len(c) > MaxContentBytes+200 {
		t.Errorf("content is %d bytes", len(c))
	}
	if !strings.HasSuffix(c, "[Cut here: the details are longer than 16 KiB. The page shows all of them.]") {
		t.Errorf("content does not end with the note: %q", c[len(c)-200:])
	}
	if !strings.Contains(c, "Page: https://probity.dev/s/x/history#ch-1") {
		t.Error("the cut content lost its link")
	}

	over := cs[0]
	over.Details = append([]byte(`{"diff":{"Added":[`), bytes.Repeat([]byte(`{"Name":"x"},`), MaxDetailsBytes/10)...)
	data, err = EntryFeed(testCfg, "x", "X", []store.ChangeRecord{over}, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if c := checkFeed(t, data).Items[0].Content; !strings.Contains(c, "too large for the feed") {
		t.Errorf("oversized details: %q", c)
	}
}

func TestBadDetails(t *testing.T) {
	for _, d := range []string{"", "not json", "[]", `{"unknown":1}`, `{"diff":"x"}`} {
		cs := []store.ChangeRecord{{EntrySlug: "x", Number: 1, RecordedAt: testNow, Origin: "automatic", Kind: "tools", Summary: "s", Details: []byte(d)}}
		data, err := EntryFeed(testCfg, "x", "X", cs, testNow)
		if err != nil {
			t.Fatal(err)
		}
		if c := checkFeed(t, data).Items[0].Content; !strings.Contains(c, "not available in the feed") {
			t.Errorf("details %q: %q", d, c)
		}
	}
}

// The Atom structure checked by checkAtom: what RFC 4287 requires of a feed whose entries
// each have an author, and what Probity promises on top (types, links).
type xFeed struct {
	XMLName xml.Name `xml:"http://www.w3.org/2005/Atom feed"`
	ID      []string `xml:"http://www.w3.org/2005/Atom id"`
	Title   []xText  `xml:"http://www.w3.org/2005/Atom title"`
	Updated []string `xml:"http://www.w3.org/2005/Atom updated"`
	Links   []xLink  `xml:"http://www.w3.org/2005/Atom link"`
	Authors []xName  `xml:"http://www.w3.org/2005/Atom author"`
	Entries []xEntry `xml:"http://www.w3.org/2005/Atom entry"`
}

type xText struct {
	Type string `xml:"type,attr"`
	Body string `xml:",chardata"`
	Any  []xAny `xml:",any"`
}

type xAny struct{ XMLName xml.Name }

type xLink struct {
	Rel  string `xml:"rel,attr"`
	Href string `xml:"href,attr"`
	Type string `xml:"type,attr"`
}

type xName struct {
	Name []string `xml:"http://www.w3.org/2005/Atom name"`
}

type xEntry struct {
	ID         []string `xml:"http://www.w3.org/2005/Atom id"`
	Title      []xText  `xml:"http://www.w3.org/2005/Atom title"`
	Updated    []string `xml:"http://www.w3.org/2005/Atom updated"`
	Links      []xLink  `xml:"http://www.w3.org/2005/Atom link"`
	Authors    []xName  `xml:"http://www.w3.org/2005/Atom author"`
	Categories []struct {
		Term string `xml:"term,attr"`
	} `xml:"http://www.w3.org/2005/Atom category"`
	Content []xText `xml:"http://www.w3.org/2005/Atom content"`
}

var tagURI = regexp.MustCompile(`^tag:[a-z0-9.-]+,2026:[a-z0-9/-]+$`)

// checkAtom validates data against the Atom structure with encoding/xml and returns it.
func checkAtom(data []byte) (*xFeed, error) {
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	for {
		_, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("not well-formed: %w", err)
		}
	}
	var f xFeed
	if err := xml.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	one := func(what string, n int) error {
		if n != 1 {
			return fmt.Errorf("%s: %d elements, want 1", what, n)
		}
		return nil
	}
	text := func(what string, ts []xText) error {
		if err := one(what, len(ts)); err != nil {
			return err
		}
		if ts[0].Type != "text" || len(ts[0].Any) > 0 {
			return fmt.Errorf("%s: type %q with %d child elements, want plain text", what, ts[0].Type, len(ts[0].Any))
		}
		return nil
	}
	date := func(what string, ds []string) error {
		if err := one(what, len(ds)); err != nil {
			return err
		}
		if _, err := time.Parse(time.RFC3339, ds[0]); err != nil || !strings.HasSuffix(ds[0], "Z") {
			return fmt.Errorf("%s: %q is not an RFC 3339 UTC time", what, ds[0])
		}
		return nil
	}
	links := func(what string, ls []xLink, rels ...string) error {
		for _, rel := range rels {
			n := 0
			for _, l := range ls {
				if l.Rel == rel && strings.HasPrefix(l.Href, "http") {
					n++
				}
			}
			if err := one(what+" link rel="+rel, n); err != nil {
				return err
			}
		}
		return nil
	}
	errs := []error{one("feed id", len(f.ID)), text("feed title", f.Title), date("feed updated", f.Updated),
		links("feed", f.Links, "self", "alternate"), one("feed author", len(f.Authors))}
	if len(f.ID) == 1 && !tagURI.MatchString(f.ID[0]) {
		errs = append(errs, fmt.Errorf("feed id %q is not a tag URI", f.ID[0]))
	}
	ids := map[string]bool{}
	for i, e := range f.Entries {
		w := fmt.Sprintf("entry %d", i)
		errs = append(errs, one(w+" id", len(e.ID)), text(w+" title", e.Title), date(w+" updated", e.Updated),
			links(w, e.Links, "alternate"), one(w+" author", len(e.Authors)), text(w+" content", e.Content))
		if len(e.ID) == 1 {
			if !tagURI.MatchString(e.ID[0]) || ids[e.ID[0]] {
				errs = append(errs, fmt.Errorf("%s id %q is not a tag URI or not unique", w, e.ID[0]))
			}
			ids[e.ID[0]] = true
		}
		if len(e.Authors) == 1 && len(e.Authors[0].Name) != 1 {
			errs = append(errs, fmt.Errorf("%s author without one name", w))
		}
	}
	return &f, errors.Join(errs...)
}

// checkFeed checks that data is valid UTF-8 holding only characters XML 1.0 allows,
// valid Atom, and parsed by gofeed to the same titles and content as encoding/xml reads.
func checkFeed(t testing.TB, data []byte) *gofeed.Feed {
	t.Helper()
	f, err := parseChecked(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	return f
}

func parseChecked(data []byte) (*gofeed.Feed, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("not valid UTF-8")
	}
	for _, r := range string(data) {
		if r < 0x20 && r != '\n' || r == 0xFFFE || r == 0xFFFF {
			return nil, fmt.Errorf("character U+%04X is not allowed in XML (or not expected here)", r)
		}
	}
	x, err := checkAtom(data)
	if err != nil {
		return nil, err
	}
	f, err := gofeed.NewParser().Parse(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("gofeed: %w", err)
	}
	if len(f.Items) != len(x.Entries) {
		return nil, fmt.Errorf("gofeed read %d items, encoding/xml %d entries", len(f.Items), len(x.Entries))
	}
	if f.Title != strings.TrimSpace(x.Title[0].Body) {
		return nil, fmt.Errorf("gofeed read the title %q, encoding/xml %q", f.Title, x.Title[0].Body)
	}
	for i, it := range f.Items {
		e := x.Entries[i]
		if it.Title != strings.TrimSpace(e.Title[0].Body) || it.Content != strings.TrimSpace(e.Content[0].Body) || it.GUID != e.ID[0] {
			return nil, fmt.Errorf("item %d: gofeed read %q %q %q, encoding/xml %q %q %q", i, it.GUID, it.Title, it.Content, e.ID[0], e.Title[0].Body, e.Content[0].Body)
		}
	}
	return f, nil
}

// TestSetupNotesTextNeverShown: even when the details hold the text of setup notes, the
// feed says only that they changed.
func TestSetupNotesTextNeverShown(t *testing.T) {
	cs := []store.ChangeRecord{{EntrySlug: "x", Number: 1, RecordedAt: testNow, Origin: "operator", Kind: "operator_edit",
		Summary: "setup notes edited by the operator", Details: []byte(`{"field":"setup_notes","before":"SECRET-1","after":"SECRET-2"}`)}}
	data, err := EntryFeed(testCfg, "x", "X", cs, testNow)
	if err != nil {
		t.Fatal(err)
	}
	checkFeed(t, data)
	if bytes.Contains(data, []byte("SECRET")) {
		t.Errorf("the feed shows the setup notes' text:\n%s", data)
	}
}

// TestPackageBaselineText: a package's baseline reads as the version its observation
// started at, not as a version change from none.
func TestPackageBaselineText(t *testing.T) {
	changes := []store.ChangeRecord{{EntrySlug: "acme", Number: 1, RecordedAt: testNow, Origin: "automatic", Kind: "baseline",
		Summary: "observation started at version 1.0.0", Details: mustJSON(t, map[string]string{"versionAfter": "1.0.0"}), Badges: []string{}}}
	data, err := EntryFeed(testCfg, "acme", "Acme", changes, testNow)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	if !strings.Contains(s, "Observation began at version &#34;1.0.0&#34;. Nothing before it counts as a change.") &&
		!strings.Contains(s, `Observation began at version "1.0.0". Nothing before it counts as a change.`) {
		t.Errorf("package baseline:\n%s", s)
	}
	if strings.Contains(s, "Version: none") {
		t.Errorf("a package baseline reads as a version change from none:\n%s", s)
	}
}
