package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// SaveHistory locks the entry's row (FOR NO KEY UPDATE, as SaveRound does), so that
// SaveHistory calls of one entry are serialized across processes and the processed id
// and last change number read after the lock stay true until the commit. Its statements
// go in two pipelined batches: what the update is checked against, then the writes.
func (s *pgStore) SaveHistory(ctx context.Context, u HistoryUpdate) error {
	if err := checkHistoryUpdate(&u); err != nil {
		return fmt.Errorf("couldn't save the history of entry %d: %w", u.EntryID, err)
	}
	rows, err := newChangeRows(u.Changes)
	if err != nil {
		return fmt.Errorf("couldn't save the history of entry %d: %w", u.EntryID, err)
	}
	ids := changeRounds(u.Changes)
	links, err := historyListingLinks(&u)
	if err != nil {
		return fmt.Errorf("couldn't save the history of entry %d: %w", u.EntryID, err)
	}
	now := s.now()
	var record int64 // the last change record's id; all are numbered by one step
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		var (
			processed, last, revision int64
			own                       int
		)
		b := &pgx.Batch{}
		pgQueueLockEntry(b, u.EntryID)
		if u.Listing != nil {
			b.Queue(`SELECT coalesce((SELECT revision FROM maintainer_listings WHERE entry_id = $1), 0)`, u.EntryID).
				QueryRow(func(row pgx.Row) error { return row.Scan(&revision) })
		}
		b.Queue(`
			SELECT coalesce((SELECT processed FROM history_state WHERE entry_id = $1), 0),
			       coalesce((SELECT max(number) FROM changes WHERE entry_id = $1), 0),
			       (SELECT count(*) FROM rounds WHERE entry_id = $1 AND id = ANY($2))`,
			u.EntryID, ids,
		).QueryRow(func(row pgx.Row) error { return row.Scan(&processed, &last, &own) })
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		if err := checkHistoryBase(&u, processed, last, own, len(ids)); err != nil {
			return err
		}
		if u.Listing != nil && revision != u.Listing.ExpectRevision {
			return fmt.Errorf("revision %d, not %d: %w", revision, u.Listing.ExpectRevision, ErrStaleListing)
		}

		// A signed change's record is stored pending just before the change's row, in
		// the change's order (so its id, and its number, follow the change's); the
		// records are numbered after the commit.
		b = &pgx.Batch{}
		for _, c := range rows {
			ledgerID := `NULL`
			if c.Envelope != nil {
				pgQueueAppendRecord(b, RecordChange, c.EntryID, c.digest, c.KeyID, c.Envelope, now, &record)
				ledgerID = pgRecordID
			}
			b.Queue(`
				INSERT INTO changes (entry_id, number, recorded_at, origin, kind, summary, details, badges,
					before_round, after_round, ledger_id)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, `+ledgerID+`)`,
				c.EntryID, c.Number, pgTime(c.RecordedAt), c.Origin, c.Kind, c.Summary, c.Details, c.badges,
				nullID(c.BeforeRound), nullID(c.AfterRound),
			).Exec(func(pgconn.CommandTag) error { return nil })
		}
		b.Queue(`
			INSERT INTO history_state (entry_id, state, processed, updated_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (entry_id) DO UPDATE SET
				state = excluded.state, processed = excluded.processed, updated_at = excluded.updated_at`,
			u.EntryID, u.State, u.Processed, pgTime(now),
		).Exec(func(pgconn.CommandTag) error { return nil })
		for _, d := range u.Due {
			pgQueueSetDue(b, u.EntryID, d)
		}
		if u.Listing != nil {
			l := &u.Listing.Listing
			b.Queue(bindDollar(upsertMaintainerListingSQL), u.EntryID, l.Description, l.SetupNotes, links,
				u.Listing.ExpectRevision+1, pgTime(now)).Exec(func(pgconn.CommandTag) error { return nil })
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return fmt.Errorf("couldn't store the changes, state or due times: %w", err)
		}
		return nil
	})
	if err == nil && record != 0 {
		s.numberCommitted(ctx, record)
	}
	if err != nil {
		return fmt.Errorf("couldn't save the history of entry %d: %w", u.EntryID, err)
	}
	return nil
}
