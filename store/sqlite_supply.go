package store

import (
	"context"
	"database/sql"
	"fmt"
)

// SaveSupply runs on the writer, whose IMMEDIATE transactions are serialized across
// processes: the runs it prunes are the entry's runs as of its own insert. A run older
// than the entry's MaxSupplyRuns newest is stored and at once pruned with the rest: its
// id is returned but names no stored run.
func (s *sqliteStore) SaveSupply(ctx context.Context, r SupplyRecord, due []DueUpdate) (int64, error) {
	if err := checkSupply(&r, due); err != nil {
		return 0, fmt.Errorf("couldn't save the supply run of entry %d: %w", r.EntryID, err)
	}
	var id int64
	err := s.inTx(ctx, func(tx *sqliteTx) error {
		if err := sqliteEntryExists(ctx, tx, r.EntryID); err != nil {
			return err
		}
		err := tx.QueryRowContext(ctx, `
			INSERT INTO supply_runs (entry_id, ran_at, score, verified, latest_version, facts, verdict, envelope, key_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			RETURNING id`,
			r.EntryID, millis(r.RanAt), r.Score, boolInt(r.Verified), r.LatestVersion, r.Facts, r.Verdict,
			nullBytes(r.Envelope), nullString(r.KeyID),
		).Scan(&id)
		if err != nil {
			return fmt.Errorf("couldn't store the run: %w", err)
		}
		// On supply_runs_entry_ran: the runs to keep are the first of the entry's keys.
		if _, err := tx.ExecContext(ctx, `
			DELETE FROM supply_runs WHERE id IN (
				SELECT id FROM supply_runs WHERE entry_id = ?
				ORDER BY ran_at DESC, id DESC
				LIMIT -1 OFFSET ?)`, r.EntryID, MaxSupplyRuns); err != nil {
			return fmt.Errorf("couldn't delete the older runs: %w", err)
		}
		for _, d := range due {
			if err := sqliteSetDue(ctx, tx, r.EntryID, d); err != nil {
				return fmt.Errorf("couldn't update the %s due time: %w", d.Reason, err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("couldn't save the supply run of entry %d: %w", r.EntryID, err)
	}
	return id, nil
}

const sqliteSupplyColumns = `r.id, r.entry_id, r.ran_at, r.score, r.verified, r.latest_version, r.facts,
	r.verdict, r.envelope, r.key_id`

// scanSupply scans the sqliteSupplyColumns of supply_runs r.
func scanSupply(row rowScanner) (SupplyRecord, error) {
	var (
		r     SupplyRecord
		ranAt sql.NullInt64
		keyID sql.NullString
	)
	err := row.Scan(&r.ID, &r.EntryID, &ranAt, &r.Score, &r.Verified, &r.LatestVersion, &r.Facts,
		&r.Verdict, &r.Envelope, &keyID)
	if err != nil {
		return SupplyRecord{}, err
	}
	r.RanAt, r.KeyID = fromMillis(ranAt), keyID.String
	return r, nil
}

func (s *sqliteStore) SupplyRuns(ctx context.Context, entryID int64, limit int) ([]SupplyRecord, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.reader.QueryContext(ctx, `
		SELECT `+sqliteSupplyColumns+` FROM supply_runs r
		WHERE r.entry_id = ?
		ORDER BY r.ran_at DESC, r.id DESC
		LIMIT ?`, entryID, limit)
	if err != nil {
		return nil, fmt.Errorf("couldn't list the supply runs of entry %d: %w", entryID, err)
	}
	rs, err := collect(rows, scanSupply)
	if err != nil {
		return nil, fmt.Errorf("couldn't list the supply runs of entry %d: %w", entryID, err)
	}
	return rs, nil
}

// WalkSupply reads the entries in pages of walkSupplyPage by id, and for each the newest
// run, found on supply_runs_entry_ran without reading the other runs' documents; an
// entry without runs is skipped. As in WalkRounds, each page is a query of its own, so
// no connection or snapshot is held while fn runs. A run stored during the walk is seen
// when its entry is after the page being read.
func (s *sqliteStore) WalkSupply(ctx context.Context, fn func(SupplyRecord) error) error {
	return walkPagesOf(walkSupplyPage, func(buf []SupplyRecord, last *SupplyRecord) ([]SupplyRecord, error) {
		// Entry ids start at 1: the first page starts before every entry.
		var entry int64
		if last != nil {
			entry = last.EntryID
		}
		rows, err := s.reader.QueryContext(ctx, `
			SELECT `+sqliteSupplyColumns+`
			FROM entries e JOIN supply_runs r ON r.id = (
				SELECT id FROM supply_runs WHERE entry_id = e.id
				ORDER BY ran_at DESC, id DESC LIMIT 1)
			WHERE e.id > ?
			ORDER BY e.id
			LIMIT ?`, entry, walkSupplyPage)
		if err == nil {
			buf, err = appendRows(buf, rows, scanSupply)
		}
		if err != nil {
			return nil, fmt.Errorf("couldn't walk the supply runs: %w", err)
		}
		return buf, nil
	}, fn)
}
