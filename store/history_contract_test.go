package store

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The contract tests of entry histories (SaveHistory, Changes, HideChange) and of the
// walks over the whole store (RoundsAfter, WalkRounds, WalkUptime), on every backend.

// testChange is a signed tools change of the entry, with the number, recorded at at.
func testChange(entryID, number int64, at time.Time) ChangeRecord {
	n := strconv.FormatInt(number, 10)
	return ChangeRecord{
		EntryID:    entryID,
		Number:     number,
		RecordedAt: at,
		Origin:     "automatic",
		Kind:       "tools",
		Summary:    n + " tools added, 1 removed",
		Details:    []byte(`{"added":["t` + n + `"],"removed":["old"]}`),
		Badges:     []string{"new_destructive_tool", "new_instructions"},
		Envelope:   testEnvelope(`{"change":` + n + `}`),
		KeyID:      "a050837d85070582",
	}
}

// stored is c as the store returns it: with its entry's slug, its time in UTC
// milliseconds and its payload digest.
func stored(c ChangeRecord, slug string) ChangeRecord {
	c.EntrySlug = slug
	c.RecordedAt = ms(c.RecordedAt)
	if c.Envelope != nil {
		c.PayloadDigest = testPayloadDigest(c.Envelope)
	}
	return c
}

func mustSaveHistory(t *testing.T, s Store, u HistoryUpdate) {
	t.Helper()
	if err := s.SaveHistory(t.Context(), u); err != nil {
		t.Fatalf("SaveHistory(entry %d, %d → %d): %v", u.EntryID, u.ExpectProcessed, u.Processed, err)
	}
}

// historySnapshot is a snapshot with every entry's history: its state and every change,
// hidden ones too.
type historySnapshot struct {
	Store     snapshot
	States    map[int64]string
	Processed map[int64]int64
	Changes   []ChangeRecord
}

func takeHistorySnapshot(t *testing.T, s Store) historySnapshot {
	t.Helper()
	ctx := t.Context()
	snap := historySnapshot{Store: takeSnapshot(t, s), States: map[int64]string{}, Processed: map[int64]int64{}}
	for _, e := range snap.Store.Entries {
		state, processed, err := s.HistoryState(ctx, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		snap.States[e.ID], snap.Processed[e.ID] = string(state), processed
	}
	var err error
	if snap.Changes, err = s.Changes(ctx, ChangeFilter{IncludeHidden: true}); err != nil {
		t.Fatal(err)
	}
	return snap
}

func checkHistoryUnchanged(t *testing.T, s Store, before historySnapshot, what string) {
	t.Helper()
	if after := takeHistorySnapshot(t, s); !reflect.DeepEqual(before, after) {
		t.Errorf("%s changed the store:\nbefore %+v\nafter  %+v", what, before, after)
	}
}

func checkChanges(t *testing.T, s Store, f ChangeFilter, want ...ChangeRecord) {
	t.Helper()
	got, err := s.Changes(t.Context(), f)
	if err != nil {
		t.Fatalf("Changes(%+v): %v", f, err)
	}
	if len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
		t.Errorf("Changes(%+v):\n got %+v\nwant %+v", f, got, want)
	}
}

func TestSaveHistory(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		e := mustAddEntry(t, s, "acme")
		o1 := mustSave(t, s, fullRound(e.ID, t0, t0, "echo"))
		o2 := mustSave(t, s, fullRound(e.ID, t0.Add(time.Hour), t0.Add(time.Hour), "echo2"))

		if state, processed, err := s.HistoryState(ctx, e.ID); err != nil || state != nil || processed != 0 {
			t.Errorf("HistoryState before any = %q, %d, %v; want nil, 0, nil", state, processed, err)
		}
		if _, _, err := s.HistoryState(ctx, 1<<40); !errors.Is(err, ErrNotFound) {
			t.Errorf("HistoryState(unknown entry) = %v, want ErrNotFound", err)
		}

		// The baseline, with a confirmation round due.
		base := testChange(e.ID, 1, t0.Add(time.Minute))
		base.Kind, base.Summary, base.Badges, base.AfterRound = "baseline", "observation started: 1 tool", nil, o1
		confirm := t0.Add(2 * time.Hour)
		mustSaveHistory(t, s, HistoryUpdate{
			EntryID: e.ID, Processed: o1, State: []byte(`{"v":1}`), Changes: []ChangeRecord{base},
			Due: []DueUpdate{{Reason: ReasonConfirm, At: confirm}},
		})
		if state, processed, err := s.HistoryState(ctx, e.ID); err != nil || string(state) != `{"v":1}` || processed != o1 {
			t.Errorf("HistoryState = %q, %d, %v; want {\"v\":1}, %d", state, processed, err, o1)
		}
		if got, err := s.Change(ctx, e.ID, 1); err != nil || !reflect.DeepEqual(got, stored(base, "acme")) {
			t.Errorf("Change(1) = %+v, %v\nwant %+v", got, err, stored(base, "acme"))
		}
		if ds, err := s.DueTimes(ctx, e.ID); err != nil || len(ds) != 1 || ds[0] != (Due{e.ID, ReasonConfirm, ms(confirm)}) {
			t.Errorf("DueTimes = %+v, %v; want the confirmation", ds, err)
		}

		// Two changes at once, one unsigned and without badges; the due time cleared.
		tools := testChange(e.ID, 2, t0.Add(61*time.Minute))
		tools.BeforeRound, tools.AfterRound = o1, o2
		version := testChange(e.ID, 3, t0.Add(61*time.Minute))
		version.Kind, version.Summary, version.Badges = "version", "version 1.0.0 → 1.1.0", nil
		version.Envelope, version.KeyID, version.AfterRound = nil, "", o2
		mustSaveHistory(t, s, HistoryUpdate{
			EntryID: e.ID, ExpectProcessed: o1, Processed: o2, State: []byte(`{"v":2}`),
			Changes: []ChangeRecord{tools, version},
			Due:     []DueUpdate{{Reason: ReasonConfirm}},
		})
		checkChanges(t, s, ChangeFilter{EntryID: e.ID}, stored(version, "acme"), stored(tools, "acme"), stored(base, "acme"))
		if ds, err := s.DueTimes(ctx, e.ID); err != nil || len(ds) != 0 {
			t.Errorf("DueTimes = %+v, %v; want none", ds, err)
		}

		// An update with neither changes nor new rounds replaces the state.
		mustSaveHistory(t, s, HistoryUpdate{EntryID: e.ID, ExpectProcessed: o2, Processed: o2, State: []byte(`{"v":3}`)})
		if state, processed, err := s.HistoryState(ctx, e.ID); err != nil || string(state) != `{"v":3}` || processed != o2 {
			t.Errorf("HistoryState = %q, %d, %v", state, processed, err)
		}

		err := s.SaveHistory(ctx, HistoryUpdate{EntryID: 1 << 40, State: []byte(`{}`)})
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("SaveHistory(unknown entry) = %v, want ErrNotFound", err)
		}
		if _, err := s.Change(ctx, e.ID, 4); !errors.Is(err, ErrNotFound) {
			t.Errorf("Change(4) = %v, want ErrNotFound", err)
		}
		if _, err := s.Change(ctx, 1<<40, 1); !errors.Is(err, ErrNotFound) {
			t.Errorf("Change(unknown entry) = %v, want ErrNotFound", err)
		}
	})
}

