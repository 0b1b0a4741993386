package store

import (
	"context"
	"errors"
)

var errServersPending = errors.New("store: servers are being implemented (issue 14, lead)")

func (s *sqlStore) UpsertServer(ctx context.Context, u ServerUpsert) (UpsertResult, error) {
	return UpsertResult{}, errServersPending
}
func (s *sqlStore) EntryListing(ctx context.Context, entryID int64) (Listing, []Part, error) {
	return Listing{}, nil, errServersPending
}
func (s *sqlStore) Listings(ctx context.Context, q ListingQuery) ([]ServerListing, error) {
	return nil, errServersPending
}
func (s *sqlStore) RegistrySyncState(ctx context.Context, baseURL string) (RegistrySync, error) {
	return RegistrySync{}, errServersPending
}
func (s *sqlStore) SaveRegistrySync(ctx context.Context, r RegistrySync) error { return errServersPending }
func (s *sqlStore) HTTPCache(ctx context.Context, key string) (HTTPCacheEntry, error) {
	return HTTPCacheEntry{}, errServersPending
}
func (s *sqlStore) PutHTTPCache(ctx context.Context, e HTTPCacheEntry) error { return errServersPending }
