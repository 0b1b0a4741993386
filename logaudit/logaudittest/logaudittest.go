// Package logaudittest builds transparency logs for tests of the log audit: a
// tlog-tiles directory (checkpoint, hash tiles of every level, entry bundles, as
// Tessera's POSIX driver lays them out) from a list of leaves, signed by a log key
// derived from a public seed and cosigned by test witnesses with chosen timestamps.
// Nothing it signs is worth anything outside a test. Because it writes any leaves,
// tests use it to build logs an operator rewrote and re-signed (a dropped, reordered or
// duplicated record), beside tampering with the files themselves.
package logaudittest

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/transparency-dev/tessera/api/layout"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/internal/ledgertest"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/keys/signing"
)

// LogKey returns a log signer named origin whose key derives from seed, and its
// verifier key (a C2SP signed-note vkey).
func LogKey(origin, seed string) (note.Signer, string, error) {
	sum := sha256.Sum256([]byte("probity logaudittest log " + seed))
	skey, vkey, err := note.GenerateKey(&seedReader{b: sum[:]}, origin)
	if err != nil {
		return nil, "", err
	}
	s, err := note.NewSigner(skey)
	return s, vkey, err
}

// seedReader hands out its bytes once: note.GenerateKey reads a 32-byte seed.
type seedReader struct{ b []byte }

func (r *seedReader) Read(p []byte) (int, error) {
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

// Witness is a test witness: it cosigns checkpoints (C2SP tlog-cosignature/v1) with a
// fixed timestamp, Time.
type Witness struct {
	name string
	hash uint32
	priv ed25519.PrivateKey
	// VKey is the witness's verifier key, for Config.WitnessKeys.
	VKey string
	// Time is the timestamp its cosignatures carry.
	Time time.Time
}

// NewWitness returns the witness name whose key derives from seed.
func NewWitness(name, seed string, t time.Time) *Witness {
	sum := sha256.Sum256([]byte("probity logaudittest witness " + seed))
	priv := ed25519.NewKeyFromSeed(sum[:])
	key := append([]byte{0x04}, priv.Public().(ed25519.PublicKey)...)
	h := sha256.Sum256(append([]byte(name+"\n"), key...))
	w := &Witness{name: name, hash: binary.BigEndian.Uint32(h[:]), priv: priv, Time: t}
	w.VKey = fmt.Sprintf("%s+%08x+%s", name, w.hash, base64.StdEncoding.EncodeToString(key))
	return w
}

// Name implements note.Signer.
func (w *Witness) Name() string { return w.name }

// KeyHash implements note.Signer.
func (w *Witness) KeyHash() uint32 { return w.hash }

// Sign implements note.Signer: timestamp || Ed25519 signature over the cosigned message.
func (w *Witness) Sign(msg []byte) ([]byte, error) {
	t := uint64(w.Time.Unix())
	m := fmt.Appendf(nil, "cosignature/v1\ntime %d\n%s", t, msg)
	return append(binary.BigEndian.AppendUint64(nil, t), ed25519.Sign(w.priv, m)...), nil
}

// Checkpoint returns the checkpoint of a tree of size n with root hash root, signed by
// logKey (named origin) and cosigned by the witnesses.
func Checkpoint(logKey note.Signer, n int64, root tlog.Hash, witnesses ...*Witness) ([]byte, error) {
	signers := []note.Signer{logKey}
	for _, w := range witnesses {
		signers = append(signers, w)
	}
	text := fmt.Sprintf("%s\n%d\n%s\n", logKey.Name(), n, base64.StdEncoding.EncodeToString(root[:]))
	return note.Sign(&note.Note{Text: text}, signers...)
}

// WriteLog writes leaves as a tlog-tiles log in dir (created if needed): entry bundles
// and hash tiles of every level, full ones and a partial one at the end of each level,
// and the checkpoint of all the leaves. It returns the checkpoint.
func WriteLog(dir string, leaves [][]byte, logKey note.Signer, witnesses ...*Witness) ([]byte, error) {
	n := int64(len(leaves))
	level := make([]tlog.Hash, n)
	for i, l := range leaves {
		if len(l) > attest.MaxLeafSize {
			return nil, fmt.Errorf("leaf %d has %d bytes", i, len(l))
		}
		level[i] = tlog.RecordHash(l)
	}
	for b := int64(0); b*256 < n; b++ {
		end := min(n, (b+1)*256)
		var data []byte
		for _, l := range leaves[b*256 : end] {
			data = binary.BigEndian.AppendUint16(data, uint16(len(l)))
			data = append(data, l...)
		}
		if err := write(dir, layout.EntriesPath(uint64(b), uint8((end-b*256)%256)), data); err != nil {
			return nil, err
		}
	}
	// Tile level L holds the tree's nodes at height 8L.
	for l := 0; len(level) > 0; l++ {
		var next []tlog.Hash
		for t := int64(0); t*256 < int64(len(level)); t++ {
			end := min(int64(len(level)), (t+1)*256)
			part := level[t*256 : end]
			var data []byte
			for _, h := range part {
				data = append(data, h[:]...)
			}
			if err := write(dir, layout.TilePath(uint64(l), uint64(t), uint8(len(part)%256)), data); err != nil {
				return nil, err
			}
			if len(part) == 256 {
				next = append(next, perfect(part))
			}
		}
		level = next
	}
	root, err := Root(leaves)
	if err != nil {
		return nil, err
	}
	cp, err := Checkpoint(logKey, n, root, witnesses...)
	if err != nil {
		return nil, err
	}
	return cp, write(dir, "checkpoint", cp)
}

// Root returns the RFC 6962 root hash of the tree of leaves (of no leaves: SHA-256 of
// nothing, as Tessera's empty checkpoint has it).
func Root(leaves [][]byte) (tlog.Hash, error) {
	if len(leaves) == 0 {
		return sha256.Sum256(nil), nil
	}
	hashes := make([]tlog.Hash, len(leaves))
	for i, l := range leaves {
		hashes[i] = tlog.RecordHash(l)
	}
	return tlog.TreeHash(int64(len(leaves)), tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			out[i] = stored(hashes, x)
		}
		return out, nil
	}))
}

