package attest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"
)

func leafHash(leaf []byte) []byte {
	h := sha256.Sum256(append([]byte{0}, leaf...))
	return h[:]
}

// TestLeafWorkedExample rebuilds the log leaf worked example of the package
// documentation byte for byte.
func TestLeafWorkedExample(t *testing.T) {
	ex := buildWorkedExample(t)
	leaf, err := RecordLeaf(1, "probe", []byte(ex.envelope))
	if err != nil {
		t.Fatal(err)
	}
	header := "probity.dev/log-leaf/v1\nseq 1\nkind probe\nenvelope 1796\n"
	if len(ex.envelope) != 1796 || string(leaf) != header+ex.envelope || len(leaf) != 1851 {
		t.Fatalf("record leaf: %d bytes, header %q", len(leaf), leaf[:min(len(leaf), 60)])
	}
	h1 := leafHash(leaf)
	if got := hex.EncodeToString(h1); got != "0e82cb89797e331f20444dfa3f6ef5ce9f26d5b623bca07c6554ea69f913aef8" {
		t.Errorf("record leaf hash %s", got)
	}
	payloadSum := sha256.Sum256([]byte(ex.payload))
	doc, err := TombstoneDocument{
		DeletedAt: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), Entry: "example", Reason: "the operator removed the server",
		Removed: []RemovedRef{{Seq: 1, Kind: "probe", PayloadDigestHex: hex.EncodeToString(payloadSum[:])}},
	}.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	tomb, err := TombstoneLeaf(2, doc)
	if err != nil {
		t.Fatal(err)
	}
	wantTomb := "probity.dev/log-leaf/v1\nseq 2\nkind tombstone\ntombstone 228\n" +
		`{"deletedAt":"2026-12-01T10:00:00.000Z","entry":"example","reason":"the operator removed the server","removed":[{"kind":"probe","payloadDigest":"sha256:d6709818060ec01433c73eb48ac52102d36baa1955b9f9db2ebd9bbaa5c2db42","seq":1}]}`
	if string(tomb) != wantTomb {
		t.Errorf("tombstone leaf\n got %q\nwant %q", tomb, wantTomb)
	}
	h2 := leafHash(tomb)
	if got := hex.EncodeToString(h2); got != "3b513b513b807ab7c778d1d5918fe522dd17c1c78c15e500149c4d3c02ad3665" {
		t.Errorf("tombstone leaf hash %s", got)
	}
	root := sha256.Sum256(append(append([]byte{1}, h1...), h2...))
	if got := hex.EncodeToString(root[:]); got != "62dbe7e0435852c7a7455332e4856d0c0a894b5b63145d4beadb9432b8682553" {
		t.Errorf("root of the two leaves %s", got)
	}
	for _, l := range [][]byte{leaf, tomb} {
		p, err := ParseLeaf(l)
		if err != nil {
			t.Fatal(err)
		}
		again, err := p.Marshal()
		if err != nil || !bytes.Equal(again, l) {
			t.Errorf("re-encoded leaf differs: %v", err)
		}
	}
}

func TestRecordLeafDigestForm(t *testing.T) {
	env := []byte(`{"payloadType":"x","payload":"` + strings.Repeat("A", MaxLeafSize) + `","signatures":[]}`)
	leaf, err := RecordLeaf(7, "change", env)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(env)
	if want := "probity.dev/log-leaf/v1\nseq 7\nkind change\nenvelope-sha256 " + hex.EncodeToString(sum[:]) + "\n"; string(leaf) != want {
		t.Fatalf("got %q", leaf)
	}
	p, err := ParseLeaf(leaf)
	if err != nil || p.Body != LeafEnvelopeDigest || !p.EnvelopeMatches(env) || p.EnvelopeMatches(env[1:]) {
		t.Fatalf("parse: %+v %v", p, err)
	}
	// The largest envelope that is still inline, and one byte more.
	fits := MaxLeafSize - len("probity.dev/log-leaf/v1\nseq 7\nkind change\nenvelope 65480\n")
	for _, n := range []int{fits, fits + 1} {
		leaf, _ := RecordLeaf(7, "change", bytes.Repeat([]byte("x"), n))
		p, err := ParseLeaf(leaf)
		if err != nil {
			t.Fatal(err)
		}
		if inline := p.Body == LeafEnvelope; inline != (n == fits) || len(leaf) > MaxLeafSize {
			t.Errorf("envelope of %d bytes: body %s, leaf %d bytes", n, p.Body, len(leaf))
		}
	}
}

