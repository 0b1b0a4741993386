package probe_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/probity-dev/probity/checks/fixtures"
	"github.com/probity-dev/probity/checks/probe"
)

// The benchmarks probe a fleet of simulated servers (package checks/fixtures) on
// loopback. Each iteration runs a fixed number of probes, so -benchtime 1x bounds a run:
//
//	go test ./checks/probe -run '^$' -bench Fleet -benchtime 1x -count 3
//	go test ./checks/probe -run '^$' -bench ProbeMemory -benchtime 1x -count 3

// benchOutcome is what a benchmark keeps of one probe: not the observation, whose
// recorded bodies would distort the memory measurements.
type benchOutcome struct {
	wall     time.Duration
	requests int
	failure  string // "" for a probe that read the complete tool list
}

func startBenchFleet(b *testing.B, cfg fixtures.FleetConfig) (*fixtures.Fleet, *probe.Prober) {
	b.Helper()
	f, err := fixtures.StartFleet(cfg)
	if err != nil {
		b.Fatalf("StartFleet: %v", err)
	}
	b.Cleanup(func() {
		if err := f.Close(); err != nil {
			b.Errorf("Close: %v", err)
		}
	})
	return f, probe.New(probe.Config{AllowLoopback: true, Version: "bench", RootCAs: f.CertPool()})
}

// benchProbeMany runs total probes on workers goroutines, round-robin over urls.
// inFlight, when non-nil, counts the probes in flight.
func benchProbeMany(p *probe.Prober, urls []string, workers, total int, inFlight *atomic.Int64) []benchOutcome {
	out := make([]benchOutcome, total)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				k := int(next.Add(1)) - 1
				if k >= total {
					return
				}
				if inFlight != nil {
					inFlight.Add(1)
				}
				start := time.Now()
				obs, err := p.Probe(context.Background(), urls[k%len(urls)])
				o := benchOutcome{wall: time.Since(start)}
				if inFlight != nil {
					inFlight.Add(-1)
				}
				switch {
				case err != nil:
					o.failure = err.Error()
				case !obs.Tools.Complete:
					o.failure = fmt.Sprintf("%s: reach %q, tools %q, stop %q", obs.URL, obs.Reach.Failure, obs.Tools.Partial, obs.Stop)
				}
				if obs != nil {
					o.requests = len(obs.Exchanges)
				}
				out[k] = o
			}
		})
	}
	wg.Wait()
	return out
}

// benchFailures reports the failed probes, once per benchmark.
func benchFailures(b *testing.B, outs []benchOutcome) {
	b.Helper()
	n := 0
	var first string
	for _, o := range outs {
		if o.failure != "" {
			if n == 0 {
				first = o.failure
			}
			n++
		}
	}
	if n > 0 {
		b.Errorf("%d of %d probes failed; the first: %s", n, len(outs), first)
	}
}

func benchMedian(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[len(v)/2]
}

// BenchmarkProbeFleetConcurrency64 measures throughput: 64 goroutines probe a fleet of
// 256 servers round-robin, 512 probes per iteration, with no injected latency.
func BenchmarkProbeFleetConcurrency64(b *testing.B) {
	for _, lite := range []bool{false, true} {
		name := "sdk"
		if lite {
			name = "lite"
		}
		b.Run(name, func(b *testing.B) { benchConcurrency64(b, lite) })
	}
}

func benchConcurrency64(b *testing.B, lite bool) {
	const servers, workers, perIter = 256, 64, 512
	f, p := startBenchFleet(b, fixtures.FleetConfig{N: servers, Seed: 1, Lite: lite})
	urls := f.URLs()
	benchFailures(b, benchProbeMany(p, urls, workers, servers, nil)) // build every server, warm the runtime
	var probes int
	var elapsed time.Duration
	var requests []float64
	for b.Loop() {
		start := time.Now()
		outs := benchProbeMany(p, urls, workers, perIter, nil)
		elapsed += time.Since(start)
		probes += len(outs)
		benchFailures(b, outs)
		for _, o := range outs {
			requests = append(requests, float64(o.requests))
		}
	}
	b.ReportMetric(float64(probes)/elapsed.Seconds(), "probes/s")
	b.ReportMetric(benchMedian(requests), "requests/probe")
}

