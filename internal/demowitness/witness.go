// Package demowitness is a small C2SP tlog-witness (https://c2sp.org/tlog-witness) for
// the demo and for local trials: it serves POST /add-checkpoint, checks the log's
// signature and the consistency proof from the size it last cosigned, and answers with
// a tlog-cosignature/v1 line carrying its own timestamp.
//
// It is NOT a witness anyone should rely on. A witness is worth something because an
// independent party runs it; this one runs in the log's own process, keeps its state
// in memory and forgets it on restart, so it is labelled "built-in test witness"
// wherever it appears. Production deployments configure real witnesses (for example
// litewitness, or the public witness network) with a C2SP witness policy; the tests of
// package translog run litewitness itself.
package demowitness

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/probity-dev/probity/verifier"
)

// Label names this witness wherever it is shown.
const Label = "built-in test witness (not independent)"

// maxRequest bounds an add-checkpoint request: a checkpoint with its signatures and a
// consistency proof of at most 63 hashes is a few KB.
const maxRequest = 64 << 10

// Witness cosigns the checkpoints of the logs added to it.
type Witness struct {
	signer *torchwood.CosignatureSigner

	mu   sync.Mutex
	logs map[string]*logState // by origin
}

type logState struct {
	verifier note.Verifier
	size     int64
	root     tlog.Hash
}

// New returns a witness named name (a schema-less URL such as "localhost/witness")
// signing with key.
func New(name string, key ed25519.PrivateKey) (*Witness, error) {
	s, err := torchwood.NewCosignatureSigner(name, key)
	if err != nil {
		return nil, fmt.Errorf("demowitness: %w", err)
	}
	return &Witness{signer: s, logs: make(map[string]*logState)}, nil
}

// VerifierKey is the witness's verifier key (vkey), as a witness policy and a verifier
// name it.
func (w *Witness) VerifierKey() string { return w.signer.Verifier().String() }

// AddLog makes the witness cosign the log with this origin, whose checkpoints verify
// with vkey (a C2SP signed-note verifier key).
func (w *Witness) AddLog(vkey string) error {
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return fmt.Errorf("demowitness: log key: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.logs[v.Name()] = &logState{verifier: v}
	return nil
}

// ServeHTTP serves POST /add-checkpoint.
func (w *Witness) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/add-checkpoint" {
		http.NotFound(rw, r)
		return
	}
	if r.Method != http.MethodPost {
		rw.Header().Set("Allow", http.MethodPost)
		http.Error(rw, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequest+1))
	if err != nil || len(body) > maxRequest {
		http.Error(rw, "request too large or unreadable", http.StatusBadRequest)
		return
	}
	line, status, err := w.add(body)
	if err != nil {
		var conflict *conflictError
		if errors.As(err, &conflict) {
			rw.Header().Set("Content-Type", "text/x.tlog.size")
			rw.WriteHeader(http.StatusConflict)
			fmt.Fprintf(rw, "%d\n", conflict.size)
			return
		}
		http.Error(rw, err.Error(), status)
		return
	}
	rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
	rw.Write(line)
}

type conflictError struct{ size int64 }

func (e *conflictError) Error() string { return fmt.Sprintf("witness is at size %d", e.size) }

// add checks one request and returns the cosignature line, or the status and why not.
func (w *Witness) add(body []byte) ([]byte, int, error) {
	first, rest, ok := bytes.Cut(body, []byte("\n"))
	oldText, found := bytes.CutPrefix(first, []byte("old "))
	old, err := strconv.ParseInt(string(oldText), 10, 64)
	if !ok || !found || err != nil || old < 0 || strconv.FormatInt(old, 10) != string(oldText) {
		return nil, http.StatusBadRequest, errors.New(`first line is not "old N"`)
	}
	var proof tlog.TreeProof
	for {
		var l []byte
		if l, rest, ok = bytes.Cut(rest, []byte("\n")); !ok {
			return nil, http.StatusBadRequest, errors.New("no blank line before the checkpoint")
		}
		if len(l) == 0 {
			break
		}
		h, err := base64.StdEncoding.DecodeString(string(l))
		if err != nil || len(h) != tlog.HashSize || len(proof) == 63 {
			return nil, http.StatusBadRequest, errors.New("bad consistency proof line")
		}
		proof = append(proof, tlog.Hash(h))
	}
	origin, _, _ := strings.Cut(string(rest), "\n")
	w.mu.Lock()
	defer w.mu.Unlock()
	st, known := w.logs[origin]
	if !known {
		return nil, http.StatusNotFound, errors.New("unknown log")
	}
	n, err := note.Open(rest, note.VerifierList(st.verifier))
	if err != nil {
		return nil, http.StatusForbidden, errors.New("checkpoint is not signed by the log's key")
	}
	cp, err := verifier.ParseCheckpoint(n.Text)
	size, root := cp.Size, cp.Hash
	switch {
	case err != nil:
		return nil, http.StatusForbidden, err
	case old > size:
		return nil, http.StatusBadRequest, errors.New("old size is above the checkpoint's")
	case old != st.size:
		return nil, 0, &conflictError{size: st.size}
	case old == size && (len(proof) != 0 || (size > 0 && root != st.root)):
		return nil, http.StatusUnprocessableEntity, errors.New("same size, different tree")
	case old == 0 && len(proof) != 0:
		return nil, http.StatusUnprocessableEntity, errors.New("a proof from size 0")
	case old > 0 && old < size && tlog.CheckTree(proof, size, root, old, st.root) != nil:
		return nil, http.StatusUnprocessableEntity, errors.New("the consistency proof does not verify")
	}
	signed, err := note.Sign(&note.Note{Text: n.Text}, w.signer)
	if err != nil {
		return nil, http.StatusInternalServerError, errors.New("could not cosign")
	}
	st.size, st.root = size, root
	// note.Sign returns the text, a blank line, then the one signature line.
	return signed[len(n.Text)+1:], 0, nil
}
