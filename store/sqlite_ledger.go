package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// sqliteHasPendingIndex says whether migration 0007 is applied (hasPending).
const sqliteHasPendingIndex = `
	SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'ledger_pending')`

// sqliteAppendRecord stores a pending signed record in tx and returns its id. The
// transaction numbers it before it commits (sqliteSequence).
func sqliteAppendRecord(ctx context.Context, tx *sqliteTx, kind RecordKind, entryID int64, payloadDigest, keyID string, env []byte, now time.Time) (int64, error) {
	var id int64
	if err := tx.QueryRowContext(ctx, insertRecordSQL,
		string(kind), entryID, payloadDigest, keyID, env, millis(now)).Scan(&id); err != nil {
		return 0, fmt.Errorf("couldn't store the %s record: %w", kind, err)
	}
	return id, nil
}

// sqliteSequence runs the sequencing step in tx, a write transaction, for the record own
// (0: for every pending record).
//
// Why in the writer's own transaction, where PostgreSQL numbers after the commit: SQLite
// has one writer at a time, so the write transaction already holds what the counter's
// lock gives on PostgreSQL, and commits are serialized anyway; a step of its own would
// cost a second transaction (and commit) per signed write for nothing. So on SQLite a
// record is numbered when the transaction that stores it commits, and is never left
// pending (but by leavePending, in tests).
func (s *sqliteStore) sqliteSequence(ctx context.Context, tx *sqliteTx, own int64) error {
	if s.leavePending.Load() {
		return nil
	}
	if _, err := tx.ExecContext(ctx, numberPendingSQL, own, own); err != nil {
		return fmt.Errorf("couldn't number the ledger's pending records: %w", err)
	}
	if _, err := tx.ExecContext(ctx, advanceCounterSQL); err != nil {
		return fmt.Errorf("couldn't move the ledger counter: %w", err)
	}
	return nil
}

// sequencePending numbers the pending records, if any, in a write transaction of its
// own: Open and Migrate call it.
func (s *sqliteStore) sequencePending(ctx context.Context) error {
	pending, err := s.hasPending(ctx, sqliteHasPendingIndex)
	if err != nil {
		return fmt.Errorf("couldn't look for the ledger's pending records: %w", err)
	}
	if !pending {
		return nil
	}
	return s.inTx(ctx, func(tx *sqliteTx) error { return s.sqliteSequence(ctx, tx, 0) })
}

// DeleteEntry runs on the writer: it numbers the pending records (a tombstone lists
// numbers), takes the next number for the tombstone, records the tombstone and the
// entry's records, and deletes the entry, whose ON DELETE CASCADE deletes its history,
// ledger records included (which the schema allows only because the tombstone lists
// them and the entry is gone).
func (s *sqliteStore) DeleteEntry(ctx context.Context, slug, reason string) error {
	if err := checkLine("reason", reason, maxDeleteReason); err != nil {
		return fmt.Errorf("couldn't delete entry %q: %w", slug, err)
	}
	return s.deleteWithRemotes(ctx, slug, reason, s.DeleteEntry, s.deleteOne)
}

// deleteOne deletes the entry with the slug and records its tombstone, once its
// remotes (Entry.Parent) are gone: errRemotesAdded when one was added meanwhile.
func (s *sqliteStore) deleteOne(ctx context.Context, slug, reason string) error {
	now := s.now()
	err := s.inTx(ctx, func(tx *sqliteTx) error {
		var id int64
		err := tx.QueryRowContext(ctx, `SELECT id FROM entries WHERE slug = ?`, slug).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, numberPendingSQL, 0, 0); err != nil {
			return fmt.Errorf("couldn't number the ledger's pending records: %w", err)
		}
		if _, err := tx.ExecContext(ctx, advanceCounterSQL); err != nil {
			return fmt.Errorf("couldn't move the ledger counter: %w", err)
		}
		var seq int64
		if err := tx.QueryRowContext(ctx, `SELECT next FROM ledger_counter`).Scan(&seq); err != nil {
			return fmt.Errorf("couldn't read the ledger counter: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `
			INSERT INTO ledger_tombstones (seq, entry_id, entry_slug, reason, removed, deleted_at)
			VALUES (?1, ?2, ?3, ?4, (SELECT count(*) FROM ledger WHERE entry_id = ?2), ?5)`,
			seq, id, slug, reason, millis(now)); err != nil {
			return fmt.Errorf("couldn't record the tombstone: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE ledger_counter SET next = next + 1`); err != nil {
			return fmt.Errorf("couldn't move the ledger counter: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `
			INSERT INTO ledger_removed (seq, tombstone, kind, payload_digest)
			SELECT seq, ?, kind, payload_digest FROM ledger WHERE entry_id = ? ORDER BY seq`, seq, id); err != nil {
			return fmt.Errorf("couldn't record the removed records: %w", err)
		}
		var remotes int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM entries WHERE parent_id = ?`, id).Scan(&remotes); err != nil {
			return err
		}
		if remotes > 0 {
			return errRemotesAdded
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM entries WHERE id = ?`, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("couldn't delete entry %q: %w", slug, err)
	}
	return nil
}
