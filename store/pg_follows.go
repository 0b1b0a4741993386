package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The follows' writes that must differ on PostgreSQL (sql_follows.go has the rest): the
// planning step, one statement whose windows are bound as arrays (unnest) and whose
// insert and settings update are data-modifying CTEs, and the claim, whose row lock
// skips rows other workers hold (FOR UPDATE SKIP LOCKED), so workers claim side by side.

// pgIsFollowLimit reports whether err is the notify_settings_follows_limit CHECK.
func pgIsFollowLimit(err error) bool {
	var e *pgconn.PgError
	return errors.As(err, &e) && e.Code == "23514" && e.ConstraintName == "notify_settings_follows_limit"
}

// pgIsForeignKey reports whether err is a foreign_key_violation.
func pgIsForeignKey(err error) bool {
	var e *pgconn.PgError
	return errors.As(err, &e) && e.Code == "23503"
}

func isFollowLimit(err error) bool { return pgIsFollowLimit(err) || sqliteIsFollowLimit(err) }
func isForeignKey(err error) bool  { return pgIsForeignKey(err) || sqliteIsForeignKey(err) }

// pgLockPlanEmails is the transaction advisory lock (with pgLockClass, pg.go) that
// makes PlanEmails one at a time: two planning jobs at once would otherwise both read
// an account as due before either committed, and plan its e-mail twice.
const pgLockPlanEmails int32 = 3

// pgPlanSQL is sqlitePlanSQL (which explains it) in one statement: $1–$5 the open
// windows (entry, seq from, seq to, from, to), $6–$10 the bounded ones, $11 oldest,
// $12 now, $13 ThroughSeq, $14 the Message-ID prefix, $15 its domain, $16 DueBefore.
func pgPlanSQL(mode string) string {
	return `
	WITH busy AS MATERIALIZED (` + unfinishedOutbox + `
	), reach AS MATERIALIZED (
		SELECT f.account_id, max(w.s_to) AS s_to
		FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::timestamptz[], $5::timestamptz[]) AS w (entry_id, s_from, s_to, t_from, t_to)
		JOIN follows f ON f.entry_id = w.entry_id
		WHERE f.created_at < w.t_to
		GROUP BY f.account_id
	), hit AS (
		SELECT o.account_id FROM reach o JOIN notify_settings s ON s.account_id = o.account_id
		WHERE coalesce(s.covered_seq, 0) < o.s_to
		UNION
		SELECT f.account_id
		FROM unnest($6::bigint[], $7::bigint[], $8::bigint[], $9::timestamptz[], $10::timestamptz[]) AS w (entry_id, s_from, s_to, t_from, t_to)
		JOIN follows f ON f.entry_id = w.entry_id
		JOIN notify_settings s ON s.account_id = f.account_id
		WHERE coalesce(s.covered_seq, 0) >= w.s_from AND coalesce(s.covered_seq, 0) < w.s_to
		  AND greatest(f.created_at, $11) >= w.t_from AND greatest(f.created_at, $11) < w.t_to
		UNION
		SELECT account_id FROM followed_gone WHERE told_at IS NULL
	), ins AS (
		INSERT INTO outbox (account_id, created_at, window_from, window_through, seq_from, seq_through, message_id, state, attempts, next_attempt_at)
		SELECT s.account_id, $12, s.covered_through, $12, coalesce(s.covered_seq, 0), $13, '<' || $14::text || '.' || s.account_id || '@' || $15::text || '>', 'pending', 0, $12
		FROM hit h JOIN notify_settings s ON s.account_id = h.account_id
		JOIN accounts ac ON ac.id = s.account_id AND ac.email IS NOT NULL
		WHERE ` + planDue(mode, "$16", "busy") + `
		RETURNING account_id
	)
	UPDATE notify_settings s SET last_email_at = $12, covered_through = $12, covered_seq = greatest(coalesce(s.covered_seq, 0), $13)
	FROM ins WHERE s.account_id = ins.account_id`
}

// PlanEmails: see sqliteStore.PlanEmails. Plans run one at a time, on the advisory
// lock pgLockPlanEmails taken first in the plan's transaction: the plan's statement
// then sees what the plan before it committed (READ COMMITTED), so an account that
// one planned is not due for the next.
func (s *pgStore) PlanEmails(ctx context.Context, p EmailPlan) (int, error) {
	if err := checkPlan(&p); err != nil {
		return 0, fmt.Errorf("couldn't plan e-mails: %w", err)
	}
	var (
		oe, osf, ost, be, bsf, bst []int64
		of, ot, bf, bt             []time.Time
	)
	for _, w := range p.Windows {
		if w.open(p.Oldest) {
			oe, osf, ost = append(oe, w.EntryID), append(osf, 0), append(ost, w.SeqTo)
			of, ot = append(of, pgTime(p.Oldest)), append(ot, pgTime(w.To))
		} else {
			be, bsf, bst = append(be, w.EntryID), append(bsf, w.SeqFrom), append(bst, w.SeqTo)
			bf, bt = append(bf, pgTime(w.From)), append(bt, pgTime(w.To))
		}
	}
	var tag pgconn.CommandTag
	err := pgInTx(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, pgLockClass, pgLockPlanEmails); err != nil {
			return err
		}
		var err error
		tag, err = tx.Exec(ctx, pgPlanSQL(p.Mode), oe, osf, ost, of, ot, be, bsf, bst, bf, bt, pgTime(p.Oldest), pgTime(p.Now),
			p.ThroughSeq, p.MessageIDPrefix, p.MessageIDDomain, pgTime(p.DueBefore))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("couldn't plan e-mails: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// ClaimEmail: see sqliteStore.ClaimEmail.
func (s *pgStore) ClaimEmail(ctx context.Context, now time.Time, lease time.Duration) (OutboxEmail, bool, error) {
	return s.claimEmail(ctx, s.write, "FOR UPDATE SKIP LOCKED", now, lease)
}

// FinishEmail: see sqliteStore.FinishEmail.
func (s *pgStore) FinishEmail(ctx context.Context, o EmailOutcome) error {
	return s.inTx(ctx, func(tx pgx.Tx) error { return s.finishEmail(ctx, newPgQuerier(tx), o) })
}
