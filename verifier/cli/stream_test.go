package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/verifier"
)

// loadVectorKeys loads the key document of the known-answer vectors.
func loadVectorKeys(t testing.TB) *keys.Document {
	t.Helper()
	doc, err := keys.Load(vectors + keys.DocumentFile)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func verifyFile(t *testing.T, content []byte) (Summary, []Item) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	var items []Item
	sum, err := VerifyPaths(context.Background(), []string{path}, StreamConfig{
		Keys: loadVectorKeys(t), Policy: verifier.DefaultPolicy(), Emit: func(it Item) { items = append(items, it) },
	})
	if err != nil {
		t.Fatal(err)
	}
	return sum, items
}

// An over-long first line is reported, not skipped: junk ahead of a good envelope must
// not let the file pass.
func TestStreamOverlongFirstLine(t *testing.T) {
	good := vector(t, "good_full.json")
	for _, content := range [][]byte{
		append([]byte(strings.Repeat("x", MaxLineSize+10)+"\n"), good...),
		append([]byte(strings.Repeat("x", MaxLineSize+10)+"\n"), vector(t, "good_pretty_printed.json")...),
	} {
		sum, _ := verifyFile(t, content)
		if sum.Failed == 0 {
			t.Errorf("an over-long first line went unreported: %+v", sum)
		}
	}
}

// Cancelling from Emit ends VerifyPaths instead of hanging it.
func TestStreamCancelDoesNotHang(t *testing.T) {
	line := vector(t, "good_full.json")
	path := filepath.Join(t.TempDir(), "many.jsonl")
	os.WriteFile(path, bytes.Repeat(line, 3000), 0o644)
	for range 10 {
		ctx, cancel := context.WithCancel(context.Background())
		n := 0
		done := make(chan struct{})
		go func() {
			defer close(done)
			VerifyPaths(ctx, []string{path}, StreamConfig{Keys: loadVectorKeys(t), Policy: verifier.DefaultPolicy(), Workers: 1,
				Emit: func(Item) {
					if n++; n == 3 {
						cancel()
					}
				}})
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("VerifyPaths hung after its context was cancelled")
		}
		cancel()
	}
}

// Directory walks read regular files only: a symlink to /dev/zero must not hang them.
func TestStreamSkipsNonRegularFiles(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.json"), vector(t, "good_full.json"), 0o644)
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "z.json")); err != nil {
		t.Skip("no symlinks here")
	}
	sum, err := VerifyPaths(context.Background(), []string{dir}, StreamConfig{Keys: loadVectorKeys(t), Policy: verifier.DefaultPolicy()})
	if err != nil || sum.Total != 1 || sum.Verified != 1 {
		t.Errorf("%+v %v", sum, err)
	}
}
