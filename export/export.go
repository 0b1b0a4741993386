// Package export writes the ledger's signed records with the key document, in the
// shapes the offline verifier accepts, and an index that gives each record its ledger
// sequence number and kind.
//
// The records go out as one stream in sequence order (store.Store's Ledger), every kind
// (round, change, supply run, key document version) together, each as its bundle
// (attest.Bundle: the envelope with its proof of inclusion in the transparency log and
// the checkpoint it is proven against) when Write is given Bundles and the record is in
// a published checkpoint, else as its bare envelope. Two shapes:
//
//   - A JSONL file (OUT.jsonl): one envelope per line, byte for byte as stored, in
//     sequence order; keys.json beside it; and the index OUT.ledger.tsv beside it.
//   - A directory: keys.json, one file per record (a round's SLUG/ROUND-ID.json, a
//     change's SLUG/changes/ch-N.json, a supply run's SLUG/supply/TIME.json, as before
//     the ledger), and the index ledger.tsv at its root.
//
// The index (IndexColumns) is tab-separated, one line per record and per tombstone that
// the filter selects, in sequence order: the line (or file) of each record, and for a
// tombstone (an entry's deletion, which removed records from the ledger) the numbers it
// removed and why. Its name does not end in .json, .jsonl or .dsse, so `probity verify`
// of the export's directory does not read it, and the envelope files are what they
// were before the ledger: a verifier that knows nothing of the index verifies them as
// before.
package export

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/store"
)

// Bundles builds a record's bundle (attest.Bundle, encoded): its envelope with the
// proof that it is in the transparency log. It returns an error wrapping
// ErrNotLogged for a record no published checkpoint holds yet.
type Bundles interface {
	Bundle(ctx context.Context, rec store.LedgerRecord) ([]byte, error)
}

// ErrNotLogged is what Bundles wraps for a record that has no bundle yet.
var ErrNotLogged = errors.New("not in a published checkpoint yet")

// Ledger is what Write reads of the store.
type Ledger interface {
	Ledger(ctx context.Context, f store.LedgerFilter, fn func(store.LedgerRecord) error) error
	Tombstones(ctx context.Context, afterSeq int64) ([]store.Tombstone, error)
}

// Counts says how many envelopes and tombstones Write wrote.
type Counts struct {
	Rounds     int // round envelopes (probe/v1)
	Changes    int // change envelopes (change/v1), hidden changes included: they stay signed records
	Supply     int // supply-run envelopes (supply/v1), every run kept
	Keys       int // key document versions (keys/v1), each a record of its own
	Other      int // records of kinds this version does not name
	Tombstones int // deletions the index lists
	// Bundled is how many records went out as bundles (with their proof of inclusion in
	// the transparency log); the others, not logged yet, as bare envelopes.
	Bundled int
}

// IndexColumns is the index's header line: a record's sequence number, kind
// (store.RecordKind, or "tombstone"), entry slug, where it is (the 1-based line of the
// JSONL file, or the file's path relative to the export directory; "-" for a
// tombstone), and its payload digest (hex SHA-256), or for a tombstone what it removed:
// "removed SEQ,SEQ,… because REASON".
const IndexColumns = "seq\tkind\tentry\tat\tpayload_digest"

// IndexName is the index of an export to out: OUT.ledger.tsv beside a .jsonl file,
// ledger.tsv inside a directory.
func IndexName(out string) string {
	if base, ok := strings.CutSuffix(out, ".jsonl"); ok {
		return base + ".ledger.tsv"
	}
	return filepath.Join(out, "ledger.tsv")
}

