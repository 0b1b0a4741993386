package rounds

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/probity-dev/probity/store"
)

// ProbeArgs is the River job that runs one entry's round for one due time. Jobs are
// unique by entry and due time.
type ProbeArgs struct {
	EntryID int64           `json:"entry_id" river:"unique"`
	Reason  store.DueReason `json:"reason"`
	DueAt   time.Time       `json:"due_at" river:"unique"`
}

// Kind is the River job kind.
func (ProbeArgs) Kind() string { return "probity_probe" }

// ScheduleArgs is the periodic River job that enqueues the rounds falling due.
type ScheduleArgs struct{}

// Kind is the River job kind.
func (ScheduleArgs) Kind() string { return "probity_schedule" }

// DefaultJobTimeout bounds one job of a Service, a round or a supply run, unless
// ServiceConfig.JobTimeout says otherwise: a probe takes at most its budget (15 s by
// default), a supply run a few source requests of at most 10 s each plus their
// Retry-After waits (at most 30 s per request).
const DefaultJobTimeout = 2 * time.Minute

// rescueMargin is how much longer than its longest life a job must run before it is
// taken for abandoned (see ServiceConfig.RescueAfter).
const rescueMargin = 30 * time.Second

// ServiceConfig configures a Service.
type ServiceConfig struct {
	Runner *Runner
	// Concurrency is the number of rounds one process runs at once; default 32.
	Concurrency int
	// Tick is how often the leader looks for due rounds; default 15 s, at least 1 s
	// (River's shortest unique period).
	Tick time.Duration
	// Lookahead is how far ahead due rounds are enqueued, scheduled at their due time;
	// default 0: a round is enqueued on the first tick at or after its due time, so it
	// starts at most a tick late. (A job scheduled in the future waits for River's job
	// scheduler, which promotes scheduled jobs every 5 s, so a lookahead buys nothing
	// below that.)
	Lookahead time.Duration
	// MaxEnqueue bounds the rounds enqueued per tick; default 20,000.
	MaxEnqueue int
	// PollInterval is how often workers poll for jobs when the database cannot notify
	// them (SQLite); default 1 s.
	PollInterval time.Duration
	// ID names this process among River's clients (default: River's).
	ID string
	// JobTimeout bounds one job, a round or a supply run: River cancels the job's
	// context then. A round already probed is still stored, within the Runner's
	// SaveTimeout, so a live job runs at most JobTimeout + SaveTimeout. Default
	// DefaultJobTimeout (2 min).
	JobTimeout time.Duration
	// RescueAfter is how long a job may stay running before River takes it for one
	// that a killed process left behind, and runs it again (River's
	// RescueStuckJobsAfter). It must exceed JobTimeout; a value below JobTimeout +
	// SaveTimeout may run a round whose first attempt is still storing a second time
	// (the store keeps only one round per entry and due time). Default: JobTimeout +
	// the Runner's SaveTimeout + 30 s, just above the longest a live job runs (3 min
	// with the defaults). River's own default, an hour, would leave the entries whose
	// rounds a killed process was running unprobed for that hour: their jobs stay
	// running, and the unique job blocks every new one for the same due time.
	RescueAfter time.Duration
	// Workers adds the workers of the service's other jobs (the registry sync, the
	// HTTP cache's pruning) to the River client; PeriodicJobs adds their periodic jobs.
	Workers      func(*river.Workers) error
	PeriodicJobs []*river.PeriodicJob
}

// Service runs scheduled rounds with River: the leader enqueues due rounds, every
// process works them. Several processes may run a Service on one PostgreSQL database.
type Service struct {
	cfg   ServiceConfig
	r     *Runner
	queue store.Queue
}