func TestSaveHistoryConflict(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		e := mustAddEntry(t, s, "acme")
		o1 := mustSave(t, s, fullRound(e.ID, t0, t0, "echo"))

		// Two updates computed from the same state: the second finds the first's.
		first := HistoryUpdate{EntryID: e.ID, Processed: o1, State: []byte(`"first"`),
			Changes: []ChangeRecord{testChange(e.ID, 1, t0)}}
		second := HistoryUpdate{EntryID: e.ID, Processed: o1, State: []byte(`"second"`),
			Changes: []ChangeRecord{testChange(e.ID, 1, t0.Add(time.Second))}}
		mustSaveHistory(t, s, first)
		before := takeHistorySnapshot(t, s)
		if err := s.SaveHistory(ctx, second); !errors.Is(err, ErrConflict) {
			t.Errorf("second update = %v, want ErrConflict", err)
		}
		second.ExpectProcessed, second.Processed = o1+1000, o1+1000 // ahead of the store
		if err := s.SaveHistory(ctx, second); !errors.Is(err, ErrConflict) {
			t.Errorf("update from a newer state = %v, want ErrConflict", err)
		}
		checkHistoryUnchanged(t, s, before, "a conflicting update")

		// Numbers that do not follow the entry's last change are refused, as such.
		o2 := mustSave(t, s, fullRound(e.ID, t0.Add(time.Hour), t0.Add(time.Hour), "echo2"))
		before = takeHistorySnapshot(t, s)
		for _, n := range []int64{1, 3, 5} {
			err := s.SaveHistory(ctx, HistoryUpdate{EntryID: e.ID, ExpectProcessed: o1, Processed: o2,
				State: []byte(`"x"`), Changes: []ChangeRecord{testChange(e.ID, n, t0.Add(time.Hour))}})
			if err == nil || errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), strconv.FormatInt(n, 10)) {
				t.Errorf("change number %d after 1: %v; want an error naming the number, not ErrConflict", n, err)
			}
		}
		checkHistoryUnchanged(t, s, before, "misnumbered changes")

		// Two operator edits computed from one state leave processed as it was: the
		// second is refused by its number.
		edit := testChange(e.ID, 2, t0.Add(2*time.Hour))
		edit.Origin, edit.Kind, edit.Badges = "operator", "operator_edit", nil
		mustSaveHistory(t, s, HistoryUpdate{EntryID: e.ID, ExpectProcessed: o1, Processed: o1,
			State: []byte(`"edit"`), Changes: []ChangeRecord{edit}})
		before = takeHistorySnapshot(t, s)
		err := s.SaveHistory(ctx, HistoryUpdate{EntryID: e.ID, ExpectProcessed: o1, Processed: o1,
			State: []byte(`"edit again"`), Changes: []ChangeRecord{edit}})
		if err == nil {
			t.Error("a second change 2 was accepted")
		}
		checkHistoryUnchanged(t, s, before, "a second edit from the same state")

		// The right numbers from the right state are accepted.
		mustSaveHistory(t, s, HistoryUpdate{EntryID: e.ID, ExpectProcessed: o1, Processed: o2,
			State: []byte(`"third"`), Changes: []ChangeRecord{testChange(e.ID, 3, t0.Add(3*time.Hour))}})
		if cs, err := s.Changes(ctx, ChangeFilter{EntryID: e.ID}); err != nil || len(cs) != 3 {
			t.Errorf("Changes = %d, %v; want 3", len(cs), err)
		}
	})
}

func TestSaveHistoryRefusesBadInput(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		e, other := mustAddEntry(t, s, "acme"), mustAddEntry(t, s, "other")
		o1 := mustSave(t, s, fullRound(e.ID, t0, t0, "echo"))
		otherObs := mustSave(t, s, fullRound(other.ID, t0, t0, "echo"))
		valid := func() HistoryUpdate {
			c := testChange(e.ID, 1, t0)
			c.AfterRound = o1
			return HistoryUpdate{EntryID: e.ID, Processed: o1, State: []byte(`{}`), Changes: []ChangeRecord{c},
				Due: []DueUpdate{{Reason: ReasonConfirm, At: t0}}}
		}
		before := takeHistorySnapshot(t, s)
		for name, mutate := range map[string]func(u *HistoryUpdate, c *ChangeRecord){
			"no entry id":             func(u *HistoryUpdate, c *ChangeRecord) { u.EntryID, c.EntryID = 0, 0 },
			"change of another entry": func(_ *HistoryUpdate, c *ChangeRecord) { c.EntryID = other.ID },
			"processed backwards":     func(u *HistoryUpdate, _ *ChangeRecord) { u.ExpectProcessed = o1 + 1 },
			"negative processed":      func(u *HistoryUpdate, _ *ChangeRecord) { u.ExpectProcessed, u.Processed = -1, -1 },
			"no state":                func(u *HistoryUpdate, _ *ChangeRecord) { u.State = nil },
			"due reason":              func(u *HistoryUpdate, _ *ChangeRecord) { u.Due = []DueUpdate{{Reason: "weekly", At: t0}} },
			"numbers with a gap": func(u *HistoryUpdate, c *ChangeRecord) {
				u.Changes = append(u.Changes, testChange(e.ID, 3, t0))
			},
			"number 0":             func(_ *HistoryUpdate, c *ChangeRecord) { c.Number = 0 },
			"no recorded time":     func(_ *HistoryUpdate, c *ChangeRecord) { c.RecordedAt = time.Time{} },
			"origin":               func(_ *HistoryUpdate, c *ChangeRecord) { c.Origin = "robot" },
			"kind":                 func(_ *HistoryUpdate, c *ChangeRecord) { c.Kind = "rename" },
			"no summary":           func(_ *HistoryUpdate, c *ChangeRecord) { c.Summary = "" },
			"summary of two lines": func(_ *HistoryUpdate, c *ChangeRecord) { c.Summary = "1 tool added\n2 removed" },
			"summary with DEL":     func(_ *HistoryUpdate, c *ChangeRecord) { c.Summary = "a\x7fb" },
			"summary with C1":      func(_ *HistoryUpdate, c *ChangeRecord) { c.Summary = "a\u0085b" },
			"summary not UTF-8":    func(_ *HistoryUpdate, c *ChangeRecord) { c.Summary = "a\xffb" },
			"summary long":         func(_ *HistoryUpdate, c *ChangeRecord) { c.Summary = strings.Repeat("é", 201) },
			"no details":           func(_ *HistoryUpdate, c *ChangeRecord) { c.Details = nil },
			"details not JSON":     func(_ *HistoryUpdate, c *ChangeRecord) { c.Details = []byte(`{"added":`) },
			"envelope without key": func(_ *HistoryUpdate, c *ChangeRecord) { c.KeyID = "" },
			"key without envelope": func(_ *HistoryUpdate, c *ChangeRecord) { c.Envelope = nil },
			"empty envelope":       func(_ *HistoryUpdate, c *ChangeRecord) { c.Envelope = []byte{} },
			"hidden":               func(_ *HistoryUpdate, c *ChangeRecord) { c.Hidden, c.HiddenReason = true, "spam" },
			"badge twice":          func(_ *HistoryUpdate, c *ChangeRecord) { c.Badges = []string{"a", "a"} },
			"badge not a token":    func(_ *HistoryUpdate, c *ChangeRecord) { c.Badges = []string{"Newly Destructive"} },
			"seven badges":         func(_ *HistoryUpdate, c *ChangeRecord) { c.Badges = strings.Split("a b c d e f g", " ") },
			"negative round":       func(_ *HistoryUpdate, c *ChangeRecord) { c.BeforeRound = -1 },
			"no such round":        func(_ *HistoryUpdate, c *ChangeRecord) { c.BeforeRound = 1 << 40 },
			"another entry's round": func(_ *HistoryUpdate, c *ChangeRecord) {
				c.BeforeRound = otherObs
			},
		} {
			u := valid()
			mutate(&u, &u.Changes[0])
			if err := s.SaveHistory(t.Context(), u); err == nil || errors.Is(err, ErrConflict) {
				t.Errorf("%s: SaveHistory = %v, want a refusal", name, err)
			}
		}
		checkHistoryUnchanged(t, s, before, "refused SaveHistory")
		mustSaveHistory(t, s, valid())
	})
}

