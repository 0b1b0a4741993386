package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/probity-dev/probity/migrations"
)

// defaultPostgresConns is the size of the pool when Config.MaxConns is 0.
const defaultPostgresConns = 16

// Probity's advisory locks use the two-int4 form, pg_advisory_lock(pgLockClass, n),
// whose key space is apart from the single-bigint keys River hashes its locks into.
const (
	pgLockClass    int32 = 0x50524f42 // "PROB"
	pgLockMigrate  int32 = 1          // session lock: one process migrates at a time
	pgLockAddEntry int32 = 2          // transaction lock: AddEntry's slug choice
)

// pgRoundConstraint is the UNIQUE (entry_id, due_at) constraint of rounds; its
// violation means the round is already stored.
const pgRoundConstraint = "rounds_entry_due"

// pgStore is the PostgreSQL backend: a pgxpool and raw, parameterized SQL.
//
// Transactions run at READ COMMITTED. Writes that depend on what an entry already has
// (SaveRound, StartAttempt) first lock the entry's row (SELECT … FOR NO KEY UPDATE), so
// they are serialized per entry across every process, while rows referencing the entry
// (due times, say) can still be written beside them; the statements after the lock see
// what the previous holder committed. AddEntry is serialized by an advisory lock, as its
// slug depends on every other slug.
//
// Times are timestamptz, truncated to milliseconds before they are written and returned
// in UTC; NULL stands for a zero time where zero means "none" (Entry.LastRoundAt,
// Run.FinishedAt).
type pgStore struct {
	sqlStore
	pool   *pgxpool.Pool
	log    *slog.Logger
	now    func() time.Time
	closed atomic.Bool
	// logLockConn is the connection holding the log appender's lock (TryLogLock), nil
	// when none is; logLock guards it (a pgx.Conn serves one goroutine at a time).
	logLock     sync.Mutex
	logLockConn *pgx.Conn
}

