package store

import (
	"context"
	"encoding/json"
	"fmt"
)

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
	ids := changeRounds(u.Changes)
	idsJSON, err := json.Marshal(ids)
	if err != nil {
		return fmt.Errorf("couldn't save the history of entry %d: %w", u.EntryID, err)
	}
	links, err := historyListingLinks(&u)
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
			       (SELECT count(*) FROM rounds
			        WHERE entry_id = ?1 AND id IN (SELECT value FROM json_each(?2)))`,
			u.EntryID, string(idsJSON)).Scan(&processed, &last, &own)
		if err != nil {
			return fmt.Errorf("couldn't read the stored history: %w", err)
		}
		if err := checkHistoryBase(&u, processed, last, own, len(ids)); err != nil {
			return err
		}
		if u.Listing != nil {
			var revision int64
			if err := tx.QueryRowContext(ctx, `SELECT coalesce((SELECT revision FROM maintainer_listings WHERE entry_id = ?), 0)`,
				u.EntryID).Scan(&revision); err != nil {
				return fmt.Errorf("couldn't read the maintainer's listing: %w", err)
			}
			if revision != u.Listing.ExpectRevision {
				return fmt.Errorf("revision %d, not %d: %w", revision, u.Listing.ExpectRevision, ErrStaleListing)
			}
		}
		// A signed change's record is stored pending just before the change's row, in
		// the change's order (so its id, and its number, follow the change's), and
		// numbered last (sqliteSequence).
		var lastRecord int64
		for _, c := range rows {
			var record any
			if c.Envelope != nil {
				id, err := sqliteAppendRecord(ctx, tx, RecordChange, c.EntryID, c.digest, c.KeyID, c.Envelope, now)
				if err != nil {
					return fmt.Errorf("change %d: %w", c.Number, err)
				}
				record, lastRecord = id, id
			}
			if _, err := tx.ExecContext(ctx, `
				INSERT INTO changes (entry_id, number, recorded_at, origin, kind, summary, details, badges,
					before_round, after_round, ledger_id)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				c.EntryID, c.Number, millis(c.RecordedAt), c.Origin, c.Kind, c.Summary, c.Details, c.badges,
				nullID(c.BeforeRound), nullID(c.AfterRound), record,
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
		if u.Listing != nil {
			l := &u.Listing.Listing
			if _, err := tx.ExecContext(ctx, upsertMaintainerListingSQL, u.EntryID, l.Description, l.SetupNotes, links,
				u.Listing.ExpectRevision+1, millis(now)); err != nil {
				return fmt.Errorf("couldn't store the maintainer's listing: %w", err)
			}
		}
		if lastRecord != 0 {
			return s.sqliteSequence(ctx, tx, lastRecord)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("couldn't save the history of entry %d: %w", u.EntryID, err)
	}
	return nil
}
