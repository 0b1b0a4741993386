package logaudit_test

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/internal/ledgertest"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/keys/signing"
	"github.com/probity-dev/probity/logaudit"
	"github.com/probity-dev/probity/logaudit/logaudittest"
)

// keyLog is a log whose key document has three versions: records by key A before
// version 1 is logged (seq 1-5), version 1 (seq 6), records by A (7-20), version 2
// adding key B from 00:25 (seq 21), records by A (22-25) and B (26-30), version 3
// revoking A at 00:28 (seq 31), and a record by B (32). Records are dated seq minutes
// after 2026-06-01 00:00.
type keyLog struct {
	*fixture
	v1, v2, v3 *keys.Version
	a, b       *ledgertest.Signer
	revokedAt  time.Time
}

var base = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

func newKeyLog(t *testing.T) *keyLog {
	t.Helper()
	f := newFixture(t)
	k := &keyLog{fixture: f, revokedAt: base.Add(28 * time.Minute)}
	var err error
	if k.a, err = ledgertest.NewSigner("logaudit"); err != nil {
		t.Fatal(err)
	}
	if k.b, err = ledgertest.NewSigner("logaudit-b"); err != nil {
		t.Fatal(err)
	}
	k.v1 = version1
	// Version 2: rotated, key B valid from 00:25, signed by A (authorizing) and B.
	d2 := cloneDoc(k.v1.Document)
	kb, err := keys.NewKey(logaudittest.LedgerKey("logaudit-b").Public().(ed25519.PublicKey), base.Add(25*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	d2.Keys = append(d2.Keys, kb)
	if k.v2, err = signing.SignVersion(k.v1, d2, attest.KeysEventRotated, base.Add(21*time.Minute), logaudittest.LedgerKey("logaudit"), logaudittest.LedgerKey("logaudit-b")); err != nil {
		t.Fatal(err)
	}
	// Version 3: A revoked at 00:28, signed by B.
	d3 := cloneDoc(k.v2.Document)
	reason := "compromised"
	d3.Keys[0].RevokedAt, d3.Keys[0].RevocationReason = &k.revokedAt, &reason
	if k.v3, err = signing.SignVersion(k.v2, d3, attest.KeysEventRevoked, base.Add(31*time.Minute), logaudittest.LedgerKey("logaudit-b")); err != nil {
		t.Fatal(err)
	}
	k.write(k.leaves(t, nil))
	k.serve(t, k.v3.Document)
	return k
}

func cloneDoc(d *keys.Document) *keys.Document {
	b, err := keys.MarshalDocument(d)
	if err != nil {
		panic(err)
	}
	c, err := keys.Parse(b)
	if err != nil {
		panic(err)
	}
	return c
}

// leaves builds the log; signer picks who signs the record of seq (nil: the plan above).
func (k *keyLog) leaves(t *testing.T, signer func(seq int64) *ledgertest.Signer) [][]byte {
	t.Helper()
	var out [][]byte
	for seq := int64(1); seq <= 32; seq++ {
		var leaf []byte
		var err error
		switch seq {
		case 6:
			leaf, err = logaudittest.KeysLeaf(seq, k.v1)
		case 21:
			leaf, err = logaudittest.KeysLeaf(seq, k.v2)
		case 31:
			leaf, err = logaudittest.KeysLeaf(seq, k.v3)
		default:
			s := k.a
			if seq >= 26 {
				s = k.b
			}
			if signer != nil {
				s = signer(seq)
			}
			var recs [][]byte
			recs, err = logaudittest.Records(context.Background(), s, seq, 1)
			if err == nil {
				leaf = recs[0]
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, leaf)
	}
	return out
}

func (k *keyLog) serve(t *testing.T, d *keys.Document) {
	t.Helper()
	b, err := keys.MarshalDocument(d)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(k.keys, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestKeyHistory(t *testing.T) {
	k := newKeyLog(t)
	rep := k.audit(k.config())
	if !rep.OK() {
		t.Fatalf("failures: %+v", rep.Failures)
	}
	if rep.KeyVersions != 3 || rep.Verified != 32 {
		t.Errorf("key versions %d, verified %d", rep.KeyVersions, rep.Verified)
	}
	// The witness cosigned at 10:00:30, after A's revocation at 00:28: a first audit
	// cannot show A's 23 records were witnessed before it.
	if rep.RevokedUnproven != 23 {
		t.Errorf("revokedUnproven %d, want 23", rep.RevokedUnproven)
	}
}

func TestKeyHistoryTamper(t *testing.T) {
	t.Run("add a key to the key document without logging it", func(t *testing.T) {
		k := newKeyLog(t)
		d := cloneDoc(k.v3.Document)
		kc, err := keys.NewKey(logaudittest.LedgerKey("logaudit-c").Public().(ed25519.PublicKey), base.Add(40*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		d.Keys = append(d.Keys, kc)
		k.serve(t, d)
		wantReason(t, k.audit(k.config()), "key_document_not_logged", -1)
	})
	t.Run("serve an older version", func(t *testing.T) {
		k := newKeyLog(t)
		k.serve(t, k.v2.Document)
		wantReason(t, k.audit(k.config()), "key_document_stale", -1)
	})
	t.Run("a record by a key logged later", func(t *testing.T) {
		k := newKeyLog(t)
		k.write(k.leaves(t, func(seq int64) *ledgertest.Signer {
			if seq == 19 || seq >= 26 {
				return k.b
			}
			return k.a
		}))
		wantReason(t, k.audit(k.config()), "unknown_key", 18)
	})
	t.Run("a record by a revoked key after the revocation is logged", func(t *testing.T) {
		k := newKeyLog(t)
		k.write(k.leaves(t, func(seq int64) *ledgertest.Signer {
			if seq >= 26 && seq != 32 {
				return k.b
			}
			return k.a
		}))
		wantReason(t, k.audit(k.config()), "revoked_key", 31)
	})
	t.Run("drop a key document version", func(t *testing.T) {
		k := newKeyLog(t)
		l := k.leaves(t, nil)
		v3, _ := logaudittest.KeysLeaf(21, k.v3)
		l[20] = v3 // version 3 where version 2 was
		k.write(l)
		wantReason(t, k.audit(k.config()), "key_version_gap", 20)
	})
}

// TestRevocationAgainstSaved: a monitor that saved a checkpoint cosigned before the
// revocation places the revoked key's records: those it held stay valid, and one logged
// after a checkpoint cosigned at or after the revocation is logged_after_revocation.
func TestRevocationAgainstSaved(t *testing.T) {
	k := newKeyLog(t)
	all := k.leaves(t, nil)
	// Saved: the first 27 leaves, cosigned at 00:27:30, before A's revocation at 00:28.
	k.witness.Time = base.Add(27*time.Minute + 30*time.Second)
	k.write(all[:27])
	k.serve(t, k.v2.Document)
	if rep := k.audit(k.config()); !rep.OK() {
		t.Fatalf("first audit: %+v", rep.Failures)
	}
	k.witness.Time = base.Add(40 * time.Minute)
	k.write(all)
	k.serve(t, k.v3.Document)
	rep := k.audit(k.config())
	if !rep.OK() || rep.RevokedUnproven != 0 {
		t.Fatalf("ok %v revokedUnproven %d failures %+v", rep.OK(), rep.RevokedUnproven, rep.Failures)
	}

	// Saved at 00:29 (after R) holding 27 leaves; a record by A at seq 30, logged
	// after it, was witnessed only after the revocation.
	k2 := newKeyLog(t)
	all = k2.leaves(t, func(seq int64) *ledgertest.Signer {
		if seq >= 26 && seq != 30 {
			return k2.b
		}
		return k2.a
	})
	k2.witness.Time = base.Add(29 * time.Minute)
	k2.write(all[:27])
	k2.serve(t, k2.v2.Document)
	if rep := k2.audit(k2.config()); !rep.OK() {
		t.Fatalf("first audit: %+v", rep.Failures)
	}
	k2.witness.Time = base.Add(40 * time.Minute)
	k2.write(all)
	k2.serve(t, k2.v3.Document)
	wantReason(t, k2.audit(k2.config()), logaudit.Reason("logged_after_revocation"), 29)
}

// TestRevocationWithoutKeyDocument: a monitor given the log key but no key document
// (--log-key, nothing served) still applies the revocation rule, with the latest logged
// version: a record by A logged after a checkpoint cosigned after A's revocation is
// logged_after_revocation, as it is when the key document is served.
func TestRevocationWithoutKeyDocument(t *testing.T) {
	k := newKeyLog(t)
	all := k.leaves(t, func(seq int64) *ledgertest.Signer {
		if seq >= 26 && seq != 30 {
			return k.b
		}
		return k.a
	})
	if err := os.Remove(k.keys); err != nil {
		t.Fatal(err)
	}
	cfg := k.config()
	cfg.LogKey = k.vkey
	k.witness.Time = base.Add(29 * time.Minute)
	k.write(all[:27])
	if rep := k.audit(cfg); !rep.OK() {
		t.Fatalf("first audit: %+v", rep.Failures)
	}
	k.witness.Time = base.Add(40 * time.Minute)
	k.write(all)
	wantReason(t, k.audit(cfg), logaudit.Reason("logged_after_revocation"), 29)

	// A first audit cannot place A's records before the revocation: unproven, as with a
	// served key document.
	k2 := newKeyLog(t)
	if err := os.Remove(k2.keys); err != nil {
		t.Fatal(err)
	}
	cfg2 := k2.config()
	cfg2.LogKey = k2.vkey
	rep := k2.audit(cfg2)
	if !rep.OK() || rep.RevokedUnproven != 23 {
		t.Fatalf("ok %v revokedUnproven %d (want 23) failures %+v", rep.OK(), rep.RevokedUnproven, rep.Failures)
	}
}

// TestKeyVersionPostdated: a keys record is held to the cosignatures as any record is,
// with its issuedAt as its time: a version issued after the checkpoint holding it was
// witnessed is postdated.
func TestKeyVersionPostdated(t *testing.T) {
	k := newKeyLog(t)
	// Records dated up to 00:32; version 3 issued at 00:31. Witnessed at 00:31:00 the
	// records after seq 31 would be postdated too; check the keys record alone by
	// re-signing version 3 as issued at 00:45 and witnessing at 00:40.
	d3 := cloneDoc(k.v3.Document)
	v3, err := signing.SignVersion(k.v2, d3, attest.KeysEventRevoked, base.Add(45*time.Minute), logaudittest.LedgerKey("logaudit-b"))
	if err != nil {
		t.Fatal(err)
	}
	l := k.leaves(t, nil)
	if l[30], err = logaudittest.KeysLeaf(31, v3); err != nil {
		t.Fatal(err)
	}
	k.witness.Time = base.Add(40 * time.Minute)
	k.write(l)
	k.serve(t, v3.Document)
	wantReason(t, k.audit(k.config()), logaudit.ReasonRecordAfterWitness, 30)
}

// TestKeyVersionByDigest: a keys record always fits a leaf (64 keys at most), so one
// logged by digest only is a key document version hidden from the monitor.
func TestKeyVersionByDigest(t *testing.T) {
	k := newKeyLog(t)
	l := k.leaves(t, nil)
	leaf, err := attest.ParseLeaf(l[30])
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(leaf.Data)
	if l[30], err = (&attest.Leaf{Seq: 31, Kind: "keys", Body: attest.LeafEnvelopeDigest, Digest: sum[:]}).Marshal(); err != nil {
		t.Fatal(err)
	}
	k.write(l)
	k.serve(t, k.v2.Document)
	wantReason(t, k.audit(k.config()), logaudit.ReasonKeyHistory, 30)
}

// TestRereadBundleChanged: the envelopes before the first keys record, and those a
// tombstone names, are read a second time; a site that serves other entries then than
// the ones the tree was recomputed from must not have them verified in place of the
// logged ones.
func TestRereadBundleChanged(t *testing.T) {
	k := newKeyLog(t)
	good := k.leaves(t, nil)
	goodDir := t.TempDir()
	if _, err := logaudittest.WriteLog(goodDir, good, k.signer, k.witness); err != nil {
		t.Fatal(err)
	}
	// The log holds a record by B (not listed before version 2) at seq 3, before
	// version 1: verified under version 1, it is unknown_key.
	k.write(k.leaves(t, func(seq int64) *ledgertest.Signer {
		if seq == 3 || seq >= 26 {
			return k.b
		}
		return k.a
	}))
	var mu sync.Mutex
	reads := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/probity-keys.json" {
			http.ServeFile(w, r, k.keys)
			return
		}
		p, ok := strings.CutPrefix(r.URL.Path, "/log/")
		if !ok {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		reads[p]++
		n := reads[p]
		mu.Unlock()
		dir := k.logDir
		if strings.HasPrefix(p, "tile/entries/") && n > 1 {
			dir = goodDir // the second read: the good entries
		}
		http.ServeFile(w, r, filepath.Join(dir, filepath.FromSlash(p)))
	}))
	defer srv.Close()
	cfg := k.config()
	cfg.Source = srv.URL
	cfg.StateFile = ""
	rep := k.audit(cfg)
	if rep.OK() {
		t.Fatalf("the audit passed; reads %v", reads)
	}
	wantReason(t, rep, logaudit.ReasonEntriesChanged, 0)
}
