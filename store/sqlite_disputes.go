package store

import (
	"context"
	"fmt"
)

// SaveDispute stores a signed dispute and its ledger record in one transaction, the
// record numbered at commit. ErrNotFound when the round is not a signed round of the
// entry; ErrDisputeOpen; ErrDisputeNumber.
func (s *sqliteStore) SaveDispute(ctx context.Context, d NewDispute) (DisputeRecord, error) {
	digest, err := checkNewDispute(&d)
	if err != nil {
		return DisputeRecord{}, fmt.Errorf("couldn't save a dispute of entry %d: %w", d.EntryID, err)
	}
	now := s.now()
	var out DisputeRecord
	err = s.inTx(ctx, func(tx *sqliteTx) error {
		q := sqliteQuerier{tx}
		record, err := s.saveDispute(ctx, q, d, digest, now)
		if err != nil {
			return err
		}
		if err := s.sqliteSequence(ctx, tx, record); err != nil {
			return err
		}
		var id int64
		if err := q.QueryRow(ctx, `SELECT id FROM disputes WHERE ledger_id = ?`, record).Scan(&id); err != nil {
			return err
		}
		out, err = s.disputeOn(ctx, q, id)
		return err
	})
	if err != nil {
		return DisputeRecord{}, fmt.Errorf("couldn't save dispute %d of entry %d: %w", d.Number, d.EntryID, err)
	}
	return out, nil
}

// SaveOutcome stores a signed outcome and its ledger record in one transaction and
// closes the dispute. ErrNotFound without such dispute; ErrDisputeDecided.
func (s *sqliteStore) SaveOutcome(ctx context.Context, o NewOutcome) (DisputeRecord, error) {
	digest, err := checkNewOutcome(&o)
	if err != nil {
		return DisputeRecord{}, fmt.Errorf("couldn't save the outcome of dispute %d: %w", o.DisputeID, err)
	}
	now := s.now()
	var out DisputeRecord
	err = s.inTx(ctx, func(tx *sqliteTx) error {
		q := sqliteQuerier{tx}
		record, err := s.saveOutcome(ctx, q, o, digest, now)
		if err != nil {
			return err
		}
		if err := s.sqliteSequence(ctx, tx, record); err != nil {
			return err
		}
		out, err = s.disputeOn(ctx, q, o.DisputeID)
		return err
	})
	if err != nil {
		return DisputeRecord{}, fmt.Errorf("couldn't save the outcome of dispute %d: %w", o.DisputeID, err)
	}
	return out, nil
}
