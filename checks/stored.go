package checks

import (
	"encoding/json"
	"fmt"

	"github.com/probity-dev/probity/internal/document"
)

// EncodeResults returns the stored form of a round's results (store.Round.Results): a
// JSON array of Result, evidence included, in the order given. Its shape has not
// changed since the first stored round: {"id", "status", "reason" when set,
// "evidence" when any}, each evidence with its Go field names.
func EncodeResults(rs []Result) ([]byte, error) {
	b, err := json.Marshal(rs)
	if err != nil {
		return nil, fmt.Errorf("couldn't encode check results: %w", err)
	}
	return b, nil
}

// DecodeResults reads results stored by EncodeResults, strictly (package
// internal/document): a member no Result or Evidence declares is an error.
func DecodeResults(data []byte) ([]Result, error) {
	var rs []Result
	if err := document.Decode(data, &rs); err != nil {
		return nil, fmt.Errorf("couldn't decode check results: %w", err)
	}
	return rs, nil
}
