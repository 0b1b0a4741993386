package probe_test

import (
	"context"
	"log/slog"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/probity-dev/probity/checks"
	"github.com/probity-dev/probity/checks/fixtures"
	"github.com/probity-dev/probity/checks/probe"
)

// The memory of a probe against the hostile corpus (fixtures.Hostile): gzip bombs,
// endless and redirected huge bodies, nine 3 MB pages, flooding event streams. A probe
// may read what its caps allow (4 MiB a response, 32 MiB in all, by default); it must
// not hold much more than that, nor copy it again and again:
//
//	go test ./checks/probe -run '^$' -bench HostileProbeMemory -benchtime 1x -count 5

// readLog captures the bytes_read attribute of the probe's log line: of the last
// probe, and summed over every probe.
type readLog struct {
	read, total atomic.Int64
}

func (h *readLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *readLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *readLog) WithGroup(string) slog.Handler            { return h }
func (h *readLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "probe" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "bytes_read" {
			h.read.Store(a.Value.Int64())
			h.total.Add(a.Value.Int64())
			return false
		}
		return true
	})
	return nil
}

// probeMemory is what one probe of a hostile fixture cost.
type probeMemory struct {
	read     int64  // body bytes the probe read, decompressed: what its caps let it read
	peak     uint64 // the highest heap in use (live and not yet collected) over the baseline
	retained uint64 // the heap the observation holds after the probe, over the baseline
	obs      *checks.Observation
}

// heapBytes is the heap of allocated objects, garbage not yet collected included.
func heapBytes() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// sampleHeap samples heapBytes every millisecond until the function it returns is
// called; that function stops the sampling and returns the highest heap seen.
func sampleHeap() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			if h := heapBytes(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak.Load()
	}
}

// measureHostile starts f, probes it once while sampling the heap every millisecond,
// and measures what the observation retains. gcPercent, when positive, is the GOGC the
// probe runs with (a small value collects almost continuously, so the peak is close to
// the peak of live memory). The fixture's servers run in this process but stream
// their bodies from small shared buffers; they are started, and their shared buffers
// built, before the baseline.
func measureHostile(tb testing.TB, f fixtures.Fixture, gcPercent int) probeMemory {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inst, err := f.Start(ctx)
	if err != nil {
		tb.Fatalf("%s: Start: %v", f.Name, err)
	}
	defer inst.Close()
	log := &readLog{}
	p := probe.New(f.ProbeConfig(inst, probe.Config{Version: "bench", Logger: slog.New(log)}))
	// Warm up the fixture (its shared buffers) and the runtime with one probe.
	if _, err := p.Probe(ctx, inst.URL); err != nil {
		tb.Fatalf("%s: Probe: %v", f.Name, err)
	}
	runtime.GC()
	runtime.GC()
	base := heapBytes()
	if gcPercent > 0 {
		defer debug.SetGCPercent(debug.SetGCPercent(gcPercent))
	}
	stop := sampleHeap()
	obs, err := p.Probe(ctx, inst.URL)
	peak := max(stop(), heapBytes())
	if err != nil {
		tb.Fatalf("%s: Probe: %v", f.Name, err)
	}
	runtime.GC()
	held := heapBytes()
	m := probeMemory{read: log.read.Load(), obs: obs}
	m.peak = peak - min(base, peak)
	m.retained = held - min(base, held)
	runtime.KeepAlive(obs)
	return m
}

// BenchmarkHostileProbeMemory reports, for each fixture of the hostile corpus alone:
// read_MiB, the body bytes the probe read, which are what its caps allowed it to read;
// peak_MiB, the peak heap of the probe over the baseline at the default GOGC (garbage
// not yet collected included); live_MiB, the same with GOGC=5, close to the peak of
// live memory; retained_MiB, what the observation holds afterwards; x_read and
// x_read_live, the peaks over read_MiB.
func BenchmarkHostileProbeMemory(b *testing.B) {
	for _, f := range fixtures.Hostile() {
		b.Run(f.Name, func(b *testing.B) {
			var peaks, lives, retained, read, ratios, liveRatios []float64
			for b.Loop() {
				m := measureHostile(b, f, 0)
				l := measureHostile(b, f, 5)
				peaks = append(peaks, float64(m.peak))
				lives = append(lives, float64(l.peak))
				retained = append(retained, float64(m.retained))
				read = append(read, float64(m.read))
				ratios = append(ratios, float64(m.peak)/float64(max(m.read, 1)))
				liveRatios = append(liveRatios, float64(l.peak)/float64(max(l.read, 1)))
			}
			b.ReportMetric(benchMedian(read)/(1<<20), "read_MiB")
			b.ReportMetric(benchMedian(peaks)/(1<<20), "peak_MiB")
			b.ReportMetric(benchMedian(lives)/(1<<20), "live_MiB")
			b.ReportMetric(benchMedian(retained)/(1<<20), "retained_MiB")
			b.ReportMetric(benchMedian(ratios), "x_read")
			b.ReportMetric(benchMedian(liveRatios), "x_read_live")
		})
	}
}

