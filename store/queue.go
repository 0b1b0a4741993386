package store

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
)

// riverQueue adapts a River client to Queue, whatever the driver's transaction type
// (pgx.Tx on PostgreSQL, *sql.Tx on SQLite), so the transaction type stays in store.
type riverQueue[TTx any] struct {
	client *river.Client[TTx]
}

// newRiverQueue builds a River client with driver and cfg and wraps it.
func newRiverQueue[TTx any](driver riverdriver.Driver[TTx], cfg *river.Config) (*riverQueue[TTx], error) {
	if cfg == nil {
		return nil, fmt.Errorf("couldn't build the job queue: no River configuration")
	}
	client, err := river.NewClient(driver, cfg)
	if err != nil {
		return nil, fmt.Errorf("couldn't build the job queue: %w", err)
	}
	return &riverQueue[TTx]{client: client}, nil
}

// riverConfig is cfg with the store's logger when cfg names none (Config.Logger
// receives queue events); cfg itself is left alone.
func riverConfig(cfg *river.Config, log *slog.Logger) *river.Config {
	if cfg == nil || cfg.Logger != nil {
		return cfg
	}
	c := *cfg
	c.Logger = log
	return &c
}

// Start starts the client's workers and maintenance.
func (q *riverQueue[TTx]) Start(ctx context.Context) error {
	if err := q.client.Start(ctx); err != nil {
		return fmt.Errorf("couldn't start the job queue: %w", err)
	}
	return nil
}

// Stop waits for running jobs to finish, until ctx is done.
func (q *riverQueue[TTx]) Stop(ctx context.Context) error {
	if err := q.client.Stop(ctx); err != nil {
		return fmt.Errorf("couldn't stop the job queue: %w", err)
	}
	return nil
}

// Insert enqueues one job; skipped reports that a unique job already covers it.
func (q *riverQueue[TTx]) Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (bool, error) {
	res, err := q.client.Insert(ctx, args, opts)
	if err != nil {
		return false, fmt.Errorf("couldn't enqueue a %s job: %w", args.Kind(), err)
	}
	return res.UniqueSkippedAsDuplicate, nil
}
