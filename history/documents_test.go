package history

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/history/diff"
)

// Each kind of change writes its own members of ChangeDetails, in the form every
// change has been stored in, and reads back unchanged; members of no kind are refused.
func TestChangeDetailsForms(t *testing.T) {
	n := 3
	before, after := "", "new"
	for _, c := range []struct {
		d    ChangeDetails
		want string
	}{
		{ChangeDetails{ToolCount: &n}, `{"toolCount":3}`},
		{ChangeDetails{Diff: &diff.Change{Added: []diff.ToolRef{{Name: "a"}}}}, `{"diff":{"Added":[{"Name":"a","Title":""}],"Removed":null,"Changed":null,` +
			`"InstructionsChanged":false,"InstructionsBefore":null,"InstructionsAfter":null,"VersionChanged":false,"VersionBefore":"","VersionAfter":"","Breaking":null,"Badges":null}}`},
		{ChangeDetails{VersionAfter: "1.0.0"}, `{"versionAfter":"1.0.0"}`},
		{ChangeDetails{VersionBefore: "1.0.0", VersionAfter: "1.1.0"}, `{"versionBefore":"1.0.0","versionAfter":"1.1.0"}`},
		{ChangeDetails{Field: "description", Before: &before, After: &after}, `{"field":"description","before":"","after":"new"}`},
		{ChangeDetails{Field: "setup_notes"}, `{"field":"setup_notes"}`},
	} {
		b, err := EncodeChangeDetails(&c.d)
		if err != nil || string(b) != c.want {
			t.Errorf("EncodeChangeDetails = %s, %v; want %s", b, err, c.want)
			continue
		}
		got, err := DecodeChangeDetails(b)
		if err != nil || !reflect.DeepEqual(*got, c.d) {
			t.Errorf("DecodeChangeDetails(%s) = %+v, %v", b, got, err)
		}
	}
	for _, bad := range []string{``, `null x`, `[]`, `{"unknown":1}`, `{"diff":"x"}`, `{"diff":{"Added":[{"Name":"a","Extra":1}]}}`, `{"field":3}`} {
		if d, err := DecodeChangeDetails([]byte(bad)); err == nil {
			t.Errorf("DecodeChangeDetails(%s) = %+v, want an error", bad, d)
		}
	}
	if RecordsEditText("setup_notes") || !RecordsEditText("description") {
		t.Error("RecordsEditText: only the setup notes go without their text")
	}
}

// A state reads back unchanged; no stored state is the zero State.
func TestStateForms(t *testing.T) {
	at := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	st := State{Recorded: &Read{ID: 4, RoundID: "r", At: at, OK: true, Surface: "sha256:aa", ToolCount: 2},
		ToolChanges: []time.Time{at}, Version: "1.0.0", Versions: []VersionSeen{{Version: "1.0.0", At: at}}, NextNumber: 3}
	b, err := EncodeState(st)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeState(b)
	if err != nil || !reflect.DeepEqual(got, st) {
		t.Fatalf("DecodeState(%s) = %+v, %v", b, got, err)
	}
	if got, err := DecodeState(nil); err != nil || !reflect.DeepEqual(got, State{}) {
		t.Errorf("DecodeState(nil) = %+v, %v", got, err)
	}
	// The stored form is the one states have always had (Read.ID included, stored as
	// ObservationID): a state stored by an earlier release decodes, and is encoded
	// again byte for byte.
	stored := `{"recorded":{"ObservationID":4,"RoundID":"r","PayloadDigest":"","At":"2026-12-01T06:00:00Z","OK":true,` +
		`"Surface":"sha256:aa","Instructions":"","ToolCount":2,"Version":""},"toolChanges":["2026-12-01T06:00:00Z"],` +
		`"version":"1.0.0","versions":[{"version":"1.0.0","at":"2026-12-01T06:00:00Z"}],"nextNumber":3}`
	if string(b) != stored {
		t.Errorf("EncodeState = %s\nthe stored form is %s", b, stored)
	}
	if got, err := DecodeState([]byte(stored)); err != nil || !reflect.DeepEqual(got, st) {
		t.Errorf("DecodeState(%s) = %+v, %v", stored, got, err)
	}
	for _, bad := range []string{``, `{"nextNumber":"3"}`, `{"recorded":{"Surface":"x","Extra":1}}`, `{"nextnumber":1,"other":2}`} {
		if s, err := DecodeState([]byte(bad)); err == nil {
			t.Errorf("DecodeState(%s) = %+v, want an error", bad, s)
		}
	}
}

// BenchmarkDecodeChangeDetails decodes the details of a change of 2,000 tools (about
// 1 MB) strictly, beside json.Unmarshal into the same type (how the pages read them
// before), so the cost of the strict reading shows side by side.
func BenchmarkDecodeChangeDetails(b *testing.B) {
	c := &diff.Change{}
	for i := range 2000 {
		name := "tool_" + strconv.Itoa(i)
		c.Added = append(c.Added, diff.ToolRef{Name: name + "_new", Title: "A tool added in this change."})
		c.Changed = append(c.Changed, diff.ToolChange{Name: name, DescriptionChanged: true,
			DescriptionBefore: strings.Repeat("Before. ", 30), DescriptionAfter: strings.Repeat("After. ", 30), ParamsAdded: []string{"q", "limit"}})
	}
	raw, err := EncodeChangeDetails(&ChangeDetails{Diff: c})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	b.Run("strict", func(b *testing.B) {
		for b.Loop() {
			if _, err := DecodeChangeDetails(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unmarshal", func(b *testing.B) {
		for b.Loop() {
			var d ChangeDetails
			if err := json.Unmarshal(raw, &d); err != nil {
				b.Fatal(err)
			}
		}
	})
}
