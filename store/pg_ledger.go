package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// pgTakenSeq is the sequence number the transaction took last (pgQueueAppendRecord): the
// counter's row is locked by the transaction, so no other writer has moved it since.
const pgTakenSeq = `(SELECT next - 1 FROM ledger_counter)`

// pgQueueAppendRecord queues the two statements that append a signed record to the
// ledger: take the next sequence number (which locks the counter's row until the
// transaction ends, see the package documentation), then insert the record with it. A
// statement queued after them references the record as pgTakenSeq.
func pgQueueAppendRecord(b *pgx.Batch, kind RecordKind, entryID int64, payloadDigest, keyID string, env []byte, now time.Time) {
	b.Queue(`UPDATE ledger_counter SET next = next + 1`).Exec(func(pgconn.CommandTag) error { return nil })
	b.Queue(`
		INSERT INTO ledger (seq, kind, entry_id, payload_digest, key_id, envelope, created_at)
		VALUES (`+pgTakenSeq+`, $1, $2, $3, $4, $5, $6)`,
		string(kind), entryID, payloadDigest, keyID, env, pgTime(now),
	).Exec(func(pgconn.CommandTag) error { return nil })
}

// DeleteEntry locks the entry's row (FOR UPDATE: it waits for a SaveRound, SaveHistory
// or SaveSupply of the entry in progress, and blocks new ones), takes a sequence number
// for the tombstone, records the tombstone and the entry's records, and deletes the
// entry: ON DELETE CASCADE deletes its history, ledger records included, which the
// schema allows only because the tombstone lists them and the entry is gone. One
// pipelined batch; the lock is taken before the counter, in the order every writer
// takes them.
func (s *pgStore) DeleteEntry(ctx context.Context, slug, reason string) error {
	if err := checkLine("reason", reason, maxDeleteReason); err != nil {
		return fmt.Errorf("couldn't delete entry %q: %w", slug, err)
	}
	now := s.now()
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		b.Queue(`SELECT 1 FROM entries WHERE slug = $1 FOR UPDATE`, slug).QueryRow(func(row pgx.Row) error {
			var one int
			err := row.Scan(&one)
			if errors.Is(err, pgx.ErrNoRows) {
				return ErrNotFound
			}
			return err
		})
		b.Queue(`UPDATE ledger_counter SET next = next + 1`).Exec(func(pgconn.CommandTag) error { return nil })
		b.Queue(`
			INSERT INTO ledger_tombstones (seq, entry_id, entry_slug, reason, removed, deleted_at)
			SELECT `+pgTakenSeq+`, e.id, e.slug, $2, (SELECT count(*) FROM ledger WHERE entry_id = e.id), $3
			FROM entries e WHERE e.slug = $1`, slug, reason, pgTime(now),
		).Exec(func(pgconn.CommandTag) error { return nil })
		b.Queue(`
			INSERT INTO ledger_removed (seq, tombstone, kind, payload_digest)
			SELECT l.seq, `+pgTakenSeq+`, l.kind, l.payload_digest
			FROM ledger l WHERE l.entry_id = (SELECT id FROM entries WHERE slug = $1)
			ORDER BY l.seq`, slug,
		).Exec(func(pgconn.CommandTag) error { return nil })
		b.Queue(`DELETE FROM entries WHERE slug = $1`, slug).Exec(func(pgconn.CommandTag) error { return nil })
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return fmt.Errorf("couldn't delete entry %q: %w", slug, err)
	}
	return nil
}

// Ledger walks the matching records in keyset pages of ledgerPage by sequence number
// (the primary key; with an entry, ledger_entry). No connection, transaction or snapshot
// is held while fn runs. The walk ends at the newest record committed when it began; as
// records are committed in sequence order, it has then seen every record up to that one.
func (s *pgStore) Ledger(ctx context.Context, f LedgerFilter, fn func(LedgerRecord) error) error {
	if err := checkLedgerFilter(f); err != nil {
		return fmt.Errorf("couldn't read the ledger: %w", err)
	}
	var last *int64
	if err := s.pool.QueryRow(ctx, `SELECT max(seq) FROM ledger`).Scan(&last); err != nil {
		return fmt.Errorf("couldn't read the ledger: %w", err)
	}
	if last == nil {
		return nil
	}
	// Fixed fragments only; values are named parameters.
	query := `
		SELECT ` + ledgerColumns + `
		FROM ` + ledgerFrom + `
		WHERE l.seq > @after AND l.seq <= @last`
	args := pgx.NamedArgs{"after": f.AfterSeq, "last": *last, "page": ledgerPage}
	if !f.Since.IsZero() {
		query += ` AND l.created_at >= @since`
		args["since"] = pgTime(f.Since)
	}
	if f.EntrySlug != "" {
		query += ` AND l.entry_id = (SELECT id FROM entries WHERE slug = @slug)`
		args["slug"] = f.EntrySlug
	}
	query += ` ORDER BY l.seq LIMIT @page`
	for {
		rows, err := s.pool.Query(ctx, query, args)
		if err != nil {
			return fmt.Errorf("couldn't read the ledger: %w", err)
		}
		page, err := pgCollect(rows, func(row rowScanner) (LedgerRecord, error) {
			var (
				r     LedgerRecord
				kind  string
				ranAt *time.Time
			)
			err := row.Scan(&r.Seq, &kind, &r.EntryID, &r.EntrySlug, &r.PayloadDigest, &r.KeyID, &r.Envelope,
				&r.CreatedAt, &r.RoundID, &r.ChangeNumber, &ranAt)
			r.Kind, r.CreatedAt, r.RanAt = RecordKind(kind), r.CreatedAt.UTC(), fromPgTime(ranAt)
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
		args["after"] = page[len(page)-1].Seq
	}
}

func (s *pgStore) Tombstones(ctx context.Context, afterSeq int64) ([]Tombstone, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT t.seq, t.entry_id, t.entry_slug, t.reason, t.deleted_at, r.seq, r.kind, r.payload_digest
		FROM ledger_tombstones t LEFT JOIN ledger_removed r ON r.tombstone = t.seq
		WHERE t.seq > $1
		ORDER BY t.seq, r.seq`, afterSeq)
	if err != nil {
		return nil, fmt.Errorf("couldn't read the tombstones: %w", err)
	}
	ts, err := pgCollect(rows, func(row rowScanner) (tombstoneRow, error) {
		var (
			t            tombstoneRow
			seq          *int64
			kind, digest *string
		)
		err := row.Scan(&t.Seq, &t.EntryID, &t.EntrySlug, &t.Reason, &t.DeletedAt, &seq, &kind, &digest)
		t.DeletedAt = t.DeletedAt.UTC()
		if seq != nil && kind != nil && digest != nil {
			t.removed = &RemovedRecord{Seq: *seq, Kind: RecordKind(*kind), PayloadDigest: *digest}
		}
		return t, err
	})
	if err != nil {
		return nil, fmt.Errorf("couldn't read the tombstones: %w", err)
	}
	return groupTombstones(ts), nil
}
