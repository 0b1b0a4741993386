package ratelimit

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newTest(t *testing.T, perSecond float64, burst, maxClients int, clk *clock) *Limiter {
	t.Helper()
	l, err := New(Config{PerSecond: perSecond, Burst: burst, MaxClients: maxClients, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestBounded is the site's former TestLimiterBounded: the buckets stay within
// MaxClients under a flood of new clients, and a bucket empties and refills.
func TestBounded(t *testing.T) {
	clk := &clock{t: time.Unix(0, 0)}
	l := newTest(t, 1, 2, 100, clk)
	for i := range 1000 {
		if ok, _ := l.Allow(strings.Repeat("x", i%7) + string(rune('a'+i%26)) + time.Duration(i).String()); !ok {
			t.Fatalf("a new client was refused")
		}
		if n := l.Clients(); n > 100 {
			t.Fatalf("%d buckets", n)
		}
	}
	// A client's bucket empties and refills.
	l.Allow("c")
	l.Allow("c")
	if ok, wait := l.Allow("c"); ok || wait != time.Second {
		t.Fatalf("third: %v %v", ok, wait)
	}
	clk.add(time.Second)
	if ok, _ := l.Allow("c"); !ok {
		t.Fatal("not refilled")
	}
}

// TestEvicts is /mcp's former TestLimiterEvicts.
func TestEvicts(t *testing.T) {
	clk := &clock{t: time.Unix(1e9, 0)}
	l := newTest(t, 1, 2, 10, clk)
	for i := range 100 {
		if ok, _ := l.Allow(fmt.Sprintf("10.0.0.%d", i)); !ok {
			t.Fatalf("new client %d refused", i)
		}
		if n := l.Clients(); n > 10 {
			t.Fatalf("%d buckets, more than 10", n)
		}
	}
}

// TestEvictsRefilledFirst: when the table is full, the buckets that have refilled go
// and a client still limited keeps its empty bucket (a flood of new addresses cannot
// reset it while idle ones are there to drop).
func TestEvictsRefilledFirst(t *testing.T) {
	clk := &clock{t: time.Unix(1e9, 0)}
	l := newTest(t, 1, 2, 4, clk)
	l.Allow("idle")
	clk.add(1500 * time.Millisecond)
	for range 2 {
		l.Allow("busy")
	}
	l.Allow("idle2")
	l.Allow("idle3")
	clk.add(600 * time.Millisecond) // "idle" is full again, "busy" holds 0.6 tokens
	l.Allow("new")                  // evicts the refilled "idle" only
	if n := l.Clients(); n != 4 {
		t.Fatalf("%d buckets after evicting the refilled one, want 4", n)
	}
	if ok, wait := l.Allow("busy"); ok || wait != 400*time.Millisecond {
		t.Fatalf("busy after the eviction: %v %v, want refused for 400ms", ok, wait)
	}
}

// TestRefusalTakesNothing: a refused request does not delay the next token, however
// many there are.
func TestRefusalTakesNothing(t *testing.T) {
	clk := &clock{t: time.Unix(1e9, 0)}
	l := newTest(t, 2, 1, 10, clk)
	if ok, _ := l.Allow("c"); !ok {
		t.Fatal("first refused")
	}
	for range 50 {
		if ok, wait := l.Allow("c"); ok || wait != 500*time.Millisecond {
			t.Fatalf("refusal: %v %v, want false 500ms", ok, wait)
		}
	}
	clk.add(500 * time.Millisecond)
	if ok, _ := l.Allow("c"); !ok {
		t.Fatal("the refusals took tokens")
	}
}

// TestConcurrent: many goroutines on one client get exactly the burst, and the
// refusals take nothing (run with -race).
func TestConcurrent(t *testing.T) {
	clk := &clock{t: time.Unix(1e9, 0)}
	l := newTest(t, 1, 20, 10, clk)
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if ok, _ := l.Allow("c"); ok {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if allowed != 20 {
		t.Fatalf("%d allowed, want the burst of 20", allowed)
	}
	clk.add(time.Second)
	if ok, _ := l.Allow("c"); !ok {
		t.Fatal("no token after a second: refusals took tokens")
	}
}

func TestWaitAtLeastAMillisecond(t *testing.T) {
	clk := &clock{t: time.Unix(1e9, 0)}
	l := newTest(t, 1e6, 1, 10, clk) // a token every microsecond
	l.Allow("c")
	if ok, wait := l.Allow("c"); ok || wait != time.Millisecond {
		t.Fatalf("%v %v, want false 1ms", ok, wait)
	}
}

func TestUnlimited(t *testing.T) {
	l, err := New(Config{PerSecond: math.Inf(1), Burst: 1, MaxClients: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if ok, _ := l.Allow(fmt.Sprint(i % 3)); !ok {
			t.Fatal("refused without a limit")
		}
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	for name, cfg := range map[string]Config{
		"zero rate":     {PerSecond: 0, Burst: 1, MaxClients: 1},
		"negative rate": {PerSecond: -1, Burst: 1, MaxClients: 1},
		"NaN rate":      {PerSecond: math.NaN(), Burst: 1, MaxClients: 1},
		"zero burst":    {PerSecond: 1, Burst: 0, MaxClients: 1},
		"zero clients":  {PerSecond: 1, Burst: 1, MaxClients: 0},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New accepted %+v", name, cfg)
		}
	}
}
