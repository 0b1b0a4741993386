package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

func (s *sqliteStore) AddEntry(ctx context.Context, ne NewEntry) (Entry, bool, error) {
	if err := checkNewEntry(ne); err != nil {
		return Entry{}, false, fmt.Errorf("couldn't add entry: %w", err)
	}
	var (
		e       Entry
		created bool
	)
	err := s.inTx(ctx, func(tx *sqliteTx) error {
		var err error
		e, err = scanEntry(tx.QueryRowContext(ctx,
			`SELECT `+entryColumns+` FROM entries WHERE kind = ? AND locator = ?`, ne.Kind, ne.Locator))
		if err == nil || !errors.Is(err, sql.ErrNoRows) {
			return err
		}

		// The slugs base and base-*, found on the slug index: "-" sorts just before ".".
		rows, err := tx.QueryContext(ctx,
			`SELECT slug FROM entries WHERE slug = ?1 OR (slug >= ?1 || '-' AND slug < ?1 || '.')`, ne.SlugBase)
		if err != nil {
			return err
		}
		var taken []string
		for rows.Next() {
			var slug string
			if err := rows.Scan(&slug); err != nil {
				return errors.Join(err, rows.Close())
			}
			taken = append(taken, slug)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}

		e = ne.entry(freeSlug(ne.SlugBase, taken), s.now())
		err = tx.QueryRowContext(ctx, `
			INSERT INTO entries (slug, kind, locator, name, source, claimed, cadence_ms, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			RETURNING id`,
			e.Slug, e.Kind, e.Locator, e.Name, e.Source, boolInt(e.Claimed), e.Cadence.Milliseconds(), millis(e.CreatedAt),
		).Scan(&e.ID)
		if err != nil {
			return err
		}
		for _, d := range ne.Due {
			if err := sqliteSetDue(ctx, tx, e.ID, DueUpdate{Reason: d.Reason, At: d.At}); err != nil {
				return err
			}
		}
		created = true
		return nil
	})
	if err != nil {
		return Entry{}, false, fmt.Errorf("couldn't add entry %q: %w", ne.SlugBase, err)
	}
	return e, created, nil
}

// sqliteEntryExists returns ErrNotFound when there is no entry with the id.
func sqliteEntryExists(ctx context.Context, tx *sqliteTx, id int64) error {
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM entries WHERE id = ?`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("entry %d: %w", id, ErrNotFound)
	}
	return err
}

// sqliteSetDue sets or, for a zero time, clears one due time.
func sqliteSetDue(ctx context.Context, tx *sqliteTx, entryID int64, u DueUpdate) error {
	var err error
	if u.At.IsZero() {
		_, err = tx.ExecContext(ctx, deleteDueSQL, entryID, string(u.Reason))
	} else {
		_, err = tx.ExecContext(ctx, upsertDueSQL, entryID, string(u.Reason), millis(u.At))
	}
	return err
}

func (s *sqliteStore) SetDue(ctx context.Context, entryID int64, u DueUpdate) error {
	if err := checkReason(u.Reason); err != nil {
		return fmt.Errorf("couldn't set due time: %w", err)
	}
	err := s.inTx(ctx, func(tx *sqliteTx) error {
		if err := sqliteEntryExists(ctx, tx, entryID); err != nil {
			return err
		}
		return sqliteSetDue(ctx, tx, entryID, u)
	})
	if err != nil {
		return fmt.Errorf("couldn't set the %s due time of entry %d: %w", u.Reason, entryID, err)
	}
	return nil
}

func (s *sqliteStore) StartAttempt(ctx context.Context, entryID int64, dueAt, at time.Time) (int, error) {
	if dueAt.IsZero() || at.IsZero() {
		return 0, errors.New("couldn't start an attempt: zero due or start time")
	}
	var n int
	err := s.inTx(ctx, func(tx *sqliteTx) error {
		if err := sqliteEntryExists(ctx, tx, entryID); err != nil {
			return err
		}
		if err := sqliteRoundNotStored(ctx, tx, entryID, dueAt); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `
			INSERT INTO attempts (entry_id, due_at, attempts, last_started_at) VALUES (?, ?, 1, ?)
			ON CONFLICT (entry_id, due_at) DO UPDATE
			SET attempts = attempts + 1, last_started_at = excluded.last_started_at
			RETURNING attempts`, entryID, millis(dueAt), millis(at)).Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("couldn't start an attempt of entry %d: %w", entryID, err)
	}
	return n, nil
}

// sqliteRoundNotStored returns ErrRoundDone when the entry's round for dueAt is stored.
func sqliteRoundNotStored(ctx context.Context, tx *sqliteTx, entryID int64, dueAt time.Time) error {
	var one int
	err := tx.QueryRowContext(ctx,
		`SELECT 1 FROM rounds WHERE entry_id = ? AND due_at = ?`, entryID, millis(dueAt)).Scan(&one)
	switch {
	case err == nil:
		return ErrRoundDone
	case errors.Is(err, sql.ErrNoRows):
		return nil
	}
	return err
}
