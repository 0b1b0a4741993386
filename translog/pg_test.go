package translog

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/probity-dev/probity/store"
)

// newPostgresStore opens a migrated store on a fresh PostgreSQL database, dropped when
// the test ends. Without PROBITY_TEST_DATABASE_URL the test is skipped, but when CI=true:
// then it uses the local server CI runs (as the store's tests do), and fails when it
// cannot reach it.
func newPostgresStore(t *testing.T) (store.Store, string) {
	t.Helper()
	adminURL := os.Getenv("PROBITY_TEST_DATABASE_URL")
	if adminURL == "" {
		if os.Getenv("CI") != "true" {
			t.Skip("set PROBITY_TEST_DATABASE_URL to run the PostgreSQL tests")
		}
		adminURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	u, err := url.Parse(adminURL)
	if err != nil || !store.IsPostgresURL(adminURL) {
		t.Fatal("PROBITY_TEST_DATABASE_URL is not a postgres:// URL")
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	name := "probity_tl_" + hex.EncodeToString(b[:])
	ident := pgx.Identifier{name}.Sanitize()
	admin := func(ctx context.Context, sql string) {
		t.Helper()
		conn, err := pgx.Connect(ctx, adminURL)
		if err != nil {
			t.Fatalf("couldn't connect to the test server: %v", err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	admin(t.Context(), `CREATE DATABASE `+ident)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		admin(ctx, `DROP DATABASE IF EXISTS `+ident+` WITH (FORCE)`)
	})
	u.Path = "/" + name
	open := func() store.Store {
		s, err := store.Open(t.Context(), store.Config{DatabaseURL: u.String()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	s := open()
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s, u.String()
}

// TestPostgresOneAppender: two processes sharing a PostgreSQL database but not a disk
// (two stores, two log directories) cannot both append: the second Open gets
// ErrNotAppender from the store's advisory lock, and opens once the first is closed.
// The log follows the PostgreSQL ledger as it does SQLite's.
func TestPostgresOneAppender(t *testing.T) {
	s1, dbURL := newPostgresStore(t)
	s2, err := store.Open(t.Context(), store.Config{DatabaseURL: dbURL})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	signer, verifier := newLogKey(t)
	tmp := t.TempDir()
	w := newWriter(t, s1)
	w.mustSupply(t, w.mustEntry(t, "acme"), 5)
	if err := s1.DeleteEntry(t.Context(), "acme", "removed"); err != nil {
		t.Fatal(err)
	}
	w.mustSupply(t, w.mustEntry(t, "beta"), 3)

	cfg1 := Config{Dir: filepath.Join(tmp, "one"), Signer: signer, CheckpointInterval: MinCheckpointInterval}
	l1, err := Open(t.Context(), cfg1, s1)
	if err != nil {
		t.Fatal(err)
	}
	cfg2 := Config{Dir: filepath.Join(tmp, "two"), Signer: signer, CheckpointInterval: MinCheckpointInterval}
	if _, err := Open(t.Context(), cfg2, s2); !errors.Is(err, ErrNotAppender) {
		t.Fatalf("second appender on the same database: %v, want ErrNotAppender", err)
	}
	if n := mustSync(t, l1); n != 9 {
		t.Fatalf("Sync = %d, want 9", n)
	}
	checkLogMatchesLedger(t, cfg1.Dir, s1, verifier)
	for _, r := range ledgerRecords(t, s1) {
		b, err := Bundle(t.Context(), cfg1.Dir, s2, r) // any process reads bundles
		if err != nil {
			t.Fatal(err)
		}
		verifyBundle(t, b, verifier)
	}
	if err := l1.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	l1Again := mustOpen(t, cfg1, s2) // the other process takes over (same disk here)
	mustSync(t, l1Again)
}

// TestPostgresLockLost: when the server ends the session holding the appender's lock (a
// restart, a network cut), Run stops with ErrNotAppender instead of appending while
// another process may take the lock.
func TestPostgresLockLost(t *testing.T) {
	defer func(d time.Duration) { lockCheckInterval = d }(lockCheckInterval)
	lockCheckInterval = 20 * time.Millisecond
	s, dbURL := newPostgresStore(t)
	signer, _ := newLogKey(t)
	l := mustOpen(t, Config{Dir: filepath.Join(t.TempDir(), "log"), Signer: signer, CheckpointInterval: MinCheckpointInterval}, s)
	defer l.Close(context.WithoutCancel(t.Context()))
	done := make(chan error, 1)
	go func() { done <- l.Run(t.Context()) }()

	conn, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.WithoutCancel(t.Context()))
	if _, err := conn.Exec(t.Context(), `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2 AND pid <> pg_backend_pid() AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotAppender) {
			t.Fatalf("Run = %v, want ErrNotAppender", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Run went on appending after its lock was lost")
	}
}
