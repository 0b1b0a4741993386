package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

func (s *sqliteStore) RoundsAfter(ctx context.Context, entryID, afterID int64, limit int) ([]RoundSummary, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.reader.QueryContext(ctx, `
		SELECT `+sqliteSummaryColumns+`
		FROM observations o LEFT JOIN ledger v ON v.seq = o.ledger_seq
		WHERE o.entry_id = ? AND o.id > ?
		ORDER BY o.id
		LIMIT ?`, entryID, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("couldn't list the rounds of entry %d after %d: %w", entryID, afterID, err)
	}
	rs, err := collect(rows, scanSummary)
	if err != nil {
		return nil, fmt.Errorf("couldn't list the rounds of entry %d after %d: %w", entryID, afterID, err)
	}
	return rs, nil
}

// WalkRounds reads the rounds in pages of walkPage by (entry_id, id), each page a query
// of its own on the reader pool, on the observations_entry_id index. No connection or
// snapshot is held while fn runs, so fn may use the store, writes included, and a long
// walk does not keep the WAL from being checkpointed. A round stored during the walk is
// seen when its key is after the page being read. 200,000 rounds of 5,000 entries take
// 2.8 s (BenchmarkWalkRounds), most of it reading pages: a row holds its results.
func (s *sqliteStore) WalkRounds(ctx context.Context, since time.Time, fn func(RoundSummary) error) error {
	return walkPages(func(buf []RoundSummary, last *RoundSummary) ([]RoundSummary, error) {
		// Entry ids start at 1: the first page starts before every entry. The zero
		// time's milliseconds precede every stored time.
		var entry, id int64
		if last != nil {
			entry, id = last.EntryID, last.ObservationID
		}
		rows, err := s.reader.QueryContext(ctx, `
			SELECT `+sqliteSummaryColumns+`
			FROM observations o LEFT JOIN ledger v ON v.seq = o.ledger_seq
			WHERE (o.entry_id, o.id) > (?, ?) AND o.started_at >= ?
			ORDER BY o.entry_id, o.id
			LIMIT ?`, entry, id, millis(since), walkPage)
		if err == nil {
			buf, err = appendRows(buf, rows, scanSummary)
		}
		if err != nil {
			return nil, fmt.Errorf("couldn't walk the rounds: %w", err)
		}
		return buf, nil
	}, fn)
}

// WalkUptime reads the days in pages of walkPage by (entry_id, day), the primary key;
// see WalkRounds.
func (s *sqliteStore) WalkUptime(ctx context.Context, from, to string, fn func(int64, UptimeDay) error) error {
	if err := errors.Join(checkDay(from), checkDay(to)); err != nil {
		return fmt.Errorf("couldn't walk uptime: %w", err)
	}
	return walkPages(func(buf []entryDay, last *entryDay) ([]entryDay, error) {
		// Entry ids start at 1: the first page starts before every entry.
		entry, day := int64(0), from
		if last != nil {
			entry, day = last.EntryID, last.Day.Day
		}
		rows, err := s.reader.QueryContext(ctx, `
			SELECT `+sqliteUptimeColumns+` FROM uptime_days
			WHERE (entry_id, day) > (?, ?) AND day BETWEEN ? AND ?
			ORDER BY entry_id, day
			LIMIT ?`, entry, day, from, to, walkPage)
		if err == nil {
			buf, err = appendRows(buf, rows, scanUptimeDay)
		}
		if err != nil {
			return nil, fmt.Errorf("couldn't walk uptime: %w", err)
		}
		return buf, nil
	}, func(d entryDay) error { return fn(d.EntryID, d.Day) })
}

func (s *sqliteStore) HistoryState(ctx context.Context, entryID int64) ([]byte, int64, error) {
	var (
		state     []byte
		processed int64
	)
	err := s.reader.QueryRowContext(ctx, `
		SELECT h.state, coalesce(h.processed, 0)
		FROM entries e LEFT JOIN history_state h ON h.entry_id = e.id
		WHERE e.id = ?`, entryID).Scan(&state, &processed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, fmt.Errorf("entry %d: %w", entryID, ErrNotFound)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("couldn't read the history state of entry %d: %w", entryID, err)
	}
	return state, processed, nil
}

