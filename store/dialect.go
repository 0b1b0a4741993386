package store

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
	"time"
)

// This file is the dialect-neutral layer the plain queries (sql_*.go) are written on,
// once, for both backends. A query is written with ? placeholders; a backend supplies a
// dialect (how it binds placeholders and stores a time, its spelling of "no limit" and
// of a day) and a querier over its connections. What it must do differently (row locks,
// batches, advisory locks on PostgreSQL; IMMEDIATE transactions and cached statements on
// SQLite) stays in its pg_*.go or sqlite_*.go file, with the reason beside it.
//
// Scanning is neutral without the dialect: a time column is read through timeCol, which
// takes PostgreSQL's timestamptz and SQLite's Unix milliseconds alike; booleans scan into
// bool on both (SQLite's INTEGER 0/1 through database/sql's conversion) and bind as bool
// (modernc.org/sqlite binds 1/0); documents are bytea and BLOB, []byte on both; a missing
// row is sql.ErrNoRows on both (pgx.ErrNoRows wraps it).

// dialect is what a backend's SQL spells differently.
type dialect struct {
	// bind rewrites a query's ? placeholders into the backend's (none of the queries
	// holds a ? that is not a placeholder).
	bind func(query string) string
	// time is a non-zero time as the column stores it.
	time func(t time.Time) any
	// noLimit is the LIMIT parameter that means "no limit".
	noLimit any
	// day is a placeholder ph holding a YYYY-MM-DD day, typed for a day column.
	day func(ph string) string
	// dayText is a day column read as YYYY-MM-DD text.
	dayText func(column string) string
	// contains is the condition that column contains an escaped LIKE pattern, ignoring
	// case; the pattern is bound to each of its n placeholders.
	contains func(column string) (cond string, n int)
	// fold is text expression x lowercased as Go's strings.ToLower does, in an order of
	// code points: the directory's order by name, the same on both backends.
	fold func(x string) string
	// databaseSize is the expression of the database's size in bytes.
	databaseSize string
}

// nullTime is t as a nullable time column stores it: NULL for the zero time.
func (d dialect) nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return d.time(t)
}

// limit is a LIMIT parameter: no limit for limit ≤ 0.
func (d dialect) limit(limit int) any {
	if limit <= 0 {
		return d.noLimit
	}
	return limit
}

// rowScanner is one row: *sql.Row, *sql.Rows, pgx.Row or pgx.Rows.
type rowScanner interface {
	Scan(dest ...any) error
}

// sqlRows is a result set of either backend.
type sqlRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// querier runs queries written with ? placeholders on a backend's pool, connection or
// transaction.
type querier interface {
	QueryRow(ctx context.Context, query string, args ...any) rowScanner
	Query(ctx context.Context, query string, args ...any) (sqlRows, error)
	Exec(ctx context.Context, query string, args ...any) (int64, error)
}

// sqlStore is the part of a backend written once: the plain queries of sql_*.go, run on
// read (the reading pool) and write (where a single write goes), in d's spelling. Both
// backends embed it.
type sqlStore struct {
	d     dialect
	read  querier
	write querier
	// writeTx runs fn in a write transaction, clock is the store's clock: set by the
	// backend, for the writes written once (sql_servers.go). On PostgreSQL writeTx also
	// takes the AddEntry lock, which serializes slug choices.
	writeTx func(ctx context.Context, fn func(tx querier) error) error
	clock   func() time.Time
	// leavePending, set by tests only, makes the writers skip their sequencing step,
	// as a crash between a write's commit and its step would.
	leavePending atomic.Bool
	// testBeforeDelete, set by tests only, runs after DeleteEntry deleted an entry's
	// remotes and before it deletes the entry.
	testBeforeDelete func(slug string)
}

// collect scans every row with scan and closes rows; no rows is a nil slice.
func collect[T any](rows sqlRows, scan func(rowScanner) (T, error)) ([]T, error) {
	return appendRows(nil, rows, scan)
}

// appendRows appends every row, scanned with scan, to dst and closes rows.
func appendRows[T any](dst []T, rows sqlRows, scan func(rowScanner) (T, error)) ([]T, error) {
	defer rows.Close()
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		dst = append(dst, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return dst, nil
}

// queryAll runs query on q and scans every row with scan.
func queryAll[T any](ctx context.Context, q querier, scan func(rowScanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return collect(rows, scan)
}

// timeScanner scans a time column of either backend into a UTC time.Time: PostgreSQL's
// timestamptz arrives as a time.Time, SQLite's as Unix milliseconds; NULL is the zero
// time.
type timeScanner time.Time

// timeCol is the Scan destination of a time column read into t.
func timeCol(t *time.Time) *timeScanner { return (*timeScanner)(t) }

// Scan implements sql.Scanner.
func (t *timeScanner) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*t = timeScanner{}
	case time.Time:
		*t = timeScanner(x.UTC())
	case int64:
		*t = timeScanner(time.UnixMilli(x).UTC())
	default:
		return fmt.Errorf("a time column holds %T", v)
	}
	return nil
}

var _ sql.Scanner = (*timeScanner)(nil)

// nullStringCol is the Scan destination of a nullable text column read into s ("" for
// NULL).
type nullStringCol struct{ s *string }

// Scan implements sql.Scanner.
func (n nullStringCol) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*n.s = ""
	case string:
		*n.s = x
	case []byte:
		*n.s = string(x)
	default:
		return fmt.Errorf("a text column holds %T", v)
	}
	return nil
}
