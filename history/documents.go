package history

import (
	"encoding/json"
	"fmt"

	"github.com/probity-dev/probity/history/diff"
	"github.com/probity-dev/probity/internal/document"
)

// ChangeDetails is the stored JSON of a change (store.ChangeRecord.Details), one shape
// for every kind: each kind sets its own members and leaves the rest out.
//
//   - baseline: ToolCount.
//   - tools: Diff.
//   - version: VersionBefore and VersionAfter ("" is left out: a package's first
//     version has no before).
//   - operator_edit: Field, with Before and After when the field's text is recorded
//     (RecordsEditText); a nil Before or After means the text was not recorded, "" an
//     empty text.
//
// The shape has not changed since the first stored change.
type ChangeDetails struct {
	ToolCount     *int         `json:"toolCount,omitempty"`
	Diff          *diff.Change `json:"diff,omitempty"`
	VersionBefore string       `json:"versionBefore,omitempty"`
	VersionAfter  string       `json:"versionAfter,omitempty"`
	Field         string       `json:"field,omitempty"`
	Before        *string      `json:"before,omitempty"`
	After         *string      `json:"after,omitempty"`
}

// EncodeChangeDetails returns the stored form of d.
func EncodeChangeDetails(d *ChangeDetails) ([]byte, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("couldn't encode change details: %w", err)
	}
	return b, nil
}

// DecodeChangeDetails reads details stored by EncodeChangeDetails, strictly (package
// internal/document): a member ChangeDetails or diff.Change does not declare is an
// error.
func DecodeChangeDetails(data []byte) (*ChangeDetails, error) {
	var d ChangeDetails
	if err := document.Decode(data, &d); err != nil {
		return nil, fmt.Errorf("couldn't decode change details: %w", err)
	}
	return &d, nil
}

// Operator edit fields whose text is not recorded, only that they changed.
var editWithoutText = map[string]bool{"setup_notes": true}

// RecordsEditText reports whether an operator edit of field records the text before
// and after (false for the setup notes: only that they changed). Readers show an
// edit's text only when it does.
func RecordsEditText(field string) bool { return !editWithoutText[field] }

// EncodeState returns the stored form of an entry's history state
// (store.HistoryUpdate.State).
func EncodeState(st State) ([]byte, error) {
	b, err := json.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("couldn't encode the history state: %w", err)
	}
	return b, nil
}

// DecodeState reads a state stored by EncodeState, strictly (package
// internal/document); nil, an entry without a stored state, is the zero State. The
// shape has not changed since the first stored state.
func DecodeState(data []byte) (State, error) {
	var st State
	if data == nil {
		return st, nil
	}
	if err := document.Decode(data, &st); err != nil {
		return State{}, fmt.Errorf("couldn't decode the history state: %w", err)
	}
	return st, nil
}
