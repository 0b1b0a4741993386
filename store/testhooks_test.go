package store

import (
	"context"
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
