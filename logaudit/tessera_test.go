package logaudit_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/transparency-dev/tessera"
	"github.com/transparency-dev/tessera/storage/posix"
)

// TestTesseraLog audits a log that Tessera v1.0.4's POSIX driver wrote, as the service
// does: its layout, partial tiles and entry bundles and checkpoint are what the audit
// reads. Two batches, so the first partial bundle is later completed.
func TestTesseraLog(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Tessera log")
	}
	f := newFixture(t)
	dir := filepath.Join(t.TempDir(), "log")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	add := func(first uint64, leaves [][]byte) {
		driver, err := posix.New(ctx, posix.Config{Path: dir})
		if err != nil {
			t.Fatal(err)
		}
		opts := tessera.NewAppendOptions().
			WithCheckpointSigner(f.signer).
			WithBatching(uint(len(leaves)), 50*time.Millisecond).
			WithCheckpointInterval(100 * time.Millisecond)
		app, shutdown, reader, err := tessera.NewAppender(ctx, driver, opts)
		if err != nil {
			t.Fatal(err)
		}
		await := tessera.NewPublicationAwaiter(ctx, reader.ReadCheckpoint, 50*time.Millisecond)
		var futures []tessera.IndexFuture
		for _, l := range leaves {
			futures = append(futures, app.Add(ctx, tessera.NewEntry(l)))
		}
		for i, fu := range futures {
			idx, _, err := await.Await(ctx, fu)
			if err != nil {
				t.Fatal(err)
			}
			if idx.Index != first+uint64(i) {
				t.Fatalf("leaf %d got index %d", i, idx.Index)
			}
		}
		if err := shutdown(ctx); err != nil {
			t.Fatal(err)
		}
	}
	add(0, f.leaves[:300])
	add(300, f.leaves[300:])
	os.RemoveAll(f.logDir)
	if err := os.Rename(dir, f.logDir); err != nil {
		t.Fatal(err)
	}
	cfg := f.config()
	cfg.WitnessKeys, cfg.MinWitnesses = nil, 0 // Tessera here has no witnesses
	rep := f.audit(cfg)
	if !rep.OK() || rep.Size != 600 || rep.Verified != 600 {
		t.Fatalf("ok %v size %d verified %d failures %+v", rep.OK(), rep.Size, rep.Verified, rep.Failures)
	}
}
