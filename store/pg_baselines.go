package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// SaveBaseline locks the entry's row (FOR NO KEY UPDATE, as SaveRound does), so that
// an entry's approvals are serialized across processes, reads its newest number, and
// stores the ledger record (kind baseline, pending) and the baseline's row; the record
// is numbered after the commit. It returns the baseline's id; ErrNotFound when the
// entry is gone, ErrBaselineNumber when b.Number is not the entry's next.
func (s *pgStore) SaveBaseline(ctx context.Context, b Baseline) (int64, error) {
	if err := checkBaseline(&b); err != nil {
		return 0, fmt.Errorf("couldn't save baseline %d of entry %d: %w", b.Number, b.EntryID, err)
	}
	now := s.now()
	var id, record int64
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var last int64
		bt := &pgx.Batch{}
		pgQueueLockEntry(bt, b.EntryID)
		bt.Queue(`SELECT coalesce(max(number), 0) FROM baselines WHERE entry_id = $1`, b.EntryID).
			QueryRow(func(row pgx.Row) error { return row.Scan(&last) })
		if err := tx.SendBatch(ctx, bt).Close(); err != nil {
			return err
		}
		if b.Number != last+1 {
			return ErrBaselineNumber
		}
		bt = &pgx.Batch{}
		pgQueueAppendRecord(bt, RecordBaseline, b.EntryID, b.PayloadDigest, b.KeyID, b.Envelope, now, &record)
		bt.Queue(`
			INSERT INTO baselines (entry_id, number, toolset, schema_fp, surface, tool_count, basis_round_id,
				basis_payload_digest, approved_at, approved_by, ledger_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, `+pgRecordID+`) RETURNING id`,
			b.EntryID, b.Number, b.Fingerprints.Toolset, b.Fingerprints.Schema, b.Fingerprints.Surface, b.ToolCount,
			b.BasisRoundID, b.BasisPayloadDigest, pgTime(b.ApprovedAt), nullID(b.ApprovedBy)).
			QueryRow(func(row pgx.Row) error { return row.Scan(&id) })
		if err := tx.SendBatch(ctx, bt).Close(); err != nil {
			return fmt.Errorf("couldn't store the baseline: %w", err)
		}
		return nil
	})
	if err == nil {
		s.numberCommitted(ctx, record)
	}
	if err != nil {
		return 0, fmt.Errorf("couldn't save baseline %d of entry %d: %w", b.Number, b.EntryID, err)
	}
	return id, nil
}
