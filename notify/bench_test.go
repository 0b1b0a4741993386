package notify

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/history/diff"
	"github.com/probity-dev/probity/store"
)

// The planning benchmark of issue 17: 100,000 accounts following 200 entries each (20
// million follows over 10,000 entries), after a round in which 2,000 entries changed
// (one tools change each, recorded after every follow began): planning must take at
// most 10 s on SQLite and on PostgreSQL. Every account follows about 40 changed entries,
// so every account gets an e-mail: 100,000 outbox rows.
//
// The data is built once (a few minutes) and kept: on PostgreSQL in the database
// probity_bench_notify_v1 of PROBITY_TEST_DATABASE_URL's server, on SQLite in
// $PROBITY_NOTIFY_BENCH_DIR (default $TMPDIR/probity-notifybench). Each iteration
// starts from the same state (the outbox emptied and the settings reset, untimed):
//
//	PROBITY_TEST_DATABASE_URL='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable' \
//	  go test ./notify -run X -bench Plan -benchtime 5x -timeout 60m
const (
	benchAccounts = 100_000
	benchFollows  = 200
	benchEntries  = 10_000
	benchChanged  = 2_000
	benchVersion  = 2 // bump when the built data changes (2: the changes are signed, as planning needs)
	// benchPlanTimeout bounds one planning step: the benchmark cannot run for ever.
	benchPlanTimeout = 2 * time.Minute
)

// benchChangedAt is when the 2,000 changes are recorded; the follows began 30 days
// before, and planning runs 10 minutes after.
var benchChangedAt = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func BenchmarkPlan(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		dir := os.Getenv("PROBITY_NOTIFY_BENCH_DIR")
		if dir == "" {
			dir = filepath.Join(os.TempDir(), "probity-notifybench")
		}
		st, db := openSQLiteBench(b, dir)
		benchPlan(b, st, nil, func(ctx context.Context, q string) error { _, err := db.ExecContext(ctx, q); return err })
	})
	b.Run("postgres", func(b *testing.B) {
		st, conn := openPostgresBench(b)
		// The reset leaves 100,000 dead rows each time: vacuumed, so that every
		// iteration starts from the same state.
		benchPlan(b, st, []string{`VACUUM ANALYZE outbox, notify_settings`},
			func(ctx context.Context, q string) error { _, err := conn.Exec(ctx, q); return err })
	})
}

// benchPlan measures Plan; exec resets the outbox and settings between iterations,
// then runs the backend's after statements.
func benchPlan(b *testing.B, st store.Store, after []string, exec func(context.Context, string) error) {
	ctx := context.Background()
	var times []time.Duration
	for b.Loop() {
		b.StopTimer()
		for _, q := range append([]string{`DELETE FROM outbox`, `UPDATE notify_settings SET last_email_at = NULL, covered_through = NULL, covered_seq = NULL`}, after...) {
			if err := exec(ctx, q); err != nil {
				b.Fatal(err)
			}
		}
		now := benchChangedAt.Add(10 * time.Minute)
		svc, err := New(Config{Store: st, BaseURL: "https://probity.test", Key: testKey, Now: func() time.Time { return now }})
		if err != nil {
			b.Fatal(err)
		}
		pctx, cancel := context.WithTimeout(ctx, benchPlanTimeout)
		b.StartTimer()
		began := time.Now()
		rep, err := svc.Plan(pctx)
		took := time.Since(began)
		b.StopTimer()
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		if rep.Hourly != benchAccounts || rep.Windows != benchChanged {
			b.Fatalf("planned %d e-mails over %d windows, want %d over %d", rep.Hourly, rep.Windows, benchAccounts, benchChanged)
		}
		times = append(times, took)
		b.StartTimer()
	}
	slices.Sort(times)
	med := times[len(times)/2]
	b.ReportMetric(med.Seconds(), "s/plan-median")
	b.Logf("%s: planning %d e-mails: median %v of %v", st.Backend(), benchAccounts, med.Round(time.Millisecond), times)
	if med > 10*time.Second {
		b.Errorf("median planning time %v exceeds 10 s", med)
	}
}

