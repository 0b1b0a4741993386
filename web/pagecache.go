package web

import (
	"context"
	"sync"
	"time"
)

// pageCache keeps rendered pages for a short time (microcaching): the directory's, the
// site's most requested page and its dearest, a store query over every entry and a
// hundred rows rendered, about 2.6 ms of CPU, which two cores could not serve a thousand
// times a second. Within its time to live a page is served as it was rendered, so the
// directory lags the store by at most that long (a second by default); every other
// page still reads the store on every request. A cached page must be the same for
// every visitor: the directory page has no session content (its layout shows the
// site's features, never who is signed in), and must keep it that way.
//
// Concurrent requests for a page that is being rendered wait for that one rendering
// instead of starting their own, so an expired popular page costs one store query, not
// one per waiting request. A rendering runs detached from its first requester's
// cancellation (a client that leaves does not fail the others), bounded by
// renderTimeout. An error is handed to the requests that waited for it and not kept.
//
// It is bounded by bytes: when a new page would pass maxBytes, expired pages are
// dropped first, then any (Go's map order picks which) until a tenth of the bound is
// free. Safe for concurrent use; callers must not modify a returned body.
type pageCache struct {
	ttl      time.Duration
	maxBytes int
	now      func() time.Time

	mu           sync.Mutex
	m            map[string]*cachedPage
	bytes        int
	hits, misses uint64
}

// cachedPage is one page: being rendered until done is closed, then its body (or err)
// and when its rendering began (its age counts from when the store was read).
type cachedPage struct {
	done chan struct{}
	body []byte
	err  error
	at   time.Time
}

// renderTimeout bounds one rendering of a cached page.
const renderTimeout = 10 * time.Second

// DefaultDirectoryCacheTTL is the directory pages' time to live of a zero
// Config.DirectoryCacheTTL.
const DefaultDirectoryCacheTTL = time.Second

// dirCacheBytes bounds the directory pages kept: about 400 pages of 40 KB.
const dirCacheBytes = 16 << 20

func newPageCache(ttl time.Duration, maxBytes int, now func() time.Time) *pageCache {
	return &pageCache{ttl: ttl, maxBytes: maxBytes, now: now, m: make(map[string]*cachedPage)}
}

// get returns the page with key: the one kept when it is younger than the time to
// live, the one being rendered when another request is rendering it, or else a new
// rendering by render.
func (c *pageCache) get(ctx context.Context, key string, render func(context.Context) ([]byte, error)) ([]byte, error) {
	c.mu.Lock()
	if p, ok := c.m[key]; ok {
		select {
		case <-p.done:
			if c.now().Sub(p.at) < c.ttl {
				c.hits++
				c.mu.Unlock()
				return p.body, nil
			}
			c.bytes -= len(p.body) + memoOverhead
			delete(c.m, key)
		default:
			c.hits++
			c.mu.Unlock()
			select {
			case <-p.done:
				return p.body, p.err
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	c.misses++
	p := &cachedPage{done: make(chan struct{})}
	c.m[key] = p
	c.mu.Unlock()

	start := c.now()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), renderTimeout)
	body, err := render(rctx)
	cancel()

	c.mu.Lock()
	p.body, p.err, p.at = body, err, start
	if err != nil || len(body)+memoOverhead > c.maxBytes/10 {
		delete(c.m, key)
	} else {
		c.bytes += len(body) + memoOverhead
		if c.bytes > c.maxBytes {
			c.evict(key)
		}
	}
	c.mu.Unlock()
	close(p.done)
	return body, err
}

// evict drops expired pages, then others, until a tenth of the bound is free; it keeps
// the page keep (just rendered) and pages being rendered. c.mu is held.
func (c *pageCache) evict(keep string) {
	now := c.now()
	goal := c.maxBytes - c.maxBytes/10
	for _, expiredOnly := range []bool{true, false} {
		for k, p := range c.m {
			if c.bytes <= goal {
				return
			}
			select {
			case <-p.done:
			default:
				continue
			}
			if k == keep || (expiredOnly && now.Sub(p.at) < c.ttl) {
				continue
			}
			c.bytes -= len(p.body) + memoOverhead
			delete(c.m, k)
		}
	}
}

// stats reports the cache for /metrics, as the memos are reported.
func (c *pageCache) stats() memoStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return memoStats{Hits: c.hits, Misses: c.misses, Bytes: c.bytes, Entries: len(c.m)}
}
