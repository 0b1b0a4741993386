package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river"

	"github.com/probity-dev/probity/migrations"
)

func init() {
	testBackends = append(testBackends, testBackend{name: "postgres", open: openTestPostgres, openEmpty: openEmptyPostgres})
}

// openEmptyPostgres opens a store on a fresh, empty database of its own.
func openEmptyPostgres(t testing.TB) Store {
	t.Helper()
	return openTestPostgresAt(t, newTestDatabase(t), 0)
}

// ciDatabaseURL is the server CI starts (.ci/run) when PROBITY_TEST_DATABASE_URL is unset.
const ciDatabaseURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// testPostgresURL is the URL of the server the PostgreSQL tests use, from
// PROBITY_TEST_DATABASE_URL; under CI (CI=true) it defaults to ciDatabaseURL, elsewhere
// the tests are skipped without it. Its database is used only to create and drop the
// tests' own databases.
func testPostgresURL(t testing.TB) string {
	t.Helper()
	if u := os.Getenv("PROBITY_TEST_DATABASE_URL"); u != "" {
		return u
	}
	if os.Getenv("CI") == "true" {
		return ciDatabaseURL
	}
	t.Skip("set PROBITY_TEST_DATABASE_URL to run the PostgreSQL contract tests")
	return ""
}

// newTestDatabase creates an empty database for the test, named probity_t_ and random
// hex, and drops it when the test ends; it returns the URL of the new database. A server
// that cannot be reached fails the test: once a URL is given (or CI runs) the tests
// never skip.
func newTestDatabase(t testing.TB) string {
	t.Helper()
	adminURL := testPostgresURL(t)
	u, err := url.Parse(adminURL)
	if err != nil || !IsPostgresURL(adminURL) {
		t.Fatal("PROBITY_TEST_DATABASE_URL is not a postgres:// URL")
	}
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails
	name := "probity_t_" + hex.EncodeToString(b[:])
	// The name is built from hex digits only; Sanitize quotes it all the same.
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
	return u.String()
}

