package history

import (
	"fmt"
	"testing"
	"time"
)

// clock is a fake clock for the rules' tests.
type clock struct{ now time.Time }

func (c *clock) after(d time.Duration) time.Time { c.now = c.now.Add(d); return c.now }

func newClock() *clock { return &clock{time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)} }

var obsID int64

func ok(at time.Time, surface string, tools int) Read {
	obsID++
	return Read{ID: obsID, RoundID: fmt.Sprintf("r%d", obsID), PayloadDigest: "sha256:p", At: at, OK: true,
		Surface: surface, Instructions: "sha256:i", ToolCount: tools}
}

func failed(at time.Time) Read {
	obsID++
	return Read{ID: obsID, At: at}
}

// run applies reads in order and returns the final state and every event.
func run(t *testing.T, p Rules, reads ...Read) (State, []Event) {
	t.Helper()
	var st State
	var all []Event
	for _, r := range reads {
		var ev []Event
		var err error
		st, ev, err = p.Apply(st, r)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, ev...)
	}
	return st, all
}

func kinds(ev []Event) []string {
	var out []string
	for _, e := range ev {
		out = append(out, fmt.Sprintf("%d:%s", e.Number, e.Kind))
	}
	return out
}

func eq(t *testing.T, name string, got []Event, want ...string) {
	t.Helper()
	g := kinds(got)
	if fmt.Sprint(g) != fmt.Sprint(want) {
		t.Errorf("%s: events %v, want %v", name, g, want)
	}
}

func TestBaselineIsFirstSuccessfulRead(t *testing.T) {
	c := newClock()
	st, ev := run(t, Rules{}, failed(c.now), failed(c.after(time.Hour)), ok(c.after(time.Hour), "A", 5), ok(c.after(12*time.Hour), "A", 5))
	eq(t, "baseline", ev, "1:baseline")
	if ev[0].After.ToolCount != 5 || ev[0].Before != nil || st.Recorded.Surface != "A" {
		t.Errorf("baseline event %+v, state %+v", ev[0], st)
	}
}

func TestDifferenceNeedsSecondFetchAMinuteLater(t *testing.T) {
	c := newClock()
	base := ok(c.now, "A", 5)
	// A single differing read records nothing.
	_, ev := run(t, Rules{}, base, ok(c.after(12*time.Hour), "B", 6))
	eq(t, "one read", ev, "1:baseline")
	// A second agreeing read less than a minute later records nothing yet…
	c = newClock()
	_, ev = run(t, Rules{}, ok(c.now, "A", 5), ok(c.after(time.Hour), "B", 6), ok(c.after(59*time.Second), "B", 6))
	eq(t, "59 s later", ev, "1:baseline")
	// …a minute later it does, and the change compares the recorded read with the agreeing one.
	c = newClock()
	_, ev = run(t, Rules{}, ok(c.now, "A", 5), ok(c.after(time.Hour), "B", 6), ok(c.after(30*time.Second), "B", 6), ok(c.after(30*time.Second), "B", 6))
	eq(t, "a minute later", ev, "1:baseline", "2:tools")
	if ev[1].Before.Surface != "A" || ev[1].After.Surface != "B" {
		t.Errorf("change compares %s → %s", ev[1].Before.Surface, ev[1].After.Surface)
	}
	// A disagreeing second read replaces the candidate; the first candidate is never recorded.
	c = newClock()
	_, ev = run(t, Rules{}, ok(c.now, "A", 5), ok(c.after(time.Hour), "B", 6), ok(c.after(time.Minute), "C", 7), ok(c.after(time.Minute), "C", 7))
	eq(t, "replaced candidate", ev, "1:baseline", "2:tools")
	if ev[1].After.Surface != "C" {
		t.Errorf("recorded %s, want C", ev[1].After.Surface)
	}
	// Going back to the recorded state drops the candidate.
	c = newClock()
	st, ev := run(t, Rules{}, ok(c.now, "A", 5), ok(c.after(time.Hour), "B", 6), ok(c.after(time.Minute), "A", 5), ok(c.after(time.Minute), "B", 6))
	eq(t, "flap", ev, "1:baseline")
	if st.Pending == nil || st.Pending.Surface != "B" {
		t.Errorf("pending %+v, want the last B as a new candidate", st.Pending)
	}
}

func TestFailedOrPartialReadsAreNoData(t *testing.T) {
	c := newClock()
	st, ev := run(t, Rules{}, ok(c.now, "A", 5), failed(c.after(time.Hour)), failed(c.after(time.Hour)), ok(c.after(time.Hour), "A", 5))
	eq(t, "failures", ev, "1:baseline")
	if st.Recorded.Surface != "A" || st.Pending != nil {
		t.Errorf("state after failed reads: %+v", st)
	}
	// A failure between the two agreeing reads does not break the confirmation.
	c = newClock()
	_, ev = run(t, Rules{}, ok(c.now, "A", 5), ok(c.after(time.Hour), "B", 6), failed(c.after(time.Minute)), ok(c.after(time.Minute), "B", 6))
	eq(t, "failure in between", ev, "1:baseline", "2:tools")
}

