// Package operators is the one owner of Probity's operator role and of the operators'
// audit log (issue 18, "What an operator does").
//
// # The role
//
// An operator is an account granted the role from the command line ("probity
// operators add EMAIL"); the account must exist, so the person signs in once first.
// The role is taken back with "probity operators remove EMAIL" and goes with the
// account when the account is deleted. An operator maintains an entry only by claiming
// it, like anyone; the role opens the console (web, /ops/…) and nothing else. The site
// never names its operators on a public page.
//
// # The audit log
//
// Every operator action appends one row to an append-only log (store.OperatorAction;
// the schema refuses UPDATE and DELETE of it): when, who (the operator's account, or
// "cli" for the command line), what (Action names below), the entry (its slug and id,
// kept after the entry's deletion), the target in it (a change number, a claim id, a
// dispute id, an account) and the detail, a JSON object of at most
// store.MaxActionDetail bytes whose "reason" member is the operator's reason:
//
//	{"reason":"the fetch hit a maintenance page"}
//
// An action and its row are written in one transaction where the store does both
// (granting and taking the role, hiding and unhiding a change, revoking a claim); an
// entry's deletion (store.DeleteEntry, whose tombstone records the reason in the
// ledger) and a dispute's decision (package disputes') are recorded right after they
// succeed, so a crash between the two leaves the action without its row, never a row
// without its action.
package operators

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/probity-dev/probity/accounts"
	"github.com/probity-dev/probity/store"
)

// The actions the audit log records.
const (
	ActionGrant         = "operator.add"
	ActionRevoke        = "operator.remove"
	ActionHideChange    = "change.hide"
	ActionUnhideChange  = "change.unhide"
	ActionDeleteEntry   = "entry.delete"
	ActionRevokeClaim   = "claim.revoke"
	ActionDecideDispute = "dispute.decide"
)

// MaxReason is the longest reason an operator gives for deleting an entry, revoking a
// claim or deciding a dispute, in bytes; MaxHideReason for hiding a change (the
// store's bounds).
const (
	MaxReason     = 200
	MaxHideReason = 500
)

// Store is what the operators need of the store.
type Store interface {
	AccountByEmailKey(ctx context.Context, emailKey string) (store.Account, error)
	AddOperator(ctx context.Context, accountID int64, at time.Time, rec store.OperatorAction) (bool, error)
	RemoveOperator(ctx context.Context, accountID int64, rec store.OperatorAction) (bool, error)
	Operators(ctx context.Context) ([]store.Operator, error)
	IsOperator(ctx context.Context, accountID int64) (bool, error)
	AppendOperatorAction(ctx context.Context, a store.OperatorAction) (int64, error)
	OperatorActions(ctx context.Context, beforeID int64, limit int) ([]store.OperatorAction, error)
	Entry(ctx context.Context, slug string) (store.Entry, error)
	EntryByID(ctx context.Context, id int64) (store.Entry, error)
	Changes(ctx context.Context, f store.ChangeFilter) ([]store.ChangeRecord, error)
	HideChangeRecorded(ctx context.Context, entryID, number int64, hidden bool, reason string, rec store.OperatorAction) error
	DeleteEntry(ctx context.Context, slug, reason string) error
	ClaimsForReview(ctx context.Context, q store.ClaimReviewQuery) ([]store.ClaimReview, error)
	RevokeClaimRecorded(ctx context.Context, id int64, at time.Time, reason string, rec store.OperatorAction) (store.Claim, error)
	DueTimes(ctx context.Context, entryID int64) ([]store.Due, error)
	SetDue(ctx context.Context, entryID int64, u store.DueUpdate) error
}

// Scheduler moves an entry's due times when its claimed state flips, as a lapsed
// claim does (rounds.Schedule implements it).
type Scheduler interface {
	ClaimedDue(e store.Entry, due []store.Due, now time.Time) []store.DueUpdate
}

// Config configures a Service. Store is required.
type Config struct {
	Store Store
	// Schedule moves the cadence due time when a revoked claim was the entry's last
	// live one; nil leaves due times alone.
	Schedule Scheduler
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Logger receives one event per action; default discards.
	Logger *slog.Logger
}

// Service grants and takes the role, answers who holds it, and carries out and
// records the console's actions. It is safe for concurrent use.
type Service struct {
	st    Store
	sched Scheduler
	now   func() time.Time
	log   *slog.Logger
}

// New returns a Service for cfg.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil {
		return nil, errors.New("operators: a Store is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{st: cfg.Store, sched: cfg.Schedule, now: cfg.Now, log: cfg.Logger}, nil
}

// Errors callers branch on.
var (
	// ErrNoAccount is an address no account has: the person signs in once first.
	ErrNoAccount = errors.New("no account has this e-mail address: the person must sign in once first (with an e-mail code, or add the address to a GitHub account)")
	// ErrNotOperator is an account acting as an operator without the role.
	ErrNotOperator = errors.New("this account is not an operator")
	// ErrReason is a missing or malformed reason.
	ErrReason = errors.New("a reason is required: one line of printable text (at most 200 bytes; 500 to hide a change)")
)

// Actor is who acts: an operator's account (By), or the command line (CLI). The zero
// Actor is neither and may do nothing.
type Actor struct {
	accountID int64
	cli       bool
}

// CLI is the command line, which acts with the machine's rights.
var CLI = Actor{cli: true}

// By is the operator with the account id.
func By(accountID int64) Actor { return Actor{accountID: accountID} }

// AccountID is the acting operator's account (0 for the command line).
func (a Actor) AccountID() int64 { return a.accountID }

// name is the actor column of the audit row.
func (a Actor) name() string {
	if a.cli {
		return "cli"
	}
	return "operator"
}