// openPostgres opens a pool on cfg.DatabaseURL and checks that it connects.
func openPostgres(ctx context.Context, cfg Config) (Store, error) {
	poolCfg, err := pgxpool.ParseConfig(cfg.DatabaseURL)
	if err != nil {
		// pgx's parse errors quote the URL with the password redacted only on a best
		// effort basis, so none of it is repeated here.
		return nil, errors.New("couldn't open the PostgreSQL store: DATABASE_URL is not a valid PostgreSQL URL")
	}
	conns := cfg.MaxConns
	if conns <= 0 {
		conns = defaultPostgresConns
	}
	poolCfg.MaxConns = int32(min(conns, math.MaxInt32))
	// No parallel plans (unless the URL asks for them, as a parameter of its own or in
	// options): the store's queries are keyset pages and point reads, and for a page of
	// WalkRounds the planner picked a Gather Merge whose workers took 70 ms to start, 150
	// ms a page instead of 25 (BenchmarkWalkRounds: 0.85 s at 0cdb884, 6 s with parallel
	// pages). A worker's start-up costs more than any of these queries. A startup
	// parameter overrides options' -c settings, so both are looked at.
	params := poolCfg.ConnConfig.RuntimeParams
	if _, set := params["max_parallel_workers_per_gather"]; !set &&
		!strings.Contains(params["options"], "max_parallel_workers_per_gather") {
		params["max_parallel_workers_per_gather"] = "0"
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}

	pool, err := pgxpool.NewWithConfig(ctx, poolCfg)
	if err != nil {
		return nil, fmt.Errorf("couldn't open the PostgreSQL store: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		// pgconn's connect errors name the user, database and host, never the password.
		return nil, fmt.Errorf("couldn't connect to PostgreSQL: %w", err)
	}
	q := newPgQuerier(pool)
	s := &pgStore{sqlStore: sqlStore{d: pgDialect, read: q, write: q}, pool: pool, log: log, now: time.Now}
	s.clock = func() time.Time { return s.now() }
	s.writeTx = func(ctx context.Context, fn func(querier) error) error {
		return s.inTx(ctx, func(tx pgx.Tx) error {
			// One writer of entries at a time: a free slug and a part's absence stay true
			// until the transaction commits.
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, pgLockClass, pgLockAddEntry); err != nil {
				return err
			}
			return fn(newPgQuerier(tx))
		})
	}
	// Records a writer left pending (it stopped between its commit and its sequencing
	// step) are numbered now, rather than at the next signed write.
	if err := s.sequencePending(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

func (s *pgStore) Backend() string { return "postgres" }

// Close closes the pool, waiting for connections in use: stop every queue first.
func (s *pgStore) Close() error {
	s.closed.Store(true)
	s.pool.Close()
	return nil
}

// Migrate applies the PostgreSQL migrations not applied yet, each in its own transaction,
// then River's. A session advisory lock, held on a connection of its own for the whole
// of it, makes processes that start together migrate one after the other: the first
// applies everything, the others find nothing left to do.
func (s *pgStore) Migrate(ctx context.Context) error {
	ms, err := migrations.List(migrations.Postgres, "postgres")
	if err != nil {
		return err
	}
	if err := s.migrate(ctx, ms, s.migrateRiver); err != nil {
		return err
	}
	return s.sequencePending(ctx)
}

// migrateRiver applies River's migrations not applied yet.
func (s *pgStore) migrateRiver(ctx context.Context) error {
	return migrateRiver(ctx, riverpgxv5.New(s.pool), "postgres", s.log)
}

// migrate takes the migration lock, applies the migrations of ms not applied yet (see
// schemaMigrations.apply), then runs then (when not nil) still under the lock. ms are
// this binary's migrations (or, in tests, the first of them).
func (s *pgStore) migrate(ctx context.Context, ms []migrations.Migration, then func(context.Context) error) error {
	// Its own connection rather than one of the pool's, so that River's migrator, which
	// takes its connections from the pool, cannot wait behind the lock holder for one.
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig)
	if err != nil {
		return fmt.Errorf("couldn't connect to migrate: %w", err)
	}
	// Closing the session releases the lock, on every path (the server ends a session
	// that is cut off, too).
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1, $2)`, pgLockClass, pgLockMigrate); err != nil {
		return fmt.Errorf("couldn't take the migration lock: %w", err)
	}
	sm := schemaMigrations{
		backend: "postgres",
		log:     s.log,
		create: `
		CREATE TABLE IF NOT EXISTS schema_migrations (
			version    integer     PRIMARY KEY,
			name       text        NOT NULL,
			applied_at timestamptz NOT NULL
		)`,
		appliedAt: pgTime(s.now()),
		conn:      newPgQuerier(conn),
		inTx: func(ctx context.Context, fn func(querier, func(string) error) error) error {
			return pgInTx(ctx, conn, func(tx pgx.Tx) error {
				return fn(newPgQuerier(tx), func(script string) error {
					// No arguments: the simple protocol, which runs a file of several statements.
					_, err := tx.Exec(ctx, script)
					return err
				})
			})
		},
	}
	if err := sm.apply(ctx, ms); err != nil {
		return err
	}
	if then != nil {
		return then(ctx)
	}
	return nil
}

// NewQueue builds a River client on the store's pool; stop it before closing the store.
func (s *pgStore) NewQueue(cfg *river.Config) (Queue, error) {
	if s.closed.Load() {
		return nil, errors.New("couldn't build the job queue: the store is closed")
	}
	q, err := newRiverQueue(riverpgxv5.New(s.pool), riverConfig(cfg, s.log))
	if err != nil {
		return nil, err
	}
	return q, nil
}

// txBeginner is *pgxpool.Pool or *pgx.Conn.
type txBeginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// pgInTx runs fn in a transaction on db and commits when fn returns nil; otherwise it
// rolls back and returns fn's error.
func pgInTx(ctx context.Context, db txBeginner, fn func(tx pgx.Tx) error) error {
	tx, err := db.Begin(ctx)
	if err != nil {
		return fmt.Errorf("couldn't begin a transaction: %w", err)
	}
	if err := fn(tx); err != nil {
		// A rollback that fails leaves nothing behind: pgx closes a connection it cannot
		// roll back (ctx cancelled, say), and the server ends the transaction with it.
		_ = tx.Rollback(ctx)
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("couldn't commit: %w", err)
	}
	return nil
}

// inTx runs fn in a transaction on the pool; see pgInTx.
func (s *pgStore) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return pgInTx(ctx, s.pool, fn)
}

// isPgViolation reports whether err is PostgreSQL's unique_violation (23505) of the
// named constraint.
func isPgViolation(err error, constraint string) bool {
	var e *pgconn.PgError
	return errors.As(err, &e) && e.Code == "23505" && e.ConstraintName == constraint
}

// pgTime is t as stored: UTC, truncated to the millisecond.
func pgTime(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// pgCollect scans every row of rows with scan and closes rows; no rows is a nil slice.
func pgCollect[T any](rows pgx.Rows, scan func(rowScanner) (T, error)) ([]T, error) {
	return pgx.AppendRows([]T(nil), rows, func(r pgx.CollectableRow) (T, error) { return scan(r) })
}

// pgDialect is the PostgreSQL spelling of the queries written once: $n placeholders,
// timestamptz times truncated to the millisecond, NULL for no limit, date days, and ILIKE
// (which SQLite lacks) for the case-insensitive search.
var pgDialect = dialect{
	bind:    bindDollar,
	time:    func(t time.Time) any { return pgTime(t) },
	noLimit: nil,
	day:     func(ph string) string { return `CAST(` + ph + ` AS date)` },
	dayText: func(column string) string { return `to_char(` + column + `, 'YYYY-MM-DD')` },
	contains: func(column string) (string, int) {
		return column + ` ILIKE ? ESCAPE '\'`, 1
	},
	fold:         func(x string) string { return `lower(` + x + `) COLLATE "C"` },
	databaseSize: `pg_database_size(current_database())`,
}

