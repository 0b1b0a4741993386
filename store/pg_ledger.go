package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// pgRecordID is the id of the ledger record the transaction inserted last
// (pgQueueAppendRecord): the session's last value of the ledger's identity sequence. A
// statement queued after the insert references the record with it.
const pgRecordID = `currval('ledger_id_seq')`

// The sequencing statements (sql_ledger.go) in PostgreSQL's spelling, and the lock the
// step takes first.
var (
	pgInsertRecord   = bindDollar(insertRecordSQL)
	pgNumberPending  = bindDollar(numberPendingSQL)
	pgAdvanceCounter = bindDollar(advanceCounterSQL)
)

// pgLockCounter locks the counter's row until the step's transaction ends: a step
// waits for the one before it to commit, and then sees (READ COMMITTED, each statement
// on a fresh snapshot) every number it gave. With a record's id ($1 not 0) it locks only
// while that record is pending, so a writer whose record another writer's step numbered
// takes no lock at all. SQLite needs none of it: its write transaction holds the
// database.
const pgLockCounter = `
	SELECT 1 FROM ledger_counter
	WHERE $1::bigint = 0 OR EXISTS (SELECT 1 FROM ledger WHERE id = $1 AND seq IS NULL)
	FOR UPDATE`

// pgHasPendingIndex says whether migration 0007 is applied (hasPending).
const pgHasPendingIndex = `SELECT to_regclass('ledger_pending') IS NOT NULL`

// pgQueueAppendRecord queues the insert of a pending signed record (see the package
// documentation) and scans its id into id. A statement queued after it references the
// record as pgRecordID.
func pgQueueAppendRecord(b *pgx.Batch, kind RecordKind, entryID int64, payloadDigest, keyID string, env []byte, now time.Time, id *int64) {
	b.Queue(pgInsertRecord, string(kind), entryID, payloadDigest, keyID, env, pgTime(now)).
		QueryRow(func(row pgx.Row) error { return row.Scan(id) })
}

// sequence runs a sequencing step for the committed record own (0: for every pending
// record; see pgLockCounter), so that it is numbered when sequence returns. The step is
// one pipelined batch outside any transaction, which PostgreSQL runs as one implicit
// transaction: lock, number, count, commit, in one round trip; the lock is held for
// the step's own statements and its commit only, never for another write's.
//
// The caller's transaction has committed when sequence runs, so a cancelled ctx must
// not keep the record from its number: the step runs without ctx's cancellation. (Were
// it to fail anyway, the record stays pending until the next step, any writer's or
// Open's.)
func (s *pgStore) sequence(ctx context.Context, own int64) error {
	if s.leavePending.Load() {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	b := &pgx.Batch{}
	b.Queue(pgLockCounter, own).Exec(func(pgconn.CommandTag) error { return nil })
	b.Queue(pgNumberPending, own, own).Exec(func(pgconn.CommandTag) error { return nil })
	b.Queue(pgAdvanceCounter).Exec(func(pgconn.CommandTag) error { return nil })
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("couldn't number the ledger's pending records: %w", err)
	}
	return nil
}

// numberCommitted numbers the record own of a write that has committed: a sequencing
// step, tried twice. Should both fail, the write still stands and must not be reported
// as failed (a caller would retry what is stored): the record stays pending, a warning
// is logged, and the next step (any writer's, or Open's) numbers it.
func (s *pgStore) numberCommitted(ctx context.Context, own int64) {
	err := s.sequence(ctx, own)
	if err == nil {
		return
	}
	if err = s.sequence(ctx, own); err != nil {
		s.log.Warn("a stored ledger record is not numbered yet; the next sequencing step numbers it",
			slog.Int64("record", own), slog.Any("err", err))
	}
}

// sequencePending runs a sequencing step when a record is pending (a writer stopped
// between its commit and its step): Open and Migrate call it.
func (s *pgStore) sequencePending(ctx context.Context) error {
	pending, err := s.hasPending(ctx, pgHasPendingIndex)
	if err != nil {
		return fmt.Errorf("couldn't look for the ledger's pending records: %w", err)
	}
	if !pending {
		return nil
	}
	return s.sequence(ctx, 0)
}

// DeleteEntry locks the entry's row (FOR UPDATE: it waits for a SaveRound, SaveHistory
// or SaveSupply of the entry in progress, and blocks new ones), then the ledger counter,
// in the order every writer takes them (a writer takes the counter only after its
// transaction, and the entry's lock, are over). Holding both, it numbers the pending
// records (its entry's among them: a tombstone lists numbers), takes the next number
// for the tombstone, records the tombstone and the entry's records, and deletes the
// entry: ON DELETE CASCADE deletes its history, ledger records included, which the
// schema allows only because the tombstone lists them and the entry is gone. One
// pipelined batch.
func (s *pgStore) DeleteEntry(ctx context.Context, slug, reason string) error {
	if err := checkLine("reason", reason, maxDeleteReason); err != nil {
		return fmt.Errorf("couldn't delete entry %q: %w", slug, err)
	}
	return s.deleteWithRemotes(ctx, slug, reason, s.DeleteEntry, s.deleteOne)
}

// deleteOne deletes the entry with the slug and records its tombstone, once its
// remotes (Entry.Parent) are gone: errRemotesAdded when one was added meanwhile.
func (s *pgStore) deleteOne(ctx context.Context, slug, reason string) error {
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
		b.Queue(pgLockCounter, 0).Exec(func(pgconn.CommandTag) error { return nil })
		b.Queue(pgNumberPending, 0, 0).Exec(func(pgconn.CommandTag) error { return nil })
		b.Queue(pgAdvanceCounter).Exec(func(pgconn.CommandTag) error { return nil })
		b.Queue(`
			INSERT INTO ledger_tombstones (seq, entry_id, entry_slug, reason, removed, deleted_at)
			SELECT (SELECT next FROM ledger_counter), e.id, e.slug, $2,
			       (SELECT count(*) FROM ledger WHERE entry_id = e.id), $3
			FROM entries e WHERE e.slug = $1`, slug, reason, pgTime(now),
		).Exec(func(pgconn.CommandTag) error { return nil })
		b.Queue(`UPDATE ledger_counter SET next = next + 1`).Exec(func(pgconn.CommandTag) error { return nil })
		b.Queue(`
			INSERT INTO ledger_removed (seq, tombstone, kind, payload_digest)
			SELECT l.seq, (SELECT next - 1 FROM ledger_counter), l.kind, l.payload_digest
			FROM ledger l WHERE l.entry_id = (SELECT id FROM entries WHERE slug = $1)
			ORDER BY l.seq`, slug,
		).Exec(func(pgconn.CommandTag) error { return nil })
		b.Queue(`SELECT count(*) FROM entries WHERE parent_id = (SELECT id FROM entries WHERE slug = $1)`, slug).QueryRow(func(row pgx.Row) error {
			var n int
			if err := row.Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return errRemotesAdded
			}
			return nil
		})
		b.Queue(`DELETE FROM entries WHERE slug = $1`, slug).Exec(func(pgconn.CommandTag) error { return nil })
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return fmt.Errorf("couldn't delete entry %q: %w", slug, err)
	}
	return nil
}
