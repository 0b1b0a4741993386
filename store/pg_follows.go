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

// pgPlanSQL is sqlitePlanSQL (which explains it) in one statement: $1–$3 the open
// windows (entry, from, to), $4–$6 the bounded ones, $7 oldest, $8 now, $9 through,
// $10 the Message-ID prefix, $11 its domain, $12 planDueArg.
func pgPlanSQL(mode string) string {
	return `
	WITH reach AS MATERIALIZED (
		SELECT f.account_id, max(w.t_to) AS t_to
		FROM unnest($1::bigint[], $2::timestamptz[], $3::timestamptz[]) AS w (entry_id, t_from, t_to)
		JOIN follows f ON f.entry_id = w.entry_id
		WHERE f.created_at < w.t_to
		GROUP BY f.account_id
	), hit AS (
		SELECT o.account_id FROM reach o JOIN notify_settings s ON s.account_id = o.account_id
		WHERE coalesce(s.covered_through, $7) < o.t_to
		UNION
		SELECT f.account_id
		FROM unnest($4::bigint[], $5::timestamptz[], $6::timestamptz[]) AS w (entry_id, t_from, t_to)
		JOIN follows f ON f.entry_id = w.entry_id
		JOIN notify_settings s ON s.account_id = f.account_id
		WHERE greatest(coalesce(s.covered_through, $7), f.created_at, $7) >= w.t_from
		  AND greatest(coalesce(s.covered_through, $7), f.created_at, $7) < w.t_to
		UNION
		SELECT account_id FROM followed_gone WHERE told_at IS NULL
	), ins AS (
		INSERT INTO outbox (account_id, created_at, window_from, window_through, message_id, state, attempts, next_attempt_at)
		SELECT s.account_id, $8, s.covered_through, $9, '<' || $10::text || '.' || s.account_id || '@' || $11::text || '>', 'pending', 0, $8
		FROM hit h JOIN notify_settings s ON s.account_id = h.account_id
		JOIN accounts ac ON ac.id = s.account_id AND ac.email IS NOT NULL
		WHERE ` + planDue(mode, "$12") + `
		RETURNING account_id
	)
	UPDATE notify_settings s SET last_email_at = $8, covered_through = $9
	FROM ins WHERE s.account_id = ins.account_id`
}

// PlanEmails: see sqliteStore.PlanEmails.
func (s *pgStore) PlanEmails(ctx context.Context, p EmailPlan) (int, error) {
	if err := checkPlan(&p); err != nil {
		return 0, fmt.Errorf("couldn't plan e-mails: %w", err)
	}
	var (
		oe, be         []int64
		of, ot, bf, bt []time.Time
	)
	for _, w := range p.Windows {
		if w.From.IsZero() || !w.From.After(p.Oldest) {
			oe, of, ot = append(oe, w.EntryID), append(of, pgTime(p.Oldest)), append(ot, pgTime(w.To))
		} else {
			be, bf, bt = append(be, w.EntryID), append(bf, pgTime(w.From)), append(bt, pgTime(w.To))
		}
	}
	var tag pgconn.CommandTag
	err := pgInTx(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		tag, err = tx.Exec(ctx, pgPlanSQL(p.Mode), oe, of, ot, be, bf, bt, pgTime(p.Oldest), pgTime(p.Now), pgTime(p.Through),
			p.MessageIDPrefix, p.MessageIDDomain, pgTime(planDueArg(&p)))
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
