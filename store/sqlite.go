package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"modernc.org/sqlite" // also registers the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/probity-dev/probity/migrations"
)

// sqliteBusyTimeout is how long a connection waits for another connection's (or
// process's) write lock before it fails with SQLITE_BUSY.
const sqliteBusyTimeout = 10 * time.Second

// defaultSQLiteReaders is the size of the reader pool when Config.MaxConns is 0.
const defaultSQLiteReaders = 4

// sqliteStore is the embedded backend: one SQLite file in WAL mode.
//
// Every write goes through writer, a pool of exactly one connection whose transactions
// begin IMMEDIATE: writes are serialized within the process, and a write waits for other
// processes' writes (busy_timeout) instead of failing on a lock upgrade. So a check and
// the write that depends on it (is this round stored? which slug is free?) see the
// same state. Reads go through reader, a pool of query-only connections that WAL lets
// run beside the writer, each on its own snapshot.
//
// Times are stored as INTEGER Unix milliseconds (UTC), NULL for a zero time where zero
// means "none" (Entry.LastRoundAt, Run.FinishedAt).
type sqliteStore struct {
	sqlStore
	path   string
	log    *slog.Logger
	now    func() time.Time
	writer *sql.DB
	reader *sql.DB

	stmtMu      sync.Mutex
	stmts       map[string]*sql.Stmt // the writer's prepared statements, by query (sqliteTx)
	closedStmts bool

	mu      sync.Mutex
	queueDB *sql.DB // River's connection, opened by the first NewQueue; closed by Close
	closed  bool
}

// sqliteDSN is the data source name of path for modernc.org/sqlite: the PRAGMAs every
// connection runs, and the role's own settings.
func sqliteDSN(path string, role string) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(sqliteBusyTimeout.Milliseconds(), 10)+")")
	q.Add("_pragma", "synchronous(NORMAL)")
	switch role {
	case "writer":
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "foreign_keys(1)")
		q.Set("_txlock", "immediate")
	case "reader":
		q.Add("_pragma", "foreign_keys(1)")
		q.Set("_query_only", "1")
	case "river":
		q.Set("_txlock", "immediate")
	}
	return path + "?" + q.Encode()
}

// openSQLite opens (creating when missing) the SQLite database at cfg.SQLitePath.
func openSQLite(ctx context.Context, cfg Config) (Store, error) {
	path := cfg.SQLitePath
	switch {
	case path == "":
		return nil, errors.New("couldn't open the SQLite store: no path")
	case strings.Contains(path, "?") || strings.HasPrefix(path, "file:") || path == ":memory:":
		return nil, fmt.Errorf("couldn't open the SQLite store: %q is not a plain file name", path)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("couldn't create the SQLite store's directory: %w", err)
	}

	writer, err := openSQLitePool(ctx, path, "writer", 1)
	if err != nil {
		return nil, err
	}
	readers := cfg.MaxConns
	if readers <= 0 {
		readers = defaultSQLiteReaders
	}
	// The reader opens after the writer has switched the file to WAL.
	reader, err := openSQLitePool(ctx, path, "reader", readers)
	if err != nil {
		return nil, errors.Join(err, writer.Close())
	}
	s := &sqliteStore{
		sqlStore: sqlStore{d: sqliteDialect, read: sqliteQuerier{reader}, write: sqliteQuerier{writer}},
		path:     path, log: log, now: time.Now, writer: writer, reader: reader,
		stmts: map[string]*sql.Stmt{},
	}
	s.clock = func() time.Time { return s.now() }
	s.writeTx = func(ctx context.Context, fn func(querier) error) error {
		return s.inTx(ctx, func(tx *sqliteTx) error { return fn(sqliteQuerier{tx}) })
	}
	// Records left pending (only a store written by another version, or a test, leaves
	// any: sqliteSequence numbers them in their own transaction) are numbered now.
	if err := s.sequencePending(ctx); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	return s, nil
}

