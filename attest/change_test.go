package attest

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestChangeSchemaMatchesTypes(t *testing.T) {
	var root map[string]any
	if err := json.Unmarshal(changeSchemaJSON, &root); err != nil {
		t.Fatal(err)
	}
	compare(t, root, root, reflect.TypeFor[ChangePredicate](), "")
}

func intp(n int) *int { return &n }

func sampleChange() *ChangePredicate {
	return &ChangePredicate{
		Entry:      ChangeEntry{Kind: "remote", Slug: "mcp-example-com-mcp", URL: "https://mcp.example.com/mcp"},
		Number:     2,
		RecordedAt: "2026-11-30T06:45:12.345Z",
		Origin:     OriginAutomatic,
		Kind:       ChangeTools,
		Summary:    "2 tools added, 1 removed",
		Badges:     []string{"new_destructive_tool"},
		Before: &ChangeState{RoundID: "c20261130T064400000Z-e1", PayloadDigest: Digest([]byte("a")),
			Surface: Digest([]byte("s1")), Instructions: Digest([]byte("i")), ToolCount: intp(3)},
		After: ChangeState{RoundID: "f20261130T064512345Z-e1", PayloadDigest: Digest([]byte("b")),
			Surface: Digest([]byte("s2")), Instructions: Digest([]byte("i")), ToolCount: intp(4)},
		ToolVersion: "0.1.0",
	}
}

func TestChangeStatementRoundTrip(t *testing.T) {
	st, err := NewChangeStatement(sampleChange())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	canon, err := Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if string(raw) != string(canon) {
		t.Errorf("encoding/json output is not in canonical order:\n%s\n%s", raw, canon)
	}
	ds, err := DecodeStatement(canon)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Change == nil || ds.Change.Number != 2 || ds.ObservedAt.Format(TimeLayout) != "2026-11-30T06:45:12.345Z" {
		t.Fatalf("decoded %+v", ds)
	}
}

func TestChangeRules(t *testing.T) {
	cases := map[string]func(p *ChangePredicate){
		"round id without digest": func(p *ChangePredicate) { p.After.PayloadDigest = "" },
		"tools without before":    func(p *ChangePredicate) { p.Before = nil },
		"baseline with before":    func(p *ChangePredicate) { p.Kind = ChangeBaseline },
		"baseline of nothing": func(p *ChangePredicate) {
			p.Kind, p.Before, p.After = ChangeBaseline, nil, ChangeState{ToolCount: p.After.ToolCount}
		},
		"version baseline with a round": func(p *ChangePredicate) {
			p.Kind, p.Before, p.After.Version, p.After.Surface = ChangeBaseline, nil, "1.2.0", ""
		},
		"version baseline with a tool count": func(p *ChangePredicate) {
			p.Kind, p.Before, p.After = ChangeBaseline, nil, ChangeState{Version: "1.2.0", ToolCount: p.After.ToolCount}
		},
		"version baseline of a remote": func(p *ChangePredicate) {
			p.Kind, p.Before, p.After = ChangeBaseline, nil, ChangeState{Version: "1.2.0"}
		},
		"version without version": func(p *ChangePredicate) { p.Kind = ChangeVersion },
		"automatic operator edit": func(p *ChangePredicate) { p.Kind = ChangeOperatorEdit; p.After.Edit = Digest(nil) },
		"operator tools change":   func(p *ChangePredicate) { p.Origin = OriginOperator },
		"badge twice":             func(p *ChangePredicate) { p.Badges = []string{"newly_destructive", "newly_destructive"} },
		"remote without url":      func(p *ChangePredicate) { p.Entry.URL = ""; p.Entry.Package = "pkg:npm/x" },
		"package without package": func(p *ChangePredicate) { p.Entry.Kind = "npm" },
		"summary with newline":    func(p *ChangePredicate) { p.Summary = "a\nb" },
		"unknown badge":           func(p *ChangePredicate) { p.Badges = []string{"scary"} },
	}
	for name, mutate := range cases {
		p := sampleChange()
		mutate(p)
		st, err := NewChangeStatement(p)
		if err != nil {
			t.Fatal(err)
		}
		canon, err := Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		_, err = DecodeStatement(canon)
		var se *StatementError
		var sch *SchemaError
		if !errors.As(err, &se) && !errors.As(err, &sch) {
			t.Errorf("%s: DecodeStatement = %v, want a statement or schema error", name, err)
		}
	}
	// A package's baseline names only the version its observation started at.
	p := sampleChange()
	p.Kind, p.Before, p.After = ChangeBaseline, nil, ChangeState{Version: "1.2.0"}
	p.Entry = EntryRef("npm", "acme", "pkg:npm/acme")
	p.Badges = []string{}
	st, err := NewChangeStatement(p)
	if err != nil {
		t.Fatal(err)
	}
	if canon, err := Marshal(st); err != nil {
		t.Fatal(err)
	} else if _, err := DecodeStatement(canon); err != nil {
		t.Errorf("a version baseline was refused: %v", err)
	}
	// A subject that does not pin the after state is refused.
	st, _ = NewChangeStatement(sampleChange())
	st.Subject[0].Digest["sha256"] = strings.Repeat("0", 64)
	canon, _ := Marshal(st)
	if _, err := DecodeStatement(canon); err == nil {
		t.Error("a change statement with a wrong subject digest was accepted")
	}
}
