package store

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The contract tests of supply runs (SaveSupply, SupplyRuns), of the due
// reason that schedules them, and of migration 0003 that adds both, on every backend.

// week is the supply checks' cadence.
const week = 7 * 24 * time.Hour

// testSupply is a signed run of the entry at ranAt, its documents marked with n.
func testSupply(entryID int64, ranAt time.Time, n int) SupplyRecord {
	return SupplyRecord{
		EntryID:       entryID,
		RanAt:         ranAt,
		Score:         60 + n%41,
		Verified:      n%2 == 0,
		LatestVersion: fmt.Sprintf("1.%d.0", n),
		Facts:         []byte(fmt.Sprintf(`{"kind":"npm","run":%d,"readme":"<b>third party</b>"}`, n)),
		Verdict:       []byte(fmt.Sprintf(`{"score":%d,"results":[{"id":"provenance","status":"pass"}]}`, 60+n%41)),
		Envelope:      testEnvelope(fmt.Sprintf(`{"supply":%d}`, n)),
		KeyID:         "a050837d85070582",
	}
}

// storedSupply is r as the store returns it: with its id, its time in UTC milliseconds
// and its payload digest.
func storedSupply(r SupplyRecord, id int64) SupplyRecord {
	r.ID = id
	r.RanAt = ms(r.RanAt)
	if r.Envelope != nil {
		r.PayloadDigest = testPayloadDigest(r.Envelope)
	}
	return r
}

func mustSaveSupply(t *testing.T, s Store, r SupplyRecord, due ...DueUpdate) SupplyRecord {
	t.Helper()
	id, err := s.SaveSupply(t.Context(), r, due)
	if err != nil {
		t.Fatalf("SaveSupply(entry %d at %s): %v", r.EntryID, r.RanAt, err)
	}
	return storedSupply(r, id)
}

func checkSupplyRuns(t *testing.T, s Store, entryID int64, limit int, want ...SupplyRecord) {
	t.Helper()
	got, err := s.SupplyRuns(t.Context(), entryID, limit)
	if err != nil {
		t.Fatalf("SupplyRuns(%d, %d): %v", entryID, limit, err)
	}
	for _, r := range got {
		if r.RanAt.Location() != time.UTC {
			t.Errorf("run %d: time in %v, want UTC", r.ID, r.RanAt.Location())
		}
	}
	if len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
		t.Errorf("SupplyRuns(%d, %d):\n got %+v\nwant %+v", entryID, limit, got, want)
	}
}

func TestSaveSupply(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		e, other := mustAddEntry(t, s, "acme"), mustAddEntry(t, s, "other")
		checkSupplyRuns(t, s, e.ID, 0)

		// Times with sub-millisecond digits, in another zone, come back in UTC ms.
		tokyo := time.FixedZone("UTC+9", 9*3600)
		r1 := mustSaveSupply(t, s, testSupply(e.ID, t0.In(tokyo), 1))
		unsigned := testSupply(e.ID, t0.Add(week), 2)
		unsigned.Envelope, unsigned.KeyID, unsigned.LatestVersion = nil, "", ""
		unsigned.Score, unsigned.Verified = 0, false
		r2 := mustSaveSupply(t, s, unsigned)
		full := testSupply(e.ID, t0.Add(2*week), 3)
		full.Score, full.Verified = 100, true
		r3 := mustSaveSupply(t, s, full)
		if !(r1.ID < r2.ID && r2.ID < r3.ID) {
			t.Errorf("ids %d, %d, %d do not grow", r1.ID, r2.ID, r3.ID)
		}
		checkSupplyRuns(t, s, e.ID, 0, r3, r2, r1)
		checkSupplyRuns(t, s, e.ID, -1, r3, r2, r1)
		checkSupplyRuns(t, s, e.ID, 1, r3)
		checkSupplyRuns(t, s, e.ID, 2, r3, r2)
		checkSupplyRuns(t, s, other.ID, 0)

		// Runs of one time are ordered by id, the later stored first; a run stored later
		// but run earlier comes after.
		tie := mustSaveSupply(t, s, testSupply(e.ID, t0.Add(2*week), 4))
		early := mustSaveSupply(t, s, testSupply(e.ID, t0.Add(-week), 5))
		checkSupplyRuns(t, s, e.ID, 0, tie, r3, r2, r1, early)

		// The entry must exist; nothing is written otherwise.
		before := takeSnapshot(t, s)
		for _, id := range []int64{0, -1, 1 << 40} {
			if _, err := s.SaveSupply(ctx, testSupply(id, t0, 6), []DueUpdate{{Reason: ReasonSupply, At: t0}}); !errors.Is(err, ErrNotFound) {
				t.Errorf("SaveSupply(entry %d) = %v, want ErrNotFound", id, err)
			}
		}
		checkUnchanged(t, s, before, "SaveSupply of a missing entry")
		if runs, err := s.SupplyRuns(ctx, 1<<40, 0); err != nil || len(runs) != 0 {
			t.Errorf("SupplyRuns(missing entry) = %+v, %v", runs, err)
		}
	})
}