// NewService builds a Service; Run starts it.
func NewService(cfg ServiceConfig) (*Service, error) {
	if cfg.Runner == nil {
		return nil, errors.New("rounds: ServiceConfig needs a Runner")
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 32
	}
	if cfg.Tick <= 0 {
		cfg.Tick = 15 * time.Second
	}
	cfg.Tick = max(cfg.Tick, time.Second)
	cfg.Lookahead = max(cfg.Lookahead, 0)
	if cfg.MaxEnqueue <= 0 {
		cfg.MaxEnqueue = 20000
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.JobTimeout <= 0 {
		cfg.JobTimeout = DefaultJobTimeout
	}
	switch {
	case cfg.RescueAfter <= 0:
		cfg.RescueAfter = cfg.JobTimeout + cfg.Runner.cfg.SaveTimeout + rescueMargin
	case cfg.RescueAfter <= cfg.JobTimeout:
		return nil, fmt.Errorf("rounds: RescueAfter (%s) must exceed JobTimeout (%s), or live jobs would be run twice", cfg.RescueAfter, cfg.JobTimeout)
	}
	s := &Service{cfg: cfg, r: cfg.Runner}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &probeWorker{s: s}); err != nil {
		return nil, err
	}
	if err := river.AddWorkerSafely(workers, &scheduleWorker{s: s}); err != nil {
		return nil, err
	}
	if cfg.Workers != nil {
		if err := cfg.Workers(workers); err != nil {
			return nil, err
		}
	}
	rc := &river.Config{
		ID:                cfg.ID,
		Logger:            s.r.cfg.Logger,
		Workers:           workers,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: cfg.Concurrency}},
		FetchPollInterval: cfg.PollInterval,
		FetchCooldown:     min(cfg.PollInterval, river.FetchCooldownDefault),
		JobTimeout:        cfg.JobTimeout,
		// A job left running by a killed process is retried once it has run this
		// long; River's leader looks for such jobs every 30 s.
		RescueStuckJobsAfter: cfg.RescueAfter,
		MaxAttempts:          5,
		PeriodicJobs: append([]*river.PeriodicJob{river.NewPeriodicJob(
			river.PeriodicInterval(cfg.Tick),
			func() (river.JobArgs, *river.InsertOpts) {
				return ScheduleArgs{}, &river.InsertOpts{MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByPeriod: cfg.Tick}}
			},
			&river.PeriodicJobOpts{RunOnStart: true},
		)}, cfg.PeriodicJobs...),
	}
	q, err := s.r.cfg.Store.NewQueue(rc)
	if err != nil {
		return nil, fmt.Errorf("couldn't create the job queue: %w", err)
	}
	s.queue = q
	return s, nil
}

// Run works rounds until ctx is cancelled, then stops gracefully: rounds in flight
// finish and are stored (within River's soft stop), and no new ones start.
func (s *Service) Run(ctx context.Context) error {
	// River derives its jobs' contexts from the one Start gets, so cancelling that
	// would cut the probes in flight. Start gets a context ctx's cancellation does not
	// reach; the soft Stop below lets running rounds finish and store.
	if err := s.queue.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("couldn't start the job queue: %w", err)
	}
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.queue.Stop(stopCtx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("couldn't stop the job queue: %w", err)
	}
	return nil
}

// EnqueueDue enqueues a probe job for every due time up to now + Lookahead and
// returns how many were new. The periodic job calls it on River's leader.
func (s *Service) EnqueueDue(ctx context.Context) (int, error) {
	now := s.r.cfg.Now()
	dues, err := s.r.cfg.Store.DueBefore(ctx, now.Add(s.cfg.Lookahead), s.cfg.MaxEnqueue)
	if err != nil {
		return 0, fmt.Errorf("couldn't read due rounds: %w", err)
	}
	n := 0
	for _, d := range dues {
		opts := &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}}
		if d.At.After(now) {
			// Only a future time: River files any job with a ScheduledAt as scheduled,
			// to be promoted by its job scheduler up to 5 s later.
			opts.ScheduledAt = d.At
		}
		skipped, err := s.queue.Insert(ctx, ProbeArgs{EntryID: d.EntryID, Reason: d.Reason, DueAt: d.At}, opts)
		if err != nil {
			return n, fmt.Errorf("couldn't enqueue the round of entry %d: %w", d.EntryID, err)
		}
		if !skipped {
			n++
		}
	}
	if n > 0 {
		s.r.cfg.Logger.Info("enqueued rounds", "new", n, "due", len(dues))
	}
	return n, nil
}

type scheduleWorker struct {
	river.WorkerDefaults[ScheduleArgs]
	s *Service
}

func (w *scheduleWorker) Work(ctx context.Context, _ *river.Job[ScheduleArgs]) error {
	_, err := w.s.EnqueueDue(ctx)
	return err
}

type probeWorker struct {
	river.WorkerDefaults[ProbeArgs]
	s *Service
}

func (w *probeWorker) Work(ctx context.Context, job *river.Job[ProbeArgs]) error {
	return w.s.work(ctx, job.Args)
}

