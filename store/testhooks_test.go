package store

import (
	"context"
	"encoding/hex"
	"fmt"
	"testing"
	"time"
)

// What the external test package (store_test) may use of the internal test helpers: the
// backends, and the backdoors a migration test needs.

// BackendForTest is a backend the contract tests run against.
type BackendForTest struct {
	Name string
	// OpenEmpty opens a store on an empty database, not migrated.
	OpenEmpty func(t testing.TB) Store
}

// BackendsForTest returns the registered backends.
func BackendsForTest() []BackendForTest {
	var out []BackendForTest
	for _, b := range testBackends {
		out = append(out, BackendForTest{Name: b.name, OpenEmpty: b.openEmpty})
	}
	return out
}

// MigrateForTest applies s's migrations up to version through (testMigrator).
func MigrateForTest(ctx context.Context, s Store, through int) error {
	return s.(testMigrator).migrateForTest(ctx, through)
}

// ExecForTest runs one statement on s's database (testExecer).
func ExecForTest(ctx context.Context, s Store, query string) error {
	return s.(testExecer).execForTest(ctx, query)
}

// QueryForTest runs one query on s's database and returns its rows, each value as text
// (bytes in hex), for comparing a database before and after a migration.
func QueryForTest(ctx context.Context, s Store, query string, columns int) ([][]string, error) {
	var q querier
	switch x := s.(type) {
	case *pgStore:
		q = x.read
	case *sqliteStore:
		q = x.read
	default:
		return nil, fmt.Errorf("no querier for %T", s)
	}
	return queryAll(ctx, q, func(row rowScanner) ([]string, error) {
		vals := make([]any, columns)
		ptrs := make([]any, columns)
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := row.Scan(ptrs...); err != nil {
			return nil, err
		}
		out := make([]string, columns)
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				out[i] = hex.EncodeToString(b)
			} else {
				out[i] = fmt.Sprint(v)
			}
		}
		return out, nil
	}, query)
}

// InsertEntryForTest adds an entry with the columns of migration 0001 and its due times
// through SetDue, for the migration tests that fill a store of an older schema (AddEntry
// writes the columns of the newest). claimed sets entries.claimed, as an import could
// before migration 0016 (from 0016 on its trigger owns it: claim the entry instead).
func InsertEntryForTest(ctx context.Context, s Store, ne NewEntry, claimed ...bool) (Entry, error) {
	var w querier
	switch x := s.(type) {
	case *pgStore:
		w = x.write
	case *sqliteStore:
		w = x.write
	default:
		return Entry{}, fmt.Errorf("no querier for %T", s)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	d := pgDialect
	if s.Backend() == "sqlite" {
		d = sqliteDialect
	}
	e := Entry{Slug: ne.SlugBase, Kind: ne.Kind, Locator: ne.Locator, Name: ne.Name, Source: ne.Source,
		Claimed: len(claimed) > 0 && claimed[0], Cadence: ne.Cadence, CreatedAt: now, Listed: true}
	err := w.QueryRow(ctx, `INSERT INTO entries (slug, kind, locator, name, source, claimed, cadence_ms, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		e.Slug, e.Kind, e.Locator, e.Name, e.Source, e.Claimed, e.Cadence.Milliseconds(), d.time(now)).Scan(&e.ID)
	if err != nil {
		return Entry{}, err
	}
	for _, du := range ne.Due {
		if err := s.SetDue(ctx, e.ID, DueUpdate{Reason: du.Reason, At: du.At}); err != nil {
			return Entry{}, err
		}
	}
	return e, nil
}

// setTestBeforeDelete sets the hook DeleteEntry runs between deleting an entry's
// remotes and deleting the entry.
func setTestBeforeDelete(s Store, fn func(slug string)) {
	switch x := s.(type) {
	case *pgStore:
		x.testBeforeDelete = fn
	case *sqliteStore:
		x.testBeforeDelete = fn
	}
}
