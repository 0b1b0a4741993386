// Package reports is the answer to a report that a Verified server is harmful (seed 004:
// answered within 72 hours). Anyone may report an entry that is Verified now; the
// report waits in the operators' queue with its 72-hour clock; an operator withdraws the
// entry's Verified with a reason, as a signed withdrawal/v1 record (attest), or declines
// the report with a reason; an operator restores a withdrawn Verified with a signed
// "restored" record. While withdrawn, no supply run makes the entry Verified
// (store.IsVerified); a later Verified run does not give it back, only Restore does.
//
// The service checks what a request may hold (bounded plain text, an optional e-mail
// address) and the rules of the answer; who may call which method is the caller's
// rule (web: anyone submits, operators do the rest). Each operator action is handed
// to the Auditor (the operators' append-only log).
package reports

import (
	"context"
	"errors"
	"fmt"
	"github.com/probity-dev/probity/accounts"
	"log/slog"
	"net/mail"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/store"
)

// Store is what the service needs of the store; store.Store is one.
type Store interface {
	Entry(ctx context.Context, slug string) (store.Entry, error)
	EntryByID(ctx context.Context, id int64) (store.Entry, error)
	SupplyRuns(ctx context.Context, entryID int64, limit int) ([]store.SupplyRecord, error)
	Ledger(ctx context.Context, f store.LedgerFilter, fn func(store.LedgerRecord) error) error
	AddReport(ctx context.Context, r store.Report) (store.Report, error)
	Report(ctx context.Context, id int64) (store.Report, error)
	OpenReports(ctx context.Context, limit int) ([]store.Report, error)
	CountEntryReports(ctx context.Context, entryID int64, since time.Time) (int, error)
	DeclineReport(ctx context.Context, d store.ReportDecision) (store.Report, error)
	PruneReportContacts(ctx context.Context, before time.Time) (int64, error)
	SaveWithdrawal(ctx context.Context, w store.Withdrawal, closing *store.ReportDecision) (store.Withdrawal, error)
	Withdrawals(ctx context.Context, entryID int64) ([]store.Withdrawal, error)
}

// Signer signs withdrawal records and names its key; *signing.Signer is one.
type Signer interface {
	attest.Signer
	KeyID() (string, error)
}

// Auditor records an operator's action in the operators' append-only audit log. An
// error is returned to the operator: the action is done (it is a signed record), but
// its audit entry is missing, which the operator must hear of.
type Auditor interface {
	Record(ctx context.Context, a Action) error
}

// Action is one operator action for the Auditor.
type Action struct {
	ActorID   int64
	Action    string // ActionWithdraw, ActionDecline, ActionRestore
	EntrySlug string
	Target    string // "report N" or "withdrawal N"
	Detail    string // the reason
}

// The actions the service reports to the Auditor.
const (
	ActionWithdraw = "report.withdraw"
	ActionDecline  = "report.decline"
	ActionRestore  = "verified.restore"
)

// Config configures a Service.
type Config struct {
	Store  Store
	Signer Signer
	// Auditor gets every operator action; required.
	Auditor Auditor
	// ToolVersion is the signing Probity's version, in every record.
	ToolVersion string
	// PerClientPerDay caps the reports one client (an IPv4 address, an IPv6 /64:
	// accounts.ClientKey) sends about one entry in 24 hours (0: 3), counted in this
	// process: one client cannot fill an entry's day.
	PerClientPerDay int
	// PerEntryPerDay caps the reports an entry receives in 24 hours from everyone
	// (0: 200), on top of the per-client cap: a flood from many addresses does not bury
	// the queue. It is high, so that a server's own operator, reporting junk from a few
	// addresses, cannot close the form to everyone else.
	PerEntryPerDay int
	Now            func() time.Time
	Log            *slog.Logger
}

// Service is the report service.
type Service struct {
	cfg Config

	mu sync.Mutex
	// sent are the times of the reports of a client about an entry in the last 24
	// hours, by client key and entry id (PerClientPerDay).
	sent map[clientEntry][]time.Time
}

// clientEntry is a client's reports about one entry.
type clientEntry struct {
	client string
	entry  int64
}

// maxClients bounds sent: past it, the oldest day's keys are dropped first (a flood
// of addresses then meets PerEntryPerDay).
const maxClients = 100_000

// allow counts a report of client about entry at now, unless the client sent
// PerClientPerDay in the last 24 hours.
func (s *Service) allow(client string, entry int64, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sent == nil {
		s.sent = map[clientEntry][]time.Time{}
	}
	k := clientEntry{accounts.ClientKey(client), entry}
	day := now.Add(-24 * time.Hour)
	ts := slices.DeleteFunc(s.sent[k], func(t time.Time) bool { return t.Before(day) })
	if len(ts) >= s.cfg.PerClientPerDay {
		s.sent[k] = ts
		return false
	}
	if len(s.sent) >= maxClients {
		for key, old := range s.sent {
			if len(old) == 0 || old[len(old)-1].Before(day) {
				delete(s.sent, key)
			}
		}
	}
	s.sent[k] = append(ts, now)
	return true
}

