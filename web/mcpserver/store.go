package mcpserver

import (
	"context"

	"github.com/probity-dev/probity/store"
)

// Store is what the MCP tools read of the store (store.Store is one); they never write.
// Declared here, by its consumer: the directory read model for search_servers, an
// entry with its rounds, supply runs and changes, and the round envelopes.
type Store interface {
	Directory(ctx context.Context, q store.DirectoryQuery) (store.DirectoryPage, error)
	Entry(ctx context.Context, slug string) (store.Entry, error)
	Rounds(ctx context.Context, entryID int64, limit int) ([]store.RoundSummary, error)
	SupplyRuns(ctx context.Context, entryID int64, limit int) ([]store.SupplyRecord, error)
	Changes(ctx context.Context, f store.ChangeFilter) ([]store.ChangeRecord, error)
	Envelopes(ctx context.Context, f store.EnvelopeFilter, fn func(store.EnvelopeRecord) error) error
}

var _ Store = store.Store(nil)
