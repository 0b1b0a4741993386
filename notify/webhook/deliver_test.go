package webhook

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/probity-dev/probity/store"
)

// holdingReceiver is a loopback receiver that holds every request until released (or
// the request ends), counting the requests under way at once.
type holdingReceiver struct {
	*httptest.Server
	release chan struct{}
	once    sync.Once

	mu             sync.Mutex
	inFlight, most int
	received       int
}

// let releases every request held and to come.
func (r *holdingReceiver) let() { r.once.Do(func() { close(r.release) }) }

func newHoldingReceiver(t *testing.T) *holdingReceiver {
	r := &holdingReceiver{release: make(chan struct{})}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		// Read the body: only then does the server see the client go away.
		_, _ = io.Copy(io.Discard, io.LimitReader(req.Body, 1<<20))
		r.mu.Lock()
		r.inFlight++
		r.received++
		r.most = max(r.most, r.inFlight)
		r.mu.Unlock()
		select {
		case <-r.release:
		case <-req.Context().Done():
		}
		r.mu.Lock()
		r.inFlight--
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(func() {
		r.let()
		r.Close()
	})
	return r
}

func (r *holdingReceiver) counts() (received, most int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.received, r.most
}

// withTimeout replaces the fixture's service by one whose attempts may take d, on the
// clock now.
func (f *fixture) withTimeout(d time.Duration, now func() time.Time) {
	f.t.Helper()
	cfg := f.svc.cfg
	cfg.Timeout, cfg.Now = d, now
	svc, err := New(cfg)
	if err != nil {
		f.t.Fatal(err)
	}
	f.svc = svc
}

// TestSlowReceiverDelaysOnlyItself: a receiver that does not answer holds one attempt
// at a time, never more, and the deliveries to another account's fast receiver all go
// while it holds: one slow URL cannot take the delivery workers of the others.
func TestSlowReceiverDelaysOnlyItself(t *testing.T) {
	f := newFixture(t, true)
	f.withTimeout(time.Minute, func() time.Time { return f.now }) // longer than the test
	ctx := context.Background()
	slow := newHoldingReceiver(t)
	fast := f.receiver(func() int { return http.StatusOK })
	sw, err := f.svc.Register(ctx, f.accounts[0], slow.URL+"/hook")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Register(ctx, f.accounts[1], fast.URL+"/hook"); err != nil {
		t.Fatal(err)
	}
	f.plan()
	f.now = f.now.Add(time.Minute)
	const changes = 2 * parallel // enough slow deliveries to take every worker
	for n := int64(1); n <= changes; n++ {
		f.change(n)
	}
	if n := f.plan(); n != 2*changes {
		t.Fatalf("planned %d deliveries, want %d", n, 2*changes)
	}

	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := f.svc.Deliver(ctx, time.Hour)
		done <- result{n, err}
	}()
	// Not a timing target: a generous bound on a wait that never ends when the slow
	// receiver's attempts take every worker.
	deadline := time.Now().Add(30 * time.Second)
	for fast.count() < changes && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	got, most := slow.counts()
	if fast.count() != changes {
		t.Errorf("the fast receiver got %d of %d deliveries while the slow one held %d attempts", fast.count(), changes, most)
	}
	if most != 1 || got != 1 {
		t.Errorf("the slow receiver got %d requests, %d at once, while it held the first; want 1 and 1", got, most)
	}
	slow.let()
	r := <-done
	if r.err != nil || r.n != 2*changes {
		t.Fatalf("Deliver = %d, %v; want %d attempts", r.n, r.err, 2*changes)
	}
	if got, most := slow.counts(); got != changes || most != 1 {
		t.Errorf("the slow receiver got %d requests, at most %d at once; want %d, one at a time", got, most, changes)
	}
	log, err := f.svc.Log(ctx, f.accounts[0], sw.ID)
	if err != nil || len(log) != changes {
		t.Fatalf("log = %+v, %v", log, err)
	}
	for _, d := range log {
		if d.State != store.DeliveryDelivered || d.Attempts != 1 {
			t.Errorf("delivery %s: %s after %d attempts", d.MessageID, d.State, d.Attempts)
		}
	}
}

// syncClock is a fake clock that a receiver may move during an attempt.
type syncClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *syncClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *syncClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestNoAttemptPastItsLease: a delivery that waited behind its webhook's slow attempts
// until its lease could end during its own attempt is not attempted (another worker may
// claim it once the lease ends); the next run after the lease sends it, and no
// delivery is attempted twice.
func TestNoAttemptPastItsLease(t *testing.T) {
	f := newFixture(t, true)
	clk := &syncClock{t: f.now}
	f.withTimeout(10*time.Second, clk.Now)
	ctx := context.Background()
	// Every attempt takes (on the fake clock) longer than a lease's margin.
	rcv := f.receiver(func() int {
		clk.Add(31 * time.Second)
		return http.StatusOK
	})
	w, err := f.svc.Register(ctx, f.accounts[0], rcv.URL+"/hook")
	if err != nil {
		t.Fatal(err)
	}
	f.now = clk.Now()
	f.plan()
	clk.Add(time.Minute)
	f.now = clk.Now()
	for n := int64(1); n <= 3; n++ {
		f.change(n)
	}
	f.now = clk.Now()
	if n := f.plan(); n != 3 {
		t.Fatalf("planned %d", n)
	}
	for run, want := range []int{1, 0} {
		n, err := f.svc.Deliver(ctx, time.Hour)
		if err != nil || n != want {
			t.Fatalf("run %d: %d attempts, %v; want %d", run+1, n, err, want)
		}
	}
	sent := 1
	for run := 3; sent < 3 && run < 10; run++ {
		clk.Add(time.Minute) // the leases of the others have ended
		n, err := f.svc.Deliver(ctx, time.Hour)
		if err != nil || n != 1 {
			t.Fatalf("run %d: %d attempts, %v; want 1", run, n, err)
		}
		sent += n
	}
	if rcv.count() != 3 {
		t.Errorf("the receiver got %d requests, want 3, each once", rcv.count())
	}
	log, err := f.svc.Log(ctx, f.accounts[0], w.ID)
	if err != nil || len(log) != 3 {
		t.Fatalf("log = %+v, %v", log, err)
	}
	for _, d := range log {
		if d.State != store.DeliveryDelivered || d.Attempts != 1 {
			t.Errorf("delivery %s: %s after %d attempts", d.MessageID, d.State, d.Attempts)
		}
	}
}

// TestAttemptTimeout: a receiver that never answers fails the attempt after the
// timeout, which the owner's log says.
func TestAttemptTimeout(t *testing.T) {
	f := newFixture(t, true) // Timeout: 2 s
	ctx := context.Background()
	rcv := newHoldingReceiver(t)
	w, err := f.svc.Register(ctx, f.accounts[0], rcv.URL+"/hook")
	if err != nil {
		t.Fatal(err)
	}
	f.plan()
	f.now = f.now.Add(time.Minute)
	f.change(1)
	f.plan()
	if n := f.deliver(); n != 1 {
		t.Fatalf("%d attempts", n)
	}
	log, err := f.svc.Log(ctx, f.accounts[0], w.ID)
	if err != nil || len(log) != 1 || log[0].State != store.DeliveryPending || !strings.Contains(log[0].LastError, "no answer within 2s") {
		t.Errorf("log = %+v, %v", log, err)
	}
}
