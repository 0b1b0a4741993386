package verifier_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/verifier"
)

// testOrigin is the test log's origin and its checkpoint key's name.
const testOrigin = "probity.test/log"

// testLog is an in-memory RFC 6962 log of attest leaves, built with sumdb/tlog's tree
// hashing, with a checkpoint key and witnesses that cosign with fixed timestamps.
type testLog struct {
	origin string
	signer note.Signer
	vkey   string
	hashes []tlog.Hash // tlog's stored hashes
	leaves [][]byte
}

func newTestLog(tb testing.TB, origin, seedLabel string) *testLog {
	seed := sha256.Sum256([]byte("probity test log key: " + seedLabel))
	skey, vkey, err := note.GenerateKey(bytes.NewReader(seed[:]), origin)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := note.NewSigner(skey)
	if err != nil {
		tb.Fatal(err)
	}
	return &testLog{origin: origin, signer: s, vkey: vkey}
}

func (l *testLog) ReadHashes(idx []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(idx))
	for i, x := range idx {
		if x >= int64(len(l.hashes)) {
			return nil, fmt.Errorf("hash %d not stored", x)
		}
		out[i] = l.hashes[x]
	}
	return out, nil
}

func (l *testLog) size() int64 { return int64(len(l.leaves)) }

// addLeaf appends a leaf and returns its index.
func (l *testLog) addLeaf(tb testing.TB, leaf []byte) int64 {
	n := l.size()
	sh, err := tlog.StoredHashes(n, leaf, l)
	if err != nil {
		tb.Fatal(err)
	}
	l.hashes = append(l.hashes, sh...)
	l.leaves = append(l.leaves, leaf)
	return n
}

// addRecord appends a record's leaf, as the ledger's next sequence number.
func (l *testLog) addRecord(tb testing.TB, kind string, envelope []byte) int64 {
	leaf, err := attest.RecordLeaf(l.size()+1, kind, envelope)
	if err != nil {
		tb.Fatal(err)
	}
	return l.addLeaf(tb, leaf)
}

func (l *testLog) root(tb testing.TB, size int64) tlog.Hash {
	h, err := tlog.TreeHash(size, l)
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

func (l *testLog) body(tb testing.TB, size int64) string {
	h := l.root(tb, size)
	return fmt.Sprintf("%s\n%d\n%s\n", l.origin, size, base64.StdEncoding.EncodeToString(h[:]))
}

// checkpoint signs the tree head of size with the log key and then each cosigner.
func (l *testLog) checkpoint(tb testing.TB, size int64, cosigners ...note.Signer) string {
	return signNote(tb, l.body(tb, size), append([]note.Signer{l.signer}, cosigners...)...)
}

func signNote(tb testing.TB, body string, signers ...note.Signer) string {
	msg, err := note.Sign(&note.Note{Text: body}, signers...)
	if err != nil {
		tb.Fatal(err)
	}
	return string(msg)
}

func (l *testLog) inclusion(tb testing.TB, size, index int64) [][]byte {
	p, err := tlog.ProveRecord(size, index, l)
	if err != nil {
		tb.Fatal(err)
	}
	return toBytes(p)
}

func (l *testLog) consistency(tb testing.TB, size, older int64) [][]byte {
	p, err := tlog.ProveTree(size, older, l)
	if err != nil {
		tb.Fatal(err)
	}
	return toBytes(p)
}

func toBytes(p []tlog.Hash) [][]byte {
	out := make([][]byte, len(p))
	for i := range p {
		out[i] = bytes.Clone(p[i][:])
	}
	return out
}

// bundle builds the bundle of the record at index, proven against a checkpoint of size
// (cosigned by cosigners), with the previous checkpoint prev (nil: none).
func (l *testLog) bundle(tb testing.TB, index, size int64, checkpoint string, prev *prevCheckpoint) []byte {
	leaf, err := attest.ParseLeaf(l.leaves[index])
	if err != nil {
		tb.Fatal(err)
	}
	b := &attest.Bundle{LogIndex: index, Kind: leaf.Kind, Envelope: leaf.Data, InclusionProof: l.inclusion(tb, size, index), Checkpoint: checkpoint}
	if prev != nil {
		b.PreviousCheckpoint = prev.note
		b.ConsistencyProof = l.consistency(tb, size, prev.size)
	}
	out, err := b.Marshal()
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

type prevCheckpoint struct {
	note string
	size int64
}

// testWitness cosigns checkpoints (tlog-cosignature/v1) at a fixed time.
type testWitness struct {
	name string
	priv ed25519.PrivateKey
	at   time.Time
	hash uint32
}

func newTestWitness(name, seedLabel string) *testWitness {
	seed := sha256.Sum256([]byte("probity test witness key: " + seedLabel))
	w := &testWitness{name: name, priv: ed25519.NewKeyFromSeed(seed[:])}
	h := sha256.Sum256(append([]byte(name+"\n\x04"), w.pub()...))
	w.hash = binary.BigEndian.Uint32(h[:])
	return w
}

func (w *testWitness) pub() ed25519.PublicKey { return w.priv.Public().(ed25519.PublicKey) }

// vkey is the witness's verifier key: name+hash+base64(0x04 || public key).
func (w *testWitness) vkey() string {
	return fmt.Sprintf("%s+%08x+%s", w.name, w.hash, base64.StdEncoding.EncodeToString(append([]byte{0x04}, w.pub()...)))
}

// at returns a signer that cosigns at t.
func (w *testWitness) cosignAt(t time.Time) note.Signer { c := *w; c.at = t; return &c }

func (w *testWitness) Name() string    { return w.name }
func (w *testWitness) KeyHash() uint32 { return w.hash }
func (w *testWitness) Sign(msg []byte) ([]byte, error) {
	ts := w.at.Unix()
	sig := binary.BigEndian.AppendUint64(nil, uint64(ts))
	return append(sig, ed25519.Sign(w.priv, verifier.CosignedMessage(msg, ts))...), nil
}
