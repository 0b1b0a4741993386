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
