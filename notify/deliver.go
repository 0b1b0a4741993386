package notify

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/probity-dev/probity/store"
)

// Delivery: exactly once in effect.
//
// A worker claims the outbox row due first (pending → sending, with a lease), composes
// the e-mail from the store, sends it, and stores the outcome in one short transaction
// (sent, with the deleted followed entries it told). No transaction is held across the
// send.
//
//   - A worker killed before the server's reply to the end of DATA leaves a message the
//     server never accepted: an SMTP server keeps nothing of a transaction that did not
//     end with its 250 to the final ".". The row stays sending until its lease runs
//     out, and is then claimed and sent again: the e-mail is not lost.
//   - A worker killed after the server's 250 and before its commit is the one window in
//     which an e-mail goes twice: the row is claimed again after its lease and sent a
//     second time, with the same Message-ID (receivers and mail readers that
//     deduplicate by Message-ID show it once). The window is the time of one UPDATE.
//   - A claim whose lease ran out while its worker was still sending (a send slower than
//     the lease, which Config forbids by Lease > SendTimeout) is overtaken: the late
//     worker's outcome changes nothing (ErrLeaseLost), as the row's attempt number has
//     moved on.
//   - A transient failure puts the row back to pending after the next wait of Backoff
//     (1 min, 5 min, 30 min, 2 h, 6 h); a permanent refusal (SMTP 5xx), or a failure
//     after the last wait, fails it for good, with the error, which the Followed page
//     shows.

// DeliverOne claims and sends the e-mail due first; delivered false when none was due.
// An error is the store's: a failed send is an outcome, not an error.
func (s *Service) DeliverOne(ctx context.Context) (delivered bool, err error) {
	if s.cfg.Sender == nil {
		return false, errors.New("notify: no Sender configured: e-mails cannot be delivered")
	}
	o, ok, err := s.st.ClaimEmail(ctx, s.now(), s.cfg.Lease)
	if err != nil || !ok {
		return false, err
	}
	out := store.EmailOutcome{ID: o.ID, Attempt: o.Attempts}
	// A claimed e-mail is finished even when ctx ends (the job's budget): composing and
	// sending are bounded by SendTimeout, below the lease, and the outcome is stored.
	work, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.SendTimeout)
	defer cancel()
	em, err := s.Compose(work, o)
	var nothing errNothing
	switch {
	case errors.As(err, &nothing):
		out.State, out.Error = store.OutboxSkipped, nothing.Error()
	case err != nil:
		// The store failed: try again later, as for a failed send.
		s.retry(&out, o.Attempts, fmt.Errorf("couldn't compose: %w", err))
	default:
		err = s.cfg.Sender.Send(work, em.Message)
		switch {
		case err == nil:
			out.State, out.ToldGone = store.OutboxSent, em.ToldGone
		case s.cfg.IsPermanent != nil && s.cfg.IsPermanent(err):
			out.State, out.Error = store.OutboxFailed, "refused: "+err.Error()
		default:
			s.retry(&out, o.Attempts, err)
		}
	}
	out.At = s.now()
	// The outcome is stored even when ctx ended meanwhile (the job's timeout): a sent
	// e-mail must be marked sent.
	fctx, cancelFinish := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancelFinish()
	if err := s.st.FinishEmail(fctx, out); errors.Is(err, store.ErrLeaseLost) {
		// Another worker holds the row now (this one was too slow): its outcome counts.
		s.log.WarnContext(ctx, "e-mail claim overtaken", "outbox", o.ID, "attempt", o.Attempts)
		return true, nil
	} else if err != nil {
		return true, err
	}
	s.log.InfoContext(ctx, "e-mail", "outbox", o.ID, "attempt", o.Attempts, "state", out.State)
	return true, nil
}