// Errors callers branch on. Input errors are *InputError.
var (
	// ErrNotVerified: the entry is not Verified now (a report is about a Verified
	// server; a withdrawal needs a Verified run to withdraw).
	ErrNotVerified = errors.New("the entry is not Verified")
	// ErrTooMany: the entry received the most reports a day allows.
	ErrTooMany = errors.New("this server received many reports today; please try again tomorrow")
	// ErrNotWithdrawn: Restore of an entry whose Verified is not withdrawn.
	ErrNotWithdrawn = errors.New("the entry's Verified is not withdrawn")
	// ErrClosed: the report was answered already.
	ErrClosed = store.ErrReportClosed
)

// InputError says what is wrong with a request's text, in words for the person.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// New returns a service; Store, Signer and Auditor are required.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil || cfg.Signer == nil || cfg.Auditor == nil {
		return nil, errors.New("reports: Store, Signer and Auditor are required")
	}
	if cfg.ToolVersion == "" {
		return nil, errors.New("reports: ToolVersion is required")
	}
	if cfg.PerClientPerDay <= 0 {
		cfg.PerClientPerDay = 3
	}
	if cfg.PerEntryPerDay <= 0 {
		cfg.PerEntryPerDay = 200
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Service{cfg: cfg}, nil
}

// plainText checks text a person wrote: not blank, at most max characters, UTF-8
// without control characters but tab and line feed (CR LF becomes LF). It returns the
// text trimmed.
func plainText(what, s string, max int) (string, error) {
	s = strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n"))
	switch {
	case s == "":
		return "", &InputError{"Please write the " + what + "."}
	case !utf8.ValidString(s):
		return "", &InputError{"The " + what + " is not valid text."}
	case utf8.RuneCountInString(s) > max:
		return "", &InputError{fmt.Sprintf("The %s is %d characters long; at most %d are allowed.", what, utf8.RuneCountInString(s), max)}
	}
	for _, r := range s {
		if r != '\n' && r != '\t' && (unicode.IsControl(r) || r == '\u2028' || r == '\u2029') {
			return "", &InputError{"The " + what + " holds control characters."}
		}
	}
	return s, nil
}

// contactAddress checks an optional e-mail address: "" or one plain address.
func contactAddress(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || len(s) > store.MaxReportContact {
		return "", &InputError{"The contact address is not an e-mail address (leave it empty if you like)."}
	}
	return s, nil
}

// verifiedRun returns the entry's newest supply run when it makes the entry Verified now
// (store.IsVerified), or ErrNotVerified.
func (s *Service) verifiedRun(ctx context.Context, e store.Entry) (store.SupplyRecord, error) {
	runs, err := s.cfg.Store.SupplyRuns(ctx, e.ID, 1)
	if err != nil {
		return store.SupplyRecord{}, fmt.Errorf("couldn't read the supply runs of %s: %w", e.Slug, err)
	}
	if len(runs) == 0 || !store.IsVerified(runs[0].Verified, runs[0].Envelope != nil, e.VerifiedWithdrawn) {
		return store.SupplyRecord{}, ErrNotVerified
	}
	return runs[0], nil
}

// Reportable returns the entry with the slug when it can be reported (it is Verified
// now). store.ErrNotFound, ErrNotVerified.
func (s *Service) Reportable(ctx context.Context, slug string) (store.Entry, error) {
	e, err := s.cfg.Store.Entry(ctx, slug)
	if err != nil {
		return store.Entry{}, err
	}
	_, err = s.verifiedRun(ctx, e)
	return e, err
}

// Submit stores a report about the entry with the slug, which must be Verified now.
// contact is optional; client is the sender's network address (for
// PerClientPerDay). store.ErrNotFound, ErrNotVerified, ErrTooMany, *InputError.
func (s *Service) Submit(ctx context.Context, slug, text, contact, client string) (store.Report, error) {
	text, err := plainText("report", text, store.MaxReportText)
	if err != nil {
		return store.Report{}, err
	}
	if contact, err = contactAddress(contact); err != nil {
		return store.Report{}, err
	}
	e, err := s.Reportable(ctx, slug)
	if err != nil {
		return store.Report{}, err
	}
	now := s.cfg.Now()
	n, err := s.cfg.Store.CountEntryReports(ctx, e.ID, now.Add(-24*time.Hour))
	if err != nil {
		return store.Report{}, fmt.Errorf("couldn't count the reports about %s: %w", slug, err)
	}
	if n >= s.cfg.PerEntryPerDay || !s.allow(client, e.ID, now) {
		return store.Report{}, ErrTooMany
	}
	return s.cfg.Store.AddReport(ctx, store.Report{EntryID: e.ID, Text: text, Contact: contact, ReceivedAt: now})
}

