package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Reports and withdrawals (issue 18; migration 0021): a visitor's report that a Verified
// server is harmful, answered within 72 hours (seed 004), and the withdrawal/v1 records
// of an operator's answer. Package reports decides who may do what; the store keeps what
// must hold whatever the caller does: a report's text and contact are bounded, its
// contact is erased 30 days after it is closed (PruneReportContacts), a report is closed
// once; a withdrawal is stored with its ledger record (kind withdrawal) in one
// transaction, numbered 1, 2, … per entry, and entries.verified_withdrawn follows the
// entry's newest withdrawal (a trigger of the migration owns it). An entry's deletion
// deletes its reports and withdrawals, and its tombstone lists the withdrawal records.

// Bounds and states of the report tables (the schema says the same).
const (
	MaxReportText    = 4000 // characters of a report
	MaxReportContact = 254  // characters of a contact e-mail address
	MaxReportReason  = 2000 // characters of an operator's reason
	// ReportAnswerWithin is the time a report is answered in: due = received + 72 h.
	ReportAnswerWithin = 72 * time.Hour
	// ReportContactKept is how long a closed report keeps its contact address.
	ReportContactKept = 30 * 24 * time.Hour

	ReportOpen      = "open"
	ReportWithdrawn = "withdrawn"
	ReportDeclined  = "declined"

	maxReportBatch   = 1000
	maxWithdrawalEnv = 1 << 16
)

// RecordWithdrawal is the ledger kind of a withdrawal/v1 statement (SaveWithdrawal).
const RecordWithdrawal RecordKind = "withdrawal"

// Errors of the report methods that callers branch on.
var (
	// ErrReportClosed is returned when a report was closed already.
	ErrReportClosed = errors.New("the report was closed already")
	// ErrWithdrawalConflict is returned by SaveWithdrawal when the number is not the
	// entry's next, or the action does not change the entry's state (withdrawing a
	// withdrawn entry, restoring one that is not withdrawn).
	ErrWithdrawalConflict = errors.New("the withdrawal does not follow the entry's newest one")
)

// Report is one report about an entry.
type Report struct {
	ID        int64
	EntryID   int64
	EntrySlug string // read with the report
	Text      string
	// Contact is the reporter's e-mail address ("" when none, or erased); never shown
	// publicly.
	Contact    string
	ReceivedAt time.Time
	DueAt      time.Time
	Status     string
	DecidedAt  time.Time // zero while open
	DecidedBy  int64     // the operator's account (0 while open, or when it is gone)
	Reason     string
}

// Withdrawal is one withdrawal/v1 record of an entry, with its ledger record.
type Withdrawal struct {
	ID        int64
	EntryID   int64
	Number    int64
	Action    string // attest.WithdrawalWithdrawn or attest.WithdrawalRestored
	Reason    string
	At        time.Time
	SupplySeq int64 // the supply run's ledger sequence number the record names
	// Envelope is the DSSE envelope, KeyID its key, PayloadDigest the hex SHA-256 of its
	// payload (computed by SaveWithdrawal; one given must match).
	Envelope      []byte
	KeyID         string
	PayloadDigest string
	// Seq is the record's sequence number (0 while pending).
	Seq int64
}

// ReportDecision closes a report: its status (ReportWithdrawn or ReportDeclined), the
// operator and the reason.
type ReportDecision struct {
	ReportID int64
	Status   string
	By       int64
	Reason   string
	At       time.Time
}

const reportColumns = `r.id, r.entry_id, e.slug, r.text, coalesce(r.contact, ''), r.received_at, r.due_at, r.status,
	r.decided_at, coalesce(r.decided_by, 0), coalesce(r.reason, '')`

const reportFrom = `reports r JOIN entries e ON e.id = r.entry_id`

func scanReport(row rowScanner) (Report, error) {
	var r Report
	err := row.Scan(&r.ID, &r.EntryID, &r.EntrySlug, &r.Text, &r.Contact, timeCol(&r.ReceivedAt), timeCol(&r.DueAt),
		&r.Status, timeCol(&r.DecidedAt), &r.DecidedBy, &r.Reason)
	return r, err
}

const withdrawalColumns = `w.id, w.entry_id, w.number, w.action, w.reason, w.at, w.supply_seq, l.envelope, l.key_id,
	l.payload_digest, l.seq`

func scanWithdrawal(row rowScanner) (Withdrawal, error) {
	var w Withdrawal
	var seq *int64
	err := row.Scan(&w.ID, &w.EntryID, &w.Number, &w.Action, &w.Reason, timeCol(&w.At), &w.SupplySeq, &w.Envelope,
		&w.KeyID, &w.PayloadDigest, &seq)
	if seq != nil {
		w.Seq = *seq
	}
	return w, err
}

