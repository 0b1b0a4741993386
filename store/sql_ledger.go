package store

import (
	"context"
	"fmt"
)

// The ledger's writes, written once. A writer inserts its record pending (seq NULL) with
// insertRecordSQL, in the transaction that stores what the record signs; a sequencing
// step then numbers it (see the package documentation, "The ledger"). The step holds the
// ledger counter's lock while it runs numberPendingSQL and advanceCounterSQL: on
// PostgreSQL a row lock taken first (pgLockCounter), on SQLite the write transaction the
// store runs the step in, which holds the database's write lock.
const (
	// insertRecordSQL stores a pending record (kind, entry_id, payload_digest, key_id,
	// envelope, created_at) and returns its id.
	insertRecordSQL = `
	INSERT INTO ledger (kind, entry_id, payload_digest, key_id, envelope, created_at)
	VALUES (?, ?, ?, ?, ?, ?)
	RETURNING id`

	// numberPendingSQL numbers every pending record the statement sees, in id order, from
	// the counter's next number on. Its two parameters are one record's id: when it is
	// not 0 and that record is numbered already (by another writer's step), it numbers
	// nothing, and the writer's step costs no more than this statement. The caller holds
	// the counter; the statement sees only committed records (and its own transaction's).
	numberPendingSQL = `
	UPDATE ledger SET seq = p.seq
	FROM (SELECT l.id, c.next - 1 + row_number() OVER (ORDER BY l.id) AS seq
	      FROM ledger l CROSS JOIN ledger_counter c
	      WHERE l.seq IS NULL) p
	WHERE ledger.id = p.id
	  AND (CAST(? AS BIGINT) = 0 OR EXISTS (SELECT 1 FROM ledger own WHERE own.id = ? AND own.seq IS NULL))`

	// advanceCounterSQL moves the counter past the numbers numberPendingSQL gave: with the
	// counter held, every number at or above it was given by this step. Nothing numbered,
	// nothing written.
	advanceCounterSQL = `
	UPDATE ledger_counter SET next = next + p.n
	FROM (SELECT count(*) AS n FROM ledger WHERE seq >= (SELECT next FROM ledger_counter)) p
	WHERE p.n > 0`

	// pendingSQL says whether a record is pending: Open and Migrate run a sequencing step
	// only then, so that opening a store to read takes no write lock.
	pendingSQL = `SELECT EXISTS (SELECT 1 FROM ledger WHERE seq IS NULL)`
)

// hasPending reports whether the ledger holds a pending record; false, without error,
// when the schema has no sequencer yet (migration 0007, whose index ledger_pending
// hasPendingIndex finds, is not applied: Open does not migrate).
func (s *sqlStore) hasPending(ctx context.Context, hasPendingIndex string) (bool, error) {
	var ready bool
	if err := s.read.QueryRow(ctx, hasPendingIndex).Scan(&ready); err != nil || !ready {
		return false, err
	}
	var pending bool
	err := s.read.QueryRow(ctx, pendingSQL).Scan(&pending)
	return pending, err
}

// Ledger walks the numbered records in keyset pages of ledgerPage by sequence number
// (the unique index ledger_seq; with an entry, ledger_entry), each page a query of its
// own; pending records (seq NULL) are not walked until numbered. No connection,
// transaction or snapshot is held while fn runs. The walk ends at the newest record
// numbered when it began; as numbers are committed in order (each sequencing step
// commits a run of them at once, under the counter's lock), it has then seen every
// record up to that one.
func (s *sqlStore) Ledger(ctx context.Context, f LedgerFilter, fn func(LedgerRecord) error) error {
	if err := checkLedgerFilter(f); err != nil {
		return fmt.Errorf("couldn't read the ledger: %w", err)
	}
	var last *int64
	if err := s.read.QueryRow(ctx, `SELECT max(seq) FROM ledger`).Scan(&last); err != nil {
		return fmt.Errorf("couldn't read the ledger: %w", err)
	}
	if last == nil {
		return nil
	}
	// Fixed fragments only; values are parameters.
	query := `
		SELECT ` + ledgerColumns + `
		FROM ` + ledgerFrom + `
		WHERE l.seq > ? AND l.seq <= ?`
	through := *last
	if f.Through > 0 {
		through = min(through, f.Through)
	}
	args := []any{f.AfterSeq, through}
	if !f.Since.IsZero() {
		query += ` AND l.created_at >= ?`
		args = append(args, s.d.time(f.Since))
	}
	if f.EntrySlug != "" {
		query += ` AND l.entry_id = (SELECT id FROM entries WHERE slug = ?)`
		args = append(args, f.EntrySlug)
	}
	query += ` ORDER BY l.seq LIMIT ?`
	args = append(args, ledgerPage)
	scan := func(row rowScanner) (LedgerRecord, error) {
		var (
			r    LedgerRecord
			kind string
		)
		err := row.Scan(&r.Seq, &kind, &r.EntryID, &r.EntrySlug, &r.PayloadDigest, &r.KeyID, &r.Envelope,
			timeCol(&r.CreatedAt), &r.RoundID, &r.ChangeNumber, timeCol(&r.RanAt), &r.LogIndex)
		r.Kind = RecordKind(kind)
		return r, err
	}
	for {
		page, err := queryAll(ctx, s.read, scan, query, args...)
		if err != nil {
			return fmt.Errorf("couldn't read the ledger: %w", err)
		}
		for _, r := range page {
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(page) < ledgerPage {
			return nil
		}
		args[0] = page[len(page)-1].Seq
	}
}

func (s *sqlStore) Tombstones(ctx context.Context, afterSeq int64) ([]Tombstone, error) {
	ts, err := queryAll(ctx, s.read, func(row rowScanner) (tombstoneRow, error) {
		var (
			t            tombstoneRow
			seq          *int64
			kind, digest *string
		)
		err := row.Scan(&t.Seq, &t.EntryID, &t.EntrySlug, &t.Reason, timeCol(&t.DeletedAt), &seq, &kind, &digest)
		if seq != nil && kind != nil && digest != nil {
			t.removed = &RemovedRecord{Seq: *seq, Kind: RecordKind(*kind), PayloadDigest: *digest}
		}
		return t, err
	}, `
		SELECT t.seq, t.entry_id, t.entry_slug, t.reason, t.deleted_at, r.seq, r.kind, r.payload_digest
		FROM ledger_tombstones t LEFT JOIN ledger_removed r ON r.tombstone = t.seq
		WHERE t.seq > ?
		ORDER BY t.seq, r.seq`, afterSeq)
	if err != nil {
		return nil, fmt.Errorf("couldn't read the tombstones: %w", err)
	}
	return groupTombstones(ts), nil
}