// TestSaveSupplyKeepsEveryRun: seed 004's "last ten results" is a display rule. SaveSupply
// keeps every run of an entry, with its ledger record; SupplyRuns with limit
// MaxSupplyRuns shows the newest ten, by run time then id; other entries' runs are
// untouched. (Until migration 0006, runs beyond the newest ten were deleted.)
func TestSaveSupplyKeepsEveryRun(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		if MaxSupplyRuns != 10 {
			t.Fatalf("MaxSupplyRuns = %d, seed 004 shows ten", MaxSupplyRuns)
		}
		e, other := mustAddEntry(t, s, "acme"), mustAddEntry(t, s, "other")
		otherRuns := []SupplyRecord{mustSaveSupply(t, s, testSupply(other.ID, t0, 100))}

		// Thirteen runs stored out of time order; two pairs share a time.
		hours := []int{5, 1, 9, 1, 3, 8, 2, 7, 6, 4, 10, 10, 0}
		var runs []SupplyRecord
		for i, h := range hours {
			runs = append(runs, mustSaveSupply(t, s, testSupply(e.ID, t0.Add(time.Duration(h)*time.Hour), i)))
		}
		// Newest first: by time, then by id, both descending.
		all := slices.SortedFunc(slices.Values(runs), func(a, b SupplyRecord) int {
			if c := b.RanAt.Compare(a.RanAt); c != 0 {
				return c
			}
			return cmp.Compare(b.ID, a.ID)
		})
		checkSupplyRuns(t, s, e.ID, 0, all...)
		checkSupplyRuns(t, s, e.ID, MaxSupplyRuns, all[:MaxSupplyRuns]...)
		checkSupplyRuns(t, s, other.ID, 0, otherRuns...)

		// Every run's record is in the ledger, in the order the runs were stored.
		var seqs []int64
		err := s.Ledger(t.Context(), LedgerFilter{EntrySlug: "acme"}, func(r LedgerRecord) error {
			if r.Kind != RecordSupply || r.EntrySlug != "acme" || r.EntryID != e.ID {
				t.Errorf("record %d: kind %s of %q (%d)", r.Seq, r.Kind, r.EntrySlug, r.EntryID)
			}
			i := len(seqs)
			if i < len(runs) && (string(r.Envelope) != string(runs[i].Envelope) || r.PayloadDigest != runs[i].PayloadDigest) {
				t.Errorf("record %d is not run %d's", r.Seq, i)
			}
			seqs = append(seqs, r.Seq)
			return nil
		})
		if err != nil || len(seqs) != len(runs) {
			t.Fatalf("Ledger(acme) = %d records, %v; want %d", len(seqs), err, len(runs))
		}
	})
}

