package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// Accounts, sessions, sign-in codes and sign-in throttles (issue 17; migration 0011).
// The store holds no secret in clear: the accounts package hashes session tokens, codes,
// addresses and client keys before they reach these methods, and compares codes itself,
// in constant time. Every statement here is atomic on its own (a conditional UPDATE, an
// upsert, a compare-and-swap), so no method needs a transaction and none is held across
// the e-mail or GitHub round trips of a sign-in.

// Account is a person who follows entries: known by a verified e-mail address, a GitHub
// user id, or both.
type Account struct {
	ID int64
	// Email is the address as it was confirmed ("" when none); EmailKey its lower-cased
	// form, the one comparisons use.
	Email    string
	EmailKey string
	// GitHubID is GitHub's numeric user id (0 when none), GitHubLogin its login at the
	// last sign-in (a login can be renamed and reused, the id never).
	GitHubID    int64
	GitHubLogin string
	CreatedAt   time.Time
}

// SessionRecord is a stored session: the SHA-256 of its token, never the token.
type SessionRecord struct {
	IDHash    []byte // 32 bytes
	AccountID int64
	CreatedAt time.Time
	// RenewedAt is when the session was last renewed (created, or slid forward on use);
	// ExpiresAt when it ends unless renewed again.
	RenewedAt time.Time
	ExpiresAt time.Time
}

// SignInCode is a stored sign-in code: the HMAC of the code, never the code.
type SignInCode struct {
	ID          int64  // assigned by AddSignInCode
	AddressHash []byte // 32 bytes: the SHA-256 of the address it was sent to
	CodeHash    []byte // 32 bytes
	CreatedAt   time.Time
	ExpiresAt   time.Time
	Tries       int // spent tries, ≤ MaxSignInCodeTries
}

// MaxSignInCodeTries is how often a sign-in code may be compared: the schema refuses a
// sixth try (migration 0011), and ClaimSignInCodeTry hands out no code with none left.
const MaxSignInCodeTries = 5

// ThrottleScope is what a sign-in throttle counts.
type ThrottleScope string

// The scopes of sign-in throttles.
const (
	ThrottleClient  ThrottleScope = "client"  // code requests of one client
	ThrottleAddress ThrottleScope = "address" // codes sent to one address
	ThrottleVerify  ThrottleScope = "verify"  // code checks of one client
)

// MaxThrottleLimit is the largest Limit a ThrottleTake may have (the schema keeps at
// most 64 times per throttle).
const MaxThrottleLimit = 64

// ThrottleTake is one request counted against a sliding-window rate limit.
type ThrottleTake struct {
	Scope   ThrottleScope
	KeyHash []byte // 32 bytes: the SHA-256 of what is counted
	At      time.Time
	// Window is the window's length, Limit how many requests it allows (1 to
	// MaxThrottleLimit): a request is allowed when fewer than Limit were allowed in the
	// Window before At.
	Window time.Duration
	Limit  int
}

// ErrAddressTaken is returned by SetAccountEmail when another account has the address.
var ErrAddressTaken = errors.New("the e-mail address belongs to another account")

const accountColumns = `id, coalesce(email, ''), coalesce(email_key, ''), coalesce(github_id, 0),
	coalesce(github_login, ''), created_at`

// scanAccount scans the accountColumns of accounts.
func scanAccount(row rowScanner) (Account, error) {
	var a Account
	err := row.Scan(&a.ID, &a.Email, &a.EmailKey, &a.GitHubID, &a.GitHubLogin, timeCol(&a.CreatedAt))
	return a, err
}

// checkHash refuses a hash that is not a SHA-256 digest.
func checkHash(what string, h []byte) error {
	if len(h) != 32 {
		return fmt.Errorf("%s must be 32 bytes (a SHA-256 digest), not %d", what, len(h))
	}
	return nil
}

func (s *sqlStore) EmailAccount(ctx context.Context, email, emailKey string, at time.Time) (Account, bool, error) {
	if len(email) < 3 || len(email) > 254 || len(emailKey) < 3 || len(emailKey) > 254 {
		return Account{}, false, fmt.Errorf("couldn't find or create the account of a %d-byte address: an address and its key of 3 to 254 bytes are required", len(email))
	}
	var id int64
	err := s.write.QueryRow(ctx, `INSERT INTO accounts (email, email_key, created_at) VALUES (?, ?, ?)
		ON CONFLICT (email_key) DO NOTHING RETURNING id`, email, emailKey, s.d.time(at)).Scan(&id)
	created := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return Account{}, false, fmt.Errorf("couldn't create an account: %w", err)
	}
	a, err := scanAccount(s.write.QueryRow(ctx, `SELECT `+accountColumns+` FROM accounts WHERE email_key = ?`, emailKey))
	if err != nil {
		return Account{}, false, fmt.Errorf("couldn't read the account of an address: %w", err)
	}
	return a, created, nil
}