func TestParseLeafRejects(t *testing.T) {
	good := "probity.dev/log-leaf/v1\nseq 3\nkind probe\n"
	digest := strings.Repeat("ab", 32)
	for name, leaf := range map[string]string{
		"empty":                 "",
		"other format":          "probity.dev/log-leaf/v2\nseq 3\nkind probe\nenvelope 1\nx",
		"leading zero":          "probity.dev/log-leaf/v1\nseq 03\nkind probe\nenvelope 1\nx",
		"zero seq":              "probity.dev/log-leaf/v1\nseq 0\nkind probe\nenvelope 1\nx",
		"negative seq":          "probity.dev/log-leaf/v1\nseq -1\nkind probe\nenvelope 1\nx",
		"upper-case kind":       "probity.dev/log-leaf/v1\nseq 3\nkind Probe\nenvelope 1\nx",
		"length short":          good + "envelope 2\nx",
		"length long":           good + "envelope 1\nxy",
		"length leading zero":   good + "envelope 01\nx",
		"empty envelope":        good + "envelope 0\n",
		"upper-case digest":     good + "envelope-sha256 " + strings.ToUpper(digest) + "\n",
		"short digest":          good + "envelope-sha256 abab\n",
		"digest trailing":       good + "envelope-sha256 " + digest + "\nx",
		"digest no newline":     good + "envelope-sha256 " + digest,
		"tombstone envelope":    "probity.dev/log-leaf/v1\nseq 3\nkind tombstone\nenvelope 1\nx",
		"record tombstone body": good + "tombstone 1\nx",
		"removed bad":           good + "removed sha256 " + digest + "\n",
		"unknown body":          good + "blob 1\nx",
		"CRLF":                  "probity.dev/log-leaf/v1\r\nseq 3\nkind probe\nenvelope 1\nx",
	} {
		if _, err := ParseLeaf([]byte(leaf)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	for _, leaf := range []string{good + "envelope 1\nx", good + "envelope-sha256 " + digest + "\n", good + "removed payload-sha256 " + digest + "\n"} {
		if _, err := ParseLeaf([]byte(leaf)); err != nil {
			t.Errorf("%q: %v", leaf, err)
		}
	}
}

// TestTombstoneLeafDigestForm: a tombstone too large for a leaf (the deletion of an
// entry with hundreds of records) is logged by its SHA-256 instead of stopping the log.
func TestTombstoneLeafDigestForm(t *testing.T) {
	doc := TombstoneDocument{DeletedAt: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), Entry: "busy", Reason: "removed"}
	for i := range 800 {
		doc.Removed = append(doc.Removed, RemovedRef{Seq: int64(i + 1), Kind: "supply", PayloadDigestHex: strings.Repeat("ab", 32)})
	}
	body, err := doc.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := TombstoneLeaf(801, body)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	if want := "probity.dev/log-leaf/v1\nseq 801\nkind tombstone\ntombstone-sha256 " + hex.EncodeToString(sum[:]) + "\n"; string(leaf) != want {
		t.Fatalf("got %q", leaf)
	}
	p, err := ParseLeaf(leaf)
	if err != nil || p.Body != LeafTombstoneDigest || !bytes.Equal(p.Digest, sum[:]) {
		t.Fatalf("parse: %+v %v", p, err)
	}
	if again, err := p.Marshal(); err != nil || !bytes.Equal(again, leaf) {
		t.Errorf("re-encoded: %q %v", again, err)
	}
	// A record leaf cannot carry a tombstone digest, nor a tombstone an envelope digest.
	for _, bad := range []string{
		"probity.dev/log-leaf/v1\nseq 3\nkind probe\ntombstone-sha256 " + hex.EncodeToString(sum[:]) + "\n",
		"probity.dev/log-leaf/v1\nseq 3\nkind tombstone\nenvelope-sha256 " + hex.EncodeToString(sum[:]) + "\n",
	} {
		if _, err := ParseLeaf([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}
