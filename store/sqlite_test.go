package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/probity-dev/probity/migrations"
)

func init() {
	testBackends = append(testBackends, testBackend{name: "sqlite", open: openTestSQLite, openEmpty: openEmptySQLite})
}

// openEmptySQLite opens a store on a new, empty file in the test's temporary directory.
func openEmptySQLite(t testing.TB) Store {
	t.Helper()
	s, err := Open(t.Context(), Config{SQLitePath: filepath.Join(t.TempDir(), "data", "probity.db")})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// openTestSQLite opens a fresh SQLite store in the test's temporary directory: a copy of
// a migrated database, which Migrate then finds up to date.
func openTestSQLite(t testing.TB) Store {
	t.Helper()
	s, err := Open(t.Context(), Config{SQLitePath: migratedSQLiteFile(t)})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return s
}

// migratedSQLiteFile writes a migrated database file in the test's temporary directory
// and returns its path.
func migratedSQLiteFile(t testing.TB) string {
	t.Helper()
	tmpl, err := migratedSQLite()
	if err != nil {
		t.Fatalf("couldn't make the migrated database: %v", err)
	}
	path := filepath.Join(t.TempDir(), "data", "probity.db")
	if err := os.Mkdir(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, tmpl, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// sqliteTemplate is a freshly migrated database file, made once: copying it takes
// microseconds, migrating (River's migrations above all) a third of a second under -race.
var sqliteTemplate struct {
	once sync.Once
	file []byte
	err  error
}

func migratedSQLite() ([]byte, error) {
	sqliteTemplate.once.Do(func() {
		sqliteTemplate.file, sqliteTemplate.err = makeMigratedSQLite()
	})
	return sqliteTemplate.file, sqliteTemplate.err
}

func makeMigratedSQLite() ([]byte, error) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "probity-store-test-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "template.db")
	s, err := Open(ctx, Config{SQLitePath: path})
	if err != nil {
		return nil, err
	}
	err = errors.Join(
		s.Migrate(ctx),
		// Everything into the main file, so that it alone is the database.
		s.(*sqliteStore).execForTest(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`),
		s.Close(),
	)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

// execForTest runs one statement on the writer connection (testExecer).
func (s *sqliteStore) execForTest(ctx context.Context, query string) error {
	_, err := s.writer.ExecContext(ctx, query)
	return err
}

// migrateForTest applies the migrations up to version through (testMigrator).
func (s *sqliteStore) migrateForTest(ctx context.Context, through int) error {
	ms, err := migrations.List(migrations.SQLite, "sqlite")
	if err != nil {
		return err
	}
	return s.migrate(ctx, migrationsThrough(ms, through))
}

func TestSQLiteOpen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "data")
	st, err := Open(t.Context(), Config{SQLitePath: filepath.Join(dir, "p.db"), MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if fi, err := os.Stat(dir); err != nil {
		t.Error(err)
	} else if fi.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v, want 0700", fi.Mode())
	}
	s := st.(*sqliteStore)
	if s.Backend() != "sqlite" {
		t.Errorf("Backend() = %q", s.Backend())
	}
	ctx := t.Context()
	var mode string
	var fk, busy, synchronous int
	if err := s.writer.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v", mode, err)
	}
	for _, db := range []string{"writer", "reader"} {
		pool := s.writer
		if db == "reader" {
			pool = s.reader
		}
		err := pool.QueryRowContext(ctx, `SELECT (SELECT * FROM pragma_foreign_keys()),
			(SELECT * FROM pragma_busy_timeout()), (SELECT * FROM pragma_synchronous())`).Scan(&fk, &busy, &synchronous)
		if err != nil || fk != 1 || busy != 10000 || synchronous != 1 {
			t.Errorf("%s: foreign_keys %d, busy_timeout %d, synchronous %d, %v", db, fk, busy, synchronous, err)
		}
	}
	if _, err := s.reader.ExecContext(ctx, `CREATE TABLE t (x INTEGER)`); err == nil {
		t.Error("the reader pool accepted a write")
	}
	if n := s.writer.Stats().MaxOpenConnections; n != 1 {
		t.Errorf("writer pool of %d connections", n)
	}
	if n := s.reader.Stats().MaxOpenConnections; n != 2 {
		t.Errorf("reader pool of %d connections, want MaxConns 2", n)
	}

	for _, path := range []string{"", "a.db?mode=ro", "file:a.db", ":memory:"} {
		if s, err := openSQLite(ctx, Config{SQLitePath: path}); err == nil {
			s.Close()
			t.Errorf("openSQLite(%q) accepted", path)
		}
	}
}

func TestSQLiteReopen(t *testing.T) {
	ctx := t.Context()
	path := migratedSQLiteFile(t)
	open := func() Store {
		s, err := Open(ctx, Config{SQLitePath: path})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	e := mustAddEntry(t, s, "acme")
	mustSave(t, s, fullRound(e.ID, t0, t0, "echo"))
	before := takeSnapshot(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	s = open()
	defer s.Close()
	checkUnchanged(t, s, before, "closing and reopening")
}

func TestSQLiteMigrateRefusesForeignHistory(t *testing.T) {
	for name, q := range map[string]string{
		"newer":   `INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, '9999_future.sql', 'x')`,
		"renamed": `UPDATE schema_migrations SET name = '0001_other.sql' WHERE version = 1`,
	} {
		t.Run(name, func(t *testing.T) {
			s := openTestSQLite(t).(*sqliteStore)
			if err := s.execForTest(t.Context(), q); err != nil {
				t.Fatal(err)
			}
			if err := s.Migrate(t.Context()); err == nil {
				t.Error("Migrate accepted a migration history this binary does not have")
			}
		})
	}
}

// The schema refuses what SaveRound never writes, beyond the contract's envelope rule.
func TestSQLiteSchemaGuards(t *testing.T) {
	s := openTestSQLite(t).(*sqliteStore)
	ctx := t.Context()
	e := mustAddEntry(t, s, "acme")
	unsignedID := mustSave(t, s, unsignedRound(e.ID, t0, t0))
	signedID := mustSave(t, s, fullRound(e.ID, t0.Add(time.Hour), t0.Add(time.Hour), "echo"))
	before := takeSnapshot(t, s)
	for _, q := range []string{
		// A record for an unsigned observation; a signed one without its record.
		`UPDATE rounds SET ledger_id = (SELECT max(seq) FROM ledger) WHERE id = ` + itoa(unsignedID),
		`INSERT INTO rounds (entry_id, due_at, reason, round_id, started_at, finished_at, coverage, signed,
			unsigned_reason, reach, http_status, stop, uptime, retry_after_ms, protocol_version, server_name,
			server_version, tool_count, pages)
		 SELECT entry_id, due_at + 1, reason, 'unrecorded', started_at, finished_at, coverage, signed,
			unsigned_reason, reach, http_status, stop, uptime, retry_after_ms, protocol_version, server_name,
			server_version, tool_count, pages FROM rounds WHERE id = ` + itoa(signedID),
		// Changing or deleting a record.
		`UPDATE ledger SET envelope = X'7B7D'`,
		`DELETE FROM ledger`,
		// Flipping a signed flag either way.
		`UPDATE rounds SET signed = 0, coverage = '' WHERE id = ` + itoa(signedID),
		`UPDATE rounds SET signed = 1, coverage = 'full', unsigned_reason = '' WHERE id = ` + itoa(unsignedID),
		// A day whose status contradicts its counts.
		`UPDATE uptime_days SET status = 'online'`,
		// Values outside their domain; a value of the wrong type.
		`UPDATE entries SET kind = 'docker'`,
		`UPDATE entries SET slug = 'Acme'`,
		`UPDATE rounds SET uptime = 'maybe'`,
		`UPDATE entries SET claimed = 'yes'`,
		// An observation of no entry.
		`INSERT INTO rounds (entry_id, due_at, reason, round_id, started_at, finished_at, coverage, signed,
			unsigned_reason, reach, http_status, stop, uptime, retry_after_ms, protocol_version, server_name,
			server_version, tool_count, pages)
		 VALUES (999, 0, 'cadence', 'r', 0, 0, '', 0, 'x', '', 0, '', 'answered', 0, '', '', '', 0, 0)`,
	} {
		if err := s.execForTest(ctx, q); err == nil {
			t.Errorf("schema accepted: %s", q)
		}
	}
	checkUnchanged(t, s, before, "refused statements")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestSQLiteQueueAfterClose(t *testing.T) {
	s := openTestSQLite(t)
	workers := river.NewWorkers()
	river.AddWorker(workers, &testJobWorker{done: make(chan int, 1)})
	cfg := &river.Config{Workers: workers, Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}}}
	if _, err := s.NewQueue(cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := s.NewQueue(nil); err == nil {
		t.Error("NewQueue(nil) accepted")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.NewQueue(cfg); err == nil {
		t.Errorf("NewQueue after Close = %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := s.Entries(ctx, 0, 0); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Entries after Close = %v, want a closed-database error", err)
	}
}

// TestSQLiteDueRebuilt: migration 0003's rebuild of due leaves what 0001 made, with the
// wider reason check: a STRICT, WITHOUT ROWID table with its index, no leftover, and
// foreign keys and pages intact.
func TestSQLiteDueRebuilt(t *testing.T) {
	s := openTestSQLite(t).(*sqliteStore)
	ctx := t.Context()
	var strict, withoutRowid int
	if err := s.reader.QueryRowContext(ctx,
		`SELECT strict, wr FROM pragma_table_list WHERE schema = 'main' AND name = 'due'`).Scan(&strict, &withoutRowid); err != nil {
		t.Fatal(err)
	}
	if strict != 1 || withoutRowid != 1 {
		t.Errorf("due: strict %d, without rowid %d", strict, withoutRowid)
	}
	var indexes int
	if err := s.reader.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'due_at' AND tbl_name = 'due'`).Scan(&indexes); err != nil || indexes != 1 {
		t.Errorf("%d indexes due_at on due, %v", indexes, err)
	}
	var leftovers int
	if err := s.reader.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name LIKE '%due_new%' OR sql LIKE '%due_new%'`).Scan(&leftovers); err != nil || leftovers != 0 {
		t.Errorf("%d schema objects name due_new, %v", leftovers, err)
	}
	var fkViolations int
	if err := s.reader.QueryRowContext(ctx, `SELECT count(*) FROM pragma_foreign_key_check`).Scan(&fkViolations); err != nil || fkViolations != 0 {
		t.Errorf("foreign_key_check: %d violations, %v", fkViolations, err)
	}
	var integrity string
	if err := s.reader.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&integrity); err != nil || integrity != "ok" {
		t.Errorf("integrity_check = %q, %v", integrity, err)
	}
}
