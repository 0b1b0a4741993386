package translog

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"filippo.io/torchwood"
	"golang.org/x/crypto/ssh"
	"golang.org/x/mod/sumdb/note"
)

// The real witness: filippo.io/torchwood v0.6.1's litewitness (a tool of go.mod), which
// Probity did not write, on loopback. It keeps its key in an ssh-agent, so the test
// needs openssh-client: without ssh-agent, ssh-keygen and ssh-add it is skipped, and
// fails when CI=true.

const witnessName = "example.com/witness"

// needOpenSSH returns the paths of ssh-agent, ssh-keygen and ssh-add.
func needOpenSSH(t *testing.T) (agent, keygen, add string) {
	t.Helper()
	var paths []string
	for _, tool := range []string{"ssh-agent", "ssh-keygen", "ssh-add"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is missing (install openssh-client): the witness test must run in CI", tool)
			}
			t.Skipf("%s is missing (install openssh-client)", tool)
		}
		paths = append(paths, p)
	}
	return paths[0], paths[1], paths[2]
}

// pubOnly is a crypto.Signer of which only the public key is known: enough for
// torchwood's CosignatureVerifier.
type pubOnly struct{ pub ed25519.PublicKey }

func (p pubOnly) Public() crypto.PublicKey { return p.pub }
func (pubOnly) Sign(io.Reader, []byte, crypto.SignerOpts) ([]byte, error) {
	return nil, errors.New("public key only")
}

// freeAddr returns a loopback address nothing listens on (now).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// runCmd runs a command and fails the test with its output.
func runCmd(t *testing.T, env []string, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

// syncBuffer is a bytes.Buffer a process writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startBackground starts a command that runs until the test ends.
func startBackground(t *testing.T, out *syncBuffer, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
}

// waitFor waits until ok or 30 s.
func waitFor(t *testing.T, what string, out *syncBuffer, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !ok(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not up in 30 s\n%s", what, out.String())
		}
	}
}

