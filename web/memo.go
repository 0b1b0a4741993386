package web

import "sync"

// memo remembers values derived from immutable stored data: the tool list of a
// content-addressed surface, the check results of a stored round, and the HTML the
// entry page renders of them. Nothing it holds can go stale, so it has no expiry.
//
// It is bounded by the approximate bytes its values hold (size), not by their count: a
// tool list can be 60 bytes or 60 KB. When a new value would pass the bound, values are
// dropped (Go's map order picks which) until a tenth of the bound is free. A value larger
// than a tenth of the bound is returned and not remembered. Safe for concurrent use;
// callers must not modify a returned value.
type memo[K comparable, V any] struct {
	mu           sync.Mutex
	maxBytes     int
	size         func(V) int
	bytes        int
	m            map[K]memoValue[V]
	hits, misses uint64
}

type memoValue[V any] struct {
	v    V
	size int
}

// memoOverhead is what a remembered value costs besides its size: the map slot, the
// key and the value's headers, roughly.
const memoOverhead = 64

func newMemo[K comparable, V any](maxBytes int, size func(V) int) *memo[K, V] {
	return &memo[K, V]{maxBytes: maxBytes, size: size, m: make(map[K]memoValue[V])}
}

// get returns the value for k, computing and remembering it with f on a miss. An error
// is returned and not remembered.
func (c *memo[K, V]) get(k K, f func() (V, error)) (V, error) {
	c.mu.Lock()
	e, ok := c.m[k]
	if ok {
		c.hits++
	} else {
		c.misses++
	}
	c.mu.Unlock()
	if ok {
		return e.v, nil
	}
	v, err := f()
	if err != nil {
		return v, err
	}
	return c.put(k, v), nil
}

// put remembers v for k, unless k is remembered already (computed meanwhile by
// another request) or v is larger than a tenth of the bound, and returns the value
// remembered for k, or v.
func (c *memo[K, V]) put(k K, v V) V {
	n := c.size(v) + memoOverhead
	if n > c.maxBytes/10 {
		return v
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[k]; ok {
		return old.v
	}
	if c.bytes+n > c.maxBytes {
		for key, old := range c.m {
			delete(c.m, key)
			c.bytes -= old.size
			if c.bytes+n <= c.maxBytes-c.maxBytes/10 {
				break
			}
		}
	}
	c.m[k] = memoValue[V]{v, n}
	c.bytes += n
	return v
}

// peek returns the value remembered for k, if any, without counting a lookup.
func (c *memo[K, V]) peek(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	return e.v, ok
}

// memoStats is what a memo reports on /metrics.
type memoStats struct {
	Hits, Misses   uint64
	Bytes, Entries int
}

func (c *memo[K, V]) stats() memoStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return memoStats{Hits: c.hits, Misses: c.misses, Bytes: c.bytes, Entries: len(c.m)}
}
