package logaudit

import (
	"encoding/binary"
	"testing"
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