// openTestPostgresAt opens a store on dbURL and closes it when the test ends.
func openTestPostgresAt(t testing.TB, dbURL string, maxConns int) Store {
	t.Helper()
	s, err := Open(t.Context(), Config{DatabaseURL: dbURL, MaxConns: maxConns})
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

// openTestPostgres opens and migrates a store on a fresh database of its own.
func openTestPostgres(t testing.TB) Store {
	t.Helper()
	s := openTestPostgresAt(t, newTestDatabase(t), 0)
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return s
}

// execForTest runs one statement on a pooled connection (testExecer).
func (s *pgStore) execForTest(ctx context.Context, query string) error {
	_, err := s.pool.Exec(ctx, query)
	return err
}

// migrateForTest applies the migrations up to version through (testMigrator).
func (s *pgStore) migrateForTest(ctx context.Context, through int) error {
	ms, err := migrations.List(migrations.Postgres, "postgres")
	if err != nil {
		return err
	}
	return s.migrate(ctx, migrationsThrough(ms, through), nil)
}

// TestPostgresTwoProcesses runs two stores, each with its own pool as two processes
// would have, on one database: they migrate at the same time, then race to add the same
// entries and to save the same rounds.
func TestPostgresTwoProcesses(t *testing.T) {
	dbURL := newTestDatabase(t)
	// One store has a single connection: Migrate must not need a second from its pool.
	stores := []Store{openTestPostgresAt(t, dbURL, 0), openTestPostgresAt(t, dbURL, 1), openTestPostgresAt(t, dbURL, 4)}
	ctx := t.Context()

	race := func(n int, fn func(i int, s Store) error) []error {
		t.Helper()
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { errs[i] = fn(i, stores[i%len(stores)]) })
		}
		wg.Wait()
		return errs
	}

	for i, err := range race(len(stores), func(_ int, s Store) error { return s.Migrate(ctx) }) {
		if err != nil {
			t.Fatalf("concurrent Migrate #%d: %v", i, err)
		}
	}
	var versions int
	err := stores[0].(*pgStore).pool.QueryRow(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&versions)
	if err != nil || versions == 0 {
		t.Fatalf("schema_migrations: %d rows, %v", versions, err)
	}

	// The same locator from every process: one entry. Other locators with one slug
	// base: distinct slugs.
	var (
		mu      sync.Mutex
		created int
	)
	for _, err := range race(6, func(_ int, s Store) error {
		_, c, err := s.AddEntry(ctx, newTestEntry("same"))
		if c {
			mu.Lock()
			created++
			mu.Unlock()
		}
		return err
	}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if created != 1 {
		t.Errorf("the same entry was created %d times", created)
	}
	slugs := map[string]bool{}
	for _, err := range race(6, func(i int, s Store) error {
		ne := newTestEntry("base")
		ne.Locator = fmt.Sprintf("https://base%d.example.com/mcp", i)
		e, c, err := s.AddEntry(ctx, ne)
		if err == nil && !c {
			err = fmt.Errorf("AddEntry(%s) found an existing entry %s", ne.Locator, e.Slug)
		}
		return err
	}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	es, err := stores[1].Entries(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		slugs[e.Slug] = true
	}
	want := []string{"same", "base", "base-2", "base-3", "base-4", "base-5", "base-6"}
	if len(es) != len(want) {
		t.Errorf("%d entries, want %d: %v", len(es), len(want), slugs)
	}
	for _, s := range want {
		if !slugs[s] {
			t.Errorf("no entry %q among %v", s, slugs)
		}
	}
	e, err := stores[2].Entry(ctx, "same")
	if err != nil {
		t.Fatal(err)
	}

	// Every process saves every round, with attempts started beside them: each round
	// is stored exactly once, and everything else gets ErrRoundDone.
	const dues, racers = 12, 9
	for d := range dues {
		due := t0.Add(time.Duration(d) * time.Hour)
		stored := 0
		errs := race(racers, func(i int, s Store) error {
			if i%3 == 2 {
				_, err := s.StartAttempt(ctx, e.ID, due, due)
				if errors.Is(err, ErrRoundDone) {
					err = nil
				}
				return err
			}
			r := fullRound(e.ID, due, due.Add(time.Duration(i)*time.Millisecond), fmt.Sprintf("tool%d", i))
			if i%2 == 1 {
				r = unsignedRound(e.ID, due, due.Add(time.Duration(i)*time.Millisecond))
			}
			r.Due = []DueUpdate{{Reason: ReasonCadence, At: due.Add(time.Hour)}}
			_, err := s.SaveRound(ctx, r)
			if err == nil {
				mu.Lock()
				stored++
				mu.Unlock()
			}
			if errors.Is(err, ErrRoundDone) {
				err = nil
			}
			return err
		})
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("due %d: %v", d, err)
		}
		if stored != 1 {
			t.Errorf("due %d: stored %d times, want once", d, stored)
		}
		if _, err := stores[d%len(stores)].StartAttempt(ctx, e.ID, due, due); !errors.Is(err, ErrRoundDone) {
			t.Errorf("due %d: StartAttempt after the race = %v, want ErrRoundDone", d, err)
		}
	}

	rs, err := stores[0].Rounds(ctx, e.ID, 0)
	if err != nil || len(rs) != dues {
		t.Fatalf("%d rounds, %v; want %d", len(rs), err, dues)
	}
	var answered, noAnswer int
	for _, r := range rs {
		if r.Uptime == UptimeAnswered {
			answered++
		} else {
			noAnswer++
		}
	}
	days, err := stores[1].UptimeDays(ctx, e.ID, "2026-11-30", "2026-12-01")
	var gotAnswered, gotNoAnswer int
	for _, d := range days {
		gotAnswered += d.Answered
		gotNoAnswer += d.NoAnswer
	}
	if err != nil || gotAnswered != answered || gotNoAnswer != noAnswer {
		t.Errorf("uptime days %+v, %v; the rounds say %d answered, %d no answer", days, err, answered, noAnswer)
	}
	if ds, _ := stores[2].DueTimes(ctx, e.ID); len(ds) != 1 || !ds[0].At.Equal(ms(t0.Add(dues*time.Hour))) {
		t.Errorf("due times %+v", ds)
	}

	// Different rounds of one entry at once, from every process: no count is lost.
	burst := mustAddEntry(t, stores[0], "burst")
	const burstRounds = 30
	errs := race(burstRounds, func(i int, s Store) error {
		due := t0.Add(time.Duration(i) * time.Minute)
		r := unsignedRound(burst.ID, due, due)
		r.Uptime = []UptimeClass{UptimeAnswered, UptimeInconclusive, UptimeNoAnswer}[i%3]
		if i%3 == 0 {
			r = fullRound(burst.ID, due, due, fmt.Sprintf("tool%d", i))
		}
		_, err := s.SaveRound(ctx, r)
		return err
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	days, err = stores[2].UptimeDays(ctx, burst.ID, "2026-11-30", "2026-11-30")
	if err != nil || len(days) != 1 || days[0] != (UptimeDay{"2026-11-30", burstRounds / 3, burstRounds / 3, burstRounds / 3, DayOffline}) {
		t.Errorf("burst uptime = %+v, %v", days, err)
	}
	got, err := stores[1].EntryByID(ctx, burst.ID)
	_, newest := testSurface(fmt.Sprintf("tool%d", burstRounds-3))
	if err != nil || !got.LastRoundAt.Equal(ms(t0.Add((burstRounds-1)*time.Minute))) ||
		got.LastSurface != newest.Surface || got.UptimeOnlineDays != 0 || got.UptimeCountedDays != 1 {
		t.Errorf("burst entry = %+v, %v", got, err)
	}
	checkSignedInvariant(t, stores[0])
}

// TestPostgresSchemaGuards shows the schema itself refusing what no method does, with
// the SQLSTATE of the refusal.
func TestPostgresSchemaGuards(t *testing.T) {
	s := openTestPostgres(t).(*pgStore)
	ctx := t.Context()
	e := mustAddEntry(t, s, "acme")
	signedID := mustSave(t, s, fullRound(e.ID, t0, t0, "echo"))
	unsignedID := mustSave(t, s, unsignedRound(e.ID, t0.Add(time.Hour), t0.Add(time.Hour)))
	before := takeSnapshot(t, s)

	for _, c := range []struct {
		sql, code string
	}{
		{`UPDATE ledger SET key_id = 'forged'`, "23000"},
		{`UPDATE ledger SET envelope = envelope`, "23000"},
		{`UPDATE ledger SET seq = seq`, "23000"},
		{`TRUNCATE ledger CASCADE`, "23000"},
		{`DELETE FROM ledger`, "23000"},
		{`UPDATE rounds SET signed = NOT signed WHERE id = ` + fmt.Sprint(signedID), "23000"},
		// A record for an unsigned observation.
		{`UPDATE rounds SET ledger_id = (SELECT max(seq) FROM ledger) WHERE id = ` + fmt.Sprint(unsignedID), "23000"},
		{`INSERT INTO rounds (entry_id, due_at, reason, round_id, started_at, finished_at, coverage,
		  signed, unsigned_reason, reach, http_status, stop, uptime, retry_after_ms, protocol_version,
		  server_name, server_version, tool_count, pages)
		  SELECT entry_id, due_at + interval '1 day', reason, 'unrecorded', started_at, finished_at, coverage, signed,
		  unsigned_reason, reach, http_status, stop, uptime, retry_after_ms, protocol_version,
		  server_name, server_version, tool_count, pages FROM rounds WHERE id = ` + fmt.Sprint(signedID), "23514"},
		{`UPDATE rounds SET coverage = '' WHERE id = ` + fmt.Sprint(signedID), "23514"},
		// A second observation of one (entry, due time): the constraint SaveRound maps to
		// ErrRoundDone, by name.
		{`INSERT INTO rounds (entry_id, due_at, reason, round_id, started_at, finished_at, coverage,
		  signed, unsigned_reason, reach, http_status, stop, uptime, retry_after_ms, protocol_version,
		  server_name, server_version, tool_count, pages)
		  SELECT entry_id, due_at, reason, 'again', started_at, finished_at, coverage, signed,
		  unsigned_reason, reach, http_status, stop, uptime, retry_after_ms, protocol_version,
		  server_name, server_version, tool_count, pages FROM rounds WHERE id = ` + fmt.Sprint(unsignedID), "23505"},
		{`UPDATE uptime_days SET status = 'online'`, "23514"},
		{`UPDATE entries SET slug = 'Acme'`, "23514"},
	} {
		err := s.execForTest(ctx, c.sql)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != c.code {
			t.Errorf("%s: %v, want SQLSTATE %s", c.sql, err, c.code)
		}
		if c.code == "23505" && !isPgViolation(err, pgRoundConstraint) {
			t.Errorf("%s: %v, want a violation of %s", c.sql, err, pgRoundConstraint)
		}
	}
	checkUnchanged(t, s, before, "refused statements")

	// Deleting the entry deletes its records: DeleteEntry records them in a tombstone.
	if err := s.DeleteEntry(ctx, "acme", "removed by its operator"); err != nil {
		t.Fatalf("DeleteEntry: %v", err)
	}
	if st, err := s.Stats(ctx); err != nil || st.Envelopes != 0 || st.Rounds != 0 || st.Surfaces != 1 {
		t.Errorf("after DeleteEntry: %+v, %v", st, err)
	}
}

// TestPostgresDueReasonCheck: migration 0003 replaced due's reason check; the old one
// is gone, not left beside it.
func TestPostgresDueReasonCheck(t *testing.T) {
	s := openTestPostgres(t).(*pgStore)
	rows, err := s.pool.Query(t.Context(), `
		SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint
		WHERE conrelid = 'due'::regclass AND contype = 'c'`)
	if err != nil {
		t.Fatal(err)
	}
	checks, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ Name, Def string }])
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != 1 || checks[0].Name != "due_reason_check" || !strings.Contains(checks[0].Def, "'supply'") {
		t.Errorf("due's check constraints: %+v", checks)
	}
}

