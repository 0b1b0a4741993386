package store

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"encoding/base64"
)

// testEnvelope is a DSSE envelope in the shape attest.EncodeEnvelope writes, around
// payload, with a signature that is not one: the store parses envelopes for their payload
// digest, it does not verify them.
func testEnvelope(payload string) []byte {
	return []byte(`{"payloadType":"application/vnd.in-toto+json","payload":"` +
		base64.StdEncoding.EncodeToString([]byte(payload)) +
		`","signatures":[{"keyid":"a050837d85070582","sig":"c2ln"}]}`)
}

// testPayloadDigest is the payload digest of a testEnvelope.
func testPayloadDigest(env []byte) string {
	d, err := payloadDigestOf(env)
	if err != nil {
		panic(err)
	}
	return d
}

// sizedEnvelope is a testEnvelope of exactly n bytes (n ≥ 200), padded with spaces.
func sizedEnvelope(n int) []byte {
	const overhead = 200
	env := testEnvelope(strings.Repeat("p", (n-overhead)/4*3))
	return append(env[:len(env)-1:len(env)-1], append([]byte(strings.Repeat(" ", n-len(env))), '}')...)
}

// ledgerRecords returns what Ledger calls its function with.
func ledgerRecords(t *testing.T, s Store, f LedgerFilter) []LedgerRecord {
	t.Helper()
	var out []LedgerRecord
	if err := s.Ledger(t.Context(), f, func(r LedgerRecord) error {
		out = append(out, r)
		return nil
	}); err != nil {
		t.Fatalf("Ledger(%+v): %v", f, err)
	}
	return out
}

// tombstones returns every tombstone.
func tombstones(t *testing.T, s Store) []Tombstone {
	t.Helper()
	ts, err := s.Tombstones(t.Context(), 0)
	if err != nil {
		t.Fatalf("Tombstones: %v", err)
	}
	return ts
}

// checkLedgerNumbering checks the ledger's numbering from the outside: every number
// from 1 to the highest is used exactly once, by a record, a tombstone or a record a
// tombstone lists as removed (which precedes its tombstone); records come in number
// order; a change's or supply run's payload digest is its envelope's.
func checkLedgerNumbering(t *testing.T, s Store) {
	t.Helper()
	used := map[int64]string{}
	use := func(seq int64, what string) {
		if prev, ok := used[seq]; ok {
			t.Errorf("sequence number %d used by %s and %s", seq, prev, what)
		}
		used[seq] = what
	}
	var last int64
	for _, r := range ledgerRecords(t, s, LedgerFilter{}) {
		if r.Seq <= last {
			t.Errorf("record %d after %d", r.Seq, last)
		}
		last = r.Seq
		use(r.Seq, "record")
		if r.Kind != RecordProbe {
			if d, err := payloadDigestOf(r.Envelope); err != nil || d != r.PayloadDigest {
				t.Errorf("record %d: payload digest %s, envelope's %s (%v)", r.Seq, r.PayloadDigest, d, err)
			}
		}
	}
	for _, ts := range tombstones(t, s) {
		use(ts.Seq, "tombstone")
		for _, r := range ts.Removed {
			use(r.Seq, fmt.Sprintf("a record removed by tombstone %d", ts.Seq))
			if r.Seq >= ts.Seq {
				t.Errorf("tombstone %d lists record %d, not before it", ts.Seq, r.Seq)
			}
		}
	}
	for seq := int64(1); seq <= int64(len(used)); seq++ {
		if _, ok := used[seq]; !ok {
			t.Errorf("sequence number %d is not used (gap); %d numbers used", seq, len(used))
		}
	}
}