// TestSaveSupplyConcurrent: SaveSupply calls of one entry racing each other keep every
// run, each with its own ledger record, numbered without gaps.
func TestSaveSupplyConcurrent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		e := mustAddEntry(t, s, "acme")
		const workers, each = 4, 2 * MaxSupplyRuns
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := range each {
					n := i*workers + w // run times interleave across workers
					if _, err := s.SaveSupply(t.Context(), testSupply(e.ID, t0.Add(time.Duration(n)*time.Minute), n), nil); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		runs, err := s.SupplyRuns(t.Context(), e.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != workers*each {
			t.Fatalf("%d runs kept, want %d", len(runs), workers*each)
		}
		for i, r := range runs {
			if want := ms(t0.Add(time.Duration(workers*each-1-i) * time.Minute)); !r.RanAt.Equal(want) {
				t.Errorf("run %d ran at %s, want %s", i, r.RanAt, want)
			}
		}
		checkLedgerNumbering(t, s)
	})
}

func TestSaveSupplyRefusesBadInput(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		e := mustAddEntry(t, s, "acme")
		mustSaveSupply(t, s, testSupply(e.ID, t0, 1), DueUpdate{Reason: ReasonSupply, At: t0.Add(week)})
		before := takeSnapshot(t, s)

		// bigJSON is a JSON string of n bytes.
		bigJSON := func(n int) []byte { return []byte(`"` + strings.Repeat("a", n-2) + `"`) }
		for name, c := range map[string]struct {
			edit func(r *SupplyRecord)
			due  []DueUpdate
		}{
			"id set":               {edit: func(r *SupplyRecord) { r.ID = 7 }},
			"no time":              {edit: func(r *SupplyRecord) { r.RanAt = time.Time{} }},
			"score below 0":        {edit: func(r *SupplyRecord) { r.Score = -1 }},
			"score above 100":      {edit: func(r *SupplyRecord) { r.Score = 101 }},
			"no facts":             {edit: func(r *SupplyRecord) { r.Facts = nil }},
			"facts not JSON":       {edit: func(r *SupplyRecord) { r.Facts = []byte(`{"kind":`) }},
			"facts too big":        {edit: func(r *SupplyRecord) { r.Facts = bigJSON(4<<20 + 1) }},
			"no verdict":           {edit: func(r *SupplyRecord) { r.Verdict = []byte{} }},
			"verdict not JSON":     {edit: func(r *SupplyRecord) { r.Verdict = []byte(`pass`) }},
			"verdict too big":      {edit: func(r *SupplyRecord) { r.Verdict = bigJSON(1<<20 + 1) }},
			"envelope without key": {edit: func(r *SupplyRecord) { r.KeyID = "" }},
			"key without envelope": {edit: func(r *SupplyRecord) { r.Envelope = nil }},
			"envelope too big":     {edit: func(r *SupplyRecord) { r.Envelope = bigJSON(1<<20 + 1) }},
			"envelope not DSSE":    {edit: func(r *SupplyRecord) { r.Envelope = []byte(`{"payloadType":"x"}`) }},
			"digest of another":    {edit: func(r *SupplyRecord) { r.PayloadDigest = strings.Repeat("0", 64) }},
			"digest without envelope": {edit: func(r *SupplyRecord) {
				r.Envelope, r.KeyID, r.PayloadDigest = nil, "", testPayloadDigest(r.Envelope)
			}},
			"key id of two lines":    {edit: func(r *SupplyRecord) { r.KeyID = "a\nb" }},
			"key id too long":        {edit: func(r *SupplyRecord) { r.KeyID = strings.Repeat("k", 129) }},
			"version with a control": {edit: func(r *SupplyRecord) { r.LatestVersion = "1.0\x1b[31m" }},
			"version too long":       {edit: func(r *SupplyRecord) { r.LatestVersion = strings.Repeat("9", 257) }},
			"version not UTF-8":      {edit: func(r *SupplyRecord) { r.LatestVersion = "1.\xff" }},
			"unknown due reason":     {due: []DueUpdate{{Reason: "weekly", At: t0}}},
			"second bad due update":  {due: []DueUpdate{{Reason: ReasonSupply, At: t0}, {Reason: ""}}},
		} {
			r := testSupply(e.ID, t0.Add(week), 2)
			if c.edit != nil {
				c.edit(&r)
			}
			if id, err := s.SaveSupply(ctx, r, c.due); err == nil || errors.Is(err, ErrNotFound) {
				t.Errorf("%s: SaveSupply = %d, %v; want a validation error", name, id, err)
			}
		}
		checkUnchanged(t, s, before, "refused supply runs")

		// The caps themselves are accepted.
		r := testSupply(e.ID, t0.Add(week), 3)
		r.Facts, r.Verdict, r.Envelope = bigJSON(4<<20), bigJSON(1<<20), sizedEnvelope(1<<20)
		r.KeyID, r.LatestVersion = strings.Repeat("k", 128), strings.Repeat("é", 256)
		big := mustSaveSupply(t, s, r)
		checkSupplyRuns(t, s, e.ID, 1, big)
	})
}