// TestPostgresOpenHidesPassword: errors from Open never carry the URL's password.
func TestPostgresOpenHidesPassword(t *testing.T) {
	for _, u := range []string{
		"postgres://probity:s3cr3t-pw@127.0.0.1:1/probity?sslmode=disable&connect_timeout=2",
		"postgres://probity:s3cr3t-pw@127.0.0.1:99999/probity",
		"postgresql://probity:s3cr3t-pw@[::1/probity",
		"postgres://probity:s3cr3t-pw@127.0.0.1/probity?sslmode=sometimes",
	} {
		s, err := Open(t.Context(), Config{DatabaseURL: u})
		if err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", u)
			continue
		}
		if strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("Open error shows the password: %v", err)
		}
	}
}

func TestPostgresMigrateRefusesForeignHistory(t *testing.T) {
	for name, q := range map[string]string{
		"newer":   `INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, '9999_future.sql', now())`,
		"renamed": `UPDATE schema_migrations SET name = '0001_other.sql' WHERE version = 1`,
	} {
		t.Run(name, func(t *testing.T) {
			s := openTestPostgres(t).(*pgStore)
			if err := s.execForTest(t.Context(), q); err != nil {
				t.Fatal(err)
			}
			if err := s.Migrate(t.Context()); err == nil {
				t.Error("Migrate accepted a migration history this binary does not have")
			}
		})
	}
}

