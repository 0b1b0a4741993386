package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"
)

// logSources returns LogSources(afterSeq, limit) or fails the test.
func logSources(t *testing.T, s Store, afterSeq int64, limit int) []LogSource {
	t.Helper()
	src, err := s.LogSources(t.Context(), afterSeq, limit)
	if err != nil {
		t.Fatalf("LogSources(%d, %d): %v", afterSeq, limit, err)
	}
	return src
}

// describeSource says in a word what a source is: the kind of its record, "tombstone",
// or "removed <kind>".
func describeSource(src LogSource) string {
	switch {
	case src.Record != nil && src.Tombstone == nil && src.Removed == nil:
		return string(src.Record.Kind)
	case src.Tombstone != nil && src.Record == nil && src.Removed == nil:
		return "tombstone"
	case src.Removed != nil && src.Record == nil && src.Tombstone == nil:
		return "removed " + string(src.Removed.Kind)
	}
	return fmt.Sprintf("malformed source %+v", src)
}

// TestLogSources: every number is a source, in order, from the record, the tombstone or
// the record a tombstone removed; paging by afterSeq and limit reads the same; the
// sources end at the last number assigned (a pending record has none yet).
func TestLogSources(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		if got := logSources(t, s, 0, 0); len(got) != 0 {
			t.Fatalf("LogSources of an empty ledger = %+v", got)
		}
		gone, kept := mustAddEntry(t, s, "gone"), mustAddEntry(t, s, "kept")
		o1 := mustSave(t, s, fullRound(gone.ID, t0, t0, "echo")) // 1
		mustSave(t, s, fullRound(kept.ID, t0, t0, "echo"))       // 2
		c := testChange(gone.ID, 1, t0)
		c.AfterRound = o1
		mustSaveHistory(t, s, HistoryUpdate{EntryID: gone.ID, Processed: o1, State: []byte(`1`), Changes: []ChangeRecord{c}}) // 3
		mustSaveSupply(t, s, testSupply(kept.ID, t0, 1))                                                                      // 4
		goneRecords := ledgerRecords(t, s, LedgerFilter{EntrySlug: "gone"})
		if err := s.DeleteEntry(ctx, "gone", "removed by its operator"); err != nil { // 5
			t.Fatal(err)
		}
		mustSaveSupply(t, s, testSupply(kept.ID, t0.Add(time.Hour), 2)) // 6
		mustAddEntry(t, s, "empty")
		if err := s.DeleteEntry(ctx, "empty", "never probed"); err != nil { // 7
			t.Fatal(err)
		}

		all := logSources(t, s, 0, 0)
		var kinds []string
		for i, src := range all {
			if src.Seq != int64(i+1) {
				t.Errorf("source %d has number %d", i, src.Seq)
			}
			kinds = append(kinds, describeSource(src))
		}
		want := []string{"removed probe", "probe", "removed change", "supply", "tombstone", "supply", "tombstone"}
		if !slices.Equal(kinds, want) {
			t.Fatalf("sources = %q, want %q", kinds, want)
		}
		ledger := ledgerRecords(t, s, LedgerFilter{})
		for _, r := range ledger {
			got := all[r.Seq-1].Record
			if !sameRecord(*got, r) || got.RoundID != r.RoundID || got.RanAt != r.RanAt || got.LogIndex != nil {
				t.Errorf("source %d = %+v, want the ledger's %+v", r.Seq, got, r)
			}
		}
		for _, r := range goneRecords {
			if got := all[r.Seq-1].Removed; got == nil || *got != (RemovedRecord{Seq: r.Seq, Kind: r.Kind, PayloadDigest: r.PayloadDigest}) {
				t.Errorf("source %d = %+v, want the removed %+v", r.Seq, got, r)
			}
		}
		ts := tombstones(t, s)
		for i, n := range []int64{5, 7} {
			got := all[n-1].Tombstone
			if got.Seq != ts[i].Seq || got.EntrySlug != ts[i].EntrySlug || got.Reason != ts[i].Reason || got.EntryID != ts[i].EntryID ||
				!got.DeletedAt.Equal(ts[i].DeletedAt) || !slices.Equal(got.Removed, ts[i].Removed) || got.LogIndex != nil {
				t.Errorf("tombstone source %d = %+v, want %+v", n, got, ts[i])
			}
		}
		if len(all[4].Tombstone.Removed) != 2 || len(all[6].Tombstone.Removed) != 0 {
			t.Errorf("tombstones list %d and %d records", len(all[4].Tombstone.Removed), len(all[6].Tombstone.Removed))
		}

		// Pages read the same sources.
		for _, limit := range []int{1, 2, 3} {
			var paged []LogSource
			for after := int64(0); ; {
				page := logSources(t, s, after, limit)
				if len(page) == 0 {
					break
				}
				if len(page) > limit {
					t.Fatalf("LogSources(%d, %d) returned %d", after, limit, len(page))
				}
				paged = append(paged, page...)
				after = page[len(page)-1].Seq
			}
			if len(paged) != len(all) {
				t.Errorf("limit %d: %d sources, want %d", limit, len(paged), len(all))
				continue
			}
			for i := range paged {
				if describeSource(paged[i]) != kinds[i] || paged[i].Seq != all[i].Seq {
					t.Errorf("limit %d: source %d = %s %d", limit, i, describeSource(paged[i]), paged[i].Seq)
				}
			}
		}
		if got := logSources(t, s, 7, 0); len(got) != 0 {
			t.Errorf("LogSources(after the last) = %+v", got)
		}
		if _, err := s.LogSources(ctx, -1, 0); err == nil {
			t.Error("LogSources(-1) accepted")
		}

		// A pending record has no number: the sources end before it, and go on once it
		// is numbered.
		leavePending(s, true)
		mustSaveSupply(t, s, testSupply(kept.ID, t0.Add(2*time.Hour), 3))
		if got := logSources(t, s, 6, 0); len(got) != 1 || got[0].Seq != 7 {
			t.Errorf("with a pending record: %d sources", len(got))
		}
		leavePending(s, false)
		mustSaveSupply(t, s, testSupply(kept.ID, t0.Add(3*time.Hour), 4))
		if got := logSources(t, s, 7, 0); len(got) != 2 || got[0].Seq != 8 || got[1].Seq != 9 {
			t.Errorf("after numbering: %+v", got)
		}
	})
}

