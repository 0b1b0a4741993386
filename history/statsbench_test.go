package history_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/history/stats"
	"github.com/probity-dev/probity/store"
)

// BenchmarkStats200k measures `probity stats` end to end on PostgreSQL — reading
// 200,000 rounds of 6,000 entries, their surfaces and uptime, diffing every surface
// change, and computing every table — against the goal of 10 s. The database
// (probity_bench_stats_v1) is built once, which takes a few minutes, and reused by later
// runs:
//
//	PROBITY_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable \
//	  go test ./history -run X -bench Stats200k -benchtime 1x -count 3 -timeout 30m
func BenchmarkStats200k(b *testing.B) {
	base := os.Getenv("PROBITY_TEST_DATABASE_URL")
	if base == "" {
		b.Skip("PROBITY_TEST_DATABASE_URL not set")
	}
	const entries, perEntry = 6000, 34 // 204,000 rounds
	ctx := context.Background()
	dsn := benchStatsDatabase(b, base, "probity_bench_stats_v1")
	st, err := store.Open(ctx, store.Config{DatabaseURL: dsn, MaxConns: 16})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	end := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	if s, _ := st.Stats(ctx); s.Rounds < entries*perEntry {
		b.Logf("populating %d rounds …", entries*perEntry)
		populate(b, st, entries, perEntry, end)
	}
	var servers int
	for b.Loop() {
		opt := stats.Options{Now: end}
		ss, err := history.LoadStats(ctx, st, opt)
		if err != nil {
			b.Fatal(err)
		}
		rep := stats.Compute(ss, opt)
		if rep == nil || len(ss) != entries {
			b.Fatalf("%d servers", len(ss))
		}
		servers = len(ss)
		_ = rep.Markdown()
	}
	b.ReportMetric(float64(servers), "servers")
}

func benchStatsDatabase(b *testing.B, base, name string) string {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		b.Fatal(err)
	}
	if !exists {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
			b.Fatal(err)
		}
	}
	u, err := url.Parse(base)
	if err != nil {
		b.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// benchTools is server i's tool list in version v: 3 to 40 tools, some with dated
// descriptions, version v adding a tool and changing a description.
func benchTools(i, v int) []json.RawMessage {
	n := 3 + i%38
	var tools []json.RawMessage
	for k := range n {
		desc := fmt.Sprintf("Tool %d of server %d: reads things.", k, i)
		if k == 0 && v > 0 {
			desc += fmt.Sprintf(" Revised %d times.", v)
		}
		tools = append(tools, json.RawMessage(fmt.Sprintf(`{"name":"tool_%d","description":%q,"inputSchema":{"type":"object","properties":{"id":{"type":"string"},"n":{"type":"number"}},"required":["id"]},"annotations":{"readOnlyHint":true}}`, k, desc)))
	}
	for k := range v {
		tools = append(tools, json.RawMessage(fmt.Sprintf(`{"name":"added_%d","description":"Added later.","inputSchema":{"type":"object"}}`, k)))
	}
	return tools
}

func populate(b *testing.B, st store.Store, entries, perEntry int, end time.Time) {
	ctx := context.Background()
	var done atomic.Int64
	work := make(chan int)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := range work {
				e, _, err := st.AddEntry(ctx, store.NewEntry{SlugBase: "bench-" + strconv.Itoa(i), Kind: store.KindRemote,
					Locator: fmt.Sprintf("https://mcp%d.example.com/mcp", i), Source: "import"})
				if err != nil {
					b.Error(err)
					return
				}
				if i%500 == 0 {
					if err := claimEntry(ctx, st, e); err != nil {
						b.Error(err)
						return
					}
				}
				changes := 0
				if i%10 == 0 {
					changes = 1 + i%3 // a tenth of the servers change 1 to 3 times
				}
				for k := range perEntry {
					at := end.Add(-time.Duration(perEntry-k) * 12 * time.Hour)
					v := changes * k / perEntry
					tools := benchTools(i, v)
					fp, err := attest.ComputeFingerprints(tools, nil)
					if err != nil {
						b.Error(err)
						return
					}
					doc, _ := attest.SurfaceDocument(tools)
					uptime := store.UptimeAnswered
					if (i+k)%97 == 0 {
						uptime = store.UptimeNoAnswer
					}
					r := &store.Round{EntryID: e.ID, DueAt: at, Reason: store.ReasonCadence, RoundID: fmt.Sprintf("b%d-%d", i, k),
						StartedAt: at, FinishedAt: at.Add(time.Second), Coverage: "full", Uptime: uptime,
						ProtocolVersion: "2025-11-25", ServerName: "bench", ServerVersion: "1.0.0", ToolCount: len(tools), Pages: 1,
						Fingerprints: &fp, Surface: doc, Results: []byte(`[]`), Timings: []byte(`{}`),
						Envelope: []byte(`{"payload":"","payloadType":"application/vnd.in-toto+json","signatures":[]}`),
						KeyID:    "0000000000000000", PayloadDigest: fmt.Sprintf("%064x", i*1000+k)}
					if _, err := st.SaveRound(ctx, r); err != nil && !errors.Is(err, store.ErrRoundDone) {
						b.Error(err)
						return
					}
					if n := done.Add(1); n%20000 == 0 {
						b.Logf("%d rounds stored", n)
					}
				}
			}
		})
	}
	for i := range entries {
		work <- i
	}
	close(work)
	wg.Wait()
}