// startLitewitness builds and starts litewitness on loopback with a key of its own in an
// ssh-agent, knowing the log of vkey (logVKey): what `witnessctl add-log` and `add-key`
// write, written directly (witnessctl needs sigsum-go, which go.sum does not hold). It
// returns the witness's URL and its cosignature verifier.
func startLitewitness(t *testing.T, logVKey string) (string, *torchwood.CosignatureVerifier) {
	t.Helper()
	agent, keygen, add := needOpenSSH(t)
	dir, err := os.MkdirTemp("", "lw") // short: a socket path is at most 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })

	bin := filepath.Join(dir, "litewitness")
	runCmd(t, nil, "go", "build", "-o", bin, "filippo.io/torchwood/cmd/litewitness")

	var agentOut syncBuffer
	sock := filepath.Join(dir, "agent.sock")
	startBackground(t, &agentOut, agent, "-D", "-a", sock)
	waitFor(t, "ssh-agent", &agentOut, func() bool { _, err := os.Stat(sock); return err == nil })
	key := filepath.Join(dir, "witness_key")
	runCmd(t, nil, keygen, "-q", "-t", "ed25519", "-N", "", "-C", "probity witness test", "-f", key)
	runCmd(t, []string{"SSH_AUTH_SOCK=" + sock}, add, key)
	pubLine, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey(pubLine)
	if err != nil {
		t.Fatal(err)
	}
	edPub := pub.(ssh.CryptoPublicKey).CryptoPublicKey().(ed25519.PublicKey)
	cs, err := torchwood.NewCosignatureSigner(witnessName, pubOnly{edPub})
	if err != nil {
		t.Fatal(err)
	}

	// The witness's database, with the log known (witnessctl add-log, add-key).
	db, err := sql.Open("sqlite", filepath.Join(dir, "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	empty := sha256.Sum256(nil)
	logVerifier, err := note.NewVerifier(logVKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`CREATE TABLE IF NOT EXISTS log (origin TEXT PRIMARY KEY, tree_size INTEGER NOT NULL, tree_hash TEXT NOT NULL)`, nil},
		{`CREATE TABLE IF NOT EXISTS key (origin TEXT NOT NULL, key TEXT NOT NULL, FOREIGN KEY(origin) REFERENCES log(origin))`, nil},
		{`INSERT INTO log (origin, tree_size, tree_hash) VALUES (?, 0, ?)`, []any{logVerifier.Name(), base64.StdEncoding.EncodeToString(empty[:])}},
		{`INSERT INTO key (origin, key) VALUES (?, ?)`, []any{logVerifier.Name(), logVKey}},
	} {
		if _, err := db.Exec(q.sql, q.args...); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}
	db.Close()

	var out syncBuffer
	addr := freeAddr(t)
	startBackground(t, &out, bin, "-name", witnessName, "-key", ssh.FingerprintSHA256(pub),
		"-ssh-agent", sock, "-db", filepath.Join(dir, "w.db"), "-listen", addr)
	waitFor(t, "litewitness", &out, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	if !strings.Contains(out.String(), cs.Verifier().String()) {
		t.Logf("litewitness did not log the verifier key %s:\n%s", cs.Verifier(), out.String())
	}
	return "http://" + addr, cs.Verifier()
}

// TestRealWitness (issue 15): with a policy naming a running litewitness, the published
// checkpoint carries a valid tlog-cosignature/v1 from it (checked with torchwood's
// CosignatureVerifier), and so do the bundles' checkpoints.
func TestRealWitness(t *testing.T) {
	tmp := t.TempDir()
	signer, logVerifier, logVKey := newLogKeyV(t)
	url, wv := startLitewitness(t, logVKey)

	s := openStore(t, filepath.Join(tmp, "probity.db"))
	w := newWriter(t, s)
	policy := fmt.Sprintf("witness w1 %s %s\nquorum w1\n", wv, url)
	dir := filepath.Join(tmp, "log")
	l := mustOpen(t, Config{Dir: dir, Signer: signer, CheckpointInterval: MinCheckpointInterval,
		WitnessPolicy: []byte(policy), WitnessTimeout: 5 * time.Second, HTTPClient: &http.Client{Timeout: 10 * time.Second}}, s)
	e := w.mustEntry(t, "acme")
	w.mustSupply(t, e, 5)
	if n := mustSync(t, l); n != 5 {
		t.Fatalf("Sync = %d", n)
	}
	w.mustSupply(t, e, 3)
	if n := mustSync(t, l); n != 8 {
		t.Fatalf("Sync = %d", n)
	}
	checkLogMatchesLedger(t, dir, s, logVerifier)

	cp, err := os.ReadFile(filepath.Join(dir, "checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	checkCosigned(t, cp, logVerifier, wv)
	latest, err := s.LatestCheckpoint(t.Context())
	if err != nil || latest == nil || !latest.Cosigned || latest.Size != 8 {
		t.Fatalf("LatestCheckpoint = %+v, %v; want a cosigned one of size 8", latest, err)
	}
	for _, r := range ledgerRecords(t, s) {
		b, err := Bundle(t.Context(), dir, s, r)
		if err != nil {
			t.Fatal(err)
		}
		checkCosigned(t, []byte(b.Checkpoint), logVerifier, wv)
		verifyBundle(t, b, logVerifier, wv)
	}
	t.Logf("published checkpoint, cosigned by litewitness:\n%s", cp)
}

// checkCosigned checks that cp is signed by the log and cosigned by the witness, with a
// timestamp of the last minute.
func checkCosigned(t *testing.T, cp []byte, logV note.Verifier, wv *torchwood.CosignatureVerifier) {
	t.Helper()
	n, err := note.Open(cp, note.VerifierList(logV, wv))
	if err != nil {
		t.Fatalf("checkpoint does not verify: %v\n%s", err, cp)
	}
	var cosig *note.Signature
	for i := range n.Sigs {
		if n.Sigs[i].Name == witnessName && n.Sigs[i].Hash == wv.KeyHash() {
			cosig = &n.Sigs[i]
		}
	}
	if cosig == nil {
		t.Fatalf("no verified cosignature from %s:\n%s", witnessName, cp)
	}
	ts, err := torchwood.CosignatureTimestamp(*cosig)
	if err != nil {
		t.Fatal(err)
	}
	if at := time.Unix(ts, 0); time.Since(at) > time.Minute || time.Until(at) > time.Minute {
		t.Errorf("cosignature timestamp %v is not now", at)
	}
}

// TestWitnessDown: a policy naming a witness that does not answer (a closed port) or
// never replies delays nothing but its own cosignature: checkpoints are published
// without it, within the witness timeout.
func TestWitnessDown(t *testing.T) {
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The body read, the server notices the client going away (HTTP/1.1).
		io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer hanging.Close()
	for name, url := range map[string]string{"closed port": "http://" + freeAddr(t), "no reply": hanging.URL} {
		t.Run(name, func(t *testing.T) {
			tmp := t.TempDir()
			signer, logVerifier := newLogKey(t)
			s := openStore(t, filepath.Join(tmp, "probity.db"))
			w := newWriter(t, s)
			wsigner, err := torchwood.NewCosignatureSigner(witnessName, pubOnly{make(ed25519.PublicKey, ed25519.PublicKeySize)})
			if err != nil {
				t.Fatal(err)
			}
			policy := fmt.Sprintf("witness down %s %s\nquorum down\n", wsigner.Verifier(), url)
			dir := filepath.Join(tmp, "log")
			start := time.Now()
			l := mustOpen(t, Config{Dir: dir, Signer: signer, CheckpointInterval: MinCheckpointInterval,
				WitnessPolicy: []byte(policy), WitnessTimeout: time.Second, HTTPClient: &http.Client{}}, s)
			w.mustSupply(t, w.mustEntry(t, "acme"), 4)
			if n := mustSync(t, l); n != 4 {
				t.Fatalf("Sync = %d", n)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("a witness that is down delayed the checkpoint %v", d)
			}
			checkLogMatchesLedger(t, dir, s, logVerifier)
			latest, err := s.LatestCheckpoint(t.Context())
			if err != nil || latest == nil || latest.Cosigned || latest.Size != 4 {
				t.Errorf("LatestCheckpoint = %+v, %v; want an uncosigned one of size 4", latest, err)
			}
		})
	}
}