// checkText refuses text that is blank, longer than max characters, or not UTF-8.
func checkText(what, s string, max int) error {
	switch {
	case strings.TrimSpace(s) == "":
		return fmt.Errorf("the %s is empty", what)
	case !utf8.ValidString(s):
		return fmt.Errorf("the %s is not UTF-8", what)
	case utf8.RuneCountInString(s) > max:
		return fmt.Errorf("the %s is %d characters long; at most %d are allowed", what, utf8.RuneCountInString(s), max)
	}
	return nil
}

// AddReport stores a new open report about r.EntryID received at r.ReceivedAt, due
// ReportAnswerWithin later. ErrNotFound when the entry does not exist.
func (s *sqlStore) AddReport(ctx context.Context, r Report) (Report, error) {
	if err := checkText("report", r.Text, MaxReportText); err != nil {
		return Report{}, fmt.Errorf("couldn't store a report: %w", err)
	}
	var contact any
	if r.Contact != "" {
		if len(r.Contact) < 3 || len(r.Contact) > MaxReportContact || !utf8.ValidString(r.Contact) {
			return Report{}, fmt.Errorf("couldn't store a report: the contact address is %d bytes long; 3 to %d are allowed", len(r.Contact), MaxReportContact)
		}
		contact = r.Contact
	}
	if r.ReceivedAt.IsZero() {
		return Report{}, errors.New("couldn't store a report: no time received")
	}
	var id int64
	err := s.write.QueryRow(ctx, `INSERT INTO reports (entry_id, text, contact, received_at, due_at)
		SELECT id, ?, ?, ?, ? FROM entries WHERE id = ? RETURNING id`,
		r.Text, contact, s.d.time(r.ReceivedAt), s.d.time(r.ReceivedAt.Add(ReportAnswerWithin)), r.EntryID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return Report{}, ErrNotFound
	}
	if err != nil {
		return Report{}, fmt.Errorf("couldn't store a report about entry %d: %w", r.EntryID, err)
	}
	return s.Report(ctx, id)
}

