package store

import (
	"context"
	"database/sql"
	"fmt"
)

// SaveSupply runs on the writer, whose IMMEDIATE transactions are serialized across
// processes. A signed run's ledger record takes its sequence number just before the
// run's row. No run is deleted: MaxSupplyRuns is what the pages show.
func (s *sqliteStore) SaveSupply(ctx context.Context, r SupplyRecord, due []DueUpdate) (int64, error) {
	if err := checkSupply(&r, due); err != nil {
		return 0, fmt.Errorf("couldn't save the supply run of entry %d: %w", r.EntryID, err)
	}
	now := s.now()
	var id int64
	err := s.inTx(ctx, func(tx *sqliteTx) error {
		if err := sqliteEntryExists(ctx, tx, r.EntryID); err != nil {
			return err
		}
		var ledgerSeq any
		if r.Envelope != nil {
			seq, err := sqliteAppendRecord(ctx, tx, RecordSupply, r.EntryID, r.PayloadDigest, r.KeyID, r.Envelope, now)
			if err != nil {
				return err
			}
			ledgerSeq = seq
		}
		err := tx.QueryRowContext(ctx, `
			INSERT INTO supply_runs (entry_id, ran_at, score, verified, latest_version, facts, verdict, ledger_seq)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			RETURNING id`,
			r.EntryID, millis(r.RanAt), r.Score, boolInt(r.Verified), r.LatestVersion, r.Facts, r.Verdict, ledgerSeq,
		).Scan(&id)
		if err != nil {
			return fmt.Errorf("couldn't store the run: %w", err)
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
	r.verdict, l.envelope, l.key_id, l.payload_digest`

// sqliteSupplyLedger joins a supply run r with its ledger record l (NULL when unsigned).
const sqliteSupplyLedger = ` LEFT JOIN ledger l ON l.seq = r.ledger_seq`

// scanSupply scans the sqliteSupplyColumns of supply_runs r joined with
// sqliteSupplyLedger.
func scanSupply(row rowScanner) (SupplyRecord, error) {
	var (
		r             SupplyRecord
		ranAt         sql.NullInt64
		keyID, digest sql.NullString
	)
	err := row.Scan(&r.ID, &r.EntryID, &ranAt, &r.Score, &r.Verified, &r.LatestVersion, &r.Facts,
		&r.Verdict, &r.Envelope, &keyID, &digest)
	if err != nil {
		return SupplyRecord{}, err
	}
	r.RanAt, r.KeyID, r.PayloadDigest = fromMillis(ranAt), keyID.String, digest.String
	return r, nil
}

func (s *sqliteStore) SupplyRuns(ctx context.Context, entryID int64, limit int) ([]SupplyRecord, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.reader.QueryContext(ctx, `
		SELECT `+sqliteSupplyColumns+` FROM supply_runs r`+sqliteSupplyLedger+`
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
				ORDER BY ran_at DESC, id DESC LIMIT 1)`+sqliteSupplyLedger+`
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
