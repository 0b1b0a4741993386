package web

import (
	"context"
	"sync"
	"time"
)

// pageCache keeps rendered pages for a short time (microcaching): the directory's, the
// site's most requested page and its dearest, a store query over every entry and a
// hundred rows rendered, about 2.6 ms of CPU, which two cores could not serve a thousand
// times a second. Within its time to live a page is served as it was rendered. After
// it, the first request starts one new rendering in the background and every request
// is served the page kept until the new one is ready (stale-while-revalidate): no
// request waits for a rendering but the first of a page not kept at all, or of one kept
// longer than ttl + maxStale (its renderings failed). So the directory lags the store
// by the time to live (a second by default) plus one rendering, and by at most
// ttl + maxStale; every other page still reads the store on every request. A cached
// page must be the same for every visitor: the directory page has no session content
// (its layout shows the site's features, never who is signed in), and must keep it
// that way.
//
// Concurrent requests for a page that is not kept and is being rendered wait for that
// one rendering instead of starting their own. A rendering runs detached from its
// requester's cancellation (a client that leaves does not fail the others), bounded by
// renderTimeout. An error is handed to the requests that waited for it and not kept; a
// background rendering's error leaves the kept page in place.
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
// and when its rendering began (its age counts from when the store was read);
// refreshing while a background rendering of a newer one runs.
type cachedPage struct {
	done       chan struct{}
	body       []byte
	err        error
	at         time.Time
	refreshing bool
}

// maxStale is how long past its time to live a kept page is still served while a new
// one is rendered.
const maxStale = 30 * time.Second

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
			age := c.now().Sub(p.at)
			if age < c.ttl+maxStale {
				c.hits++
				if age >= c.ttl && !p.refreshing {
					p.refreshing = true
					go c.refresh(ctx, key, p, render)
				}
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

// refresh renders the page of key anew in the background and keeps it in place of old;
// when the rendering fails, old stays (and the next request past its time to live
// tries again).
func (c *pageCache) refresh(ctx context.Context, key string, old *cachedPage, render func(context.Context) ([]byte, error)) {
	start := c.now()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), renderTimeout)
	body, err := render(rctx)
	cancel()
	c.mu.Lock()
	defer c.mu.Unlock()
	old.refreshing = false
	if err != nil || c.m[key] != old || len(body)+memoOverhead > c.maxBytes/10 {
		return
	}
	p := &cachedPage{done: make(chan struct{}), body: body, at: start}
	close(p.done)
	c.bytes += len(body) - len(old.body)
	c.m[key] = p
	if c.bytes > c.maxBytes {
		c.evict(key)
	}
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
			if k == keep || (expiredOnly && now.Sub(p.at) < c.ttl+maxStale) {
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
