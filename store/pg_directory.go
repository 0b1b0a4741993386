package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Directory sends the page's query, the counts and the protocol versions as one batch:
// one round trip.
func (s *pgStore) Directory(ctx context.Context, q DirectoryQuery) (DirectoryPage, error) {
	if err := checkDirectoryQuery(q); err != nil {
		return DirectoryPage{}, fmt.Errorf("couldn't read the directory: %w", err)
	}
	query, args := directorySQL(pgDialect, q, s.now())
	b := &pgx.Batch{}
	b.Queue(bindDollar(query), args...)
	if q.CountEntries {
		b.Queue(directoryEntriesSQL)
	}
	if q.CountMatches {
		query, args := directoryCountSQL(pgDialect, q)
		b.Queue(bindDollar(query), args...)
	}
	if q.ListProtocols {
		b.Queue(directoryProtocolsSQL)
	}
	br := s.pool.SendBatch(ctx, b)
	page, err := pgReadDirectory(br, q)
	if cerr := br.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return DirectoryPage{}, fmt.Errorf("couldn't read the directory: %w", err)
	}
	return page, nil
}

// pgReadDirectory reads Directory's batch: the rows, then the counts and the protocol
// versions when asked for.
func pgReadDirectory(br pgx.BatchResults, q DirectoryQuery) (DirectoryPage, error) {
	rows, err := br.Query()
	if err != nil {
		return DirectoryPage{}, err
	}
	page := DirectoryPage{Rows: make([]DirectoryRow, 0, min(q.Limit, 128))}
	for rows.Next() {
		r, err := scanDirectoryRow(rows)
		if err != nil {
			rows.Close()
			return DirectoryPage{}, err
		}
		page.Rows = append(page.Rows, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return DirectoryPage{}, err
	}
	if q.CountEntries {
		if err := br.QueryRow().Scan(&page.Entries); err != nil {
			return DirectoryPage{}, err
		}
	}
	if q.CountMatches {
		if err := br.QueryRow().Scan(&page.Matches); err != nil {
			return DirectoryPage{}, err
		}
	}
	if q.ListProtocols {
		rows, err := br.Query()
		if err != nil {
			return DirectoryPage{}, err
		}
		if page.Protocols, err = pgCollect(rows, scanString); err != nil {
			return DirectoryPage{}, err
		}
	}
	return page, nil
}