func TestPostgresReopenAndClose(t *testing.T) {
	dbURL := newTestDatabase(t)
	ctx := t.Context()
	s, err := Open(ctx, Config{DatabaseURL: dbURL})
	if err != nil {
		t.Fatal(err)
	}
	if s.Backend() != "postgres" {
		t.Errorf("Backend() = %q", s.Backend())
	}
	if n := s.(*pgStore).pool.Config().MaxConns; n != defaultPostgresConns {
		t.Errorf("pool of %d connections, want %d", n, defaultPostgresConns)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	e := mustAddEntry(t, s, "acme")
	mustSave(t, s, fullRound(e.ID, t0, t0, "echo"))
	before := takeSnapshot(t, s)

	workers := river.NewWorkers()
	river.AddWorker(workers, &testJobWorker{done: make(chan int, 1)})
	cfg := &river.Config{Workers: workers, Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}}}
	if _, err := s.NewQueue(cfg); err != nil {
		t.Fatal(err)
	}
	if q, err := s.NewQueue(nil); err == nil || q != nil {
		t.Errorf("NewQueue(nil) = %v, %v", q, err)
	}
	for range 2 {
		if err := s.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	if _, err := s.NewQueue(cfg); err == nil {
		t.Error("NewQueue after Close accepted")
	}
	if _, err := s.Entries(ctx, 0, 0); err == nil {
		t.Error("Entries after Close succeeded")
	}

	s2 := openTestPostgresAt(t, dbURL, 2)
	if err := s2.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	checkUnchanged(t, s2, before, "closing and reopening")
}