func TestSaveHistoryConcurrent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		e := mustAddEntry(t, s, "acme")
		const racers, steps = 4, 6
		for step := range int64(steps) {
			at := t0.Add(time.Duration(step) * time.Hour)
			obs := mustSave(t, s, fullRound(e.ID, at, at, fmt.Sprintf("tool%d", step)))
			_, processed, err := s.HistoryState(ctx, e.ID)
			if err != nil {
				t.Fatal(err)
			}
			// Every racer computes its update from the same state.
			errs := make([]error, racers)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range racers {
				wg.Go(func() {
					c := testChange(e.ID, step+1, at)
					c.Summary = fmt.Sprintf("racer %d", i)
					u := HistoryUpdate{EntryID: e.ID, ExpectProcessed: processed, Processed: obs,
						State: []byte(strconv.Itoa(i)), Changes: []ChangeRecord{c},
						Due: []DueUpdate{{Reason: ReasonConfirm, At: at.Add(time.Duration(i) * time.Minute)}}}
					<-start
					errs[i] = s.SaveHistory(ctx, u)
				})
			}
			close(start)
			wg.Wait()
			winner := -1
			for i, err := range errs {
				switch {
				case err == nil && winner >= 0:
					t.Errorf("step %d: racers %d and %d both won", step, winner, i)
				case err == nil:
					winner = i
				case !errors.Is(err, ErrConflict):
					t.Errorf("step %d: racer %d: %v, want ErrConflict", step, i, err)
				}
			}
			if winner < 0 {
				t.Fatalf("step %d: no racer won: %v", step, errs)
			}
			state, p, err := s.HistoryState(ctx, e.ID)
			if err != nil || string(state) != strconv.Itoa(winner) || p != obs {
				t.Errorf("step %d: state %q, processed %d, %v; want racer %d's", step, state, p, err, winner)
			}
			c, err := s.Change(ctx, e.ID, step+1)
			if err != nil || c.Summary != fmt.Sprintf("racer %d", winner) {
				t.Errorf("step %d: change %+v, %v; want racer %d's", step, c, err, winner)
			}
			ds, err := s.DueTimes(ctx, e.ID)
			if err != nil || len(ds) != 1 || !ds[0].At.Equal(ms(at.Add(time.Duration(winner)*time.Minute))) {
				t.Errorf("step %d: due times %+v, %v; want racer %d's", step, ds, err, winner)
			}
		}
		if cs, err := s.Changes(ctx, ChangeFilter{EntryID: e.ID}); err != nil || len(cs) != steps {
			t.Errorf("%d changes, %v; want %d", len(cs), err, steps)
		}
	})
}

func TestChanges(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		a, b := mustAddEntry(t, s, "alpha"), mustAddEntry(t, s, "beta")
		at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
		a1, a2, a3 := testChange(a.ID, 1, at(1)), testChange(a.ID, 2, at(3)), testChange(a.ID, 3, at(5))
		b1, b2 := testChange(b.ID, 1, at(2)), testChange(b.ID, 2, at(3)) // b2 ties with a2
		b2.Origin, b2.Kind, b2.Badges = "operator", "operator_edit", nil
		mustSaveHistory(t, s, HistoryUpdate{EntryID: a.ID, State: []byte(`1`), Changes: []ChangeRecord{a1, a2}})
		mustSaveHistory(t, s, HistoryUpdate{EntryID: b.ID, State: []byte(`1`), Changes: []ChangeRecord{b1, b2}})
		mustSaveHistory(t, s, HistoryUpdate{EntryID: a.ID, State: []byte(`2`), Changes: []ChangeRecord{a3}})
		A1, A2, A3 := stored(a1, "alpha"), stored(a2, "alpha"), stored(a3, "alpha")
		B1, B2 := stored(b1, "beta"), stored(b2, "beta")

		// Newest first; a tie in time goes to the higher entry id.
		checkChanges(t, s, ChangeFilter{}, A3, B2, A2, B1, A1)
		checkChanges(t, s, ChangeFilter{Limit: 2}, A3, B2)
		checkChanges(t, s, ChangeFilter{Since: at(3)}, A3, B2, A2)
		checkChanges(t, s, ChangeFilter{Since: at(3), Limit: 1}, A3)
		checkChanges(t, s, ChangeFilter{Since: at(6)})
		checkChanges(t, s, ChangeFilter{EntryID: a.ID}, A3, A2, A1)
		checkChanges(t, s, ChangeFilter{EntryID: a.ID, Since: at(2)}, A3, A2)
		checkChanges(t, s, ChangeFilter{EntryID: b.ID, Limit: -1}, B2, B1)
		checkChanges(t, s, ChangeFilter{EntryID: 1 << 40})

		// Paging one entry's changes by number.
		checkChanges(t, s, ChangeFilter{EntryID: a.ID, Limit: 2}, A3, A2)
		checkChanges(t, s, ChangeFilter{EntryID: a.ID, BeforeNumber: 2, Limit: 2}, A1)
		checkChanges(t, s, ChangeFilter{EntryID: a.ID, BeforeNumber: 3, Limit: 1}, A2)
		checkChanges(t, s, ChangeFilter{EntryID: a.ID, BeforeNumber: 1})
		checkChanges(t, s, ChangeFilter{EntryID: a.ID, BeforeNumber: 100}, A3, A2, A1)

		// Without envelopes: the same changes, their Envelope nil.
		bare := func(cs ...ChangeRecord) []ChangeRecord {
			var out []ChangeRecord
			for _, c := range cs {
				c.Envelope = nil
				out = append(out, c)
			}
			return out
		}
		checkChanges(t, s, ChangeFilter{WithoutEnvelopes: true}, bare(A3, B2, A2, B1, A1)...)
		checkChanges(t, s, ChangeFilter{EntryID: a.ID, BeforeNumber: 3, Limit: 1, WithoutEnvelopes: true}, bare(A2)...)
		for _, f := range []ChangeFilter{{BeforeNumber: 2}, {EntryID: -1}, {EntryID: a.ID, BeforeNumber: -1}} {
			if cs, err := s.Changes(ctx, f); err == nil {
				t.Errorf("Changes(%+v) = %+v, want an error", f, cs)
			}
		}
	})
}