// BenchmarkProbeFleetLatency200ms measures how close a probe comes to its latency
// bound when every response of the fleet takes 200 ms and 512 probes run at once: the
// probe's requests are sequential, so a probe of n requests cannot take less than
// n × 200 ms. x_latency_bound is the benchMedian of wall time / (n × 200 ms).
func BenchmarkProbeFleetLatency200ms(b *testing.B) {
	// sdk: go-sdk servers, which share the probe's two cores; lite: the same surfaces
	// answered from pre-rendered JSON, closer to remote servers that cost the probe's
	// machine nothing.
	for _, lite := range []bool{false, true} {
		name := "sdk"
		if lite {
			name = "lite"
		}
		b.Run(name, func(b *testing.B) { benchLatency(b, lite) })
	}
}

func benchLatency(b *testing.B, lite bool) {
	const latency = 200 * time.Millisecond
	const servers, workers = 512, 512
	f, p := startBenchFleet(b, fixtures.FleetConfig{N: servers, Seed: 1, Latency: latency, Lite: lite})
	urls := f.URLs()
	benchFailures(b, benchProbeMany(p, urls, workers, servers, nil)) // build every server
	var probes int
	var elapsed time.Duration
	var ratios, requests []float64
	for b.Loop() {
		start := time.Now()
		outs := benchProbeMany(p, urls, workers, servers, nil)
		elapsed += time.Since(start)
		probes += len(outs)
		benchFailures(b, outs)
		for _, o := range outs {
			if o.requests > 0 {
				ratios = append(ratios, o.wall.Seconds()/(float64(o.requests)*latency.Seconds()))
				requests = append(requests, float64(o.requests))
			}
		}
	}
	b.ReportMetric(benchMedian(ratios), "x_latency_bound")
	b.ReportMetric(float64(probes)/elapsed.Seconds(), "probes/s")
	b.ReportMetric(benchMedian(requests), "requests/probe")
}

// BenchmarkProbeMemory measures the memory of an in-flight probe: 256 probes run at
// once against a fleet of 256 servers answering after 100 ms (so that every probe is
// in flight together), while the heap and stacks are sampled. bytes/probe is the peak
// of heap in use plus stacks over the baseline, per probe: an upper bound, as it counts
// garbage not yet collected and the fleet's own per-request memory, which runs in the
// same process. live_bytes/probe is the same after a forced GC with every probe in
// flight.
func BenchmarkProbeMemory(b *testing.B) {
	const k = 256
	f, p := startBenchFleet(b, fixtures.FleetConfig{N: k, Seed: 1, Latency: 100 * time.Millisecond})
	urls := f.URLs()
	benchFailures(b, benchProbeMany(p, urls, k, k, nil)) // build every server
	var peaks, lives []float64
	for b.Loop() {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapInuse + ms.StackInuse
		baseLive := ms.HeapAlloc + ms.StackInuse

		var inFlight atomic.Int64
		var peak atomic.Uint64
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			t := time.NewTicker(2 * time.Millisecond)
			defer t.Stop()
			var ms runtime.MemStats
			for {
				select {
				case <-stop:
					return
				case <-t.C:
				}
				runtime.ReadMemStats(&ms)
				if v := ms.HeapInuse + ms.StackInuse; v > peak.Load() {
					peak.Store(v)
				}
			}
		}()
		live := make(chan uint64, 1)
		go func() {
			// Once every probe is in flight and past its handshake, collect and measure
			// what is live.
			for deadline := time.Now().Add(2 * time.Second); inFlight.Load() < k && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(250 * time.Millisecond)
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if v := ms.HeapInuse + ms.StackInuse; v > peak.Load() {
				peak.Store(v)
			}
			live <- ms.HeapAlloc + ms.StackInuse
		}()
		outs := benchProbeMany(p, urls, k, k, &inFlight)
		close(stop)
		<-sampled
		benchFailures(b, outs)
		peaks = append(peaks, float64(peak.Load()-min(base, peak.Load()))/k)
		l := <-live
		lives = append(lives, float64(l-min(baseLive, l))/k)
	}
	b.ReportMetric(benchMedian(peaks), "bytes/probe")
	b.ReportMetric(benchMedian(lives), "live_bytes/probe")
}
