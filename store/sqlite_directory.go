package store

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strings"
	"time"

	"modernc.org/sqlite"
)

// SQLite's own lower() and LIKE fold only ASCII letters, and it has no ILIKE: the
// directory search ignores case as Go's strings.ToLower does (Ä and ä, Σ and σ), so
// SQLite matches text that is not all ASCII through sqliteFold, a Go function registered
// with the driver. Text that is all ASCII (octet_length = length) is matched by LIKE
// alone, which folds ASCII the same way: calling into Go for every row costs 28 ms per
// 50,000 entries searched, against 11 ms for LIKE first (7.7 ms for LIKE alone).
const sqliteFold = "probity_fold"

func init() {
	err := sqlite.RegisterDeterministicScalarFunction(sqliteFold, 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		switch v := args[0].(type) {
		case string:
			return strings.ToLower(v), nil
		case []byte:
			return strings.ToLower(string(v)), nil
		case nil:
			return nil, nil
		default:
			return nil, fmt.Errorf("%s: %T is not text", sqliteFold, v)
		}
	})
	if err != nil {
		panic(err) // registered once per process: a second registration is a bug
	}
}

// sqliteDirectory is the directory SQL's SQLite spelling: ? placeholders, times in Unix
// milliseconds, days as text, case folded by sqliteFold.
var sqliteDirectory = directoryDialect{
	entryColumns: sqliteEntryColumns,
	contains: func(column string) (string, int) {
		return `(` + column + ` LIKE ? ESCAPE '\' OR (octet_length(` + column + `) <> length(` + column + `) AND ` +
			sqliteFold + `(` + column + `) LIKE ? ESCAPE '\'))`, 2
	},
	day:  func(ph string) string { return ph },
	time: func(t time.Time) any { return millis(t) },
	bind: func(q string) string { return q },
}

func (s *sqliteStore) Directory(ctx context.Context, q DirectoryQuery) (DirectoryPage, error) {
	if err := checkDirectoryQuery(q); err != nil {
		return DirectoryPage{}, fmt.Errorf("couldn't read the directory: %w", err)
	}
	query, args := directorySQL(sqliteDirectory, q)
	rows, err := s.reader.QueryContext(ctx, query, args...)
	if err != nil {
		return DirectoryPage{}, fmt.Errorf("couldn't read the directory: %w", err)
	}
	defer rows.Close()
	page := DirectoryPage{Rows: make([]DirectoryRow, 0, min(q.Limit, 128))}
	for rows.Next() {
		r, err := scanDirectoryRow(rows, scanEntry)
		if err != nil {
			return DirectoryPage{}, fmt.Errorf("couldn't read the directory: %w", err)
		}
		page.Rows = append(page.Rows, r)
	}
	if err := rows.Err(); err != nil {
		return DirectoryPage{}, fmt.Errorf("couldn't read the directory: %w", err)
	}
	if q.CountEntries {
		if err := s.reader.QueryRowContext(ctx, `SELECT count(*) FROM entries`).Scan(&page.Entries); err != nil {
			return DirectoryPage{}, fmt.Errorf("couldn't count the directory's entries: %w", err)
		}
	}
	return page, nil
}
