package logaudittest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/probity-dev/probity/internal/ledgertest"
	"github.com/probity-dev/probity/keys"
)

// cacheVersion names the cached logs' format: bump it when what CachedLog writes changes.
const cacheVersion = "v1"

// CachedOrigin is the origin of the logs CachedLog writes.
const CachedOrigin = "probity.bench/log"

// CachedWitnessTime is the timestamp of the cached logs' cosignature, after every record.
var CachedWitnessTime = time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)

// CachedLog returns a data directory (DATA/log, DATA/keys/keys.json) holding a log of n
// leaves — version 1 of the key document, then n-1 distinct signed probe, change and
// supply records — cosigned by the witness whose verifier key it returns. It is built
// once, in parallel, under os.TempDir() (probity-logaudit-N-VERSION) and reused by
// later runs: signing a large log takes longer than auditing it.
func CachedLog(n int64) (data, witnessKey string, err error) {
	w := NewWitness("witness.bench", "bench", CachedWitnessTime)
	data = filepath.Join(os.TempDir(), fmt.Sprintf("probity-logaudit-%d-%s", n, cacheVersion))
	if _, err := os.Stat(filepath.Join(data, "complete")); err == nil {
		return data, w.VKey, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", "", err
	}
	tmp, err := os.MkdirTemp(os.TempDir(), "probity-logaudit-build-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(tmp)
	if err := buildLog(tmp, n, w); err != nil {
		return "", "", err
	}
	os.RemoveAll(data)
	if err := os.Rename(tmp, data); err != nil {
		return "", "", err
	}
	return data, w.VKey, nil
}

func buildLog(data string, n int64, w *Witness) error {
	signer, vkey, err := LogKey(CachedOrigin, "bench")
	if err != nil {
		return err
	}
	v1, err := History("bench", CachedOrigin, vkey)
	if err != nil {
		return err
	}
	s, err := ledgertest.NewSigner("bench")
	if err != nil {
		return err
	}
	leaves := make([][]byte, n)
	if leaves[0], err = KeysLeaf(1, v1); err != nil {
		return err
	}
	const chunk = 4096
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for first := int64(2); first <= n; first += chunk {
		g.Go(func() error {
			recs, err := Records(context.Background(), s, first, min(chunk, n-first+1))
			copy(leaves[first-1:], recs)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if _, err := WriteLog(filepath.Join(data, "log"), leaves, signer, w); err != nil {
		return err
	}
	doc, err := keys.MarshalDocument(v1.Document)
	if err != nil {
		return err
	}
	if err := write(data, "keys/keys.json", doc); err != nil {
		return err
	}
	return write(data, "complete", nil)
}
