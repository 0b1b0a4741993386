package supply

import (
	"context"
	"log/slog"
	"net/http"
	"time"
)

// CachedResponse is one response a CacheStore keeps across restarts.
type CachedResponse struct {
	// Key is the Client's cache key: method, URL, Accept, the non-secret request
	// headers, a hash of a request body, and whether the request carried credentials.
	// It never holds a credential.
	Key string
	// Status is 200, or 404/410 for a negative answer (kept so that a restart does not
	// serve a 200 the source has since withdrawn).
	Status       int
	ETag         string
	LastModified string
	// Header holds the kept response headers: Content-Type only. Never Set-Cookie,
	// quota headers or anything a request sent.
	Header http.Header
	// Body is the response body, at most MaxStoredBody bytes; empty for 404/410.
	Body []byte
	// StoredAt is when the response was fetched or last revalidated (a 304).
	StoredAt time.Time
}

// MaxStoredBody is the largest body the Client hands to its CacheStore; larger
// responses stay in memory only. It equals the store's limit (store.MaxHTTPCacheBody).
const MaxStoredBody = 8 << 20

// CacheStore is the persistent level of the Client's cache, under its in-memory LRU:
// responses kept in it survive a restart, so a new process starts warm and revalidates
// with If-None-Match / If-Modified-Since instead of fetching everything again.
//
// Contract:
//   - safe for concurrent use, by several processes sharing one store included (the
//     last Put of a key wins);
//   - Get returns ok false and a nil error for a key it does not hold, and a Body the
//     store will not modify afterwards;
//   - Put replaces the entry with the same key; it may drop an entry it cannot keep
//     (a body or key beyond its limits) and return nil;
//   - an error is the store's trouble: the Client logs it and goes on as if the
//     entry were not kept. It never fails a fetch.
type CacheStore interface {
	Get(ctx context.Context, key string) (CachedResponse, bool, error)
	Put(ctx context.Context, r CachedResponse) error
}

// storeTimeout bounds one CacheStore call: a slow store costs at most this much per
// fetch, and a Put finishes even when the fetch's context ends right after the answer.
const storeTimeout = 5 * time.Second

// keptHeaders are the response headers a CacheStore keeps.
var keptHeaders = []string{"Content-Type"}

// storable reports whether a response is kept in the CacheStore: a 200 with a
// validator, or one that can be served fresh (MaxAge > 0); a 404/410 as a negative
// answer; never other statuses, nor bodies beyond MaxStoredBody.
func (c *Client) storable(e Entry) bool {
	switch e.Status {
	case http.StatusOK:
		return len(e.Body) <= MaxStoredBody && (e.ETag != "" || e.LastModified != "" || c.maxAge > 0)
	case http.StatusNotFound, http.StatusGone:
		return true
	}
	return false
}

// loadStored reads key from the CacheStore; a store error is logged and reads as a
// miss.
func (c *Client) loadStored(ctx context.Context, key string) (Entry, bool) {
	if c.store == nil {
		return Entry{}, false
	}
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	cr, ok, err := c.store.Get(ctx, key)
	if err != nil {
		c.log.LogAttrs(ctx, slog.LevelWarn, "supply cache store: couldn't read a kept response", slog.String("error", err.Error()))
		return Entry{}, false
	}
	if !ok || cr.Key != key || cr.Status == 0 {
		return Entry{}, false
	}
	e := Entry{Status: cr.Status, Body: cr.Body, ETag: cr.ETag, LastModified: cr.LastModified,
		Header: mergeKept(nil, cr.Header), FetchedAt: cr.StoredAt}
	if !c.storable(e) {
		return Entry{}, false
	}
	return e, true
}

// mergeKept returns the kept headers of old updated with those hdr carries (a 304
// updates the stored headers it repeats, RFC 9111 section 4.3.4); nil when none.
// Neither argument is modified.
func mergeKept(old, hdr http.Header) http.Header {
	var out http.Header
	for _, h := range keptHeaders {
		v := hdr.Get(h)
		if v == "" {
			v = old.Get(h)
		}
		if v != "" {
			if out == nil {
				out = http.Header{}
			}
			out.Set(h, v)
		}
	}
	return out
}

// keep writes e to the CacheStore when it is storable. A store error is logged.
func (c *Client) keep(ctx context.Context, key string, e Entry) {
	if c.store == nil || !c.storable(e) {
		return
	}
	cr := CachedResponse{Key: key, Status: e.Status, ETag: e.ETag, LastModified: e.LastModified,
		Header: mergeKept(nil, e.Header), Body: e.Body, StoredAt: e.FetchedAt}
	if e.Status != http.StatusOK {
		cr.Body, cr.ETag, cr.LastModified, cr.Header = nil, "", "", nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	if err := c.store.Put(ctx, cr); err != nil {
		c.log.LogAttrs(ctx, slog.LevelWarn, "supply cache store: couldn't keep a response", slog.String("error", err.Error()))
	}
}

// lookup returns the cached entry for key: the memory's, or, when that is missing or
// stale, the CacheStore's if it is newer (another process, or an earlier run, fetched
// it later). A stored entry read is put in memory. from names the level: "memory" or
// "store".
func (c *Client) lookup(ctx context.Context, key string, maxBody int64, now time.Time) (Entry, bool, string) {
	entry, hit := c.cache.Get(key)
	if hit && int64(len(entry.Body)) > maxBody {
		hit = false // kept for a request with a larger cap
	}
	if hit && c.fresh(entry, now) {
		return entry, true, "memory"
	}
	stored, ok := c.loadStored(ctx, key)
	if !ok || int64(len(stored.Body)) > maxBody || hit && !stored.FetchedAt.After(entry.FetchedAt) {
		return entry, hit, "memory"
	}
	c.cache.Put(key, stored)
	return stored, true, "store"
}

// fresh reports whether e may be served without a request.
func (c *Client) fresh(e Entry, now time.Time) bool {
	age := now.Sub(e.FetchedAt)
	return c.maxAge > 0 && age < c.maxAge && age >= 0
}
