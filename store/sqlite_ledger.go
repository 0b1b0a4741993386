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

// Ledger reads the matching records in keyset pages of ledgerPage by sequence number,
// each page a query of its own on a reader, so no snapshot is held while fn runs. The
// walk ends at the newest record committed when it began.
func (s *sqliteStore) Ledger(ctx context.Context, f LedgerFilter, fn func(LedgerRecord) error) error {
	if err := checkLedgerFilter(f); err != nil {
		return fmt.Errorf("couldn't read the ledger: %w", err)
	}
	var last sql.NullInt64
	if err := s.reader.QueryRowContext(ctx, `SELECT max(seq) FROM ledger`).Scan(&last); err != nil {
		return fmt.Errorf("couldn't read the ledger: %w", err)
	}
	if !last.Valid {
		return nil
	}
	// Fixed fragments only; values are parameters.
	query := `
		SELECT ` + ledgerColumns + `
		FROM ` + ledgerFrom + `
		WHERE l.seq > ? AND l.seq <= ?`
	var filters []any
	if !f.Since.IsZero() {
		query += ` AND l.created_at >= ?`
		filters = append(filters, millis(f.Since))
	}
	if f.EntrySlug != "" {
		query += ` AND l.entry_id = (SELECT id FROM entries WHERE slug = ?)`
		filters = append(filters, f.EntrySlug)
	}
	query += ` ORDER BY l.seq LIMIT ?`
	after := f.AfterSeq
	for {
		args := append([]any{after, last.Int64}, filters...)
		rows, err := s.reader.QueryContext(ctx, query, append(args, ledgerPage)...)
		if err != nil {
			return fmt.Errorf("couldn't read the ledger: %w", err)
		}
		page, err := collect(rows, func(row rowScanner) (LedgerRecord, error) {
			var (
				r                LedgerRecord
				kind             string
				createdAt, ranAt sql.NullInt64
			)
			err := row.Scan(&r.Seq, &kind, &r.EntryID, &r.EntrySlug, &r.PayloadDigest, &r.KeyID, &r.Envelope,
				&createdAt, &r.RoundID, &r.ChangeNumber, &ranAt)
			r.Kind, r.CreatedAt, r.RanAt = RecordKind(kind), fromMillis(createdAt), fromMillis(ranAt)
			return r, err
		})
		if err != nil {
			return fmt.Errorf("couldn't read a ledger record: %w", err)
		}
		for _, r := range page {
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(page) < ledgerPage {
			return nil
		}
		after = page[len(page)-1].Seq
	}
}

func (s *sqliteStore) Tombstones(ctx context.Context, afterSeq int64) ([]Tombstone, error) {
	rows, err := s.reader.QueryContext(ctx, `
		SELECT t.seq, t.entry_id, t.entry_slug, t.reason, t.deleted_at, r.seq, r.kind, r.payload_digest
		FROM ledger_tombstones t LEFT JOIN ledger_removed r ON r.tombstone = t.seq
		WHERE t.seq > ?
		ORDER BY t.seq, r.seq`, afterSeq)
	if err != nil {
		return nil, fmt.Errorf("couldn't read the tombstones: %w", err)
	}
	ts, err := collect(rows, func(row rowScanner) (tombstoneRow, error) {
		var (
			t            tombstoneRow
			deletedAt    sql.NullInt64
			seq          sql.NullInt64
			kind, digest sql.NullString
		)
		err := row.Scan(&t.Seq, &t.EntryID, &t.EntrySlug, &t.Reason, &deletedAt, &seq, &kind, &digest)
		t.DeletedAt = fromMillis(deletedAt)
		if seq.Valid {
			t.removed = &RemovedRecord{Seq: seq.Int64, Kind: RecordKind(kind.String), PayloadDigest: digest.String}
		}
		return t, err
	})
	if err != nil {
		return nil, fmt.Errorf("couldn't read the tombstones: %w", err)
	}
	return groupTombstones(ts), nil
}
