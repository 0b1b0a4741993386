package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/probity-dev/probity/attest"
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

	var fpSurface, fpToolset, fpSchema, fpInstructions any
	if fp := r.Fingerprints; fp != nil {
		// The document's digest is the fingerprint (checkRound), so an existing row holds
		// the same bytes.
		if _, err := tx.ExecContext(ctx, `
			INSERT INTO surfaces (fingerprint, doc, created_at) VALUES (?, ?, ?)
			ON CONFLICT (fingerprint) DO NOTHING`, fp.Surface, r.Surface, millis(now)); err != nil {
			return 0, fmt.Errorf("couldn't store the surface: %w", err)
		}
		if r.Instructions != nil {
			if _, err := tx.ExecContext(ctx, `
				INSERT INTO surfaces (fingerprint, doc, created_at) VALUES (?, ?, ?)
				ON CONFLICT (fingerprint) DO NOTHING`, fp.Instructions, r.Instructions, millis(now)); err != nil {
				return 0, fmt.Errorf("couldn't store the instructions: %w", err)
			}
		}
		fpSurface, fpToolset, fpSchema, fpInstructions = fp.Surface, fp.Toolset, fp.Schema, fp.Instructions
	}

	// Signed exactly when the ledger record is stored: both in this transaction.
	var ledgerSeq any
	if r.Signed() {
		seq, err := sqliteAppendRecord(ctx, tx, RecordProbe, r.EntryID, r.PayloadDigest, r.KeyID, r.Envelope, now)
		if err != nil {
			return 0, err
		}
		ledgerSeq = seq
	}

	var id int64
	err := tx.QueryRowContext(ctx, `
		INSERT INTO observations (
			entry_id, due_at, reason, round_id, started_at, finished_at, coverage, signed,
			unsigned_reason, reach, http_status, stop, uptime, retry_after_ms, protocol_version,
			server_name, server_version, tool_count, pages, fp_surface, fp_toolset, fp_schema,
			fp_instructions, results, timings, handshake_method, proposed_version,
			login_unauthorized, login_challenge, login_metadata, ledger_seq)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		RETURNING id`,
		r.EntryID, millis(r.DueAt), string(r.Reason), r.RoundID, millis(r.StartedAt), millis(r.FinishedAt),
		r.Coverage, boolInt(r.Signed()), r.UnsignedReason, r.Reach, r.HTTPStatus, r.Stop, string(r.Uptime),
		r.RetryAfter.Milliseconds(), r.ProtocolVersion, r.ServerName, r.ServerVersion, r.ToolCount, r.Pages,
		fpSurface, fpToolset, fpSchema, fpInstructions, r.Results, r.Timings, r.HandshakeMethod,
		r.ProposedVersion, r.Login.Unauthorized, r.Login.Challenge, r.Login.Metadata, ledgerSeq,
	).Scan(&id)
	if isUniqueViolation(err) {
		return 0, ErrRoundDone
	}
	if err != nil {
		return 0, fmt.Errorf("couldn't store the observation: %w", err)
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
				SELECT 1 FROM observations
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
	if _, err := tx.ExecContext(ctx, `
		INSERT INTO uptime_days (entry_id, day, answered, no_answer, inconclusive, status)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (entry_id, day) DO UPDATE SET
			answered = excluded.answered, no_answer = excluded.no_answer,
			inconclusive = excluded.inconclusive, status = excluded.status`,
		entryID, day, u.Answered, u.NoAnswer, u.Inconclusive, after); err != nil {
		return 0, 0, fmt.Errorf("couldn't count the uptime of %s: %w", day, err)
	}
	online, counted = uptimeDelta(before, after)
	return online, counted, nil
}

const sqliteSummaryColumns = `o.id, o.entry_id, o.due_at, o.reason, o.round_id, o.started_at,
	o.finished_at, o.coverage, o.signed, o.unsigned_reason, o.reach, o.http_status, o.uptime,
	o.protocol_version, o.server_name, o.server_version, o.tool_count, o.pages, o.fp_surface,
	o.fp_toolset, o.fp_schema, o.fp_instructions, coalesce(v.key_id, ''), coalesce(v.payload_digest, ''),
	o.handshake_method, o.proposed_version, o.login_unauthorized, o.login_challenge, o.login_metadata`

// scanSummary scans the sqliteSummaryColumns of observations o left-joined with their
// ledger records v.
func scanSummary(row rowScanner) (RoundSummary, error) {
	var (
		rs                          RoundSummary
		reason, uptime              string
		dueAt, startedAt, finished  sql.NullInt64
		surface, toolset, schema, i sql.NullString
		unauthorized, challenge, md sql.NullString
	)
	err := row.Scan(&rs.ObservationID, &rs.EntryID, &dueAt, &reason, &rs.RoundID, &startedAt,
		&finished, &rs.Coverage, &rs.Signed, &rs.UnsignedReason, &rs.Reach, &rs.HTTPStatus, &uptime,
		&rs.ProtocolVersion, &rs.ServerName, &rs.ServerVersion, &rs.ToolCount, &rs.Pages, &surface,
		&toolset, &schema, &i, &rs.KeyID, &rs.PayloadDigest, &rs.HandshakeMethod, &rs.ProposedVersion,
		&unauthorized, &challenge, &md)
	if err != nil {
		return RoundSummary{}, err
	}
	if unauthorized.Valid {
		rs.Login = &Login{Unauthorized: unauthorized.String, Challenge: challenge.String, Metadata: md.String}
	}
	rs.Reason, rs.Uptime = Reason(reason), UptimeClass(uptime)
	rs.DueAt, rs.StartedAt, rs.FinishedAt = fromMillis(dueAt), fromMillis(startedAt), fromMillis(finished)
	if surface.Valid {
		rs.Fingerprints = &attest.Fingerprints{
			Surface: surface.String, Toolset: toolset.String, Schema: schema.String, Instructions: i.String,
		}
	}
	return rs, nil
}

