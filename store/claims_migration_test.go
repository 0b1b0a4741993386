package store_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/probity-dev/probity/store"
)

// TestMigrateClaims builds a store at migration 0014 (the version before the claims;
// 0015 is another issue's) holding an account and entries, one of them claimed as an
// import could set it, and migrates it: the rows are as they were (the migration
// leaves entries.claimed alone; from here on the claims trigger owns it), and the new
// tables are empty.
func TestMigrateClaims(t *testing.T) {
	for _, b := range store.BackendsForTest() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			s := b.OpenEmpty(t)
			if err := store.MigrateForTest(ctx, s, 14); err != nil {
				t.Fatalf("migrating through 0014: %v", err)
			}
			created := "1764590400000"
			if s.Backend() != "sqlite" {
				created = "'2025-12-01T12:00:00Z'"
			}
			if err := store.ExecForTest(ctx, s, `INSERT INTO accounts (email, email_key, created_at)
				VALUES ('P@Example.org', 'p@example.org', `+created+`)`); err != nil {
				t.Fatal(err)
			}
			for i, claimed := range []bool{false, true} {
				if _, err := store.InsertEntryForTest(ctx, s, store.NewEntry{SlugBase: fmt.Sprintf("entry-%d", i), Kind: store.KindRemote,
					Locator: fmt.Sprintf("https://entry%d.example.com/mcp", i), Name: "entry", Source: "import"}, claimed); err != nil {
					t.Fatal(err)
				}
			}
			read := func() [][][]string {
				var out [][][]string
				for _, q := range []struct {
					sql     string
					columns int
				}{
					{`SELECT id, email, created_at FROM accounts ORDER BY id`, 3},
					{`SELECT id, slug, locator, claimed FROM entries ORDER BY id`, 4},
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
				t.Fatalf("migrating to 0016: %v", err)
			}
			after := read()
			for i := range before {
				if !slices.EqualFunc(after[i], before[i], slices.Equal) {
					t.Errorf("rows %d: %v, were %v", i, after[i], before[i])
				}
			}
			for _, q := range []string{`SELECT count(*) FROM claim_tokens`, `SELECT count(*) FROM claims`} {
				if rows, err := store.QueryForTest(ctx, s, q, 1); err != nil || rows[0][0] != "0" {
					t.Errorf("%s = %v, %v", q, rows, err)
				}
			}
		})
	}
}

// TestMigrateClaimChecks builds a store at migration 0016 holding a live and a lapsed
// claim and migrates it to 0017: the rows are as they were, each claim is next checked
// a day after its last check, with no run of unanswered or gone checks.
func TestMigrateClaimChecks(t *testing.T) {
	for _, b := range store.BackendsForTest() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			s := b.OpenEmpty(t)
			if err := store.MigrateForTest(ctx, s, 16); err != nil {
				t.Fatalf("migrating through 0016: %v", err)
			}
			at, lapsed, next := "1764590400000", "1764676800000", "1764676800000"
			if s.Backend() != "sqlite" {
				at, lapsed, next = "'2025-12-01T12:00:00Z'", "'2025-12-02T12:00:00Z'", "2025-12-02 12:00:00 +0000 UTC"
			}
			if err := store.ExecForTest(ctx, s, `INSERT INTO accounts (email, email_key, created_at)
				VALUES ('P@Example.org', 'p@example.org', `+at+`)`); err != nil {
				t.Fatal(err)
			}
			e, err := store.InsertEntryForTest(ctx, s, store.NewEntry{SlugBase: "entry", Kind: store.KindRemote,
				Locator: "https://entry.example.com/mcp", Name: "entry", Source: "import"})
			if err != nil {
				t.Fatal(err)
			}
			for i, lapse := range []string{"NULL", lapsed} {
				reason := "NULL"
				if lapse != "NULL" {
					reason = "'gone'"
				}
				if err := store.ExecForTest(ctx, s, fmt.Sprintf(`INSERT INTO claims (account_id, entry_id, method, target, proof,
					verified_at, last_checked_at, lapsed_at, lapse_reason)
					SELECT id, %d, '%s', 'https://entry.example.com/mcp', 'p', %s, %s, %s, %s FROM accounts`,
					e.ID, []string{"dns", "well-known"}[i], at, at, lapse, reason)); err != nil {
					t.Fatal(err)
				}
			}
			read := func(q string, n int) [][]string {
				rows, err := store.QueryForTest(ctx, s, q, n)
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				return rows
			}
			before := read(`SELECT claims.id, method, verified_at, last_checked_at, lapsed_at, coalesce(lapse_reason, ''), claimed
				FROM claims JOIN entries ON entries.id = entry_id ORDER BY claims.id`, 7)
			if err := s.Migrate(ctx); err != nil {
				t.Fatalf("migrating to 0017: %v", err)
			}
			after := read(`SELECT claims.id, method, verified_at, last_checked_at, lapsed_at, coalesce(lapse_reason, ''), claimed
				FROM claims JOIN entries ON entries.id = entry_id ORDER BY claims.id`, 7)
			if !slices.EqualFunc(after, before, slices.Equal) {
				t.Errorf("claims %v, were %v", after, before)
			}
			for _, r := range read(`SELECT next_check_at, coalesce(unanswered_since, gone_since) IS NULL FROM claims ORDER BY id`, 2) {
				if r[0] != next || (r[1] != "1" && r[1] != "true") {
					t.Errorf("after 0017: next_check_at, no runs = %v, want %s", r, next)
				}
			}
		})
	}
}