// SaveHistory runs on the writer, whose IMMEDIATE transactions are serialized across
// processes: the processed id and last change number it reads stay true until it commits.
func (s *sqliteStore) SaveHistory(ctx context.Context, u HistoryUpdate) error {
	if err := checkHistoryUpdate(&u); err != nil {
		return fmt.Errorf("couldn't save the history of entry %d: %w", u.EntryID, err)
	}
	rows, err := newChangeRows(u.Changes)
	if err != nil {
		return fmt.Errorf("couldn't save the history of entry %d: %w", u.EntryID, err)
	}
	ids := changeObservations(u.Changes)
	idsJSON, err := json.Marshal(ids)
	if err != nil {
		return fmt.Errorf("couldn't save the history of entry %d: %w", u.EntryID, err)
	}
	now := s.now()
	err = s.inTx(ctx, func(tx *sqliteTx) error {
		if err := sqliteEntryExists(ctx, tx, u.EntryID); err != nil {
			return err
		}
		var (
			processed, last int64
			own             int
		)
		err := tx.QueryRowContext(ctx, `
			SELECT coalesce((SELECT processed FROM history_state WHERE entry_id = ?1), 0),
			       coalesce((SELECT max(number) FROM changes WHERE entry_id = ?1), 0),
			       (SELECT count(*) FROM observations
			        WHERE entry_id = ?1 AND id IN (SELECT value FROM json_each(?2)))`,
			u.EntryID, string(idsJSON)).Scan(&processed, &last, &own)
		if err != nil {
			return fmt.Errorf("couldn't read the stored history: %w", err)
		}
		if err := checkHistoryBase(&u, processed, last, own, len(ids)); err != nil {
			return err
		}
		// A signed change's record takes its sequence number just before the change's
		// row, in the change's order.
		for _, c := range rows {
			var ledgerSeq any
			if c.Envelope != nil {
				seq, err := sqliteAppendRecord(ctx, tx, RecordChange, c.EntryID, c.digest, c.KeyID, c.Envelope, now)
				if err != nil {
					return fmt.Errorf("change %d: %w", c.Number, err)
				}
				ledgerSeq = seq
			}
			if _, err := tx.ExecContext(ctx, `
				INSERT INTO changes (entry_id, number, recorded_at, origin, kind, summary, details, badges,
					before_observation, after_observation, ledger_seq)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				c.EntryID, c.Number, millis(c.RecordedAt), c.Origin, c.Kind, c.Summary, c.Details, c.badges,
				nullID(c.BeforeObservation), nullID(c.AfterObservation), ledgerSeq,
			); err != nil {
				return fmt.Errorf("couldn't store change %d: %w", c.Number, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `
			INSERT INTO history_state (entry_id, state, processed, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (entry_id) DO UPDATE SET
				state = excluded.state, processed = excluded.processed, updated_at = excluded.updated_at`,
			u.EntryID, u.State, u.Processed, millis(now)); err != nil {
			return fmt.Errorf("couldn't store the history state: %w", err)
		}
		for _, d := range u.Due {
			if err := sqliteSetDue(ctx, tx, u.EntryID, d); err != nil {
				return fmt.Errorf("couldn't update the %s due time: %w", d.Reason, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("couldn't save the history of entry %d: %w", u.EntryID, err)
	}
	return nil
}

// sqliteChangeColumns are the columns scanChange scans, of sqliteChangeFrom;
// sqliteChangeColumnsWithoutEnvelope read a NULL for the envelope
// (ChangeFilter.WithoutEnvelopes).
const (
	sqliteChangeColumnsHead = `c.entry_id, e.slug, c.number, c.recorded_at, c.origin, c.kind, c.summary,
	c.details, c.badges, c.before_observation, c.after_observation, c.hidden, c.hidden_reason, `
	sqliteChangeColumns                = sqliteChangeColumnsHead + `l.envelope, l.key_id, l.payload_digest`
	sqliteChangeColumnsWithoutEnvelope = sqliteChangeColumnsHead + `NULL, l.key_id, l.payload_digest`
	// sqliteChangeFrom joins each change with its entry and its ledger record.
	sqliteChangeFrom = `changes c JOIN entries e ON e.id = c.entry_id LEFT JOIN ledger l ON l.seq = c.ledger_seq`
)

// scanChange scans the sqliteChangeColumns of sqliteChangeFrom.
func scanChange(row rowScanner) (ChangeRecord, error) {
	var (
		c             ChangeRecord
		recordedAt    sql.NullInt64
		badges        string
		before, after sql.NullInt64
		keyID, digest sql.NullString
	)
	err := row.Scan(&c.EntryID, &c.EntrySlug, &c.Number, &recordedAt, &c.Origin, &c.Kind, &c.Summary,
		&c.Details, &badges, &before, &after, &c.Hidden, &c.HiddenReason, &c.Envelope, &keyID, &digest)
	if err != nil {
		return ChangeRecord{}, err
	}
	if c.Badges, err = decodeBadges(badges); err != nil {
		return ChangeRecord{}, fmt.Errorf("change %d of entry %d: %w", c.Number, c.EntryID, err)
	}
	c.RecordedAt = fromMillis(recordedAt)
	c.BeforeObservation, c.AfterObservation = before.Int64, after.Int64
	c.KeyID, c.PayloadDigest = keyID.String, digest.String
	return c, nil
}

// Changes reads one entry's changes on the UNIQUE (entry_id, number) index, backwards,
// and changes across entries on changes_recorded. One entry's changes are ordered by
// number: the order BeforeNumber pages by, and that of their recorded times when the
// history engine records them in order.
func (s *sqliteStore) Changes(ctx context.Context, f ChangeFilter) ([]ChangeRecord, error) {
	if err := checkChangeFilter(f); err != nil {
		return nil, fmt.Errorf("couldn't list changes: %w", err)
	}
	// Fixed fragments only; values are parameters.
	columns := sqliteChangeColumns
	if f.WithoutEnvelopes {
		columns = sqliteChangeColumnsWithoutEnvelope
	}
	query := `
		SELECT ` + columns + `
		FROM ` + sqliteChangeFrom + `
		WHERE 1 = 1`
	var args []any
	if f.EntryID != 0 {
		query += ` AND c.entry_id = ?`
		args = append(args, f.EntryID)
	}
	if f.BeforeNumber != 0 {
		query += ` AND c.number < ?`
		args = append(args, f.BeforeNumber)
	}
	if !f.Since.IsZero() {
		query += ` AND c.recorded_at >= ?`
		args = append(args, millis(f.Since))
	}
	if !f.IncludeHidden {
		query += ` AND c.hidden = 0`
	}
	if f.EntryID != 0 {
		query += ` ORDER BY c.number DESC`
	} else {
		query += ` ORDER BY c.recorded_at DESC, c.entry_id DESC, c.number DESC`
	}
	limit := f.Limit
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	query += ` LIMIT ?`
	args = append(args, limit)
	rows, err := s.reader.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("couldn't list changes: %w", err)
	}
	cs, err := collect(rows, scanChange)
	if err != nil {
		return nil, fmt.Errorf("couldn't list changes: %w", err)
	}
	return cs, nil
}

func (s *sqliteStore) Change(ctx context.Context, entryID, number int64) (ChangeRecord, error) {
	c, err := scanChange(s.reader.QueryRowContext(ctx, `
		SELECT `+sqliteChangeColumns+`
		FROM `+sqliteChangeFrom+`
		WHERE c.entry_id = ? AND c.number = ?`, entryID, number))
	if errors.Is(err, sql.ErrNoRows) {
		return ChangeRecord{}, fmt.Errorf("change %d of entry %d: %w", number, entryID, ErrNotFound)
	}
	if err != nil {
		return ChangeRecord{}, fmt.Errorf("couldn't read change %d of entry %d: %w", number, entryID, err)
	}
	return c, nil
}

func (s *sqliteStore) HideChange(ctx context.Context, entryID, number int64, hidden bool, reason string) error {
	if err := checkHideReason(hidden, reason); err != nil {
		return fmt.Errorf("couldn't hide or show change %d of entry %d: %w", number, entryID, err)
	}
	if !hidden {
		reason = ""
	}
	res, err := s.writer.ExecContext(ctx, `UPDATE changes SET hidden = ?, hidden_reason = ? WHERE entry_id = ? AND number = ?`,
		boolInt(hidden), reason, entryID, number)
	if err == nil {
		var n int64
		if n, err = res.RowsAffected(); err == nil && n == 0 {
			err = ErrNotFound
		}
	}
	if err != nil {
		return fmt.Errorf("couldn't hide or show change %d of entry %d: %w", number, entryID, err)
	}
	return nil
}