// openSQLitePool opens a pool of at most conns connections to path in role and checks
// that one connects.
func openSQLitePool(ctx context.Context, path, role string, conns int) (*sql.DB, error) {
	db, err := sql.Open("sqlite", sqliteDSN(path, role))
	if err != nil {
		return nil, fmt.Errorf("couldn't open the SQLite %s pool: %w", role, err)
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	if err := db.PingContext(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("couldn't open the SQLite store at %q: %w", path, err), db.Close())
	}
	return db, nil
}

func (s *sqliteStore) Backend() string { return "sqlite" }

// Close closes the pools, River's included: stop every queue first.
func (s *sqliteStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	s.stmtMu.Lock()
	for _, st := range s.stmts {
		errs = append(errs, st.Close())
	}
	s.stmts, s.closedStmts = nil, true
	s.stmtMu.Unlock()
	if s.queueDB != nil {
		errs = append(errs, s.queueDB.Close())
	}
	errs = append(errs, s.reader.Close(), s.writer.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("couldn't close the SQLite store: %w", err)
	}
	return nil
}

// Migrate applies the SQLite migrations not applied yet, each in its own transaction,
// then River's.
func (s *sqliteStore) Migrate(ctx context.Context) error {
	ms, err := migrations.List(migrations.SQLite, "sqlite")
	if err != nil {
		return err
	}
	if err := s.migrate(ctx, ms); err != nil {
		return err
	}
	if err := migrateRiver(ctx, riversqlite.New(s.writer), "sqlite", s.log); err != nil {
		return err
	}
	return s.sequencePending(ctx)
}

// migrate applies the migrations of ms not applied yet (see schemaMigrations.apply) on
// the writer. ms are this binary's migrations (or, in tests, the first of them).
func (s *sqliteStore) migrate(ctx context.Context, ms []migrations.Migration) error {
	sm := schemaMigrations{
		backend: "sqlite",
		log:     s.log,
		create: `
		CREATE TABLE IF NOT EXISTS schema_migrations (
			version    INTEGER PRIMARY KEY,
			name       TEXT    NOT NULL,
			applied_at TEXT    NOT NULL
		) STRICT`,
		appliedAt: s.now().UTC().Format(time.RFC3339Nano),
		conn:      sqliteQuerier{s.writer},
		inTx: func(ctx context.Context, fn func(querier, func(string) error) error) error {
			return s.inTx(ctx, func(tx *sqliteTx) error {
				return fn(sqliteQuerier{tx}, func(script string) error {
					// Not through the statement cache: a migration is many statements.
					_, err := tx.raw.ExecContext(ctx, script)
					return err
				})
			})
		},
	}
	return sm.apply(ctx, ms)
}

// NewQueue builds a River client on its own connection to the store's file: River wants
// one connection on SQLite, and its polling must not queue behind the store's writes.
// The connection is shared by the store's queues and closed by Close; a queue must be
// stopped before the store is closed.
func (s *sqliteStore) NewQueue(cfg *river.Config) (Queue, error) {
	db, err := s.riverDB()
	if err != nil {
		return nil, err
	}
	q, err := newRiverQueue(riversqlite.New(db), riverConfig(cfg, s.log))
	if err != nil {
		return nil, err // a nil Queue, not a Queue holding a nil *riverQueue
	}
	return q, nil
}

func (s *sqliteStore) riverDB() (*sql.DB, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("couldn't build the job queue: the store is closed")
	}
	if s.queueDB == nil {
		db, err := openSQLitePool(context.Background(), s.path, "river", 1)
		if err != nil {
			return nil, err
		}
		s.queueDB = db
	}
	return s.queueDB, nil
}

// inTx runs fn in an IMMEDIATE transaction on the writer and commits when fn returns nil.
func (s *sqliteStore) inTx(ctx context.Context, fn func(tx *sqliteTx) error) error {
	raw, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("couldn't begin a transaction: %w", err)
	}
	tx := &sqliteTx{raw: raw, s: s}
	defer func() { s.prepare(ctx, tx.missed) }() // once the connection is free again
	if err := fn(tx); err != nil {
		return errors.Join(err, ignoreDone(raw.Rollback()))
	}
	if err := raw.Commit(); err != nil {
		return fmt.Errorf("couldn't commit: %w", err)
	}
	return nil
}