// work runs one probe job: a round, unless the due time moved meanwhile (a manual round
// ran, or the entry was deleted), the entry is unlisted (its listing deprecated or
// deleted: kept with its history, not read; DueBefore leaves it out, and a job enqueued
// before only moves its due time on, skipUnlisted), or a status check finds the entry
// already seen today. A package or
// repository entry gets its supply checks (supply, and status when its version or README
// changed) and its cadence and confirming reads (Runner.Watch) instead of rounds.
func (s *Service) work(ctx context.Context, a ProbeArgs) error {
	st := s.r.cfg.Store
	e, err := st.EntryByID(ctx, a.EntryID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	dues, err := st.DueTimes(ctx, e.ID)
	if err != nil {
		return err
	}
	current, hasCadence := false, false
	for _, d := range dues {
		if d.Reason == a.Reason && d.At.Equal(a.DueAt) {
			current = true
		}
		hasCadence = hasCadence || d.Reason == store.ReasonCadence
	}
	if !current {
		return nil // superseded: the due time moved on since the job was enqueued
	}
	due := store.Due{EntryID: e.ID, Reason: a.Reason, At: a.DueAt}
	now := s.r.cfg.Now()
	if !e.Listed {
		return st.SetDue(ctx, e.ID, s.skipUnlisted(e, due, now))
	}
	if e.Kind != store.KindRemote {
		return s.workPart(ctx, e, due, hasCadence, now)
	}
	if a.Reason == store.ReasonSupply {
		_, err := s.r.RunSupply(ctx, e, false)
		return err
	}
	if a.Reason == store.ReasonStatus && sameUTCDay(e.LastRoundAt, now) {
		return st.SetDue(ctx, e.ID, store.DueUpdate{Reason: store.ReasonStatus, At: s.r.cfg.Schedule.nextStatus(a.DueAt, now)})
	}
	if _, err := s.r.RunEntry(ctx, e, due, ""); err != nil {
		s.r.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "round failed", slog.String("entry", e.Slug), slog.String("error", err.Error()))
		return err
	}
	return nil
}

// workPart runs a due time of a package or repository entry. An entry added before
// these entries had a cadence gets its first cadence read with its next supply or
// status job.
func (s *Service) workPart(ctx context.Context, e store.Entry, due store.Due, hasCadence bool, now time.Time) error {
	var err error
	switch due.Reason {
	case store.ReasonSupply:
		_, err = s.r.RunSupply(ctx, e, false)
	case store.ReasonStatus:
		_, err = s.r.RunSupply(ctx, e, true)
	case store.ReasonCadence, store.ReasonConfirm:
		_, err = s.r.Watch(ctx, e, due)
		hasCadence = true
	default:
		// No other reason is scheduled for these entries: clear it, or it stays due.
		err = s.r.cfg.Store.SetDue(ctx, e.ID, store.DueUpdate{Reason: due.Reason})
	}
	if err != nil {
		s.r.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "supply or watch failed", slog.String("entry", e.Slug),
			slog.String("reason", string(due.Reason)), slog.String("error", err.Error()))
		return err
	}
	if !hasCadence {
		return s.r.cfg.Store.SetDue(ctx, e.ID, store.DueUpdate{Reason: store.ReasonCadence, At: s.r.cfg.Schedule.nextCadence(e, now, now)})
	}
	return nil
}

// skipUnlisted is the due-time update of a job of an entry unlisted since it was
// enqueued: not read, the due time moves on as if it had been (a confirmation is
// dropped), so that the job's arguments, which River keeps unique while its completed
// job is kept, are new ones when the entry is listed again. While it stays unlisted,
// DueBefore leaves the moved due time out.
func (s *Service) skipUnlisted(e store.Entry, due store.Due, now time.Time) store.DueUpdate {
	sch := s.r.cfg.Schedule
	switch due.Reason {
	case store.ReasonCadence:
		return store.DueUpdate{Reason: due.Reason, At: sch.nextCadence(e, due.At, now)}
	case store.ReasonStatus:
		return store.DueUpdate{Reason: due.Reason, At: sch.nextStatus(due.At, now)}
	case store.ReasonSupply:
		return store.DueUpdate{Reason: due.Reason, At: now.Add(supplyInterval).Truncate(time.Millisecond)}
	}
	return store.DueUpdate{Reason: due.Reason}
}

func sameUTCDay(a, b time.Time) bool {
	if a.IsZero() {
		return false
	}
	ya, ma, da := a.UTC().Date()
	yb, mb, db := b.UTC().Date()
	return ya == yb && ma == mb && da == db
}