// Action is one audit row as a caller describes it: Record fills in when and encodes
// the detail.
type Action struct {
	By        Actor
	Name      string // one of the Action constants
	EntrySlug string
	EntryID   int64
	Target    string
	Reason    string
	// Fields are further members of the detail object (e.g. a decision); "reason" is
	// Reason's.
	Fields map[string]string
}

// IsOperator reports whether the account holds the operator role (web.Operators).
func (s *Service) IsOperator(ctx context.Context, accountID int64) (bool, error) {
	if accountID <= 0 {
		return false, nil
	}
	return s.st.IsOperator(ctx, accountID)
}

// checkActor refuses an account actor without the role (the command line acts with
// the machine's rights).
func (s *Service) checkActor(ctx context.Context, by Actor) error {
	if by.cli {
		return nil
	}
	yes, err := s.IsOperator(ctx, by.accountID)
	if err != nil {
		return err
	}
	if !yes {
		return ErrNotOperator
	}
	return nil
}

// CheckReason trims a reason and refuses one that is empty, longer than MaxReason or
// not one line of printable text.
func CheckReason(reason string) (string, error) { return checkReason(reason, MaxReason) }

func checkReason(reason string, max int) (string, error) {
	r := strings.TrimSpace(reason)
	if r == "" || len(r) > max || !utf8.ValidString(r) {
		return "", ErrReason
	}
	for _, c := range r {
		if c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == '\u2028' || c == '\u2029' {
			return "", ErrReason
		}
	}
	return r, nil
}

// row is a's audit row at at.
func (a Action) row(at time.Time) (store.OperatorAction, error) {
	detail := map[string]string{}
	for k, v := range a.Fields {
		detail[k] = v
	}
	if a.Reason != "" {
		detail["reason"] = a.Reason
	}
	b, err := json.Marshal(detail)
	if err != nil {
		return store.OperatorAction{}, err
	}
	if len(b) > store.MaxActionDetail {
		return store.OperatorAction{}, fmt.Errorf("operators: the detail of %s is %d bytes; at most %d are kept", a.Name, len(b), store.MaxActionDetail)
	}
	return store.OperatorAction{At: at, ActorID: a.By.accountID, Actor: a.By.name(), Action: a.Name,
		EntrySlug: a.EntrySlug, EntryID: a.EntryID, Target: a.Target, Detail: string(b)}, nil
}

// Record appends a to the audit log: every console action that the store does not
// record in its own transaction calls it right after the action succeeded.
func (s *Service) Record(ctx context.Context, a Action) error {
	if a.Name == "" {
		return errors.New("operators: an action needs its name")
	}
	if err := s.checkActor(ctx, a.By); err != nil {
		return err
	}
	rec, err := a.row(s.now())
	if err != nil {
		return err
	}
	if _, err := s.st.AppendOperatorAction(ctx, rec); err != nil {
		return err
	}
	s.log.Info("operator action", "action", a.Name, "actor", rec.Actor, "actor_account", a.By.accountID, "entry", a.EntrySlug, "target", a.Target)
	return nil
}

// account finds the account of an address; ErrNoAccount when none has it,
// accounts.ErrInvalidEmail for an address the site does not accept.
func (s *Service) account(ctx context.Context, email string) (store.Account, error) {
	key, err := accounts.EmailKey(email)
	if err != nil {
		return store.Account{}, err
	}
	a, err := s.st.AccountByEmailKey(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return store.Account{}, ErrNoAccount
	}
	return a, err
}

// Grant gives the account of email the operator role (added false: it held it
// already). ErrNoAccount when no account has the address.
func (s *Service) Grant(ctx context.Context, by Actor, email string) (acc store.Account, added bool, err error) {
	if err := s.checkActor(ctx, by); err != nil {
		return store.Account{}, false, err
	}
	acc, err = s.account(ctx, email)
	if err != nil {
		return store.Account{}, false, err
	}
	now := s.now()
	rec, err := Action{By: by, Name: ActionGrant, Target: accountTarget(acc.ID)}.row(now)
	if err != nil {
		return store.Account{}, false, err
	}
	added, err = s.st.AddOperator(ctx, acc.ID, now, rec)
	if err != nil {
		return store.Account{}, false, err
	}
	if added {
		s.log.Info("operator role granted", "account", acc.ID, "actor", rec.Actor)
	}
	return acc, added, nil
}

// Revoke takes the operator role from the account of email (removed false: it held
// none). ErrNoAccount when no account has the address.
func (s *Service) Revoke(ctx context.Context, by Actor, email string) (acc store.Account, removed bool, err error) {
	if err := s.checkActor(ctx, by); err != nil {
		return store.Account{}, false, err
	}
	acc, err = s.account(ctx, email)
	if err != nil {
		return store.Account{}, false, err
	}
	rec, err := Action{By: by, Name: ActionRevoke, Target: accountTarget(acc.ID)}.row(s.now())
	if err != nil {
		return store.Account{}, false, err
	}
	removed, err = s.st.RemoveOperator(ctx, acc.ID, rec)
	if err != nil {
		return store.Account{}, false, err
	}
	if removed {
		s.log.Info("operator role taken", "account", acc.ID, "actor", rec.Actor)
	}
	return acc, removed, nil
}

// List returns the operators, by account id.
func (s *Service) List(ctx context.Context) ([]store.Operator, error) { return s.st.Operators(ctx) }

// Audit returns a page of the audit log, newest first: the rows with an id below
// beforeID (≤ 0: from the newest), at most limit.
func (s *Service) Audit(ctx context.Context, beforeID int64, limit int) ([]store.OperatorAction, error) {
	return s.st.OperatorActions(ctx, beforeID, limit)
}

func accountTarget(id int64) string { return "account " + strconv.FormatInt(id, 10) }
