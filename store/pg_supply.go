package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// SaveSupply locks the entry's row (FOR NO KEY UPDATE, as SaveRound does), so that
// SaveSupply calls of one entry are serialized across processes. Its statements go in
// one pipelined batch, each running once the one before has finished: when the entry is
// missing, the lock's ErrNotFound is returned and the rest rolled back. A signed run's
// ledger record is stored pending just before the run's row, and numbered after the
// commit. No run is deleted:
// MaxSupplyRuns is what the pages show.
func (s *pgStore) SaveSupply(ctx context.Context, r SupplyRecord, due []DueUpdate) (int64, error) {
	if err := checkSupply(&r, due); err != nil {
		return 0, fmt.Errorf("couldn't save the supply run of entry %d: %w", r.EntryID, err)
	}
	now := s.now()
	var id, record int64
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		pgQueueLockEntry(b, r.EntryID)
		insert := pgInsertSupply
		if r.Envelope != nil {
			pgQueueAppendRecord(b, RecordSupply, r.EntryID, r.PayloadDigest, r.KeyID, r.Envelope, now, &record)
			insert = pgInsertSignedSupply
		}
		b.Queue(insert, supplyArgs(pgDialect, &r)...).QueryRow(func(row pgx.Row) error { return row.Scan(&id) })
		for _, d := range due {
			pgQueueSetDue(b, r.EntryID, d)
		}
		return tx.SendBatch(ctx, b).Close()
	})
	if err == nil && record != 0 {
		s.numberCommitted(ctx, record)
	}
	if err != nil {
		return 0, fmt.Errorf("couldn't save the supply run of entry %d: %w", r.EntryID, err)
	}
	return id, nil
}
