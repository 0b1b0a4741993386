package rounds

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/probity-dev/probity/checks/fixtures"
	hist "github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/listing"
	"github.com/probity-dev/probity/store"
)

// TestRecheckRunsARoundAtOnce: a maintainer's "Re-check now" (package listing) makes
// the service read a local MCP server at its next look for due rounds, though its
// cadence round is hours away: one read, one manual round stored and signed, the manual
// due time gone; a second re-check within the interval is refused and reads nothing.
func TestRecheckRunsARoundAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the scheduler for a few seconds")
	}
	fleet, err := fixtures.StartFleet(fixtures.FleetConfig{N: 1, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	env := newTestEnv(t, nil, Schedule{Cadence: 3 * time.Hour, FirstSpread: time.Second})
	ctx := context.Background()
	e := env.add(t, store.KindRemote, fleet.URL(0))
	// The first cadence round is hours away.
	if err := env.st.SetDue(ctx, e.ID, store.DueUpdate{Reason: store.ReasonCadence, At: time.Now().Add(3 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	proc, err := hist.NewProcessor(hist.Config{Store: env.st, Signer: env.signer, ToolVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := listing.New(listing.Config{Store: env.st, History: proc})
	if err != nil {
		t.Fatal(err)
	}

	rs, err := NewService(ServiceConfig{Runner: env.r, Concurrency: 2, Tick: time.Second, PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- rs.Run(runCtx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()

	asked := time.Now()
	if err := svc.Recheck(ctx, e.ID); err != nil {
		t.Fatal(err)
	}
	var rounds []store.RoundSummary
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if rounds, err = env.st.Rounds(ctx, e.ID, 10); err != nil {
			t.Fatal(err)
		}
		if len(rounds) > 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(rounds) != 1 || rounds[0].Reason != store.ReasonManual || !rounds[0].Signed {
		t.Fatalf("rounds after a re-check: %+v", rounds)
	}
	t.Logf("the round was stored %v after the re-check was asked for", time.Since(asked).Round(time.Millisecond))
	if fleet.Reads(0) != 1 {
		t.Errorf("the server was read %d times, want 1", fleet.Reads(0))
	}
	ds, err := env.st.DueTimes(ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.Reason == store.ReasonManual {
			t.Errorf("the manual due time is still there: %v", d.At)
		}
	}
	var refused *store.RecheckRefused
	if err := svc.Recheck(ctx, e.ID); !errors.As(err, &refused) {
		t.Fatalf("a second re-check = %v, want refused", err)
	}
	time.Sleep(2 * time.Second) // two looks for due rounds
	if fleet.Reads(0) != 1 {
		t.Errorf("after a refused re-check the server was read %d times, want 1", fleet.Reads(0))
	}
}