// Write writes the ledger records f selects (Since: stored at or after; EntrySlug: of
// one entry) and the key document to out (a directory, or a .jsonl file with keys.json
// beside it), with the index (IndexName). With bundles, each record that is in a
// published checkpoint goes out as its bundle instead of its bare envelope (the
// verifier tells them apart by the bundle member). Progress goes to progress every 5 s.
func Write(ctx context.Context, st Ledger, doc *keys.Document, out string, f store.EnvelopeFilter, bundles Bundles, progress io.Writer) (Counts, error) {
	var c Counts
	docJSON, err := keys.MarshalDocument(doc)
	if err != nil {
		return c, err
	}
	lf := store.LedgerFilter{Since: f.Since, EntrySlug: f.EntrySlug}
	tombs, err := selectTombstones(ctx, st, lf)
	if err != nil {
		return c, err
	}
	last := time.Now()
	count := func(k store.RecordKind) {
		switch k {
		case store.RecordProbe:
			c.Rounds++
		case store.RecordChange:
			c.Changes++
		case store.RecordSupply:
			c.Supply++
		case store.RecordKeys:
			c.Keys++
		default:
			c.Other++
		}
		if time.Since(last) > 5*time.Second {
			fmt.Fprintf(progress, "exported %d round, %d change and %d supply envelopes …\n", c.Rounds, c.Changes, c.Supply)
			last = time.Now()
		}
	}

	jsonl := strings.HasSuffix(out, ".jsonl")
	if jsonl {
		err = writeFileAtomic(filepath.Join(filepath.Dir(out), keys.DocumentFile), docJSON)
	} else if err = os.MkdirAll(out, 0o755); err == nil {
		err = writeFileAtomic(filepath.Join(out, keys.DocumentFile), docJSON)
	}
	if err != nil {
		return c, err
	}
	index, err := newAtomicFile(IndexName(out))
	if err != nil {
		return c, err
	}
	defer index.discard()
	index.w.WriteString(IndexColumns + "\n")

	var lines *atomicFile
	if jsonl {
		if lines, err = newAtomicFile(out); err != nil {
			return c, err
		}
		defer lines.discard()
	}
	line := 0
	err = st.Ledger(ctx, lf, func(r store.LedgerRecord) error {
		for len(tombs) > 0 && tombs[0].Seq < r.Seq {
			writeTombstone(index.w, tombs[0])
			tombs = tombs[1:]
			c.Tombstones++
		}
		if _, _, err := attest.ParseEnvelope(r.Envelope); err != nil {
			return fmt.Errorf("record %d (%s of %s): %w", r.Seq, r.Kind, r.EntrySlug, err)
		}
		data, bundled := r.Envelope, false
		if bundles != nil {
			b, err := bundles.Bundle(ctx, r)
			switch {
			case err == nil:
				data, bundled = b, true
				c.Bundled++
			case !errors.Is(err, ErrNotLogged):
				return fmt.Errorf("record %d (%s of %s): %w", r.Seq, r.Kind, r.EntrySlug, err)
			}
		}
		at, err := "", error(nil)
		if jsonl {
			line++
			at, err = strconv.Itoa(line), oneLine(data, lines.w)
		} else {
			at, err = writeRecordFile(out, r, data, bundled)
		}
		if err != nil {
			return fmt.Errorf("record %d (%s of %s): %w", r.Seq, r.Kind, r.EntrySlug, err)
		}
		fmt.Fprintf(index.w, "%d\t%s\t%s\t%s\t%s\n", r.Seq, r.Kind, r.EntrySlug, at, r.PayloadDigest)
		count(r.Kind)
		return nil
	})
	for ; err == nil && len(tombs) > 0; tombs = tombs[1:] {
		writeTombstone(index.w, tombs[0])
		c.Tombstones++
	}
	if err == nil && jsonl {
		err = lines.commit()
	}
	if err == nil {
		err = index.commit()
	}
	if err != nil {
		return c, fmt.Errorf("couldn't export to %s: %w", out, err)
	}
	return c, nil
}

