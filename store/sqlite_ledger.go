package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// sqliteAppendRecord appends a signed record to the ledger in tx and returns its
// sequence number: the counter is incremented, then the record inserted with the number
// taken. The transaction holds the database's write lock, so the numbers follow commit
// order (see the package documentation).
func sqliteAppendRecord(ctx context.Context, tx *sqliteTx, kind RecordKind, entryID int64, payloadDigest, keyID string, env []byte, now time.Time) (int64, error) {
	seq, err := sqliteTakeSeq(ctx, tx)
	if err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `
		INSERT INTO ledger (seq, kind, entry_id, payload_digest, key_id, envelope, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, seq, string(kind), entryID, payloadDigest, keyID, env, millis(now)); err != nil {
		return 0, fmt.Errorf("couldn't store the %s record: %w", kind, err)
	}
	return seq, nil
}

// sqliteTakeSeq takes the ledger's next sequence number in tx.
func sqliteTakeSeq(ctx context.Context, tx *sqliteTx) (int64, error) {
	var seq int64
	if err := tx.QueryRowContext(ctx, `UPDATE ledger_counter SET next = next + 1 RETURNING next - 1`).Scan(&seq); err != nil {
		return 0, fmt.Errorf("couldn't take a ledger sequence number: %w", err)
	}
	return seq, nil
}

// DeleteEntry runs on the writer: it takes a sequence number for the tombstone, records
// the tombstone and the entry's records, and deletes the entry, whose ON DELETE CASCADE
// deletes its history, ledger records included (which the schema allows only because
// the tombstone lists them and the entry is gone).
func (s *sqliteStore) DeleteEntry(ctx context.Context, slug, reason string) error {
	if err := checkLine("reason", reason, maxDeleteReason); err != nil {
		return fmt.Errorf("couldn't delete entry %q: %w", slug, err)
	}
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
		seq, err := sqliteTakeSeq(ctx, tx)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `
			INSERT INTO ledger_tombstones (seq, entry_id, entry_slug, reason, removed, deleted_at)
			VALUES (?1, ?2, ?3, ?4, (SELECT count(*) FROM ledger WHERE entry_id = ?2), ?5)`,
			seq, id, slug, reason, millis(now)); err != nil {
			return fmt.Errorf("couldn't record the tombstone: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `
			INSERT INTO ledger_removed (seq, tombstone, kind, payload_digest)
			SELECT seq, ?, kind, payload_digest FROM ledger WHERE entry_id = ? ORDER BY seq`, seq, id); err != nil {
			return fmt.Errorf("couldn't record the removed records: %w", err)
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM entries WHERE id = ?`, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("couldn't delete entry %q: %w", slug, err)
	}
	return nil
}