// sqliteTx is a transaction on the writer whose statements are compiled once per store,
// not once per transaction (compiling was two thirds of SaveRound's time): the writer
// has one connection, so a statement prepared on it stays prepared. A statement first
// seen inside a transaction runs unprepared and is prepared after the transaction, when
// the connection is free. Only constant, single-statement queries may go through it.
type sqliteTx struct {
	raw    *sql.Tx
	s      *sqliteStore
	missed []string
}

// stmt returns the prepared statement of query bound to the transaction, or nil.
func (tx *sqliteTx) stmt(ctx context.Context, query string) *sql.Stmt {
	tx.s.stmtMu.Lock()
	st := tx.s.stmts[query]
	tx.s.stmtMu.Unlock()
	if st == nil {
		tx.missed = append(tx.missed, query)
		return nil
	}
	return tx.raw.StmtContext(ctx, st)
}

func (tx *sqliteTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := tx.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return tx.raw.ExecContext(ctx, query, args...)
}

func (tx *sqliteTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := tx.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return tx.raw.QueryRowContext(ctx, query, args...)
}

func (tx *sqliteTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := tx.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return tx.raw.QueryContext(ctx, query, args...)
}

// prepare prepares the queries on the writer for later transactions. A query that fails
// to prepare (the store is closing, the table is not migrated yet) keeps running
// unprepared, where its error, if it has one, is reported.
func (s *sqliteStore) prepare(ctx context.Context, queries []string) {
	for _, q := range queries {
		s.stmtMu.Lock()
		have := s.stmts[q] != nil
		s.stmtMu.Unlock()
		if have {
			continue
		}
		st, err := s.writer.PrepareContext(ctx, q)
		if err != nil {
			continue
		}
		s.stmtMu.Lock()
		if s.stmts[q] == nil && !s.closedStmts {
			s.stmts[q] = st
			st = nil
		}
		s.stmtMu.Unlock()
		if st != nil {
			st.Close() // another transaction prepared it first
		}
	}
}

// ignoreDone drops the error of rolling back a transaction that is already over
// (its context was cancelled).
func ignoreDone(err error) error {
	if errors.Is(err, sql.ErrTxDone) {
		return nil
	}
	return err
}

// isUniqueViolation reports whether err is SQLite's UNIQUE or PRIMARY KEY constraint error.
func isUniqueViolation(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || e.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

// millis is t as stored: Unix milliseconds.
func millis(t time.Time) int64 { return t.UnixMilli() }

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sqliteDialect is the SQLite spelling of the queries written once: ? placeholders,
// times as INTEGER Unix milliseconds, -1 for no limit, days as text, and the case
// folding of sqliteFold (SQLite has no ILIKE, and its LIKE folds only ASCII).
var sqliteDialect = dialect{
	bind:    func(q string) string { return q },
	time:    func(t time.Time) any { return millis(t) },
	noLimit: -1,
	day:     func(ph string) string { return ph },
	dayText: func(column string) string { return column },
	contains: func(column string) (string, int) {
		return `(` + column + ` LIKE ? ESCAPE '\' OR (octet_length(` + column + `) <> length(` + column + `) AND ` +
			sqliteFold + `(` + column + `) LIKE ? ESCAPE '\'))`, 2
	},
	fold:         func(x string) string { return sqliteFold + `(` + x + `)` },
	databaseSize: `(SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size())`,
}

// sqliteDB is *sql.DB or *sqliteTx.
type sqliteDB interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// sqliteQuerier runs the queries written once on a sqliteDB.
type sqliteQuerier struct{ db sqliteDB }

func (q sqliteQuerier) QueryRow(ctx context.Context, query string, args ...any) rowScanner {
	return q.db.QueryRowContext(ctx, query, args...)
}

func (q sqliteQuerier) Query(ctx context.Context, query string, args ...any) (sqlRows, error) {
	rows, err := q.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err // not a nil *sql.Rows in a non-nil interface
	}
	return rows, nil
}

func (q sqliteQuerier) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := q.db.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
