package store

import (
	"context"
	"fmt"
)

// SaveWithdrawal runs on the writer: the record's ledger record (kind withdrawal, of the
// entry) and its withdrawals row in one IMMEDIATE transaction, with the report closed
// when closing is given, numbered before it commits, as SaveSupply does. Errors as
// pgStore.SaveWithdrawal.
func (s *sqliteStore) SaveWithdrawal(ctx context.Context, w Withdrawal, closing *ReportDecision) (Withdrawal, error) {
	if err := checkWithdrawal(&w); err != nil {
		return Withdrawal{}, fmt.Errorf("couldn't save withdrawal %d of entry %d: %w", w.Number, w.EntryID, err)
	}
	var out Withdrawal
	err := s.inTx(ctx, func(tx *sqliteTx) error {
		q := sqliteQuerier{tx}
		id, err := s.saveWithdrawal(ctx, q, w, closing)
		if err != nil {
			return err
		}
		if err := s.sqliteSequence(ctx, tx, id); err != nil {
			return err
		}
		out, err = s.withdrawalByRecord(ctx, q, id)
		return err
	})
	if err != nil {
		return Withdrawal{}, fmt.Errorf("couldn't save withdrawal %d of entry %d: %w", w.Number, w.EntryID, notFound(err))
	}
	return out, nil
}
