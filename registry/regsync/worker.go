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

// DefaultSyncTimeout bounds one sync job: a full walk of the official registry is a
// few hundred pages of at most 60 s each (registry.Config.PageTimeout), typically a
// second or two each. A walk cut short resumes at the next job.
const DefaultSyncTimeout = 30 * time.Minute

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
	// Timeout bounds one job; default DefaultSyncTimeout.
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
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultSyncTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &SyncWorker{cfg: cfg}, nil
}

// Timeout is the job's timeout, which replaces the client's (a round's 2 minutes).
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
// registry runs per interval, whatever the number of processes.
func PeriodicSync(baseURL string, interval time.Duration) *river.PeriodicJob {
	if interval <= 0 {
		interval = DefaultSyncInterval
	}
	return river.NewPeriodicJob(
		river.PeriodicInterval(interval),
		func() (river.JobArgs, *river.InsertOpts) {
			return SyncArgs{BaseURL: baseURL}, &river.InsertOpts{MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByArgs: true, ByPeriod: interval}}
		},
		&river.PeriodicJobOpts{RunOnStart: true},
	)
}
