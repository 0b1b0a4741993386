package logaudit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/transparency-dev/tessera/api/layout"
)

// Bounds on what the audit reads, so that a hostile or broken source cannot make it
// allocate without limit.
const (
	maxCheckpointSize = 1 << 20 // a signed note with cosignatures; Go's note allows 1 MB
	maxTileSize       = 256 * 32
	maxBundleSize     = 256 * (2 + 1<<16 - 1)
	// maxInFlight bounds the bytes of entry bundles read and not yet verified: sixteen
	// bundles at their largest, a few hundred of Probity's usual ones.
	maxInFlight = 16 * maxBundleSize
	maxKeysSize = 1 << 20 // keys.MaxDocumentSize
	// TileWidth is the width of a full tile and entry bundle (C2SP tlog-tiles).
	TileWidth = 256
)

// errNotFound is wrapped by source reads of a resource the source does not have (a
// missing file, HTTP 404): for a tile or an entry bundle the checkpoint needs, that is a
// finding about the log, not an I/O error.
var errNotFound = errors.New("not found")

// source reads the files of a tlog-tiles log and the site's key document. Paths are
// relative to the log's root (checkpoint, tile/0/000, tile/entries/000.p/5). Reads
// are bounded by limit; a resource larger than limit is an error. Implementations are
// safe for concurrent use.
type source interface {
	read(ctx context.Context, path string, limit int64) ([]byte, error)
	// keys returns the key document the site serves and where it came from, or
	// errNotFound (wrapped) when there is none to read.
	keys(ctx context.Context) ([]byte, string, error)
	// String names the source for reports.
	String() string
}

// dirSource reads a log directory (Tessera's POSIX layout).
type dirSource struct {
	root     string
	keysPath string // "" means none was given and none exists beside the log
	keysNote string
}

func newDirSource(root, keysFile string) (*dirSource, error) {
	fi, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("couldn't open log directory %q: %w", root, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("log source %q is neither a directory nor an http(s) URL", root)
	}
	s := &dirSource{root: root}
	switch {
	case keysFile != "":
		s.keysPath, s.keysNote = keysFile, "--keys "+keysFile
	default:
		// A data directory holds the log in DATA-DIR/log and the key directory in
		// DATA-DIR/keys.
		p := filepath.Join(filepath.Dir(filepath.Clean(root)), "keys", "keys.json")
		if _, err := os.Stat(p); err == nil {
			s.keysPath, s.keysNote = p, p+" (beside the log directory)"
		}
	}
	return s, nil
}

func (s *dirSource) String() string { return s.root }

func (s *dirSource) read(_ context.Context, path string, limit int64) ([]byte, error) {
	f, err := os.Open(filepath.Join(s.root, filepath.FromSlash(path)))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", path, errNotFound)
		}
		return nil, err
	}
	defer f.Close()
	return readLimited(f, path, limit)
}

func (s *dirSource) keys(context.Context) ([]byte, string, error) {
	if s.keysPath == "" {
		return nil, "", fmt.Errorf("no --keys and no keys/keys.json beside the log directory: %w", errNotFound)
	}
	f, err := os.Open(s.keysPath)
	if err != nil {
		return nil, "", fmt.Errorf("couldn't read key document: %w", err)
	}
	defer f.Close()
	b, err := readLimited(f, s.keysPath, maxKeysSize)
	return b, s.keysNote, err
}

// httpSource reads a Probity site: the log under SITE/log/, the key document at
// SITE/.well-known/probity-keys.json.
type httpSource struct {
	site     *url.URL // with a trailing slash
	client   *http.Client
	timeout  time.Duration
	keysFile string
}

// KeysPath is where a Probity site serves its key document.
const KeysPath = ".well-known/probity-keys.json"

func newHTTPSource(raw string, client *http.Client, timeout time.Duration, keysFile string) (*httpSource, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("log source %q is not an http(s) URL", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("log source %q has a query or fragment", raw)
	}
	// Accept the site or its /log/ directory.
	p := strings.TrimSuffix(u.Path, "/")
	p = strings.TrimSuffix(p, "/log")
	u.Path = p + "/"
	u.RawPath = ""
	if client == nil {
		client = &http.Client{Timeout: timeout}
	}
	return &httpSource{site: u, client: client, timeout: timeout, keysFile: keysFile}, nil
}

func (s *httpSource) String() string { return strings.TrimSuffix(s.site.String(), "/") }

func (s *httpSource) read(ctx context.Context, path string, limit int64) ([]byte, error) {
	return s.get(ctx, "log/"+path, limit)
}

func (s *httpSource) get(ctx context.Context, path string, limit int64) ([]byte, error) {
	u := s.site.JoinPath(path)
	if s.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("couldn't fetch %s: %w", u, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("%s: HTTP 404: %w", u, errNotFound)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("couldn't fetch %s: HTTP %d", u, resp.StatusCode)
	}
	if resp.ContentLength > limit {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d allowed", u, resp.ContentLength, limit)
	}
	return readLimited(resp.Body, u.String(), limit)
}

func (s *httpSource) keys(ctx context.Context) ([]byte, string, error) {
	if s.keysFile != "" {
		f, err := os.Open(s.keysFile)
		if err != nil {
			return nil, "", fmt.Errorf("couldn't read key document: %w", err)
		}
		defer f.Close()
		b, err := readLimited(f, s.keysFile, maxKeysSize)
		return b, "--keys " + s.keysFile, err
	}
	b, err := s.get(ctx, KeysPath, maxKeysSize)
	return b, s.site.JoinPath(KeysPath).String(), err
}

func readLimited(r io.Reader, name string, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("couldn't read %s: %w", name, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than the %d bytes allowed", name, limit)
	}
	return b, nil
}

// tilePath is the C2SP tlog-tiles path of the hash tile at level l, index n, width w
// (w < TileWidth: a partial tile), as Tessera's layout writes it.
func tilePath(l int, n int64, w int) string {
	return layout.TilePath(uint64(l), uint64(n), partialWidth(w))
}

// entriesPath is the path of entry bundle n of width w.
func entriesPath(n int64, w int) string { return layout.EntriesPath(uint64(n), partialWidth(w)) }

// partialWidth is layout's p of a resource of width w: w for a partial one, 0 for a full.
func partialWidth(w int) uint8 {
	if w > 0 && w < TileWidth {
		return uint8(w)
	}
	return 0
}

// readTile reads a tile or bundle of width w: the partial resource, or when that is gone
// (the log grew past the checkpoint and completed it), the full one. The caller cuts a
// full resource down to the width it needs.
func readTile(ctx context.Context, src source, path func(w int) string, w int, limit int64) ([]byte, error) {
	b, err := src.read(ctx, path(w), limit)
	if w < TileWidth && errors.Is(err, errNotFound) {
		b, err = src.read(ctx, path(TileWidth), limit)
	}
	return b, err
}
