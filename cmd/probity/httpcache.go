package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/riverqueue/river"

	"github.com/probity-dev/probity/checks/supply"
	"github.com/probity-dev/probity/store"
)

// httpCacheStore is the part of store.Store the supply client's persistent cache uses.
type httpCacheStore interface {
	HTTPCache(ctx context.Context, key string) (store.HTTPCacheEntry, error)
	PutHTTPCache(ctx context.Context, e store.HTTPCacheEntry) error
}

// maxHTTPCacheKey is the longest key the http_cache table takes (its CHECK constraint
// counts characters; bytes are at least as many).
const maxHTTPCacheKey = 4096

// httpCache keeps the supply sources' responses in the store (supply.CacheStore), so
// "probity round", "serve" and a restart start warm and revalidate with ETag /
// Last-Modified instead of fetching again. A key or body beyond the table's limits is
// not kept; a header column that is not JSON reads as no headers.
type httpCache struct{ st httpCacheStore }

var _ supply.CacheStore = httpCache{}

func (h httpCache) Get(ctx context.Context, key string) (supply.CachedResponse, bool, error) {
	if key == "" || len(key) > maxHTTPCacheKey {
		return supply.CachedResponse{}, false, nil
	}
	e, err := h.st.HTTPCache(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return supply.CachedResponse{}, false, nil
	}
	if err != nil {
		return supply.CachedResponse{}, false, fmt.Errorf("couldn't read the HTTP cache: %w", err)
	}
	r := supply.CachedResponse{Key: e.Key, Status: e.Status, ETag: e.ETag, LastModified: e.LastModified, Body: e.Body, StoredAt: e.StoredAt}
	if len(e.Header) > 0 {
		var hdr http.Header
		if json.Unmarshal(e.Header, &hdr) == nil {
			r.Header = hdr
		}
	}
	return r, true, nil
}

func (h httpCache) Put(ctx context.Context, r supply.CachedResponse) error {
	if r.Key == "" || len(r.Key) > maxHTTPCacheKey || len(r.Body) > store.MaxHTTPCacheBody {
		return nil // not kept: the memory level still has it
	}
	e := store.HTTPCacheEntry{Key: r.Key, Status: r.Status, ETag: r.ETag, LastModified: r.LastModified, Body: r.Body, StoredAt: r.StoredAt}
	if e.Body == nil {
		e.Body = []byte{} // the column is NOT NULL
	}
	if len(r.Header) > 0 {
		b, err := json.Marshal(r.Header)
		if err != nil {
			return fmt.Errorf("couldn't encode the kept headers: %w", err)
		}
		e.Header = b
	}
	if err := h.st.PutHTTPCache(ctx, e); err != nil {
		return fmt.Errorf("couldn't keep a response in the HTTP cache: %w", err)
	}
	return nil
}

// httpCacheMaxAge is how long a kept response may go without being revalidated before
// serve prunes it: a source every watched entry reads is revalidated at least weekly
// (the supply checks), so what is older belongs to entries gone or parts unlinked.
const httpCacheMaxAge = 30 * 24 * time.Hour

// pruneArgs is the daily job that prunes the HTTP cache.
type pruneArgs struct{}

// Kind is the River job kind.
func (pruneArgs) Kind() string { return "probity_prune_http_cache" }

// pruneWorker deletes the kept responses not revalidated within httpCacheMaxAge.
type pruneWorker struct {
	river.WorkerDefaults[pruneArgs]
	st interface {
		PruneHTTPCache(ctx context.Context, before time.Time) (int64, error)
	}
	now func() time.Time
	log *slog.Logger
}

func (w *pruneWorker) Work(ctx context.Context, _ *river.Job[pruneArgs]) error {
	n, err := w.st.PruneHTTPCache(ctx, w.now().Add(-httpCacheMaxAge))
	if err != nil {
		return err
	}
	w.log.InfoContext(ctx, "HTTP cache pruned", "responses", n)
	return nil
}

// prunePeriodic inserts the pruning job daily, first at start; one job a day whatever
// the number of processes.
func prunePeriodic() *river.PeriodicJob {
	const every = 24 * time.Hour
	return river.NewPeriodicJob(river.PeriodicInterval(every),
		func() (river.JobArgs, *river.InsertOpts) {
			return pruneArgs{}, &river.InsertOpts{MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByPeriod: every}}
		},
		&river.PeriodicJobOpts{RunOnStart: true})
}
