package store_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/probity-dev/probity/store"
)

// TestMigrateWebhooks builds a store at migration 0012 (the version before the webhooks)
// holding accounts and an entry, migrates it to 0013: the accounts and the entry are as
// they were, the new tables are empty, and the migrated store registers webhooks.
func TestMigrateWebhooks(t *testing.T) {
	for _, b := range store.BackendsForTest() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			s := b.OpenEmpty(t)
			if err := store.MigrateForTest(ctx, s, 12); err != nil {
				t.Fatalf("migrating through 0012: %v", err)
			}
			created := "1764590400000"
			if s.Backend() != "sqlite" {
				created = "'2025-12-01T12:00:00Z'"
			}
			for i := range 3 {
				if err := store.ExecForTest(ctx, s, fmt.Sprintf(`INSERT INTO accounts (email, email_key, created_at)
					VALUES ('P%d@Example.org', 'p%d@example.org', %s)`, i, i, created)); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := store.InsertEntryForTest(ctx, s, store.NewEntry{SlugBase: "entry", Kind: store.KindRemote,
				Locator: "https://entry.example.com/mcp", Name: "entry", Source: "import"}); err != nil {
				t.Fatal(err)
			}
			read := func() [][][]string {
				var out [][][]string
				for _, q := range []struct {
					sql     string
					columns int
				}{
					{`SELECT id, email, email_key, coalesce(github_id, 0), created_at FROM accounts ORDER BY id`, 5},
					{`SELECT id, slug, locator FROM entries ORDER BY id`, 3},
				} {
					rows, err := store.QueryForTest(ctx, s, q.sql, q.columns)
					if err != nil {
						t.Fatalf("%s: %v", q.sql, err)
					}
					out = append(out, rows)
				}
				return out
			}
			before := read()
			if err := s.Migrate(ctx); err != nil {
				t.Fatalf("migrating to 0013: %v", err)
			}
			after := read()
			for i := range before {
				if !slices.EqualFunc(after[i], before[i], slices.Equal) {
					t.Errorf("rows %d: %v, were %v", i, after[i], before[i])
				}
			}
			for _, q := range []string{`SELECT count(*) FROM webhooks`, `SELECT count(*) FROM webhook_deliveries`, `SELECT count(*) FROM webhook_planner`} {
				if rows, err := store.QueryForTest(ctx, s, q, 1); err != nil || rows[0][0] != "0" {
					t.Errorf("%s = %v, %v", q, rows, err)
				}
			}
			var id int64
			fmt.Sscan(before[0][0][0], &id)
			w, err := s.AddWebhook(ctx, id, "https://hooks.example.com/", time.Now())
			if err != nil {
				t.Fatalf("AddWebhook after the migration: %v", err)
			}
			if ws, err := s.Webhooks(ctx, id); err != nil || len(ws) != 1 || ws[0].ID != w.ID {
				t.Errorf("Webhooks = %+v, %v", ws, err)
			}
		})
	}
}