func TestEmptiedListNeedsTwoHours(t *testing.T) {
	c := newClock()
	_, ev := run(t, Rules{}, ok(c.now, "A", 5), ok(c.after(time.Hour), "EMPTY", 0), ok(c.after(time.Minute), "EMPTY", 0), ok(c.after(118*time.Minute), "EMPTY", 0))
	eq(t, "1 h 59 min", ev, "1:baseline")
	c = newClock()
	_, ev = run(t, Rules{}, ok(c.now, "A", 5), ok(c.after(time.Hour), "EMPTY", 0), ok(c.after(time.Minute), "EMPTY", 0), ok(c.after(119*time.Minute), "EMPTY", 0))
	eq(t, "2 h", ev, "1:baseline", "2:tools")
}

func TestAtMostThreeToolChangesPerDay(t *testing.T) {
	c := newClock()
	reads := []Read{ok(c.now, "S0", 5)}
	for i := 1; i <= 4; i++ {
		s := fmt.Sprintf("S%d", i)
		reads = append(reads, ok(c.after(time.Hour), s, 5), ok(c.after(time.Minute), s, 5))
	}
	st, ev := run(t, Rules{}, reads...)
	eq(t, "four differences in a few hours", ev, "1:baseline", "2:tools", "3:tools", "4:tools")
	if st.Pending == nil || st.Pending.Surface != "S4" {
		t.Fatalf("the fourth should wait, pending: %+v", st.Pending)
	}
	// It is recorded by the first agreeing read once the first change is 24 h old.
	firstChange := ev[1].At
	p := Rules{}
	st2, ev2, _ := p.Apply(st, ok(firstChange.Add(24*time.Hour-time.Second), "S4", 5))
	eq(t, "before 24 h", ev2)
	_, ev2, _ = p.Apply(st2, ok(firstChange.Add(24*time.Hour), "S4", 5))
	eq(t, "at 24 h", ev2, "5:tools")
}

func TestDatesMaskedBySame(t *testing.T) {
	// Same decides equality after masking; a date-only difference is no difference.
	p := Rules{Same: func(a, b *Read) (bool, error) { return a.ToolCount == b.ToolCount, nil }}
	c := newClock()
	_, ev := run(t, p, ok(c.now, "dated-1", 5), ok(c.after(24*time.Hour), "dated-2", 5), ok(c.after(time.Minute), "dated-2", 5))
	eq(t, "date-only differences", ev, "1:baseline")
}

func version(at time.Time, v string) Read {
	obsID++
	return Read{ID: obsID, At: at, Version: v}
}

func TestVersionRules(t *testing.T) {
	for _, v := range []string{"1.3.0", "v2.0.0-beta.1", "0.0.1", "1.0.0+build.5", "v10.20.30-rc.1+x"} {
		if !IsVersion(v) {
			t.Errorf("IsVersion(%q) = false", v)
		}
	}
	for _, v := range []string{"", "1.3", "latest", "1.02.0", "2026-11-30", "1.0.0 (beta)", "v1", "1.0.0-"} {
		if IsVersion(v) {
			t.Errorf("IsVersion(%q) = true", v)
		}
	}
	c := newClock()
	// The first version is the baseline; a new one needs two agreeing reads a minute apart.
	_, ev := run(t, Rules{}, version(c.now, "1.0.0"), version(c.after(time.Hour), "1.1.0"))
	eq(t, "one read", ev)
	c = newClock()
	_, ev = run(t, Rules{}, version(c.now, "1.0.0"), version(c.after(time.Hour), "1.1.0"), version(c.after(time.Minute), "1.1.0"))
	eq(t, "two reads", ev, "1:version")
	if ev[0].VersionBefore != "1.0.0" || ev[0].VersionAfter != "1.1.0" {
		t.Errorf("version event %+v", ev[0])
	}
	// Not a version number: ignored.
	c = newClock()
	st, ev := run(t, Rules{}, version(c.now, "1.0.0"), version(c.after(time.Hour), "nightly"), version(c.after(time.Minute), "nightly"))
	eq(t, "not a version", ev)
	if st.Version != "1.0.0" {
		t.Errorf("version %q", st.Version)
	}
	// At most one version change in 24 h: the second waits.
	c = newClock()
	st, ev = run(t, Rules{}, version(c.now, "1.0.0"),
		version(c.after(time.Hour), "1.1.0"), version(c.after(time.Minute), "1.1.0"),
		version(c.after(time.Hour), "1.2.0"), version(c.after(time.Minute), "1.2.0"))
	eq(t, "second within a day", ev, "1:version")
	if st.PendingVersion != "1.2.0" {
		t.Errorf("pending version %q", st.PendingVersion)
	}
	p := Rules{}
	_, ev, _ = p.Apply(st, version(ev[0].At.Add(24*time.Hour), "1.2.0"))
	eq(t, "after 24 h", ev, "2:version")
	// Returning to a version recorded within the last week is not recorded again.
	c = newClock()
	st, ev = run(t, Rules{}, version(c.now, "1.0.0"),
		version(c.after(time.Hour), "1.1.0"), version(c.after(time.Minute), "1.1.0"),
		version(c.after(2*24*time.Hour), "1.0.0"), version(c.after(time.Minute), "1.0.0"))
	eq(t, "back within a week", ev, "1:version")
	if st.Version != "1.0.0" {
		t.Errorf("state follows the version silently: %q", st.Version)
	}
	// After a week it is recorded again.
	c = newClock()
	_, ev = run(t, Rules{}, version(c.now, "1.0.0"),
		version(c.after(time.Hour), "1.1.0"), version(c.after(time.Minute), "1.1.0"),
		version(c.after(8*24*time.Hour), "1.0.0"), version(c.after(time.Minute), "1.0.0"))
	eq(t, "back after a week", ev, "1:version", "2:version")
}

