package rounds

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/checks"
	"github.com/probity-dev/probity/checks/fixtures"
	"github.com/probity-dev/probity/checks/probe"
	"github.com/probity-dev/probity/store"
)

// fixedSigner signs with an Ed25519 key from a fixed seed: Ed25519 is deterministic, so
// two envelopes of the same payload are the same bytes.
type fixedSigner struct{ key ed25519.PrivateKey }

func newFixedSigner() fixedSigner {
	return fixedSigner{ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))}
}

func (s fixedSigner) Sign(_ context.Context, data []byte) ([]byte, error) {
	return ed25519.Sign(s.key, data), nil
}

func (s fixedSigner) KeyID() (string, error) { return "fixed", nil }

// buildRunner is a Runner for calling build, which does no I/O: its store is never used.
func buildRunner(tb testing.TB) *Runner {
	tb.Helper()
	r, err := NewRunner(Config{Store: noStore{}, Prober: probe.New(probe.Config{}), Signer: newFixedSigner(), ToolVersion: "0.1.0-test", Logger: testLogger()})
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// noStore is a store.Store that build never calls.
type noStore struct{ store.Store }

// probeFixture starts f and probes it once.
func probeFixture(tb testing.TB, f fixtures.Fixture) *checks.Observation {
	tb.Helper()
	ctx := context.Background()
	inst, err := f.Start(ctx)
	if err != nil {
		tb.Skipf("%s: %v", f.Name, err)
	}
	defer inst.Close()
	obs, err := probe.New(f.ProbeConfig(inst, probe.Config{Version: "test"})).Probe(ctx, inst.URL)
	if err != nil {
		tb.Fatalf("%s: %v", f.Name, err)
	}
	return obs
}

func hostileFixture(tb testing.TB, name string) fixtures.Fixture {
	tb.Helper()
	for _, f := range fixtures.Hostile() {
		if f.Name == name {
			return f
		}
	}
	tb.Fatalf("no hostile fixture %s", name)
	return fixtures.Fixture{}
}

// A round computes the fingerprints and the surface document once (checks.EvaluateRound)
// where it used to compute them for the checks, the round, the surface and the statement
// apart: its stored results, fingerprints, surface document, instructions and every
// signed byte are what the separate computations give, on the 9,000-tool list of the
// hostile corpus and on every fixture of the suite.
func TestBuildEqualsSeparateComputations(t *testing.T) {
	fs := []fixtures.Fixture{hostileFixture(t, "hostile-nine-3mb-pages")}
	if !testing.Short() {
		for _, f := range fixtures.All() {
			if f.Budget == 0 {
				fs = append(fs, f)
			}
		}
	}
	r := buildRunner(t)
	e := store.Entry{ID: 7, Slug: "e7", Kind: store.KindRemote}
	due := store.Due{EntryID: 7, At: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), Reason: store.ReasonManual}
	signedRounds := 0
	for _, f := range fs {
		t.Run(f.Name, func(t *testing.T) {
			obs := probeFixture(t, f)
			round, err := r.build(context.Background(), e, due, "", obs, history{})
			if err != nil {
				t.Fatal(err)
			}
			results, coverage, signed := checks.Evaluate(obs)
			want, err := checks.EncodeResults(results)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(round.Results, want) {
				t.Errorf("results:\n got %s\nwant %s", round.Results, want)
			}
			fp, err := checks.Fingerprints(obs)
			if err != nil {
				fp = nil
			}
			if !reflect.DeepEqual(round.Fingerprints, fp) {
				t.Errorf("fingerprints %+v, want %+v", round.Fingerprints, fp)
			}
			var doc []byte
			if fp != nil {
				if doc, err = attest.SurfaceDocument(obs.Tools.Tools); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(round.Surface, doc) {
				t.Errorf("surface document of %d bytes, want %d bytes", len(round.Surface), len(doc))
			}
			if !signed {
				if round.Envelope != nil {
					t.Errorf("an envelope for an unsigned round")
				}
				return
			}
			signedRounds++
			checked, err := checks.Statement(obs, results, coverage, attest.ProbeInfo{ToolVersion: "0.1.0-test"}, round.RoundID)
			if err != nil {
				t.Fatal(err)
			}
			env, _, err := attest.Sign(context.Background(), checked.Statement(), newFixedSigner())
			if err != nil {
				t.Fatal(err)
			}
			wantEnv, err := attest.EncodeEnvelope(env)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(round.Envelope, wantEnv) {
				t.Errorf("envelope:\n got %s\nwant %s", round.Envelope, wantEnv)
			}
			if round.Coverage != string(coverage) {
				t.Errorf("coverage %q, want %q", round.Coverage, coverage)
			}
		})
	}
	if signedRounds == 0 {
		t.Fatal("no signed round compared")
	}
}

// BenchmarkBuild9000Tools builds the round of the hostile corpus's nine 3 MB pages
// (9,000 tools of about 3 KB) from one observation: checks, fingerprints, surface
// document, statement and signature. B/op is what one such round allocates after its
// probe; retained-B is what the built round still holds (the surface document).
func BenchmarkBuild9000Tools(b *testing.B) {
	obs := probeFixture(b, hostileFixture(b, "hostile-nine-3mb-pages"))
	if len(obs.Tools.Tools) != 9000 {
		b.Fatalf("%d tools", len(obs.Tools.Tools))
	}
	r := buildRunner(b)
	e := store.Entry{ID: 7, Slug: "e7", Kind: store.KindRemote}
	due := store.Due{EntryID: 7, At: time.Now(), Reason: store.ReasonManual}
	var round *store.Round
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if round, err = r.build(context.Background(), e, due, "", obs, history{}); err != nil {
			b.Fatal(err)
		}
	}
	if round.Envelope == nil {
		b.Fatal("round not signed")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	runtime.KeepAlive(round)
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(before.HeapAlloc)-float64(after.HeapAlloc), "retained-B")
}

