package store_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/export"
	"github.com/probity-dev/probity/internal/ledgertest"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/verifier"
	"github.com/probity-dev/probity/verifier/cli"
)

// oldRecord is an envelope stored as the schema of migrations 0001 to 0005 held it.
type oldRecord struct {
	kind   store.RecordKind
	slug   string
	ref    string // the round id, change number or supply run time
	env    []byte
	keyID  string
	digest string
}

// TestMigrateToLedger builds a store of migration 0005 holding signed rounds, changes
// (hidden ones too) and supply runs of several entries, stored interleaved as the
// service stores them, with the SQL the store wrote before the ledger; then migrates it
// to 0006. Every envelope comes out of the ledger byte for byte, with its kind, entry,
// key id and payload digest, numbered 1, 2, … in the order stored; the rounds, changes
// and runs reference their records; and the export of the migrated store verifies.
func TestMigrateToLedger(t *testing.T) {
	for _, b := range store.BackendsForTest() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			s := b.OpenEmpty(t)
			if err := store.MigrateForTest(ctx, s, 5); err != nil {
				t.Fatalf("migrating through 0005: %v", err)
			}
			signer, err := ledgertest.NewSigner("migration")
			if err != nil {
				t.Fatal(err)
			}
			want := fillSchema0005(t, s, signer)

			if err := s.Migrate(ctx); err != nil {
				t.Fatalf("migrating to 0006: %v", err)
			}
			var got []store.LedgerRecord
			if err := s.Ledger(ctx, store.LedgerFilter{}, func(r store.LedgerRecord) error {
				got = append(got, r)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("ledger has %d records, the old tables %d envelopes", len(got), len(want))
			}
			kinds := map[store.RecordKind]int{}
			for i, w := range want {
				g := got[i]
				ref := g.RoundID
				switch g.Kind {
				case store.RecordChange:
					ref = fmt.Sprint(g.ChangeNumber)
				case store.RecordSupply:
					ref = g.RanAt.Format(time.RFC3339Nano)
				}
				if g.Seq != int64(i+1) || g.Kind != w.kind || g.EntrySlug != w.slug || ref != w.ref ||
					!bytes.Equal(g.Envelope, w.env) || g.KeyID != w.keyID || g.PayloadDigest != w.digest {
					t.Errorf("record %d = %s of %s (%s), key %s, digest %s; want %s of %s (%s), key %s, digest %s; same bytes %v",
						g.Seq, g.Kind, g.EntrySlug, ref, g.KeyID, g.PayloadDigest, w.kind, w.slug, w.ref, w.keyID, w.digest,
						bytes.Equal(g.Envelope, w.env))
				}
				kinds[g.Kind]++
			}
			t.Logf("%d envelopes compared byte for byte: %d rounds, %d changes, %d supply runs",
				len(want), kinds[store.RecordProbe], kinds[store.RecordChange], kinds[store.RecordSupply])
			checkRowsReferenceRecords(t, s, want)

			// New records are numbered after the migrated ones.
			e, err := s.Entry(ctx, "entry-0")
			if err != nil {
				t.Fatal(err)
			}
			rec, err := signer.Supply(ctx, "entry-0", time.Now())
			if err != nil {
				t.Fatal(err)
			}
			runID, err := s.SaveSupply(ctx, store.SupplyRecord{EntryID: e.ID, RanAt: time.Now(), Score: 100, Verified: true,
				Facts: []byte(`{}`), Verdict: []byte(`{}`), Envelope: rec.Envelope, KeyID: signer.KeyID}, nil)
			if err != nil {
				t.Fatal(err)
			}
			// Supply runs 1 … 37 were stored before, the 37th deleted with its entry.
			if runID != 38 {
				t.Errorf("the first supply run after the migration has id %d, want 38", runID)
			}
			var last store.LedgerRecord
			if err := s.Ledger(ctx, store.LedgerFilter{AfterSeq: int64(len(want))}, func(r store.LedgerRecord) error {
				last = r
				return nil
			}); err != nil || last.Seq != int64(len(want)+1) || !bytes.Equal(last.Envelope, rec.Envelope) {
				t.Errorf("the first record after the migration: %d, %v", last.Seq, err)
			}

			// The export of the migrated store verifies, line for line in ledger order.
			out := filepath.Join(t.TempDir(), "export.jsonl")
			c, err := export.Write(ctx, s, signer.Doc, out, store.EnvelopeFilter{}, nil, os.Stderr)
			if err != nil {
				t.Fatal(err)
			}
			if c.Rounds+c.Changes+c.Supply != len(want)+1 {
				t.Errorf("exported %+v, want %d records", c, len(want)+1)
			}
			sum, err := cli.VerifyPaths(ctx, []string{out}, cli.StreamConfig{Keys: signer.Doc, Policy: verifier.DefaultPolicy(),
				Emit: func(it cli.Item) {
					if it.Err != nil {
						t.Errorf("%s: %v", it.Source, it.Err)
					}
				}})
			if err != nil || sum.Total != len(want)+1 || sum.Verified != sum.Total {
				t.Errorf("verify the export: %+v, %v", sum, err)
			}
			t.Logf("the export of the migrated store: %d of %d envelopes verified", sum.Verified, sum.Total)
		})
	}
}

