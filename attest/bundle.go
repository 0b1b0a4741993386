package attest

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// BundleFormat names the bundle format (see "Bundle" in the package documentation).
const BundleFormat = "probity.dev/log-bundle/v1"

// MaxBundleSize bounds a bundle ParseBundle accepts: an envelope at its largest plus
// proofs and checkpoints.
const MaxBundleSize = 2*MaxPayloadSize + 1<<20

// maxProofHashes bounds an inclusion or consistency proof: 2·63 hashes is more than
// any tree of 2^63 leaves needs.
const maxProofHashes = 126

// Bundle is one signed record with what proves it is in the log: its log index, an
// inclusion proof and the checkpoint (with cosignatures) it is proven against, and
// optionally the checkpoint before it with a consistency proof between the two.
type Bundle struct {
	Format   string          `json:"bundle"`
	LogIndex int64           `json:"logIndex"`
	Kind     string          `json:"kind"`
	Envelope json.RawMessage `json:"envelope"`
	// InclusionProof is the RFC 6962 inclusion proof of the leaf at LogIndex in the tree
	// of Checkpoint's size, each hash 32 bytes.
	InclusionProof [][]byte `json:"inclusionProof"`
	// Checkpoint is the signed note (tlog-checkpoint, signed-note), with every
	// cosignature the log collected for it.
	Checkpoint string `json:"checkpoint"`
	// PreviousCheckpoint is the latest checkpoint the log published before Checkpoint,
	// of a size at most LogIndex (so it does not hold the record), and
	// ConsistencyProof proves Checkpoint extends it. Both are absent when none was
	// published before.
	PreviousCheckpoint string   `json:"previousCheckpoint,omitempty"`
	ConsistencyProof   [][]byte `json:"consistencyProof,omitempty"`
}

// bundleMembers are a bundle's member names, exactly as spelled.
var bundleMembers = map[string]bool{"bundle": true, "logIndex": true, "kind": true, "envelope": true,
	"inclusionProof": true, "checkpoint": true, "previousCheckpoint": true, "consistencyProof": true}

// BundleError reports bytes that are not a bundle of this format.
type BundleError struct{ Msg string }

func (e *BundleError) Error() string { return "bundle: " + e.Msg }

// ParseBundle decodes a bundle strictly (CheckJSON's rules, member names exactly as
// spelled and no other, the envelope a JSON object) and returns it with its envelope
// compacted (json.Compact), the bytes its leaf holds.
func ParseBundle(data []byte) (*Bundle, error) {
	if len(data) > MaxBundleSize {
		return nil, &BundleError{fmt.Sprintf("%d bytes, more than %d", len(data), MaxBundleSize)}
	}
	if err := CheckJSON(data); err != nil {
		return nil, &BundleError{err.Error()}
	}
	// encoding/json matches member names case-insensitively: hold them to the
	// format's exact spelling first.
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		return nil, &BundleError{err.Error()}
	}
	for name := range members {
		if !bundleMembers[name] {
			return nil, &BundleError{fmt.Sprintf("unknown member %q", clipBytes([]byte(name)))}
		}
	}
	if env := members["envelope"]; len(env) > 0 && env[0] != '{' {
		return nil, &BundleError{"envelope is not a JSON object"}
	}
	var b Bundle
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return nil, &BundleError{err.Error()}
	}
	switch {
	case b.Format != BundleFormat:
		return nil, &BundleError{fmt.Sprintf("format %q is not %q", clipBytes([]byte(b.Format)), BundleFormat)}
	case b.LogIndex < 0:
		return nil, &BundleError{fmt.Sprintf("negative log index %d", b.LogIndex)}
	case !isLeafKind(b.Kind) || b.Kind == LeafKindTombstone:
		return nil, &BundleError{fmt.Sprintf("kind %q is not a record's", clipBytes([]byte(b.Kind)))}
	case len(b.Envelope) == 0:
		return nil, &BundleError{"no envelope"}
	case b.Checkpoint == "":
		return nil, &BundleError{"no checkpoint"}
	case (b.PreviousCheckpoint == "") != (b.ConsistencyProof == nil):
		return nil, &BundleError{"previousCheckpoint and consistencyProof come together"}
	case len(b.InclusionProof) > maxProofHashes || len(b.ConsistencyProof) > maxProofHashes:
		return nil, &BundleError{"proof longer than any tree needs"}
	}
	for _, h := range append(append([][]byte{}, b.InclusionProof...), b.ConsistencyProof...) {
		if len(h) != 32 {
			return nil, &BundleError{fmt.Sprintf("proof hash of %d bytes, want 32", len(h))}
		}
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, b.Envelope); err != nil {
		return nil, &BundleError{err.Error()}
	}
	b.Envelope = compact.Bytes()
	return &b, nil
}

// Marshal encodes the bundle as one line of JSON (no trailing newline); proof hashes
// are standard base64 with padding.
func (b *Bundle) Marshal() ([]byte, error) {
	c := *b
	c.Format = BundleFormat
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&c); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