// TestLedgerOrder: every signed record, whatever its kind, is appended to the ledger
// by the method that stores it, numbered 1, 2, … in the order stored; unsigned rounds,
// changes and runs have none. Ledger's filters select by number, time and entry.
func TestLedgerOrder(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		if recs := ledgerRecords(t, s, LedgerFilter{}); len(recs) != 0 {
			t.Fatalf("empty store: %d records", len(recs))
		}
		a, b := mustAddEntry(t, s, "alpha"), mustAddEntry(t, s, "beta")
		r1 := fullRound(a.ID, t0, t0, "echo")
		o1 := mustSave(t, s, r1)
		mustSave(t, s, unsignedRound(a.ID, t0.Add(time.Minute), t0.Add(time.Minute)))
		c1, c2 := testChange(a.ID, 1, t0), testChange(a.ID, 2, t0)
		c2.Envelope, c2.KeyID = nil, "" // unsigned
		c3 := testChange(a.ID, 3, t0)
		c1.AfterRound = o1
		mustSaveHistory(t, s, HistoryUpdate{EntryID: a.ID, Processed: o1, State: []byte(`1`), Changes: []ChangeRecord{c1, c2, c3}})
		sup := mustSaveSupply(t, s, testSupply(b.ID, t0, 1))
		unsigned := testSupply(b.ID, t0.Add(time.Hour), 2)
		unsigned.Envelope, unsigned.KeyID = nil, ""
		mustSaveSupply(t, s, unsigned)
		r2 := authRound(b.ID, t0.Add(2*time.Hour), t0.Add(2*time.Hour))
		mustSave(t, s, r2)

		type rec struct {
			kind  RecordKind
			slug  string
			env   []byte
			key   string
			proof string
		}
		want := []rec{
			{RecordProbe, "alpha", r1.Envelope, r1.KeyID, r1.PayloadDigest},
			{RecordChange, "alpha", c1.Envelope, c1.KeyID, testPayloadDigest(c1.Envelope)},
			{RecordChange, "alpha", c3.Envelope, c3.KeyID, testPayloadDigest(c3.Envelope)},
			{RecordSupply, "beta", sup.Envelope, sup.KeyID, sup.PayloadDigest},
			{RecordProbe, "beta", r2.Envelope, r2.KeyID, r2.PayloadDigest},
		}
		got := ledgerRecords(t, s, LedgerFilter{})
		if len(got) != len(want) {
			t.Fatalf("Ledger = %d records, want %d", len(got), len(want))
		}
		for i, w := range want {
			g := got[i]
			if g.Seq != int64(i+1) || g.Kind != w.kind || g.EntrySlug != w.slug || string(g.Envelope) != string(w.env) ||
				g.KeyID != w.key || g.PayloadDigest != w.proof || g.CreatedAt.IsZero() || g.CreatedAt.Location() != time.UTC {
				t.Errorf("record %d = %+v, want %+v", i+1, g, w)
			}
		}
		// What each record signs.
		if got[0].RoundID != r1.RoundID || got[1].ChangeNumber != 1 || got[2].ChangeNumber != 3 ||
			!got[3].RanAt.Equal(ms(t0)) || got[4].RoundID != r2.RoundID || got[0].ChangeNumber != 0 || !got[0].RanAt.IsZero() {
			t.Errorf("what the records sign: %q %d %d %v %q", got[0].RoundID, got[1].ChangeNumber, got[2].ChangeNumber, got[3].RanAt, got[4].RoundID)
		}
		checkLedgerNumbering(t, s)

		// The rows reference their records.
		envs := envelopeRecords(t, s, EnvelopeFilter{})
		if len(envs) != 2 || envs[0].Seq != 1 || envs[0].Round != o1 || envs[1].Seq != 5 {
			t.Errorf("Envelopes = %+v", envs)
		}
		ch, err := s.Change(ctx, a.ID, 3)
		if err != nil || string(ch.Envelope) != string(c3.Envelope) || ch.PayloadDigest != want[2].proof {
			t.Errorf("Change(3) = %+v, %v", ch, err)
		}
		if ch, err := s.Change(ctx, a.ID, 2); err != nil || ch.Envelope != nil || ch.KeyID != "" || ch.PayloadDigest != "" {
			t.Errorf("unsigned Change(2) = %+v, %v", ch, err)
		}

		// Filters.
		if got := ledgerRecords(t, s, LedgerFilter{AfterSeq: 3}); len(got) != 2 || got[0].Seq != 4 {
			t.Errorf("Ledger(after 3) = %+v", got)
		}
		if got := ledgerRecords(t, s, LedgerFilter{EntrySlug: "beta"}); len(got) != 2 || got[0].Seq != 4 || got[1].Seq != 5 {
			t.Errorf("Ledger(beta) = %+v", got)
		}
		if got := ledgerRecords(t, s, LedgerFilter{EntrySlug: "nobody"}); len(got) != 0 {
			t.Errorf("Ledger(nobody) = %+v", got)
		}
		if got := ledgerRecords(t, s, LedgerFilter{Since: time.Now().Add(time.Hour)}); len(got) != 0 {
			t.Errorf("Ledger(since in an hour) = %+v", got)
		}
		if got := ledgerRecords(t, s, LedgerFilter{Since: time.Now().Add(-time.Hour)}); len(got) != 5 {
			t.Errorf("Ledger(since an hour ago) = %d records", len(got))
		}
		if got := ledgerRecords(t, s, LedgerFilter{AfterSeq: 3, Through: 4}); len(got) != 1 || got[0].Seq != 4 {
			t.Errorf("Ledger(after 3, through 4) = %+v", got)
		}
		if got := ledgerRecords(t, s, LedgerFilter{Through: 2}); len(got) != 2 || got[1].Seq != 2 {
			t.Errorf("Ledger(through 2) = %+v", got)
		}
		if err := s.Ledger(ctx, LedgerFilter{AfterSeq: -1}, func(LedgerRecord) error { return nil }); err == nil {
			t.Error("Ledger(after -1) accepted")
		}
		if err := s.Ledger(ctx, LedgerFilter{Through: -1}, func(LedgerRecord) error { return nil }); err == nil {
			t.Error("Ledger(through -1) accepted")
		}
		stop := errors.New("stop")
		n := 0
		if err := s.Ledger(ctx, LedgerFilter{}, func(LedgerRecord) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
			t.Errorf("Ledger stopped by fn = %v after %d", err, n)
		}
	})
}

