package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Operators and their audit log (issue 18; migration 0020). Package operators owns the
// rules (who may grant, which actions there are, what a row says); the store keeps what
// must hold whatever the caller does: the role belongs to an existing account and goes
// with it, and the audit log is append-only (the schema refuses UPDATE and DELETE of
// it; no method changes a row), bounded row by row, and outlives the accounts and
// entries it names (it references neither).

// Bounds of an operator action's text, in bytes (the migration's CHECKs).
const (
	MaxActionActor  = 64
	MaxActionName   = 64
	MaxActionSlug   = 200
	MaxActionTarget = 2048
	MaxActionDetail = 4000
	// MaxOperatorActionsPage is the most rows OperatorActions returns at once.
	MaxOperatorActionsPage = 200
	// maxOperators bounds the operators one call lists.
	maxOperators = 1000
)

// Operator is an account holding the operator role.
type Operator struct {
	AccountID   int64
	Email       string // "" for an account without an address
	GitHubLogin string
	GrantedAt   time.Time
}

// OperatorAction is one row of the audit log.
type OperatorAction struct {
	ID int64
	At time.Time
	// ActorID is the acting operator's account, 0 for the CLI; Actor says who in
	// words ("cli", "operator").
	ActorID int64
	Actor   string
	// Action is what was done (package operators' names, e.g. "change.hide").
	Action string
	// EntrySlug and EntryID name the entry acted on ("" and 0: none); they stay after
	// the entry's deletion.
	EntrySlug string
	EntryID   int64
	// Target is what in the entry (a change number, a claim id, a dispute id) or
	// whom (an account); Detail the reason and the rest, text or JSON.
	Target string
	Detail string
}

const operatorActionColumns = `id, at, coalesce(actor_id, 0), actor, action, entry_slug, coalesce(entry_id, 0), target, detail`

func scanOperatorAction(r rowScanner) (OperatorAction, error) {
	var a OperatorAction
	err := r.Scan(&a.ID, timeCol(&a.At), &a.ActorID, &a.Actor, &a.Action, &a.EntrySlug, &a.EntryID, &a.Target, &a.Detail)
	return a, err
}

func scanOperator(r rowScanner) (Operator, error) {
	var o Operator
	err := r.Scan(&o.AccountID, &o.Email, &o.GitHubLogin, timeCol(&o.GrantedAt))
	return o, err
}

// checkOperatorAction refuses a row the schema would refuse, with a clear error, and
// clips nothing: an audit row is kept as given or not at all.
func checkOperatorAction(a OperatorAction) error {
	switch {
	case a.At.IsZero():
		return errors.New("an operator action needs its time")
	case a.ActorID < 0 || a.EntryID < 0:
		return errors.New("an operator action's ids must not be negative")
	case a.Actor == "" || len(a.Actor) > MaxActionActor:
		return fmt.Errorf("an operator action's actor is %d bytes long; 1 to %d are allowed", len(a.Actor), MaxActionActor)
	case a.Action == "" || len(a.Action) > MaxActionName:
		return fmt.Errorf("an operator action's name is %d bytes long; 1 to %d are allowed", len(a.Action), MaxActionName)
	case len(a.EntrySlug) > MaxActionSlug:
		return fmt.Errorf("an operator action's entry slug is %d bytes long; at most %d are allowed", len(a.EntrySlug), MaxActionSlug)
	case len(a.Target) > MaxActionTarget:
		return fmt.Errorf("an operator action's target is %d bytes long; at most %d are allowed", len(a.Target), MaxActionTarget)
	case len(a.Detail) > MaxActionDetail:
		return fmt.Errorf("an operator action's detail is %d bytes long; at most %d are allowed", len(a.Detail), MaxActionDetail)
	}
	return nil
}

