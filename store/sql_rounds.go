package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/probity-dev/probity/attest"
)

// summaryColumns are the columns scanSummary reads, of summaryFrom.
const summaryColumns = `o.id, o.entry_id, o.due_at, o.reason, o.round_id, o.started_at,
	o.finished_at, o.coverage, o.signed, o.unsigned_reason, o.reach, o.http_status, o.uptime,
	o.protocol_version, o.server_name, o.server_version, o.tool_count, o.pages, o.fp_surface,
	o.fp_toolset, o.fp_schema, o.fp_instructions, coalesce(v.key_id, ''), coalesce(v.payload_digest, ''),
	o.handshake_method, o.proposed_version, o.login_unauthorized, o.login_challenge, o.login_metadata,
	o.failed, o.observed_risk`

// summaryFrom is the FROM clause of summaryColumns: rounds o with their ledger
// records v (NULL for an unsigned round).
const summaryFrom = `rounds o LEFT JOIN ledger v ON v.id = o.ledger_id`

// scanSummary scans the summaryColumns of summaryFrom.
func scanSummary(row rowScanner) (RoundSummary, error) {
	var (
		rs                          RoundSummary
		reason, uptime              string
		surface, toolset, schema, i *string
		unauthorized, challenge, md *string
	)
	err := row.Scan(&rs.ID, &rs.EntryID, timeCol(&rs.DueAt), &reason, &rs.RoundID, timeCol(&rs.StartedAt),
		timeCol(&rs.FinishedAt), &rs.Coverage, &rs.Signed, &rs.UnsignedReason, &rs.Reach, &rs.HTTPStatus, &uptime,
		&rs.ProtocolVersion, &rs.ServerName, &rs.ServerVersion, &rs.ToolCount, &rs.Pages, &surface,
		&toolset, &schema, &i, &rs.KeyID, &rs.PayloadDigest, &rs.HandshakeMethod, &rs.ProposedVersion,
		&unauthorized, &challenge, &md, &rs.Failed, &rs.ObservedRisk)
	if err != nil {
		return RoundSummary{}, err
	}
	if unauthorized != nil {
		if challenge == nil || md == nil {
			return RoundSummary{}, fmt.Errorf("round %d has some login facts only", rs.ID)
		}
		rs.Login = &Login{Unauthorized: *unauthorized, Challenge: *challenge, Metadata: *md}
	}
	rs.Reason, rs.Uptime = DueReason(reason), UptimeClass(uptime)
	if surface != nil {
		if toolset == nil || schema == nil || i == nil {
			return RoundSummary{}, fmt.Errorf("round %d has some fingerprints only", rs.ID)
		}
		rs.Fingerprints = &attest.Fingerprints{Surface: *surface, Toolset: *toolset, Schema: *schema, Instructions: *i}
	}
	return rs, nil
}

func (s *sqlStore) Rounds(ctx context.Context, entryID int64, limit int) ([]RoundSummary, error) {
	rs, err := queryAll(ctx, s.read, scanSummary, `
		SELECT `+summaryColumns+`
		FROM `+summaryFrom+`
		WHERE o.entry_id = ?
		ORDER BY o.started_at DESC, o.id DESC
		LIMIT ?`, entryID, s.d.limit(limit))
	if err != nil {
		return nil, fmt.Errorf("couldn't list the rounds of entry %d: %w", entryID, err)
	}
	return rs, nil
}

func (s *sqlStore) RoundResults(ctx context.Context, roundID int64) ([]byte, error) {
	var results []byte
	err := s.read.QueryRow(ctx, `SELECT results FROM rounds WHERE id = ?`, roundID).Scan(&results)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("round %d: %w", roundID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("couldn't read the results of round %d: %w", roundID, err)
	}
	return results, nil
}

func (s *sqlStore) PutSurface(ctx context.Context, fingerprint string, doc []byte) error {
	if err := checkSurfaceDoc(fingerprint, doc); err != nil {
		return err
	}
	_, err := s.write.Exec(ctx, insertSurfaceSQL, fingerprint, doc, s.d.time(time.Now()))
	if err != nil {
		return fmt.Errorf("couldn't store surface %q: %w", fingerprint, err)
	}
	return nil
}

