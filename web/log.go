package web

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/probity-dev/probity/store"
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
var logPath = regexp.MustCompile(`^(?:checkpoint|tile/(?:[0-9]|[1-5][0-9]|6[0-3]|entries)/(?:x[0-9]{3}/)*[0-9]{3}(?:\.p/(?:[1-9][0-9]?|1[0-9]{2}|2[0-4][0-9]|25[0-5]))?)$`)

// Cache lifetimes of the log's files: a tile, full or partial, never changes once
// written (a partial tile of width W always holds the same W hashes); the checkpoint
// moves with every integration, so it is cached briefly.
const (
	logTileCache       = "public, max-age=31536000, immutable"
	logCheckpointCache = "public, max-age=5"
	// maxLogFile bounds what is read of one file: a full tile is 8 KB, an entry bundle
	// of 256 leaves at most 256 × 64 KB.
	maxLogFile = 256 * (1<<16 + 2)
)

// logFile serves /log/NAME from the log's directory.
func (h *handlers) logFile(c *gin.Context) {
	name := strings.TrimPrefix(c.Param("path"), "/")
	if h.site.log == nil || !logPath.MatchString(name) {
		h.fail(c, errNotFound)
		return
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
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		h.fail(c, errNotFound)
		return
	}
	data, err := io.ReadAll(io.LimitReader(f, maxLogFile+1))
	if err != nil {
		h.fail(c, err)
		return
	}
	if len(data) > maxLogFile {
		h.fail(c, errors.New("log file larger than any tile"))
		return
	}
	if name == "checkpoint" {
		c.Header("Cache-Control", logCheckpointCache)
		c.Data(http.StatusOK, "text/plain; charset=utf-8", data)
		return
	}
	c.Header("Cache-Control", logTileCache)
	c.Data(http.StatusOK, "application/octet-stream", data)
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
	// The bundle names the earliest checkpoint that holds the record, which never
	// changes once published.
	c.Header("Cache-Control", "public, max-age=86400, immutable")
	c.Data(http.StatusOK, "application/json; charset=utf-8", b)
}