func TestHideChange(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		e := mustAddEntry(t, s, "acme")
		c1, c2 := testChange(e.ID, 1, t0), testChange(e.ID, 2, t0.Add(time.Hour))
		mustSaveHistory(t, s, HistoryUpdate{EntryID: e.ID, State: []byte(`1`), Changes: []ChangeRecord{c1, c2}})
		C1, C2 := stored(c1, "acme"), stored(c2, "acme")

		before := takeHistorySnapshot(t, s)
		for name, reason := range map[string]string{
			"no reason":         "",
			"two lines":         "spam\nreally",
			"tab":               "spam\tx",
			"too long":          strings.Repeat("x", 501),
			"invalid UTF-8":     "spam \xff",
			"a control in text": "spam \x1b[31m",
		} {
			if err := s.HideChange(ctx, e.ID, 2, true, reason); err == nil || errors.Is(err, ErrNotFound) {
				t.Errorf("%s: HideChange = %v, want a refusal", name, err)
			}
		}
		if err := s.HideChange(ctx, e.ID, 3, true, "spam"); !errors.Is(err, ErrNotFound) {
			t.Errorf("HideChange(no such number) = %v, want ErrNotFound", err)
		}
		if err := s.HideChange(ctx, 1<<40, 1, false, ""); !errors.Is(err, ErrNotFound) {
			t.Errorf("HideChange(no such entry) = %v, want ErrNotFound", err)
		}
		checkHistoryUnchanged(t, s, before, "refused HideChange")

		reason := strings.Repeat("é", 500)
		if err := s.HideChange(ctx, e.ID, 2, true, reason); err != nil {
			t.Fatal(err)
		}
		hidden := C2
		hidden.Hidden, hidden.HiddenReason = true, reason
		checkChanges(t, s, ChangeFilter{}, C1)
		checkChanges(t, s, ChangeFilter{EntryID: e.ID}, C1)
		checkChanges(t, s, ChangeFilter{IncludeHidden: true}, hidden, C1)
		checkChanges(t, s, ChangeFilter{EntryID: e.ID, IncludeHidden: true, BeforeNumber: 3}, hidden, C1)
		if got, err := s.Change(ctx, e.ID, 2); err != nil || !reflect.DeepEqual(got, hidden) {
			t.Errorf("Change(hidden) = %+v, %v", got, err)
		}

		// Hidden again, with another reason; then shown, which clears the reason.
		if err := s.HideChange(ctx, e.ID, 2, true, "Duplicate of #1"); err != nil {
			t.Fatal(err)
		}
		hidden.HiddenReason = "Duplicate of #1"
		checkChanges(t, s, ChangeFilter{IncludeHidden: true, Limit: 1}, hidden)
		if err := s.HideChange(ctx, e.ID, 2, false, "restored after review"); err != nil {
			t.Fatal(err)
		}
		checkChanges(t, s, ChangeFilter{}, C2, C1)
		if err := s.HideChange(ctx, e.ID, 2, false, ""); err != nil {
			t.Errorf("showing a shown change: %v", err)
		}
		checkChanges(t, s, ChangeFilter{IncludeHidden: true}, C2, C1)
	})
}

func TestChangesImmutable(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		x, ok := s.(testExecer)
		if !ok {
			t.Fatalf("%s store does not implement testExecer", s.Backend())
		}
		ctx := t.Context()
		e := mustAddEntry(t, s, "acme")
		obs := mustSave(t, s, fullRound(e.ID, t0, t0, "echo"))
		c := testChange(e.ID, 1, t0)
		c.AfterRound = obs
		mustSaveHistory(t, s, HistoryUpdate{EntryID: e.ID, Processed: obs, State: []byte(`1`), Changes: []ChangeRecord{c}})
		before := takeHistorySnapshot(t, s)
		for _, q := range []string{
			`UPDATE changes SET summary = 'forged'`,
			`UPDATE changes SET ledger_id = ledger_id`,
			`UPDATE changes SET ledger_id = NULL`,
			`UPDATE changes SET number = number + 1`,
			`UPDATE changes SET recorded_at = recorded_at`,
			`UPDATE changes SET details = details`,
			`UPDATE changes SET badges = '[]'`,
			`UPDATE changes SET origin = 'operator', kind = 'operator_edit'`,
			`UPDATE changes SET after_round = NULL`,
			`UPDATE changes SET entry_id = entry_id`,
			`UPDATE changes SET summary = 'forged', hidden = TRUE, hidden_reason = 'x'`,
			// What the schema holds hidden and its reason to.
			`UPDATE changes SET hidden = TRUE`,
			`UPDATE changes SET hidden_reason = 'shown, with a reason'`,
			`UPDATE changes SET hidden = TRUE, hidden_reason = 'two' || char(10) || 'lines'`,
		} {
			if err := x.execForTest(ctx, q); err == nil {
				t.Errorf("%s: accepted", q)
			}
		}
		checkHistoryUnchanged(t, s, before, "a refused change update")

		// Hiding is the one update allowed.
		if err := x.execForTest(ctx, `UPDATE changes SET hidden = TRUE, hidden_reason = 'spam'`); err != nil {
			t.Fatalf("hiding through SQL: %v", err)
		}
		want := stored(c, "acme")
		want.Hidden, want.HiddenReason = true, "spam"
		if got, err := s.Change(ctx, e.ID, 1); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Change = %+v, %v; want %+v", got, err, want)
		}
	})
}