// TestSetLoggedOnce: SetLogged gives every record and tombstone through a number its
// log index, seq-1, once; the schema refuses any other index, a second update, an index
// on a pending record, and still every other change of a record or tombstone.
func TestSetLoggedOnce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		x := s.(testExecer)
		gone, kept := mustAddEntry(t, s, "gone"), mustAddEntry(t, s, "kept")
		mustSave(t, s, fullRound(gone.ID, t0, t0, "echo"))            // 1
		mustSave(t, s, fullRound(kept.ID, t0, t0, "echo"))            // 2
		mustSaveSupply(t, s, testSupply(kept.ID, t0, 1))              // 3
		if err := s.DeleteEntry(ctx, "gone", "removed"); err != nil { // 4
			t.Fatal(err)
		}
		mustSaveSupply(t, s, testSupply(kept.ID, t0.Add(time.Hour), 2)) // 5

		if err := s.SetLogged(ctx, 4); err != nil {
			t.Fatal(err)
		}
		check := func(through int64) {
			t.Helper()
			for _, r := range ledgerRecords(t, s, LedgerFilter{}) {
				switch {
				case r.Seq <= through && (r.LogIndex == nil || *r.LogIndex != r.Seq-1):
					t.Errorf("record %d: log index %v, want %d", r.Seq, r.LogIndex, r.Seq-1)
				case r.Seq > through && r.LogIndex != nil:
					t.Errorf("record %d: log index %d, want none", r.Seq, *r.LogIndex)
				}
			}
			for _, src := range logSources(t, s, 0, 0) {
				if src.Tombstone != nil && (src.Tombstone.LogIndex == nil) != (src.Seq > through) {
					t.Errorf("tombstone %d: log index %v", src.Seq, src.Tombstone.LogIndex)
				}
				if src.Record != nil && (src.Record.LogIndex == nil) != (src.Seq > through) {
					t.Errorf("source %d: log index %v", src.Seq, src.Record.LogIndex)
				}
			}
		}
		check(4)
		if err := s.SetLogged(ctx, 4); err != nil { // idempotent
			t.Fatal(err)
		}
		check(4)
		before := ledgerRecords(t, s, LedgerFilter{})
		for _, q := range []string{
			`UPDATE ledger SET log_index = seq WHERE seq = 5`,     // not seq-1
			`UPDATE ledger SET log_index = 7 WHERE seq = 5`,       // not seq-1
			`UPDATE ledger SET log_index = seq - 1 WHERE seq = 2`, // a second update, same value
			`UPDATE ledger SET log_index = NULL WHERE seq = 2`,    // back
			`UPDATE ledger SET log_index = NULL WHERE seq = 5`,    // NULL to NULL is no logging
			`UPDATE ledger_tombstones SET log_index = seq - 1`,    // a second update
			`UPDATE ledger_tombstones SET log_index = NULL`,       // back
			`UPDATE ledger_tombstones SET reason = 'nothing happened'`,
			`UPDATE ledger SET key_id = 'forged' WHERE seq = 5`,
			`UPDATE ledger SET seq = seq + 10, log_index = seq + 9 WHERE seq = 5`,
			`DELETE FROM ledger_tombstones`,
		} {
			if err := x.execForTest(ctx, q); err == nil {
				t.Errorf("schema accepted: %s", q)
			}
		}
		if got := ledgerRecords(t, s, LedgerFilter{}); !slices.EqualFunc(got, before, sameRecord) {
			t.Error("refused statements changed the ledger")
		}
		check(4)

		// A record is logged only once numbered.
		leavePending(s, true)
		mustSaveSupply(t, s, testSupply(kept.ID, t0.Add(2*time.Hour), 3))
		if err := x.execForTest(ctx, `UPDATE ledger SET log_index = 5 WHERE seq IS NULL`); err == nil {
			t.Error("schema accepted a log index on a pending record")
		}
		if err := s.SetLogged(ctx, 100); err != nil {
			t.Fatal(err)
		}
		check(5)
		leavePending(s, false)
		mustSaveSupply(t, s, testSupply(kept.ID, t0.Add(3*time.Hour), 4)) // numbers 6 and 7
		check(5)
		if err := s.SetLogged(ctx, 7); err != nil {
			t.Fatal(err)
		}
		check(7)
		if err := s.SetLogged(ctx, -1); err == nil {
			t.Error("SetLogged(-1) accepted")
		}
	})
}

