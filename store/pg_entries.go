package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// pgQueueLockEntry queues the statement that locks the entry's row until the
// transaction ends; its result is ErrNotFound when there is no such entry. FOR NO KEY
// UPDATE serializes SaveRound and StartAttempt of one entry (and waits for or blocks
// DeleteEntry), but not the writers of rows that merely reference the entry.
func pgQueueLockEntry(b *pgx.Batch, id int64) {
	b.Queue(`SELECT 1 FROM entries WHERE id = $1 FOR NO KEY UPDATE`, id).QueryRow(func(row pgx.Row) error {
		var one int
		err := row.Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("entry %d: %w", id, ErrNotFound)
		}
		return err
	})
}

// pgQueueRoundNotStored queues the statement whose result is ErrRoundDone when the
// entry's round for dueAt is stored. Queued after pgQueueLockEntry it runs once the
// lock is held, on a snapshot of its own, and so sees the rounds committed by whoever
// held the lock before.
func pgQueueRoundNotStored(b *pgx.Batch, entryID int64, dueAt time.Time) {
	b.Queue(`SELECT EXISTS (SELECT 1 FROM rounds WHERE entry_id = $1 AND due_at = $2)`,
		entryID, pgTime(dueAt)).QueryRow(func(row pgx.Row) error {
		var stored bool
		err := row.Scan(&stored)
		if err == nil && stored {
			return ErrRoundDone
		}
		return err
	})
}

// pgQueueSetDue queues the statement that sets or, for a zero time, clears one due time.
func pgQueueSetDue(b *pgx.Batch, entryID int64, u DueUpdate) {
	var q *pgx.QueuedQuery
	if u.At.IsZero() {
		q = b.Queue(pgDeleteDue, entryID, string(u.Reason))
	} else {
		q = b.Queue(pgUpsertDue, entryID, string(u.Reason), pgTime(u.At))
	}
	q.Exec(func(pgconn.CommandTag) error { return nil })
}

func (s *pgStore) SetDue(ctx context.Context, entryID int64, u DueUpdate) error {
	if err := checkReason(u.Reason); err != nil {
		return fmt.Errorf("couldn't set due time: %w", err)
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		// FOR KEY SHARE: the entry cannot be deleted under the write, and a SaveRound of
		// the entry (FOR NO KEY UPDATE) is not waited for. When there is no entry, the
		// write that follows in the batch changes nothing or fails, and is rolled back.
		b := &pgx.Batch{}
		b.Queue(`SELECT 1 FROM entries WHERE id = $1 FOR KEY SHARE`, entryID).QueryRow(func(row pgx.Row) error {
			var one int
			err := row.Scan(&one)
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("entry %d: %w", entryID, ErrNotFound)
			}
			return err
		})
		pgQueueSetDue(b, entryID, u)
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return fmt.Errorf("couldn't set the %s due time of entry %d: %w", u.Reason, entryID, err)
	}
	return nil
}

func (s *pgStore) StartAttempt(ctx context.Context, entryID int64, dueAt, at time.Time) (int, error) {
	if dueAt.IsZero() || at.IsZero() {
		return 0, errors.New("couldn't start an attempt: zero due or start time")
	}
	var n int
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		pgQueueLockEntry(b, entryID)
		pgQueueRoundNotStored(b, entryID, dueAt)
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `
			INSERT INTO attempts (entry_id, due_at, attempts, last_started_at) VALUES ($1, $2, 1, $3)
			ON CONFLICT (entry_id, due_at) DO UPDATE
			SET attempts = attempts.attempts + 1, last_started_at = excluded.last_started_at
			RETURNING attempts`, entryID, pgTime(dueAt), pgTime(at)).Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("couldn't start an attempt of entry %d: %w", entryID, err)
	}
	return n, nil
}

// pgEntryOf finds the entry of EntryDigest's slug ($1) inside each of its queries: an
// InitPlan on the slug's unique index, so no query of the batch waits for another's
// answer.
const pgEntryOf = `(SELECT id FROM entries WHERE slug = $1)`

