package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/transparency-dev/tessera/api/layout"

	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/verifier"
)

// Log is the transparency log as the site serves it: the log's directory, read-only, in
// the C2SP tlog-tiles layout, and each signed record's bundle (package translog builds
// both; the site only serves them).
type Log interface {
	// Open opens a file of the log's directory by its slash-separated name
	// ("checkpoint", "tile/0/x001/234", "tile/entries/005.p/17"). The site asks only
	// for names of the tlog-tiles layout (logPath).
	Open(name string) (fs.File, error)
	// Bundle returns the bundle (attest.Bundle, encoded) of the ledger record with
	// this sequence number. It returns an error wrapping store.ErrNotFound when there
	// is no such record, and one wrapping ErrNotLoggedYet when no published
	// checkpoint holds it yet.
	Bundle(ctx context.Context, seq int64) ([]byte, error)
}

// ErrNotLoggedYet is what Log.Bundle wraps for a record no published checkpoint holds
// yet: it will have a bundle within a checkpoint interval or two.
var ErrNotLoggedYet = errors.New("not in a published checkpoint yet")

// logPath matches the names tlog-tiles defines and nothing else: the checkpoint; a
// Merkle tile tile/L/N; an entry bundle tile/entries/N; each tile or bundle optionally
// partial (.p/W, W from 1 to 255). N is written in groups of three digits, each but
// the last prefixed with x. Tessera's own state (.state/) and lock files never match.
// The groups are the level (or "entries"), N and W.
var logPath = regexp.MustCompile(`^(?:checkpoint|tile/([0-9]|[1-5][0-9]|6[0-3]|entries)/((?:x[0-9]{3}/)*[0-9]{3})(?:\.p/([1-9][0-9]?|1[0-9]{2}|2[0-4][0-9]|25[0-5]))?)$`)

// Cache lifetimes of the log's files: a tile within the published checkpoint, full or
// partial, never changes (a partial tile of width W always holds the same W hashes);
// the checkpoint moves with every integration, so it is cached briefly.
const (
	logTileCache       = "public, max-age=31536000, immutable"
	logCheckpointCache = "public, max-age=5"
	// maxCheckpoint bounds what is read of the checkpoint to learn its size.
	maxCheckpoint = 64 << 10
)

// logFile serves /log/NAME from the log's directory: the checkpoint, and the tiles and
// entry bundles the published checkpoint covers. A tile beyond it is not served: the
// appender writes tiles before it publishes, and after a crash a tile beyond the
// published size can be written again with other leaves (a record deleted meanwhile
// becomes a removed record's leaf), so only what a signed checkpoint commits to is
// served, and cached for good.
func (h *handlers) logFile(c *gin.Context) {
	name := strings.TrimPrefix(c.Param("path"), "/")
	m := logPath.FindStringSubmatch(name)
	if h.site.log == nil || m == nil {
		h.fail(c, errNotFound)
		return
	}
	if name != "checkpoint" {
		size, err := h.site.publishedSize()
		if err != nil {
			h.fail(c, err)
			return
		}
		if !tileWithin(m[1], m[2], m[3], size) {
			h.fail(c, errNotFound)
			return
		}
	}
	f, err := h.site.log.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		h.fail(c, errNotFound)
		return
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	rs, seekable := f.(io.ReadSeeker)
	if err != nil || !st.Mode().IsRegular() || !seekable {
		h.fail(c, errNotFound)
		return
	}
	if name == "checkpoint" {
		c.Header("Cache-Control", logCheckpointCache)
		c.Header("Content-Type", "text/plain; charset=utf-8")
	} else {
		c.Header("Cache-Control", logTileCache)
		c.Header("Content-Type", "application/octet-stream")
	}
	// Streamed from the file (an entry bundle is up to 16 MB), with ranges and HEAD.
	http.ServeContent(c.Writer, c.Request, "", st.ModTime(), rs)
}

// publishedSize is the size of the log's published checkpoint (0 when none is yet).
func (s *site) publishedSize() (int64, error) {
	f, err := s.log.Open("checkpoint")
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	head, err := io.ReadAll(io.LimitReader(f, maxCheckpoint))
	if err != nil {
		return 0, err
	}
	// The note's body (C2SP tlog-checkpoint), then a blank line and the signatures.
	body, _, ok := strings.Cut(string(head), "\n\n")
	if !ok {
		return 0, errors.New("the log's checkpoint is not a signed note")
	}
	cp, err := verifier.ParseCheckpoint(body + "\n")
	if err != nil {
		return 0, fmt.Errorf("the log's checkpoint: %w", err)
	}
	return cp.Size, nil
}

// tileWithin reports whether the tile (level "0".."63" or "entries"; index in
// x-grouped digits; partial width "" for a full tile) covers only leaves below size.
func tileWithin(level, index, width string, size int64) bool {
	if width != "" {
		index += ".p/" + width
	}
	n, p, err := layout.ParseTileIndexPartial(index)
	if err != nil || n > 1<<48 {
		return false
	}
	w := uint64(layout.TileWidth)
	if p != 0 {
		w = uint64(p)
	}
	l := 0
	if level != "entries" {
		if l, err = strconv.Atoi(level); err != nil {
			return false
		}
	}
	// The tile holds entries n*256 … n*256+w-1 of its level; an entry of level l
	// stands for 256^l leaves. Compared without overflow: the end may not pass size.
	end := int64(n*layout.TileWidth + w)
	for range l {
		if end > size/layout.TileWidth+1 {
			return false
		}
		end *= layout.TileWidth
	}
	return end <= size
}

// bundle serves /bundle/SEQ.json: the record's envelope with its inclusion proof and
// the checkpoint it is proven against.
func (h *handlers) bundle(c *gin.Context) {
	text, ok := strings.CutSuffix(c.Param("file"), ".json")
	seq, err := strconv.ParseInt(text, 10, 64)
	if !ok || err != nil || seq < 1 || strconv.FormatInt(seq, 10) != text || h.site.log == nil {
		h.fail(c, errNotFound)
		return
	}
	h.serveBundle(c, seq)
}

func (h *handlers) serveBundle(c *gin.Context, seq int64) {
	b, err := h.site.log.Bundle(c.Request.Context(), seq)
	switch {
	case errors.Is(err, ErrNotLoggedYet):
		c.Header("Cache-Control", "no-store")
		c.Header("Retry-After", "60")
		h.problem(c, http.StatusNotFound, "This record is not in a published checkpoint yet. Try again in a minute.")
		return
	case errors.Is(err, store.ErrNotFound):
		h.fail(c, errNotFound)
		return
	case err != nil:
		h.fail(c, err)
		return
	}
	// The bundle names the earliest witnessed checkpoint that holds the record; one
	// proven against an unwitnessed checkpoint (the witnesses were down) gets a
	// witnessed one later, so bundles are cached for minutes, not for good.
	c.Header("Cache-Control", "public, max-age=300")
	c.Data(http.StatusOK, "application/json; charset=utf-8", b)
}
