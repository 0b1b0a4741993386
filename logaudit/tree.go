package logaudit

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/mod/sumdb/tlog"
)

// rangeHasher accumulates RFC 6962 leaf hashes left to right and gives the root of the
// tree of those seen so far: the stack holds the roots of the perfect subtrees the leaves
// decompose into, largest first (a compact range).
type rangeHasher struct {
	n     int64
	stack []tlog.Hash
}

func (r *rangeHasher) add(h tlog.Hash) {
	r.stack = append(r.stack, h)
	// The subtree sizes follow the bits of n+1: merge while the lowest bits were set.
	for n := r.n; n&1 == 1; n >>= 1 {
		k := len(r.stack)
		r.stack[k-2] = tlog.NodeHash(r.stack[k-2], r.stack[k-1])
		r.stack = r.stack[:k-1]
	}
	r.n++
}

// root is the root hash of the tree of the n leaves added (RFC 6962: the largest
// subtree on the left, the rest on the right, recursively).
func (r *rangeHasher) root() tlog.Hash {
	if len(r.stack) == 0 {
		return emptyRoot
	}
	h := r.stack[len(r.stack)-1]
	for i := len(r.stack) - 2; i >= 0; i-- {
		h = tlog.NodeHash(r.stack[i], h)
	}
	return h
}

// emptyRoot is the root of the empty tree: SHA-256 of nothing.
var emptyRoot = tlog.Hash{0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24, 0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55}

// perfectRoot is the root of a perfect tree over hashes (len a power of two).
func perfectRoot(hashes []tlog.Hash) tlog.Hash {
	level := append([]tlog.Hash(nil), hashes...)
	for len(level) > 1 {
		for i := 0; i < len(level)/2; i++ {
			level[i] = tlog.NodeHash(level[2*i], level[2*i+1])
		}
		level = level[:len(level)/2]
	}
	return level[0]
}

// splitBundle cuts a tlog-tiles entry bundle into its entries: each a big-endian uint16
// length and that many bytes. want is the number of entries the resource must hold.
func splitBundle(b []byte, want int) ([][]byte, error) {
	out := make([][]byte, 0, want)
	for len(b) > 0 {
		if len(b) < 2 {
			return nil, fmt.Errorf("truncated length prefix after %d entries", len(out))
		}
		n := int(binary.BigEndian.Uint16(b))
		if len(b) < 2+n {
			return nil, fmt.Errorf("entry %d claims %d bytes, %d remain", len(out), n, len(b)-2)
		}
		if len(out) == want {
			return nil, fmt.Errorf("more than %d entries", want)
		}
		out = append(out, b[2:2+n:2+n])
		b = b[2+n:]
	}
	if len(out) != want {
		return nil, fmt.Errorf("%d entries, want %d", len(out), want)
	}
	return out, nil
}

// tileHashes cuts a hash tile into its hashes; want is the width of the resource.
func tileHashes(b []byte, want int) ([]tlog.Hash, error) {
	if len(b) != want*tlog.HashSize {
		return nil, fmt.Errorf("%d bytes, want %d hashes of 32", len(b), want)
	}
	out := make([]tlog.Hash, want)
	for i := range out {
		copy(out[i][:], b[i*tlog.HashSize:])
	}
	return out, nil
}