func (s *sqlStore) GitHubAccount(ctx context.Context, githubID int64, login string, at time.Time) (Account, bool, error) {
	if githubID <= 0 || login == "" || len(login) > 39 {
		return Account{}, false, fmt.Errorf("couldn't find or create the account of GitHub user %d: a positive id and a login of 1 to 39 bytes are required", githubID)
	}
	var id int64
	err := s.write.QueryRow(ctx, `INSERT INTO accounts (github_id, github_login, created_at) VALUES (?, ?, ?)
		ON CONFLICT (github_id) DO NOTHING RETURNING id`, githubID, login, s.d.time(at)).Scan(&id)
	created := err == nil
	switch {
	case errors.Is(err, sql.ErrNoRows):
		// The account exists: its login follows the user's renames.
		if _, err := s.write.Exec(ctx, `UPDATE accounts SET github_login = ? WHERE github_id = ? AND github_login <> ?`,
			login, githubID, login); err != nil {
			return Account{}, false, fmt.Errorf("couldn't update the login of GitHub user %d: %w", githubID, err)
		}
	case err != nil:
		return Account{}, false, fmt.Errorf("couldn't create the account of GitHub user %d: %w", githubID, err)
	}
	a, err := scanAccount(s.write.QueryRow(ctx, `SELECT `+accountColumns+` FROM accounts WHERE github_id = ?`, githubID))
	if err != nil {
		return Account{}, false, fmt.Errorf("couldn't read the account of GitHub user %d: %w", githubID, err)
	}
	return a, created, nil
}

func (s *sqlStore) SetAccountEmail(ctx context.Context, id int64, email, emailKey string) error {
	if len(email) < 3 || len(email) > 254 || len(emailKey) < 3 || len(emailKey) > 254 {
		return fmt.Errorf("couldn't set the address of account %d: an address and its key of 3 to 254 bytes are required", id)
	}
	n, err := s.write.Exec(ctx, `UPDATE accounts SET email = ?, email_key = ?
		WHERE id = ? AND NOT EXISTS (SELECT 1 FROM accounts o WHERE o.email_key = ? AND o.id <> ?)`,
		email, emailKey, id, emailKey, id)
	if err != nil {
		if isUniqueViolation(err) || isPgViolation(err, "accounts_email_key_key") {
			return ErrAddressTaken // another account took it meanwhile
		}
		return fmt.Errorf("couldn't set the address of account %d: %w", id, err)
	}
	if n == 1 {
		return nil
	}
	if _, err := s.AccountByID(ctx, id); err != nil {
		return err
	}
	return ErrAddressTaken
}

