package translog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/store"
)

// leafOf builds the leaf of one number from its source (attest, "Log leaf").
func LeafOf(src store.LogSource) ([]byte, error) {
	switch {
	case src.Record != nil:
		return attest.RecordLeaf(src.Seq, string(src.Record.Kind), src.Record.Envelope)
	case src.Tombstone != nil:
		doc, err := TombstoneDocument(src.Tombstone).Marshal()
		if err != nil {
			return nil, err
		}
		return attest.TombstoneLeaf(src.Seq, doc)
	case src.Removed != nil:
		return attest.RemovedLeaf(src.Seq, string(src.Removed.Kind), src.Removed.PayloadDigest)
	}
	return nil, fmt.Errorf("number %d has no source", src.Seq)
}

// TombstoneDocument is the document a tombstone's leaf holds.
func TombstoneDocument(t *store.Tombstone) attest.TombstoneDocument {
	doc := attest.TombstoneDocument{DeletedAt: t.DeletedAt, Entry: t.EntrySlug, Reason: t.Reason}
	for _, r := range t.Removed {
		doc.Removed = append(doc.Removed, attest.RemovedRef{Seq: r.Seq, Kind: string(r.Kind), PayloadDigestHex: r.PayloadDigest})
	}
	return doc
}

// leafMatches checks that leaf, read from the log, is what src makes. A record removed
// with its entry after it was logged as a record is accepted: its leaf holds the record
// (its envelope, whose payload digest the tombstone lists, or the envelope's digest).
func leafMatches(src store.LogSource, leaf []byte) error {
	want, err := LeafOf(src)
	if err != nil {
		return &MismatchError{Index: src.Seq - 1, Reason: err.Error()}
	}
	if bytes.Equal(want, leaf) {
		return nil
	}
	if src.Removed != nil {
		got, err := attest.ParseLeaf(leaf)
		if err == nil && got.Seq == src.Seq && got.Kind == string(src.Removed.Kind) {
			switch got.Body {
			case attest.LeafEnvelopeDigest:
				return nil
			case attest.LeafEnvelope:
				if _, payload, err := attest.ParseEnvelope(got.Data); err == nil {
					sum := sha256.Sum256(payload)
					if hex.EncodeToString(sum[:]) == src.Removed.PayloadDigest {
						return nil
					}
				}
			}
		}
	}
	return &MismatchError{Index: src.Seq - 1, Reason: fmt.Sprintf("the leaf in the log is not the one the ledger makes for number %d", src.Seq)}
}
