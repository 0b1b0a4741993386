package translog

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/probity-dev/probity/internal/ledgertest"
	"github.com/probity-dev/probity/store"
)

// crashChildEnv names the directory a child process of TestCrashSafety works in.
const crashChildEnv = "PROBITY_TRANSLOG_CRASH_CHILD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		os.Exit(crashChild(dir))
	}
	os.Exit(m.Run())
}

// crashChild is the process TestCrashSafety kills: it writes ledger records (supply
// runs, and now and then an entry's deletion, whose tombstone removes records logged
// or not) as fast as it can, and runs the log's appender on them, until it is killed.
func crashChild(dir string) int {
	ctx := context.Background()
	fail := func(what string, err error) int {
		fmt.Fprintf(os.Stderr, "crash child: %s: %v\n", what, err)
		return 3
	}
	skey, err := os.ReadFile(filepath.Join(dir, "log.key"))
	if err != nil {
		return fail("reading the log key", err)
	}
	signer, err := note.NewSigner(string(skey))
	if err != nil {
		return fail("the log key", err)
	}
	s, err := store.Open(ctx, store.Config{SQLitePath: filepath.Join(dir, "probity.db")})
	if err != nil {
		return fail("opening the store", err)
	}
	ls, err := ledgertest.NewSigner("translog")
	if err != nil {
		return fail("the record signer", err)
	}
	w := &writer{s: s, signer: ls}
	l, err := Open(ctx, Config{Dir: filepath.Join(dir, "log"), Signer: signer, CheckpointInterval: MinCheckpointInterval}, s)
	if err != nil {
		return fail("opening the log", err)
	}
	go func() {
		if err := l.Run(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "crash child: Run: %v\n", err)
			os.Exit(4)
		}
	}()
	fmt.Println("ready")
	prefix := fmt.Sprintf("c%d", os.Getpid())
	var prev string
	for i := 0; ; i++ {
		if i%40 == 0 {
			e, err := w.entry(ctx, fmt.Sprintf("%s-%d", prefix, i))
			if err != nil {
				return fail("adding an entry", err)
			}
			if prev != "" {
				if err := s.DeleteEntry(ctx, prev, "crash test"); err != nil {
					return fail("deleting an entry", err)
				}
			}
			prev = e.Slug
		}
		e, err := s.Entry(ctx, prev)
		if err != nil {
			return fail("reading the entry", err)
		}
		if err := w.supply(ctx, e); err != nil {
			return fail("storing a record", err)
		}
		l.Notify()
	}
}

// TestCrashSafety (issue 15): a process that writes ledger records and appends them is
// killed with SIGKILL at a random moment, 50-400 ms after it is up, 25 times; then a
// restart syncs. Every ledger number is in the log exactly once, in ledger order, with
// no gap, the tree is the checkpoint's, and every stored log index is seq-1.
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("kills 25 processes")
	}
	start := time.Now()
	dir := t.TempDir()
	skey, vkey, err := note.GenerateKey(rand.Reader, testOrigin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "log.key"), []byte(skey), 0o600); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, filepath.Join(dir, "probity.db")) // migrated once, for the children
	const kills = 25
	for range kills {
		killChild(t, dir, time.Duration(50+mrand.IntN(351))*time.Millisecond)
	}
	killed := time.Since(start)

	signer, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	verifier, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	l := mustOpen(t, Config{Dir: filepath.Join(dir, "log"), Signer: signer, CheckpointInterval: MinCheckpointInterval}, s)
	size := mustSync(t, l)
	if err := l.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	got := checkLogMatchesLedger(t, filepath.Join(dir, "log"), s, verifier)
	tombs, err := s.Tombstones(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	removed := 0
	for _, tb := range tombs {
		removed += len(tb.Removed)
	}
	t.Logf("%d kills in %v; the log holds %d leaves (%d tombstones listing %d removed records), all the ledger's, in order",
		kills, killed.Round(time.Millisecond), got, len(tombs), removed)
	if size != got || size < 100 {
		t.Errorf("Sync = %d, the log checked %d; want the same, and at least 100", size, got)
	}
	if d := time.Since(start); d > 60*time.Second {
		t.Errorf("the crash test took %v, more than 60 s", d)
	}
}

// killChild starts a child in dir, waits until it is up, lets it write and append for
// after, and kills it with SIGKILL; a child that stops by itself fails the test.
func killChild(t *testing.T, dir string, after time.Duration) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &limitedWriter{w: &stderr, n: 1 << 16}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(out).ReadString('\n')
		if err == nil && strings.TrimSpace(line) != "ready" {
			err = fmt.Errorf("child said %q", line)
		}
		ready <- err
		io.Copy(io.Discard, out)
	}()
	select {
	case err := <-ready:
		if err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("child not ready: %v\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child not ready in 20 s\n%s", stderr.String())
	}
	time.Sleep(after)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child ended by itself (%v) before it was killed:\n%s", err, stderr.String())
	}
}

// limitedWriter keeps the first n bytes written to it.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}
