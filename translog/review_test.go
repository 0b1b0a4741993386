package translog

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// TestOtherDirectoryRefused: a log directory that does not hold the tree the store
// archived (an empty one, as a process on another machine sharing the PostgreSQL
// database has, or a copy restored from before the last checkpoint) is refused with a
// *MismatchError: appending to it would publish a second log under the same origin
// and key, which a witness or an auditor sees as a fork.
func TestOtherDirectoryRefused(t *testing.T) {
	tmp := t.TempDir()
	s := openStore(t, filepath.Join(tmp, "probity.db"))
	w := newWriter(t, s)
	signer, _ := newLogKey(t)
	e := w.mustEntry(t, "acme")
	w.mustSupply(t, e, 3)
	cfg := Config{Dir: filepath.Join(tmp, "log"), Signer: signer, CheckpointInterval: MinCheckpointInterval}
	l := mustOpen(t, cfg, s)
	if n := mustSync(t, l); n != 3 {
		t.Fatalf("Sync = %d, want 3", n)
	}
	old := filepath.Join(tmp, "old")
	copyTree(t, cfg.Dir, old)
	w.mustSupply(t, e, 2)
	if n := mustSync(t, l); n != 5 {
		t.Fatalf("Sync = %d, want 5", n)
	}
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A copy of the same size whose hash tile differs: its last leaf is the ledger's, its
	// tree is not the archived one.
	forked := filepath.Join(tmp, "forked")
	copyTree(t, cfg.Dir, forked)
	tile := filepath.Join(forked, "tile/0/000.p/5")
	data, err := os.ReadFile(tile)
	if err != nil {
		t.Fatal(err)
	}
	data[0] ^= 1
	if err := os.WriteFile(tile, data, 0o644); err != nil {
		t.Fatal(err)
	}

	for name, dir := range map[string]string{"empty": filepath.Join(tmp, "other"), "older copy": old, "forked": forked} {
		c := cfg
		c.Dir = dir
		l, err := Open(context.Background(), c, s)
		if me := (*MismatchError)(nil); !errors.As(err, &me) {
			if l != nil {
				l.Close(context.Background())
			}
			t.Errorf("%s directory: Open = %v, want a *MismatchError", name, err)
		}
	}
	// The directory the store knows still opens.
	mustOpen(t, cfg, s)
}

// copyTree copies the regular files under src to dst (the lock file and .state too).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestWitnessResponseBounded: Tessera reads a witness's whole answer into memory (and
// quotes it in its errors); the client Open gives it cuts the body at
// maxWitnessResponse, so a broken or hostile witness cannot make it read megabytes.
func TestWitnessResponseBounded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := bytes.Repeat([]byte("x"), 1<<16)
		for range 64 { // 4 MB
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	resp, err := witnessClient(srv.Client()).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil || len(body) > maxWitnessResponse {
		t.Fatalf("read %d bytes, err %v; want an error after at most %d", len(body), err, maxWitnessResponse)
	}
	// Without a client, nothing leaves the process.
	if _, err := witnessClient(nil).Get(srv.URL); err == nil {
		t.Fatal("the client of a nil HTTPClient sent a request")
	}
}
