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
	Proof string
	// VerifiedAt is the proof's time; LastCheckedAt the last check that got an answer
	// (the proof found, or found gone).
	VerifiedAt    time.Time
	LastCheckedAt time.Time
	// NextCheckAt is when the re-check proves the claim again (migration 0017).
	NextCheckAt time.Time
	// UnansweredSince is the first of an unbroken run of checks without an answer,
	// GoneSince the first of an unbroken run of answers saying the proof is gone (zero:
	// none).
	UnansweredSince time.Time
	GoneSince       time.Time
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
	// NextCheckAt is the claim's first re-check (after At).
	NextCheckAt time.Time
}

// ClaimRecheck is the outcome of one re-check of a live claim (RecheckClaim). Package
// claims decides the values; the store writes them.
type ClaimRecheck struct {
	At time.Time
	// Answered: the source answered (the proof found, or found gone); LastCheckedAt
	// becomes At. Otherwise it stays.
	Answered bool
	// NextCheckAt is the next re-check; UnansweredSince and GoneSince as Claim's (zero:
	// none).
	NextCheckAt     time.Time
	UnansweredSince time.Time
	GoneSince       time.Time
	// LapseReason, when set, lapses the claim at At.
	LapseReason string
}

const claimTokenColumns = `id, token_hash, account_id, entry_id, method, target, created_at, expires_at, used_at`

func scanClaimToken(r rowScanner) (ClaimToken, error) {
	var t ClaimToken
	err := r.Scan(&t.ID, &t.TokenHash, &t.AccountID, &t.EntryID, &t.Method, &t.Target,
		timeCol(&t.CreatedAt), timeCol(&t.ExpiresAt), timeCol(&t.UsedAt))
	return t, err
}

const claimColumns = `id, account_id, entry_id, method, target, token_hash, proof, verified_at, last_checked_at,
	next_check_at, unanswered_since, gone_since, lapsed_at, coalesce(lapse_reason, '')`

func scanClaim(r rowScanner) (Claim, error) {
	var c Claim
	err := r.Scan(&c.ID, &c.AccountID, &c.EntryID, &c.Method, &c.Target, &c.TokenHash, &c.Proof,
		timeCol(&c.VerifiedAt), timeCol(&c.LastCheckedAt), timeCol(&c.NextCheckAt), timeCol(&c.UnansweredSince),
		timeCol(&c.GoneSince), timeCol(&c.LapsedAt), &c.LapseReason)
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
	next := p.NextCheckAt
	if !next.After(p.At) {
		next = p.At.Add(24 * time.Hour)
	}
	return scanClaim(q.QueryRow(ctx, `INSERT INTO claims (account_id, entry_id, method, target, token_hash, proof,
			verified_at, last_checked_at, next_check_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (account_id, entry_id, method, target) DO UPDATE SET token_hash = excluded.token_hash,
			proof = excluded.proof, verified_at = excluded.verified_at, last_checked_at = excluded.last_checked_at,
			next_check_at = excluded.next_check_at, unanswered_since = NULL, gone_since = NULL,
			lapsed_at = NULL, lapse_reason = NULL
		RETURNING `+claimColumns,
		t.AccountID, t.EntryID, t.Method, t.Target, p.TokenHash, claimText(p.Proof), at, at, s.d.time(next)))
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

// ClaimsDue returns the live claims whose next check is at or before now, the most
// overdue first (then by id), at most limit (≤ 0 or above 1000: 1000).
func (s *sqlStore) ClaimsDue(ctx context.Context, now time.Time, limit int) ([]Claim, error) {
	if limit <= 0 || limit > maxClaimBatch {
		limit = maxClaimBatch
	}
	return queryAll(ctx, s.read, scanClaim, `SELECT `+claimColumns+` FROM claims
		WHERE lapsed_at IS NULL AND next_check_at <= ? ORDER BY next_check_at, id LIMIT ?`, s.d.time(now), limit)
}

// RecheckClaim records a re-check of a live claim (ClaimRecheck says what to write).
// ErrNotFound when there is no such live claim, or it was proven anew after r.At.
func (s *sqlStore) RecheckClaim(ctx context.Context, id int64, r ClaimRecheck) (Claim, error) {
	if r.LapseReason == "" && !r.NextCheckAt.After(r.At) {
		return Claim{}, fmt.Errorf("couldn't record a re-check of claim %d: its next check (%s) is not after it (%s)", id, r.NextCheckAt, r.At)
	}
	next := r.NextCheckAt
	if next.IsZero() {
		next = r.At
	}
	var lapsedAt, reason any
	if r.LapseReason != "" {
		lapsedAt, reason = s.d.time(r.At), claimText(r.LapseReason)
	}
	last := `last_checked_at`
	args := []any{}
	if r.Answered || r.LapseReason != "" {
		last = `?`
		args = append(args, s.d.time(r.At))
	}
	args = append(args, s.d.time(next), s.d.nullTime(r.UnansweredSince), s.d.nullTime(r.GoneSince), lapsedAt, reason, id, s.d.time(r.At))
	c, err := scanClaim(s.write.QueryRow(ctx, `UPDATE claims SET last_checked_at = `+last+`, next_check_at = ?,
			unanswered_since = ?, gone_since = ?, lapsed_at = ?, lapse_reason = ?
		WHERE id = ? AND lapsed_at IS NULL AND verified_at <= ? RETURNING `+claimColumns, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return Claim{}, ErrNotFound
	}
	return c, err
}

// MaintainsEntry reports whether the account holds a live claim on the entry whose part
// is still one the entry's claims count (package claims' rule, claims/doc.go "Which
// parts count"): the entry's own locator (of the kind the method proves), or a remote,
// npm or PyPI part the entry lists now. A github-permission claim never counts (the
// method was withdrawn). One query.
func (s *sqlStore) MaintainsEntry(ctx context.Context, accountID, entryID int64) (bool, error) {
	var n int
	err := s.read.QueryRow(ctx, `SELECT count(*) FROM claims c JOIN entries e ON e.id = c.entry_id
		WHERE c.account_id = ? AND c.entry_id = ? AND c.lapsed_at IS NULL AND c.method <> 'github-permission'
		AND (
			(c.target = e.locator AND e.kind = `+claimPartKind+`)
			OR EXISTS (SELECT 1 FROM entry_parts p WHERE p.entry_id = c.entry_id AND p.locator = c.target
				AND p.kind IN ('remote', 'npm', 'pypi') AND p.kind = `+claimPartKind+`)
		)`, accountID, entryID).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("couldn't read the claims of account %d on entry %d: %w", accountID, entryID, err)
	}
	return n > 0, nil
}

// claimPartKind is the kind of part a claim's method proves (c.method), in SQL.
const claimPartKind = `(CASE c.method WHEN 'well-known' THEN 'remote' WHEN 'dns' THEN 'remote' WHEN 'npm' THEN 'npm'
	WHEN 'pypi' THEN 'pypi' ELSE 'github' END)`

// PruneClaimTokens deletes the tokens that expired or were used before before, and
// returns how many.
func (s *sqlStore) PruneClaimTokens(ctx context.Context, before time.Time) (int64, error) {
	return s.write.Exec(ctx, `DELETE FROM claim_tokens WHERE expires_at < ? OR used_at < ?`, s.d.time(before), s.d.time(before))
}
