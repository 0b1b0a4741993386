package store

import (
	"context"
	"fmt"
)

// SaveBaseline runs on the writer, whose IMMEDIATE transactions are serialized across
// processes: the baseline's ledger record (kind baseline) and its row in one
// transaction, the record numbered before it commits, as SaveSupply does. It returns
// the baseline's id; ErrNotFound when the entry is gone, ErrBaselineNumber when
// b.Number is not the entry's next.
func (s *sqliteStore) SaveBaseline(ctx context.Context, b Baseline) (int64, error) {
	if err := checkBaseline(&b); err != nil {
		return 0, fmt.Errorf("couldn't save baseline %d of entry %d: %w", b.Number, b.EntryID, err)
	}
	now := s.now()
	var id int64
	err := s.inTx(ctx, func(tx *sqliteTx) error {
		if err := sqliteEntryExists(ctx, tx, b.EntryID); err != nil {
			return err
		}
		var last int64
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(number), 0) FROM baselines WHERE entry_id = ?`, b.EntryID).Scan(&last); err != nil {
			return err
		}
		if b.Number != last+1 {
			return ErrBaselineNumber
		}
		record, err := sqliteAppendRecord(ctx, tx, RecordBaseline, b.EntryID, b.PayloadDigest, b.KeyID, b.Envelope, now)
		if err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `
			INSERT INTO baselines (entry_id, number, toolset, schema_fp, surface, tool_count, basis_round_id,
				basis_payload_digest, approved_at, approved_by, ledger_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			b.EntryID, b.Number, b.Fingerprints.Toolset, b.Fingerprints.Schema, b.Fingerprints.Surface, b.ToolCount,
			b.BasisRoundID, b.BasisPayloadDigest, millis(b.ApprovedAt), nullID(b.ApprovedBy), record).Scan(&id); err != nil {
			return fmt.Errorf("couldn't store the baseline: %w", err)
		}
		return s.sqliteSequence(ctx, tx, record)
	})
	if err != nil {
		return 0, fmt.Errorf("couldn't save baseline %d of entry %d: %w", b.Number, b.EntryID, err)
	}
	return id, nil
}