func TestDeleteEntryHistory(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		gone, kept := mustAddEntry(t, s, "gone"), mustAddEntry(t, s, "kept")
		for _, e := range []Entry{gone, kept} {
			o1 := mustSave(t, s, fullRound(e.ID, t0, t0, "echo"))
			o2 := mustSave(t, s, fullRound(e.ID, t0.Add(time.Hour), t0.Add(time.Hour), "echo2"))
			c1, c2 := testChange(e.ID, 1, t0), testChange(e.ID, 2, t0.Add(time.Hour))
			c1.AfterRound, c2.BeforeRound, c2.AfterRound = o1, o1, o2
			mustSaveHistory(t, s, HistoryUpdate{EntryID: e.ID, Processed: o2, State: []byte(`"s"`), Changes: []ChangeRecord{c1, c2}})
		}
		if err := s.HideChange(ctx, gone.ID, 1, true, "spam"); err != nil {
			t.Fatal(err)
		}
		want := takeHistorySnapshot(t, s)

		if err := s.DeleteEntry(ctx, "gone", "removed by its operator"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.HistoryState(ctx, gone.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("HistoryState after delete = %v, want ErrNotFound", err)
		}
		for n := range int64(3) {
			if _, err := s.Change(ctx, gone.ID, n); !errors.Is(err, ErrNotFound) {
				t.Errorf("Change(%d) after delete = %v, want ErrNotFound", n, err)
			}
		}
		checkChanges(t, s, ChangeFilter{EntryID: gone.ID, IncludeHidden: true})

		// The other entry's history is untouched.
		want.Store = takeSnapshot(t, s)
		delete(want.States, gone.ID)
		delete(want.Processed, gone.ID)
		var keptChanges []ChangeRecord
		for _, c := range want.Changes {
			if c.EntryID == kept.ID {
				keptChanges = append(keptChanges, c)
			}
		}
		want.Changes = keptChanges
		if got := takeHistorySnapshot(t, s); !reflect.DeepEqual(got, want) {
			t.Errorf("after delete:\n got %+v\nwant %+v", got, want)
		}

		// A new entry with the slug starts with no history.
		again := mustAddEntry(t, s, "gone")
		if state, processed, err := s.HistoryState(ctx, again.ID); err != nil || state != nil || processed != 0 {
			t.Errorf("HistoryState of the new entry = %q, %d, %v", state, processed, err)
		}
		checkChanges(t, s, ChangeFilter{EntryID: again.ID, IncludeHidden: true})
	})
}

func TestRoundsAfter(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		e, other := mustAddEntry(t, s, "acme"), mustAddEntry(t, s, "other")
		at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
		// Stored in an order other than their start times, with another entry's between.
		var ids []int64
		for i, r := range []*Round{
			fullRound(e.ID, at(5), at(5), "echo"),
			unsignedRound(e.ID, at(1), at(1)),
			authRound(e.ID, at(3), at(3)),
			fullRound(e.ID, at(2), at(2), "echo2"),
			unsignedRound(e.ID, at(4), at(4)),
		} {
			ids = append(ids, mustSave(t, s, r))
			mustSave(t, s, unsignedRound(other.ID, at(i), at(i)))
		}
		newest, err := s.Rounds(ctx, e.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		byID := map[int64]RoundSummary{}
		for _, r := range newest {
			byID[r.ID] = r
		}
		check := func(afterID int64, limit int, want ...int64) {
			t.Helper()
			got, err := s.RoundsAfter(ctx, e.ID, afterID, limit)
			if err != nil {
				t.Fatalf("RoundsAfter(%d, %d): %v", afterID, limit, err)
			}
			if len(got) != len(want) {
				t.Fatalf("RoundsAfter(%d, %d) = %d rounds, want %d", afterID, limit, len(got), len(want))
			}
			for i, r := range got {
				if r.ID != want[i] || !reflect.DeepEqual(r, byID[want[i]]) {
					t.Errorf("RoundsAfter(%d, %d)[%d] = %+v, want %+v", afterID, limit, i, r, byID[want[i]])
				}
			}
		}
		check(0, 0, ids...)
		check(0, -1, ids...)
		check(0, 2, ids[:2]...)
		check(ids[1], 2, ids[2:4]...)
		check(ids[1]+1, 0, ids[2:]...)
		check(ids[4], 0)
		if rs, err := s.RoundsAfter(ctx, 1<<40, 0, 0); err != nil || len(rs) != 0 {
			t.Errorf("RoundsAfter(unknown entry) = %+v, %v", rs, err)
		}
	})
}

func TestWalkRounds(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		walk := func(since time.Time) []RoundSummary {
			t.Helper()
			var got []RoundSummary
			if err := s.WalkRounds(ctx, since, func(r RoundSummary) error {
				got = append(got, r)
				return nil
			}); err != nil {
				t.Fatalf("WalkRounds: %v", err)
			}
			return got
		}
		if got := walk(time.Time{}); len(got) != 0 {
			t.Errorf("WalkRounds of an empty store = %+v", got)
		}

		es := []Entry{mustAddEntry(t, s, "a"), mustAddEntry(t, s, "b"), mustAddEntry(t, s, "c")}
		at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
		// Rounds of the entries interleaved, the later entries' first.
		for i := range 4 {
			for j := len(es) - 1; j >= 0; j-- {
				h := (i*7 + j*3) % 10
				var r *Round
				switch (i + j) % 3 {
				case 0:
					r = fullRound(es[j].ID, at(h), at(h), fmt.Sprintf("tool%d", i))
				case 1:
					r = authRound(es[j].ID, at(h), at(h))
				default:
					r = unsignedRound(es[j].ID, at(h), at(h))
				}
				mustSave(t, s, r)
			}
		}
		var all []RoundSummary
		for _, e := range es {
			rs, err := s.RoundsAfter(ctx, e.ID, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, rs...)
		}
		if got := walk(time.Time{}); !reflect.DeepEqual(got, all) {
			t.Errorf("WalkRounds:\n got %+v\nwant %+v", got, all)
		}

		// Since: rounds started at or after it, in the same order.
		since := at(4).Add(-time.Nanosecond) // at(4) in milliseconds
		var want []RoundSummary
		for _, r := range all {
			if !r.StartedAt.Before(ms(at(4))) {
				want = append(want, r)
			}
		}
		if got := walk(since); len(want) == 0 || len(want) == len(all) || !reflect.DeepEqual(got, want) {
			t.Errorf("WalkRounds(since):\n got %+v\nwant %+v", got, want)
		}
		if got := walk(at(100)); len(got) != 0 {
			t.Errorf("WalkRounds(after every round) = %+v", got)
		}

		// fn's error stops the walk and is returned; fn may use the store.
		errStop := errors.New("stop")
		calls := 0
		err := s.WalkRounds(ctx, time.Time{}, func(r RoundSummary) error {
			calls++
			if _, err := s.SaveRound(ctx, unsignedRound(r.EntryID, at(1000+calls), at(1000+calls))); err != nil {
				return err
			}
			if calls == 2 {
				return fmt.Errorf("wrapped: %w", errStop)
			}
			return nil
		})
		if !errors.Is(err, errStop) || calls != 2 {
			t.Errorf("WalkRounds with a failing fn = %v after %d calls; want errStop after 2", err, calls)
		}
	})
}