// TestSupplyImmutable: the schema refuses every update of a run; deleting runs works.
func TestSupplyImmutable(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		x, ok := s.(testExecer)
		if !ok {
			t.Fatalf("%s store does not implement testExecer", s.Backend())
		}
		ctx := t.Context()
		e := mustAddEntry(t, s, "acme")
		old := mustSaveSupply(t, s, testSupply(e.ID, t0, 1))
		newer := mustSaveSupply(t, s, testSupply(e.ID, t0.Add(week), 2))
		before := takeSnapshot(t, s)
		id := fmt.Sprint(old.ID)
		for _, q := range []string{
			`UPDATE supply_runs SET score = 0`,
			`UPDATE supply_runs SET verified = verified`,
			`UPDATE supply_runs SET facts = facts WHERE id = ` + id,
			`UPDATE supply_runs SET verdict = verdict`,
			`UPDATE supply_runs SET ledger_id = NULL`,
			`UPDATE supply_runs SET ledger_id = ledger_id`,
			`UPDATE supply_runs SET latest_version = '9.9.9'`,
			`UPDATE supply_runs SET ran_at = ran_at`,
			`UPDATE supply_runs SET entry_id = entry_id`,
			// What the schema holds a run to, beyond immutability.
			`INSERT INTO supply_runs (entry_id, ran_at, score, verified, latest_version, facts, verdict)
			 SELECT entry_id, ran_at, 101, verified, latest_version, facts, verdict FROM supply_runs WHERE id = ` + id,
			// A second run naming the record of the first, and a run naming no record.
			`INSERT INTO supply_runs (entry_id, ran_at, score, verified, latest_version, facts, verdict, ledger_id)
			 SELECT entry_id, ran_at, score, verified, latest_version, facts, verdict, ledger_id FROM supply_runs WHERE id = ` + id,
			`INSERT INTO supply_runs (entry_id, ran_at, score, verified, latest_version, facts, verdict, ledger_id)
			 SELECT entry_id, ran_at, score, verified, latest_version, facts, verdict, 999999 FROM supply_runs WHERE id = ` + id,
			`INSERT INTO supply_runs (entry_id, ran_at, score, verified, latest_version, facts, verdict)
			 SELECT 999999, ran_at, score, verified, latest_version, facts, verdict FROM supply_runs WHERE id = ` + id,
			// A round is never due to the supply reason.
			`INSERT INTO observations (entry_id, due_at, reason, round_id, started_at, finished_at, coverage, signed,
				unsigned_reason, reach, http_status, stop, uptime, retry_after_ms, protocol_version, server_name,
				server_version, tool_count, pages)
			 SELECT entry_id, ran_at, 'supply', 'r', ran_at, ran_at, '', false, 'x', '', 0, '', 'answered', 0, '', '', '', 0, 0
			 FROM supply_runs WHERE id = ` + id,
		} {
			if err := x.execForTest(ctx, q); err == nil {
				t.Errorf("%s: accepted", q)
			}
		}
		checkUnchanged(t, s, before, "a refused supply run update")

		// Deleting a run's row is not refused (as for a round's or a change's; DeleteEntry
		// cascades), but its signed record stays in the ledger.
		if err := x.execForTest(ctx, `DELETE FROM supply_runs WHERE id = `+id); err != nil {
			t.Fatalf("DELETE of a run: %v", err)
		}
		checkSupplyRuns(t, s, e.ID, 0, newer)
		if recs := ledgerRecords(t, s, LedgerFilter{}); len(recs) != 2 || string(recs[0].Envelope) != string(old.Envelope) {
			t.Errorf("ledger after deleting a run's row: %d records", len(recs))
		}
	})
}

