package translog

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/transparency-dev/tessera/api/layout"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/probity-dev/probity/verifier"
)

// Reading the log directory (the tlog-tiles layout), for proofs and checks. Tessera
// removes partial tiles and bundles once full ones replace them (garbage collection),
// so a partial one asked for is read from the full one, or a larger partial one: each
// is a prefix of the next.

// tileHeight is tlog-tiles' tile height: 2^8 = 256 hashes or entries a tile.
const tileHeight = 8

// readResource reads the tile or entry bundle at base (layout.TilePath or
// layout.EntriesPath of partial 0) holding at least w items: the partial one of width
// w, or the full one, or a larger partial one.
func readResource(dir, base string, w int) ([]byte, error) {
	var paths []string
	if w < layout.TileWidth {
		paths = append(paths, base+".p/"+strconv.Itoa(w))
	}
	paths = append(paths, base)
	for _, p := range paths {
		data, err := os.ReadFile(filepath.Join(dir, p))
		if err == nil {
			return data, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	// A larger partial one.
	ents, err := os.ReadDir(filepath.Join(dir, base+".p"))
	if err != nil {
		return nil, fmt.Errorf("%s of width %d: %w", base, w, fs.ErrNotExist)
	}
	best := 0
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil && n >= w && (best == 0 || n < best) {
			best = n
		}
	}
	if best == 0 {
		return nil, fmt.Errorf("%s of width %d: %w", base, w, fs.ErrNotExist)
	}
	return os.ReadFile(filepath.Join(dir, base+".p/"+strconv.Itoa(best)))
}

// tileReader reads the hash tiles of the log in dir for tlog.TileHashReader, which
// checks them against the tree's root.
type tileReader struct{ dir string }

func (r tileReader) Height() int { return tileHeight }

func (r tileReader) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		if t.H != tileHeight || t.L < 0 || t.W < 1 || t.W > layout.TileWidth {
			return nil, fmt.Errorf("tile %v is not a hash tile of this log", t)
		}
		data, err := readResource(r.dir, layout.TilePath(uint64(t.L), uint64(t.N), 0), t.W)
		if err != nil {
			return nil, err
		}
		if len(data) < t.W*tlog.HashSize {
			return nil, fmt.Errorf("tile %d/%d holds %d bytes, want %d", t.L, t.N, len(data), t.W*tlog.HashSize)
		}
		out[i] = data[:t.W*tlog.HashSize]
	}
	return out, nil
}

func (r tileReader) SaveTiles([]tlog.Tile, [][]byte) {}

// readBundle reads the first w leaves of entry bundle n.
func readBundle(dir string, n int64, w int) ([][]byte, error) {
	data, err := readResource(dir, layout.EntriesPath(uint64(n), 0), w)
	if err != nil {
		return nil, err
	}
	leaves := make([][]byte, 0, w)
	for len(leaves) < w {
		if len(data) < 2 {
			return nil, fmt.Errorf("entry bundle %d holds %d leaves, want %d", n, len(leaves), w)
		}
		l := int(binary.BigEndian.Uint16(data))
		if len(data) < 2+l {
			return nil, fmt.Errorf("entry bundle %d: leaf %d is cut short", n, len(leaves))
		}
		leaves = append(leaves, data[2:2+l])
		data = data[2+l:]
	}
	return leaves, nil
}

// readLeaf reads the leaf at index of a log of size.
func readLeaf(dir string, index, size int64) ([]byte, error) {
	if index < 0 || index >= size {
		return nil, fmt.Errorf("index %d is not in a log of %d leaves", index, size)
	}
	n := index / layout.EntryBundleWidth
	w := int(min(size-n*layout.EntryBundleWidth, layout.EntryBundleWidth))
	leaves, err := readBundle(dir, n, w)
	if err != nil {
		return nil, err
	}
	return leaves[index%layout.EntryBundleWidth], nil
}

// checkpoint is a parsed checkpoint note (C2SP tlog-checkpoint).
type checkpoint struct {
	origin string
	size   int64
	root   tlog.Hash
	sigs   []string // the signature lines, without "— "
}

// parseCheckpoint parses a checkpoint note's body and lists its signature lines; it
// does not verify them.
func parseCheckpoint(raw []byte) (checkpoint, error) {
	var cp checkpoint
	body, sigs, ok := bytes.Cut(raw, []byte("\n\n"))
	if !ok {
		return cp, errors.New("checkpoint: no signature block")
	}
	c, err := verifier.ParseCheckpoint(string(body) + "\n")
	if err != nil {
		return cp, err
	}
	cp.origin, cp.size, cp.root = c.Origin, c.Size, c.Hash
	for _, line := range strings.Split(strings.TrimSuffix(string(sigs), "\n"), "\n") {
		if s, ok := strings.CutPrefix(line, "— "); ok {
			cp.sigs = append(cp.sigs, s)
		}
	}
	return cp, nil
}

// cosignedBesides says whether the checkpoint carries a signature line not by signer
// (its name and key hash).
func (cp checkpoint) cosignedBesides(signer note.Signer) bool {
	var own [4]byte
	binary.BigEndian.PutUint32(own[:], signer.KeyHash())
	for _, s := range cp.sigs {
		name, b64, ok := strings.Cut(s, " ")
		sig, err := base64.StdEncoding.DecodeString(b64)
		if !ok || err != nil || len(sig) < 4 {
			continue // not a signature line at all
		}
		if name != signer.Name() || !bytes.Equal(sig[:4], own[:]) {
			return true
		}
	}
	return false
}
