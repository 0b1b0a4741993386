package web

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func TestPageCacheServesWithinTTL(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)}
	c := newPageCache(time.Second, 1<<20, clock.now)
	var mu sync.Mutex
	version := "v1"
	rendered := make(chan struct{}, 10)
	render := func(context.Context) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		rendered <- struct{}{}
		return []byte(version), nil
	}
	setVersion := func(v string) { mu.Lock(); version = v; mu.Unlock() }
	get := func() string {
		t.Helper()
		b, err := c.get(context.Background(), "k", render)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := get(); got != "v1" {
		t.Fatalf("first get = %q", got)
	}
	<-rendered
	setVersion("v2")
	clock.add(999 * time.Millisecond)
	if got := get(); got != "v1" {
		t.Errorf("within the time to live: %q, want the kept v1", got)
	}
	if len(rendered) != 0 {
		t.Error("a rendering within the time to live")
	}
	// Past it: the kept page at once, and one rendering in the background.
	clock.add(time.Millisecond)
	if got := get(); got != "v1" {
		t.Errorf("the first request past the time to live: %q, want the kept v1 while v2 renders", got)
	}
	<-rendered
	deadline := time.Now().Add(5 * time.Second)
	for get() != "v2" {
		if time.Now().After(deadline) {
			t.Fatal("the background rendering never replaced the kept page")
		}
		time.Sleep(time.Millisecond)
	}
	if len(rendered) != 0 {
		t.Errorf("%d more renderings, want one per expiry", len(rendered))
	}
	// Kept longer than ttl + maxStale (its renderings failed, say): requests wait.
	setVersion("v3")
	clock.add(time.Second + maxStale)
	if got := get(); got != "v3" {
		t.Errorf("a page older than ttl + maxStale was served: %q, want v3", got)
	}
	if st := c.stats(); st.Entries != 1 || st.Bytes != len("v3")+memoOverhead {
		t.Errorf("stats = %+v", st)
	}
}

func TestPageCacheKeepsThePageWhenARenderingFails(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)}
	c := newPageCache(time.Second, 1<<20, clock.now)
	if _, err := c.get(context.Background(), "k", func(context.Context) ([]byte, error) { return []byte("ok"), nil }); err != nil {
		t.Fatal(err)
	}
	clock.add(2 * time.Second)
	failed := make(chan struct{})
	b, err := c.get(context.Background(), "k", func(context.Context) ([]byte, error) {
		defer close(failed)
		return nil, errors.New("store down")
	})
	if err != nil || string(b) != "ok" {
		t.Fatalf("past the time to live: %q, %v; want the kept page", b, err)
	}
	<-failed
	for range 100 { // the failed refresh clears its flag under the lock
		c.mu.Lock()
		refreshing := c.m["k"].refreshing
		c.mu.Unlock()
		if !refreshing {
			break
		}
		time.Sleep(time.Millisecond)
	}
	b, err = c.get(context.Background(), "k", func(context.Context) ([]byte, error) { return []byte("new"), nil })
	if err != nil || string(b) != "ok" {
		t.Errorf("after a failed rendering: %q, %v; want the kept page (and another rendering started)", b, err)
	}
}

func TestPageCacheRendersOnceForConcurrentRequests(t *testing.T) {
	c := newPageCache(time.Second, 1<<20, time.Now)
	var renders atomic.Int32
	release := make(chan struct{})
	render := func(context.Context) ([]byte, error) {
		renders.Add(1)
		<-release
		return []byte("page"), nil
	}
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if b, err := c.get(context.Background(), "k", render); err != nil || string(b) != "page" {
				t.Errorf("get = %q, %v", b, err)
			}
		}()
	}
	for c.stats().Hits+c.stats().Misses < 20 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if n := renders.Load(); n != 1 {
		t.Errorf("%d renderings for 20 concurrent requests of one page, want 1", n)
	}
}

func TestPageCacheKeepsNoError(t *testing.T) {
	c := newPageCache(time.Second, 1<<20, time.Now)
	fail := errors.New("store down")
	if _, err := c.get(context.Background(), "k", func(context.Context) ([]byte, error) { return nil, fail }); !errors.Is(err, fail) {
		t.Fatalf("err = %v", err)
	}
	b, err := c.get(context.Background(), "k", func(context.Context) ([]byte, error) { return []byte("ok"), nil })
	if err != nil || string(b) != "ok" {
		t.Errorf("after an error: %q, %v; want a new rendering", b, err)
	}
}

func TestPageCacheRenderOutlivesItsRequester(t *testing.T) {
	c := newPageCache(time.Second, 1<<20, time.Now)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b, err := c.get(ctx, "k", func(rctx context.Context) ([]byte, error) {
		if rctx.Err() != nil {
			return nil, rctx.Err()
		}
		return []byte("ok"), nil
	})
	if err != nil || string(b) != "ok" {
		t.Errorf("a rendering begun by a request that left: %q, %v", b, err)
	}
}

func TestPageCacheBounded(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)}
	const bound = 10 << 10
	c := newPageCache(time.Second, bound, clock.now)
	page := []byte(strings.Repeat("x", 500))
	for i := range 100 {
		if _, err := c.get(context.Background(), string(rune('a'+i%26))+strings.Repeat("k", i), func(context.Context) ([]byte, error) { return page, nil }); err != nil {
			t.Fatal(err)
		}
		if st := c.stats(); st.Bytes > bound {
			t.Fatalf("after %d pages: %d bytes kept, bound %d", i+1, st.Bytes, bound)
		}
		if i == 50 {
			clock.add(2 * time.Second) // the kept pages expire: they go first
		}
	}
	big := []byte(strings.Repeat("y", bound/10))
	if _, err := c.get(context.Background(), "big", func(context.Context) ([]byte, error) { return big, nil }); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	_, kept := c.m["big"]
	c.mu.Unlock()
	if kept {
		t.Error("a page larger than a tenth of the bound was kept")
	}
}
