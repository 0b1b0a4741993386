package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

func (s *sqliteStore) SaveRound(ctx context.Context, r *Round) (int64, error) {
	if err := checkRound(r); err != nil {
		return 0, fmt.Errorf("couldn't save round: %w", err)
	}
	var id int64
	err := s.inTx(ctx, func(tx *sqliteTx) error {
		var err error
		id, err = sqliteSaveRound(ctx, tx, r, s.now())
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("couldn't save the round of entry %d due %s: %w",
			r.EntryID, r.DueAt.UTC().Format(time.RFC3339Nano), err)
	}
	return id, nil
}

// sqliteSaveRound writes everything a checked round changes, in tx; see SaveRound.
func sqliteSaveRound(ctx context.Context, tx *sqliteTx, r *Round, now time.Time) (int64, error) {
	if err := sqliteEntryExists(ctx, tx, r.EntryID); err != nil {
		return 0, err
	}
	if err := sqliteRoundNotStored(ctx, tx, r.EntryID, r.DueAt); err != nil {
		return 0, err
	}

	if fp := r.Fingerprints; fp != nil {
		if _, err := tx.ExecContext(ctx, insertSurfaceSQL, fp.Surface, r.Surface, millis(now)); err != nil {
			return 0, fmt.Errorf("couldn't store the surface: %w", err)
		}
		if r.Instructions != nil {
			if _, err := tx.ExecContext(ctx, insertSurfaceSQL, fp.Instructions, r.Instructions, millis(now)); err != nil {
				return 0, fmt.Errorf("couldn't store the instructions: %w", err)
			}
		}
	}
	fpSurface, _, _, _ := fingerprintArgs(r)

	// Signed exactly when the ledger record is stored: both in this transaction, which
	// numbers the record last (sqliteSequence).
	var record any
	if r.Signed() {
		id, err := sqliteAppendRecord(ctx, tx, RecordProbe, r.EntryID, r.PayloadDigest, r.KeyID, r.Envelope, now)
		if err != nil {
			return 0, err
		}
		record = id
	}

	var id int64
	err := tx.QueryRowContext(ctx, sqliteInsertRound, append(roundArgs(sqliteDialect, r), record)...).Scan(&id)
	if isUniqueViolation(err) {
		return 0, ErrRoundDone
	}
	if err != nil {
		return 0, fmt.Errorf("couldn't store the round: %w", err)
	}

	onlineDelta, countedDelta, err := sqliteCountUptime(ctx, tx, r.EntryID, utcDay(r.StartedAt), r.Uptime)
	if err != nil {
		return 0, err
	}

	// The entry's last surface is that of its newest round with one (newest by start,
	// then by id, as Rounds orders them): this one, unless a round started later has one.
	newestSurface := false
	if r.Fingerprints != nil {
		err := tx.QueryRowContext(ctx, `
			SELECT NOT EXISTS (
				SELECT 1 FROM rounds
				WHERE entry_id = ? AND started_at > ? AND fp_surface IS NOT NULL)`,
			r.EntryID, millis(r.StartedAt)).Scan(&newestSurface)
		if err != nil {
			return 0, fmt.Errorf("couldn't find the entry's newest surface: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `
		UPDATE entries SET
			last_round_at = max(coalesce(last_round_at, ?1), ?1),
			last_surface = CASE WHEN ?2 THEN ?3 ELSE last_surface END,
			uptime_online_days = uptime_online_days + ?4,
			uptime_counted_days = uptime_counted_days + ?5
		WHERE id = ?6`,
		millis(r.StartedAt), boolInt(newestSurface), fpSurface, onlineDelta, countedDelta, r.EntryID); err != nil {
		return 0, fmt.Errorf("couldn't update the entry: %w", err)
	}

	for _, u := range r.Due {
		if err := sqliteSetDue(ctx, tx, r.EntryID, u); err != nil {
			return 0, fmt.Errorf("couldn't update the %s due time: %w", u.Reason, err)
		}
	}
	if record != nil {
		if err := tx.s.sqliteSequence(ctx, tx, record.(int64)); err != nil {
			return 0, err
		}
	}
	return id, nil
}

// sqliteCountUptime counts a round of class c on the entry's day and returns how the
// day's new status changes the entry's online and counted days.
func sqliteCountUptime(ctx context.Context, tx *sqliteTx, entryID int64, day string, c UptimeClass) (online, counted int, err error) {
	var (
		u      uptimeCounts
		before string
	)
	err = tx.QueryRowContext(ctx, `
		SELECT answered, no_answer, inconclusive, status FROM uptime_days WHERE entry_id = ? AND day = ?`,
		entryID, day).Scan(&u.Answered, &u.NoAnswer, &u.Inconclusive, &before)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, 0, fmt.Errorf("couldn't read the uptime of %s: %w", day, err)
	}
	u.add(c)
	after := u.status()
	if _, err := tx.ExecContext(ctx, sqliteUpsertUptime, entryID, day, u.Answered, u.NoAnswer, u.Inconclusive, after); err != nil {
		return 0, 0, fmt.Errorf("couldn't count the uptime of %s: %w", day, err)
	}
	online, counted = uptimeDelta(before, after)
	return online, counted, nil
}

// The shared write statements (sql_writes.go) that SQLite spells with a parameter more
// or a day, built once: the statement cache (sqliteTx) keys on the query text.
var (
	sqliteInsertRound  = insertRoundSQL(`?`)
	sqliteUpsertUptime = upsertUptimeSQL(sqliteDialect)
	sqliteInsertSupply = insertSupplySQL(`?`)
)
