package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// SaveWithdrawal stores a signed withdrawal/v1 record: its ledger record (kind
// withdrawal, of the entry) pending and its withdrawals row in one transaction, with the
// report closed when closing is given, then numbers the record, as SaveSupply does. The
// entry's row is locked first, so that two operators' records of one entry are numbered
// one after the other. ErrNotFound for no such entry (or report), ErrWithdrawalConflict,
// ErrReportClosed.
func (s *pgStore) SaveWithdrawal(ctx context.Context, w Withdrawal, closing *ReportDecision) (Withdrawal, error) {
	if err := checkWithdrawal(&w); err != nil {
		return Withdrawal{}, fmt.Errorf("couldn't save withdrawal %d of entry %d: %w", w.Number, w.EntryID, err)
	}
	var id int64
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		q := newPgQuerier(tx)
		var one int
		if err := q.QueryRow(ctx, `SELECT 1 FROM entries WHERE id = ? FOR UPDATE`, w.EntryID).Scan(&one); err != nil {
			return err
		}
		var err error
		id, err = s.saveWithdrawal(ctx, q, w, closing)
		return err
	})
	if err != nil {
		return Withdrawal{}, fmt.Errorf("couldn't save withdrawal %d of entry %d: %w", w.Number, w.EntryID, notFound(err))
	}
	s.numberCommitted(ctx, id)
	return s.withdrawalByRecord(ctx, s.read, id)
}
