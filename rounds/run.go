package rounds

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/probity-dev/probity/store"
)

// Summary counts the outcomes of a run.
type Summary struct {
	RunID   string
	Resumed bool
	Total   int // entries in the run
	// Probed counts the rounds stored by this invocation: SignedFull + SignedAuth + Unsigned.
	Probed      int
	SignedFull  int
	SignedAuth  int
	Unsigned    int
	AlreadyDone int // stored by an earlier, interrupted invocation of the same run
	NotProbed   int // package and repository entries when no supply collector is configured
	SupplyRuns  int // package and repository entries: supply-chain checks run
	Failed      int
	Duration    time.Duration
	// Finished is set when every entry was handled and the run was marked finished.
	Finished bool
	// Errors holds the first errors (at most 20), for the operator.
	Errors []error
}

func (s *Summary) add(o RoundReport, err error) {
	if err != nil {
		s.Failed++
		if len(s.Errors) < 20 {
			s.Errors = append(s.Errors, err)
		}
		return
	}
	switch o.Outcome {
	case SignedFull:
		s.SignedFull++
		s.Probed++
	case SignedAuth:
		s.SignedAuth++
		s.Probed++
	case Unsigned:
		s.Unsigned++
		s.Probed++
	case AlreadyDone, EntryGone:
		s.AlreadyDone++
	case NotProbed:
		s.NotProbed++
	case SupplyRan:
		s.SupplyRuns++
	default:
		s.Failed++
	}
}

// Done is the number of entries handled so far.
func (s *Summary) Done() int {
	return s.Probed + s.AlreadyDone + s.NotProbed + s.SupplyRuns + s.Failed
}

// RunOptions configures RunAll.
type RunOptions struct {
	// Concurrency is the number of rounds in flight; default 32.
	Concurrency int
	// Progress, when set, is called after every entry with the summary so far (from
	// one goroutine at a time).
	Progress func(Summary)
}

// RunAll runs one manual round over every entry now: it resumes the newest unfinished
// run if there is one (so entries an interrupted invocation stored are skipped), or
// starts a new one. The run is marked finished only when every entry was handled
// without error; cancelling ctx stops dispatching, lets the rounds in flight finish and
// store, and returns ctx's error with the summary so far.
func (r *Runner) RunAll(ctx context.Context, opt RunOptions) (Summary, error) {
	if opt.Concurrency <= 0 {
		opt.Concurrency = 32
	}
	st := r.cfg.Store
	start := r.cfg.Now()
	run, err := st.UnfinishedRun(ctx)
	resumed := err == nil
	switch {
	case errors.Is(err, store.ErrNotFound):
		now := start.UTC().Truncate(time.Millisecond)
		run = store.Run{ID: "r" + stamp(now), DueAt: now, StartedAt: now}
		if err := st.StartRun(ctx, run); err != nil {
			return Summary{}, fmt.Errorf("couldn't start a run: %w", err)
		}
	case err != nil:
		return Summary{}, fmt.Errorf("couldn't look for an unfinished run: %w", err)
	}
	sum := Summary{RunID: run.ID, Resumed: resumed}

	var mu sync.Mutex
	report := func(o RoundReport, err error) {
		mu.Lock()
		defer mu.Unlock()
		sum.add(o, err)
		if opt.Progress != nil {
			opt.Progress(sum)
		}
	}
	work := make(chan store.Entry)
	var wg sync.WaitGroup
	for range opt.Concurrency {
		wg.Go(func() {
			for e := range work {
				if e.Kind != store.KindRemote && r.cfg.Collector != nil {
					if _, err := r.RunSupply(ctx, e, false); err == nil || ctx.Err() == nil {
						report(RoundReport{Outcome: SupplyRan}, err)
					}
					continue
				}
				o, err := r.RunEntry(ctx, e, store.Due{EntryID: e.ID, Reason: store.ReasonManual, At: run.DueAt}, run.ID)
				if err != nil && ctx.Err() != nil {
					continue // interrupted: not a failure of the entry
				}
				if err == nil && r.cfg.Collector != nil {
					// A remote server with a package or repository: its supply checks
					// after its round (supplyAfterRound); a failure fails the entry, so
					// a resumed run retries it.
					if err = r.supplyAfterRound(ctx, e, o, run.DueAt); err != nil && ctx.Err() != nil {
						continue
					}
				}
				report(o, err)
			}
		})
	}
	var listErr error
	const page = 500
	var after int64
dispatch:
	for {
		entries, err := st.Entries(ctx, after, page)
		if err != nil {
			listErr = fmt.Errorf("couldn't list entries: %w", err)
			break
		}
		// Unlisted entries (a deprecated or deleted listing) keep their history and are
		// not read.
		listed := 0
		for _, e := range entries {
			if e.Listed {
				listed++
			}
		}
		mu.Lock()
		sum.Total += listed
		mu.Unlock()
		for _, e := range entries {
			if !e.Listed {
				after = e.ID
				continue
			}
			select {
			case work <- e:
			case <-ctx.Done():
				break dispatch
			}
			after = e.ID
		}
		if len(entries) < page {
			break
		}
	}
	close(work)
	wg.Wait()
	sum.Duration = r.cfg.Now().Sub(start)
	switch {
	case ctx.Err() != nil:
		return sum, ctx.Err()
	case listErr != nil:
		return sum, listErr
	case sum.Failed > 0:
		return sum, nil // left unfinished: the next `probity round` retries the failures
	}
	if err := st.FinishRun(context.WithoutCancel(ctx), run.ID, r.cfg.Now()); err != nil {
		return sum, fmt.Errorf("couldn't mark run %s finished: %w", run.ID, err)
	}
	sum.Finished = true
	return sum, nil
}
