package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// testDB is the reading querier of s and the SQL that reopens it (a new Store on the
// same database, as after a restart).
func testDB(t *testing.T, s Store) (querier, func() Store) {
	t.Helper()
	switch x := s.(type) {
	case *pgStore:
		return x.read, func() Store { return openTestPostgresAt(t, x.pool.Config().ConnString(), 0) }
	case *sqliteStore:
		return x.read, func() Store {
			r, err := Open(t.Context(), Config{SQLitePath: x.path})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			t.Cleanup(func() { r.Close() })
			return r
		}
	}
	t.Fatalf("no test database for %T", s)
	return nil, nil
}

// leavePending makes s's writers skip their sequencing step (as a crash between a
// write's commit and its step would) while on is true.
func leavePending(s Store, on bool) {
	switch x := s.(type) {
	case *pgStore:
		x.leavePending.Store(on)
	case *sqliteStore:
		x.leavePending.Store(on)
	}
}

// pendingCount counts the ledger's records without a number.
func pendingCount(t *testing.T, s Store) int {
	t.Helper()
	q, _ := testDB(t, s)
	var n int
	if err := q.QueryRow(t.Context(), `SELECT count(*) FROM ledger WHERE seq IS NULL`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// recordIDs returns the ledger's records as id → seq (0: pending).
func recordIDs(t *testing.T, s Store) map[int64]int64 {
	t.Helper()
	q, _ := testDB(t, s)
	type row struct{ id, seq int64 }
	rows, err := queryAll(t.Context(), q, func(r rowScanner) (row, error) {
		var (
			x   row
			seq *int64
		)
		err := r.Scan(&x.id, &seq)
		if seq != nil {
			x.seq = *seq
		}
		return x, err
	}, `SELECT id, seq FROM ledger ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]int64{}
	for _, r := range rows {
		out[r.id] = r.seq
	}
	return out
}

// TestLedgerPendingNumbered: records a writer left pending (it stopped between its
// commit and its sequencing step) are signed but not yet in the ledger's walk; the next
// signed write numbers them, in id order, before its own; and so does Open.
func TestLedgerPendingNumbered(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		a, b := mustAddEntry(t, s, "a"), mustAddEntry(t, s, "b")
		mustSave(t, s, fullRound(a.ID, t0, t0, "echo"))

		leavePending(s, true)
		pendingRound := mustSave(t, s, fullRound(a.ID, t0.Add(time.Hour), t0.Add(time.Hour), "echo"))
		mustSaveHistory(t, s, HistoryUpdate{EntryID: a.ID, Processed: pendingRound, State: []byte(`1`),
			Changes: []ChangeRecord{testChange(a.ID, 1, t0), testChange(a.ID, 2, t0)}})
		mustSaveSupply(t, s, testSupply(b.ID, t0, 1))
		leavePending(s, false)
		if n := pendingCount(t, s); n != 4 {
			t.Fatalf("%d records pending, want 4", n)
		}
		// Pending records are signed (referenced), but not walked.
		rs, err := s.Rounds(ctx, a.ID, 1)
		if err != nil || len(rs) != 1 || rs[0].ID != pendingRound || !rs[0].Signed {
			t.Errorf("Rounds = %+v, %v; want the pending round, signed", rs, err)
		}
		if cs, err := s.Changes(ctx, ChangeFilter{EntryID: a.ID}); err != nil || len(cs) != 2 || cs[0].Envelope == nil {
			t.Errorf("Changes = %+v, %v; want 2 signed", cs, err)
		}
		if got := ledgerRecords(t, s, LedgerFilter{}); len(got) != 1 {
			t.Errorf("Ledger walks %d records, want the 1 numbered", len(got))
		}
		n := 0
		if err := s.Envelopes(ctx, EnvelopeFilter{}, func(EnvelopeRecord) error { n++; return nil }); err != nil || n != 1 {
			t.Errorf("Envelopes walks %d, %v; want the 1 numbered", n, err)
		}

		// The next writer's step numbers them all, in id order, then its own.
		mustSaveSupply(t, s, testSupply(b.ID, t0.Add(time.Hour), 2))
		if n := pendingCount(t, s); n != 0 {
			t.Errorf("%d records pending after the next write", n)
		}
		ids := recordIDs(t, s)
		keys := slices.Sorted(func(yield func(int64) bool) {
			for id := range ids {
				if !yield(id) {
					return
				}
			}
		})
		for i, id := range keys {
			if ids[id] != int64(i+1) {
				t.Errorf("record %d has number %d, want %d (id order)", id, ids[id], i+1)
			}
		}
		checkLedgerNumbering(t, s)

		// Left pending again, then numbered by Open.
		leavePending(s, true)
		mustSave(t, s, fullRound(b.ID, t0, t0, "echo"))
		leavePending(s, false)
		if n := pendingCount(t, s); n != 1 {
			t.Fatalf("%d records pending, want 1", n)
		}
		_, reopen := testDB(t, s)
		r := reopen()
		if n := pendingCount(t, r); n != 0 {
			t.Errorf("%d records pending after Open", n)
		}
		if got := ledgerRecords(t, r, LedgerFilter{}); len(got) != 7 || got[6].Seq != 7 || got[6].EntrySlug != "b" {
			t.Errorf("after Open the ledger has %d records, last %+v", len(got), got[len(got)-1])
		}
		checkLedgerNumbering(t, r)
	})
}

// TestDeleteEntryNumbersPending: DeleteEntry numbers the pending records, the deleted
// entry's and others', before it takes the tombstone's number, so the tombstone lists
// every record that goes by number and no number is skipped.
func TestDeleteEntryNumbersPending(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		a, b := mustAddEntry(t, s, "a"), mustAddEntry(t, s, "b")
		mustSave(t, s, fullRound(a.ID, t0, t0, "echo"))
		leavePending(s, true)
		mustSave(t, s, fullRound(a.ID, t0.Add(time.Hour), t0.Add(time.Hour), "echo"))
		mustSave(t, s, fullRound(b.ID, t0, t0, "echo"))
		mustSaveSupply(t, s, testSupply(a.ID, t0, 1))
		leavePending(s, false)

		if err := s.DeleteEntry(ctx, "a", "removed by its operator"); err != nil {
			t.Fatal(err)
		}
		if n := pendingCount(t, s); n != 0 {
			t.Errorf("%d records pending after DeleteEntry", n)
		}
		ts := tombstones(t, s)
		if len(ts) != 1 || ts[0].Seq != 5 || len(ts[0].Removed) != 3 {
			t.Fatalf("tombstones = %+v; want number 5 listing 3 records", ts)
		}
		for i, want := range []int64{1, 2, 4} {
			if ts[0].Removed[i].Seq != want {
				t.Errorf("removed %+v, want numbers 1, 2, 4", ts[0].Removed)
			}
		}
		got := ledgerRecords(t, s, LedgerFilter{})
		if len(got) != 1 || got[0].Seq != 3 || got[0].EntrySlug != "b" {
			t.Errorf("ledger = %+v; want b's round as 3", got)
		}
		mustSaveSupply(t, s, testSupply(b.ID, t0, 2))
		checkLedgerNumbering(t, s)
		if got := ledgerRecords(t, s, LedgerFilter{AfterSeq: 3}); len(got) != 1 || got[0].Seq != 6 {
			t.Errorf("the record after the tombstone: %+v, want number 6", got)
		}
	})
}

// TestLedgerNumberingGuards: the schema lets a pending record be numbered only with the
// counter's next numbers, once, and the counter move only past numbers all used.
func TestLedgerNumberingGuards(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		x := s.(testExecer)
		ctx := t.Context()
		e := mustAddEntry(t, s, "acme")
		mustSave(t, s, fullRound(e.ID, t0, t0, "echo"))
		mustSaveSupply(t, s, testSupply(e.ID, t0, 1))
		leavePending(s, true)
		mustSaveSupply(t, s, testSupply(e.ID, t0.Add(time.Hour), 2))
		leavePending(s, false)
		before := recordIDs(t, s)
		for _, q := range []string{
			// A number given before, or beyond the run the pending records need.
			`UPDATE ledger SET seq = 1 WHERE seq IS NULL`,
			`UPDATE ledger SET seq = 2 WHERE seq IS NULL`,
			`UPDATE ledger SET seq = (SELECT next + 1 FROM ledger_counter) WHERE seq IS NULL`,
			// Numbered, and something else changed with it.
			`UPDATE ledger SET seq = (SELECT next FROM ledger_counter), key_id = 'forged' WHERE seq IS NULL`,
			`UPDATE ledger SET seq = (SELECT next FROM ledger_counter), envelope = envelope WHERE seq IS NULL`,
			// A numbered record numbered again, or unnumbered.
			`UPDATE ledger SET seq = (SELECT next FROM ledger_counter) WHERE seq = 1`,
			`UPDATE ledger SET seq = NULL WHERE seq = 2`,
			// The counter moved past a number nobody took, or back.
			`UPDATE ledger_counter SET next = next + 1`,
			`UPDATE ledger_counter SET next = next - 1`,
			// A record inserted numbered.
			`INSERT INTO ledger (seq, kind, entry_id, payload_digest, key_id, envelope, created_at)
			 SELECT 3, kind, entry_id, payload_digest, key_id, envelope, created_at FROM ledger WHERE seq = 1`,
			// A tombstone with a number other than the counter's next.
			`INSERT INTO ledger_tombstones (seq, entry_id, entry_slug, reason, removed, deleted_at)
			 SELECT next + 1, 1, 'acme', 'forged', 0, 0 FROM ledger_counter`,
		} {
			if err := x.execForTest(ctx, pgTimes(s, q)); err == nil {
				t.Errorf("schema accepted: %s", q)
			}
		}
		if s.Backend() == "postgres" {
			// Numbered in turn, but the counter left where it was: refused at commit.
			q := `UPDATE ledger SET seq = (SELECT next FROM ledger_counter) WHERE seq IS NULL`
			if err := x.execForTest(ctx, q); err == nil {
				t.Errorf("schema accepted at commit: %s", q)
			}
		}
		if got := recordIDs(t, s); !maps(got, before) {
			t.Errorf("records changed by refused statements: %v, were %v", got, before)
		}
		// What the sequencing step does is accepted: number in turn, move the counter.
		if err := x.execForTest(ctx, seedNumberPending+`;`+advanceCounterSQL); err != nil {
			t.Fatalf("the sequencing step's statements: %v", err)
		}
		if n := pendingCount(t, s); n != 0 {
			t.Errorf("%d records pending", n)
		}
		checkLedgerNumbering(t, s)
	})
}

func maps(a, b map[int64]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestPostgresSequencerConcurrent: many goroutines, with a pool each as processes would
// have, store signed rounds, changes and supply runs at once while a reader walks the
// ledger over and over. Every walk sees the numbers 1..n with none missing (a number is
// never seen before a smaller one is committed); afterwards every record is numbered,
// each number used once, 1..N.
func TestPostgresSequencerConcurrent(t *testing.T) {
	dbURL := newTestDatabase(t)
	main := openTestPostgresAt(t, dbURL, 0)
	if err := main.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	const (
		workers = 12
		each    = 15
	)
	stores := make([]Store, 3)
	for i := range stores {
		stores[i] = openTestPostgresAt(t, dbURL, 8)
	}
	entries := make([]Entry, workers)
	for i := range entries {
		entries[i] = mustAddEntry(t, main, fmt.Sprintf("e%d", i))
	}

	done := make(chan struct{})
	var walks, seen int
	var readerErr error
	var rwg sync.WaitGroup
	rwg.Add(1)
	go func() {
		defer rwg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			var want int64 = 1
			err := main.Ledger(ctx, LedgerFilter{}, func(r LedgerRecord) error {
				if r.Seq != want {
					return fmt.Errorf("walk %d saw number %d where %d was due", walks, r.Seq, want)
				}
				want++
				return nil
			})
			if err != nil {
				readerErr = err
				return
			}
			walks++
			seen = int(want - 1)
		}
	}()

	var wg sync.WaitGroup
	errs := make(chan error, workers*each*3)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := stores[w%len(stores)]
			e := entries[w]
			var processed int64
			for i := range each {
				at := t0.Add(time.Duration(i) * time.Hour)
				id, err := s.SaveRound(ctx, fullRound(e.ID, at, at, "echo"))
				if err != nil {
					errs <- err
					return
				}
				err = s.SaveHistory(ctx, HistoryUpdate{EntryID: e.ID, ExpectProcessed: processed, Processed: id,
					State: []byte(`1`), Changes: []ChangeRecord{testChange(e.ID, int64(i+1), at)}})
				if err != nil {
					errs <- err
					return
				}
				processed = id
				if _, err := s.SaveSupply(ctx, testSupply(e.ID, at, i), nil); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	rwg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if readerErr != nil {
		t.Error(readerErr)
	}
	t.Logf("the reader walked the ledger %d times while it grew, the last to %d", walks, seen)

	if n := pendingCount(t, main); n != 0 {
		t.Errorf("%d records pending", n)
	}
	ids := recordIDs(t, main)
	if len(ids) != workers*each*3 {
		t.Errorf("%d records, want %d", len(ids), workers*each*3)
	}
	used := map[int64]bool{}
	for id, seq := range ids {
		if seq < 1 || seq > int64(len(ids)) || used[seq] {
			t.Errorf("record %d has number %d", id, seq)
		}
		used[seq] = true
	}
	checkLedgerNumbering(t, main)
	checkSignedInvariant(t, main)
}

// BenchmarkPostgresSequencer stores signed rounds from parallel goroutines.
func BenchmarkPostgresSequencer(b *testing.B) {
	s := openTestPostgresAt(b, newTestDatabase(b), 32)
	ctx := context.Background()
	if err := s.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	n := 0
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		mu.Lock()
		n++
		e, _, err := s.AddEntry(ctx, newTestEntry(fmt.Sprintf("p%d", n)))
		mu.Unlock()
		if err != nil {
			b.Error(err)
			return
		}
		i := 0
		for pb.Next() {
			at := t0.Add(time.Duration(i) * time.Minute)
			if _, err := s.SaveRound(ctx, fullRound(e.ID, at, at, "echo")); err != nil {
				b.Error(err)
				return
			}
			i++
		}
	})
}

// TestPostgresDeleteEntryConcurrent: DeleteEntry (entry, then counter) runs beside
// writers of the same entry (their transaction, then the counter) without a deadlock, a
// record left pending or a number skipped.
func TestPostgresDeleteEntryConcurrent(t *testing.T) {
	dbURL := newTestDatabase(t)
	main := openTestPostgresAt(t, dbURL, 0)
	if err := main.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	const (
		workers = 6
		each    = 12
	)
	stores := []Store{openTestPostgresAt(t, dbURL, 8), openTestPostgresAt(t, dbURL, 8)}
	var wg sync.WaitGroup
	errs := make(chan error, workers*each*7)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := stores[w%len(stores)]
			for i := range each {
				e, _, err := s.AddEntry(ctx, newTestEntry(fmt.Sprintf("w%d-%d", w, i)))
				if err != nil {
					errs <- err
					return
				}
				var writers sync.WaitGroup
				for j := range 3 {
					writers.Add(1)
					go func() {
						defer writers.Done()
						at := t0.Add(time.Duration(j) * time.Hour)
						// The entry may be gone already: ErrNotFound is the answer then.
						if _, err := s.SaveRound(ctx, fullRound(e.ID, at, at, "echo")); err != nil && !errors.Is(err, ErrNotFound) {
							errs <- err
						}
						if _, err := s.SaveSupply(ctx, testSupply(e.ID, at, j), nil); err != nil && !errors.Is(err, ErrNotFound) {
							errs <- err
						}
					}()
				}
				if i%2 == 0 {
					if err := s.DeleteEntry(ctx, e.Slug, "removed by its operator"); err != nil {
						errs <- err
					}
				}
				writers.Wait()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := pendingCount(t, main); n != 0 {
		t.Errorf("%d records pending", n)
	}
	if ts := tombstones(t, main); len(ts) != workers*each/2 {
		t.Errorf("%d tombstones, want %d", len(ts), workers*each/2)
	}
	checkLedgerNumbering(t, main)
	checkSignedInvariant(t, main)
}
