package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// The follows' writes that must differ on SQLite (sql_follows.go has the rest): the
// planning step, whose windows are bound as one JSON array (json_each) and whose two
// statements run in one IMMEDIATE transaction (SQLite has no data-modifying CTE), and
// the claim, which needs no row lock: the single writer serializes claims.

// sqliteIsFollowLimit reports whether err is the notify_settings_follows_limit CHECK
// (the only CHECK a follow's insert can violate).
func sqliteIsFollowLimit(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code() == sqlite3.SQLITE_CONSTRAINT_CHECK
}

// sqliteIsForeignKey reports whether err is a FOREIGN KEY constraint error.
func sqliteIsForeignKey(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
}

// sqliteWindows is ws as the JSON arrays json_each reads: [[entry, seq from, seq to,
// from, to], …], times in Unix milliseconds, split into the open windows (SeqFrom 0 and
// From at or before oldest: every start below their ends counts; From 0) and the
// bounded ones, and all of them.
func sqliteWindows(ws []NotifyWindow, oldest time.Time) (open, bounded, all string, err error) {
	o, b, a := [][5]int64{}, [][5]int64{}, [][5]int64{}
	for _, w := range ws {
		row := [5]int64{w.EntryID, w.SeqFrom, w.SeqTo, w.From.UnixMilli(), w.To.UnixMilli()}
		if w.From.IsZero() {
			row[3] = 0
		}
		if w.open(oldest) {
			row[3] = 0
			o = append(o, row)
		} else {
			b = append(b, row)
		}
		a = append(a, row)
	}
	var out [3]string
	for i, rows := range [][][5]int64{o, b, a} {
		j, err := json.Marshal(rows)
		if err != nil {
			return "", "", "", err
		}
		out[i] = string(j)
	}
	return out[0], out[1], out[2], nil
}

// sqlitePlanSQL writes the outbox rows of a plan and returns their accounts. An
// account has something to be told when one of its follows falls into a window, with
// starts c = covered_seq and f = max(the follow's start, oldest): for an open window
// (SeqFrom 0, From ≤ oldest) that is c < SeqTo and f < To, i.e. the follow began before
// To, so the followers of the open windows' entries are read from follows_entry alone,
// those whose follow began before To kept, and grouped by account with the highest
// SeqTo they reach; a bounded window (rare: only after changes that cancel out, or a
// change committed out of its recorded order) is checked row by row. The parameters
// are listed in PlanEmails.
func sqlitePlanSQL(mode string) string {
	return `
	WITH reach AS MATERIALIZED (
		SELECT f.account_id, max(w.value ->> 2) AS s_to
		FROM json_each(?) w CROSS JOIN follows f ON f.entry_id = w.value ->> 0
		WHERE f.created_at < w.value ->> 4
		GROUP BY f.account_id
	), hit AS (
		SELECT o.account_id FROM reach o JOIN notify_settings s ON s.account_id = o.account_id
		WHERE coalesce(s.covered_seq, 0) < o.s_to
		UNION
		SELECT f.account_id
		FROM json_each(?) w CROSS JOIN follows f ON f.entry_id = w.value ->> 0
		JOIN notify_settings s ON s.account_id = f.account_id
		WHERE coalesce(s.covered_seq, 0) >= w.value ->> 1 AND coalesce(s.covered_seq, 0) < w.value ->> 2
		  AND max(f.created_at, ?) >= w.value ->> 3 AND max(f.created_at, ?) < w.value ->> 4
		UNION
		SELECT account_id FROM followed_gone WHERE told_at IS NULL
	)
	INSERT INTO outbox (account_id, created_at, window_from, window_through, seq_from, seq_through, message_id, state, attempts, next_attempt_at)
	SELECT s.account_id, ?, s.covered_through, ?, coalesce(s.covered_seq, 0), ?, '<' || ? || '.' || s.account_id || '@' || ? || '>', 'pending', 0, ?
	FROM hit h JOIN notify_settings s ON s.account_id = h.account_id
	JOIN accounts ac ON ac.id = s.account_id AND ac.email IS NOT NULL
	WHERE ` + planDue(mode, "?", "outbox") + `
	RETURNING account_id`
}

// sqlitePlanByAccountSQL is sqlitePlanSQL the other way round: it walks the due
// accounts and looks for a follow in a window among each one's follows (the primary
// key's range), stopping at the first. It reads about (due accounts) × (entries /
// window entries) follows, where sqlitePlanSQL reads every follower of every window's
// entry: after a round that changed many entries this reads far fewer rows, and it
// needs no grouping. The windows are in the connection's temporary table
// notify_windows (sqliteWindowsTable), indexed by entry; the parameters are those of
// sqlitePlanSQL's insert, then oldest twice.
func sqlitePlanByAccountSQL(mode string) string {
	return `
	INSERT INTO outbox (account_id, created_at, window_from, window_through, seq_from, seq_through, message_id, state, attempts, next_attempt_at)
	SELECT s.account_id, ?, s.covered_through, ?, coalesce(s.covered_seq, 0), ?, '<' || ? || '.' || s.account_id || '@' || ? || '>', 'pending', 0, ?
	FROM notify_settings s
	JOIN accounts ac ON ac.id = s.account_id AND ac.email IS NOT NULL
	WHERE ` + planDue(mode, "?", "outbox") + ` AND (
		EXISTS (
			SELECT 1 FROM follows f JOIN temp.notify_cursor_windows w ON w.entry_id = f.entry_id
			WHERE f.account_id = s.account_id
			  AND coalesce(s.covered_seq, 0) >= w.s_from AND coalesce(s.covered_seq, 0) < w.s_to
			  AND max(f.created_at, ?) >= w.t_from AND max(f.created_at, ?) < w.t_to)
		OR EXISTS (SELECT 1 FROM followed_gone g WHERE g.account_id = s.account_id AND g.told_at IS NULL))
	RETURNING account_id`
}