func (s *sqlStore) AccountByID(ctx context.Context, id int64) (Account, error) {
	a, err := scanAccount(s.read.QueryRow(ctx, `SELECT `+accountColumns+` FROM accounts WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Account{}, ErrNotFound
	}
	if err != nil {
		return Account{}, fmt.Errorf("couldn't read account %d: %w", id, err)
	}
	return a, nil
}

func (s *sqlStore) DeleteAccount(ctx context.Context, id int64) error {
	n, err := s.write.Exec(ctx, `DELETE FROM accounts WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("couldn't delete account %d: %w", id, err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

func (s *sqlStore) CreateSession(ctx context.Context, r SessionRecord) error {
	if err := checkHash("a session's id hash", r.IDHash); err != nil {
		return err
	}
	if _, err := s.write.Exec(ctx, `INSERT INTO sessions (id_hash, account_id, created_at, renewed_at, expires_at)
		VALUES (?, ?, ?, ?, ?)`, r.IDHash, r.AccountID, s.d.time(r.CreatedAt), s.d.time(r.RenewedAt), s.d.time(r.ExpiresAt)); err != nil {
		return fmt.Errorf("couldn't store a session of account %d: %w", r.AccountID, err)
	}
	return nil
}

func (s *sqlStore) SessionByHash(ctx context.Context, idHash []byte, now time.Time) (SessionRecord, Account, error) {
	if err := checkHash("a session's id hash", idHash); err != nil {
		return SessionRecord{}, Account{}, err
	}
	var (
		r SessionRecord
		a Account
	)
	err := s.read.QueryRow(ctx, `
		SELECT s.account_id, s.created_at, s.renewed_at, s.expires_at,
			coalesce(a.email, ''), coalesce(a.email_key, ''), coalesce(a.github_id, 0), coalesce(a.github_login, ''), a.created_at
		FROM sessions s JOIN accounts a ON a.id = s.account_id
		WHERE s.id_hash = ? AND s.expires_at > ?`, idHash, s.d.time(now)).Scan(
		&r.AccountID, timeCol(&r.CreatedAt), timeCol(&r.RenewedAt), timeCol(&r.ExpiresAt),
		&a.Email, &a.EmailKey, &a.GitHubID, &a.GitHubLogin, timeCol(&a.CreatedAt))
	if errors.Is(err, sql.ErrNoRows) {
		return SessionRecord{}, Account{}, ErrNotFound
	}
	if err != nil {
		return SessionRecord{}, Account{}, fmt.Errorf("couldn't read a session: %w", err)
	}
	r.IDHash = append([]byte(nil), idHash...)
	a.ID = r.AccountID
	return r, a, nil
}

func (s *sqlStore) RenewSession(ctx context.Context, idHash []byte, renewedAt, expiresAt time.Time) error {
	if err := checkHash("a session's id hash", idHash); err != nil {
		return err
	}
	// Only forward: a slower request renewing after a faster one changes nothing.
	if _, err := s.write.Exec(ctx, `UPDATE sessions SET renewed_at = ?, expires_at = ?
		WHERE id_hash = ? AND renewed_at < ? AND expires_at > ?`,
		s.d.time(renewedAt), s.d.time(expiresAt), idHash, s.d.time(renewedAt), s.d.time(renewedAt)); err != nil {
		return fmt.Errorf("couldn't renew a session: %w", err)
	}
	return nil
}

func (s *sqlStore) DeleteSession(ctx context.Context, idHash []byte) error {
	if err := checkHash("a session's id hash", idHash); err != nil {
		return err
	}
	if _, err := s.write.Exec(ctx, `DELETE FROM sessions WHERE id_hash = ?`, idHash); err != nil {
		return fmt.Errorf("couldn't delete a session: %w", err)
	}
	return nil
}

func (s *sqlStore) DeleteAccountSessions(ctx context.Context, accountID int64) (int64, error) {
	n, err := s.write.Exec(ctx, `DELETE FROM sessions WHERE account_id = ?`, accountID)
	if err != nil {
		return 0, fmt.Errorf("couldn't delete the sessions of account %d: %w", accountID, err)
	}
	return n, nil
}

func (s *sqlStore) AddSignInCode(ctx context.Context, c SignInCode) (int64, error) {
	if err := errors.Join(checkHash("a sign-in code's address hash", c.AddressHash), checkHash("a sign-in code's hash", c.CodeHash)); err != nil {
		return 0, err
	}
	var id int64
	if err := s.write.QueryRow(ctx, `INSERT INTO signin_codes (address_hash, code_hash, tries, created_at, expires_at)
		VALUES (?, ?, 0, ?, ?) RETURNING id`, c.AddressHash, c.CodeHash, s.d.time(c.CreatedAt), s.d.time(c.ExpiresAt)).Scan(&id); err != nil {
		return 0, fmt.Errorf("couldn't store a sign-in code: %w", err)
	}
	return id, nil
}

func (s *sqlStore) ClaimSignInCodeTry(ctx context.Context, addressHash []byte, now time.Time) ([]SignInCode, error) {
	if err := checkHash("a sign-in code's address hash", addressHash); err != nil {
		return nil, err
	}
	// The try is spent before the comparison, in one statement: however many checks run
	// at once, each live code is handed out at most MaxSignInCodeTries times.
	cs, err := queryAll(ctx, s.write, func(row rowScanner) (SignInCode, error) {
		var c SignInCode
		err := row.Scan(&c.ID, &c.AddressHash, &c.CodeHash, timeCol(&c.CreatedAt), timeCol(&c.ExpiresAt), &c.Tries)
		return c, err
	}, `UPDATE signin_codes SET tries = tries + 1
		WHERE address_hash = ? AND tries < ? AND expires_at > ?
		RETURNING id, address_hash, code_hash, created_at, expires_at, tries`,
		addressHash, MaxSignInCodeTries, s.d.time(now))
	if err != nil {
		return nil, fmt.Errorf("couldn't claim a try of the sign-in codes of an address: %w", err)
	}
	return cs, nil
}

func (s *sqlStore) UseSignInCode(ctx context.Context, addressHash []byte, id int64) (bool, error) {
	if err := checkHash("a sign-in code's address hash", addressHash); err != nil {
		return false, err
	}
	n, err := s.write.Exec(ctx, `DELETE FROM signin_codes WHERE id = ? AND address_hash = ?`, id, addressHash)
	if err != nil {
		return false, fmt.Errorf("couldn't use sign-in code %d: %w", id, err)
	}
	if n == 0 {
		return false, nil // used by a concurrent check, or gone
	}
	// The address is signed in: its other codes are of no more use.
	if _, err := s.write.Exec(ctx, `DELETE FROM signin_codes WHERE address_hash = ?`, addressHash); err != nil {
		return true, fmt.Errorf("couldn't delete the other sign-in codes of an address: %w", err)
	}
	return true, nil
}

func (s *sqlStore) ForgetAddress(ctx context.Context, addressHash []byte) error {
	if err := checkHash("an address hash", addressHash); err != nil {
		return err
	}
	if _, err := s.write.Exec(ctx, `DELETE FROM signin_codes WHERE address_hash = ?`, addressHash); err != nil {
		return fmt.Errorf("couldn't delete the sign-in codes of an address: %w", err)
	}
	if _, err := s.write.Exec(ctx, `DELETE FROM signin_throttles WHERE scope = ? AND key_hash = ?`,
		string(ThrottleAddress), addressHash); err != nil {
		return fmt.Errorf("couldn't delete the sign-in throttle of an address: %w", err)
	}
	return nil
}

// throttleAttempts bounds TakeThrottle's compare-and-swap loop: each lost race means
// another request of the same key was counted meanwhile. A request that loses every
// race is refused, as one over the limit is: that many requests of one key at once is
// what a limit is for.
const throttleAttempts = 8

func (s *sqlStore) TakeThrottle(ctx context.Context, t ThrottleTake) (bool, error) {
	switch {
	case t.Scope != ThrottleClient && t.Scope != ThrottleAddress && t.Scope != ThrottleVerify:
		return false, fmt.Errorf("unknown sign-in throttle scope %q", t.Scope)
	case t.Limit < 1 || t.Limit > MaxThrottleLimit:
		return false, fmt.Errorf("a sign-in throttle's limit must be 1 to %d, not %d", MaxThrottleLimit, t.Limit)
	case t.Window <= 0:
		return false, errors.New("a sign-in throttle's window must be positive")
	}
	if err := checkHash("a sign-in throttle's key hash", t.KeyHash); err != nil {
		return false, err
	}
	at := t.At.UnixMilli()
	since := t.At.Add(-t.Window).UnixMilli()
	for range throttleAttempts {
		var (
			events []byte
			rev    int64
		)
		err := s.write.QueryRow(ctx, `SELECT events, rev FROM signin_throttles WHERE scope = ? AND key_hash = ?`,
			string(t.Scope), t.KeyHash).Scan(&events, &rev)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return false, fmt.Errorf("couldn't read a sign-in throttle: %w", err)
		}
		var kept []int64
		for i := 0; i+8 <= len(events) && i < 8*MaxThrottleLimit; i += 8 {
			if e := int64(binary.BigEndian.Uint64(events[i:])); e > since {
				kept = append(kept, e)
			}
		}
		if len(kept) >= t.Limit {
			return false, nil
		}
		kept = append(kept, at)
		buf := make([]byte, 0, 8*len(kept))
		newest := at
		for _, e := range kept {
			buf = binary.BigEndian.AppendUint64(buf, uint64(e))
			newest = max(newest, e)
		}
		expires := s.d.time(time.UnixMilli(newest).Add(t.Window))
		var n int64
		if rev == 0 {
			n, err = s.write.Exec(ctx, `INSERT INTO signin_throttles (scope, key_hash, events, rev, expires_at)
				VALUES (?, ?, ?, 1, ?) ON CONFLICT (scope, key_hash) DO NOTHING`, string(t.Scope), t.KeyHash, buf, expires)
		} else {
			n, err = s.write.Exec(ctx, `UPDATE signin_throttles SET events = ?, rev = rev + 1, expires_at = ?
				WHERE scope = ? AND key_hash = ? AND rev = ?`, buf, expires, string(t.Scope), t.KeyHash, rev)
		}
		if err != nil {
			return false, fmt.Errorf("couldn't write a sign-in throttle: %w", err)
		}
		if n == 1 {
			return true, nil
		}
	}
	return false, nil
}

func (s *sqlStore) PruneSignIn(ctx context.Context, now time.Time) (int64, error) {
	var total int64
	for _, table := range []string{"sessions", "signin_codes", "signin_throttles"} {
		// The table names are constants of this loop, never input.
		n, err := s.write.Exec(ctx, `DELETE FROM `+table+` WHERE expires_at <= ?`, s.d.time(now))
		if err != nil {
			return total, fmt.Errorf("couldn't prune %s: %w", table, err)
		}
		total += n
	}
	return total, nil
}