// TestWalkRoundsPages walks more rounds than one page holds.
func TestWalkRoundsPages(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		const entries, perEntry = 3, walkPage/3 + 34
		seedRounds(t, s, entries, perEntry, 16)
		n := 0
		var last RoundSummary
		err := s.WalkRounds(t.Context(), time.Time{}, func(r RoundSummary) error {
			if n > 0 && (r.EntryID < last.EntryID || r.EntryID == last.EntryID && r.ID <= last.ID) {
				return fmt.Errorf("round %d of entry %d after round %d of entry %d", r.ID, r.EntryID, last.ID, last.EntryID)
			}
			if r.Signed != (r.KeyID != "") || r.Signed != (r.Fingerprints != nil) {
				return fmt.Errorf("round %d: signed %v, key id %q, fingerprints %v", r.ID, r.Signed, r.KeyID, r.Fingerprints)
			}
			n++
			last = r
			return nil
		})
		if err != nil || n != entries*perEntry {
			t.Errorf("WalkRounds: %d rounds, %v; want %d", n, err, entries*perEntry)
		}
		// The seeded rounds start an hour apart from seedStart + 1h: the last 10 of each entry.
		n = 0
		err = s.WalkRounds(t.Context(), seedStart.Add(time.Duration(perEntry-9)*time.Hour), func(RoundSummary) error {
			n++
			return nil
		})
		if err != nil || n != entries*10 {
			t.Errorf("WalkRounds(since): %d rounds, %v; want %d", n, err, entries*10)
		}
	})
}

func TestWalkUptime(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		a, b := mustAddEntry(t, s, "a"), mustAddEntry(t, s, "b")
		day := func(d int) time.Time { return time.Date(2026, 3, d, 12, 0, 0, 0, time.UTC) }
		due := t0
		round := func(e Entry, d int, c UptimeClass) {
			t.Helper()
			due = due.Add(time.Minute)
			r := unsignedRound(e.ID, due, day(d))
			r.Uptime = c
			mustSave(t, s, r)
		}
		// b's first, so that the walk's order is not the order of storing.
		round(b, 5, UptimeAnswered)
		round(b, 2, UptimeNoAnswer)
		round(a, 3, UptimeInconclusive)
		round(a, 1, UptimeAnswered)
		round(a, 2, UptimeAnswered)
		round(a, 2, UptimeNoAnswer)

		type row struct {
			entry int64
			day   UptimeDay
		}
		walk := func(from, to string) []row {
			t.Helper()
			var got []row
			if err := s.WalkUptime(ctx, from, to, func(id int64, d UptimeDay) error {
				got = append(got, row{id, d})
				return nil
			}); err != nil {
				t.Fatalf("WalkUptime(%s, %s): %v", from, to, err)
			}
			return got
		}
		want := func(from, to string) []row {
			t.Helper()
			var rows []row
			for _, e := range []Entry{a, b} {
				ds, err := s.UptimeDays(ctx, e.ID, from, to)
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range ds {
					rows = append(rows, row{e.ID, d})
				}
			}
			return rows
		}
		if got, w := walk("2026-03-01", "2026-03-31"), want("2026-03-01", "2026-03-31"); len(w) != 5 || !reflect.DeepEqual(got, w) {
			t.Errorf("WalkUptime(March):\n got %+v\nwant %+v", got, w)
		}
		got, w := walk("2026-03-02", "2026-03-03"), []row{
			{a.ID, UptimeDay{"2026-03-02", 1, 1, 0, DayOffline}},
			{a.ID, UptimeDay{"2026-03-03", 0, 0, 1, DayNotCounted}},
			{b.ID, UptimeDay{"2026-03-02", 0, 1, 0, DayOffline}},
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("WalkUptime(2nd to 3rd):\n got %+v\nwant %+v", got, w)
		}
		if got := walk("2026-03-06", "2026-04-30"); len(got) != 0 {
			t.Errorf("WalkUptime(no days) = %+v", got)
		}

		errStop := errors.New("stop")
		calls := 0
		err := s.WalkUptime(ctx, "2026-03-01", "2026-03-31", func(int64, UptimeDay) error {
			calls++
			return errStop
		})
		if err != errStop || calls != 1 {
			t.Errorf("WalkUptime with a failing fn = %v after %d calls", err, calls)
		}
		for _, days := range [][2]string{{"2026-3-1", "2026-03-31"}, {"2026-03-01", ""}} {
			if err := s.WalkUptime(ctx, days[0], days[1], func(int64, UptimeDay) error { return nil }); err == nil {
				t.Errorf("WalkUptime(%q, %q) accepted", days[0], days[1])
			}
		}
	})
}

