package signing

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/probity-dev/probity/keys"
)

// assertNoStaging fails if a ".keys-new-*" staging directory is left in parent.
func assertNoStaging(t *testing.T, parent string) {
	t.Helper()
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".keys-new-") {
			t.Errorf("leftover staging directory %s", e.Name())
		}
	}
}

func TestEnsureDirCreatesOnce(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "data")
	dir := filepath.Join(parent, "keys")
	d, err := EnsureDir(dir, "https://probity.dev", t0, seedReader(1))
	if err != nil || d == nil {
		t.Fatalf("EnsureDir = %v, %v; want a new document", d, err)
	}
	if len(d.Keys) != 1 || d.Issuer != "https://probity.dev" || !d.Keys[0].ValidFrom.Equal(t0) {
		t.Fatalf("document %+v", d)
	}
	for path, want := range map[string]os.FileMode{parent: 0o700, dir: 0o700, filepath.Join(dir, PrivateKeyFile): 0o600, filepath.Join(dir, keys.DocumentFile): 0o644} {
		if got := fileMode(t, path); got != want {
			t.Errorf("%s has mode %04o, want %04o", path, got, want)
		}
	}
	doc, signer, err := OpenDir(dir, t0)
	if err != nil || signer.ID() != d.Keys[0].KeyID || doc.Keys[0].KeyID != d.Keys[0].KeyID {
		t.Fatalf("OpenDir after EnsureDir: %v", err)
	}
	assertNoStaging(t, parent)
	assertNoTempFiles(t, dir)

	// A second start finds the directory and leaves it alone.
	again, err := EnsureDir(dir, "https://probity.dev", t1, seedReader(2))
	if err != nil || again != nil {
		t.Fatalf("second EnsureDir = %v, %v; want nil, nil", again, err)
	}
	if id := signingKeyID(t, dir); id != d.Keys[0].KeyID {
		t.Fatalf("the signing key changed to %s", id)
	}
}

// An existing directory, even an empty one or one that is not a key directory, is never
// touched: OpenDir reports what is wrong with it.
func TestEnsureDirLeavesExistingAlone(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if d, err := EnsureDir(dir, "https://probity.dev", t0, seedReader(1)); d != nil || err != nil {
		t.Fatalf("EnsureDir(existing) = %v, %v", d, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 || fileMode(t, dir) != 0o755 {
		t.Fatalf("existing directory changed: %v", entries)
	}
	if _, _, err := OpenDir(dir, t0); err == nil {
		t.Fatal("OpenDir of an empty directory succeeded")
	}
}

// Processes starting at the same moment all end up with one key directory holding the
// key of exactly one of them, and no staging directory is left behind.
func TestEnsureDirConcurrent(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "keys")
	const n = 8
	docs := make([]*keys.Document, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { docs[i], errs[i] = EnsureDir(dir, "https://probity.dev", t0, seedReader(byte(i+1))) })
	}
	wg.Wait()
	var winner *keys.Document
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("EnsureDir %d: %v", i, errs[i])
		}
		if docs[i] != nil {
			if winner != nil {
				t.Fatalf("two calls created the key directory")
			}
			winner = docs[i]
		}
	}
	if winner == nil {
		t.Fatal("no call reported creating the key directory")
	}
	_, signer, err := OpenDir(dir, t0)
	if err != nil || signer.ID() != winner.Keys[0].KeyID {
		t.Fatalf("OpenDir = %v; signing key is not the reported one", err)
	}
	assertNoStaging(t, parent)
}

// A staging directory left by a crash is neither used nor in the way, and a failed
// generation leaves neither a key directory nor a staging directory.
func TestEnsureDirAfterCrashAndFailure(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "keys")
	crashed := filepath.Join(parent, ".keys-new-crashed")
	if err := os.Mkdir(crashed, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(crashed, keys.DocumentFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := EnsureDir(dir, "bad\nissuer", t0, seedReader(1)); err == nil || !strings.Contains(err.Error(), "couldn't create a signing key") {
		t.Fatalf("EnsureDir with a bad issuer = %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("a failed EnsureDir left %s: %v", dir, err)
	}
	d, err := EnsureDir(dir, "https://probity.dev", t0, seedReader(1))
	if err != nil || d == nil {
		t.Fatalf("EnsureDir after a crash = %v, %v", d, err)
	}
	if _, _, err := OpenDir(dir, t0); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(parent)
	if len(entries) != 2 { // keys and the crashed staging directory, untouched
		t.Fatalf("parent holds %d entries, want 2", len(entries))
	}
}
