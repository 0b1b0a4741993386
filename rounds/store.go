package rounds

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/probity-dev/probity/store"
)

// Store is what a Runner reads and writes of the store (store.Store is one): the entries
// and their due times, attempts and runs, the rounds and supply runs it stores, and the
// job queue it schedules on. Declared here, by its consumer, so that a Runner's needs
// are visible and a test can stand in for the store with these methods only.
type Store interface {
	EntryByID(ctx context.Context, id int64) (store.Entry, error)
	Entries(ctx context.Context, afterID int64, limit int) ([]store.Entry, error)

	DueBefore(ctx context.Context, t time.Time, limit int) ([]store.Due, error)
	SetDue(ctx context.Context, entryID int64, u store.DueUpdate) error
	DueTimes(ctx context.Context, entryID int64) ([]store.Due, error)

	StartAttempt(ctx context.Context, entryID int64, dueAt, at time.Time) (int, error)
	SaveRound(ctx context.Context, r *store.Round) (int64, error)
	Rounds(ctx context.Context, entryID int64, limit int) ([]store.RoundSummary, error)
	Surface(ctx context.Context, fingerprint string) ([]byte, error)

	SaveSupply(ctx context.Context, r store.SupplyRecord, due []store.DueUpdate) (int64, error)
	SupplyRuns(ctx context.Context, entryID int64, limit int) ([]store.SupplyRecord, error)
	// EntryListing reads a server's listing and linked parts: the supply checks run over
	// the whole server (supplyTarget).
	EntryListing(ctx context.Context, entryID int64) (store.Listing, []store.Part, error)

	UnfinishedRun(ctx context.Context) (store.Run, error)
	StartRun(ctx context.Context, r store.Run) error
	FinishRun(ctx context.Context, id string, at time.Time) error

	NewQueue(cfg *river.Config) (store.Queue, error)
}

var _ Store = store.Store(nil)
