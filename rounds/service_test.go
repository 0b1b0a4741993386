package rounds

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/probity-dev/probity/checks"
	"github.com/probity-dev/probity/checks/fixtures"
	"github.com/probity-dev/probity/checks/probe"
	"github.com/probity-dev/probity/checks/supply"
	hist "github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/store"
)

// TestServiceOnSQLite runs the River service on the embedded store with a short cadence:
// every entry gets its first round within the spread, then further cadence rounds, each
// for its own due time and each probed once; the export verifies.
func TestServiceOnSQLite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the scheduler for several seconds")
	}
	fleet, err := fixtures.StartFleet(fixtures.FleetConfig{N: 12, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	env := newTestEnv(t, nil, Schedule{Cadence: 2 * time.Second, FirstSpread: time.Second})
	for _, u := range fleet.URLs() {
		env.add(t, store.KindRemote, u)
	}
	svc, err := NewService(ServiceConfig{Runner: env.r, Concurrency: 8, Tick: time.Second, PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()

	deadline := time.Now().Add(60 * time.Second)
	for {
		fewest := 1 << 30
		entries, err := env.st.Entries(context.Background(), 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			rs, err := env.st.Rounds(context.Background(), e.ID, 10)
			if err != nil {
				t.Fatal(err)
			}
			fewest = min(fewest, len(rs))
		}
		if fewest >= 3 {
			break
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("after 60 s some entry has only %d rounds", fewest)
		}
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	entries, _ := env.st.Entries(context.Background(), 0, 0)
	for i, e := range entries {
		rs, err := env.st.Rounds(context.Background(), e.ID, 100)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[time.Time]bool{}
		for _, r := range rs {
			if seen[r.DueAt] {
				t.Errorf("%s: two rounds for due time %v", e.Slug, r.DueAt)
			}
			seen[r.DueAt] = true
			if n, _ := env.st.Attempts(context.Background(), e.ID, r.DueAt); n != 1 {
				t.Errorf("%s: %d attempts for due time %v", e.Slug, n, r.DueAt)
			}
			if r.Reason != store.ReasonCadence {
				t.Errorf("%s: a %s round; only cadence rounds were due", e.Slug, r.Reason)
			}
		}
		if reads := fleet.Reads(i); reads != uint64(len(rs)) {
			t.Errorf("%s: %d rounds stored, server read %d times", e.Slug, len(rs), reads)
		}
	}
	env.verifyExport(t)
}

// TestStatusCheckSkipsSeenEntries checks that a daily status check of an entry that
// already had a round that UTC day only moves on, and runs a round otherwise.
func TestStatusCheckSkipsSeenEntries(t *testing.T) {
	fleet, err := fixtures.StartFleet(fixtures.FleetConfig{N: 2, Seed: 6})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	env := newTestEnv(t, nil, Schedule{})
	seen := env.add(t, store.KindRemote, fleet.URL(0))
	unseen := env.add(t, store.KindRemote, fleet.URL(1))
	ctx := context.Background()
	if _, err := env.r.RunEntry(ctx, seen, store.Due{EntryID: seen.ID, Reason: store.ReasonCadence, At: time.Now().Truncate(time.Millisecond)}, ""); err != nil {
		t.Fatal(err)
	}
	svc, err := NewService(ServiceConfig{Runner: env.r})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []store.Entry{seen, unseen} {
		dues, _ := env.st.DueTimes(ctx, e.ID)
		for _, d := range dues {
			if d.Reason == store.ReasonStatus {
				if err := svc.work(ctx, ProbeArgs{EntryID: e.ID, Reason: d.Reason, DueAt: d.At}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if rs, _ := env.st.Rounds(ctx, seen.ID, 10); len(rs) != 1 {
		t.Errorf("seen entry: %d rounds after its status check, want 1", len(rs))
	}
	if rs, _ := env.st.Rounds(ctx, unseen.ID, 10); len(rs) != 1 || rs[0].Reason != store.ReasonStatus {
		t.Errorf("unseen entry: rounds %+v, want one status round", rs)
	}
	for _, e := range []store.Entry{seen, unseen} {
		dues, _ := env.st.DueTimes(ctx, e.ID)
		for _, d := range dues {
			if d.Reason == store.ReasonStatus && time.Until(d.At) < 12*time.Hour {
				t.Errorf("%s: next status check in %v, want about a day", e.Slug, time.Until(d.At))
			}
		}
	}
	env.verifyExport(t)
}

// TestRunEntryDueOfAnotherEntry: a due time names its entry; one without an entry id is
// the given entry's, one of another entry is refused before anything is stored.
func TestRunEntryDueOfAnotherEntry(t *testing.T) {
	fleet, err := fixtures.StartFleet(fixtures.FleetConfig{N: 1, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	env := newTestEnv(t, nil, Schedule{})
	e := env.add(t, store.KindRemote, fleet.URL(0))
	ctx := context.Background()
	at := time.Now().Truncate(time.Millisecond)
	if _, err := env.r.RunEntry(ctx, e, store.Due{EntryID: e.ID + 1, Reason: store.ReasonCadence, At: at}, ""); err == nil {
		t.Error("RunEntry took another entry's due time")
	}
	if rs, _ := env.st.Rounds(ctx, e.ID, 10); len(rs) != 0 {
		t.Fatalf("%d rounds stored after a refused due time", len(rs))
	}
	if _, err := env.r.RunEntry(ctx, e, store.Due{Reason: store.ReasonCadence, At: at}, ""); err != nil {
		t.Fatal(err)
	}
	rs, _ := env.st.Rounds(ctx, e.ID, 10)
	if want := fmt.Sprintf("-e%d", e.ID); len(rs) != 1 || !strings.HasSuffix(rs[0].RoundID, want) {
		t.Errorf("rounds %+v, want one whose id ends in %s", rs, want)
	}
}

// TestServiceRescueAfter: a job a killed process left running is rescued just after the
// longest a live job runs (job timeout + save timeout + 30 s), not after River's hour,
// and a rescue delay that would run live jobs twice is refused.
func TestServiceRescueAfter(t *testing.T) {
	env := newTestEnv(t, nil, Schedule{})
	svc, err := NewService(ServiceConfig{Runner: env.r})
	if err != nil {
		t.Fatal(err)
	}
	if svc.cfg.JobTimeout != DefaultJobTimeout || svc.cfg.RescueAfter != 3*time.Minute {
		t.Errorf("defaults: job timeout %s, rescue after %s; want %s and 3m0s", svc.cfg.JobTimeout, svc.cfg.RescueAfter, DefaultJobTimeout)
	}
	svc, err = NewService(ServiceConfig{Runner: env.r, JobTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if want := 5*time.Second + env.r.cfg.SaveTimeout + rescueMargin; svc.cfg.RescueAfter != want {
		t.Errorf("rescue after %s with a 5 s job timeout, want %s", svc.cfg.RescueAfter, want)
	}
	for _, rescue := range []time.Duration{time.Second, 5 * time.Second} {
		if _, err := NewService(ServiceConfig{Runner: env.r, JobTimeout: 5 * time.Second, RescueAfter: rescue}); err == nil || !strings.Contains(err.Error(), "must exceed JobTimeout") {
			t.Errorf("rescue after %s with a 5 s job timeout: %v, want a refusal", rescue, err)
		}
	}
}

// fakeClock is the Runner's clock in tests of the schedule's reads.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// to moves the clock to at, never back.
func (c *fakeClock) to(at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if at.After(c.t) {
		c.t = at
	}
}

// fakeWatcher answers the cadence reads from its fields and counts them.
type fakeWatcher struct {
	mu      sync.Mutex
	version string
	fail    bool
	tools   []json.RawMessage
	reads   int
}

func (w *fakeWatcher) PackageLatest(ctx context.Context, kind, locator string) supply.PackageFacts {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reads++
	src := supply.Source{Outcome: supply.SourceOK, URL: "https://registry.npmjs.org/x", FetchedAt: time.Now()}
	if w.fail {
		src.Outcome, src.Error = supply.SourceFailed, "HTTP 503"
		return supply.PackageFacts{Source: src, Ecosystem: kind}
	}
	return supply.PackageFacts{Source: src, Ecosystem: kind, Latest: w.version}
}

func (w *fakeWatcher) BundleManifest(ctx context.Context, locator string) (supply.ManifestFacts, *supply.Manifest) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reads++
	src := supply.Source{Outcome: supply.SourceOK, URL: locator, FetchedAt: time.Now()}
	if w.fail {
		src.Outcome, src.Error = supply.SourceFailed, "HTTP 503"
		return supply.ManifestFacts{Source: src}, nil
	}
	return supply.ManifestFacts{Source: src, ManifestVersion: "0.2", ToolCount: len(w.tools)},
		&supply.Manifest{ManifestVersion: "0.2", Name: "bundle", Version: "1.0.0", Tools: slices.Clone(w.tools)}
}

func (w *fakeWatcher) set(version string, tools []json.RawMessage, fail bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.version, w.tools, w.fail = version, tools, fail
}

// versionLog is a SupplyHistory that keeps the versions it is given.
type versionLog struct {
	mu       sync.Mutex
	versions []string
	at       []time.Time
}

func (l *versionLog) RecordPackageVersion(ctx context.Context, entryID int64, version string, at time.Time) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.versions, l.at = append(l.versions, version), append(l.at, at)
	return true, nil
}

func (l *versionLog) RecordManifest(ctx context.Context, entryID int64, tools []json.RawMessage, runID int64, payloadDigest string, at time.Time) (int, error) {
	return 0, nil
}

// dueOf returns the entry's due time for reason.
func dueOf(t *testing.T, st Store, id int64, reason store.DueReason) (store.Due, bool) {
	t.Helper()
	dues, err := st.DueTimes(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dues {
		if d.Reason == reason {
			return d, true
		}
	}
	return store.Due{}, false
}

// runDue moves the clock to the entry's due time for reason and works that job.
func runDue(t *testing.T, svc *Service, clk *fakeClock, id int64, reason store.DueReason) store.Due {
	t.Helper()
	d, ok := dueOf(t, svc.r.cfg.Store, id, reason)
	if !ok {
		t.Fatalf("entry %d has no %s due time", id, reason)
	}
	clk.to(d.At)
	if err := svc.work(context.Background(), ProbeArgs{EntryID: id, Reason: reason, DueAt: d.At}); err != nil {
		t.Fatalf("%s job: %v", reason, err)
	}
	return d
}

// TestWatchReadsPackageVersionsOnTheCadence: a package entry's newest version is read
// on the entry's cadence (3 h, not weekly) and goes to the history at once; a source
// that fails is no data and the cadence moves on; a claimed package is read every 15
// min. No supply run is made by these reads.
func TestWatchReadsPackageVersionsOnTheCadence(t *testing.T) {
	env := newTestEnv(t, nil, Schedule{})
	clk := &fakeClock{t: time.Now().UTC().Truncate(time.Millisecond)}
	env.r.cfg.Now = clk.Now
	w, log := &fakeWatcher{version: "1.0.0"}, &versionLog{}
	env.r.cfg.Watcher, env.r.cfg.SupplyHistory = w, log
	e := env.add(t, store.KindNPM, "pkg:npm/acme-weather-mcp")
	svc, err := NewService(ServiceConfig{Runner: env.r})
	if err != nil {
		t.Fatal(err)
	}
	next := func(from time.Time, c time.Duration) {
		t.Helper()
		d, ok := dueOf(t, env.st, e.ID, store.ReasonCadence)
		if gap := d.At.Sub(from); !ok || gap < c-c/10 || gap > c+c/10 {
			t.Fatalf("next cadence read %v after the last, want %v ± 10%%", gap, c)
		}
	}
	d1 := runDue(t, svc, clk, e.ID, store.ReasonCadence)
	next(d1.At, 3*time.Hour)
	w.set("1.1.0", nil, false)
	d2 := runDue(t, svc, clk, e.ID, store.ReasonCadence)
	next(d2.At, 3*time.Hour)
	w.set("", nil, true)
	d3 := runDue(t, svc, clk, e.ID, store.ReasonCadence)
	next(d3.At, 3*time.Hour)
	if fmt.Sprint(log.versions) != "[1.0.0 1.1.0]" || !log.at[0].Equal(d1.At) || !log.at[1].Equal(d2.At) {
		t.Errorf("versions given to the history: %v at %v; want 1.0.0 at %v and 1.1.0 at %v", log.versions, log.at, d1.At, d2.At)
	}
	if runs, _ := env.st.SupplyRuns(context.Background(), e.ID, 0); len(runs) != 0 || w.reads != 3 {
		t.Errorf("%d supply runs and %d reads; the cadence reads are cheap reads only", len(runs), w.reads)
	}
	// A claimed package: every 15 min.
	env.r.cfg.Schedule.ClaimedCadence = 15 * time.Minute
	claimed := e
	claimed.Claimed = true
	d, _ := dueOf(t, env.st, e.ID, store.ReasonCadence)
	clk.to(d.At)
	if _, err := env.r.Watch(context.Background(), claimed, d); err != nil {
		t.Fatal(err)
	}
	next(d.At, 15*time.Minute)
}

// TestWatchConfirmsAManifestChangeAMinuteLater: a repository's bundle manifest is read
// on the cadence; an unchanged one costs no signed run; a changed one makes a signed
// supply run whose read becomes pending, and the confirming read comes a minute later
// (not at the next weekly run), recording the change; the export verifies.
func TestWatchConfirmsAManifestChangeAMinuteLater(t *testing.T) {
	ctx := context.Background()
	env := newTestEnv(t, nil, Schedule{})
	clk := &fakeClock{t: time.Now().UTC().Truncate(time.Millisecond)}
	env.r.cfg.Now = clk.Now
	proc, err := hist.NewProcessor(hist.Config{Store: env.st, Signer: env.signer, ToolVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	a := []json.RawMessage{json.RawMessage(`{"name":"search","description":"Search the docs.","inputSchema":{"type":"object"}}`)}
	b := append(slices.Clone(a), json.RawMessage(`{"name":"drop_table","description":"Drop a table.","inputSchema":{"type":"object"}}`))
	col := &manifestCollector{tools: a}
	w := &fakeWatcher{tools: a}
	env.r.cfg.Collector, env.r.cfg.SupplyHistory, env.r.cfg.Watcher = col, proc, w
	e := env.add(t, store.KindGitHub, "https://github.com/acme/weather-mcp")
	svc, err := NewService(ServiceConfig{Runner: env.r})
	if err != nil {
		t.Fatal(err)
	}
	runs := func() int {
		rs, err := env.st.SupplyRuns(ctx, e.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		return len(rs)
	}
	// The first supply run reads the manifest: the baseline.
	runDue(t, svc, clk, e.ID, store.ReasonSupply)
	// An unchanged manifest on the cadence: no signed run.
	runDue(t, svc, clk, e.ID, store.ReasonCadence)
	if runs() != 1 || w.reads != 1 {
		t.Fatalf("%d supply runs, %d manifest reads after an unchanged cadence read; want 1 and 1", runs(), w.reads)
	}
	if _, ok := dueOf(t, env.st, e.ID, store.ReasonConfirm); ok {
		t.Fatal("a confirmation is due without a difference")
	}
	// The manifest changes: the cadence read makes a signed run, pending, confirmed a
	// minute later.
	col.set(b)
	w.set("", b, false)
	d := runDue(t, svc, clk, e.ID, store.ReasonCadence)
	confirm, ok := dueOf(t, env.st, e.ID, store.ReasonConfirm)
	if gap := confirm.At.Sub(d.At); !ok || runs() != 2 || gap < time.Minute || gap > 2*time.Minute {
		t.Fatalf("after the changed read: %d supply runs, confirmation due %v later (%v); want 2 runs and 1–2 min", runs(), gap, ok)
	}
	if cs, _ := env.st.Changes(ctx, store.ChangeFilter{EntryID: e.ID}); len(cs) != 1 {
		t.Fatalf("changes before the confirming read: %+v", cs)
	}
	runDue(t, svc, clk, e.ID, store.ReasonConfirm)
	cs, err := env.st.Changes(ctx, store.ChangeFilter{EntryID: e.ID})
	if err != nil || len(cs) != 2 || cs[0].Kind != "tools" || cs[0].Summary != "1 tool added" || cs[1].Kind != "baseline" {
		t.Fatalf("changes %+v (%v), want the baseline and 1 tool added", cs, err)
	}
	if got := cs[0].RecordedAt.Sub(d.At); got < time.Minute || got > 2*time.Minute {
		t.Errorf("the change was recorded %v after the changed read, want about a minute", got)
	}
	if _, ok := dueOf(t, env.st, e.ID, store.ReasonConfirm); ok || runs() != 3 {
		t.Errorf("after the confirmation: confirmation still due %v, %d supply runs (want 3)", ok, runs())
	}
	env.verifyExport(t)
}

// TestUnlistedEntriesAreNotRead: an entry whose listing is deprecated or deleted is not
// read by a job enqueued before it was unlisted; the job moves its due time on as if
// it had been read (so that the entry, listed again, gets a job with new arguments,
// River's unique jobs keeping the completed one) and adds none; a confirmation is
// dropped. Listed again, it is read.
func TestUnlistedEntriesAreNotRead(t *testing.T) {
	fleet, err := fixtures.StartFleet(fixtures.FleetConfig{N: 1, Seed: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	ctx := context.Background()
	counter := &countingProber{p: probe.New(probe.Config{Version: "test", AllowLoopback: true})}
	env := newTestEnv(t, counter, Schedule{})
	clk := &fakeClock{t: time.Now().UTC().Truncate(time.Millisecond)}
	env.r.cfg.Now = clk.Now
	e := env.add(t, store.KindRemote, fleet.URL(0))
	if err := env.st.SetDue(ctx, e.ID, store.DueUpdate{Reason: store.ReasonConfirm, At: clk.Now().Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	unlisted := &unlistingStore{Store: env.st, unlisted: map[int64]bool{e.ID: true}}
	env.r.cfg.Store = unlisted
	svc, err := NewService(ServiceConfig{Runner: env.r})
	if err != nil {
		t.Fatal(err)
	}
	before, err := env.st.DueTimes(ctx, e.ID)
	if err != nil || len(before) != 4 {
		t.Fatalf("due times %+v, %v; want cadence, status, supply and confirm", before, err)
	}
	skipped := map[store.DueReason]time.Time{}
	for _, d := range before {
		clk.to(d.At)
		skipped[d.Reason] = clk.Now()
		if err := svc.work(ctx, ProbeArgs{EntryID: e.ID, Reason: d.Reason, DueAt: d.At}); err != nil {
			t.Fatal(err)
		}
	}
	if rs, _ := env.st.Rounds(ctx, e.ID, 10); len(rs) != 0 || counter.n.Load() != 0 {
		t.Fatalf("unlisted entry: %d rounds, %d probes; want none", len(rs), counter.n.Load())
	}
	after, _ := env.st.DueTimes(ctx, e.ID)
	if len(after) != 3 {
		t.Fatalf("due times after the skipped jobs: %+v; want cadence, status and supply moved on, the confirmation dropped", after)
	}
	for _, a := range after {
		if !a.At.After(skipped[a.Reason]) {
			t.Errorf("%s due time %v not moved on past its skipped job at %v", a.Reason, a.At, skipped[a.Reason])
		}
	}
	delete(unlisted.unlisted, e.ID)
	d := runDue(t, svc, clk, e.ID, store.ReasonCadence)
	if rs, _ := env.st.Rounds(ctx, e.ID, 10); len(rs) != 1 || counter.n.Load() != 1 || !rs[0].DueAt.Equal(d.At) {
		t.Fatalf("listed again: %d rounds, %d probes; want 1 and 1", len(rs), counter.n.Load())
	}
}

// unlistingStore reports the entries in unlisted as unlisted (Entry.Listed false), as
// the store does for a deprecated or deleted listing.
type unlistingStore struct {
	Store
	unlisted map[int64]bool
}

func (s *unlistingStore) EntryByID(ctx context.Context, id int64) (store.Entry, error) {
	e, err := s.Store.EntryByID(ctx, id)
	if s.unlisted[id] {
		e.Listed = false
	}
	return e, err
}

// countingProber counts the probes it passes on.
type countingProber struct {
	p Prober
	n atomic.Int64
}

func (c *countingProber) Probe(ctx context.Context, url string) (*checks.Observation, error) {
	c.n.Add(1)
	return c.p.Probe(ctx, url)
}

// manifestCollector is a Collector whose facts are a GitHub repository with an MCP
// bundle manifest listing its tools.
type manifestCollector struct {
	mu    sync.Mutex
	tools []json.RawMessage
}

func (c *manifestCollector) set(tools []json.RawMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tools = tools
}

func (c *manifestCollector) Collect(ctx context.Context, tg supply.Target, tools []json.RawMessage, ep *supply.EndpointFacts) *supply.Facts {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now().UTC()
	repo := "https://github.com/acme/weather-mcp"
	commit := "0123456789abcdef0123456789abcdef01234567"
	return &supply.Facts{
		Kind: tg.Kind, Locator: tg.Locator, Repository: repo,
		Repo: &supply.RepoFacts{Source: supply.Source{Outcome: supply.SourceOK, FetchedAt: now, URL: repo}, URL: repo, Owner: "acme",
			Name: "weather-mcp", Exists: true, LicenseSPDX: "MIT", LastPush: now.Add(-48 * time.Hour), LastCommit: now.Add(-48 * time.Hour),
			HeadCommit: commit},
		Manifest: &supply.ManifestFacts{Source: supply.Source{Outcome: supply.SourceOK, FetchedAt: now, URL: repo + "/blob/" + commit + "/manifest.json"},
			ManifestVersion: "0.2", Name: "weather", Version: "1.0.0", Commit: commit, ToolCount: len(c.tools)},
		Tools: slices.Clone(c.tools),
	}
}

// watchingCollector is a Collector that is a Watcher too.
type watchingCollector struct {
	manifestCollector
	fakeWatcher
}

// TestCollectorIsTheDefaultWatcher: a Collector that can make the cheap reads is the
// Runner's Watcher unless one is given.
func TestCollectorIsTheDefaultWatcher(t *testing.T) {
	env := newTestEnv(t, nil, Schedule{})
	col := &watchingCollector{}
	cfg := env.r.cfg
	cfg.Collector = col
	r, err := NewRunner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.cfg.Watcher != Watcher(col) {
		t.Errorf("watcher %T, want the collector", r.cfg.Watcher)
	}
	given := &fakeWatcher{}
	cfg.Watcher = given
	if r, err = NewRunner(cfg); err != nil || r.cfg.Watcher != Watcher(given) {
		t.Errorf("watcher %T (%v), want the one given", r.cfg.Watcher, err)
	}
	cfg.Collector, cfg.Watcher = &manifestCollector{}, nil
	if r, err = NewRunner(cfg); err != nil || r.cfg.Watcher != nil {
		t.Errorf("watcher %T (%v), want none", r.cfg.Watcher, err)
	}
}

// The supply collector makes the cheap cadence reads: a Runner given it has it as its
// Watcher.
var _ Watcher = (*supply.Collector)(nil)