// seedStart is when the rounds of seedRounds start: round n of an entry starts n hours
// later.
var seedStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// seedRounds stores perEntry rounds of each of entries new entries, in a few
// statements through testExecer, far faster than SaveRound would: rounds are stored
// interleaved across entries, as a real store has them, every other one signed with an
// envelope of blob bytes and every one with results of blob bytes.
func seedRounds(tb testing.TB, s Store, entries, perEntry, blob int) {
	tb.Helper()
	x, ok := s.(testExecer)
	if !ok {
		tb.Fatalf("%s store does not implement testExecer", s.Backend())
	}
	var (
		fp    = "'sha256:" + strings.Repeat("a", 64) + "'"
		e, p  = strconv.Itoa(entries), strconv.Itoa(perEntry)
		b     = strconv.Itoa(blob)
		b16   = strconv.Itoa(max(blob/16, 1))
		start = strconv.FormatInt(seedStart.UnixMilli(), 10)
		stmts []string
	)
	switch s.Backend() {
	case "postgres":
		stmts = []string{
			// Stored as they would be once large: out of line (uncompressed, as random
			// bytes would be).
			`ALTER TABLE rounds ALTER COLUMN results SET STORAGE EXTERNAL`,
			`ALTER TABLE ledger ALTER COLUMN envelope SET STORAGE EXTERNAL`,
			`INSERT INTO surfaces (fingerprint, doc, created_at) VALUES (` + fp + `, '\x5b5d', now())`,
			`INSERT INTO entries (slug, kind, locator, name, source, claimed, cadence_ms, created_at)
			 SELECT 'seed-' || g, 'remote', 'https://seed-' || g || '.example.com/mcp', 'Seed ' || g, 'import',
			        false, 0, now()
			 FROM generate_series(1, ` + e + `) g`,
			// The signed rounds' records first, stored pending in storing order, then
			// numbered by the sequencing step's statements, as SaveRound's would be.
			`INSERT INTO ledger (kind, entry_id, payload_digest, key_id, envelope, created_at)
			 SELECT 'probe', e.id,
			        repeat('a', 64), 'seedkey', decode(repeat(md5(e.id || '-' || n), ` + b16 + `), 'hex'), x.t
			 FROM generate_series(2, ` + p + `, 2) n
			 CROSS JOIN entries e
			 CROSS JOIN LATERAL (SELECT to_timestamp(` + start + ` / 1000.0) + n * interval '1 hour') x (t)
			 WHERE e.slug LIKE 'seed-%'
			 ORDER BY n, e.id`,
			seedNumberPending + `;` + advanceCounterSQL,
			`INSERT INTO rounds (entry_id, due_at, reason, round_id, started_at, finished_at, coverage,
			     signed, unsigned_reason, reach, http_status, stop, uptime, retry_after_ms, protocol_version,
			     server_name, server_version, tool_count, pages, fp_surface, fp_toolset, fp_schema,
			     fp_instructions, results, timings, ledger_id)
			 SELECT e.id, x.t, 'cadence', 'seed-' || e.id || '-' || n, x.t, x.t + interval '1 second',
			        CASE WHEN n % 2 = 0 THEN 'full' ELSE '' END, n % 2 = 0,
			        CASE WHEN n % 2 = 0 THEN '' ELSE 'no_handshake' END, '', 200, '', 'answered', 0,
			        '2025-11-25', 'seed', '1.0.0', 1, 1,
			        CASE WHEN n % 2 = 0 THEN ` + fp + ` END, CASE WHEN n % 2 = 0 THEN ` + fp + ` END,
			        CASE WHEN n % 2 = 0 THEN ` + fp + ` END, CASE WHEN n % 2 = 0 THEN ` + fp + ` END,
			        decode(repeat(md5(e.id || '-' || n), ` + b16 + `), 'hex'), '\x7b7d',
			        CASE WHEN n % 2 = 0 THEN (SELECT l.id FROM ledger l WHERE l.entry_id = e.id AND l.created_at = x.t) END
			 FROM generate_series(1, ` + p + `) n
			 CROSS JOIN entries e
			 CROSS JOIN LATERAL (SELECT to_timestamp(` + start + ` / 1000.0) + n * interval '1 hour') x (t)
			 WHERE e.slug LIKE 'seed-%'
			 ORDER BY n, e.id`,
			`VACUUM ANALYZE`,
		}
	case "sqlite":
		series := func(n string) string {
			return `WITH RECURSIVE g (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ` + n + `) `
		}
		stmts = []string{
			`INSERT INTO surfaces (fingerprint, doc, created_at) VALUES (` + fp + `, X'5B5D', 0)`,
			series(e) + `
			 INSERT INTO entries (slug, kind, locator, name, source, claimed, cadence_ms, created_at)
			 SELECT 'seed-' || n, 'remote', 'https://seed-' || n || '.example.com/mcp', 'Seed ' || n, 'import',
			        0, 0, 0
			 FROM g`,
		}
		// The signed rounds' records first, as on PostgreSQL, one due time's records per
		// step: SQLite's guard counts the pending records for every number it checks (it
		// has no commit-time check), so one step over all of them would be quadratic.
		for n := 2; n <= perEntry; n += 2 {
			stmts = append(stmts, `
			 INSERT INTO ledger (kind, entry_id, payload_digest, key_id, envelope, created_at)
			 SELECT 'probe', e.id,
			        '`+strings.Repeat("a", 64)+`', 'seedkey', randomblob(`+b+`), `+start+` + `+strconv.Itoa(n)+` * 3600000
			 FROM entries e
			 WHERE e.slug GLOB 'seed-*'
			 ORDER BY e.id`,
				seedNumberPending+`;`+advanceCounterSQL)
		}
		stmts = append(stmts,
			series(p)+`
			 INSERT INTO rounds (entry_id, due_at, reason, round_id, started_at, finished_at, coverage,
			     signed, unsigned_reason, reach, http_status, stop, uptime, retry_after_ms, protocol_version,
			     server_name, server_version, tool_count, pages, fp_surface, fp_toolset, fp_schema,
			     fp_instructions, results, timings, ledger_id)
			 SELECT e.id, `+start+` + n * 3600000, 'cadence', 'seed-' || e.id || '-' || n,
			        `+start+` + n * 3600000, `+start+` + n * 3600000 + 1000,
			        CASE WHEN n % 2 = 0 THEN 'full' ELSE '' END, n % 2 = 0,
			        CASE WHEN n % 2 = 0 THEN '' ELSE 'no_handshake' END, '', 200, '', 'answered', 0,
			        '2025-11-25', 'seed', '1.0.0', 1, 1,
			        CASE WHEN n % 2 = 0 THEN `+fp+` END, CASE WHEN n % 2 = 0 THEN `+fp+` END,
			        CASE WHEN n % 2 = 0 THEN `+fp+` END, CASE WHEN n % 2 = 0 THEN `+fp+` END,
			        randomblob(`+b+`), X'7B7D',
			        CASE WHEN n % 2 = 0 THEN (SELECT l.id FROM ledger l
			                                  WHERE l.entry_id = e.id AND l.created_at = `+start+` + n * 3600000) END
			 FROM g CROSS JOIN entries e
			 WHERE e.slug GLOB 'seed-*'
			 ORDER BY n, e.id`,
		)
	default:
		tb.Fatalf("no seed for backend %s", s.Backend())
	}
	for _, q := range stmts {
		if err := x.execForTest(tb.Context(), q); err != nil {
			tb.Fatalf("seeding: %v\n%s", err, q)
		}
	}
}

