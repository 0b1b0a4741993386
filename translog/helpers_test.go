package translog

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"github.com/probity-dev/probity/keys"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/internal/ledgertest"
	"github.com/probity-dev/probity/store"
)

// testOrigin is the test log's origin.
var testOrigin, _ = keys.LogOrigin("https://example.com") // "example.com/log"

// newLogKey returns a checkpoint signer and its verifier for testOrigin.
func newLogKey(t testing.TB) (note.Signer, note.Verifier) {
	t.Helper()
	s, v, _ := newLogKeyV(t)
	return s, v
}

// newLogKeyV is newLogKey, with the verifier key (C2SP signed-note vkey).
func newLogKeyV(t testing.TB) (note.Signer, note.Verifier, string) {
	t.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, testOrigin)
	if err != nil {
		t.Fatal(err)
	}
	s, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return s, v, vkey
}

// openStore opens (and migrates) the SQLite store at path.
func openStore(t testing.TB, path string) store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), store.Config{SQLitePath: path})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// writer stores signed records with a ledgertest signer.
type writer struct {
	s      store.Store
	signer *ledgertest.Signer
	n      int
}

func newWriter(t testing.TB, s store.Store) *writer {
	t.Helper()
	signer, err := ledgertest.NewSigner("translog")
	if err != nil {
		t.Fatal(err)
	}
	return &writer{s: s, signer: signer}
}

// entry adds an entry.
func (w *writer) entry(ctx context.Context, slug string) (store.Entry, error) {
	e, _, err := w.s.AddEntry(ctx, store.NewEntry{SlugBase: slug, Kind: store.KindNPM,
		Locator: "pkg:npm/" + slug, Name: slug, Source: "import"})
	return e, err
}

// supply stores a signed supply run of e.
func (w *writer) supply(ctx context.Context, e store.Entry) error {
	w.n++
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(w.n) * time.Second)
	rec, err := w.signer.Supply(ctx, e.Slug, at)
	if err != nil {
		return err
	}
	_, err = w.s.SaveSupply(ctx, store.SupplyRecord{EntryID: e.ID, RanAt: at, Score: 100, Verified: true,
		Facts: []byte(`{}`), Verdict: []byte(`{}`), Envelope: rec.Envelope, KeyID: w.signer.KeyID}, nil)
	return err
}