// envelopeRecords returns what Envelopes calls its function with.
func envelopeRecords(t *testing.T, s Store, f EnvelopeFilter) []EnvelopeRecord {
	t.Helper()
	var out []EnvelopeRecord
	if err := s.Envelopes(t.Context(), f, func(r EnvelopeRecord) error {
		out = append(out, r)
		return nil
	}); err != nil {
		t.Fatalf("Envelopes: %v", err)
	}
	return out
}

// TestLedgerPages: Ledger reads more records than one page holds, in order.
func TestLedgerPages(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		e := mustAddEntry(t, s, "acme")
		const n = ledgerPage + 7
		for i := range n {
			mustSaveSupply(t, s, testSupply(e.ID, t0.Add(time.Duration(i)*time.Minute), i))
		}
		got := ledgerRecords(t, s, LedgerFilter{})
		if len(got) != n || got[0].Seq != 1 || got[n-1].Seq != n {
			t.Fatalf("Ledger = %d records", len(got))
		}
		if got := ledgerRecords(t, s, LedgerFilter{AfterSeq: ledgerPage}); len(got) != 7 || got[0].Seq != ledgerPage+1 {
			t.Errorf("Ledger(after a page) = %d records", len(got))
		}
		checkLedgerNumbering(t, s)
	})
}

// TestLedgerConcurrentWriters: rounds, changes and supply runs of several entries stored
// at once take distinct numbers without gaps, and a reader walking the ledger meanwhile
// always sees a prefix 1..n of the numbers: no number is visible before every smaller
// one is (numbers follow commit order).
func TestLedgerConcurrentWriters(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		const writers, each = 4, 15
		var entries []Entry
		for w := range writers {
			entries = append(entries, mustAddEntry(t, s, fmt.Sprintf("writer-%d", w)))
		}
		var (
			wg   sync.WaitGroup
			done atomic.Bool
		)
		for w := range writers {
			wg.Go(func() {
				e := entries[w]
				for i := range each {
					at := t0.Add(time.Duration(i) * time.Hour)
					var err error
					switch i % 3 {
					case 0:
						_, err = s.SaveRound(t.Context(), fullRound(e.ID, at, at, "echo"))
					case 1:
						_, err = s.SaveSupply(t.Context(), testSupply(e.ID, at, i), nil)
					case 2:
						n := int64(i/3 + 1)
						err = s.SaveHistory(t.Context(), HistoryUpdate{EntryID: e.ID, ExpectProcessed: n - 1, Processed: n,
							State: []byte(`{}`), Changes: []ChangeRecord{testChange(e.ID, n, at)}})
					}
					if err != nil {
						t.Errorf("writer %d, step %d: %v", w, i, err)
						return
					}
				}
			})
		}
		var reads int
		readerDone := make(chan struct{})
		go func() {
			defer close(readerDone)
			for !done.Load() {
				var seqs []int64
				err := s.Ledger(t.Context(), LedgerFilter{}, func(r LedgerRecord) error {
					seqs = append(seqs, r.Seq)
					return nil
				})
				if err != nil {
					t.Errorf("reader: %v", err)
					return
				}
				for i, seq := range seqs {
					if seq != int64(i+1) {
						t.Errorf("reader saw %v: not a prefix of the numbers", seqs)
						return
					}
				}
				reads++
			}
		}()
		wg.Wait()
		done.Store(true)
		<-readerDone
		got := ledgerRecords(t, s, LedgerFilter{})
		if len(got) != writers*each {
			t.Errorf("%d records, want %d", len(got), writers*each)
		}
		checkLedgerNumbering(t, s)
		t.Logf("%d reads of the ledger during the writes", reads)
	})
}