// BenchmarkWalkRounds walks 200,000 rounds of 5,000 entries (half of them signed, with
// 2 kB envelopes and results) on every backend:
//
//	go test -run '^$' -bench WalkRounds -benchtime 5x ./store
func BenchmarkWalkRounds(b *testing.B) {
	const entries, perEntry = 5000, 40
	for _, be := range testBackends {
		b.Run(be.name, func(b *testing.B) {
			s := be.open(b)
			seedRounds(b, s, entries, perEntry, 2048)
			ctx := b.Context()
			for b.Loop() {
				n := 0
				err := s.WalkRounds(ctx, time.Time{}, func(RoundSummary) error {
					n++
					return nil
				})
				if err != nil || n != entries*perEntry {
					b.Fatalf("WalkRounds: %d rounds, %v", n, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*entries*perEntry), "ns/round")
		})
	}
}

// TestEntryDigest: EntryDigest returns what the calls it stands for return.
func TestEntryDigest(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		a, b := mustAddEntry(t, s, "alpha"), mustAddEntry(t, s, "beta")
		at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
		mustSave(t, s, fullRound(a.ID, at(0), at(0), "one"))
		mustSave(t, s, unsignedRound(a.ID, at(24), at(24)))
		mustSave(t, s, fullRound(a.ID, at(48), at(48), "two"))
		mustSave(t, s, fullRound(b.ID, at(72), at(72), "other")) // another entry's newer round
		// c's newest round read no tools: its tools were last read the round before.
		c := mustAddEntry(t, s, "gamma")
		mustSave(t, s, fullRound(c.ID, at(0), at(0), "three"))
		mustSave(t, s, unsignedRound(c.ID, at(24), at(24)))
		mustSave(t, s, unsignedRound(c.ID, at(25), at(25)))
		// d never answered.
		dd := mustAddEntry(t, s, "delta")
		mustSave(t, s, unsignedRound(dd.ID, at(0), at(0)))
		mustSaveSupply(t, s, testSupply(a.ID, at(1), 1))
		mustSaveSupply(t, s, testSupply(a.ID, at(2), 2))
		unsigned := testSupply(b.ID, at(3), 3)
		unsigned.Envelope, unsigned.KeyID = nil, ""
		mustSaveSupply(t, s, unsigned)
		var cs []ChangeRecord
		for n := int64(1); n <= 4; n++ {
			cs = append(cs, testChange(a.ID, n, at(int(n))))
		}
		mustSaveHistory(t, s, HistoryUpdate{EntryID: a.ID, State: []byte(`1`), Changes: cs})
		if err := s.HideChange(ctx, a.ID, 3, true, "a mistake"); err != nil {
			t.Fatal(err)
		}
		from, to := utcDay(at(0)), utcDay(at(48))

		// want is what the separate calls return.
		want := func(slug string, q EntryQuery) EntryDigest {
			t.Helper()
			e, err := s.Entry(ctx, slug)
			if err != nil {
				t.Fatal(err)
			}
			// The directory's facts of the entry are the directory row's.
			page, err := s.Directory(ctx, DirectoryQuery{Search: slug, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range page.Rows {
				if r.Entry.Slug == slug {
					e.Uptime30OnlineDays, e.Uptime30CountedDays, e.LastChangeAt = r.Entry.Uptime30OnlineDays, r.Entry.Uptime30CountedDays, r.Entry.LastChangeAt
				}
			}
			d := EntryDigest{Entry: e}
			if rs, err := s.Rounds(ctx, e.ID, 1); err != nil {
				t.Fatal(err)
			} else if len(rs) == 1 {
				d.Round = &rs[0]
			}
			rs, err := s.Rounds(ctx, e.ID, ToolsReadRounds)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rs {
				if r.Fingerprints != nil {
					d.ToolsReadAt = r.StartedAt
					break
				}
			}
			// The newest signed round, among all of them.
			all, err := s.Rounds(ctx, e.ID, 0)
			if err != nil {
				t.Fatal(err)
			}
			for i := range all {
				if all[i].Signed {
					d.SignedRound = &all[i]
					break
				}
			}
			if runs, err := s.SupplyRuns(ctx, e.ID, 1); err != nil {
				t.Fatal(err)
			} else if len(runs) == 1 {
				r := runs[0]
				d.Supply, d.SupplySigned = &r, r.Envelope != nil
				r.Facts, r.Verdict, r.Envelope = nil, nil, nil // not read
			}
			if q.Changes > 0 {
				if d.Changes, err = s.Changes(ctx, ChangeFilter{EntryID: e.ID, Limit: q.Changes}); err != nil {
					t.Fatal(err)
				}
				for i := range d.Changes {
					d.Changes[i].Envelope = nil // not read
				}
			}
			if q.UptimeFrom != "" {
				if d.Uptime, err = s.UptimeDays(ctx, e.ID, q.UptimeFrom, q.UptimeTo); err != nil {
					t.Fatal(err)
				}
			}
			if d.Listing, d.Parts, err = s.EntryListing(ctx, e.ID); err != nil {
				t.Fatal(err)
			}
			d.Remotes, d.Server = nil, nil
			return d
		}
		for _, c := range []struct {
			e Entry
			q EntryQuery
		}{
			{a, EntryQuery{Changes: 10, UptimeFrom: from, UptimeTo: to}},
			{a, EntryQuery{Changes: 2}},
			{a, EntryQuery{UptimeFrom: to, UptimeTo: to}},
			{a, EntryQuery{}},
			{b, EntryQuery{Changes: 10, UptimeFrom: from, UptimeTo: to}}, // an unsigned supply run, no changes
			{c, EntryQuery{}},
			{dd, EntryQuery{}},
		} {
			got, err := s.EntryDigest(ctx, c.e.Slug, c.q)
			if err != nil {
				t.Fatalf("EntryDigest(%s, %+v): %v", c.e.Slug, c.q, err)
			}
			if w := want(c.e.Slug, c.q); !reflect.DeepEqual(got, w) {
				t.Errorf("EntryDigest(%s, %+v):\n got %+v\nwant %+v", c.e.Slug, c.q, got, w)
			}
		}
		// The digest of alpha, spelled out: the newest round, run and visible changes.
		d, err := s.EntryDigest(ctx, "alpha", EntryQuery{Changes: 10, UptimeFrom: from, UptimeTo: to})
		if err != nil {
			t.Fatal(err)
		}
		var numbers []int64
		for _, c := range d.Changes {
			numbers = append(numbers, c.Number)
		}
		switch {
		case d.Round == nil || d.Round.RoundID != fmt.Sprintf("r-%d-%d", a.ID, at(48).UnixMilli()):
			t.Errorf("newest round %+v", d.Round)
		case d.Supply == nil || d.Supply.LatestVersion != "1.2.0" || !d.SupplySigned || d.Supply.Facts != nil:
			t.Errorf("newest supply run %+v", d.Supply)
		case !reflect.DeepEqual(numbers, []int64{4, 2, 1}):
			t.Errorf("changes %v, want 4 2 1 (3 is hidden)", numbers)
		case len(d.Uptime) != 3:
			t.Errorf("uptime %+v, want 3 days", d.Uptime)
		}

		if d, err := s.EntryDigest(ctx, "beta", EntryQuery{}); err != nil || d.Supply == nil || d.SupplySigned {
			t.Errorf("EntryDigest(beta) = %+v, %v; want its unsigned supply run", d, err)
		}
		for slug, want := range map[string]time.Time{"alpha": ms(at(48)), "gamma": ms(at(0)), "delta": {}} {
			if d, err := s.EntryDigest(ctx, slug, EntryQuery{}); err != nil || !d.ToolsReadAt.Equal(want) {
				t.Errorf("EntryDigest(%s).ToolsReadAt = %v, %v; want %v", slug, d.ToolsReadAt, err, want)
			}
		}
		if _, err := s.EntryDigest(ctx, "epsilon", EntryQuery{Changes: 10}); !errors.Is(err, ErrNotFound) {
			t.Errorf("EntryDigest of a missing slug: %v, want ErrNotFound", err)
		}
		for _, q := range []EntryQuery{{UptimeFrom: from}, {UptimeTo: to}, {UptimeFrom: "2026-13-01", UptimeTo: to}} {
			if d, err := s.EntryDigest(ctx, "alpha", q); err == nil {
				t.Errorf("EntryDigest(%+v) = %+v, want an error", q, d)
			}
		}
	})
}

// seedNumberPending is numberPendingSQL for every pending record (both parameters 0),
// as one statement without parameters for a seed; it goes in one transaction with
// advanceCounterSQL (PostgreSQL checks at commit that the counter moved past the numbers).
var seedNumberPending = strings.ReplaceAll(numberPendingSQL, "?", "0")
