package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// SaveDispute: see sqliteStore.SaveDispute. The entry's row is locked (FOR NO KEY
// UPDATE, as SaveRound and SaveHistory lock it), so that two disputes of one entry
// take their numbers and check the open ones one after the other; the record is
// numbered after the commit.
func (s *pgStore) SaveDispute(ctx context.Context, d NewDispute) (DisputeRecord, error) {
	digest, err := checkNewDispute(&d)
	if err != nil {
		return DisputeRecord{}, fmt.Errorf("couldn't save a dispute of entry %d: %w", d.EntryID, err)
	}
	now := s.now()
	var record, id int64
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		q := newPgQuerier(tx)
		var one int
		if err := q.QueryRow(ctx, `SELECT 1 FROM entries WHERE id = ? FOR NO KEY UPDATE`, d.EntryID).Scan(&one); err != nil {
			return notFoundIfNoRows(err)
		}
		if record, err = s.saveDispute(ctx, q, d, digest, now); err != nil {
			return err
		}
		return q.QueryRow(ctx, `SELECT id FROM disputes WHERE ledger_id = ?`, record).Scan(&id)
	})
	if err != nil {
		return DisputeRecord{}, fmt.Errorf("couldn't save dispute %d of entry %d: %w", d.Number, d.EntryID, err)
	}
	s.numberCommitted(ctx, record)
	return s.Dispute(ctx, id)
}

// SaveOutcome: see sqliteStore.SaveOutcome. The dispute's row is locked (FOR UPDATE),
// so that a second outcome waits and is then refused.
func (s *pgStore) SaveOutcome(ctx context.Context, o NewOutcome) (DisputeRecord, error) {
	digest, err := checkNewOutcome(&o)
	if err != nil {
		return DisputeRecord{}, fmt.Errorf("couldn't save the outcome of dispute %d: %w", o.DisputeID, err)
	}
	now := s.now()
	var record int64
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		q := newPgQuerier(tx)
		var one int
		if err := q.QueryRow(ctx, `SELECT 1 FROM disputes WHERE id = ? FOR UPDATE`, o.DisputeID).Scan(&one); err != nil {
			return notFoundIfNoRows(err)
		}
		record, err = s.saveOutcome(ctx, q, o, digest, now)
		return err
	})
	if err != nil {
		return DisputeRecord{}, fmt.Errorf("couldn't save the outcome of dispute %d: %w", o.DisputeID, err)
	}
	s.numberCommitted(ctx, record)
	return s.Dispute(ctx, o.DisputeID)
}
