package webhook

import (
	"context"
	"time"

	"github.com/riverqueue/river"
)

// TickArgs is the River job that plans new deliveries and sends the due ones
// (Service.Plan, then Service.Deliver). PeriodicJobs inserts one per Interval,
// whatever the number of processes.
type TickArgs struct{}

// Kind is the River job kind.
func (TickArgs) Kind() string { return "probity_webhooks" }

// tickWorker works TickArgs jobs.
type tickWorker struct {
	river.WorkerDefaults[TickArgs]
	s *Service
}

// Timeout bounds one job: it stops claiming at the interval, and an attempt in flight
// ends within Timeout.
func (w *tickWorker) Timeout(*river.Job[TickArgs]) time.Duration {
	return w.s.cfg.Interval + 2*w.s.cfg.Timeout
}

// Work plans, then delivers what is due for at most one interval. A failed planning run
// is retried by the next job (planning is idempotent, and its place is kept only after
// it succeeded); deliveries are made either way.
func (w *tickWorker) Work(ctx context.Context, job *river.Job[TickArgs]) error {
	var planErr error
	if w.s.cfg.Followers != nil {
		if _, planErr = w.s.Plan(ctx); planErr != nil {
			w.s.log.WarnContext(ctx, "webhook planning failed", "err", planErr)
		}
	}
	if len(w.s.cfg.Key) > 0 {
		if _, err := w.s.Deliver(ctx, w.s.cfg.Interval); err != nil {
			return err
		}
	}
	return planErr
}

// AddWorkers adds the service's River worker (rounds.ServiceConfig.Workers).
func (s *Service) AddWorkers(workers *river.Workers) error {
	return river.AddWorkerSafely(workers, &tickWorker{s: s})
}

// PeriodicJobs returns the service's periodic job (rounds.ServiceConfig.PeriodicJobs):
// one TickArgs per Interval, first when the service starts, tried once (the next one
// comes an interval later).
func (s *Service) PeriodicJobs() []*river.PeriodicJob {
	every := s.cfg.Interval
	return []*river.PeriodicJob{river.NewPeriodicJob(
		river.PeriodicInterval(every),
		func() (river.JobArgs, *river.InsertOpts) {
			return TickArgs{}, &river.InsertOpts{MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByPeriod: every}}
		},
		&river.PeriodicJobOpts{RunOnStart: true},
	)}
}
