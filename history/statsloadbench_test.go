package history_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/history/stats"
	"github.com/probity-dev/probity/store"
)

// BenchmarkLoadStatsSQLite measures LoadStats and Compute over 10,200 rounds of 300
// entries (BenchmarkStats200k's data at 1/20 the size) on the embedded store, built in a
// temporary directory first: a quick way to compare the loader's cost before and after
// a change without the 200k PostgreSQL database.
//
//	go test ./history -run X -bench LoadStatsSQLite -count 6
func BenchmarkLoadStatsSQLite(b *testing.B) {
	const entries, perEntry = 300, 34
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{SQLitePath: filepath.Join(b.TempDir(), "probity.db")})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	end := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	populate(b, st, entries, perEntry, end)
	for b.Loop() {
		opt := stats.Options{Now: end}
		ss, err := history.LoadStats(ctx, st, opt)
		if err != nil {
			b.Fatal(err)
		}
		if rep := stats.Compute(ss, opt); rep == nil || len(ss) != entries {
			b.Fatalf("%d servers", len(ss))
		}
	}
}
