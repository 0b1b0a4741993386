package translog

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/transparency-dev/tessera/api/layout"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/store"
)

func mustOpen(t testing.TB, cfg Config, s Store) *Log {
	t.Helper()
	l, err := Open(context.Background(), cfg, s)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { l.Close(context.Background()) })
	return l
}

func mustSync(t testing.TB, l *Log) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := l.Sync(ctx)
	if err != nil {
		t.Fatalf("Sync: %v", err)
	}
	return n
}

// ledgerRecords returns every record of the ledger.
func ledgerRecords(t testing.TB, s store.Store) []store.LedgerRecord {
	t.Helper()
	var out []store.LedgerRecord
	if err := s.Ledger(context.Background(), store.LedgerFilter{}, func(r store.LedgerRecord) error {
		out = append(out, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAppendFollowBundle: the records numbered before the log opens, the ones Run
// follows, tombstones and records removed before they were logged all become leaves
// of their number, in order; every logged record gets a bundle whose inclusion and
// consistency proofs verify with x/mod's tlog against the signed checkpoint.
func TestAppendFollowBundle(t *testing.T) {
	ctx := t.Context()
	tmp := t.TempDir()
	s := openStore(t, filepath.Join(tmp, "probity.db"))
	w := newWriter(t, s)
	signer, verifier := newLogKey(t)
	dir := filepath.Join(tmp, "log")

	a, gone := w.mustEntry(t, "acme"), w.mustEntry(t, "gone")
	w.mustSupply(t, a, 3)    // 1-3
	w.mustSupply(t, gone, 2) // 4-5
	w.mustSupply(t, a, 1)    // 6
	// gone's records go before they are logged: their leaves say "removed".
	if err := s.DeleteEntry(ctx, "gone", "removed by its operator"); err != nil { // 7
		t.Fatal(err)
	}
	if _, err := s.SaveKeyDocumentVersion(ctx, store.KeyDocumentVersion{Version: 1, IssuedAt: time.Now(),
		DocumentDigest: "sha256:x", Envelope: mustSupplyEnvelope(t, w), KeyID: w.signer.KeyID}); err != nil { // 8
		t.Fatal(err)
	}

	l := mustOpen(t, Config{Dir: dir, Signer: signer, CheckpointInterval: MinCheckpointInterval}, s)
	if n := mustSync(t, l); n != 8 {
		t.Fatalf("Sync = %d, want 8", n)
	}
	checkLogMatchesLedger(t, dir, s, verifier)
	var bodies []attest.LeafBody
	for i := range int64(8) {
		leaf, err := readLeaf(dir, i, 8)
		if err != nil {
			t.Fatal(err)
		}
		p, err := attest.ParseLeaf(leaf)
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, p.Body)
	}
	want := []attest.LeafBody{attest.LeafEnvelope, attest.LeafEnvelope, attest.LeafEnvelope, attest.LeafRemoved,
		attest.LeafRemoved, attest.LeafEnvelope, attest.LeafTombstone, attest.LeafEnvelope}
	for i := range want {
		if bodies[i] != want[i] {
			t.Errorf("leaf %d holds %q, want %q", i, bodies[i], want[i])
		}
	}

	// Run follows the ledger: new records, and the deletion of an entry whose records
	// are logged (a tombstone; the leaves logged stay).
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- l.Run(runCtx) }()
	b := w.mustEntry(t, "beta")
	for range 5 {
		w.mustSupply(t, b, 1) // 9-13
		l.Notify()
	}
	kept := w.mustEntry(t, "kept")
	deadline := time.Now().Add(10 * time.Second)
	for {
		recs := ledgerRecords(t, s)
		if last := recs[len(recs)-1]; last.Seq == 13 && last.LogIndex != nil {
			w.mustSupply(t, kept, 2) // 14-15, in a later checkpoint
			l.Notify()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Run did not log records 9-13 within 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := s.DeleteEntry(ctx, "beta", "removed"); err != nil { // 16
		t.Fatal(err)
	}
	l.Notify()
	if n := mustSync(t, l); n != 16 {
		t.Fatalf("Sync = %d, want 16", n)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkLogMatchesLedger(t, dir, s, verifier)
	if leaf, _ := readLeaf(dir, 9, 16); leaf == nil {
		t.Fatal("no leaf 9")
	} else if p, _ := attest.ParseLeaf(leaf); p.Body != attest.LeafEnvelope {
		t.Errorf("a record logged before its entry's deletion: leaf %q", p.Body)
	}

	// Bundles: every logged record's verifies; the later ones name a previous
	// checkpoint with a consistency proof. Tessera's garbage collection removes the
	// partial tiles of earlier sizes: the proofs against earlier checkpoints read the
	// larger ones.
	if removed := collectPartials(t, dir); removed == 0 {
		t.Error("no partial tile or bundle of an earlier size to remove")
	}
	withPrevious := 0
	for _, r := range ledgerRecords(t, s) {
		bundle, err := Bundle(ctx, dir, s, r)
		if err != nil {
			t.Fatalf("Bundle(%d): %v", r.Seq, err)
		}
		if bundle.LogIndex != r.Seq-1 || bundle.Kind != string(r.Kind) {
			t.Errorf("bundle of %d: index %d kind %q", r.Seq, bundle.LogIndex, bundle.Kind)
		}
		verifyBundle(t, bundle, verifier)
		if bundle.PreviousCheckpoint != "" {
			withPrevious++
		}
	}
	if withPrevious == 0 {
		t.Error("no bundle names a previous checkpoint")
	}
	// A record not logged has no bundle.
	unlogged := ledgerRecords(t, s)[0]
	unlogged.LogIndex = nil
	if _, err := Bundle(ctx, dir, s, unlogged); !errors.Is(err, ErrNotLogged) {
		t.Errorf("Bundle of an unlogged record = %v, want ErrNotLogged", err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Sync(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Sync after Close = %v", err)
	}
}

// mustSupplyEnvelope signs a supply statement (any signed envelope will do for a keys
// record in the store's eyes).
func mustSupplyEnvelope(t testing.TB, w *writer) []byte {
	t.Helper()
	rec, err := w.signer.Supply(context.Background(), "keys", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return rec.Envelope
}

// TestSecondAppenderRefused: while one Log holds the directory, a second Open gets
// ErrNotAppender; after Close, it opens.
func TestSecondAppenderRefused(t *testing.T) {
	tmp := t.TempDir()
	s := openStore(t, filepath.Join(tmp, "probity.db"))
	signer, _ := newLogKey(t)
	cfg := Config{Dir: filepath.Join(tmp, "log"), Signer: signer, CheckpointInterval: MinCheckpointInterval}
	l, err := Open(t.Context(), cfg, s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(t.Context(), cfg, s); !errors.Is(err, ErrNotAppender) {
		t.Fatalf("second Open = %v, want ErrNotAppender", err)
	}
	if err := l.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	l2 := mustOpen(t, cfg, s)
	mustSync(t, l2)
}

// TestTamperedLogRefused: a log whose last leaf is not the ledger's (altered on disk,
// or a ledger that lacks the number) is refused with a *MismatchError.
func TestTamperedLogRefused(t *testing.T) {
	tmp := t.TempDir()
	s := openStore(t, filepath.Join(tmp, "probity.db"))
	w := newWriter(t, s)
	signer, _ := newLogKey(t)
	dir := filepath.Join(tmp, "log")
	cfg := Config{Dir: dir, Signer: signer, CheckpointInterval: MinCheckpointInterval}
	w.mustSupply(t, w.mustEntry(t, "acme"), 3)
	l := mustOpen(t, cfg, s)
	mustSync(t, l)
	if err := l.Close(t.Context()); err != nil {
		t.Fatal(err)
	}

	// A ledger without the log's last number.
	other := openStore(t, filepath.Join(tmp, "other.db"))
	var me *MismatchError
	if _, err := Open(t.Context(), cfg, other); !errors.As(err, &me) || me.Index != 2 {
		t.Fatalf("Open with another ledger = %v, want a *MismatchError at 2", err)
	}

	// The last leaf altered in its entry bundle.
	bundle := filepath.Join(dir, layout.EntriesPath(0, 3))
	data, err := os.ReadFile(bundle)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-3] ^= 1
	if err := os.WriteFile(bundle, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(t.Context(), cfg, s); !errors.As(err, &me) || me.Index != 2 {
		t.Fatalf("Open of an altered log = %v, want a *MismatchError at 2", err)
	}
	// Nothing was appended meanwhile, and the lock is free again.
	data[len(data)-3] ^= 1
	if err := os.WriteFile(bundle, data, 0o644); err != nil {
		t.Fatal(err)
	}
	mustSync(t, mustOpen(t, cfg, s))
}

// TestConfigRefused: a configuration Open cannot work with is refused before anything
// is created.
func TestConfigRefused(t *testing.T) {
	tmp := t.TempDir()
	s := openStore(t, filepath.Join(tmp, "probity.db"))
	signer, _ := newLogKey(t)
	dir := filepath.Join(tmp, "log")
	for name, cfg := range map[string]Config{
		"no dir":         {Signer: signer},
		"no signer":      {Dir: dir},
		"short interval": {Dir: dir, Signer: signer, CheckpointInterval: time.Millisecond},
		"huge batch":     {Dir: dir, Signer: signer, BatchSize: 1 << 20},
		"policy, no client": {Dir: dir, Signer: signer,
			WitnessPolicy: []byte("quorum none\n")},
	} {
		if _, err := Open(t.Context(), cfg, s); err == nil {
			t.Errorf("%s: Open accepted", name)
		}
	}
	if _, err := os.Stat(dir); err == nil {
		t.Error("a refused Open created the log directory")
	}
}

// collectPartials removes every partial tile and entry bundle but the largest of each,
// as Tessera's garbage collection may, and returns how many it removed.
func collectPartials(t *testing.T, dir string) int {
	t.Helper()
	removed := 0
	err := filepath.WalkDir(filepath.Join(dir, "tile"), func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() || filepath.Ext(path) != ".p" {
			return err
		}
		ents, err := os.ReadDir(path)
		if err != nil {
			return err
		}
		largest := ""
		for _, e := range ents {
			if largest == "" || len(e.Name()) > len(largest) || (len(e.Name()) == len(largest) && e.Name() > largest) {
				largest = e.Name()
			}
		}
		for _, e := range ents {
			if e.Name() != largest {
				if err := os.Remove(filepath.Join(path, e.Name())); err != nil {
					return err
				}
				removed++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return removed
}
