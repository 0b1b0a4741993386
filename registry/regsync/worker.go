package regsync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/probity-dev/probity/registry"
)

// SyncArgs is the River job that syncs one registry (Syncer.Sync). Under `probity
// serve` PeriodicSync inserts it; one job per registry and period.
type SyncArgs struct {
	// BaseURL is the registry's base URL.
	BaseURL string `json:"base_url" river:"unique"`
	// Full reads every server (SyncOptions.Full).
	Full bool `json:"full,omitempty"`
}

// Kind is the River job kind.
func (SyncArgs) Kind() string { return "probity_registry_sync" }

// DefaultSyncAttempts is how often River runs one sync job before it gives up until
// the next period. A sync cut short by the job timeout or a refused page has stored
// what it read and its place, so each retry continues the walk: a first full sync
// longer than one job's timeout completes over several attempts (River waits attempt⁴
// seconds between them: 1 s, 16 s, 81 s, …).
const DefaultSyncAttempts = 10

// DefaultSyncInterval is how often PeriodicSync syncs: the cadence of seed 000's
// reads.
const DefaultSyncInterval = 3 * time.Hour

// WorkerConfig configures a SyncWorker.
type WorkerConfig struct {
	// Store keeps the servers and the sync state.
	Store SyncStore
	// Client is the template of each job's registry client; its BaseURL is replaced
	// by the job's. Its HTTPClient must go through the egress guard (the default one
	// does).
	Client registry.Config
	// Due gives new entries their first due times (rounds.Schedule.FirstDue).
	Due DueFunc
	// Timeout bounds one job; 0 leaves it to the River client's JobTimeout (2 min
	// under serve). It must stay below the client's RescueStuckJobsAfter, or River
	// would take a live sync for an abandoned one and start it a second time.
	Timeout time.Duration
	// Logger receives the sync's events; default discards.
	Logger *slog.Logger
}

// SyncWorker works SyncArgs jobs.
type SyncWorker struct {
	river.WorkerDefaults[SyncArgs]
	cfg WorkerConfig
}

// NewSyncWorker returns a SyncWorker for cfg; register it with river.AddWorker.
func NewSyncWorker(cfg WorkerConfig) (*SyncWorker, error) {
	if cfg.Store == nil {
		return nil, errors.New("regsync: WorkerConfig needs a Store")
	}
	cfg.Timeout = max(cfg.Timeout, 0)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &SyncWorker{cfg: cfg}, nil
}

// Timeout is the job's timeout: WorkerConfig.Timeout, or 0 for the client's.
func (w *SyncWorker) Timeout(*river.Job[SyncArgs]) time.Duration { return w.cfg.Timeout }

// Work syncs the job's registry. A sync that stops (a refused page, the timeout) has
// stored what it read and resumes at the next job; the error makes River retry it.
func (w *SyncWorker) Work(ctx context.Context, job *river.Job[SyncArgs]) error {
	cc := w.cfg.Client
	cc.BaseURL = job.Args.BaseURL
	if cc.Logger == nil {
		cc.Logger = w.cfg.Logger
	}
	client, err := registry.New(cc)
	if err != nil {
		return river.JobCancel(fmt.Errorf("registry sync: %w", err)) // a bad URL does not get better
	}
	sy, err := NewSyncer(SyncConfig{Store: w.cfg.Store, Client: client, Due: w.cfg.Due, Logger: w.cfg.Logger})
	if err != nil {
		return river.JobCancel(err)
	}
	sum, err := sy.Sync(ctx, SyncOptions{Full: job.Args.Full})
	if err != nil {
		w.cfg.Logger.WarnContext(ctx, "registry sync stopped", "registry", sum.BaseURL, "pages", sum.Pages, "err", err)
	}
	return err
}

// PeriodicSync is the periodic job that syncs the registry at baseURL every interval
// (default DefaultSyncInterval), first when the service starts; at most one job per
// registry is inserted per interval, whatever the number of processes, and it is
// tried DefaultSyncAttempts times.
func PeriodicSync(baseURL string, interval time.Duration) *river.PeriodicJob {
	if interval <= 0 {
		interval = DefaultSyncInterval
	}
	return river.NewPeriodicJob(
		river.PeriodicInterval(interval),
		func() (river.JobArgs, *river.InsertOpts) {
			return SyncArgs{BaseURL: baseURL}, &river.InsertOpts{MaxAttempts: DefaultSyncAttempts, UniqueOpts: river.UniqueOpts{ByArgs: true, ByPeriod: interval}}
		},
		&river.PeriodicJobOpts{RunOnStart: true},
	)
}
