package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Claims (issue 18; migration 0016): the tokens an account publishes to prove that it
// controls a part of an entry, and the claims made with them. Package claims decides
// what a proof is and checks it; the store keeps what must hold whatever the caller
// does: a token is stored as its SHA-256 only and used once, by its own account, before
// it expires; one claim per account, entry, method and part; entries.claimed is true
// exactly while the entry has a live claim (a trigger of the migration owns it, so that
// deleting an account or an entry, which deletes their claims, unclaims the entry too).

// Bounds of the claim tables.
const (
	// MaxLiveClaimTokens is how many unused, unexpired claim tokens an account may hold
	// at once.
	MaxLiveClaimTokens = 20
	// MaxClaimTarget is the longest part locator a claim or token names, in bytes.
	MaxClaimTarget = 2048
	// MaxClaimText is the longest proof or lapse reason kept, in bytes.
	MaxClaimText = 500
	// maxClaimBatch bounds the claims one call reads.
	maxClaimBatch = 1000
)

// Errors of the claim methods that callers branch on.
var (
	// ErrClaimTokenLimit is returned by AddClaimToken when the account holds
	// MaxLiveClaimTokens live tokens already.
	ErrClaimTokenLimit = errors.New("the account holds the most claim tokens allowed")
	// ErrClaimTokenUsed is returned by ProveClaim for a token that made a claim already.
	ErrClaimTokenUsed = errors.New("the claim token was used already")
	// ErrClaimTokenExpired is returned by ProveClaim for a token past its end.
	ErrClaimTokenExpired = errors.New("the claim token expired")
)

// ClaimToken is a stored claim token: the SHA-256 of the token, never the token.
type ClaimToken struct {
	ID        int64
	TokenHash []byte // 32 bytes
	AccountID int64
	EntryID   int64
	// Method is how the part is proven (package claims' methods); Target the part's
	// locator (store.Part.Locator).
	Method    string
	Target    string
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    time.Time // zero while unused
}

// Claim is an account's proven control of a part of an entry.
type Claim struct {
	ID        int64
	AccountID int64
	EntryID   int64
	Method    string
	Target    string
	// TokenHash is the SHA-256 of the token the proof carries; the re-check looks for
	// it again.
	TokenHash []byte
	// Proof says in one line what was found where (no secret: never the token).
	Proof         string
	VerifiedAt    time.Time
	LastCheckedAt time.Time
	// LapsedAt is when a re-check found the proof gone (zero while live), LapseReason
	// why.
	LapsedAt    time.Time
	LapseReason string
}

// Live reports whether the claim has not lapsed.
func (c Claim) Live() bool { return c.LapsedAt.IsZero() }

// ClaimProof is a successful check of a token's proof, which ProveClaim stores.
type ClaimProof struct {
	TokenHash []byte
	AccountID int64
	Proof     string
	At        time.Time
}

const claimTokenColumns = `id, token_hash, account_id, entry_id, method, target, created_at, expires_at, used_at`

func scanClaimToken(r rowScanner) (ClaimToken, error) {
	var t ClaimToken
	err := r.Scan(&t.ID, &t.TokenHash, &t.AccountID, &t.EntryID, &t.Method, &t.Target,
		timeCol(&t.CreatedAt), timeCol(&t.ExpiresAt), timeCol(&t.UsedAt))
	return t, err
}

const claimColumns = `id, account_id, entry_id, method, target, token_hash, proof, verified_at, last_checked_at,
	lapsed_at, coalesce(lapse_reason, '')`

func scanClaim(r rowScanner) (Claim, error) {
	var c Claim
	err := r.Scan(&c.ID, &c.AccountID, &c.EntryID, &c.Method, &c.Target, &c.TokenHash, &c.Proof,
		timeCol(&c.VerifiedAt), timeCol(&c.LastCheckedAt), timeCol(&c.LapsedAt), &c.LapseReason)
	return c, err
}