func TestPackageVersionsRecordedAtOnce(t *testing.T) {
	c := newClock()
	p := Rules{}
	// Not a version number: nothing, not even a baseline.
	st, ev := p.ApplyPackageVersion(State{}, "nightly", c.now)
	eq(t, "not a version", ev)
	// The first version is the baseline: observation started at version 1.0.0.
	st, ev = p.ApplyPackageVersion(st, "1.0.0", c.now)
	eq(t, "first", ev, "1:baseline")
	if ev[0].VersionAfter != "1.0.0" || ev[0].After != nil || ev[0].Before != nil || !ev[0].At.Equal(c.now) {
		t.Errorf("baseline event %+v", ev[0])
	}
	st, ev = p.ApplyPackageVersion(st, "1.0.0", c.after(3*time.Hour))
	eq(t, "same again", ev)
	st, ev = p.ApplyPackageVersion(st, "1.1.0", c.after(time.Hour))
	eq(t, "at once", ev, "2:version")
	if ev[0].VersionBefore != "1.0.0" || ev[0].VersionAfter != "1.1.0" {
		t.Errorf("version event %+v", ev[0])
	}
	st, ev = p.ApplyPackageVersion(st, "1.2.0", c.after(time.Hour))
	eq(t, "within 24 h", ev)
	// Back to a version of the last week while 1.2.0 waits: followed, not recorded.
	st, ev = p.ApplyPackageVersion(st, "1.2.0", c.after(24*time.Hour))
	eq(t, "a day later", ev, "3:version")
	st, ev = p.ApplyPackageVersion(st, "1.1.0", c.after(25*time.Hour))
	eq(t, "back within a week", ev)
	if st.Version != "1.1.0" {
		t.Errorf("state version %q, want 1.1.0 followed", st.Version)
	}
	// An entry whose history already started with a tool list (a bundle manifest, a
	// remote): a package version is no second baseline.
	c = newClock()
	st, _ = run(t, Rules{}, ok(c.now, "A", 2))
	_, ev = p.ApplyPackageVersion(st, "2.0.0", c.after(time.Hour))
	eq(t, "after a tools baseline", ev)
}

// TestConfirmation: the confirmation delays are owned by the rules: a minute (never
// less), two hours for an emptied list, or what they are given.
func TestConfirmation(t *testing.T) {
	for _, c := range []struct {
		p           Rules
		after, empt time.Duration
	}{
		{Rules{}, time.Minute, 2 * time.Hour},
		{Rules{ConfirmAfter: 5 * time.Minute, EmptyConfirmAfter: 3 * time.Hour}, 5 * time.Minute, 3 * time.Hour},
		{Rules{ConfirmAfter: time.Second}, time.Minute, 2 * time.Hour},
	} {
		if a, e := c.p.Confirmation(); a != c.after || e != c.empt {
			t.Errorf("%+v: Confirmation() = %v, %v; want %v, %v", c.p, a, e, c.after, c.empt)
		}
	}
	// A second read 30 s later does not confirm even with ConfirmAfter set below a minute.
	c := newClock()
	_, ev := run(t, Rules{ConfirmAfter: time.Second}, ok(c.now, "A", 1), ok(c.after(time.Hour), "B", 1), ok(c.after(30*time.Second), "B", 1))
	eq(t, "30 s apart", ev, "1:baseline")
}

func TestNumbersAreStableAndIncreasing(t *testing.T) {
	c := newClock()
	reads := []Read{ok(c.now, "A", 1)}
	for i := range 5 {
		s := fmt.Sprintf("B%d", i)
		reads = append(reads, ok(c.after(25*time.Hour), s, 1), ok(c.after(time.Minute), s, 1))
	}
	st, ev := run(t, Rules{}, reads...)
	eq(t, "numbers", ev, "1:baseline", "2:tools", "3:tools", "4:tools", "5:tools", "6:tools")
	if st.NextNumber != 7 {
		t.Errorf("NextNumber %d", st.NextNumber)
	}
}
