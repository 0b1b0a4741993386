package rounds

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/checks"
	"github.com/probity-dev/probity/checks/fixtures"
	"github.com/probity-dev/probity/checks/probe"
	"github.com/probity-dev/probity/export"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/keys/signing"
	"github.com/probity-dev/probity/locator"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/verifier"
	"github.com/probity-dev/probity/verifier/cli"
)

// testEnv is a store, a key directory and a runner for service-level tests.
type testEnv struct {
	st     store.Store
	doc    *keys.Document
	signer *signing.Signer
	r      *Runner
}

func newTestEnv(t *testing.T, p Prober, schedule Schedule) *testEnv {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, store.Config{SQLitePath: filepath.Join(dir, "probity.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	keyDir := filepath.Join(dir, "keys")
	if _, err := signing.GenerateDir(keyDir, "https://probity.test", time.Now().Add(-time.Minute), nil); err != nil {
		t.Fatal(err)
	}
	doc, signer, err := signing.OpenDir(keyDir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if p == nil {
		p = probe.New(probe.Config{Version: "test", AllowLoopback: true})
	}
	r, err := NewRunner(Config{Store: st, Prober: p, Signer: signer, ToolVersion: "0.1.0-test", Schedule: schedule, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	return &testEnv{st: st, doc: doc, signer: signer, r: r}
}

func (env *testEnv) add(t *testing.T, kind, locator string) store.Entry {
	t.Helper()
	slug := fmt.Sprintf("e%d", time.Now().UnixNano()%1e9)
	e, _, err := env.st.AddEntry(context.Background(), store.NewEntry{
		SlugBase: slug, Kind: kind, Locator: locator, Name: locator, Source: "import",
		Due: env.r.cfg.Schedule.FirstDue(store.Entry{Kind: kind, Locator: locator}, time.Now()),
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// verifyExport exports every envelope of the store and verifies them offline; every
// signed observation must verify, and nothing else may be there.
func (env *testEnv) verifyExport(t *testing.T) cli.Summary {
	t.Helper()
	ctx := context.Background()
	out := t.TempDir()
	counts, err := export.Write(ctx, env.st, env.doc, out, store.EnvelopeFilter{}, nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	n := counts.Rounds
	stats, err := env.st.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if int64(n) != stats.Signed || stats.Envelopes != stats.Signed {
		t.Fatalf("exported %d envelopes; the store holds %d envelopes and %d signed observations", n, stats.Envelopes, stats.Signed)
	}
	doc, err := keys.Load(filepath.Join(out, keys.DocumentFile))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := cli.VerifyPaths(ctx, []string{out}, cli.StreamConfig{Keys: doc, Policy: verifier.DefaultPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Failed != 0 || sum.Verified != n+counts.Changes+counts.Supply {
		t.Fatalf("offline verification of the export: %+v, want %d rounds and %d changes verified", sum, n, counts.Changes)
	}
	return sum
}

// TestRunAll runs a manual round over a fleet and fixtures of every coverage, then
// checks what was stored and verifies the export offline.
func TestRunAll(t *testing.T) {
	ctx := context.Background()
	env := newTestEnv(t, nil, Schedule{})
	fleet, err := fixtures.StartFleet(fixtures.FleetConfig{N: 20, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	want := map[string]int{fixtures.CoverageFull: 20}
	for _, u := range fleet.URLs() {
		env.add(t, store.KindRemote, u)
	}
	for _, name := range []string{"healthy-sdk-initialize", "healthy-sdk-discover", "auth-valid-metadata",
		"fault-connection-refused", "fault-http-500", "fault-429-retry-after", "egress-metadata-url"} {
		fx, ok := fixtures.ByName(name)
		if !ok {
			t.Fatalf("no fixture %s", name)
		}
		inst, err := fx.Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer inst.Close()
		url, err := locator.NormalizeURL(inst.URL)
		if err != nil {
			t.Fatal(err)
		}
		env.add(t, store.KindRemote, url)
		want[fx.Coverage]++
	}
	env.add(t, store.KindNPM, "pkg:npm/some-mcp-server")
	// A deprecated server is not read (and not counted): its address does not answer.
	gone, err := env.st.UpsertServer(ctx, store.ServerUpsert{SlugBase: "gone", Name: "gone", Source: "registry",
		Listing: store.Listing{ServerName: "com.example/gone", Status: store.StatusDeprecated},
		Parts:   []store.Part{{Kind: store.KindRemote, Locator: "https://gone.invalid/mcp"}}})
	if err != nil {
		t.Fatal(err)
	}

	var calls int
	// began is before every round's store: each round sets its next cadence round from
	// the time it stored, so no next round may come sooner than began + the cadence's
	// floor (measured from the test's own later clock, a slow run under -race failed
	// rounds whose jitter drew near the floor).
	began := time.Now()
	sum, err := env.r.RunAll(ctx, RunOptions{Concurrency: 8, Progress: func(Summary) { calls++ }})
	if err != nil {
		t.Fatal(err)
	}
	if rs, err := env.st.Rounds(ctx, gone.Entry.ID, 0); err != nil || len(rs) != 0 || sum.Total != 28 {
		t.Fatalf("an unlisted server: %d rounds (%v), %d entries counted; want none and 28", len(rs), err, sum.Total)
	}
	if !sum.Finished || sum.Failed != 0 || sum.Resumed {
		t.Fatalf("summary %+v, errors %v", sum, sum.Errors)
	}
	if sum.SignedFull != want[fixtures.CoverageFull] || sum.SignedAuth != want[fixtures.CoverageAuthRequired] ||
		sum.Unsigned != want[fixtures.CoverageUnsigned] || sum.NotProbed != 1 || calls != sum.Done() {
		t.Fatalf("summary %+v, want coverage counts %v, 1 not probed, %d progress calls", sum, want, calls)
	}

	// Every remote entry has exactly one round; signed ⇔ coverage ⇔ envelope; uptime counted.
	entries, err := env.st.Entries(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		rs, err := env.st.Rounds(ctx, e.ID, 10)
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind != store.KindRemote || !e.Listed {
			if len(rs) != 0 {
				t.Errorf("%s: %d rounds for a package or unlisted entry", e.Slug, len(rs))
			}
			continue
		}
		if len(rs) != 1 {
			t.Fatalf("%s: %d rounds, want 1", e.Slug, len(rs))
		}
		r := rs[0]
		if r.Signed != (r.Coverage != "") || r.Signed != (r.KeyID != "") || r.Reason != store.ReasonManual {
			t.Errorf("%s: round %+v", e.Slug, r)
		}
		if r.RoundID != sum.RunID+fmt.Sprintf("-e%d", e.ID) {
			t.Errorf("%s: round id %s, run %s", e.Slug, r.RoundID, sum.RunID)
		}
		if r.Coverage == "full" {
			doc, err := env.st.Surface(ctx, r.Fingerprints.Surface)
			if err != nil || attest.Digest(doc) != r.Fingerprints.Surface {
				t.Errorf("%s: surface %s not stored content-addressed (%v)", e.Slug, r.Fingerprints.Surface, err)
			}
		}
		res, err := env.st.RoundResults(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		stored, err := checks.DecodeResults(res)
		if err != nil || len(stored) != len(checks.CheckIDs()) {
			t.Errorf("%s: %d stored results (%v)", e.Slug, len(stored), err)
		}
		dues, _ := env.st.DueTimes(ctx, e.ID)
		wantNext := DefaultCadence * 9 / 10 // 3 h ± 10 %
		if r.Reach == string(checks.ReachRateLimited) {
			wantNext = 59 * time.Minute // backoff: at least an hour
		}
		for _, d := range dues {
			if d.Reason == store.ReasonCadence && d.At.Before(began.Add(wantNext)) {
				t.Errorf("%s: next cadence round at %v, want ≥ %v after the run began (%v)", e.Slug, d.At, wantNext, began)
			}
		}
	}
	day := time.Now().UTC().Format(time.DateOnly)
	for _, e := range entries {
		if e.Kind != store.KindRemote || !e.Listed {
			continue
		}
		days, err := env.st.UptimeDays(ctx, e.ID, day, day)
		if err != nil || len(days) != 1 {
			t.Fatalf("%s: uptime days %v (%v)", e.Slug, days, err)
		}
	}

	// A second invocation starts a new run (the first finished) and stores new rounds.
	sum2, err := env.r.RunAll(ctx, RunOptions{Concurrency: 8})
	if err != nil || sum2.RunID == sum.RunID || sum2.Probed != sum.Probed {
		t.Fatalf("second run: %+v, %v", sum2, err)
	}
	got := env.verifyExport(t)
	if got.Verified != 2*(sum.SignedFull+sum.SignedAuth) {
		t.Fatalf("verified %d envelopes, want %d", got.Verified, 2*(sum.SignedFull+sum.SignedAuth))
	}
}

// cancelAfter is a Prober that cancels the run when a probe starts after cap(count)
// probes have.
type cancelAfter struct {
	p      Prober
	cancel context.CancelFunc
	count  chan struct{}
}

func (c *cancelAfter) Probe(ctx context.Context, url string) (*checks.Observation, error) {
	select {
	case c.count <- struct{}{}:
	default:
		c.cancel()
	}
	return c.p.Probe(ctx, url)
}

// TestRunAllResumes interrupts a run and checks that the next invocation resumes it,
// probing only the entries not yet stored, each exactly once.
func TestRunAllResumes(t *testing.T) {
	fleet, err := fixtures.StartFleet(fixtures.FleetConfig{N: 60, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	ctx, cancel := context.WithCancel(context.Background())
	prober := &cancelAfter{p: probe.New(probe.Config{Version: "test", AllowLoopback: true}), cancel: cancel, count: make(chan struct{}, 25)}
	env := newTestEnv(t, prober, Schedule{})
	for _, u := range fleet.URLs() {
		env.add(t, store.KindRemote, u)
	}
	sum, err := env.r.RunAll(ctx, RunOptions{Concurrency: 4})
	if !errors.Is(err, context.Canceled) || sum.Finished || sum.Probed == 0 || sum.Probed >= 60 {
		t.Fatalf("interrupted run: %+v, %v", sum, err)
	}
	first := sum.Probed

	env.r.cfg.Prober = probe.New(probe.Config{Version: "test", AllowLoopback: true})
	sum2, err := env.r.RunAll(context.Background(), RunOptions{Concurrency: 4})
	if err != nil || !sum2.Finished || !sum2.Resumed || sum2.RunID != sum.RunID {
		t.Fatalf("resumed run: %+v, %v", sum2, err)
	}
	if sum2.AlreadyDone != first || sum2.Probed != 60-first {
		t.Fatalf("resumed run probed %d and skipped %d; the first stored %d of 60", sum2.Probed, sum2.AlreadyDone, first)
	}
	// Every server answered as many tools/list reads as attempts were recorded, and
	// more than one attempt only where a probe was cut by the interruption.
	entries, _ := env.st.Entries(context.Background(), 0, 0)
	extra := 0
	for i, e := range entries {
		n, err := env.st.Attempts(context.Background(), e.ID, mustRun(t, env, e).DueAt)
		if err != nil {
			t.Fatal(err)
		}
		if reads := fleet.Reads(i); reads > uint64(n) || reads == 0 {
			t.Errorf("%s: %d tools/list reads for %d attempts", e.Slug, reads, n)
		}
		extra += n - 1
	}
	if extra > 4 {
		t.Errorf("%d repeated attempts; at most the 4 probes in flight at the interruption may repeat", extra)
	}
	env.verifyExport(t)
}

func mustRun(t *testing.T, env *testEnv, e store.Entry) store.RoundSummary {
	t.Helper()
	rs, err := env.st.Rounds(context.Background(), e.ID, 2)
	if err != nil || len(rs) != 1 {
		t.Fatalf("%s: rounds %v, %v", e.Slug, rs, err)
	}
	return rs[0]
}

// testLogger logs to stderr with PROBITY_TEST_LOG=1, and nowhere otherwise.
func testLogger() *slog.Logger {
	if os.Getenv("PROBITY_TEST_LOG") == "" {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
