package translog

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/probity-dev/probity/store"
)

// benchRecords is how many records BenchmarkAppend's ledger holds.
const benchRecords = 10_000

var benchTemplate = struct {
	once sync.Once
	dir  string
	err  error
}{}

// benchLedger returns the directory of a SQLite store holding benchRecords signed
// supply records (made once per process; copy it before use).
func benchLedger(b *testing.B) string {
	benchTemplate.once.Do(func() {
		dir, err := os.MkdirTemp("", "translog-bench")
		if err != nil {
			benchTemplate.err = err
			return
		}
		s, err := store.Open(context.Background(), store.Config{SQLitePath: filepath.Join(dir, "probity.db")})
		if err == nil {
			err = s.Migrate(context.Background())
		}
		if err != nil {
			benchTemplate.err = err
			return
		}
		w := newWriter(b, s)
		var e store.Entry
		for i := range benchRecords {
			if i%100 == 0 {
				if e, err = w.entry(context.Background(), "bench-"+itoa(i)); err != nil {
					break
				}
			}
			if err = w.supply(context.Background(), e); err != nil {
				break
			}
		}
		benchTemplate.err = err
		if cerr := s.Close(); err == nil {
			benchTemplate.err = cerr
		}
		benchTemplate.dir = dir
	})
	if benchTemplate.err != nil {
		b.Fatal(benchTemplate.err)
	}
	return benchTemplate.dir
}

func itoa(i int) string { return strconv.Itoa(i) }

// copyDir copies the files of src into dst.
func copyDir(b *testing.B, src, dst string) {
	ents, err := os.ReadDir(src)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range ents {
		in, err := os.Open(filepath.Join(src, e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		out, err := os.Create(filepath.Join(dst, e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			b.Fatal(err)
		}
		in.Close()
		out.Close()
	}
}

// BenchmarkAppend (issue 15: at least 2,000 records/s on two cores): a ledger of
// benchRecords signed records, none logged; the time from Open to Sync done (every
// record read from the store, made a leaf, integrated, marked logged, and a checkpoint
// covering them published and archived).
func BenchmarkAppend(b *testing.B) {
	tmpl := benchLedger(b)
	signer, _ := newLogKey(b)
	b.ResetTimer()
	var total time.Duration
	for range b.N {
		b.StopTimer()
		tmp := b.TempDir()
		copyDir(b, tmpl, tmp)
		s, err := store.Open(context.Background(), store.Config{SQLitePath: filepath.Join(tmp, "probity.db")})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		b.StartTimer()
		l, err := Open(context.Background(), Config{Dir: filepath.Join(tmp, "log"), Signer: signer, CheckpointInterval: MinCheckpointInterval}, s)
		if err != nil {
			b.Fatal(err)
		}
		n, err := l.Sync(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		total += time.Since(start)
		if n != benchRecords {
			b.Fatalf("Sync = %d, want %d", n, benchRecords)
		}
		l.Close(context.Background())
		s.Close()
	}
	b.ReportMetric(float64(benchRecords*b.N)/total.Seconds(), "records/s")
}