// retry sets out to a retry after attempt's wait, or to failed after the last one.
func (s *Service) retry(out *store.EmailOutcome, attempt int, err error) {
	msg := strings.ToValidUTF8(err.Error(), "")
	if attempt > len(s.cfg.Backoff) {
		out.State, out.Error = store.OutboxFailed, fmt.Sprintf("gave up after %d attempts: %s", attempt, msg)
		return
	}
	out.State, out.Error = store.OutboxPending, msg
	out.NextAttemptAt = s.now().Add(s.cfg.Backoff[max(attempt, 1)-1])
}

// Deliver sends due e-mails with Config.Concurrency workers until none is due or ctx
// ends, and returns how many it handled (sent, retried, failed or skipped).
func (s *Service) Deliver(ctx context.Context) (int, error) {
	var (
		mu    sync.Mutex
		n     int
		first error
		wg    sync.WaitGroup
	)
	for range s.cfg.Concurrency {
		wg.Go(func() {
			for ctx.Err() == nil {
				ok, err := s.DeliverOne(ctx)
				mu.Lock()
				if ok {
					n++
				}
				if err != nil && first == nil && ctx.Err() == nil {
					first = err
				}
				stop := first != nil
				mu.Unlock()
				if !ok || stop {
					return
				}
			}
		})
	}
	wg.Wait()
	return n, first
}

// River jobs: planning and delivery every minute, each unique per period so that
// several processes run one of each.

// PlanArgs is the periodic planning job.
type PlanArgs struct{}

// Kind is the River job kind.
func (PlanArgs) Kind() string { return "probity_notify_plan" }

// DeliverArgs is the delivery job: it drains the outbox for up to DeliverBudget.
type DeliverArgs struct{}

// Kind is the River job kind.
func (DeliverArgs) Kind() string { return "probity_notify_deliver" }

// JobInterval is how often the planning and delivery jobs run.
const JobInterval = time.Minute

// DeliverBudget is how long one delivery job sends before it ends (the next one goes on).
const DeliverBudget = 50 * time.Second

type planWorker struct {
	river.WorkerDefaults[PlanArgs]
	s *Service
}

func (w *planWorker) Work(ctx context.Context, _ *river.Job[PlanArgs]) error {
	_, err := w.s.Plan(ctx)
	return err
}

type deliverWorker struct {
	river.WorkerDefaults[DeliverArgs]
	s *Service
}

// Timeout is the budget and the lease: a job stops claiming at DeliverBudget and
// finishes the sends under way.
func (w *deliverWorker) Timeout(*river.Job[DeliverArgs]) time.Duration {
	return DeliverBudget + w.s.cfg.Lease
}

func (w *deliverWorker) Work(ctx context.Context, _ *river.Job[DeliverArgs]) error {
	claimCtx, cancel := context.WithTimeout(ctx, DeliverBudget)
	defer cancel()
	_, err := w.s.Deliver(claimCtx)
	return err
}

func deliverOpts() *river.InsertOpts {
	return &river.InsertOpts{MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByPeriod: JobInterval}}
}

// Workers adds the planning and delivery workers (rounds.ServiceConfig.Workers).
func (s *Service) Workers(ws *river.Workers) error {
	if err := river.AddWorkerSafely(ws, &planWorker{s: s}); err != nil {
		return err
	}
	return river.AddWorkerSafely(ws, &deliverWorker{s: s})
}

// PeriodicJobs are the planning and delivery jobs, every JobInterval
// (rounds.ServiceConfig.PeriodicJobs); delivery only with a Sender.
func (s *Service) PeriodicJobs() []*river.PeriodicJob {
	jobs := []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(JobInterval),
		func() (river.JobArgs, *river.InsertOpts) {
			return PlanArgs{}, &river.InsertOpts{MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByPeriod: JobInterval}}
		}, &river.PeriodicJobOpts{RunOnStart: true})}
	if s.cfg.Sender != nil {
		jobs = append(jobs, river.NewPeriodicJob(river.PeriodicInterval(JobInterval),
			func() (river.JobArgs, *river.InsertOpts) { return DeliverArgs{}, deliverOpts() },
			&river.PeriodicJobOpts{RunOnStart: true}))
	}
	return jobs
}
