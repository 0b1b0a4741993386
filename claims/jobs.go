package claims

import (
	"context"

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

func (w *recheckWorker) Work(ctx context.Context, _ *river.Job[RecheckArgs]) error {
	r, err := w.s.Recheck(ctx)
	w.s.log.Info("claims re-checked", "checked", r.Checked, "proven", r.Proven, "lapsed", r.Lapsed, "unanswered", r.Unanswered)
	return err
}

// Workers adds the re-check's worker (rounds.ServiceConfig.Workers).
func (s *Service) Workers(ws *river.Workers) error {
	return river.AddWorkerSafely(ws, &recheckWorker{s: s})
}

// PeriodicJobs is the re-check, every RecheckInterval and once at start
// (rounds.ServiceConfig.PeriodicJobs); it re-proves only the claims due, so running it
// at every start costs little.
func (s *Service) PeriodicJobs() []*river.PeriodicJob {
	every := s.cfg.RecheckInterval
	return []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(every),
		func() (river.JobArgs, *river.InsertOpts) {
			return RecheckArgs{}, &river.InsertOpts{MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByPeriod: every}}
		}, &river.PeriodicJobOpts{RunOnStart: true})}
}
