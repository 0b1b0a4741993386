package store

import (
	"context"
	"fmt"
)

// SaveSupply runs on the writer, whose IMMEDIATE transactions are serialized across
// processes. A signed run's ledger record is stored pending before the run's row and
// numbered last (sqliteSequence). No run is deleted: MaxSupplyRuns is what the pages show.
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
		var record any
		if r.Envelope != nil {
			id, err := sqliteAppendRecord(ctx, tx, RecordSupply, r.EntryID, r.PayloadDigest, r.KeyID, r.Envelope, now)
			if err != nil {
				return err
			}
			record = id
		}
		err := tx.QueryRowContext(ctx, sqliteInsertSupply, append(supplyArgs(sqliteDialect, &r), record)...).Scan(&id)
		if err != nil {
			return fmt.Errorf("couldn't store the run: %w", err)
		}
		for _, d := range due {
			if err := sqliteSetDue(ctx, tx, r.EntryID, d); err != nil {
				return fmt.Errorf("couldn't update the %s due time: %w", d.Reason, err)
			}
		}
		if record != nil {
			return s.sqliteSequence(ctx, tx, record.(int64))
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("couldn't save the supply run of entry %d: %w", r.EntryID, err)
	}
	return id, nil
}
