package store_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/probity-dev/probity/store"
)

// TestMigrateReports builds a store at migration 0020 (the version before the reports;
// 0017 to 0020 are other parts of issue 18) holding entries, and migrates it: the
// entries' rows are as they were, none is Verified withdrawn, and the new tables are
// empty.
func TestMigrateReports(t *testing.T) {
	for _, b := range store.BackendsForTest() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			s := b.OpenEmpty(t)
			if err := store.MigrateForTest(ctx, s, 20); err != nil {
				t.Fatalf("migrating through 0020: %v", err)
			}
			for i, claimed := range []bool{false, true} {
				if _, err := store.InsertEntryForTest(ctx, s, store.NewEntry{SlugBase: fmt.Sprintf("entry-%d", i), Kind: store.KindRemote,
					Locator: fmt.Sprintf("https://entry%d.example.com/mcp", i), Name: "entry", Source: "import"}, claimed); err != nil {
					t.Fatal(err)
				}
			}
			read := func() [][]string {
				rows, err := store.QueryForTest(ctx, s, `SELECT id, slug, locator, claimed FROM entries ORDER BY id`, 4)
				if err != nil {
					t.Fatal(err)
				}
				return rows
			}
			before := read()
			if err := s.Migrate(ctx); err != nil {
				t.Fatalf("migrating to 0021: %v", err)
			}
			if after := read(); !slices.EqualFunc(after, before, slices.Equal) {
				t.Errorf("entries: %v, were %v", after, before)
			}
			for _, slug := range []string{"entry-0", "entry-1"} {
				e, err := s.Entry(ctx, slug)
				if err != nil || e.VerifiedWithdrawn {
					t.Errorf("%s: withdrawn %v, %v", slug, e.VerifiedWithdrawn, err)
				}
			}
			for _, q := range []string{`SELECT count(*) FROM reports`, `SELECT count(*) FROM withdrawals`} {
				if rows, err := store.QueryForTest(ctx, s, q, 1); err != nil || rows[0][0] != "0" {
					t.Errorf("%s = %v, %v", q, rows, err)
				}
			}
		})
	}
}
