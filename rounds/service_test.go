package rounds

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/checks/fixtures"
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