// listProber answers every probe with a complete list of tools of toolBytes bytes each.
type listProber struct {
	tools, toolBytes int
}

func (p listProber) Probe(_ context.Context, url string) (*checks.Observation, error) {
	obs := &checks.Observation{URL: url, StartedAt: time.Now()}
	for i := range p.tools {
		head := fmt.Sprintf(`{"name":"t%05d","description":"`, i)
		tool := head + strings.Repeat("x", max(0, p.toolBytes-len(head)-2)) + `"}`
		obs.Tools.Tools = append(obs.Tools.Tools, json.RawMessage(tool))
	}
	return obs, nil
}

// countingStore counts the rounds being saved at once.
type countingStore struct {
	store.Store
	mu            sync.Mutex
	inFlight, max int
}

func (s *countingStore) SaveRound(ctx context.Context, r *store.Round) (int64, error) {
	s.mu.Lock()
	s.inFlight++
	s.max = max(s.max, s.inFlight)
	s.mu.Unlock()
	time.Sleep(30 * time.Millisecond) // a store busy with a large document
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	return s.Store.SaveRound(ctx, r)
}

// Rounds of large lists are built and stored at most Config.ListBytes of lists at a
// time, however many are probed at once; a list larger than the bound still proceeds.
func TestRegressionListBytesBoundsBuildAndStore(t *testing.T) {
	for _, c := range []struct {
		name             string
		listBytes        int64
		tools, toolBytes int
		want             int
	}{
		{"two lists at a time", 2500, 10, 100, 2},
		{"a list larger than the bound", 500, 10, 100, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := newTestEnv(t, nil, Schedule{})
			cs := &countingStore{Store: env.st}
			r, err := NewRunner(Config{Store: cs, Prober: listProber{c.tools, c.toolBytes}, Signer: newFixedSigner(), ToolVersion: "test",
				ListBytes: c.listBytes, Logger: testLogger()})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 8 {
				env.add(t, store.KindRemote, fmt.Sprintf("https://list%d.example/mcp", i))
			}
			sum, err := r.RunAll(context.Background(), RunOptions{Concurrency: 8})
			if err != nil || sum.Probed != 8 {
				t.Fatalf("run: %+v, %v", sum, err)
			}
			if cs.max != c.want {
				t.Errorf("%d rounds were built and stored at once, want %d", cs.max, c.want)
			}
		})
	}
}
