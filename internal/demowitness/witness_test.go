package demowitness

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// memLog is a tlog tree in memory: its stored hashes.
type memLog struct{ hashes []tlog.Hash }

func (m *memLog) ReadHashes(idx []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(idx))
	for i, x := range idx {
		out[i] = m.hashes[x]
	}
	return out, nil
}

func (m *memLog) add(t *testing.T, n int) {
	for i := 0; i < n; i++ {
		h, err := tlog.StoredHashes(m.count(), []byte(fmt.Sprint("leaf", m.count())), m)
		if err != nil {
			t.Fatal(err)
		}
		m.hashes = append(m.hashes, h...)
	}
}

// count is the number of leaves.
func (m *memLog) count() int64 {
	var n int64
	for tlog.StoredHashCount(n) < int64(len(m.hashes)) {
		n++
	}
	return n
}

func (m *memLog) checkpoint(t *testing.T, s note.Signer, size int64) []byte {
	root, err := tlog.TreeHash(size, m)
	if err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprintf("%s\n%d\n%s\n", s.Name(), size, base64.StdEncoding.EncodeToString(root[:]))
	cp, err := note.Sign(&note.Note{Text: text}, s)
	if err != nil {
		t.Fatal(err)
	}
	return cp
}

func (m *memLog) proof(t *testing.T, old, size int64) string {
	if old == 0 {
		return ""
	}
	p, err := tlog.ProveTree(size, old, m)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, h := range p {
		b.WriteString(base64.StdEncoding.EncodeToString(h[:]) + "\n")
	}
	return b.String()
}

func post(t *testing.T, url, body string) (int, string) {
	resp, err := http.Post(url+"/add-checkpoint", "text/plain", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestAddCheckpoint(t *testing.T) {
	_, wkey, _ := ed25519.GenerateKey(rand.Reader)
	w, err := New("localhost/test-witness", wkey)
	if err != nil {
		t.Fatal(err)
	}
	skey, vkey, err := note.GenerateKey(rand.Reader, "example.com/log")
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := note.NewSigner(skey)
	if err := w.AddLog(vkey); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(w)
	defer srv.Close()
	var wv note.Verifier = w.signer.Verifier()
	if !strings.HasPrefix(w.VerifierKey(), "localhost/test-witness+") {
		t.Fatalf("vkey %q", w.VerifierKey())
	}
	logV, _ := note.NewVerifier(vkey)

	m := &memLog{}
	m.add(t, 5)
	cp5 := m.checkpoint(t, signer, 5)
	code, body := post(t, srv.URL, "old 0\n\n"+string(cp5))
	if code != http.StatusOK {
		t.Fatalf("first checkpoint: %d %s", code, body)
	}
	n, err := note.Open(append(cp5, body...), note.VerifierList(logV, wv))
	if err != nil || len(n.Sigs) != 2 {
		t.Fatalf("cosigned checkpoint does not verify: %v", err)
	}

	m.add(t, 4)
	cp9 := m.checkpoint(t, signer, 9)
	// A client that thinks the witness is at 0 is told its size.
	if code, body := post(t, srv.URL, "old 0\n\n"+string(cp9)); code != http.StatusConflict || strings.TrimSpace(body) != "5" {
		t.Fatalf("stale old size: %d %q", code, body)
	}
	// A wrong proof is refused.
	if code, _ := post(t, srv.URL, "old 5\n"+m.proof(t, 4, 9)+"\n"+string(cp9)); code != http.StatusUnprocessableEntity {
		t.Fatalf("wrong proof: %d", code)
	}
	if code, body := post(t, srv.URL, "old 5\n"+m.proof(t, 5, 9)+"\n"+string(cp9)); code != http.StatusOK {
		t.Fatalf("consistent checkpoint: %d %s", code, body)
	}
	// A forked tree of the same size is refused.
	fork := &memLog{}
	for i := 0; i < 9; i++ {
		h, _ := tlog.StoredHashes(int64(i), []byte(fmt.Sprint("other", i)), fork)
		fork.hashes = append(fork.hashes, h...)
	}
	if code, _ := post(t, srv.URL, "old 9\n\n"+string(fork.checkpoint(t, signer, 9))); code != http.StatusUnprocessableEntity {
		t.Fatalf("split view at the same size: %d", code)
	}
	// Unknown log, bad signature, malformed requests.
	otherS, _, _ := note.GenerateKey(rand.Reader, "other.example/log")
	otherSigner, _ := note.NewSigner(otherS)
	if code, _ := post(t, srv.URL, "old 0\n\n"+string(m.checkpoint(t, otherSigner, 9))); code != http.StatusNotFound {
		t.Fatalf("unknown log: %d", code)
	}
	impostorS, _, _ := note.GenerateKey(rand.Reader, "example.com/log")
	is, _ := note.NewSigner(impostorS)
	if code, _ := post(t, srv.URL, "old 9\n\n"+string(m.checkpoint(t, is, 9))); code != http.StatusForbidden {
		t.Fatalf("impostor: %d", code)
	}
	for _, bad := range []string{"", "old x\n\n", "old 01\n\n" + string(cp9), "old 5\nnot base64\n\n" + string(cp9), strings.Repeat("x", maxRequest+1)} {
		if code, _ := post(t, srv.URL, bad); code != http.StatusBadRequest {
			t.Errorf("%.20q: %d", bad, code)
		}
	}
	resp, _ := http.Get(srv.URL + "/add-checkpoint")
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", resp.StatusCode)
	}
}