// QueueItem is an open report with its clock.
type QueueItem struct {
	store.Report
	// Left is the time until the report is due; negative when overdue.
	Left time.Duration
}

// Overdue reports whether the report is past its due time.
func (q QueueItem) Overdue() bool { return q.Left < 0 }

// maxQueue bounds the queue one call reads.
const maxQueue = 500

// Queue returns the open reports, the one due first first, with the time left.
func (s *Service) Queue(ctx context.Context) ([]QueueItem, error) {
	rs, err := s.cfg.Store.OpenReports(ctx, maxQueue)
	if err != nil {
		return nil, fmt.Errorf("couldn't read the report queue: %w", err)
	}
	now := s.cfg.Now()
	out := make([]QueueItem, len(rs))
	for i, r := range rs {
		out[i] = QueueItem{Report: r, Left: r.DueAt.Sub(now)}
	}
	return out, nil
}

// Report returns one report. store.ErrNotFound.
func (s *Service) Report(ctx context.Context, id int64) (store.Report, error) {
	return s.cfg.Store.Report(ctx, id)
}

// Withdrawals returns the entry's withdrawal records, by number.
func (s *Service) Withdrawals(ctx context.Context, entryID int64) ([]store.Withdrawal, error) {
	return s.cfg.Store.Withdrawals(ctx, entryID)
}

// Withdraw answers an open report by withdrawing its entry's Verified: a signed
// withdrawal record naming the entry's newest Verified supply run, stored with the
// report closed. ErrNotVerified when the entry is not Verified now (decline the report
// instead), ErrClosed, store.ErrNotFound, *InputError.
func (s *Service) Withdraw(ctx context.Context, operatorID, reportID int64, reason string) (store.Withdrawal, error) {
	reason, err := plainText("reason", reason, attest.MaxWithdrawalReason)
	if err != nil {
		return store.Withdrawal{}, err
	}
	r, err := s.cfg.Store.Report(ctx, reportID)
	if err != nil {
		return store.Withdrawal{}, err
	}
	if r.Status != store.ReportOpen {
		return store.Withdrawal{}, ErrClosed
	}
	e, err := s.cfg.Store.EntryByID(ctx, r.EntryID)
	if err != nil {
		return store.Withdrawal{}, err
	}
	run, err := s.verifiedRun(ctx, e)
	if err != nil {
		return store.Withdrawal{}, err
	}
	now := s.cfg.Now()
	w, err := s.save(ctx, e, attest.WithdrawalWithdrawn, reason, run.PayloadDigest, now,
		&store.ReportDecision{ReportID: r.ID, Status: store.ReportWithdrawn, By: operatorID, Reason: reason, At: now})
	if err != nil {
		return store.Withdrawal{}, err
	}
	return w, s.audit(ctx, Action{ActorID: operatorID, Action: ActionWithdraw, EntrySlug: e.Slug,
		Target: fmt.Sprintf("report %d", r.ID), Detail: reason})
}

// Decline closes an open report without withdrawing anything. ErrClosed,
// store.ErrNotFound, *InputError.
func (s *Service) Decline(ctx context.Context, operatorID, reportID int64, reason string) (store.Report, error) {
	reason, err := plainText("reason", reason, store.MaxReportReason)
	if err != nil {
		return store.Report{}, err
	}
	r, err := s.cfg.Store.DeclineReport(ctx, store.ReportDecision{ReportID: reportID, Status: store.ReportDeclined,
		By: operatorID, Reason: reason, At: s.cfg.Now()})
	if err != nil {
		return store.Report{}, err
	}
	return r, s.audit(ctx, Action{ActorID: operatorID, Action: ActionDecline, EntrySlug: r.EntrySlug,
		Target: fmt.Sprintf("report %d", r.ID), Detail: reason})
}

