package stats

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// benchServers generates n servers with about reads reads in all, deterministically:
// reads every 12 h (jittered) ending near the cut-off, a toolset change on about 2 %
// of reads and a description change on about 4 %, a latest round and 29 uptime days.
func benchServers(n, reads int) []Server {
	rng := rand.New(rand.NewPCG(1, 2))
	now := time.Date(2026, 10, 21, 23, 0, 0, 0, time.UTC)
	pool := make([]string, 80)
	for i := range pool {
		pool[i] = fmt.Sprintf("tool_%02d", i)
	}
	categories := []string{SignedFull, SignedFull, SignedAuthRequired, Unsigned}
	versions := []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28", "draft"}
	servers := make([]Server, n)
	for i := range servers {
		// Between 3 and 63 reads, pairs of servers summing to twice the mean.
		k := reads / n
		if i < reads%n {
			k++
		}
		if d := (i / 2) % 31; i%2 == 0 && i+1 < n {
			k += d
		} else if i%2 == 1 {
			k -= d
		}
		s := Server{ID: int64(i + 1), Claimed: i%1000 == 0, Paginated: i%997 == 0}
		tools := 1 + rng.IntN(40)
		surface := 0
		t := now.Add(-time.Duration(k) * 12 * time.Hour)
		for j := range k {
			t = t.Add(12*time.Hour + time.Duration(rng.IntN(144)-72)*time.Minute)
			var ch *Change
			switch x := rng.IntN(100); {
			case j > 0 && x < 2:
				if rng.IntN(2) == 0 && tools < len(pool) {
					tools++
					ch = &Change{ToolsAdded: true}
				} else if tools > 1 {
					tools--
					ch = &Change{ToolsRemoved: true, Breaking: true}
				}
			case j > 0 && x < 6:
				ch = &Change{DescriptionOnly: true}
			}
			if ch != nil {
				surface++
			}
			names := pool[:tools]
			s.Reads = append(s.Reads, Read{At: t, Toolset: strings.Join(names, ","), Names: names,
				Surface: fmt.Sprintf("%d/%d", i, surface), Change: ch})
		}
		cat := categories[rng.IntN(len(categories))]
		s.Latest = &Latest{At: now.Add(-time.Duration(rng.IntN(200)) * time.Hour), Category: cat,
			ProtocolVersion: versions[rng.IntN(len(versions))], HandshakeMethod: MethodInitialize, ProposedVersion: "2025-11-25"}
		if cat == Unsigned {
			s.Latest.UnsignedReason = NoHandshake
			s.Latest.ProtocolVersion = ""
		}
		day := time.Date(2026, 9, 22, 0, 0, 0, 0, time.UTC)
		for range 29 {
			st := Online
			if rng.IntN(50) == 0 {
				st = Offline
			}
			s.Days = append(s.Days, Day{Day: day.Format(dateLayout), Status: st})
			day = day.AddDate(0, 0, 1)
		}
		servers[i] = s
	}
	return servers
}

// BenchmarkCompute: 6,000 servers, 200,000 reads.
func BenchmarkCompute(b *testing.B) {
	servers := benchServers(6000, 200_000)
	total := 0
	for _, s := range servers {
		total += len(s.Reads)
	}
	if total != 200_000 {
		b.Fatalf("generated %d reads", total)
	}
	opt := Options{Now: time.Date(2026, 10, 21, 23, 0, 0, 0, time.UTC)}
	b.ReportAllocs()
	for b.Loop() {
		Compute(servers, opt)
	}
}

// BenchmarkMarkdown renders the benchmark report.
func BenchmarkMarkdown(b *testing.B) {
	r := Compute(benchServers(6000, 200_000), Options{Now: time.Date(2026, 10, 21, 23, 0, 0, 0, time.UTC)})
	for b.Loop() {
		_ = r.Markdown()
	}
}