// BenchmarkHostileRound32 probes the hostile corpus as a round of 32 entries does: every
// fixture four times, all 32 probes in flight at once, while the heap is sampled.
// peak_MiB/probe is the peak heap over the baseline (default GOGC, garbage included)
// per probe in flight, read_MiB/probe the body bytes each read on average (what the
// caps allowed), x_read the ratio, which must stay at most 2.
func BenchmarkHostileRound32(b *testing.B) {
	const copies = 4
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var urls []string
	var probers []*probe.Prober
	log := &readLog{}
	for _, f := range fixtures.Hostile() {
		inst, err := f.Start(ctx)
		if err != nil {
			b.Fatalf("%s: Start: %v", f.Name, err)
		}
		b.Cleanup(inst.Close)
		p := probe.New(f.ProbeConfig(inst, probe.Config{Version: "bench", Logger: slog.New(log)}))
		if _, err := p.Probe(ctx, inst.URL); err != nil { // build the shared buffers
			b.Fatalf("%s: Probe: %v", f.Name, err)
		}
		for range copies {
			urls = append(urls, inst.URL)
			probers = append(probers, p)
		}
	}
	var peaks, reads, ratios []float64
	for b.Loop() {
		runtime.GC()
		runtime.GC()
		base := heapBytes()
		stop := sampleHeap()
		log.total.Store(0)
		var wg sync.WaitGroup
		for i, u := range urls {
			wg.Go(func() {
				if _, err := probers[i].Probe(ctx, u); err != nil {
					b.Errorf("Probe(%s): %v", u, err)
				}
			})
		}
		wg.Wait()
		read := log.total.Load()
		peak := stop()
		n := float64(len(urls))
		pk := float64(peak - min(base, peak))
		peaks = append(peaks, pk/n)
		reads = append(reads, float64(read)/n)
		ratios = append(ratios, pk/float64(max(read, 1)))
	}
	b.ReportMetric(benchMedian(peaks)/(1<<20), "peak_MiB/probe")
	b.ReportMetric(benchMedian(reads)/(1<<20), "read_MiB/probe")
	x := benchMedian(ratios)
	b.ReportMetric(x, "x_read")
	if x > 2 {
		b.Errorf("the peak heap per probe in flight is %.2f times what each read; the bound is 2", x)
	}
}

// TestHostileProbeRetention probes every fixture of the hostile corpus and checks what
// the observation holds: no recorded body over the per-response cap (of the legacy SSE
// session stream, not over the total), every body byte read counted against the total,
// and no more heap retained than twice what the probe read. Memory, not time: the
// bound holds on any machine.
func TestHostileProbeRetention(t *testing.T) {
	if testing.Short() {
		t.Skip("reads about 100 MB")
	}
	const maxResponse, maxTotal = 4 << 20, 32 << 20
	for _, f := range fixtures.Hostile() {
		t.Run(f.Name, func(t *testing.T) {
			m := measureHostile(t, f, 0)
			t.Logf("read %d bytes; peak heap %d, retained %d; %d exchanges", m.read, m.peak, m.retained, len(m.obs.Exchanges))
			if m.read <= 0 || m.read > maxTotal {
				t.Errorf("the probe read %d body bytes; the per-probe cap is %d", m.read, maxTotal)
			}
			var recorded int64
			for _, ex := range m.obs.Exchanges {
				recorded += int64(len(ex.Body))
				if len(ex.Body) > maxResponse && !isSessionStream(ex) {
					t.Errorf("%s %s: %d bytes recorded; the per-response cap is %d", ex.Method, ex.URL, len(ex.Body), maxResponse)
				}
			}
			if recorded > m.read {
				t.Errorf("%d body bytes recorded but only %d counted against the caps", recorded, m.read)
			}
			if m.retained > 2*uint64(m.read) {
				t.Errorf("the observation retains %d bytes of heap; the probe read %d", m.retained, m.read)
			}
		})
	}
}

// isSessionStream reports whether ex is the event stream of a legacy SSE session.
func isSessionStream(ex checks.Exchange) bool {
	ct := ex.Header["Content-Type"]
	return ex.Method == "GET" && len(ct) > 0 && len(ct[0]) >= 17 && ct[0][:17] == "text/event-stream"
}
