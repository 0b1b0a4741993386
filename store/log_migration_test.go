package store_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/probity-dev/probity/internal/ledgertest"
	"github.com/probity-dev/probity/store"
)

// TestMigrateLog builds a store of migration 0008 holding signed records of several
// entries and a tombstone, then migrates it to 0009: every record, tombstone, removal
// and the counter are as they were, the new columns are NULL, the new tables empty; and
// the migrated store logs, numbers and deletes as a new one does.
func TestMigrateLog(t *testing.T) {
	for _, b := range store.BackendsForTest() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			s := b.OpenEmpty(t)
			if err := store.MigrateForTest(ctx, s, 8); err != nil {
				t.Fatalf("migrating through 0008: %v", err)
			}
			signer, err := ledgertest.NewSigner("log")
			if err != nil {
				t.Fatal(err)
			}
			at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
			for i := range 3 {
				slug := fmt.Sprintf("entry-%d", i)
				e, _, err := s.AddEntry(ctx, store.NewEntry{SlugBase: slug, Kind: store.KindRemote,
					Locator: "https://" + slug + ".example.com/mcp", Name: slug, Source: "import"})
				if err != nil {
					t.Fatal(err)
				}
				for j := range 3 {
					ranAt := at.Add(time.Duration(i*3+j) * time.Minute)
					rec, err := signer.Supply(ctx, slug, ranAt)
					if err != nil {
						t.Fatal(err)
					}
					if _, err := s.SaveSupply(ctx, store.SupplyRecord{EntryID: e.ID, RanAt: ranAt, Score: 90, Verified: true,
						Facts: []byte(`{}`), Verdict: []byte(`{}`), Envelope: rec.Envelope, KeyID: signer.KeyID}, nil); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := s.DeleteEntry(ctx, "entry-1", "removed by its operator"); err != nil {
				t.Fatal(err)
			}

			query := func(q string, columns int) [][]string {
				t.Helper()
				rows, err := store.QueryForTest(ctx, s, q, columns)
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				return rows
			}
			read := func() [][][]string {
				return [][][]string{
					query(`SELECT id, seq, kind, coalesce(entry_id, 0), payload_digest, key_id, envelope, created_at FROM ledger ORDER BY id`, 8),
					query(`SELECT seq, entry_id, entry_slug, reason, removed, deleted_at FROM ledger_tombstones ORDER BY seq`, 6),
					query(`SELECT seq, tombstone, kind, payload_digest FROM ledger_removed ORDER BY seq`, 4),
					query(`SELECT next FROM ledger_counter`, 1),
					query(`SELECT id, ledger_id FROM supply_runs ORDER BY id`, 2),
				}
			}
			before := read()
			if len(before[0]) != 6 || len(before[1]) != 1 || len(before[2]) != 3 {
				t.Fatalf("0008 store: %d records, %d tombstones, %d removed", len(before[0]), len(before[1]), len(before[2]))
			}
			if err := s.Migrate(ctx); err != nil {
				t.Fatalf("migrating to 0009: %v", err)
			}
			after := read()
			for i, what := range []string{"records", "tombstones", "removals", "counter", "supply runs"} {
				if !slices.EqualFunc(after[i], before[i], slices.Equal) {
					t.Errorf("%s: %v, were %v", what, after[i], before[i])
				}
			}
			for _, q := range []string{
				`SELECT count(*) FROM ledger WHERE log_index IS NOT NULL`,
				`SELECT count(*) FROM ledger_tombstones WHERE log_index IS NOT NULL`,
				`SELECT count(*) FROM log_checkpoints`,
				`SELECT count(*) FROM key_document_versions`,
			} {
				if n := query(q, 1)[0][0]; n != "0" {
					t.Errorf("%s = %s", q, n)
				}
			}

			// The migrated store logs: every number is a source, and SetLogged marks
			// them.
			src, err := s.LogSources(ctx, 0, 0)
			if err != nil || len(src) != 10 {
				t.Fatalf("LogSources = %d sources, %v; want 10", len(src), err)
			}
			if err := s.SetLogged(ctx, 10); err != nil {
				t.Fatal(err)
			}
			if n := query(`SELECT count(*) FROM ledger WHERE log_index = seq - 1`, 1)[0][0]; n != "6" {
				t.Errorf("%s records logged, want 6", n)
			}
			if n := query(`SELECT count(*) FROM ledger_tombstones WHERE log_index = seq - 1`, 1)[0][0]; n != "1" {
				t.Errorf("%s tombstones logged, want 1", n)
			}
			if err := s.DeleteEntry(ctx, "entry-2", "removed after the migration"); err != nil {
				t.Fatal(err)
			}
			if src, err := s.LogSources(ctx, 10, 0); err != nil || len(src) != 1 || src[0].Tombstone == nil || len(src[0].Tombstone.Removed) != 3 {
				t.Errorf("LogSources(10) = %+v, %v", src, err)
			}
		})
	}
}