// testNote is a checkpoint-shaped note of size n with sigs signature lines.
func testNote(n int64, sigs int) []byte {
	b := fmt.Appendf(nil, "example.com/log\n%d\n%032d\n\n", n, n)
	for i := range sigs {
		b = fmt.Appendf(b, "— signer%d c2ln\n", i)
	}
	return b
}

func testCheckpoint(n int64, sigs int, seen time.Time) LogCheckpoint {
	return LogCheckpoint{Size: n, RootHash: bytes.Repeat([]byte{byte(n)}, 32), Note: testNote(n, sigs), SeenAt: seen, Cosigned: sigs > 1}
}

// TestCheckpoints: checkpoints are stored once per note; the checkpoint holding an
// index is the smallest larger one (cosigned first), the one before it the largest at
// most the index (not the empty tree); the schema keeps them as written.
func TestCheckpoints(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		if c, err := s.LatestCheckpoint(ctx); c != nil || err != nil {
			t.Errorf("LatestCheckpoint of none = %+v, %v", c, err)
		}
		if h, b, err := s.CheckpointsAround(ctx, 0); h != nil || b != nil || err != nil {
			t.Errorf("CheckpointsAround of none = %+v, %+v, %v", h, b, err)
		}
		saved := []LogCheckpoint{
			testCheckpoint(0, 1, t0),
			testCheckpoint(3, 1, t0.Add(time.Second)),
			testCheckpoint(5, 1, t0.Add(2*time.Second)),
			testCheckpoint(5, 2, t0.Add(3*time.Second)),
			testCheckpoint(9, 2, t0.Add(4*time.Second)),
		}
		for _, c := range append(saved, saved...) { // the second time: no-ops
			if err := s.SaveCheckpoint(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		same := func(what string, got *LogCheckpoint, want *LogCheckpoint) {
			t.Helper()
			switch {
			case got == nil && want == nil:
			case got == nil || want == nil:
				t.Errorf("%s = %+v, want %+v", what, got, want)
			case got.Size != want.Size || !bytes.Equal(got.RootHash, want.RootHash) || !bytes.Equal(got.Note, want.Note) ||
				!got.SeenAt.Equal(ms(want.SeenAt)) || got.Cosigned != want.Cosigned:
				t.Errorf("%s = %+v, want %+v", what, got, want)
			}
		}
		latest, err := s.LatestCheckpoint(ctx)
		if err != nil {
			t.Fatal(err)
		}
		same("LatestCheckpoint", latest, &saved[4])
		for _, c := range []struct {
			index           int64
			holding, before *LogCheckpoint
		}{
			// The earliest cosigned checkpoint holds the record, not the earlier one the
			// witnesses did not see (size 3).
			{0, &saved[3], nil},
			{2, &saved[3], nil},
			{3, &saved[3], &saved[1]},
			{4, &saved[3], &saved[1]},
			{5, &saved[4], &saved[3]},
			{8, &saved[4], &saved[3]},
			{9, nil, &saved[4]},
		} {
			h, b, err := s.CheckpointsAround(ctx, c.index)
			if err != nil {
				t.Fatal(err)
			}
			same(fmt.Sprintf("holding %d", c.index), h, c.holding)
			same(fmt.Sprintf("before %d", c.index), b, c.before)
		}
		// When no cosigned checkpoint holds the record, the earliest that does.
		unwitnessed := testCheckpoint(12, 1, t0.Add(5*time.Second))
		if err := s.SaveCheckpoint(ctx, unwitnessed); err != nil {
			t.Fatal(err)
		}
		if h, b, err := s.CheckpointsAround(ctx, 10); err != nil {
			t.Fatal(err)
		} else {
			same("holding 10", h, &unwitnessed)
			same("before 10", b, &saved[4])
		}
		rows, err := QueryForTest(ctx, s, `SELECT count(*) FROM log_checkpoints`, 1)
		if err != nil || rows[0][0] != "6" {
			t.Errorf("%v checkpoints stored, want 6 (%v)", rows, err)
		}
		for _, bad := range []LogCheckpoint{
			{Size: -1, RootHash: make([]byte, 32), Note: []byte("n"), SeenAt: t0},
			{Size: 1, RootHash: make([]byte, 31), Note: []byte("n"), SeenAt: t0},
			{Size: 1, RootHash: make([]byte, 32), SeenAt: t0},
			{Size: 1, RootHash: make([]byte, 32), Note: make([]byte, maxCheckpointNote+1), SeenAt: t0},
			{Size: 1, RootHash: make([]byte, 32), Note: []byte("n")},
		} {
			if err := s.SaveCheckpoint(ctx, bad); err == nil {
				t.Errorf("SaveCheckpoint(%d, %d-byte root, %d-byte note) accepted", bad.Size, len(bad.RootHash), len(bad.Note))
			}
		}
		if _, _, err := s.CheckpointsAround(ctx, -1); err == nil {
			t.Error("CheckpointsAround(-1) accepted")
		}
		for _, q := range []string{
			`UPDATE log_checkpoints SET size = size + 1`,
			`UPDATE log_checkpoints SET cosigned = ` + sqlTrue(s),
			`DELETE FROM log_checkpoints`,
		} {
			if err := s.(testExecer).execForTest(ctx, q); err == nil {
				t.Errorf("schema accepted: %s", q)
			}
		}
	})
}

