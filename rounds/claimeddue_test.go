package rounds

import (
	"testing"
	"time"

	"github.com/probity-dev/probity/store"
)

// TestClaimedDue: a newly claimed entry's cadence round moves from up to 3 h away to
// within 15 min ± 10 %; an unclaimed entry's next round (at most a claimed cadence
// away) stays; other reasons are left alone; no cadence due time, no change.
func TestClaimedDue(t *testing.T) {
	var s Schedule
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	e := remote(7)
	due := []store.Due{
		{EntryID: 7, Reason: store.ReasonStatus, At: now.Add(20 * time.Hour)},
		{EntryID: 7, Reason: store.ReasonCadence, At: now.Add(2*time.Hour + 40*time.Minute)},
	}
	if ups := s.ClaimedDue(e, due, now); len(ups) != 0 {
		t.Errorf("unclaimed entry: %+v, want no change", ups)
	}
	e.Claimed = true
	ups := s.ClaimedDue(e, due, now)
	if len(ups) != 1 || ups[0].Reason != store.ReasonCadence {
		t.Fatalf("claimed entry: %+v, want its cadence round moved", ups)
	}
	if d := ups[0].At.Sub(now); d < DefaultClaimedCadence*9/10 || d > DefaultClaimedCadence*11/10 {
		t.Errorf("claimed entry: next round in %v, want 15 min ± 10 %%", d)
	}
	// Unclaimed again: its next round, 14 min away, stays.
	e.Claimed = false
	due[1].At = ups[0].At
	if ups := s.ClaimedDue(e, due, now); len(ups) != 0 {
		t.Errorf("unclaimed again: %+v, want no change", ups)
	}
	e.Claimed = true
	if ups := s.ClaimedDue(e, due[:1], now); len(ups) != 0 {
		t.Errorf("no cadence due time: %+v, want none", ups)
	}
}
