package claims

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"
)

// RecheckArgs is the periodic job that re-proves the claims (Service.Recheck).
type RecheckArgs struct{}

// Kind is the job's River kind.
func (RecheckArgs) Kind() string { return "probity_claims_recheck" }

type recheckWorker struct {
	river.WorkerDefaults[RecheckArgs]
	s *Service
}

// recheckTimeout bounds one run: RecheckBatch claims, RecheckConcurrency at once, each
// within Config.Timeout, fit with room (32/4 × 10 s = 80 s by default); a run cut off
// leaves the claims it did not finish due, unchanged.
func (w *recheckWorker) Timeout(*river.Job[RecheckArgs]) time.Duration {
	return time.Duration(RecheckBatch/RecheckConcurrency+2)*w.s.cfg.Timeout + 30*time.Second
}

func (w *recheckWorker) Work(ctx context.Context, _ *river.Job[RecheckArgs]) error {
	r, err := w.s.Recheck(ctx)
	w.s.log.Info("claims re-checked", "checked", r.Checked, "proven", r.Proven, "gone", r.Gone, "lapsed", r.Lapsed,
		"unanswered", r.Unanswered, "skipped", r.Skipped)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return nil // the claims left are due for the next run
	}
	return err
}

// Workers adds the re-check's worker (rounds.ServiceConfig.Workers).
func (s *Service) Workers(ws *river.Workers) error {
	return river.AddWorkerSafely(ws, &recheckWorker{s: s})
}

// PeriodicJobs is the re-check, every Config.RecheckEvery (5 min) and once at start
// (rounds.ServiceConfig.PeriodicJobs); each run proves at most RecheckBatch of the
// claims due, so running it often costs little and no claim waits behind others.
func (s *Service) PeriodicJobs() []*river.PeriodicJob {
	every := s.cfg.RecheckEvery
	return []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(every),
		func() (river.JobArgs, *river.InsertOpts) {
			return RecheckArgs{}, &river.InsertOpts{MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByPeriod: every}}
		}, &river.PeriodicJobOpts{RunOnStart: true})}
}
