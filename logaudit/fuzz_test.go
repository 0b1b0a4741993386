package logaudit

import (
	"encoding/binary"
	"testing"

	"github.com/probity-dev/probity/attest"
)

// FuzzSplitBundle: an entry bundle from the source never panics the parser, and what it
// accepts re-encodes to the same bytes.
func FuzzSplitBundle(f *testing.F) {
	f.Add([]byte{0, 1, 'a', 0, 2, 'b', 'c'}, 2)
	f.Add([]byte{0, 5, 'a'}, 1)
	f.Add([]byte{}, 0)
	f.Fuzz(func(t *testing.T, b []byte, want int) {
		if want < 0 || want > TileWidth {
			return
		}
		entries, err := splitBundle(b, want)
		if err != nil {
			return
		}
		var again []byte
		for _, e := range entries {
			again = binary.BigEndian.AppendUint16(again, uint16(len(e)))
			again = append(again, e...)
		}
		if len(entries) != want || string(again) != string(b) {
			t.Fatalf("%d entries re-encode to %x, not %x", len(entries), again, b)
		}
	})
}

// FuzzParseTombstone: a tombstone document from the log never panics the parser, and
// what it accepts is canonical.
func FuzzParseTombstone(f *testing.F) {
	doc, _ := attest.TombstoneDocument{Entry: "e", Reason: "r", Removed: []attest.RemovedRef{{Seq: 1, Kind: "probe", PayloadDigestHex: "d6709818060ec01433c73eb48ac52102d36baa1955b9f9db2ebd9bbaa5c2db42"}}}.Marshal()
	f.Add(doc)
	f.Add([]byte(`{"deletedAt":"2026-12-01T10:00:00.000Z","entry":"e","reason":"r","removed":[]}`))
	f.Add([]byte(`{"removed":[{}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := parseTombstone(b); err != nil {
			return
		}
		if c, err := attest.Canonicalize(b); err != nil || string(c) != string(b) {
			t.Fatalf("accepted a tombstone that is not canonical: %q", b)
		}
	})
}