// appendOperatorAction appends a to the audit log on q and returns its id.
func (s *sqlStore) appendOperatorAction(ctx context.Context, q querier, a OperatorAction) (int64, error) {
	if err := checkOperatorAction(a); err != nil {
		return 0, err
	}
	var actor, entry any
	if a.ActorID != 0 {
		actor = a.ActorID
	}
	if a.EntryID != 0 {
		entry = a.EntryID
	}
	var id int64
	err := q.QueryRow(ctx, `INSERT INTO operator_actions (at, actor_id, actor, action, entry_slug, entry_id, target, detail)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		s.d.time(a.At), actor, a.Actor, a.Action, a.EntrySlug, entry, a.Target, a.Detail).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("couldn't append to the operator audit log: %w", err)
	}
	return id, nil
}

// AppendOperatorAction appends one row to the audit log and returns its id.
func (s *sqlStore) AppendOperatorAction(ctx context.Context, a OperatorAction) (int64, error) {
	return s.appendOperatorAction(ctx, s.write, a)
}

// OperatorActions returns the audit log newest first: the rows with an id below
// beforeID (≤ 0: from the newest), at most limit (≤ 0 or above
// MaxOperatorActionsPage: MaxOperatorActionsPage).
func (s *sqlStore) OperatorActions(ctx context.Context, beforeID int64, limit int) ([]OperatorAction, error) {
	if limit <= 0 || limit > MaxOperatorActionsPage {
		limit = MaxOperatorActionsPage
	}
	if beforeID <= 0 {
		beforeID = 1<<63 - 1
	}
	return queryAll(ctx, s.read, scanOperatorAction, `SELECT `+operatorActionColumns+` FROM operator_actions
		WHERE id < ? ORDER BY id DESC LIMIT ?`, beforeID, limit)
}

// AddOperator grants the account the operator role at at and appends rec to the audit
// log, in one transaction (added false: it held the role already, and nothing is
// appended). ErrNotFound when there is no such account.
func (s *sqlStore) AddOperator(ctx context.Context, accountID int64, at time.Time, rec OperatorAction) (bool, error) {
	if err := checkOperatorAction(rec); err != nil {
		return false, err
	}
	added := false
	err := s.writeTx(ctx, func(tx querier) error {
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1 FROM accounts WHERE id = ?`, accountID).Scan(&one); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return ErrNotFound
			}
			return err
		}
		n, err := tx.Exec(ctx, `INSERT INTO operators (account_id, granted_at) VALUES (?, ?) ON CONFLICT (account_id) DO NOTHING`,
			accountID, s.d.time(at))
		if err != nil || n == 0 {
			return err
		}
		added = true
		_, err = s.appendOperatorAction(ctx, tx, rec)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("couldn't grant account %d the operator role: %w", accountID, err)
	}
	return added, nil
}

// RemoveOperator takes the operator role from the account and appends rec to the
// audit log, in one transaction (removed false: it held none, and nothing is
// appended).
func (s *sqlStore) RemoveOperator(ctx context.Context, accountID int64, rec OperatorAction) (bool, error) {
	if err := checkOperatorAction(rec); err != nil {
		return false, err
	}
	removed := false
	err := s.writeTx(ctx, func(tx querier) error {
		n, err := tx.Exec(ctx, `DELETE FROM operators WHERE account_id = ?`, accountID)
		if err != nil || n == 0 {
			return err
		}
		removed = true
		_, err = s.appendOperatorAction(ctx, tx, rec)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("couldn't take the operator role from account %d: %w", accountID, err)
	}
	return removed, nil
}

// Operators returns the operators, by account id.
func (s *sqlStore) Operators(ctx context.Context) ([]Operator, error) {
	return queryAll(ctx, s.read, scanOperator, `SELECT o.account_id, coalesce(a.email, ''), coalesce(a.github_login, ''), o.granted_at
		FROM operators o JOIN accounts a ON a.id = o.account_id ORDER BY o.account_id LIMIT ?`, maxOperators)
}

// IsOperator reports whether the account holds the operator role.
func (s *sqlStore) IsOperator(ctx context.Context, accountID int64) (bool, error) {
	var n int
	if err := s.read.QueryRow(ctx, `SELECT count(*) FROM operators WHERE account_id = ?`, accountID).Scan(&n); err != nil {
		return false, fmt.Errorf("couldn't read the operator role of account %d: %w", accountID, err)
	}
	return n > 0, nil
}

// AccountByEmailKey returns the account with the e-mail key (accounts.EmailKey), or
// ErrNotFound; unlike EmailAccount it never creates one.
func (s *sqlStore) AccountByEmailKey(ctx context.Context, emailKey string) (Account, error) {
	a, err := scanAccount(s.read.QueryRow(ctx, `SELECT `+accountColumns+` FROM accounts WHERE email_key = ?`, emailKey))
	if errors.Is(err, sql.ErrNoRows) {
		return Account{}, ErrNotFound
	}
	return a, err
}

// HideChangeRecorded is HideChange and the audit row rec, in one transaction.
func (s *sqlStore) HideChangeRecorded(ctx context.Context, entryID, number int64, hidden bool, reason string, rec OperatorAction) error {
	if err := checkHideReason(hidden, reason); err != nil {
		return fmt.Errorf("couldn't hide or show change %d of entry %d: %w", number, entryID, err)
	}
	if err := checkOperatorAction(rec); err != nil {
		return err
	}
	if !hidden {
		reason = ""
	}
	err := s.writeTx(ctx, func(tx querier) error {
		n, err := tx.Exec(ctx, `UPDATE changes SET hidden = ?, hidden_reason = ? WHERE entry_id = ? AND number = ?`,
			hidden, reason, entryID, number)
		if err == nil && n == 0 {
			err = ErrNotFound
		}
		if err != nil {
			return err
		}
		_, err = s.appendOperatorAction(ctx, tx, rec)
		return err
	})
	if err != nil {
		return fmt.Errorf("couldn't hide or show change %d of entry %d: %w", number, entryID, err)
	}
	return nil
}