// TestLedgerGuards: the schema refuses to change or delete a record, to take a number
// out of turn, and to change or delete a tombstone; it lets DeleteEntry's statements
// through, and only once the deletion is recorded and the entry is gone.
func TestLedgerGuards(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		x := s.(testExecer)
		ctx := t.Context()
		e, gone := mustAddEntry(t, s, "acme"), mustAddEntry(t, s, "gone")
		mustSave(t, s, fullRound(e.ID, t0, t0, "echo"))
		c := testChange(e.ID, 1, t0)
		mustSaveHistory(t, s, HistoryUpdate{EntryID: e.ID, Processed: 0, State: []byte(`1`), Changes: []ChangeRecord{c}})
		mustSaveSupply(t, s, testSupply(e.ID, t0, 1))
		mustSaveSupply(t, s, testSupply(gone.ID, t0, 2))
		if err := s.DeleteEntry(ctx, "gone", "removed by its operator"); err != nil {
			t.Fatal(err)
		}
		before := takeHistorySnapshot(t, s)
		beforeLedger, beforeTombstones := ledgerRecords(t, s, LedgerFilter{}), tombstones(t, s)
		digest := strings.Repeat("a", 64)
		refused := []string{
			`UPDATE ledger SET key_id = 'forged'`,
			`UPDATE ledger SET envelope = envelope WHERE seq = 1`,
			`UPDATE ledger SET kind = 'supply' WHERE seq = 1`,
			`UPDATE ledger SET entry_id = NULL`,
			`UPDATE ledger SET created_at = created_at`,
			`DELETE FROM ledger WHERE seq = 1`,
			`DELETE FROM ledger`,
			// A record is stored pending: a number given at insert is refused, whether
			// the counter's next, one taken before, or a tombstone's.
			`INSERT INTO ledger (seq, kind, entry_id, payload_digest, key_id, envelope, created_at)
			 SELECT next, 'probe', NULL, '` + digest + `', 'k', envelope, created_at FROM ledger_counter, ledger WHERE seq = 1`,
			`INSERT INTO ledger (seq, kind, entry_id, payload_digest, key_id, envelope, created_at)
			 SELECT 2, 'probe', NULL, '` + digest + `', 'k', envelope, created_at FROM ledger WHERE seq = 1`,
			`INSERT INTO ledger (seq, kind, entry_id, payload_digest, key_id, envelope, created_at)
			 SELECT t.seq, 'probe', NULL, '` + digest + `', 'k', l.envelope, l.created_at
			 FROM ledger_tombstones t, ledger l WHERE l.seq = 1`,
			// A number never changes, nor goes, nor does the identity.
			`UPDATE ledger SET seq = seq`,
			`UPDATE ledger SET seq = seq + 100 WHERE seq = 1`,
			`UPDATE ledger SET seq = NULL WHERE seq = 1`,
			`UPDATE ledger SET id = id`,
			// The counter moves only past numbers given, and stays.
			`UPDATE ledger_counter SET next = next + 2`,
			`UPDATE ledger_counter SET next = next - 1`,
			`DELETE FROM ledger_counter`,
			`INSERT INTO ledger_counter (one, next) VALUES (` + sqlTrue(s) + `, 1)`,
			// Tombstones and their lists stay as written.
			`UPDATE ledger_tombstones SET reason = 'nothing happened'`,
			`UPDATE ledger_tombstones SET removed = 0`,
			`DELETE FROM ledger_tombstones`,
			`UPDATE ledger_removed SET payload_digest = '` + digest + `'`,
			`DELETE FROM ledger_removed`,
			// A removal list naming a record that is not there, or not as named.
			`INSERT INTO ledger_removed (seq, tombstone, kind, payload_digest)
			 SELECT 999, seq, 'probe', '` + digest + `' FROM ledger_tombstones`,
			`INSERT INTO ledger_removed (seq, tombstone, kind, payload_digest)
			 SELECT 1, t.seq, 'probe', '` + digest + `' FROM ledger_tombstones t`,
		}
		for _, q := range refused {
			if err := x.execForTest(ctx, q); err == nil {
				t.Errorf("schema accepted: %s", q)
			}
		}
		if s.Backend() == "postgres" {
			for _, table := range []string{"ledger", "ledger_counter", "ledger_tombstones", "ledger_removed", "supply_runs", "changes"} {
				if err := x.execForTest(ctx, `TRUNCATE `+table+` CASCADE`); err == nil {
					t.Errorf("schema accepted TRUNCATE %s", table)
				}
			}
		}
		checkHistoryUnchanged(t, s, before, "refused statements")
		if got := ledgerRecords(t, s, LedgerFilter{}); !slices.EqualFunc(got, beforeLedger, sameRecord) {
			t.Errorf("ledger changed by refused statements")
		}
		if got := tombstones(t, s); len(got) != len(beforeTombstones) || len(got[0].Removed) != len(beforeTombstones[0].Removed) {
			t.Errorf("tombstones changed by refused statements: %+v", got)
		}

		// A removal recorded while the entry still exists does not let the record go:
		// the statements of a deletion, but for the entry's.
		for _, q := range []string{
			// The tombstone takes the counter's next number, and the counter moves past
			// it, in one transaction (PostgreSQL checks at commit that it did).
			`INSERT INTO ledger_tombstones (seq, entry_id, entry_slug, reason, removed, deleted_at)
			 SELECT next, ` + fmt.Sprint(e.ID) + `, 'acme', 'forged', 1, 0 FROM ledger_counter;
			 UPDATE ledger_counter SET next = next + 1`,
			`INSERT INTO ledger_removed (seq, tombstone, kind, payload_digest)
			 SELECT 1, t.seq, l.kind, l.payload_digest FROM ledger_tombstones t, ledger l
			 WHERE t.reason = 'forged' AND l.seq = 1`,
		} {
			if err := x.execForTest(ctx, pgTimes(s, q)); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		if err := x.execForTest(ctx, `DELETE FROM ledger WHERE seq = 1`); err == nil {
			t.Error("a record of an entry that still exists was deleted")
		}
		if got := ledgerRecords(t, s, LedgerFilter{}); len(got) != len(beforeLedger) {
			t.Errorf("ledger has %d records, had %d", len(got), len(beforeLedger))
		}
	})
}