// claimText bounds a proof or lapse reason to MaxClaimText bytes, on a rune boundary.
func claimText(s string) string { return clipText(s, MaxClaimText) }

// AddClaimToken stores a new token. ErrClaimTokenLimit when the account holds
// MaxLiveClaimTokens live ones (a bound racing calls may pass by one each);
// ErrNotFound when the account or the entry does not exist.
func (s *sqlStore) AddClaimToken(ctx context.Context, t ClaimToken) (int64, error) {
	if err := checkHash("a claim token's hash", t.TokenHash); err != nil {
		return 0, err
	}
	if t.Target == "" || len(t.Target) > MaxClaimTarget {
		return 0, fmt.Errorf("couldn't store a claim token: its target is %d bytes long; 1 to %d are allowed", len(t.Target), MaxClaimTarget)
	}
	if !t.ExpiresAt.After(t.CreatedAt) {
		return 0, fmt.Errorf("couldn't store a claim token: it expires (%s) before it is made (%s)", t.ExpiresAt, t.CreatedAt)
	}
	var live int
	if err := s.read.QueryRow(ctx, `SELECT count(*) FROM claim_tokens WHERE account_id = ? AND used_at IS NULL AND expires_at > ?`,
		t.AccountID, s.d.time(t.CreatedAt)).Scan(&live); err != nil {
		return 0, fmt.Errorf("couldn't count the claim tokens of account %d: %w", t.AccountID, err)
	}
	if live >= MaxLiveClaimTokens {
		return 0, ErrClaimTokenLimit
	}
	var id int64
	err := s.write.QueryRow(ctx, `INSERT INTO claim_tokens (token_hash, account_id, entry_id, method, target, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		t.TokenHash, t.AccountID, t.EntryID, t.Method, t.Target, s.d.time(t.CreatedAt), s.d.time(t.ExpiresAt)).Scan(&id)
	if err == nil {
		return id, nil
	}
	// Say why, from what is stored now: a missing account or entry breaks a reference.
	var accounts, entries int
	if rerr := s.read.QueryRow(ctx, `SELECT (SELECT count(*) FROM accounts WHERE id = ?), (SELECT count(*) FROM entries WHERE id = ?)`,
		t.AccountID, t.EntryID).Scan(&accounts, &entries); rerr == nil && (accounts == 0 || entries == 0) {
		return 0, ErrNotFound
	}
	return 0, fmt.Errorf("couldn't store a claim token of account %d: %w", t.AccountID, err)
}

// ClaimToken returns the token with the hash, or ErrNotFound.
func (s *sqlStore) ClaimToken(ctx context.Context, tokenHash []byte) (ClaimToken, error) {
	if err := checkHash("a claim token's hash", tokenHash); err != nil {
		return ClaimToken{}, err
	}
	t, err := scanClaimToken(s.read.QueryRow(ctx, `SELECT `+claimTokenColumns+` FROM claim_tokens WHERE token_hash = ?`, tokenHash))
	if errors.Is(err, sql.ErrNoRows) {
		return ClaimToken{}, ErrNotFound
	}
	return t, err
}

// proveClaim is ProveClaim's transaction on q. It locks no entry row itself: the
// claims trigger of migration 0016 does, after the claim's row, the order every write
// of a claim takes (a re-check, an account's deletion), so that they never wait on
// each other in opposite orders.
func (s *sqlStore) proveClaim(ctx context.Context, q querier, p ClaimProof) (Claim, error) {
	t, err := scanClaimToken(q.QueryRow(ctx, `SELECT `+claimTokenColumns+` FROM claim_tokens WHERE token_hash = ?`, p.TokenHash))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Claim{}, ErrNotFound
	case err != nil:
		return Claim{}, err
	case t.AccountID != p.AccountID:
		return Claim{}, ErrNotFound // another account's token is none of this one's business
	case !t.UsedAt.IsZero():
		return Claim{}, ErrClaimTokenUsed
	case !p.At.Before(t.ExpiresAt):
		return Claim{}, ErrClaimTokenExpired
	}
	var one int
	if err := q.QueryRow(ctx, `SELECT 1 FROM entries WHERE id = ?`, t.EntryID).Scan(&one); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return Claim{}, ErrNotFound
		}
		return Claim{}, err
	}
	n, err := q.Exec(ctx, `UPDATE claim_tokens SET used_at = ? WHERE id = ? AND used_at IS NULL`, s.d.time(p.At), t.ID)
	if err != nil {
		return Claim{}, err
	}
	if n == 0 {
		return Claim{}, ErrClaimTokenUsed // a concurrent check used it first
	}
	at := s.d.time(p.At)
	return scanClaim(q.QueryRow(ctx, `INSERT INTO claims (account_id, entry_id, method, target, token_hash, proof,
			verified_at, last_checked_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (account_id, entry_id, method, target) DO UPDATE SET token_hash = excluded.token_hash,
			proof = excluded.proof, verified_at = excluded.verified_at, last_checked_at = excluded.last_checked_at,
			lapsed_at = NULL, lapse_reason = NULL
		RETURNING `+claimColumns,
		t.AccountID, t.EntryID, t.Method, t.Target, p.TokenHash, claimText(p.Proof), at, at))
}

// Claims returns the entry's claims, live and lapsed, by id.
func (s *sqlStore) Claims(ctx context.Context, entryID int64) ([]Claim, error) {
	return queryAll(ctx, s.read, scanClaim, `SELECT `+claimColumns+` FROM claims WHERE entry_id = ? ORDER BY id LIMIT ?`,
		entryID, maxClaimBatch)
}

// AccountClaims returns the account's claims, live and lapsed, by id.
func (s *sqlStore) AccountClaims(ctx context.Context, accountID int64) ([]Claim, error) {
	return queryAll(ctx, s.read, scanClaim, `SELECT `+claimColumns+` FROM claims WHERE account_id = ? ORDER BY id LIMIT ?`,
		accountID, maxClaimBatch)
}

// ClaimsToCheck returns the live claims last checked before before, with an id above
// afterID, by id, at most limit (≤ 0 or above 1000: 1000).
func (s *sqlStore) ClaimsToCheck(ctx context.Context, before time.Time, afterID int64, limit int) ([]Claim, error) {
	if limit <= 0 || limit > maxClaimBatch {
		limit = maxClaimBatch
	}
	return queryAll(ctx, s.read, scanClaim, `SELECT `+claimColumns+` FROM claims
		WHERE lapsed_at IS NULL AND last_checked_at < ? AND id > ? ORDER BY id LIMIT ?`, s.d.time(before), afterID, limit)
}

// RecheckClaim records a re-check of a live claim at at: proven again (lapseReason
// ""), or lapsed with the reason. ErrNotFound when there is no such live claim.
func (s *sqlStore) RecheckClaim(ctx context.Context, id int64, at time.Time, lapseReason string) (Claim, error) {
	var lapsedAt any
	var reason any
	if lapseReason != "" {
		lapsedAt, reason = s.d.time(at), claimText(lapseReason)
	}
	c, err := scanClaim(s.write.QueryRow(ctx, `UPDATE claims SET last_checked_at = ?, lapsed_at = ?, lapse_reason = ?
		WHERE id = ? AND lapsed_at IS NULL AND verified_at <= ? RETURNING `+claimColumns,
		s.d.time(at), lapsedAt, reason, id, s.d.time(at)))
	if errors.Is(err, sql.ErrNoRows) {
		return Claim{}, ErrNotFound
	}
	return c, err
}

// PruneClaimTokens deletes the tokens that expired or were used before before, and
// returns how many.
func (s *sqlStore) PruneClaimTokens(ctx context.Context, before time.Time) (int64, error) {
	return s.write.Exec(ctx, `DELETE FROM claim_tokens WHERE expires_at < ? OR used_at < ?`, s.d.time(before), s.d.time(before))
}
