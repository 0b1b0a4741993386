package store_test

import (
	"slices"
	"testing"

	"github.com/probity-dev/probity/store"
)

// TestMigrateBaselines builds a store at migration 0016 (the version before the
// baselines; 0017 is another part's) holding entries with rounds' facts, and migrates
// it: the entries are as they were, the new table is empty, and no entry has a
// baseline.
func TestMigrateBaselines(t *testing.T) {
	for _, b := range store.BackendsForTest() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			s := b.OpenEmpty(t)
			if err := store.MigrateForTest(ctx, s, 16); err != nil {
				t.Fatalf("migrating through 0016: %v", err)
			}
			var ids []int64
			for _, slug := range []string{"one", "two"} {
				e, err := store.InsertEntryForTest(ctx, s, store.NewEntry{SlugBase: slug, Kind: store.KindRemote,
					Locator: "https://" + slug + ".example.com/mcp", Name: slug, Source: "import"})
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, e.ID)
			}
			const q = `SELECT id, slug, locator, claimed FROM entries ORDER BY id`
			before, err := store.QueryForTest(ctx, s, q, 4)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Migrate(ctx); err != nil {
				t.Fatalf("migrating to 0018: %v", err)
			}
			after, err := store.QueryForTest(ctx, s, q, 4)
			if err != nil || !slices.EqualFunc(after, before, slices.Equal) {
				t.Errorf("entries %v (%v), were %v", after, err, before)
			}
			if rows, err := store.QueryForTest(ctx, s, `SELECT count(*) FROM baselines`, 1); err != nil || rows[0][0] != "0" {
				t.Errorf("baselines = %v, %v", rows, err)
			}
			for _, id := range ids {
				if _, err := s.CurrentBaseline(ctx, id); err == nil {
					t.Errorf("entry %d has a baseline after the migration", id)
				}
			}
		})
	}
}