func (s *sqlStore) Surface(ctx context.Context, fingerprint string) ([]byte, error) {
	var doc []byte
	err := s.read.QueryRow(ctx, `SELECT doc FROM surfaces WHERE fingerprint = ?`, fingerprint).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("surface %q: %w", fingerprint, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("couldn't read surface %q: %w", fingerprint, err)
	}
	return doc, nil
}

// uptimeColumns are uptime_days' columns in d's spelling, as scanUptimeDay reads them
// (on PostgreSQL to_char, not day::text, whose form depends on the session's DateStyle).
func uptimeColumns(d dialect) string {
	return `entry_id, ` + d.dayText("day") + `, answered, no_answer, inconclusive, status`
}

// scanUptimeDay scans the uptimeColumns of uptime_days.
func scanUptimeDay(row rowScanner) (entryDay, error) {
	var d entryDay
	err := row.Scan(&d.EntryID, &d.Day.Day, &d.Day.Answered, &d.Day.NoAnswer, &d.Day.Inconclusive, &d.Day.Status)
	return d, err
}

func (s *sqlStore) UptimeDays(ctx context.Context, entryID int64, from, to string) ([]UptimeDay, error) {
	if err := errors.Join(checkDay(from), checkDay(to)); err != nil {
		return nil, fmt.Errorf("couldn't read uptime: %w", err)
	}
	ds, err := queryAll(ctx, s.read, scanUptimeDay, `
		SELECT `+uptimeColumns(s.d)+` FROM uptime_days
		WHERE entry_id = ? AND day BETWEEN `+s.d.day("?")+` AND `+s.d.day("?")+`
		ORDER BY day`, entryID, from, to)
	if err != nil {
		return nil, fmt.Errorf("couldn't read the uptime of entry %d: %w", entryID, err)
	}
	return days(ds), nil
}

// Envelopes walks the round records of the ledger in keyset pages of ledgerPage by
// sequence number, each joined with its round (rounds_ledger) and entry. No
// connection, transaction or snapshot is held while fn runs, so fn may use the store,
// writes included, a long export does not hold back vacuum (PostgreSQL) or the WAL's
// checkpoint (SQLite). The walk ends at the newest record committed when it began; one
// deleted with its entry during the walk is skipped once deleted. A slug filter starts
// from the entry (slug index, then ledger_entry).
func (s *sqlStore) Envelopes(ctx context.Context, f EnvelopeFilter, fn func(EnvelopeRecord) error) error {
	var last *int64
	if err := s.read.QueryRow(ctx, `SELECT max(seq) FROM ledger`).Scan(&last); err != nil {
		return fmt.Errorf("couldn't list envelopes: %w", err)
	}
	if last == nil {
		return nil
	}
	// Fixed fragments only; values are parameters.
	query := `
		SELECT v.seq, o.id, e.slug, o.round_id, o.started_at, v.key_id, v.envelope
		FROM ledger v
		JOIN rounds o ON o.ledger_id = v.id
		JOIN entries e ON e.id = o.entry_id
		WHERE v.kind = 'probe' AND v.seq > ? AND v.seq <= ?`
	args := []any{int64(0), *last}
	if !f.Since.IsZero() {
		query += ` AND o.started_at >= ?`
		args = append(args, s.d.time(f.Since))
	}
	if f.EntrySlug != "" {
		query += ` AND v.entry_id = (SELECT id FROM entries WHERE slug = ?)`
		args = append(args, f.EntrySlug)
	}
	query += ` ORDER BY v.seq LIMIT ?`
	args = append(args, ledgerPage)
	scan := func(row rowScanner) (EnvelopeRecord, error) {
		var rec EnvelopeRecord
		err := row.Scan(&rec.Seq, &rec.Round, &rec.EntrySlug, &rec.RoundID, timeCol(&rec.StartedAt), &rec.KeyID, &rec.Envelope)
		return rec, err
	}
	for {
		page, err := queryAll(ctx, s.read, scan, query, args...)
		if err != nil {
			return fmt.Errorf("couldn't list envelopes: %w", err)
		}
		for _, rec := range page {
			if err := fn(rec); err != nil {
				return err
			}
		}
		if len(page) < ledgerPage {
			return nil
		}
		args[0] = page[len(page)-1].Seq
	}
}
