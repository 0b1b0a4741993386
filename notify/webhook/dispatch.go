package webhook

import (
	"context"
	"sync"
	"time"

	"github.com/probity-dev/probity/store"
)

// Delivery scheduling (Service.Deliver).
//
// Claimed deliveries wait in a queue per webhook, and parallel workers take the
// webhooks that have one waiting, in turn (round robin): a webhook has at most one
// attempt under way, so a slow receiver holds one worker, never the others, and its
// other deliveries wait behind it rather than take more workers. The claimer claims
// more whenever a worker is idle with nothing to take, so the deliveries of other
// webhooks are reached while a slow one's attempt runs. A delivery's attempt starts only
// while its claim will outlast it (claim time + lease ≥ now + Timeout): a claim that
// waited too long behind its webhook's slow attempts is left, unattempted, until its
// lease ends, and the next run sends it, so no two workers ever attempt one delivery
// at once. A webhook holds at most maxQueuedPerWebhook claims (more of its deliveries
// are left to their lease the same way), all webhooks at most maxQueued: the claimer
// waits for room beyond that.
const (
	maxQueuedPerWebhook = 200
	maxQueued           = 2000
)

// claimed is a claimed delivery and when its lease ends.
type claimed struct {
	store.WebhookClaim
	until time.Time
}

// dispatch is one Deliver run's scheduler.
type dispatch struct {
	s        *Service
	ctx      context.Context
	deadline time.Time // no attempt starts after it (the budget)

	mu       sync.Mutex
	wake     *sync.Cond
	queues   map[int64][]claimed // per webhook, the claims not yet taken
	inFlight map[int64]bool      // webhooks with an attempt under way
	runnable []int64             // webhooks with a claim waiting and none in flight, in turn
	queued   int                 // claims waiting, all webhooks
	idle     int                 // workers waiting for a webhook to take
	closed   bool                // the claimer is done: workers end when nothing is runnable
	attempts int
	err      error // the first error recording an attempt; stops the run
}

func newDispatch(ctx context.Context, s *Service, deadline time.Time) *dispatch {
	d := &dispatch{s: s, ctx: ctx, deadline: deadline, queues: map[int64][]claimed{}, inFlight: map[int64]bool{}}
	d.wake = sync.NewCond(&d.mu)
	return d
}

// wantClaims waits until a worker is idle with nothing to take and there is room, or
// the run must stop; it reports whether to claim.
func (d *dispatch) wantClaims() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for {
		if d.err != nil || d.ctx.Err() != nil || d.s.now().After(d.deadline) {
			return false
		}
		if d.idle > len(d.runnable) && d.queued < maxQueued {
			return true
		}
		d.wake.Wait()
	}
}

// add queues claims whose lease ends at until.
func (d *dispatch) add(claims []store.WebhookClaim, until time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range claims {
		id := c.Delivery.WebhookID
		q := d.queues[id]
		if len(q) >= maxQueuedPerWebhook {
			continue // left to its lease: the next run sends it
		}
		if len(q) == 0 && !d.inFlight[id] {
			d.runnable = append(d.runnable, id)
		}
		d.queues[id] = append(q, claimed{WebhookClaim: c, until: until})
		d.queued++
	}
	d.wake.Broadcast()
}

// close tells the workers that no more claims come.
func (d *dispatch) close() {
	d.mu.Lock()
	d.closed = true
	d.wake.Broadcast()
	d.mu.Unlock()
}

// fail records the first error and stops the run.
func (d *dispatch) fail(err error) {
	d.mu.Lock()
	if d.err == nil {
		d.err = err
	}
	d.wake.Broadcast()
	d.mu.Unlock()
}

// work takes a runnable webhook's next claim, attempts it when it may still start, and
// puts the webhook back in turn, until the claimer is done and nothing is runnable.
func (d *dispatch) work() {
	for {
		d.mu.Lock()
		d.idle++
		d.wake.Broadcast() // the claimer waits for an idle worker
		for len(d.runnable) == 0 && !d.closed {
			d.wake.Wait()
		}
		d.idle--
		if len(d.runnable) == 0 {
			d.mu.Unlock()
			return
		}
		id := d.runnable[0]
		d.runnable = d.runnable[1:]
		c := d.queues[id][0]
		d.queues[id] = d.queues[id][1:]
		d.queued--
		d.inFlight[id] = true
		start := d.err == nil && d.ctx.Err() == nil && !d.s.now().After(d.deadline) &&
			!d.s.now().Add(d.s.cfg.Timeout).After(c.until)
		d.mu.Unlock()

		var err error
		if start {
			err = d.s.attempt(d.ctx, c.WebhookClaim)
		}

		d.mu.Lock()
		if start {
			d.attempts++
		}
		if err != nil && d.err == nil {
			d.err = err
		}
		delete(d.inFlight, id)
		if len(d.queues[id]) > 0 {
			d.runnable = append(d.runnable, id)
		} else {
			delete(d.queues, id)
		}
		d.wake.Broadcast()
		d.mu.Unlock()
	}
}