// TestDeleteEntrySupply: DeleteEntry deletes the entry's supply runs and its supply due
// time, and nothing of another entry.
func TestDeleteEntrySupply(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		gone, kept := mustAddEntry(t, s, "gone"), mustAddEntry(t, s, "kept")
		for _, e := range []Entry{gone, kept} {
			for i := range 3 {
				mustSaveSupply(t, s, testSupply(e.ID, t0.Add(time.Duration(i)*week), i),
					DueUpdate{Reason: ReasonSupply, At: t0.Add(time.Duration(i+1) * week)})
			}
		}
		want := takeSnapshot(t, s)
		keptRuns, err := s.SupplyRuns(ctx, kept.ID, 0)
		if err != nil || len(keptRuns) != 3 {
			t.Fatalf("SupplyRuns(kept) = %d runs, %v", len(keptRuns), err)
		}

		if err := s.DeleteEntry(ctx, "gone", "removed by its operator"); err != nil {
			t.Fatal(err)
		}
		checkSupplyRuns(t, s, gone.ID, 0)
		checkSupplyRuns(t, s, kept.ID, 0, keptRuns...)
		want.Entries = want.Entries[1:]
		want.Stats.Entries--
		delete(want.Due, gone.ID)
		delete(want.Rounds, gone.ID)
		delete(want.Uptime, gone.ID)
		delete(want.Supply, gone.ID)
		if got := takeSnapshot(t, s); !reflect.DeepEqual(got, want) {
			t.Errorf("after delete:\n got %+v\nwant %+v", got, want)
		}

		// A new entry with the slug starts with no runs.
		again := mustAddEntry(t, s, "gone")
		checkSupplyRuns(t, s, again.ID, 0)
	})
}

