package translog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/store"
)

// BundleStore is what Bundle needs of the store.
type BundleStore interface {
	// CheckpointsAround returns the earliest archived checkpoint holding index and the
	// latest one before it (nil when none).
	CheckpointsAround(ctx context.Context, index int64) (holding, before *store.LogCheckpoint, err error)
}

// ErrNotLogged is returned by Bundle for a record the log does not hold yet, or that
// no archived checkpoint covers yet.
var ErrNotLogged = errors.New("the record is not in a published checkpoint yet")

// Bundle builds the bundle of a logged record (attest, "Bundle"): its envelope, its log
// index, the inclusion proof of its leaf read from the tiles in dir against the earliest
// archived checkpoint holding it, and the checkpoint before that with a consistency
// proof. It works in any process: it reads dir and the store only. The tiles are
// checked against the checkpoint's root, and the proof against the leaf the record
// makes, so a bundle Bundle returns verifies.
func Bundle(ctx context.Context, dir string, st BundleStore, rec store.LedgerRecord) (*attest.Bundle, error) {
	if rec.LogIndex == nil {
		return nil, fmt.Errorf("couldn't build the bundle of record %d: %w", rec.Seq, ErrNotLogged)
	}
	index := *rec.LogIndex
	if index != rec.Seq-1 {
		return nil, fmt.Errorf("couldn't build the bundle of record %d: log index %d is not its number - 1", rec.Seq, index)
	}
	leaf, err := attest.RecordLeaf(rec.Seq, string(rec.Kind), rec.Envelope)
	if err != nil {
		return nil, fmt.Errorf("couldn't build the bundle of record %d: %w", rec.Seq, err)
	}
	holding, before, err := st.CheckpointsAround(ctx, index)
	if err != nil {
		return nil, fmt.Errorf("couldn't build the bundle of record %d: %w", rec.Seq, err)
	}
	if holding == nil {
		return nil, fmt.Errorf("couldn't build the bundle of record %d: %w", rec.Seq, ErrNotLogged)
	}
	cp, err := parseCheckpoint(holding.Note)
	if err != nil {
		return nil, fmt.Errorf("couldn't build the bundle of record %d: archived %w", rec.Seq, err)
	}
	tree := tlog.Tree{N: cp.size, Hash: cp.root}
	hr := tlog.TileHashReader(tree, tileReader{dir})
	proof, err := tlog.ProveRecord(cp.size, index, hr)
	if err != nil {
		return nil, fmt.Errorf("couldn't prove record %d in the checkpoint of size %d: %w", rec.Seq, cp.size, err)
	}
	if err := tlog.CheckRecord(proof, cp.size, cp.root, index, tlog.RecordHash(leaf)); err != nil {
		return nil, &MismatchError{Index: index, Reason: fmt.Sprintf("record %d's leaf is not in the log: %v", rec.Seq, err)}
	}
	if !json.Valid(rec.Envelope) {
		return nil, fmt.Errorf("couldn't build the bundle of record %d: its envelope is not JSON", rec.Seq)
	}
	b := &attest.Bundle{Format: attest.BundleFormat, LogIndex: index, Kind: string(rec.Kind),
		Envelope: json.RawMessage(rec.Envelope), InclusionProof: hashes(proof), Checkpoint: string(holding.Note)}
	if before != nil {
		prev, err := parseCheckpoint(before.Note)
		if err != nil {
			return nil, fmt.Errorf("couldn't build the bundle of record %d: archived previous %w", rec.Seq, err)
		}
		if prev.size > 0 && prev.size < cp.size {
			tp, err := tlog.ProveTree(cp.size, prev.size, hr)
			if err != nil {
				return nil, fmt.Errorf("couldn't prove the checkpoint of size %d extends that of size %d: %w", cp.size, prev.size, err)
			}
			if err := tlog.CheckTree(tp, cp.size, cp.root, prev.size, prev.root); err != nil {
				return nil, &MismatchError{Index: prev.size - 1, Reason: fmt.Sprintf("the checkpoint of size %d does not extend that of size %d: %v", cp.size, prev.size, err)}
			}
			b.PreviousCheckpoint, b.ConsistencyProof = string(before.Note), hashes(tp)
		}
	}
	return b, nil
}

// hashes converts a proof to the bundle's form.
func hashes(p []tlog.Hash) [][]byte {
	out := make([][]byte, len(p))
	for i := range p {
		out[i] = p[i][:]
	}
	return out
}

// validOrigin reports whether name can be a log origin and note signer name: not
// empty, no space, no plus (C2SP signed-note).
func validOrigin(name string) bool {
	return name != "" && strings.IndexFunc(name, unicode.IsSpace) < 0 && !strings.Contains(name, "+")
}