// stored computes the stored hash at index x (tlog.StoredHashIndex numbering) from the
// leaf hashes.
func stored(leaves []tlog.Hash, x int64) tlog.Hash {
	level, n := tlog.SplitStoredHashIndex(x)
	return perfect(leaves[n<<level : (n+1)<<level])
}

func perfect(hs []tlog.Hash) tlog.Hash {
	if len(hs) == 1 {
		return hs[0]
	}
	return tlog.NodeHash(perfect(hs[:len(hs)/2]), perfect(hs[len(hs)/2:]))
}

func write(dir, path string, data []byte) error {
	p := filepath.Join(dir, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}

// Records makes n leaves of signed records, seq 1 to n, cycling through probe, change
// and supply statements signed by s, each distinct, dated from 2026-06-01 on, a minute
// apart.
func Records(ctx context.Context, s *ledgertest.Signer, first, n int64) ([][]byte, error) {
	base := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	out := make([][]byte, 0, n)
	for seq := first; seq < first+n; seq++ {
		at := base.Add(time.Duration(seq) * time.Minute)
		var rec ledgertest.Record
		var err error
		kind := []string{"probe", "change", "supply"}[seq%3]
		switch kind {
		case "probe":
			rec, err = s.Probe(ctx, fmt.Sprintf("r-%08d", seq), at)
		case "change":
			rec, err = s.Change(ctx, fmt.Sprintf("entry-%d", seq%97), seq, at)
		default:
			rec, err = s.Supply(ctx, fmt.Sprintf("pkg-%d", seq%89), at)
		}
		if err != nil {
			return nil, err
		}
		leaf, err := attest.RecordLeaf(seq, kind, rec.Envelope)
		if err != nil {
			return nil, err
		}
		out = append(out, leaf)
	}
	return out, nil
}

// LedgerKey is the signing key of ledgertest.NewSigner(seed), which the records it signs
// verify under: its key document can then be given a signed history.
func LedgerKey(seed string) *signing.Signer {
	sum := sha256.Sum256([]byte("probity ledgertest " + seed))
	return signing.NewSigner(ed25519.NewKeyFromSeed(sum[:]))
}

// History is a signed key document history for the records of ledgertest.NewSigner(seed):
// version 1 (format 2, listing the log of origin with the verifier key logKey), signed
// by the ledger key and issued when the key's window opens, 2026-01-01.
func History(seed, origin, logKey string) (*keys.Version, error) {
	s, err := ledgertest.NewSigner(seed)
	if err != nil {
		return nil, err
	}
	d := *s.Doc
	d.FormatVersion = keys.FormatVersion
	d.Log = &keys.Log{Origin: origin, Key: logKey}
	return signing.SignVersion(nil, &d, attest.KeysEventGenerated, d.Keys[0].ValidFrom, LedgerKey(seed))
}

// KeysLeaf is the leaf of a key document version logged with sequence number seq.
func KeysLeaf(seq int64, v *keys.Version) ([]byte, error) {
	return attest.RecordLeaf(seq, "keys", v.Envelope)
}
