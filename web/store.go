package web

import (
	"context"

	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/store"
)

// Store is what the site reads of the store (store.Store is one); it never writes.
// Declared here, by its consumer: the directory read model, an entry with its digest,
// its newest rounds (the card's newest signed round), rounds' results and surfaces, supply runs, changes, the round envelopes it serves, the
// history state (whose confirmed tool list the pages show), the listed servers the
// subregistry publishes (subregistry.go), and what the statistics page reads
// (history.StatsStore).
type Store interface {
	history.StatsStore
	Directory(ctx context.Context, q store.DirectoryQuery) (store.DirectoryPage, error)
	Entry(ctx context.Context, slug string) (store.Entry, error)
	EntryDigest(ctx context.Context, slug string, q store.EntryQuery) (store.EntryDigest, error)
	Rounds(ctx context.Context, entryID int64, limit int) ([]store.RoundSummary, error)
	Listings(ctx context.Context, q store.ListingQuery) ([]store.ServerListing, error)
	RoundResults(ctx context.Context, roundID int64) ([]byte, error)
	SupplyRuns(ctx context.Context, entryID int64, limit int) ([]store.SupplyRecord, error)
	Envelopes(ctx context.Context, f store.EnvelopeFilter, fn func(store.EnvelopeRecord) error) error
	HistoryState(ctx context.Context, entryID int64) (state []byte, processed int64, err error)
	// MaintainerListing is what a maintainer of the entry wrote (Revision 0: nothing).
	MaintainerListing(ctx context.Context, entryID int64) (store.MaintainerListing, error)
	// Disputes are the entry pages' disputes and outcomes (dispute.go).
	Disputes(ctx context.Context, f store.DisputeFilter) ([]store.DisputeRecord, error)
	// Withdrawals are the entry's withdrawal records (Verified withdrawn or restored).
	Withdrawals(ctx context.Context, entryID int64) ([]store.Withdrawal, error)
}

var _ Store = store.Store(nil)
