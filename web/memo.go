package web

import "sync"

// memo remembers values derived from immutable stored data: the tool list of a
// content-addressed surface, the check views of a stored round. Nothing it holds can go
// stale, so it has no expiry; it is bounded by entry count, dropping about a tenth of
// its entries (Go's map order picks which) when full. Safe for concurrent use. Callers
// must not modify a returned value.
type memo[K comparable, V any] struct {
	mu  sync.Mutex
	max int
	m   map[K]V
}

func newMemo[K comparable, V any](max int) *memo[K, V] {
	return &memo[K, V]{max: max, m: make(map[K]V)}
}

// get returns the value for k, computing and remembering it with f on a miss. An error
// is returned and not remembered.
func (c *memo[K, V]) get(k K, f func() (V, error)) (V, error) {
	c.mu.Lock()
	v, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := f()
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		drop := max(c.max/10, 1)
		for key := range c.m {
			delete(c.m, key)
			if drop--; drop == 0 {
				break
			}
		}
	}
	c.m[k] = v
	return v, nil
}
