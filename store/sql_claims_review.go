package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// The operators' review of claims (issue 18): every claim with its entry, newest
// first, and an operator's revocation, which lapses a live claim with a reason and
// appends the audit row in one transaction. The claim rules stay package claims' and
// sql_claims.go's; this file only reads them and lapses one the way a re-check does.

// MaxClaimReviewPage is the most claims ClaimsForReview returns at once.
const MaxClaimReviewPage = 200

// ClaimReview is a claim as an operator reviews it: with its entry's slug and name.
type ClaimReview struct {
	Claim
	EntrySlug string
	EntryName string
}

// ClaimReviewQuery selects the claims to review: those with an id below BeforeID
// (≤ 0: from the newest), live ones only when LiveOnly, of one entry when EntryID is
// set, at most Limit (≤ 0 or above MaxClaimReviewPage: MaxClaimReviewPage).
type ClaimReviewQuery struct {
	BeforeID int64
	LiveOnly bool
	EntryID  int64
	Limit    int
}

func scanClaimReview(r rowScanner) (ClaimReview, error) {
	var c ClaimReview
	err := r.Scan(&c.ID, &c.AccountID, &c.EntryID, &c.Method, &c.Target, &c.TokenHash, &c.Proof,
		timeCol(&c.VerifiedAt), timeCol(&c.LastCheckedAt), timeCol(&c.LapsedAt), &c.LapseReason, &c.EntrySlug, &c.EntryName)
	return c, err
}

// ClaimsForReview returns the claims q selects, newest first, with their entries.
func (s *sqlStore) ClaimsForReview(ctx context.Context, q ClaimReviewQuery) ([]ClaimReview, error) {
	if q.Limit <= 0 || q.Limit > MaxClaimReviewPage {
		q.Limit = MaxClaimReviewPage
	}
	if q.BeforeID <= 0 {
		q.BeforeID = 1<<63 - 1
	}
	rows, err := queryAll(ctx, s.read, scanClaimReview, `SELECT c.id, c.account_id, c.entry_id, c.method, c.target, c.token_hash,
			c.proof, c.verified_at, c.last_checked_at, c.lapsed_at, coalesce(c.lapse_reason, ''), e.slug, e.name
		FROM claims c JOIN entries e ON e.id = c.entry_id
		WHERE c.id < ? AND (? = 0 OR c.lapsed_at IS NULL) AND (? = 0 OR c.entry_id = ?)
		ORDER BY c.id DESC LIMIT ?`, q.BeforeID, boolInt(q.LiveOnly), q.EntryID, q.EntryID, q.Limit)
	if err != nil {
		return nil, fmt.Errorf("couldn't read the claims to review: %w", err)
	}
	return rows, nil
}

// RevokeClaimRecorded lapses the live claim id at at with reason (what RecheckClaim
// does when a proof is gone) and appends rec to the audit log, in one transaction.
// ErrNotFound when there is no such live claim.
func (s *sqlStore) RevokeClaimRecorded(ctx context.Context, id int64, at time.Time, reason string, rec OperatorAction) (Claim, error) {
	if reason == "" {
		return Claim{}, errors.New("couldn't revoke a claim: a revocation needs a reason")
	}
	if err := checkOperatorAction(rec); err != nil {
		return Claim{}, err
	}
	var c Claim
	err := s.writeTx(ctx, func(tx querier) error {
		var err error
		c, err = scanClaim(tx.QueryRow(ctx, `UPDATE claims SET last_checked_at = ?, lapsed_at = ?, lapse_reason = ?
			WHERE id = ? AND lapsed_at IS NULL AND verified_at <= ? RETURNING `+claimColumns,
			s.d.time(at), s.d.time(at), claimText(reason), id, s.d.time(at)))
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		_, err = s.appendOperatorAction(ctx, tx, rec)
		return err
	})
	if err != nil {
		return Claim{}, fmt.Errorf("couldn't revoke claim %d: %w", id, err)
	}
	return c, nil
}