// BenchmarkPostgresSaveRound stores signed full rounds of 64 entries from parallel
// goroutines: go test -run '^$' -bench PostgresSaveRound ./store
func BenchmarkPostgresSaveRound(b *testing.B) {
	s := openTestPostgresAt(b, newTestDatabase(b), 0)
	ctx := b.Context()
	if err := s.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	const entries = 64
	ids := make([]int64, entries)
	for i := range ids {
		e, _, err := s.AddEntry(ctx, newTestEntry(fmt.Sprintf("bench%d", i)))
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = e.ID
	}
	var next atomic.Int64
	b.SetParallelism(8) // 8 × GOMAXPROCS goroutines, half the pool per core
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := next.Add(1)
			due := t0.Add(time.Duration(n) * time.Minute)
			r := fullRound(ids[n%entries], due, due, fmt.Sprintf("tool%d", n%7))
			r.Due = []DueUpdate{{Reason: ReasonCadence, At: due.Add(time.Hour)}}
			if _, err := s.SaveRound(ctx, r); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// TestPostgresParallelPlans: the pool plans no parallel pages unless the URL asks for
// them, as a parameter of its own or in options (which a startup parameter of the
// store's would override).
func TestPostgresParallelPlans(t *testing.T) {
	dbURL := newTestDatabase(t)
	workers := func(u string) string {
		t.Helper()
		s := openTestPostgresAt(t, u, 1)
		var v string
		if err := s.(*pgStore).pool.QueryRow(t.Context(), `SHOW max_parallel_workers_per_gather`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := workers(dbURL); v != "0" {
		t.Errorf("by default max_parallel_workers_per_gather = %s, want 0", v)
	}
	for _, p := range [][2]string{
		{"max_parallel_workers_per_gather", "3"},
		{"options", "-c max_parallel_workers_per_gather=3"},
	} {
		u, err := url.Parse(dbURL)
		if err != nil {
			t.Fatal(err)
		}
		// %20, not +, for a space: pgx reads + as itself.
		u.RawQuery += "&" + p[0] + "=" + strings.ReplaceAll(url.QueryEscape(p[1]), "+", "%20")
		if v := workers(u.String()); v != "3" {
			t.Errorf("with %s=%q: max_parallel_workers_per_gather = %s, want 3", p[0], p[1], v)
		}
	}
}