// Restore undoes the entry's withdrawal with a signed "restored" record naming the
// supply run the withdrawal named. ErrNotWithdrawn, store.ErrNotFound, *InputError.
func (s *Service) Restore(ctx context.Context, operatorID int64, slug, reason string) (store.Withdrawal, error) {
	reason, err := plainText("reason", reason, attest.MaxWithdrawalReason)
	if err != nil {
		return store.Withdrawal{}, err
	}
	e, err := s.cfg.Store.Entry(ctx, slug)
	if err != nil {
		return store.Withdrawal{}, err
	}
	ws, err := s.cfg.Store.Withdrawals(ctx, e.ID)
	if err != nil {
		return store.Withdrawal{}, fmt.Errorf("couldn't read the withdrawals of %s: %w", slug, err)
	}
	if !e.VerifiedWithdrawn || len(ws) == 0 {
		return store.Withdrawal{}, ErrNotWithdrawn
	}
	last := ws[len(ws)-1]
	_, payload, err := attest.ParseEnvelope(last.Envelope)
	if err != nil {
		return store.Withdrawal{}, fmt.Errorf("couldn't read withdrawal %d of %s: %w", last.Number, slug, err)
	}
	d, err := attest.DecodeStatement(payload)
	if err != nil || d.Withdrawal == nil {
		return store.Withdrawal{}, fmt.Errorf("couldn't read withdrawal %d of %s: %v", last.Number, slug, err)
	}
	w, err := s.saveNamed(ctx, e, attest.WithdrawalRestored, reason, d.Withdrawal.Supply, int64(len(ws))+1, s.cfg.Now(), nil)
	if err != nil {
		return store.Withdrawal{}, err
	}
	return w, s.audit(ctx, Action{ActorID: operatorID, Action: ActionRestore, EntrySlug: e.Slug,
		Target: fmt.Sprintf("withdrawal %d", w.Number), Detail: reason})
}

// PruneContacts erases the contact address of the reports closed more than 30 days
// ago (store.ReportContactKept); a daily job calls it.
func (s *Service) PruneContacts(ctx context.Context) (int64, error) {
	return s.cfg.Store.PruneReportContacts(ctx, s.cfg.Now().Add(-store.ReportContactKept))
}

// save signs and stores a withdrawal record of the supply run with the payload digest
// (hex), found in the entry's ledger.
func (s *Service) save(ctx context.Context, e store.Entry, action, reason, supplyDigest string, at time.Time, closing *store.ReportDecision) (store.Withdrawal, error) {
	var seq int64
	err := s.cfg.Store.Ledger(ctx, store.LedgerFilter{EntrySlug: e.Slug}, func(r store.LedgerRecord) error {
		if r.Kind == store.RecordSupply && r.PayloadDigest == supplyDigest {
			seq = r.Seq
		}
		return nil
	})
	if err != nil {
		return store.Withdrawal{}, fmt.Errorf("couldn't read the ledger of %s: %w", e.Slug, err)
	}
	if seq == 0 {
		return store.Withdrawal{}, fmt.Errorf("the Verified supply run of %s is not numbered in the ledger yet; try again in a minute", e.Slug)
	}
	ws, err := s.cfg.Store.Withdrawals(ctx, e.ID)
	if err != nil {
		return store.Withdrawal{}, fmt.Errorf("couldn't read the withdrawals of %s: %w", e.Slug, err)
	}
	return s.saveNamed(ctx, e, action, reason, attest.WithdrawalSupply{Seq: seq, PayloadDigest: "sha256:" + supplyDigest},
		int64(len(ws))+1, at, closing)
}

// saveNamed signs and stores withdrawal record number of the entry.
func (s *Service) saveNamed(ctx context.Context, e store.Entry, action, reason string, supply attest.WithdrawalSupply, number int64, at time.Time, closing *store.ReportDecision) (store.Withdrawal, error) {
	st := attest.NewWithdrawalStatement(attest.EntryRef(e.Kind, e.Slug, e.Locator), number, action, reason, at, supply, s.cfg.ToolVersion)
	c, err := attest.Check(st)
	if err != nil {
		return store.Withdrawal{}, fmt.Errorf("couldn't build withdrawal %d of %s: %w", number, e.Slug, err)
	}
	env, _, err := c.Sign(ctx, s.cfg.Signer)
	if err != nil {
		return store.Withdrawal{}, fmt.Errorf("couldn't sign withdrawal %d of %s: %w", number, e.Slug, err)
	}
	raw, err := attest.EncodeEnvelope(env)
	if err != nil {
		return store.Withdrawal{}, err
	}
	keyID, err := s.cfg.Signer.KeyID()
	if err != nil {
		return store.Withdrawal{}, err
	}
	// The reason stored is the one signed (NFC), so that the page and the record agree.
	signed := c.Decoded().Withdrawal
	if closing != nil {
		closing.Reason = signed.Reason
	}
	w, err := s.cfg.Store.SaveWithdrawal(ctx, store.Withdrawal{EntryID: e.ID, Number: number, Action: action, Reason: signed.Reason,
		At: at, SupplySeq: supply.Seq, Envelope: raw, KeyID: keyID}, closing)
	if err != nil {
		return store.Withdrawal{}, err
	}
	s.cfg.Log.Info("withdrawal record stored", slog.String("entry", e.Slug), slog.Int64("number", number),
		slog.String("action", action), slog.Int64("seq", w.Seq))
	return w, nil
}

func (s *Service) audit(ctx context.Context, a Action) error {
	if err := s.cfg.Auditor.Record(ctx, a); err != nil {
		return fmt.Errorf("the action is done, but couldn't be recorded in the audit log: %w", err)
	}
	return nil
}
