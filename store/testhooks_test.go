package store

import (
	"context"
	"encoding/hex"
	"fmt"
	"testing"
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
