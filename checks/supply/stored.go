package supply

import (
	"encoding/json"
	"fmt"

	"github.com/probity-dev/probity/internal/document"
)

// EncodeVerdict returns the stored form of a supply run's verdict
// (store.SupplyRecord.Verdict): Verdict as JSON, results with their evidence and links.
// Its shape has not changed since the first stored run; suite 2.1 added the status
// StatusNotRun ("not_run"), which older verdicts do not use.
func EncodeVerdict(v Verdict) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("couldn't encode the supply verdict: %w", err)
	}
	return b, nil
}

// DecodeVerdict reads a verdict stored by EncodeVerdict, strictly (package
// internal/document): a member Verdict, Result or Evidence does not declare is an
// error.
func DecodeVerdict(data []byte) (Verdict, error) {
	var v Verdict
	if err := document.Decode(data, &v); err != nil {
		return Verdict{}, fmt.Errorf("couldn't decode the supply verdict: %w", err)
	}
	return v, nil
}
