package logaudit

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/probity-dev/probity/verifier"
)

// checkpoint is a checkpoint whose log signature verified.
type checkpoint struct {
	Origin string
	Size   int64
	Root   tlog.Hash
	Note   []byte // the whole signed note, cosignatures included
}

// Cosignature is a trusted witness's verified cosignature on the checkpoint.
type Cosignature struct {
	Witness string    `json:"witness"` // the witness key's name
	Time    time.Time `json:"time"`    // the witness's timestamp (tlog-cosignature/v1)
}

// checkNote verifies a checkpoint note with the verifier's rules
// (verifier.OpenCheckpoint): the log's signature, the origin, and the cosignatures of the
// trusted witnesses. A trusted witness's cosignature that does not verify is a failure,
// but the audit goes on with the log's signature alone, so that it still reports what
// the tree holds; a note the log did not sign ends it (fatal).
func checkNote(text []byte, logKey string, witnessKeys []string) (cp checkpoint, cos []Cosignature, failures []*Failure, fatal bool) {
	vc, err := verifier.OpenCheckpoint(text, logKey, witnessKeys)
	var f *verifier.Failure
	if errors.As(err, &f) && f.Reason == verifier.ReasonBadCosignature {
		failures = append(failures, &Failure{Index: -1, Reason: ReasonCosignature, Detail: f.Detail})
		vc, err = verifier.OpenCheckpoint(text, logKey, nil)
	}
	if err != nil {
		if !errors.As(err, &f) {
			return cp, nil, append(failures, &Failure{Index: -1, Reason: ReasonCheckpointMalformed, Detail: err.Error()}), true
		}
		reason := Reason(f.Reason)
		if f.Reason == verifier.ReasonMalformedBundle {
			reason = ReasonCheckpointMalformed
		}
		return cp, nil, append(failures, &Failure{Index: -1, Reason: reason, Detail: f.Detail}), true
	}
	cp = checkpoint{Origin: vc.Origin, Size: vc.Size, Root: vc.Hash, Note: text}
	for _, c := range vc.Cosignatures {
		cos = append(cos, Cosignature{Witness: c.Witness, Time: c.Time.UTC()})
	}
	return cp, cos, failures, false
}

// clip bounds text from the source echoed in reports.
func clip(s string) string {
	if len(s) <= 64 {
		return strings.ToValidUTF8(s, "?")
	}
	return strings.ToValidUTF8(s[:64], "?") + "…"
}

// checkWitnessKeys validates the trusted witnesses' keys up front.
func checkWitnessKeys(vkeys []string) error {
	seen := map[string]bool{}
	for _, k := range vkeys {
		if _, err := verifier.NewCosignatureVerifier(k); err != nil {
			return fmt.Errorf("%w: %v", ErrConfig, err)
		}
		if seen[k] {
			return fmt.Errorf("%w: witness key %q is given twice", ErrConfig, clip(k))
		}
		seen[k] = true
	}
	return nil
}
