package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// sqliteEntryExists returns ErrNotFound when there is no entry with the id.
func sqliteEntryExists(ctx context.Context, tx *sqliteTx, id int64) error {
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM entries WHERE id = ?`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("entry %d: %w", id, ErrNotFound)
	}
	return err
}

// sqliteSetDue sets or, for a zero time, clears one due time.
func sqliteSetDue(ctx context.Context, tx *sqliteTx, entryID int64, u DueUpdate) error {
	var err error
	if u.At.IsZero() {
		_, err = tx.ExecContext(ctx, deleteDueSQL, entryID, string(u.Reason))
	} else {
		_, err = tx.ExecContext(ctx, upsertDueSQL, entryID, string(u.Reason), millis(u.At))
	}
	return err
}

func (s *sqliteStore) SetDue(ctx context.Context, entryID int64, u DueUpdate) error {
	if err := checkReason(u.Reason); err != nil {
		return fmt.Errorf("couldn't set due time: %w", err)
	}
	err := s.inTx(ctx, func(tx *sqliteTx) error {
		if err := sqliteEntryExists(ctx, tx, entryID); err != nil {
			return err
		}
		return sqliteSetDue(ctx, tx, entryID, u)
	})
	if err != nil {
		return fmt.Errorf("couldn't set the %s due time of entry %d: %w", u.Reason, entryID, err)
	}
	return nil
}

func (s *sqliteStore) StartAttempt(ctx context.Context, entryID int64, dueAt, at time.Time) (int, error) {
	if dueAt.IsZero() || at.IsZero() {
		return 0, errors.New("couldn't start an attempt: zero due or start time")
	}
	var n int
	err := s.inTx(ctx, func(tx *sqliteTx) error {
		if err := sqliteEntryExists(ctx, tx, entryID); err != nil {
			return err
		}
		if err := sqliteRoundNotStored(ctx, tx, entryID, dueAt); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `
			INSERT INTO attempts (entry_id, due_at, attempts, last_started_at) VALUES (?, ?, 1, ?)
			ON CONFLICT (entry_id, due_at) DO UPDATE
			SET attempts = attempts + 1, last_started_at = excluded.last_started_at
			RETURNING attempts`, entryID, millis(dueAt), millis(at)).Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("couldn't start an attempt of entry %d: %w", entryID, err)
	}
	return n, nil
}

// sqliteRoundNotStored returns ErrRoundDone when the entry's round for dueAt is stored.
func sqliteRoundNotStored(ctx context.Context, tx *sqliteTx, entryID int64, dueAt time.Time) error {
	var one int
	err := tx.QueryRowContext(ctx,
		`SELECT 1 FROM rounds WHERE entry_id = ? AND due_at = ?`, entryID, millis(dueAt)).Scan(&one)
	switch {
	case err == nil:
		return ErrRoundDone
	case errors.Is(err, sql.ErrNoRows):
		return nil
	}
	return err
}