// benchDetails is the stored details of each benchmark change: two tools added, one
// removed.
func benchDetails(b *testing.B) []byte {
	d, err := history.EncodeChangeDetails(&history.ChangeDetails{Diff: &diff.Change{
		Added: []diff.ToolRef{{Name: "x"}, {Name: "y"}}, Removed: []diff.ToolRef{{Name: "z"}}}})
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// addBenchEntries adds the entries and the changes of benchChanged of them, through the
// store.
func addBenchEntries(b *testing.B, st store.Store) {
	ctx := context.Background()
	details := benchDetails(b)
	for i := 1; i <= benchEntries; i++ {
		e, _, err := st.AddEntry(ctx, store.NewEntry{SlugBase: fmt.Sprintf("bench-%05d", i), Kind: store.KindRemote,
			Locator: fmt.Sprintf("https://bench-%05d.example.com/mcp", i), Name: fmt.Sprintf("Bench %05d", i), Source: "import"})
		if err != nil {
			b.Fatal(err)
		}
		if e.ID != int64(i) {
			b.Fatalf("entry %d has id %d: the build needs a fresh database", i, e.ID)
		}
		if i%(benchEntries/benchChanged) != 0 {
			continue
		}
		if err := st.SaveHistory(ctx, store.HistoryUpdate{EntryID: e.ID, State: []byte(`{"nextNumber":2}`), Changes: []store.ChangeRecord{{
			EntryID: e.ID, Number: 1, RecordedAt: benchChangedAt, Origin: attest.OriginAutomatic, Kind: attest.ChangeTools,
			Summary: "2 tools added, 1 removed", Details: details, Badges: []string{},
			Envelope: testEnvelope(fmt.Sprintf(`{"bench":%d}`, i)), KeyID: "a050837d85070582",
		}}}); err != nil {
			b.Fatal(err)
		}
	}
}

// The follows of account a: entries ((a·37 + k·49) mod E) + 1 for k < 200, distinct
// because 49 is invertible modulo 10,000.

func openSQLiteBench(b *testing.B, dir string) (store.Store, *sql.DB) {
	ctx := context.Background()
	path := filepath.Join(dir, fmt.Sprintf("notify-v%d.db", benchVersion))
	open := func() (store.Store, *sql.DB) {
		st, err := store.Open(ctx, store.Config{SQLitePath: path})
		if err != nil {
			b.Fatal(err)
		}
		if err := st.Migrate(ctx); err != nil {
			b.Fatal(err)
		}
		db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(60000)&_pragma=foreign_keys(0)")
		if err != nil {
			b.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		b.Cleanup(func() { db.Close(); st.Close() })
		return st, db
	}
	if _, err := os.Stat(path + ".done"); err == nil {
		return open()
	}
	b.Logf("building %s (once; a few minutes)", path)
	began := time.Now()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		os.Remove(p)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	st, db := open()
	addBenchEntries(b, st)
	followedAt := benchChangedAt.Add(-30 * 24 * time.Hour).UnixMilli()
	for _, q := range []string{
		`DROP TRIGGER follows_count_insert`,
		`DROP INDEX follows_entry`,
		fmt.Sprintf(`INSERT INTO accounts (email, email_key, created_at)
			WITH RECURSIVE g(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM g WHERE x < %d)
			SELECT 'u' || x || '@example.com', 'u' || x || '@example.com', %d FROM g`, benchAccounts, followedAt),
		fmt.Sprintf(`INSERT INTO follows (account_id, entry_id, created_at)
			WITH RECURSIVE g(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM g WHERE x < %d),
			k(y) AS (SELECT 0 UNION ALL SELECT y + 1 FROM k WHERE y < %d)
			SELECT g.x, ((g.x * 37 + k.y * 49) %% %d) + 1, %d FROM g CROSS JOIN k`,
			benchAccounts, benchFollows-1, benchEntries, followedAt),
		`CREATE INDEX follows_entry ON follows (entry_id, account_id, created_at)`,
		`CREATE TRIGGER follows_count_insert
		AFTER INSERT ON follows
		BEGIN
			UPDATE notify_settings SET follows = follows + 1 WHERE account_id = NEW.account_id;
		END`,
		fmt.Sprintf(`UPDATE notify_settings SET follows = %d`, benchFollows),
		`ANALYZE`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	if err := os.WriteFile(path+".done", nil, 0o600); err != nil {
		b.Fatal(err)
	}
	b.Logf("built in %v", time.Since(began).Round(time.Second))
	return st, db
}

func openPostgresBench(b *testing.B) (store.Store, *pgx.Conn) {
	admin := testAdminURL()
	if admin == "" {
		b.Skip("set PROBITY_TEST_DATABASE_URL to run against PostgreSQL")
	}
	ctx := context.Background()
	name := fmt.Sprintf("probity_bench_notify_v%d", benchVersion)
	u, err := url.Parse(admin)
	if err != nil {
		b.Fatal(err)
	}
	u.Path = "/" + name
	dsn := u.String()
	open := func() (store.Store, *pgx.Conn) {
		st, err := store.Open(ctx, store.Config{DatabaseURL: dsn})
		if err != nil {
			b.Fatal(err)
		}
		if err := st.Migrate(ctx); err != nil {
			b.Fatal(err)
		}
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { conn.Close(context.Background()); st.Close() })
		return st, conn
	}
	// The database is complete when it holds the marker the build writes last.
	if conn, err := pgx.Connect(ctx, dsn); err == nil {
		var done bool
		err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_tables WHERE tablename = 'bench_done')`).Scan(&done)
		conn.Close(ctx)
		if err == nil && done {
			return open()
		}
	}
	b.Logf("building %s (once; a few minutes)", name)
	began := time.Now()
	if err := adminExec(ctx, admin, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		b.Fatal(err)
	}
	if err := adminExec(ctx, admin, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		b.Fatal(err)
	}
	st, conn := open()
	addBenchEntries(b, st)
	followedAt := benchChangedAt.Add(-30 * 24 * time.Hour)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{fmt.Sprintf(`INSERT INTO accounts (email, email_key, created_at)
			SELECT 'u' || x || '@example.com', 'u' || x || '@example.com', $1 FROM generate_series(1, %d) x`, benchAccounts), []any{followedAt}},
		// Bulk load without the counting trigger and the foreign-key checks (this
		// session only); the counts are set after.
		{`SET session_replication_role = replica`, nil},
		{`DROP INDEX follows_entry`, nil},
		{fmt.Sprintf(`INSERT INTO follows (account_id, entry_id, created_at)
			SELECT a, ((a * 37 + k * 49) %% %d) + 1, $1 FROM generate_series(1, %d) a, generate_series(0, %d) k`,
			benchEntries, benchAccounts, benchFollows-1), []any{followedAt}},
		{`CREATE INDEX follows_entry ON follows (entry_id, account_id, created_at)`, nil},
		{`SET session_replication_role = DEFAULT`, nil},
		{fmt.Sprintf(`UPDATE notify_settings SET follows = %d`, benchFollows), nil},
		{`VACUUM ANALYZE`, nil},
		{`CREATE TABLE bench_done ()`, nil},
	} {
		if _, err := conn.Exec(ctx, q.sql, q.args...); err != nil {
			b.Fatalf("%s: %v", q.sql, err)
		}
	}
	b.Logf("built in %v", time.Since(began).Round(time.Second))
	return st, conn
}