// Report returns the report with the id, or ErrNotFound.
func (s *sqlStore) Report(ctx context.Context, id int64) (Report, error) {
	r, err := scanReport(s.read.QueryRow(ctx, `SELECT `+reportColumns+` FROM `+reportFrom+` WHERE r.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Report{}, ErrNotFound
	}
	return r, err
}

// OpenReports returns the open reports, the one due first first, at most limit (≤ 0 or
// above 1000: 1000).
func (s *sqlStore) OpenReports(ctx context.Context, limit int) ([]Report, error) {
	if limit <= 0 || limit > maxReportBatch {
		limit = maxReportBatch
	}
	return queryAll(ctx, s.read, scanReport, `SELECT `+reportColumns+` FROM `+reportFrom+`
		WHERE r.status = 'open' ORDER BY r.due_at, r.id LIMIT ?`, limit)
}

// CountEntryReports counts the reports about the entry received at or after since.
func (s *sqlStore) CountEntryReports(ctx context.Context, entryID int64, since time.Time) (int, error) {
	var n int
	err := s.read.QueryRow(ctx, `SELECT count(*) FROM reports WHERE entry_id = ? AND received_at >= ?`,
		entryID, s.d.time(since)).Scan(&n)
	return n, err
}

// DeclineReport closes an open report as declined. ErrNotFound for no such report,
// ErrReportClosed for one closed already.
func (s *sqlStore) DeclineReport(ctx context.Context, d ReportDecision) (Report, error) {
	d.Status = ReportDeclined
	if err := s.closeReport(ctx, s.write, d); err != nil {
		return Report{}, err
	}
	return s.Report(ctx, d.ReportID)
}

// closeReport closes the open report d.ReportID on q.
func (s *sqlStore) closeReport(ctx context.Context, q querier, d ReportDecision) error {
	if err := checkText("reason", d.Reason, MaxReportReason); err != nil {
		return fmt.Errorf("couldn't close report %d: %w", d.ReportID, err)
	}
	var by any
	if d.By > 0 {
		by = d.By
	}
	n, err := q.Exec(ctx, `UPDATE reports SET status = ?, decided_at = ?, decided_by = ?, reason = ?
		WHERE id = ? AND status = 'open'`, d.Status, s.d.time(d.At), by, d.Reason, d.ReportID)
	if err != nil {
		return fmt.Errorf("couldn't close report %d: %w", d.ReportID, err)
	}
	if n == 0 {
		var status string
		if err := q.QueryRow(ctx, `SELECT status FROM reports WHERE id = ?`, d.ReportID).Scan(&status); errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		return ErrReportClosed
	}
	return nil
}

// PruneReportContacts erases the contact address of every report closed before
// before, and returns how many.
func (s *sqlStore) PruneReportContacts(ctx context.Context, before time.Time) (int64, error) {
	return s.write.Exec(ctx, `UPDATE reports SET contact = NULL
		WHERE contact IS NOT NULL AND status <> 'open' AND decided_at < ?`, s.d.time(before))
}

// Withdrawals returns the entry's withdrawal records, by number.
func (s *sqlStore) Withdrawals(ctx context.Context, entryID int64) ([]Withdrawal, error) {
	return queryAll(ctx, s.read, scanWithdrawal, `SELECT `+withdrawalColumns+`
		FROM withdrawals w JOIN ledger l ON l.id = w.ledger_id WHERE w.entry_id = ? ORDER BY w.number LIMIT ?`,
		entryID, maxReportBatch)
}

// checkWithdrawal refuses a withdrawal SaveWithdrawal cannot store, and computes its
// payload digest.
func checkWithdrawal(w *Withdrawal) error {
	if w.Action != "withdrawn" && w.Action != "restored" {
		return fmt.Errorf("action %q; want withdrawn or restored", w.Action)
	}
	if w.Number < 1 || w.SupplySeq < 1 || w.At.IsZero() {
		return fmt.Errorf("number %d, supply seq %d, time %v: all are required", w.Number, w.SupplySeq, w.At)
	}
	if err := checkText("reason", w.Reason, MaxReportReason); err != nil {
		return err
	}
	if len(w.Envelope) == 0 {
		return errors.New("a withdrawal is signed: no envelope")
	}
	d, err := signedDigest(w.Envelope, w.KeyID, w.PayloadDigest, maxWithdrawalEnv)
	if err != nil {
		return err
	}
	w.PayloadDigest = d
	return nil
}

// saveWithdrawal is SaveWithdrawal's transaction on q, the entry's writes serialized by
// the caller: the record must be the entry's next number and change its state; the
// ledger record (inserted by insert) and the withdrawals row go in together, and the
// report, when given, is closed with it. It returns the ledger record's id.
func (s *sqlStore) saveWithdrawal(ctx context.Context, q querier, w Withdrawal, closing *ReportDecision) (int64, error) {
	var next int64
	var withdrawn bool
	err := q.QueryRow(ctx, `SELECT coalesce((SELECT max(number) FROM withdrawals WHERE entry_id = ?), 0) + 1, verified_withdrawn
		FROM entries WHERE id = ?`, w.EntryID, w.EntryID).Scan(&next, &withdrawn)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrNotFound
	}
	if err != nil {
		return 0, err
	}
	if w.Number != next || withdrawn != (w.Action == "restored") {
		return 0, fmt.Errorf("%w: number %d (next %d), %s (withdrawn now: %v)", ErrWithdrawalConflict, w.Number, next, w.Action, withdrawn)
	}
	var id int64
	if err := q.QueryRow(ctx, insertRecordSQL, string(RecordWithdrawal), w.EntryID, w.PayloadDigest, w.KeyID, w.Envelope,
		s.d.time(s.clock())).Scan(&id); err != nil {
		return 0, fmt.Errorf("couldn't store the withdrawal record: %w", err)
	}
	if _, err := q.Exec(ctx, `INSERT INTO withdrawals (entry_id, number, action, reason, at, supply_seq, ledger_id)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, w.EntryID, w.Number, w.Action, w.Reason, s.d.time(w.At), w.SupplySeq, id); err != nil {
		return 0, fmt.Errorf("couldn't store the withdrawal: %w", err)
	}
	if closing != nil {
		if err := s.closeReport(ctx, q, *closing); err != nil {
			return 0, err
		}
	}
	return id, nil
}

// withdrawalByRecord reads back the withdrawal stored with ledger record id.
func (s *sqlStore) withdrawalByRecord(ctx context.Context, q querier, id int64) (Withdrawal, error) {
	return scanWithdrawal(q.QueryRow(ctx, `SELECT `+withdrawalColumns+`
		FROM withdrawals w JOIN ledger l ON l.id = w.ledger_id WHERE w.ledger_id = ?`, id))
}

// notFound is err, with a missing row as ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}