// checkRowsReferenceRecords checks that each round, change and supply run of the old
// schema reads back with its own envelope, now from the ledger.
func checkRowsReferenceRecords(t *testing.T, s store.Store, want []oldRecord) {
	t.Helper()
	ctx := t.Context()
	byRef := map[string][]byte{}
	for _, w := range want {
		byRef[string(w.kind)+" "+w.slug+" "+w.ref] = w.env
	}
	seen := 0
	check := func(kind store.RecordKind, slug, ref string, env []byte, signed bool) {
		w, ok := byRef[string(kind)+" "+slug+" "+ref]
		if ok != signed || !bytes.Equal(env, w) {
			t.Errorf("%s %s of %s: signed %v, stored %v, same envelope %v", kind, ref, slug, signed, ok, bytes.Equal(env, w))
		}
		if signed {
			seen++
		}
	}
	es, err := s.Entries(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		rs, err := s.Rounds(ctx, e.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		envs := map[int64][]byte{}
		if err := s.Envelopes(ctx, store.EnvelopeFilter{EntrySlug: e.Slug}, func(r store.EnvelopeRecord) error {
			envs[r.Round] = r.Envelope
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			check(store.RecordProbe, e.Slug, r.RoundID, envs[r.ID], r.Signed)
		}
		cs, err := s.Changes(ctx, store.ChangeFilter{EntryID: e.ID, IncludeHidden: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			check(store.RecordChange, e.Slug, fmt.Sprint(c.Number), c.Envelope, c.Envelope != nil)
		}
		runs, err := s.SupplyRuns(ctx, e.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			check(store.RecordSupply, e.Slug, r.RanAt.Format(time.RFC3339Nano), r.Envelope, r.Envelope != nil)
		}
	}
	if seen != len(want) {
		t.Errorf("%d rows reference records, want %d", seen, len(want))
	}
}

// fillSchema0005 stores, with the statements SaveRound, SaveHistory, HideChange and
// SaveSupply ran against migrations 0001 to 0005, what a service would have stored for
// entries entry-0 … entry-11 over a few weeks: per entry and day a signed round, every
// third day an unsigned one, every second day a change (every fifth unsigned, one
// hidden), every week a supply run (one unsigned), all interleaved across entries in
// time. Some records of different kinds share a time, stored in the order the service
// stores them (the round, then the change comparing it, then a supply run). It returns
// the signed ones in the order stored.
func fillSchema0005(t *testing.T, s store.Store, signer *ledgertest.Signer) []oldRecord {
	t.Helper()
	ctx := t.Context()
	pg := s.Backend() == "postgres"
	ts := func(at time.Time) string {
		if pg {
			return "'" + at.UTC().Format("2006-01-02T15:04:05.000Z") + "'"
		}
		return fmt.Sprint(at.UnixMilli())
	}
	blob := func(b []byte) string {
		if pg {
			return "decode('" + hex.EncodeToString(b) + "', 'hex')"
		}
		return "X'" + hex.EncodeToString(b) + "'"
	}
	boolean := func(b bool) string {
		switch {
		case pg:
			return fmt.Sprint(b)
		case b:
			return "1"
		}
		return "0"
	}
	exec := func(q string) {
		t.Helper()
		if err := store.ExecForTest(ctx, s, q); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
	const entries, days = 12, 21
	ids := map[string]int64{}
	for i := range entries {
		slug := fmt.Sprintf("entry-%d", i)
		e, err := store.InsertEntryForTest(ctx, s, store.NewEntry{SlugBase: slug, Kind: store.KindRemote,
			Locator: "https://" + slug + ".example.com/mcp", Name: slug, Source: "import"})
		if err != nil {
			t.Fatal(err)
		}
		ids[slug] = e.ID
	}
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var want []oldRecord
	changes := map[string]int64{}
	for day := range days {
		for i := range entries {
			slug := fmt.Sprintf("entry-%d", i)
			id := ids[slug]
			at := start.Add(time.Duration(day)*24*time.Hour + time.Duration(i)*time.Minute)
			roundID := fmt.Sprintf("r-%d-%d", i, day)
			// A signed round: the observation, then its envelope (SaveRound).
			rec, err := signer.Probe(ctx, roundID, at)
			if err != nil {
				t.Fatal(err)
			}
			exec(fmt.Sprintf(`INSERT INTO observations (entry_id, due_at, reason, round_id, started_at,
				finished_at, coverage, signed, unsigned_reason, reach, http_status, stop, uptime, retry_after_ms,
				protocol_version, server_name, server_version, tool_count, pages, handshake_method, proposed_version,
				login_unauthorized, login_challenge, login_metadata)
				VALUES (%d, %s, 'cadence', '%s', %s, %s, 'auth_required', %s, '', '', 401, 'auth_required', 'answered', 0,
				'2025-11-25', 'old', '1.0', 0, 0, 'initialize', '2025-11-25', 'tools_list', 'with_metadata', 'metadata_consistent')`,
				id, ts(at), roundID, ts(at), ts(at.Add(time.Second)), boolean(true)))
			exec(fmt.Sprintf(`INSERT INTO envelopes (observation_id, key_id, payload_digest, envelope, created_at)
				SELECT id, '%s', '%s', %s, %s FROM observations WHERE entry_id = %d AND round_id = '%s'`,
				signer.KeyID, rec.PayloadDigest, blob(rec.Envelope), ts(at), id, roundID))
			want = append(want, oldRecord{store.RecordProbe, slug, roundID, rec.Envelope, signer.KeyID, rec.PayloadDigest})
			if day%3 == 2 {
				later := at.Add(30 * time.Second)
				exec(fmt.Sprintf(`INSERT INTO observations (entry_id, due_at, reason, round_id, started_at,
					finished_at, coverage, signed, unsigned_reason, reach, http_status, stop, uptime, retry_after_ms,
					protocol_version, server_name, server_version, tool_count, pages, login_unauthorized,
					login_challenge, login_metadata)
					VALUES (%d, %s, 'confirm', 'u-%d-%d', %s, %s, '', %s, 'no_handshake', 'timeout', 0, '', 'no_answer',
					0, '', '', '', 0, 0, '', '', '')`, id, ts(later), i, day, ts(later), ts(later), boolean(false)))
			}
			// A change at the round's time (SaveHistory, after the round it compares).
			if day%2 == 1 {
				changes[slug]++
				n := changes[slug]
				signed, hidden := n%5 != 0, n == 3
				keyID, env := "NULL", "NULL"
				if signed {
					rec, err := signer.Change(ctx, slug, n, at)
					if err != nil {
						t.Fatal(err)
					}
					keyID, env = "'"+signer.KeyID+"'", blob(rec.Envelope)
					want = append(want, oldRecord{store.RecordChange, slug, fmt.Sprint(n), rec.Envelope, signer.KeyID, rec.PayloadDigest})
				}
				exec(fmt.Sprintf(`INSERT INTO changes (entry_id, number, recorded_at, origin, kind, summary, details,
					badges, after_observation, key_id, envelope)
					SELECT %d, %d, %s, 'automatic', 'tools', '1 tool added', %s, '[]', id, %s, %s
					FROM observations WHERE entry_id = %d AND round_id = '%s'`,
					id, n, ts(at), blob([]byte(`{"added":["t"]}`)), keyID, env, id, roundID))
				if hidden {
					exec(fmt.Sprintf(`UPDATE changes SET hidden = %s, hidden_reason = 'a false read'
						WHERE entry_id = %d AND number = %d`, boolean(true), id, n))
				}
			}
			// A weekly supply run at the same time (SaveSupply).
			if day%7 == 3 {
				signed := !(i == 1 && day == 10)
				keyID, env := "NULL", "NULL"
				if signed {
					rec, err := signer.Supply(ctx, slug, at)
					if err != nil {
						t.Fatal(err)
					}
					keyID, env = "'"+signer.KeyID+"'", blob(rec.Envelope)
					want = append(want, oldRecord{store.RecordSupply, slug, at.Format(time.RFC3339Nano), rec.Envelope, signer.KeyID, rec.PayloadDigest})
				}
				exec(fmt.Sprintf(`INSERT INTO supply_runs (entry_id, ran_at, score, verified, latest_version, facts,
					verdict, envelope, key_id)
					VALUES (%d, %s, 100, %s, '', %s, %s, %s, %s)`,
					id, ts(at), boolean(signed), blob([]byte(`{}`)), blob([]byte(`{"score":100}`)), env, keyID))
			}
		}
	}
	if !strings.HasPrefix(want[0].ref, "r-0-0") {
		t.Fatalf("first record %+v", want[0])
	}
	// An entry deleted last (DeleteEntry then was DELETE FROM entries, which cascaded)
	// took the highest supply run id with it: no later run may be given that id again
	// (history states name supply runs by id).
	e, err := store.InsertEntryForTest(ctx, s, store.NewEntry{SlugBase: "deleted", Kind: store.KindRemote,
		Locator: "https://deleted.example.com/mcp", Name: "deleted", Source: "import"})
	if err != nil {
		t.Fatal(err)
	}
	exec(fmt.Sprintf(`INSERT INTO supply_runs (entry_id, ran_at, score, verified, latest_version, facts, verdict)
		VALUES (%d, %s, 0, %s, '', %s, %s)`, e.ID, ts(start), boolean(false), blob([]byte(`{}`)), blob([]byte(`{}`))))
	exec(`DELETE FROM entries WHERE slug = 'deleted'`)
	return want
}

// TestMigrateLedgerSequencer builds a store of migration 0006 (the ledger numbered by
// its writers) holding signed rounds, changes and supply runs of several entries and a
// tombstone, then migrates it to 0007 (records numbered by a sequencing step; rounds
// renamed). Every record keeps its bytes and its number, as its id too (id = seq = the
// old seq); every round, change and supply run references the same record; tombstones,
// removals and the counter are untouched; new records continue the numbers and the ids;
// and the export of the migrated store verifies.
func TestMigrateLedgerSequencer(t *testing.T) {
	for _, b := range store.BackendsForTest() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			s := b.OpenEmpty(t)
			if err := store.MigrateForTest(ctx, s, 5); err != nil {
				t.Fatalf("migrating through 0005: %v", err)
			}
			signer, err := ledgertest.NewSigner("sequencer")
			if err != nil {
				t.Fatal(err)
			}
			want := fillSchema0005(t, s, signer)
			if err := store.MigrateForTest(ctx, s, 6); err != nil {
				t.Fatalf("migrating through 0006: %v", err)
			}
			// DeleteEntry as 0006's store ran it: take a number, record the tombstone and
			// the removals, delete the entry.
			deletedAt := "now()"
			if s.Backend() == "sqlite" {
				deletedAt = "0"
			}
			if err := store.ExecForTest(ctx, s, `
				UPDATE ledger_counter SET next = next + 1;
				INSERT INTO ledger_tombstones (seq, entry_id, entry_slug, reason, removed, deleted_at)
				SELECT (SELECT next - 1 FROM ledger_counter), e.id, e.slug, 'removed by its operator',
				       (SELECT count(*) FROM ledger WHERE entry_id = e.id), `+deletedAt+`
				FROM entries e WHERE e.slug = 'entry-11';
				INSERT INTO ledger_removed (seq, tombstone, kind, payload_digest)
				SELECT l.seq, (SELECT next - 1 FROM ledger_counter), l.kind, l.payload_digest
				FROM ledger l WHERE l.entry_id = (SELECT id FROM entries WHERE slug = 'entry-11')
				ORDER BY l.seq;
				DELETE FROM entries WHERE slug = 'entry-11'`); err != nil {
				t.Fatalf("deleting entry-11 on 0006: %v", err)
			}

			query := func(q string, columns int) [][]string {
				t.Helper()
				rows, err := store.QueryForTest(ctx, s, q, columns)
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				return rows
			}
			const recordCols = `kind, coalesce(entry_id, 0), payload_digest, key_id, envelope, created_at`
			type state struct{ records, rounds, changes, supply, tombstones, removed, counter [][]string }
			read := func(seq, roundsTable, ref string) state {
				return state{
					records:    query(`SELECT `+seq+`, `+recordCols+` FROM ledger ORDER BY `+seq, 7),
					rounds:     query(`SELECT id, `+ref+` FROM `+roundsTable+` WHERE `+ref+` IS NOT NULL ORDER BY id`, 2),
					changes:    query(`SELECT id, `+ref+` FROM changes WHERE `+ref+` IS NOT NULL ORDER BY id`, 2),
					supply:     query(`SELECT id, `+ref+` FROM supply_runs WHERE `+ref+` IS NOT NULL ORDER BY id`, 2),
					tombstones: query(`SELECT seq, entry_id, entry_slug, reason, removed, deleted_at FROM ledger_tombstones ORDER BY seq`, 6),
					removed:    query(`SELECT seq, tombstone, kind, payload_digest FROM ledger_removed ORDER BY seq`, 4),
					counter:    query(`SELECT next FROM ledger_counter`, 1),
				}
			}
			before := read("seq", "observations", "ledger_seq")
			if len(before.records) == 0 || len(before.tombstones) != 1 || len(before.removed) == 0 {
				t.Fatalf("0006 store: %d records, %d tombstones, %d removed", len(before.records), len(before.tombstones), len(before.removed))
			}

			start := time.Now()
			if err := s.Migrate(ctx); err != nil {
				t.Fatalf("migrating to 0007: %v", err)
			}
			t.Logf("migrated %d records to 0007 in %v", len(before.records), time.Since(start))

			// Nothing in the schema is named after observations any more.
			names := `SELECT name FROM (
				SELECT conname::text AS name FROM pg_constraint WHERE connamespace = 'public'::regnamespace
				UNION ALL SELECT relname::text FROM pg_class WHERE relnamespace = 'public'::regnamespace
				UNION ALL SELECT tgname::text FROM pg_trigger
				UNION ALL SELECT proname::text FROM pg_proc WHERE pronamespace = 'public'::regnamespace
				UNION ALL SELECT column_name::text FROM information_schema.columns WHERE table_schema = 'public') n
				WHERE name LIKE '%observation%'`
			if s.Backend() == "sqlite" {
				names = `SELECT name FROM sqlite_master WHERE name LIKE '%observation%'
				UNION ALL SELECT p.name FROM sqlite_master m, pragma_table_info(m.name) p
				WHERE m.type = 'table' AND p.name LIKE '%observation%'
				UNION ALL SELECT name FROM sqlite_sequence WHERE name LIKE '%observation%'`
			}
			if left := query(names, 1); len(left) != 0 {
				t.Errorf("still named after observations: %v", left)
			}

			// Identity: the old number; position: the same number.
			after := read("id", "rounds", "ledger_id")
			if !slices.EqualFunc(after.records, before.records, slices.Equal) {
				t.Errorf("records by id differ from the records by their old number")
			}
			if bySeq := query(`SELECT seq, `+recordCols+` FROM ledger ORDER BY seq`, 7); !slices.EqualFunc(bySeq, before.records, slices.Equal) {
				t.Errorf("records by number differ from the records by their old number")
			}
			if n := query(`SELECT count(*) FROM ledger WHERE seq IS NULL OR seq <> id`, 1); n[0][0] != "0" {
				t.Errorf("%s records whose number is not their id", n[0][0])
			}
			for _, c := range []struct {
				what      string
				got, want [][]string
			}{
				{"rounds' references", after.rounds, before.rounds},
				{"changes' references", after.changes, before.changes},
				{"supply runs' references", after.supply, before.supply},
				{"tombstones", after.tombstones, before.tombstones},
				{"removals", after.removed, before.removed},
				{"counter", after.counter, before.counter},
			} {
				if !slices.EqualFunc(c.got, c.want, slices.Equal) {
					t.Errorf("%s: %v, were %v", c.what, c.got, c.want)
				}
			}
			kept := 0
			for _, w := range want {
				if w.slug != "entry-11" {
					kept++
				}
			}
			t.Logf("%d envelopes compared byte for byte (%d kept, %d removed with entry-11 on 0006)",
				len(before.records), kept, len(before.removed))
			if len(before.records) != kept {
				t.Errorf("%d records on 0006, want %d", len(before.records), kept)
			}

			// New records continue the numbers (after the tombstone) and the ids.
			next, maxID := before.counter[0][0], query(`SELECT max(id) FROM ledger`, 1)[0][0]
			e, err := s.Entry(ctx, "entry-0")
			if err != nil {
				t.Fatal(err)
			}
			rec, err := signer.Supply(ctx, "entry-0", time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.SaveSupply(ctx, store.SupplyRecord{EntryID: e.ID, RanAt: time.Now(), Score: 100, Verified: true,
				Facts: []byte(`{}`), Verdict: []byte(`{}`), Envelope: rec.Envelope, KeyID: signer.KeyID}, nil); err != nil {
				t.Fatal(err)
			}
			last := query(`SELECT id, seq FROM ledger ORDER BY id DESC LIMIT 1`, 2)[0]
			if fmt.Sprint(last[1]) != next {
				t.Errorf("the first record after the migration has number %s, want %s", last[1], next)
			}
			if id, _ := strconv.ParseInt(last[0], 10, 64); fmt.Sprint(id-1) != maxID {
				t.Errorf("the first record after the migration has id %s, want one after %s", last[0], maxID)
			}
			if err := s.DeleteEntry(ctx, "entry-1", "removed after the migration"); err != nil {
				t.Fatal(err)
			}

			// The export of the migrated store verifies.
			out := filepath.Join(t.TempDir(), "export.jsonl")
			c, err := export.Write(ctx, s, signer.Doc, out, store.EnvelopeFilter{}, nil, os.Stderr)
			if err != nil {
				t.Fatal(err)
			}
			sum, err := cli.VerifyPaths(ctx, []string{out}, cli.StreamConfig{Keys: signer.Doc, Policy: verifier.DefaultPolicy(),
				Emit: func(it cli.Item) {
					if it.Err != nil {
						t.Errorf("%s: %v", it.Source, it.Err)
					}
				}})
			if err != nil || sum.Total != c.Rounds+c.Changes+c.Supply || sum.Verified != sum.Total || sum.Total == 0 {
				t.Errorf("verify the export: %+v of %+v, %v", sum, c, err)
			}
			t.Logf("the export of the migrated store: %d of %d envelopes verified", sum.Verified, sum.Total)
		})
	}
}