func (s *sqliteStore) Rounds(ctx context.Context, entryID int64, limit int) ([]RoundSummary, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.reader.QueryContext(ctx, `
		SELECT `+sqliteSummaryColumns+`
		FROM observations o LEFT JOIN ledger v ON v.seq = o.ledger_seq
		WHERE o.entry_id = ?
		ORDER BY o.started_at DESC, o.id DESC
		LIMIT ?`, entryID, limit)
	if err != nil {
		return nil, fmt.Errorf("couldn't list the rounds of entry %d: %w", entryID, err)
	}
	rs, err := collect(rows, scanSummary)
	if err != nil {
		return nil, fmt.Errorf("couldn't list the rounds of entry %d: %w", entryID, err)
	}
	return rs, nil
}

func (s *sqliteStore) RoundResults(ctx context.Context, observationID int64) ([]byte, error) {
	var results []byte
	err := s.reader.QueryRowContext(ctx, `SELECT results FROM observations WHERE id = ?`, observationID).Scan(&results)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("observation %d: %w", observationID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("couldn't read the results of observation %d: %w", observationID, err)
	}
	return results, nil
}

func (s *sqliteStore) PutSurface(ctx context.Context, fingerprint string, doc []byte) error {
	if err := checkSurfaceDoc(fingerprint, doc); err != nil {
		return err
	}
	_, err := s.writer.ExecContext(ctx, `
		INSERT INTO surfaces (fingerprint, doc, created_at) VALUES (?, ?, ?)
		ON CONFLICT (fingerprint) DO NOTHING`, fingerprint, doc, millis(time.Now()))
	if err != nil {
		return fmt.Errorf("couldn't store surface %q: %w", fingerprint, err)
	}
	return nil
}

func (s *sqliteStore) Surface(ctx context.Context, fingerprint string) ([]byte, error) {
	var doc []byte
	err := s.reader.QueryRowContext(ctx, `SELECT doc FROM surfaces WHERE fingerprint = ?`, fingerprint).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("surface %q: %w", fingerprint, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("couldn't read surface %q: %w", fingerprint, err)
	}
	return doc, nil
}

const sqliteUptimeColumns = `entry_id, day, answered, no_answer, inconclusive, status`

// scanUptimeDay scans the sqliteUptimeColumns of uptime_days.
func scanUptimeDay(row rowScanner) (entryDay, error) {
	var d entryDay
	err := row.Scan(&d.EntryID, &d.Day.Day, &d.Day.Answered, &d.Day.NoAnswer, &d.Day.Inconclusive, &d.Day.Status)
	return d, err
}

func (s *sqliteStore) UptimeDays(ctx context.Context, entryID int64, from, to string) ([]UptimeDay, error) {
	if err := errors.Join(checkDay(from), checkDay(to)); err != nil {
		return nil, fmt.Errorf("couldn't read uptime: %w", err)
	}
	rows, err := s.reader.QueryContext(ctx, `
		SELECT `+sqliteUptimeColumns+` FROM uptime_days
		WHERE entry_id = ? AND day BETWEEN ? AND ?
		ORDER BY day`, entryID, from, to)
	if err != nil {
		return nil, fmt.Errorf("couldn't read the uptime of entry %d: %w", entryID, err)
	}
	ds, err := collect(rows, scanUptimeDay)
	if err != nil {
		return nil, fmt.Errorf("couldn't read the uptime of entry %d: %w", entryID, err)
	}
	return days(ds), nil
}

// Envelopes streams the round records of the ledger, by sequence number, from one
// reader connection (one snapshot),
// not the writer, so fn may use the store, writes included, while the walk goes on. A
// long walk keeps its snapshot, so the WAL cannot be checkpointed past it meanwhile.
func (s *sqliteStore) Envelopes(ctx context.Context, f EnvelopeFilter, fn func(EnvelopeRecord) error) error {
	// Fixed fragments only; values are parameters.
	query := `
		SELECT v.seq, o.id, e.slug, o.round_id, o.started_at, v.key_id, v.envelope
		FROM ledger v
		JOIN observations o ON o.ledger_seq = v.seq
		JOIN entries e ON e.id = o.entry_id
		WHERE v.kind = 'probe'`
	var args []any
	if !f.Since.IsZero() {
		query += ` AND o.started_at >= ?`
		args = append(args, millis(f.Since))
	}
	if f.EntrySlug != "" {
		query += ` AND v.entry_id = (SELECT id FROM entries WHERE slug = ?)`
		args = append(args, f.EntrySlug)
	}
	query += ` ORDER BY v.seq`

	rows, err := s.reader.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("couldn't list envelopes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			rec       EnvelopeRecord
			startedAt sql.NullInt64
		)
		if err := rows.Scan(&rec.Seq, &rec.ObservationID, &rec.EntrySlug, &rec.RoundID, &startedAt, &rec.KeyID, &rec.Envelope); err != nil {
			return fmt.Errorf("couldn't read an envelope: %w", err)
		}
		rec.StartedAt = fromMillis(startedAt)
		if err := fn(rec); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("couldn't list envelopes: %w", err)
	}
	return nil
}
