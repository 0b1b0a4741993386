package logaudit_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/logaudit"
)

// payloadDigest is the hex SHA-256 of the payload of the envelope in leaf.
func payloadDigest(t *testing.T, leaf []byte) (string, string) {
	t.Helper()
	l, err := attest.ParseLeaf(leaf)
	if err != nil {
		t.Fatal(err)
	}
	_, payload, err := attest.ParseEnvelope(l.Data)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(payload)
	return l.Kind, hex.EncodeToString(sum[:])
}

// tombstoneLog is the shared records with seq 40 logged as removed (its entry deleted
// before it was logged) and a tombstone at seq 601 naming it and the logged record of
// seq 10; change edits the tombstone's document first.
func tombstoneLog(t *testing.T, f *fixture, change func(*attest.TombstoneDocument)) [][]byte {
	t.Helper()
	l := append([][]byte{}, f.leaves...)
	kind10, d10 := payloadDigest(t, l[9])
	kind40, d40 := payloadDigest(t, l[39])
	removed, err := attest.RemovedLeaf(40, kind40, d40)
	if err != nil {
		t.Fatal(err)
	}
	l[39] = removed
	doc := attest.TombstoneDocument{DeletedAt: time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC), Entry: "weather", Reason: "the operator removed the server",
		Removed: []attest.RemovedRef{{Seq: 10, Kind: kind10, PayloadDigestHex: d10}, {Seq: 40, Kind: kind40, PayloadDigestHex: d40}}}
	if change != nil {
		change(&doc)
	}
	b, err := doc.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	tomb, err := attest.TombstoneLeaf(601, b)
	if err != nil {
		t.Fatal(err)
	}
	return append(l, tomb)
}

func TestTombstones(t *testing.T) {
	f := newFixture(t)
	f.write(tombstoneLog(t, f, nil))
	rep := f.audit(f.config())
	if !rep.OK() || rep.Counts["tombstone"] != 1 || rep.Counts["removed"] != 1 || len(rep.RemovedAwaitingTombstone) != 0 {
		t.Fatalf("ok %v counts %v awaiting %v failures %+v", rep.OK(), rep.Counts, rep.RemovedAwaitingTombstone, rep.Failures)
	}

	// The removed record before its tombstone is logged: not a failure, listed.
	f = newFixture(t)
	l := tombstoneLog(t, f, nil)
	f.write(l[:600])
	rep = f.audit(f.config())
	if !rep.OK() || len(rep.RemovedAwaitingTombstone) != 1 || rep.RemovedAwaitingTombstone[0] != 39 {
		t.Fatalf("ok %v awaiting %v failures %+v", rep.OK(), rep.RemovedAwaitingTombstone, rep.Failures)
	}

	cases := map[string]func(*attest.TombstoneDocument){
		"wrong digest of a logged record": func(d *attest.TombstoneDocument) { d.Removed[0].PayloadDigestHex = d.Removed[1].PayloadDigestHex },
		"wrong digest of a removed leaf":  func(d *attest.TombstoneDocument) { d.Removed[1].PayloadDigestHex = d.Removed[0].PayloadDigestHex },
		"wrong kind":                      func(d *attest.TombstoneDocument) { d.Removed[0].Kind = "keys" },
		"a later record":                  func(d *attest.TombstoneDocument) { d.Removed[1].Seq = 700 },
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			f.write(tombstoneLog(t, f, change))
			wantReason(t, f.audit(f.config()), logaudit.ReasonTombstoneMismatch, 600)
		})
	}
	t.Run("not canonical", func(t *testing.T) {
		f := newFixture(t)
		l := append([][]byte{}, f.leaves...)
		tomb, err := attest.TombstoneLeaf(601, []byte(`{"removed":[],"reason":"x","entry":"e","deletedAt":"2026-06-01T10:00:00.000Z"}`))
		if err != nil {
			t.Fatal(err)
		}
		f.write(append(l, tomb))
		wantReason(t, f.audit(f.config()), logaudit.ReasonTombstone, 600)
	})
}

// TestMalformedTombstones: the audit reads tombstone documents with attest's parser,
// the one "probity inspect" uses (verifier's TestDescribeTombstone reads the same
// cases): each malformed document of attest/testdata/tombstones.json, logged as a
// tombstone, is a tombstone_invalid failure at its index.
func TestMalformedTombstones(t *testing.T) {
	b, err := os.ReadFile("../attest/testdata/tombstones.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases struct {
		Malformed []struct {
			Why string `json:"why"`
			Doc string `json:"doc"`
		} `json:"malformed"`
	}
	if err := json.Unmarshal(b, &cases); err != nil || len(cases.Malformed) == 0 {
		t.Fatalf("the cases: %v", err)
	}
	f := newFixture(t)
	l := append([][]byte{}, f.leaves...)
	first := int64(len(l))
	for i, m := range cases.Malformed {
		leaf, err := attest.TombstoneLeaf(first+int64(i)+1, []byte(m.Doc))
		if err != nil {
			t.Fatalf("%s: %v", m.Why, err)
		}
		l = append(l, leaf)
	}
	f.write(l)
	rep := f.audit(f.config())
	invalid := map[int64]bool{}
	for _, fl := range rep.Failures {
		if fl.Reason == logaudit.ReasonTombstone {
			invalid[fl.Index] = true
		}
	}
	for i, m := range cases.Malformed {
		if !invalid[first+int64(i)] {
			t.Errorf("%s: no %s failure at index %d", m.Why, logaudit.ReasonTombstone, first+int64(i))
		}
	}
	if rep.Counts["tombstone"] != int64(len(cases.Malformed)) {
		t.Errorf("counted %d tombstones, want %d", rep.Counts["tombstone"], len(cases.Malformed))
	}
}