// EntryDigest sends its queries as one batch: one round trip to the server where
// Entry, Rounds, SupplyRuns, Changes and UptimeDays take five (and the newest signed
// round one more). They run in one implicit
// transaction, each on its own snapshot (read committed), as the five calls would.
func (s *pgStore) EntryDigest(ctx context.Context, slug string, q EntryQuery) (EntryDigest, error) {
	if err := checkEntryQuery(q); err != nil {
		return EntryDigest{}, fmt.Errorf("couldn't read entry %q: %w", slug, err)
	}
	b := &pgx.Batch{}
	b.Queue(`SELECT `+entryColumns+`, `+listingColumns+` FROM entries WHERE slug = $1`, slug)
	// The facts the directory shows of the entry, read as its rows read them.
	b.Queue(bindDollar(`SELECT `+entryFactsSQL(pgDialect)+` FROM entries p WHERE p.slug = ?`), append(uptime30Args("", s.clock()), slug)...)
	b.Queue(`
		SELECT `+summaryColumns+`
		FROM rounds o LEFT JOIN ledger v ON v.id = o.ledger_id
		WHERE o.entry_id = `+pgEntryOf+`
		ORDER BY o.started_at DESC, o.id DESC
		LIMIT 1`, slug)
	b.Queue(signedRoundSQL+`(SELECT signed_round_id FROM entries WHERE slug = $1)`, slug)
	// The newest round's start when it read the tool list; else, and only then, the
	// newest of the last ToolsReadRounds that did (CASE evaluates the subquery lazily).
	// The bound is written into the query: with it as a parameter, PostgreSQL plans the
	// statement anew at every execution (a custom plan), which cost more than the
	// whole batch's execution.
	b.Queue(`
		SELECT CASE WHEN n.fp_surface IS NOT NULL THEN n.started_at ELSE (
			SELECT max(r.started_at) FROM (
				SELECT started_at, fp_surface FROM rounds
				WHERE entry_id = n.entry_id
				ORDER BY started_at DESC, id DESC
				LIMIT `+strconv.Itoa(ToolsReadRounds)+`) r
			WHERE r.fp_surface IS NOT NULL) END
		FROM (
			SELECT entry_id, started_at, fp_surface FROM rounds
			WHERE entry_id = `+pgEntryOf+`
			ORDER BY started_at DESC, id DESC
			LIMIT 1) n`, slug)
	b.Queue(`
		SELECT `+supplyStateColumns+`
		FROM supply_runs r`+supplyLedger+`
		WHERE r.entry_id = `+pgEntryOf+`
		ORDER BY r.ran_at DESC, r.id DESC
		LIMIT 1`, slug)
	if q.Changes > 0 {
		b.Queue(`
			SELECT `+changeColumnsWithoutEnvelope+`
			FROM `+changeFrom+`
			WHERE c.entry_id = `+pgEntryOf+` AND NOT c.hidden
			ORDER BY c.number DESC
			LIMIT $2`, slug, q.Changes)
	}
	if q.UptimeFrom != "" {
		b.Queue(`
			SELECT `+uptimeColumns(pgDialect)+` FROM uptime_days
			WHERE entry_id = `+pgEntryOf+` AND day BETWEEN $2::date AND $3::date
			ORDER BY day`, slug, q.UptimeFrom, q.UptimeTo)
	}
	b.Queue(`SELECT `+partColumns+` FROM entry_parts WHERE entry_id = `+pgEntryOf+` ORDER BY position`, slug)
	b.Queue(`SELECT `+entryColumns+` FROM entries WHERE parent_id = `+pgEntryOf+` AND listing_status = 'active' ORDER BY id`, slug)
	b.Queue(`SELECT `+entryColumns+` FROM entries WHERE id = (SELECT parent_id FROM entries WHERE slug = $1)`, slug)
	br := s.pool.SendBatch(ctx, b)
	d, err := pgReadDigest(br, slug, q)
	if cerr := br.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("couldn't read entry %q: %w", slug, cerr)
	}
	if err != nil {
		return EntryDigest{}, err
	}
	return d, nil
}

// pgReadDigest reads the results of EntryDigest's batch, in the order it queued them.
func pgReadDigest(br pgx.BatchResults, slug string, q EntryQuery) (EntryDigest, error) {
	var d EntryDigest
	sl, err := scanEntryListing(br.QueryRow())
	if errors.Is(err, pgx.ErrNoRows) {
		return d, fmt.Errorf("entry %q: %w", slug, ErrNotFound)
	}
	if err != nil {
		return d, fmt.Errorf("couldn't read entry %q: %w", slug, err)
	}
	d.Entry, d.Listing = sl.Entry, sl.Listing
	if err := br.QueryRow().Scan(timeCol(&d.Entry.LastChangeAt), &d.Entry.Uptime30OnlineDays, &d.Entry.Uptime30CountedDays, &d.Entry.VerifiedWithdrawn); err != nil {
		return d, fmt.Errorf("couldn't read the uptime and last change of %q: %w", slug, err)
	}
	rounds, err := pgCollectBatch(br, scanSummary)
	if err != nil {
		return d, fmt.Errorf("couldn't read the newest round of %q: %w", slug, err)
	}
	if len(rounds) == 1 {
		d.Round = &rounds[0]
	}
	signed, err := pgCollectBatch(br, scanSummary)
	if err != nil {
		return d, fmt.Errorf("couldn't read the newest signed round of %q: %w", slug, err)
	}
	if len(signed) == 1 {
		d.SignedRound = &signed[0]
	}
	var readAt *time.Time
	if err := br.QueryRow().Scan(&readAt); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return d, fmt.Errorf("couldn't read when %q's tools were last read: %w", slug, err)
	}
	if readAt != nil {
		d.ToolsReadAt = readAt.UTC()
	}
	runs, err := pgCollectBatch(br, scanSupplyState)
	if err != nil {
		return d, fmt.Errorf("couldn't read the newest supply run of %q: %w", slug, err)
	}
	if len(runs) == 1 {
		d.Supply, d.SupplySigned = &runs[0].run, runs[0].signed
	}
	if q.Changes > 0 {
		if d.Changes, err = pgCollectBatch(br, scanChange); err != nil {
			return d, fmt.Errorf("couldn't read the changes of %q: %w", slug, err)
		}
	}
	if q.UptimeFrom != "" {
		ds, err := pgCollectBatch(br, scanUptimeDay)
		if err != nil {
			return d, fmt.Errorf("couldn't read the uptime of %q: %w", slug, err)
		}
		d.Uptime = days(ds)
	}
	parts, err := pgCollectBatch(br, scanPart)
	if err != nil {
		return d, fmt.Errorf("couldn't read the parts of %q: %w", slug, err)
	}
	for _, p := range parts {
		d.Parts = append(d.Parts, p.Part)
	}
	if d.Remotes, err = pgCollectBatch(br, scanEntry); err != nil {
		return d, fmt.Errorf("couldn't read the remotes of %q: %w", slug, err)
	}
	servers, err := pgCollectBatch(br, scanEntry)
	if err != nil {
		return d, fmt.Errorf("couldn't read the server of %q: %w", slug, err)
	}
	if len(servers) == 1 {
		d.Server = &servers[0]
	}
	return d, nil
}

// pgCollectBatch scans every row of the batch's next result with scan.
func pgCollectBatch[T any](br pgx.BatchResults, scan func(rowScanner) (T, error)) ([]T, error) {
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	return pgCollect(rows, scan)
}