// sqliteWindowsTable fills the writer connection's temporary table of windows (each
// last statement takes the windows' JSON). A temporary table is
// the connection's own, and the writer is one connection inside one transaction.
var sqliteWindowsTable = []string{
	`CREATE TEMP TABLE IF NOT EXISTS notify_cursor_windows (
		entry_id INTEGER NOT NULL,
		s_from   INTEGER NOT NULL,
		s_to     INTEGER NOT NULL,
		t_from   INTEGER NOT NULL,
		t_to     INTEGER NOT NULL,
		PRIMARY KEY (entry_id, s_from, t_from)
	) WITHOUT ROWID`,
	`DELETE FROM temp.notify_cursor_windows`,
	`INSERT INTO temp.notify_cursor_windows (entry_id, s_from, s_to, t_from, t_to)
	 SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4 FROM json_each(?)`,
}

// sqlitePlanPath, when set (tests only), makes PlanEmails take one way: "entry"
// (sqlitePlanSQL) or "account" (sqlitePlanByAccountSQL).
var sqlitePlanPath string

// planByAccount reports whether walking the due accounts reads fewer rows than
// walking the windows' followers (see sqlitePlanByAccountSQL), from the counts of
// entries, follows and due accounts.
func planByAccount(ctx context.Context, tx *sqliteTx, p *EmailPlan) (bool, error) {
	switch sqlitePlanPath {
	case "entry":
		return false, nil
	case "account":
		return true, nil
	}
	var entries, follows, due float64
	err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM entries), (SELECT coalesce(sum(follows), 0) FROM notify_settings),
		(SELECT count(*) FROM notify_settings s WHERE `+planDue(p.Mode, "?", "outbox")+`)`, millis(p.DueBefore)).Scan(&entries, &follows, &due)
	if err != nil {
		return false, err
	}
	windowEntries := map[int64]bool{}
	for _, w := range p.Windows {
		windowEntries[w.EntryID] = true
	}
	n := float64(max(len(windowEntries), 1))
	byEntry := n * follows / max(entries, 1)
	byAccount := due * min(MaxFollows, max(entries, 1)/n)
	return byAccount < byEntry, nil
}

// PlanEmails writes an outbox row for every account with an address due for an e-mail that has
// something to be told (a follow in one of p's windows, or a deleted followed entry
// not told yet), and moves those accounts' last e-mail and CoveredThrough to p.Now and
// CoveredSeq up to p.ThroughSeq (never back: an account told only of a deletion may be
// covered further already), in one transaction (the single writer serializes plans).
// It returns how many rows it wrote.
func (s *sqliteStore) PlanEmails(ctx context.Context, p EmailPlan) (int, error) {
	if err := checkPlan(&p); err != nil {
		return 0, fmt.Errorf("couldn't plan e-mails: %w", err)
	}
	open, bounded, all, err := sqliteWindows(p.Windows, p.Oldest)
	if err != nil {
		return 0, fmt.Errorf("couldn't plan e-mails: %w", err)
	}
	oldest, now := millis(p.Oldest), millis(p.Now)
	var planned int
	err = s.inTx(ctx, func(tx *sqliteTx) error {
		byAccount, err := planByAccount(ctx, tx, &p)
		if err != nil {
			return err
		}
		var rows *sql.Rows
		if byAccount {
			for i, q := range sqliteWindowsTable {
				var args []any
				if i == len(sqliteWindowsTable)-1 {
					args = []any{all}
				}
				if _, err := tx.ExecContext(ctx, q, args...); err != nil {
					return err
				}
			}
			rows, err = tx.QueryContext(ctx, sqlitePlanByAccountSQL(p.Mode),
				now, now, p.ThroughSeq, p.MessageIDPrefix, p.MessageIDDomain, now, millis(p.DueBefore),
				oldest, oldest)
		} else {
			rows, err = tx.QueryContext(ctx, sqlitePlanSQL(p.Mode),
				open,
				bounded, oldest, oldest,
				now, now, p.ThroughSeq, p.MessageIDPrefix, p.MessageIDDomain, now,
				millis(p.DueBefore))
		}
		if err != nil {
			return err
		}
		ids, err := collect[int64](rows, func(r rowScanner) (int64, error) {
			var id int64
			return id, r.Scan(&id)
		})
		if err != nil {
			return err
		}
		planned = len(ids)
		if planned == 0 {
			return nil
		}
		list, err := json.Marshal(ids)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE notify_settings SET last_email_at = ?, covered_through = ?, covered_seq = max(coalesce(covered_seq, 0), ?)
			WHERE account_id IN (SELECT value FROM json_each(?))`, now, now, p.ThroughSeq, string(list))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("couldn't plan e-mails: %w", err)
	}
	return planned, nil
}

// ClaimEmail claims the outbox row due first (see claimEmailSQL) until now + lease; ok
// false when none is due.
func (s *sqliteStore) ClaimEmail(ctx context.Context, now time.Time, lease time.Duration) (OutboxEmail, bool, error) {
	return s.claimEmail(ctx, s.write, "", now, lease)
}

// FinishEmail stores what became of a claimed e-mail, in one transaction: its state
// and, once sent, the deleted followed entries it told. ErrLeaseLost when the claim was
// overtaken.
func (s *sqliteStore) FinishEmail(ctx context.Context, o EmailOutcome) error {
	return s.inTx(ctx, func(tx *sqliteTx) error { return s.finishEmail(ctx, sqliteQuerier{tx}, o) })
}