// mustSupply stores n supply runs of e.
func (w *writer) mustSupply(t testing.TB, e store.Entry, n int) {
	t.Helper()
	for range n {
		if err := w.supply(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
}

func (w *writer) mustEntry(t testing.TB, slug string) store.Entry {
	t.Helper()
	e, err := w.entry(context.Background(), slug)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// allSources returns every source the ledger has.
func allSources(ctx context.Context, s store.Store) ([]store.LogSource, error) {
	var out []store.LogSource
	for {
		page, err := s.LogSources(ctx, int64(len(out)), 0)
		if err != nil {
			return nil, err
		}
		if len(page) == 0 {
			return out, nil
		}
		out = append(out, page...)
	}
}

// checkLogMatchesLedger checks, from the outside, that the log in dir holds every
// number of the ledger exactly once, in order, with no gap (leaf i is number i+1's),
// that the published checkpoint is signed by v and commits to exactly those leaves,
// and that every row's stored log index is seq-1.
func checkLogMatchesLedger(t testing.TB, dir string, s store.Store, v note.Verifier) int64 {
	t.Helper()
	ctx := context.Background()
	srcs, err := allSources(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	cpRaw, err := os.ReadFile(filepath.Join(dir, "checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := note.Open(cpRaw, note.VerifierList(v))
	if err != nil {
		t.Fatalf("the published checkpoint does not verify: %v", err)
	}
	cp, err := parseCheckpoint(cpRaw)
	if err != nil || cp.origin != testOrigin || n.Text == "" {
		t.Fatalf("checkpoint %q: %v", cpRaw, err)
	}
	if cp.size != int64(len(srcs)) {
		t.Fatalf("the log has %d leaves, the ledger %d numbers", cp.size, len(srcs))
	}
	hashes := make([]tlog.Hash, 0, 2*len(srcs))
	for i, src := range srcs {
		leaf, err := readLeaf(dir, int64(i), cp.size)
		if err != nil {
			t.Fatalf("leaf %d: %v", i, err)
		}
		if src.Seq != int64(i+1) {
			t.Fatalf("source %d has number %d", i, src.Seq)
		}
		if err := leafMatches(src, leaf); err != nil {
			t.Fatalf("leaf %d: %v", i, err)
		}
		if l, err := attest.ParseLeaf(leaf); err != nil || l.Seq != src.Seq {
			t.Fatalf("leaf %d does not parse as number %d: %v", i, src.Seq, err)
		}
		// The tree, recomputed from the leaves, is the checkpoint's.
		hs, err := tlog.StoredHashes(int64(i), leaf, hashReaderOf(hashes))
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, hs...)
		switch {
		case src.Record != nil && (src.Record.LogIndex == nil || *src.Record.LogIndex != src.Seq-1):
			t.Errorf("record %d: log index %v", src.Seq, src.Record.LogIndex)
		case src.Tombstone != nil && (src.Tombstone.LogIndex == nil || *src.Tombstone.LogIndex != src.Seq-1):
			t.Errorf("tombstone %d: log index %v", src.Seq, src.Tombstone.LogIndex)
		}
	}
	if cp.size > 0 {
		root, err := tlog.TreeHash(cp.size, hashReaderOf(hashes))
		if err != nil || root != cp.root {
			t.Fatalf("the leaves' tree hash %v is not the checkpoint's %v (%v)", root, cp.root, err)
		}
	}
	// Ledger's walk says the same of the records.
	if err := s.Ledger(ctx, store.LedgerFilter{}, func(r store.LedgerRecord) error {
		if r.LogIndex == nil || *r.LogIndex != r.Seq-1 {
			return fmt.Errorf("record %d: log index %v", r.Seq, r.LogIndex)
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
	return cp.size
}

// hashReaderOf reads stored hashes from a slice.
type hashReaderOf []tlog.Hash

func (h hashReaderOf) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		if x >= int64(len(h)) {
			return nil, errors.New("hash not stored yet")
		}
		out[i] = h[x]
	}
	return out, nil
}

// verifyBundle checks a bundle offline, as a verifier does: the leaf the record makes
// is included in the signed checkpoint, and the checkpoint extends the previous one.
func verifyBundle(t testing.TB, b *attest.Bundle, v note.Verifier, extra ...note.Verifier) *note.Note {
	t.Helper()
	raw, err := b.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	b, err = attest.ParseBundle(raw)
	if err != nil {
		t.Fatalf("ParseBundle: %v", err)
	}
	n, err := note.Open([]byte(b.Checkpoint), note.VerifierList(append([]note.Verifier{v}, extra...)...))
	if err != nil {
		t.Fatalf("the bundle's checkpoint: %v", err)
	}
	cp, err := parseCheckpoint([]byte(b.Checkpoint))
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := attest.RecordLeaf(b.LogIndex+1, b.Kind, b.Envelope)
	if err != nil {
		t.Fatal(err)
	}
	proof := make(tlog.RecordProof, len(b.InclusionProof))
	for i, h := range b.InclusionProof {
		copy(proof[i][:], h)
	}
	if err := tlog.CheckRecord(proof, cp.size, cp.root, b.LogIndex, tlog.RecordHash(leaf)); err != nil {
		t.Fatalf("inclusion of %d in %d: %v", b.LogIndex, cp.size, err)
	}
	if b.PreviousCheckpoint != "" {
		if _, err := note.Open([]byte(b.PreviousCheckpoint), note.VerifierList(append([]note.Verifier{v}, extra...)...)); err != nil {
			t.Fatalf("the previous checkpoint: %v", err)
		}
		prev, err := parseCheckpoint([]byte(b.PreviousCheckpoint))
		if err != nil {
			t.Fatal(err)
		}
		if prev.size > b.LogIndex || prev.size >= cp.size {
			t.Errorf("previous checkpoint of size %d for index %d in %d", prev.size, b.LogIndex, cp.size)
		}
		tp := make(tlog.TreeProof, len(b.ConsistencyProof))
		for i, h := range b.ConsistencyProof {
			copy(tp[i][:], h)
		}
		if err := tlog.CheckTree(tp, cp.size, cp.root, prev.size, prev.root); err != nil {
			t.Fatalf("consistency %d -> %d: %v", prev.size, cp.size, err)
		}
	}
	return n
}