// TestKeyDocumentVersions: a key document version is a ledger record of kind keys,
// numbered as the others; saving it again is a no-op returning its number, with another
// envelope an error; the versions come back in order.
func TestKeyDocumentVersions(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		e := mustAddEntry(t, s, "acme")
		mustSave(t, s, fullRound(e.ID, t0, t0, "echo")) // 1
		v1 := KeyDocumentVersion{Version: 1, IssuedAt: t0, DocumentDigest: "sha256:" + hexDigest("v1"),
			Envelope: testEnvelope(`{"keys":1}`), KeyID: "a050837d85070582"}
		seq, err := s.SaveKeyDocumentVersion(ctx, v1)
		if err != nil || seq != 2 {
			t.Fatalf("SaveKeyDocumentVersion(1) = %d, %v; want 2", seq, err)
		}
		if seq, err := s.SaveKeyDocumentVersion(ctx, v1); err != nil || seq != 2 {
			t.Errorf("SaveKeyDocumentVersion(1) again = %d, %v; want 2", seq, err)
		}
		other := v1
		other.Envelope = testEnvelope(`{"keys":"other"}`)
		if _, err := s.SaveKeyDocumentVersion(ctx, other); !errors.Is(err, ErrKeyVersionConflict) {
			t.Errorf("SaveKeyDocumentVersion(1, another envelope) = %v, want ErrKeyVersionConflict", err)
		}
		mustSaveSupply(t, s, testSupply(e.ID, t0, 1)) // 3
		v2 := KeyDocumentVersion{Version: 2, IssuedAt: t0.Add(time.Hour), DocumentDigest: "sha256:" + hexDigest("v2"),
			Envelope: testEnvelope(`{"keys":2}`), KeyID: "a050837d85070582"}
		if seq, err := s.SaveKeyDocumentVersion(ctx, v2); err != nil || seq != 4 {
			t.Errorf("SaveKeyDocumentVersion(2) = %d, %v; want 4", seq, err)
		}
		for _, bad := range []KeyDocumentVersion{
			{Version: 0, IssuedAt: t0, DocumentDigest: "d", Envelope: v1.Envelope, KeyID: "k"},
			{Version: 3, DocumentDigest: "d", Envelope: v1.Envelope, KeyID: "k"},
			{Version: 3, IssuedAt: t0, Envelope: v1.Envelope, KeyID: "k"},
			{Version: 3, IssuedAt: t0, DocumentDigest: "d", KeyID: "k"},
			{Version: 3, IssuedAt: t0, DocumentDigest: "d", Envelope: v1.Envelope},
			{Version: 3, IssuedAt: t0, DocumentDigest: "d", Envelope: []byte(`{}`), KeyID: "k"},
			{Version: 3, IssuedAt: t0, DocumentDigest: "d", Envelope: v1.Envelope, KeyID: "k", PayloadDigest: hexDigest("x")},
		} {
			if _, err := s.SaveKeyDocumentVersion(ctx, bad); err == nil {
				t.Errorf("SaveKeyDocumentVersion(%+v) accepted", bad)
			}
		}

		vs, err := s.KeyDocumentVersions(ctx)
		if err != nil || len(vs) != 2 {
			t.Fatalf("KeyDocumentVersions = %+v, %v", vs, err)
		}
		for i, want := range []KeyDocumentVersion{v1, v2} {
			got := vs[i]
			if got.Version != want.Version || !got.IssuedAt.Equal(ms(want.IssuedAt)) || got.DocumentDigest != want.DocumentDigest ||
				!bytes.Equal(got.Envelope, want.Envelope) || got.KeyID != want.KeyID ||
				got.PayloadDigest != testPayloadDigest(want.Envelope) || got.Seq != []int64{2, 4}[i] {
				t.Errorf("version %d = %+v", i+1, got)
			}
		}
		recs := ledgerRecords(t, s, LedgerFilter{})
		if len(recs) != 4 || recs[1].Kind != RecordKeys || recs[3].Kind != RecordKeys || recs[1].EntryID != 0 ||
			!bytes.Equal(recs[1].Envelope, v1.Envelope) || recs[1].PayloadDigest != testPayloadDigest(v1.Envelope) {
			t.Errorf("ledger = %+v", recs)
		}
		if src := logSources(t, s, 1, 1); len(src) != 1 || src[0].Record == nil || src[0].Record.Kind != RecordKeys {
			t.Errorf("LogSources(1, 1) = %+v", src)
		}
		checkLedgerNumbering(t, s)
		// The entry's deletion leaves the key document's records.
		if err := s.DeleteEntry(ctx, "acme", "removed"); err != nil {
			t.Fatal(err)
		}
		if recs := ledgerRecords(t, s, LedgerFilter{}); len(recs) != 2 || recs[0].Kind != RecordKeys || recs[1].Kind != RecordKeys {
			t.Errorf("ledger after the deletion = %+v", recs)
		}
		for _, q := range []string{
			`UPDATE key_document_versions SET document_digest = 'forged'`,
			`DELETE FROM key_document_versions`,
		} {
			if err := s.(testExecer).execForTest(ctx, q); err == nil {
				t.Errorf("schema accepted: %s", q)
			}
		}
	})
}

