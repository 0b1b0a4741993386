package rounds

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/probity-dev/probity/checks/fixtures"
	"github.com/probity-dev/probity/checks/probe"
	"github.com/probity-dev/probity/keys/signing"
	"github.com/probity-dev/probity/store"
)

// BenchmarkRound measures one manual round over a fleet end to end (probe, check, sign,
// store) on each backend: each iteration is a whole round over PROBITY_BENCH_ENTRIES
// entries (default 10,000) served by a lite mcpfleet on loopback. Run it with
// -benchtime 1x (or 3x for a median):
//
//	go test ./rounds -run X -bench Round -benchtime 1x -timeout 30m
//
// It reports rounds/s and the bytes the store grew by per round. The PostgreSQL variant
// needs PROBITY_TEST_DATABASE_URL.
func BenchmarkRound(b *testing.B) {
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("PROBITY_BENCH_ENTRIES")); err == nil && v > 0 {
		n = v
	}
	fleet, err := fixtures.StartFleet(fixtures.FleetConfig{N: n, Seed: 77, Lite: true})
	if err != nil {
		b.Fatal(err)
	}
	defer fleet.Close()
	fleet.Warm()
	b.Run("sqlite", func(b *testing.B) {
		benchRound(b, fleet, store.Config{SQLitePath: filepath.Join(b.TempDir(), "probity.db")})
	})
	b.Run("postgres", func(b *testing.B) {
		base := os.Getenv("PROBITY_TEST_DATABASE_URL")
		if base == "" {
			b.Skip("PROBITY_TEST_DATABASE_URL not set")
		}
		benchRound(b, fleet, store.Config{DatabaseURL: benchDatabase(b, base), MaxConns: 32})
	})
}

func benchRound(b *testing.B, fleet *fixtures.Fleet, cfg store.Config) {
	ctx := context.Background()
	st, err := store.Open(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	keyDir := filepath.Join(b.TempDir(), "keys")
	if _, err := signing.GenerateDir(keyDir, "https://probity.test", time.Now().Add(-time.Minute), nil); err != nil {
		b.Fatal(err)
	}
	_, signer, err := signing.OpenDir(keyDir, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	for i, u := range fleet.URLs() {
		if _, _, err := st.AddEntry(ctx, store.NewEntry{SlugBase: fmt.Sprintf("s%05d", i), Kind: store.KindRemote, Locator: u, Source: "import"}); err != nil {
			b.Fatal(err)
		}
	}
	r, err := NewRunner(Config{Store: st, Prober: probe.New(probe.Config{Version: "bench", AllowLoopback: true}), Signer: signer, ToolVersion: "bench", Logger: testLogger()})
	if err != nil {
		b.Fatal(err)
	}
	// The first round stores every surface; later rounds find them stored already
	// (content-addressed), so bytes per round are reported for both.
	var rounds, later int
	var firstBytes, laterBytes int64
	for b.Loop() {
		before, _ := st.Stats(ctx)
		sum, err := r.RunAll(ctx, RunOptions{Concurrency: 64})
		if err != nil || !sum.Finished || sum.Failed != 0 {
			b.Fatalf("round: %+v, %v", sum, err)
		}
		b.StopTimer()
		after, _ := st.Stats(ctx)
		if rounds == 0 {
			firstBytes = (after.Bytes - before.Bytes) / int64(sum.Probed)
		} else {
			laterBytes += after.Bytes - before.Bytes
			later += sum.Probed
		}
		rounds += sum.Probed
		b.StartTimer()
	}
	b.ReportMetric(float64(rounds)/b.Elapsed().Seconds(), "rounds/s")
	b.ReportMetric(float64(firstBytes), "bytes/first-round")
	if later > 0 {
		b.ReportMetric(float64(laterBytes)/float64(later), "bytes/later-round")
	}
}

func benchDatabase(b *testing.B, base string) string {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	name := fmt.Sprintf("probity_bench_%x", rand.Uint64())
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), base)
		if err == nil {
			conn.Exec(context.Background(), "DROP DATABASE "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
			conn.Close(context.Background())
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		b.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}
