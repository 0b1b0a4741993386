package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

func (s *pgStore) SaveRound(ctx context.Context, r *Round) (int64, error) {
	if err := checkRound(r); err != nil {
		return 0, fmt.Errorf("couldn't save round: %w", err)
	}
	var id, record int64
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		id, record, err = pgSaveRound(ctx, tx, r, s.now())
		return err
	})
	if err == nil && record != 0 {
		s.numberCommitted(ctx, record)
	}
	if err != nil {
		return 0, fmt.Errorf("couldn't save the round of entry %d due %s: %w",
			r.EntryID, r.DueAt.UTC().Format(time.RFC3339Nano), err)
	}
	return id, nil
}

// pgSaveRound writes everything a checked round changes, in tx; see SaveRound. It
// returns the round's id and its ledger record's (0 when unsigned), which SaveRound
// numbers once tx has committed.
//
// Its statements go in two pipelined batches, one round trip each; the second needs
// what the first returned. A statement in a batch runs when the one before it has
// finished, on a snapshot of its own (READ COMMITTED), as if sent alone. Measured on
// loopback with synchronous_commit off, on a busy 2-core machine: 1.1 to 1.8 ms a round
// batched, 1.9 to 2.3 ms with a round trip per statement.
func pgSaveRound(ctx context.Context, tx pgx.Tx, r *Round, now time.Time) (id, record int64, err error) {
	day := utcDay(r.StartedAt)

	// 1. Lock the entry, which orders this round after any other SaveRound or
	// StartAttempt of the entry in any process; then, seeing what the lock's previous
	// holder committed, look for the round and read the day's uptime.
	var (
		uptime uptimeCounts
		before string // the day's status before this round; "" for a day without rounds
	)
	b := &pgx.Batch{}
	pgQueueLockEntry(b, r.EntryID)
	pgQueueRoundNotStored(b, r.EntryID, r.DueAt)
	b.Queue(`SELECT answered, no_answer, inconclusive, status FROM uptime_days WHERE entry_id = $1 AND day = $2::date`,
		r.EntryID, day).QueryRow(func(row pgx.Row) error {
		err := row.Scan(&uptime.Answered, &uptime.NoAnswer, &uptime.Inconclusive, &before)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("couldn't read the uptime of %s: %w", day, err)
		}
		return nil
	})
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return 0, 0, err
	}

	// 2. Everything else, in one batch: the surface, the day's uptime, the entry and its
	// due times, then the ledger record (when signed, pending: SaveRound numbers it after
	// the commit) and the round, which references it.
	fpSurface, _, _, _ := fingerprintArgs(r)
	b = &pgx.Batch{}
	if fp := r.Fingerprints; fp != nil {
		b.Queue(pgInsertSurface, fp.Surface, r.Surface, pgTime(now)).Exec(func(pgconn.CommandTag) error { return nil })
		if r.Instructions != nil {
			b.Queue(pgInsertSurface, fp.Instructions, r.Instructions, pgTime(now)).Exec(func(pgconn.CommandTag) error { return nil })
		}
	}
	uptime.add(r.Uptime)
	after := uptime.status()
	onlineDelta, countedDelta := uptimeDelta(before, after)
	b.Queue(pgUpsertUptime, r.EntryID, day, uptime.Answered, uptime.NoAnswer, uptime.Inconclusive, after).Exec(func(pgconn.CommandTag) error { return nil })
	// The entry's last surface is that of its newest round with one (newest by start,
	// then by id, as Rounds orders them): this one, unless a round started later has
	// one. The index on (entry_id, started_at) bounds the search to the newer rounds.
	b.Queue(`
		UPDATE entries SET
			last_round_at = greatest(last_round_at, $2),
			last_surface = CASE
				WHEN $3::text IS NOT NULL AND NOT EXISTS (
					SELECT 1 FROM rounds
					WHERE entry_id = $1 AND started_at > $2 AND fp_surface IS NOT NULL)
				THEN $3 ELSE last_surface END,
			uptime_online_days = uptime_online_days + $4,
			uptime_counted_days = uptime_counted_days + $5
		WHERE id = $1`,
		r.EntryID, pgTime(r.StartedAt), fpSurface, onlineDelta, countedDelta,
	).Exec(func(pgconn.CommandTag) error { return nil })
	for _, u := range r.Due {
		pgQueueSetDue(b, r.EntryID, u)
	}
	insert := pgInsertRound
	if r.Signed() {
		// Signed exactly when the record is stored: both in this transaction.
		pgQueueAppendRecord(b, RecordProbe, r.EntryID, r.PayloadDigest, r.KeyID, r.Envelope, now, &record)
		insert = pgInsertSignedRound
	}
	b.Queue(insert, roundArgs(pgDialect, r)...).QueryRow(func(row pgx.Row) error { return row.Scan(&id) })
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		if isPgViolation(err, pgRoundConstraint) {
			return 0, 0, ErrRoundDone
		}
		return 0, 0, fmt.Errorf("couldn't store the surface, uptime, entry, due times, ledger record or round: %w", err)
	}
	return id, record, nil
}

// The shared write statements (sql_writes.go) in PostgreSQL's spelling, bound once.
var (
	pgInsertSurface      = bindDollar(insertSurfaceSQL)
	pgDeleteDue          = bindDollar(deleteDueSQL)
	pgUpsertDue          = bindDollar(upsertDueSQL)
	pgUpsertUptime       = bindDollar(upsertUptimeSQL(pgDialect))
	pgInsertRound        = bindDollar(insertRoundSQL(`NULL`))
	pgInsertSignedRound  = bindDollar(insertRoundSQL(pgRecordID))
	pgInsertSupply       = bindDollar(insertSupplySQL(`NULL`))
	pgInsertSignedSupply = bindDollar(insertSupplySQL(pgRecordID))
)