// sqlTrue is the backend's true.
func sqlTrue(s Store) string {
	if s.Backend() == "postgres" {
		return "true"
	}
	return "1"
}

// pgTimes rewrites the time 0 of a statement for PostgreSQL's timestamptz.
func pgTimes(s Store, q string) string {
	if s.Backend() == "postgres" {
		return strings.ReplaceAll(q, "'forged', 1, 0", "'forged', 1, now()")
	}
	return q
}

// sameRecord compares two ledger records field by field.
func sameRecord(a, b LedgerRecord) bool {
	return a.Seq == b.Seq && a.Kind == b.Kind && a.EntryID == b.EntryID && a.EntrySlug == b.EntrySlug &&
		a.PayloadDigest == b.PayloadDigest && a.KeyID == b.KeyID && string(a.Envelope) == string(b.Envelope) &&
		a.CreatedAt.Equal(b.CreatedAt)
}

// TestDeleteEntryTombstone: DeleteEntry removes the entry's records from the ledger and
// records what went in a tombstone that takes the next number; other entries' records
// are untouched and numbering goes on after the tombstone. A reason is required.
func TestDeleteEntryTombstone(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		gone, kept := mustAddEntry(t, s, "gone"), mustAddEntry(t, s, "kept")
		o1 := mustSave(t, s, fullRound(gone.ID, t0, t0, "echo"))                     // 1
		mustSave(t, s, fullRound(kept.ID, t0, t0, "echo"))                           // 2
		mustSave(t, s, unsignedRound(gone.ID, t0.Add(time.Hour), t0.Add(time.Hour))) // none
		c := testChange(gone.ID, 1, t0)
		c.AfterRound = o1
		mustSaveHistory(t, s, HistoryUpdate{EntryID: gone.ID, Processed: o1, State: []byte(`1`), Changes: []ChangeRecord{c}}) // 3
		mustSaveSupply(t, s, testSupply(gone.ID, t0, 1))                                                                      // 4
		mustSaveSupply(t, s, testSupply(kept.ID, t0, 2))                                                                      // 5
		goneRecords := ledgerRecords(t, s, LedgerFilter{EntrySlug: "gone"})
		keptRecords := ledgerRecords(t, s, LedgerFilter{EntrySlug: "kept"})

		before := takeHistorySnapshot(t, s)
		for _, reason := range []string{"", "two\nlines", strings.Repeat("x", maxDeleteReason+1), "bell\a"} {
			if err := s.DeleteEntry(ctx, "gone", reason); err == nil {
				t.Errorf("DeleteEntry with reason %q accepted", reason)
			}
		}
		if err := s.DeleteEntry(ctx, "nobody", "removed by its operator"); !errors.Is(err, ErrNotFound) {
			t.Errorf("DeleteEntry(nobody) = %v, want ErrNotFound", err)
		}
		checkHistoryUnchanged(t, s, before, "refused deletions")
		if ts := tombstones(t, s); len(ts) != 0 {
			t.Errorf("tombstones after refused deletions: %+v", ts)
		}

		deleted := time.Now().UTC().Truncate(time.Millisecond)
		if err := s.DeleteEntry(ctx, "gone", "removed at the operator's request"); err != nil {
			t.Fatalf("DeleteEntry: %v", err)
		}
		ts := tombstones(t, s)
		if len(ts) != 1 {
			t.Fatalf("Tombstones = %+v", ts)
		}
		tomb := ts[0]
		if tomb.Seq != 6 || tomb.EntryID != gone.ID || tomb.EntrySlug != "gone" || tomb.Reason != "removed at the operator's request" ||
			tomb.DeletedAt.Before(deleted) || tomb.DeletedAt.Location() != time.UTC || len(tomb.Removed) != len(goneRecords) {
			t.Errorf("tombstone = %+v", tomb)
		}
		for i, r := range goneRecords {
			if i < len(tomb.Removed) && tomb.Removed[i] != (RemovedRecord{Seq: r.Seq, Kind: r.Kind, PayloadDigest: r.PayloadDigest}) {
				t.Errorf("removed record %d = %+v, want that of %+v", i, tomb.Removed[i], r)
			}
		}
		if got := []RecordKind{tomb.Removed[0].Kind, tomb.Removed[1].Kind, tomb.Removed[2].Kind}; !slices.Equal(got, []RecordKind{RecordProbe, RecordChange, RecordSupply}) {
			t.Errorf("removed kinds %v", got)
		}
		if got := ledgerRecords(t, s, LedgerFilter{}); !slices.EqualFunc(got, keptRecords, sameRecord) {
			t.Errorf("ledger after delete = %+v, want the kept entry's %+v", got, keptRecords)
		}
		if ts, err := s.Tombstones(ctx, tomb.Seq); err != nil || len(ts) != 0 {
			t.Errorf("Tombstones(after %d) = %+v, %v", tomb.Seq, ts, err)
		}
		checkLedgerNumbering(t, s)

		// Numbering goes on after the tombstone; an entry without records leaves an
		// empty tombstone.
		mustSaveSupply(t, s, testSupply(kept.ID, t0.Add(time.Hour), 3))
		if got := ledgerRecords(t, s, LedgerFilter{AfterSeq: 5}); len(got) != 1 || got[0].Seq != 7 {
			t.Errorf("record after the tombstone: %+v", got)
		}
		mustAddEntry(t, s, "empty")
		if err := s.DeleteEntry(ctx, "empty", "never probed"); err != nil {
			t.Fatal(err)
		}
		if ts := tombstones(t, s); len(ts) != 2 || ts[1].Seq != 8 || len(ts[1].Removed) != 0 || ts[1].EntrySlug != "empty" {
			t.Errorf("tombstones = %+v", ts)
		}
		checkLedgerNumbering(t, s)
	})
}