// TestDueSupply: ReasonSupply is a due reason (SetDue, AddEntry, SaveSupply's and
// SaveRound's due updates, DueBefore), never a round's reason.
func TestDueSupply(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		ne := newTestEntry("pkg")
		ne.Kind, ne.Locator = KindNPM, "pkg:npm/pkg"
		ne.Due = []Due{{Reason: ReasonCadence, At: t0.Add(time.Hour)}, {Reason: ReasonSupply, At: t0.Add(2 * time.Hour)}}
		a, created, err := s.AddEntry(ctx, ne)
		if err != nil || !created {
			t.Fatalf("AddEntry with a supply due time = %v, %v", created, err)
		}
		b := mustAddEntry(t, s, "b")
		if err := s.SetDue(ctx, b.ID, DueUpdate{Reason: ReasonSupply, At: t0.Add(30 * time.Minute)}); err != nil {
			t.Fatalf("SetDue(supply): %v", err)
		}
		want := []Due{
			{b.ID, ReasonSupply, ms(t0.Add(30 * time.Minute))},
			{a.ID, ReasonCadence, ms(t0.Add(time.Hour))},
			{a.ID, ReasonSupply, ms(t0.Add(2 * time.Hour))},
		}
		if got, err := s.DueBefore(ctx, t0.Add(2*time.Hour), 0); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("DueBefore = %+v, %v; want %+v", got, err, want)
		}

		// SaveSupply moves the supply due time, and may set or clear others.
		mustSaveSupply(t, s, testSupply(a.ID, t0.Add(2*time.Hour), 1),
			DueUpdate{Reason: ReasonSupply, At: t0.Add(2*time.Hour + week)}, DueUpdate{Reason: ReasonCadence})
		wantA := []Due{{a.ID, ReasonSupply, ms(t0.Add(2*time.Hour + week))}}
		if got, err := s.DueTimes(ctx, a.ID); err != nil || !sameDues(got, wantA) {
			t.Errorf("DueTimes(a) after SaveSupply = %+v, %v; want %+v", got, err, wantA)
		}
		// Clearing it.
		mustSaveSupply(t, s, testSupply(b.ID, t0, 2), DueUpdate{Reason: ReasonSupply})
		if got, err := s.DueTimes(ctx, b.ID); err != nil || len(got) != 0 {
			t.Errorf("DueTimes(b) after clearing = %+v, %v", got, err)
		}

		// A round's due updates may move the supply due time, but a round is never
		// due to it: supply runs are stored by SaveSupply.
		r := unsignedRound(b.ID, t0, t0)
		r.Due = []DueUpdate{{Reason: ReasonSupply, At: t0.Add(week)}}
		mustSave(t, s, r)
		if got, _ := s.DueTimes(ctx, b.ID); !sameDues(got, []Due{{b.ID, ReasonSupply, ms(t0.Add(week))}}) {
			t.Errorf("DueTimes(b) after SaveRound = %+v", got)
		}
		before := takeSnapshot(t, s)
		for _, r := range []*Round{unsignedRound(b.ID, t0.Add(time.Hour), t0), fullRound(a.ID, t0, t0, "echo")} {
			r.Reason = ReasonSupply
			if _, err := s.SaveRound(ctx, r); err == nil || errors.Is(err, ErrNotFound) || errors.Is(err, ErrRoundDone) {
				t.Errorf("SaveRound with reason supply = %v, want a validation error", err)
			}
		}
		checkUnchanged(t, s, before, "refused supply rounds")
	})
}