// selectTombstones returns the tombstones the filter selects: deleted at or after Since,
// of the entry EntrySlug names.
func selectTombstones(ctx context.Context, st Ledger, f store.LedgerFilter) ([]store.Tombstone, error) {
	all, err := st.Tombstones(ctx, 0)
	if err != nil {
		return nil, fmt.Errorf("couldn't read the tombstones: %w", err)
	}
	var out []store.Tombstone
	for _, t := range all {
		if (f.EntrySlug == "" || t.EntrySlug == f.EntrySlug) && !t.DeletedAt.Before(f.Since) {
			out = append(out, t)
		}
	}
	return out, nil
}

// writeTombstone writes a tombstone's index line. Its reason is one line without
// control characters (the store's rule), so it cannot break the TSV.
func writeTombstone(w *bufio.Writer, t store.Tombstone) {
	seqs := make([]string, len(t.Removed))
	for i, r := range t.Removed {
		seqs[i] = strconv.FormatInt(r.Seq, 10)
	}
	fmt.Fprintf(w, "%d\ttombstone\t%s\t-\tremoved %s because %s\n", t.Seq, t.EntrySlug, strings.Join(seqs, ","), t.Reason)
}

// writeRecordFile writes a record (data: its envelope, or its bundle) to its file in the
// directory out and returns the file's path relative to out: SLUG/ROUND-ID.json,
// SLUG/changes/ch-N.json, SLUG/supply/TIME.json, or, for a kind this version does not
// name (a key document version: _/ledger/SEQ.json) or a record whose row is gone,
// SLUG/ledger/SEQ.json; a bundle's name ends in .bundle.json instead of .json.
func writeRecordFile(out string, r store.LedgerRecord, data []byte, bundle bool) (string, error) {
	slug := r.EntrySlug
	if slug == "" {
		slug = "_"
	}
	var rel string
	switch {
	case r.Kind == store.RecordProbe && r.RoundID != "":
		rel = filepath.Join(slug, r.RoundID+".json")
	case r.Kind == store.RecordChange && r.ChangeNumber > 0:
		rel = filepath.Join(slug, "changes", fmt.Sprintf("ch-%d.json", r.ChangeNumber))
	case r.Kind == store.RecordSupply && !r.RanAt.IsZero():
		rel = filepath.Join(slug, "supply", r.RanAt.UTC().Format("20060102T150405.000Z")+".json")
	default:
		rel = filepath.Join(slug, "ledger", fmt.Sprintf("%d.json", r.Seq))
	}
	if bundle {
		rel = strings.TrimSuffix(rel, ".json") + ".bundle.json"
	}
	path := filepath.Join(out, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	return filepath.ToSlash(rel), writeFileAtomic(path, data)
}

// oneLine writes a record (an envelope or its bundle) as one JSONL line. Stored
// envelopes and bundles are compact (attest.EncodeEnvelope, Bundle.Marshal); one with a
// newline would break the JSONL shape and is refused.
func oneLine(env []byte, w *bufio.Writer) error {
	if strings.ContainsAny(string(env), "\n\r") {
		return errors.New("the record spans lines")
	}
	w.Write(env)
	return w.WriteByte('\n')
}

// atomicFile is a file written through a temporary file and renamed into place by
// commit; discard removes the temporary file unless committed.
type atomicFile struct {
	path, tmp string
	file      *os.File
	w         *bufio.Writer
	done      bool
}

func newAtomicFile(path string) (*atomicFile, error) {
	tmp := path + ".tmp"
	file, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	return &atomicFile{path: path, tmp: tmp, file: file, w: bufio.NewWriterSize(file, 1<<20)}, nil
}

// commit flushes, syncs and closes the file and renames it into place.
func (f *atomicFile) commit() error {
	err := f.w.Flush()
	if err == nil {
		err = f.file.Sync()
	}
	if cerr := f.file.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.tmp, f.path)
	}
	f.done = err == nil
	return err
}

func (f *atomicFile) discard() {
	if !f.done {
		f.file.Close()
		os.Remove(f.tmp)
	}
}

// writeFileAtomic writes data to path through a temporary file and a rename.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