// pgDB is *pgxpool.Pool, *pgx.Conn or pgx.Tx.
type pgDB interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// pgQuerier runs the queries written once on a pgDB, their placeholders rebound once
// per query text (bound caches them: the queries are constants and few).
type pgQuerier struct {
	db    pgDB
	bound *sync.Map // query → its $n form
}

// newPgQuerier is a querier on db.
func newPgQuerier(db pgDB) pgQuerier { return pgQuerier{db: db, bound: &sync.Map{}} }

func (q pgQuerier) rebind(query string) string {
	if b, ok := q.bound.Load(query); ok {
		return b.(string)
	}
	b := bindDollar(query)
	q.bound.Store(query, b)
	return b
}

func (q pgQuerier) QueryRow(ctx context.Context, query string, args ...any) rowScanner {
	return q.db.QueryRow(ctx, q.rebind(query), args...)
}

func (q pgQuerier) Query(ctx context.Context, query string, args ...any) (sqlRows, error) {
	rows, err := q.db.Query(ctx, q.rebind(query), args...)
	if err != nil {
		return nil, err
	}
	return pgRows{rows}, nil
}

func (q pgQuerier) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := q.db.Exec(ctx, q.rebind(query), args...)
	return tag.RowsAffected(), err
}

// pgRows is pgx.Rows as sqlRows.
type pgRows struct{ pgx.Rows }

func (r pgRows) Close() error {
	r.Rows.Close()
	return nil
}

// ScanTimestamptz lets pgx hand a timestamptz to timeCol directly, without the
// database/sql conversion it otherwise goes through.
func (t *timeScanner) ScanTimestamptz(v pgtype.Timestamptz) error {
	if !v.Valid {
		*t = timeScanner{}
		return nil
	}
	*t = timeScanner(v.Time.UTC())
	return nil
}
