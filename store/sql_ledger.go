package store

import (
	"context"
	"fmt"
)

// Ledger walks the matching records in keyset pages of ledgerPage by sequence number
// (the primary key; with an entry, ledger_entry), each page a query of its own. No
// connection, transaction or snapshot is held while fn runs. The walk ends at the newest
// record committed when it began; as records are committed in sequence order, it has
// then seen every record up to that one.
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
	args := []any{f.AfterSeq, *last}
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
			timeCol(&r.CreatedAt), &r.RoundID, &r.ChangeNumber, timeCol(&r.RanAt))
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