// TestMigrateSupplyKeepsDue migrates a database that a binary of migration 0002 has
// used, its due table full, to 0003: the due times stay, the supply reason is accepted,
// and the rebuilt table keeps its rules (foreign key with cascade, reason check).
func TestMigrateSupplyKeepsDue(t *testing.T) {
	for _, b := range testBackends {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			s := b.openEmpty(t)
			if err := s.(testMigrator).migrateForTest(ctx, 2); err != nil {
				t.Fatalf("migrating through 0002: %v", err)
			}
			x := s.(testExecer)

			// The store of 0002, used: entries with due times of every old reason, set by
			// SetDue and SaveRound's statement (so that they are prepared, on SQLite,
			// against the table 0003 replaces); the entries go in with 0002's columns.
			var es []Entry
			for i := range 3 {
				ne := newTestEntry(fmt.Sprintf("e%d", i))
				ne.Due = []Due{{Reason: ReasonCadence, At: t0.Add(time.Duration(i) * time.Hour)}}
				e, err := InsertEntryForTest(ctx, s, ne)
				if err != nil {
					t.Fatal(err)
				}
				es = append(es, e)
			}
			for _, u := range []DueUpdate{
				{Reason: ReasonStatus, At: t0.Add(-time.Hour)},
				{Reason: ReasonConfirm, At: t0.Add(time.Minute)},
				{Reason: ReasonManual, At: t0},
			} {
				if err := s.SetDue(ctx, es[1].ID, u); err != nil {
					t.Fatal(err)
				}
			}
			// A round as 0002's SaveRound stored it, and its due updates. Today's SaveRound
			// writes columns of 0005, so the round goes in by SQL and its due times through
			// SetDue, the same statement SaveRound applies them with.
			insertRound0004(t, s, es[2].ID, "old-1", t0)
			for _, u := range []DueUpdate{{Reason: ReasonCadence, At: t0.Add(24 * time.Hour)}, {Reason: ReasonStatus, At: t0.Add(time.Hour)}} {
				if err := s.SetDue(ctx, es[2].ID, u); err != nil {
					t.Fatal(err)
				}
			}
			// 0002's schema refuses the new reason; there is no supply_runs table yet.
			if err := s.SetDue(ctx, es[0].ID, DueUpdate{Reason: ReasonSupply, At: t0}); err == nil {
				t.Fatal("SetDue(supply) accepted before 0003: the test is not on 0002's schema")
			}
			if _, err := s.SaveSupply(ctx, testSupply(es[0].ID, t0, 1), nil); err == nil {
				t.Fatal("SaveSupply accepted before 0003")
			}
			dueBefore := func() []Due {
				t.Helper()
				ds, err := s.DueBefore(ctx, t0.Add(1000*time.Hour), 0)
				if err != nil {
					t.Fatal(err)
				}
				return ds
			}
			// What the store of 0002 holds, read by SQL: the store's methods read the
			// columns of the newest schema.
			type state struct {
				Entries [][]string
				Due     [][]string
			}
			read := func() state {
				t.Helper()
				var (
					st  state
					err error
				)
				if st.Entries, err = QueryForTest(ctx, s, `SELECT id, slug, kind, locator, name, source FROM entries ORDER BY id`, 6); err != nil {
					t.Fatal(err)
				}
				if st.Due, err = QueryForTest(ctx, s, `SELECT entry_id, reason, at FROM due ORDER BY at, entry_id, reason`, 3); err != nil {
					t.Fatal(err)
				}
				return st
			}
			want := read()
			if len(want.Due) != 7 {
				t.Fatalf("%d due times before 0003, want 7: %+v", len(want.Due), want.Due)
			}

			if err := s.Migrate(ctx); err != nil {
				t.Fatalf("Migrate to 0003: %v", err)
			}
			if got := read(); !reflect.DeepEqual(got, want) {
				t.Errorf("after 0003:\n got %+v\nwant %+v", got, want)
			}
			if rs, err := s.Rounds(ctx, es[2].ID, 0); err != nil || len(rs) != 1 || rs[0].RoundID != "old-1" || !rs[0].StartedAt.Equal(ms(t0)) {
				t.Errorf("Rounds of the entry with a round after the migrations = %+v, %v", rs, err)
			}
			for _, e := range es {
				checkSupplyRuns(t, s, e.ID, 0)
			}

			// The new reason, through every writer of due times.
			if err := s.SetDue(ctx, es[0].ID, DueUpdate{Reason: ReasonSupply, At: t0.Add(-2 * time.Hour)}); err != nil {
				t.Fatalf("SetDue(supply) after 0003: %v", err)
			}
			mustSaveSupply(t, s, testSupply(es[1].ID, t0, 1), DueUpdate{Reason: ReasonSupply, At: t0.Add(week)})
			if got := dueBefore(); len(got) != 9 || got[0] != (Due{es[0].ID, ReasonSupply, ms(t0.Add(-2 * time.Hour))}) {
				t.Errorf("DueBefore after setting supply due times = %+v", got)
			}

			// The rebuilt table keeps its rules: an unknown reason, a missing entry and a
			// second time for one reason are refused; deleting an entry deletes its times.
			for _, q := range []string{
				`UPDATE due SET reason = 'weekly'`,
				`INSERT INTO due (entry_id, reason, at) SELECT 999999, 'supply', min(at) FROM due`,
				`INSERT INTO due (entry_id, reason, at) SELECT entry_id, reason, at FROM due`,
			} {
				if err := x.execForTest(ctx, q); err == nil {
					t.Errorf("%s: accepted after 0003", q)
				}
			}
			if err := s.DeleteEntry(ctx, es[1].Slug, "removed by its operator"); err != nil {
				t.Fatal(err)
			}
			if ds, err := s.DueTimes(ctx, es[1].ID); err != nil || len(ds) != 0 {
				t.Errorf("DueTimes of a deleted entry = %+v, %v", ds, err)
			}
			if got := dueBefore(); len(got) != 4 {
				t.Errorf("DueBefore after DeleteEntry = %+v, want 4 due times", got)
			}
			if err := s.Migrate(ctx); err != nil {
				t.Errorf("Migrate again: %v", err)
			}
		})
	}
}