// TestTryLogLock: on PostgreSQL one holder at a time, across connections, until
// released; on SQLite always granted.
func TestTryLogLock(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := context.WithoutCancel(t.Context())
		release, ok, err := s.TryLogLock(ctx)
		if err != nil || !ok {
			t.Fatalf("TryLogLock = %v, %v", ok, err)
		}
		release2, ok2, err := s.TryLogLock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := s.Backend() == "sqlite"; ok2 != want {
			t.Errorf("second TryLogLock = %v, want %v", ok2, want)
		}
		release2()
		release()
		release() // twice: a no-op
		release3, ok3, err := s.TryLogLock(ctx)
		if err != nil || !ok3 {
			t.Errorf("TryLogLock after release = %v, %v", ok3, err)
		}
		if err := s.LogLockHeld(ctx); err != nil {
			t.Errorf("LogLockHeld while held: %v", err)
		}
		if s.Backend() == "postgres" {
			// The server ends the lock's session (a restart, a network cut): the lock is
			// gone, and LogLockHeld says so.
			if _, err := QueryForTest(ctx, s, `SELECT pg_terminate_backend(pid)::text FROM pg_locks
				WHERE locktype = 'advisory' AND objid = `+strconv.Itoa(int(pgLockLogAppender))+` AND objsubid = 2
				AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`, 1); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(10 * time.Second)
			for s.LogLockHeld(ctx) == nil && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			if err := s.LogLockHeld(ctx); err == nil {
				t.Error("LogLockHeld after the lock's session ended: nil")
			}
		}
		release3()
		if err := s.LogLockHeld(ctx); (err == nil) != (s.Backend() == "sqlite") {
			t.Errorf("LogLockHeld after release: %v", err)
		}
	})
}
