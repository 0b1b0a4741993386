package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/probity-dev/probity/attest"
)

// Disputes and outcomes (issue 18; migration 0019): a maintainer's public dispute of
// one check result of a signed round, and an operator's outcome. Each is stored with
// its signed ledger record (kind dispute or outcome, the entry's) in one transaction;
// the round disputed is never altered; both go with their entry (DeleteEntry's
// tombstone lists their records). Package disputes decides who may write them and what
// they say; the store keeps what must hold whatever the caller does: the dispute
// numbers of an entry are 1, 2, … without a gap, at most one dispute per entry, round
// and check is open (without outcome), a dispute has at most one outcome, and the
// accounts that opened or decided one are stored but never returned to a public
// reader (OpenedBy and DecidedBy are for rate limits and abuse only).

// Errors of the dispute methods that callers branch on.
var (
	// ErrDisputeOpen is returned by SaveDispute when the entry has an open dispute of
	// the same round and check.
	ErrDisputeOpen = errors.New("a dispute of this check of this round is open already")
	// ErrDisputeNumber is returned by SaveDispute when the number is not the entry's
	// next dispute number (another dispute took it first): read it again, sign again.
	ErrDisputeNumber = errors.New("the dispute number is not the entry's next")
	// ErrDisputeDecided is returned by SaveOutcome for a dispute that has an outcome.
	ErrDisputeDecided = errors.New("the dispute has an outcome already")
)

// maxDisputeEnvelope bounds a dispute's or outcome's envelope: 2,000 characters of
// text, a URL of 2,048 bytes and the rest, base64-encoded, fit well below it.
const maxDisputeEnvelope = 64 << 10

// maxDisputeBatch bounds the disputes one call reads.
const maxDisputeBatch = 1000

// SignedRoundRef is what a dispute names of the round it contests: the round, its entry,
// its ledger record (Seq, 0 while pending; PayloadDigest, hex) and its envelope.
type SignedRoundRef struct {
	ID            int64
	EntryID       int64
	RoundID       string
	Seq           int64
	PayloadDigest string
	Envelope      []byte
}

// NewDispute is a signed dispute to store.
type NewDispute struct {
	EntryID   int64
	Number    int64
	RoundID   int64 // the round's id in the store (RoundSummary.ID)
	CheckID   string
	Status    attest.CheckStatus
	Statement string
	Evidence  string
	OpenedAt  time.Time
	// OpenedBy is the maintainer's account: private.
	OpenedBy int64
	Envelope []byte
	KeyID    string
}

// NewOutcome is a signed outcome to store.
type NewOutcome struct {
	DisputeID    int64
	Decision     string
	SuiteVersion string
	Reason       string
	DecidedAt    time.Time
	// DecidedBy is the operator's account: private.
	DecidedBy int64
	Envelope  []byte
	KeyID     string
}

// DisputeRecord is a stored dispute with its outcome, if any.
type DisputeRecord struct {
	ID        int64
	EntryID   int64
	EntrySlug string
	Number    int64
	RoundID   int64
	// RoundPublicID is the round's statement roundId.
	RoundPublicID string
	CheckID       string
	Status        attest.CheckStatus
	Statement     string
	Evidence      string
	OpenedAt      time.Time
	// OpenedBy is the account that opened it (0 once deleted): never to be shown.
	OpenedBy int64
	// Seq is the dispute's ledger sequence number (0 while pending); PayloadDigest the
	// hex SHA-256 of its payload.
	Seq           int64
	PayloadDigest string
	Outcome       *OutcomeRecord
}

// OutcomeRecord is a stored outcome.
type OutcomeRecord struct {
	ID           int64
	Decision     string
	SuiteVersion string
	Reason       string
	DecidedAt    time.Time
	// DecidedBy is the operator's account (0 once deleted): never to be shown.
	DecidedBy     int64
	Seq           int64
	PayloadDigest string
}

// DisputeFilter selects disputes; the zero value selects every one, newest first.
type DisputeFilter struct {
	EntryID  int64 // only this entry's (0: every entry's)
	OpenOnly bool  // only disputes without an outcome
	// OldestFirst orders by opening time then id ascending (the operator's queue);
	// otherwise newest first.
	OldestFirst bool
	Limit       int // at most this many (≤ 0 or above 1000: 1000)
}

const disputeColumns = `d.id, d.entry_id, e.slug, d.number, d.round_id, r.round_id, d.check_id, d.status,
	d.statement, d.evidence, d.opened_at, coalesce(d.opened_by, 0), coalesce(l.seq, 0), l.payload_digest,
	coalesce(o.id, 0), coalesce(o.decision, ''), coalesce(o.suite_version, ''), coalesce(o.reason, ''),
	o.decided_at, coalesce(o.decided_by, 0), coalesce(ol.seq, 0), coalesce(ol.payload_digest, '')`

const disputeFrom = `disputes d
	JOIN entries e ON e.id = d.entry_id
	JOIN rounds r ON r.id = d.round_id
	JOIN ledger l ON l.id = d.ledger_id
	LEFT JOIN outcomes o ON o.dispute_id = d.id
	LEFT JOIN ledger ol ON ol.id = o.ledger_id`

func scanDispute(r rowScanner) (DisputeRecord, error) {
	var d DisputeRecord
	var o OutcomeRecord
	var status string
	err := r.Scan(&d.ID, &d.EntryID, &d.EntrySlug, &d.Number, &d.RoundID, &d.RoundPublicID, &d.CheckID, &status,
		&d.Statement, &d.Evidence, timeCol(&d.OpenedAt), &d.OpenedBy, &d.Seq, &d.PayloadDigest,
		&o.ID, &o.Decision, &o.SuiteVersion, &o.Reason, timeCol(&o.DecidedAt), &o.DecidedBy, &o.Seq, &o.PayloadDigest)
	d.Status = attest.CheckStatus(status)
	if o.ID != 0 {
		d.Outcome = &o
	}
	return d, err
}

// SignedRound returns the signed round with the id and its ledger record; ErrNotFound
// when there is no such round or it is not signed.
func (s *sqlStore) SignedRound(ctx context.Context, roundID int64) (SignedRoundRef, error) {
	var r SignedRoundRef
	err := s.read.QueryRow(ctx, `SELECT r.id, r.entry_id, r.round_id, coalesce(l.seq, 0), l.payload_digest, l.envelope
		FROM rounds r JOIN ledger l ON l.id = r.ledger_id WHERE r.id = ?`, roundID).
		Scan(&r.ID, &r.EntryID, &r.RoundID, &r.Seq, &r.PayloadDigest, &r.Envelope)
	if errors.Is(err, sql.ErrNoRows) {
		return SignedRoundRef{}, fmt.Errorf("signed round %d: %w", roundID, ErrNotFound)
	}
	if err != nil {
		return SignedRoundRef{}, fmt.Errorf("couldn't read round %d: %w", roundID, err)
	}
	return r, nil
}

// NextDisputeNumber returns the number the entry's next dispute takes.
func (s *sqlStore) NextDisputeNumber(ctx context.Context, entryID int64) (int64, error) {
	var n int64
	if err := s.read.QueryRow(ctx, `SELECT coalesce(max(number), 0) + 1 FROM disputes WHERE entry_id = ?`, entryID).Scan(&n); err != nil {
		return 0, fmt.Errorf("couldn't read the dispute numbers of entry %d: %w", entryID, err)
	}
	return n, nil
}

// Disputes returns the disputes f selects, each with its outcome.
func (s *sqlStore) Disputes(ctx context.Context, f DisputeFilter) ([]DisputeRecord, error) {
	limit := f.Limit
	if limit <= 0 || limit > maxDisputeBatch {
		limit = maxDisputeBatch
	}
	q := `SELECT ` + disputeColumns + ` FROM ` + disputeFrom + ` WHERE (? = 0 OR d.entry_id = ?)`
	if f.OpenOnly {
		q += ` AND o.id IS NULL`
	}
	if f.OldestFirst {
		q += ` ORDER BY d.opened_at, d.id`
	} else {
		q += ` ORDER BY d.opened_at DESC, d.id DESC`
	}
	ds, err := queryAll(ctx, s.read, scanDispute, q+` LIMIT ?`, f.EntryID, f.EntryID, limit)
	if err != nil {
		return nil, fmt.Errorf("couldn't read disputes: %w", err)
	}
	return ds, nil
}

// Dispute returns the dispute with the id, or ErrNotFound.
func (s *sqlStore) Dispute(ctx context.Context, id int64) (DisputeRecord, error) {
	return s.disputeOn(ctx, s.read, id)
}

func (s *sqlStore) disputeOn(ctx context.Context, q querier, id int64) (DisputeRecord, error) {
	d, err := scanDispute(q.QueryRow(ctx, `SELECT `+disputeColumns+` FROM `+disputeFrom+` WHERE d.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return DisputeRecord{}, fmt.Errorf("dispute %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return DisputeRecord{}, fmt.Errorf("couldn't read dispute %d: %w", id, err)
	}
	return d, nil
}

// DisputesOpenedSince counts the disputes the account opened at or after since (its
// rate limit).
func (s *sqlStore) DisputesOpenedSince(ctx context.Context, accountID int64, since time.Time) (int, error) {
	var n int
	if err := s.read.QueryRow(ctx, `SELECT count(*) FROM disputes WHERE opened_by = ? AND opened_at >= ?`,
		accountID, s.d.time(since)).Scan(&n); err != nil {
		return 0, fmt.Errorf("couldn't count the disputes of account %d: %w", accountID, err)
	}
	return n, nil
}

// checkNewDispute bounds a dispute before its transaction and returns its payload
// digest.
func checkNewDispute(d *NewDispute) (string, error) {
	if err := attest.CheckDisputeText(d.Statement); err != nil {
		return "", fmt.Errorf("statement: %w", err)
	}
	if err := attest.CheckEvidenceURL(d.Evidence); err != nil {
		return "", err
	}
	if d.Number < 1 || d.OpenedAt.IsZero() || d.CheckID == "" || len(d.CheckID) > 64 {
		return "", errors.New("a dispute needs a number, a time and a check id")
	}
	if len(d.Envelope) == 0 {
		return "", errors.New("a dispute is a signed record: it needs its envelope")
	}
	return signedDigest(d.Envelope, d.KeyID, "", maxDisputeEnvelope)
}

// saveDispute is SaveDispute's transaction on q, after the entry's row is locked (on
// PostgreSQL; SQLite's writer is one at a time): it checks the round, the open
// disputes and the number, stores the ledger record pending and the dispute, and
// returns the record's id.
func (s *sqlStore) saveDispute(ctx context.Context, q querier, d NewDispute, digest string, now time.Time) (int64, error) {
	var roundEntry int64
	var signed bool
	err := q.QueryRow(ctx, `SELECT entry_id, ledger_id IS NOT NULL FROM rounds WHERE id = ?`, d.RoundID).Scan(&roundEntry, &signed)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, ErrNotFound
	case err != nil:
		return 0, err
	case roundEntry != d.EntryID || !signed:
		return 0, ErrNotFound
	}
	var open int
	var next int64
	if err := q.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM disputes WHERE entry_id = ? AND round_id = ? AND check_id = ? AND NOT closed),
			(SELECT coalesce(max(number), 0) + 1 FROM disputes WHERE entry_id = ?)`,
		d.EntryID, d.RoundID, d.CheckID, d.EntryID).Scan(&open, &next); err != nil {
		return 0, err
	}
	if open > 0 {
		return 0, ErrDisputeOpen
	}
	if d.Number != next {
		return 0, ErrDisputeNumber
	}
	var record int64
	if err := q.QueryRow(ctx, insertRecordSQL, string(RecordDispute), d.EntryID, digest, d.KeyID, d.Envelope, s.d.time(now)).Scan(&record); err != nil {
		return 0, fmt.Errorf("couldn't store the dispute's record: %w", err)
	}
	var openedBy any
	if d.OpenedBy != 0 {
		openedBy = d.OpenedBy
	}
	if _, err := q.Exec(ctx, `INSERT INTO disputes (entry_id, number, round_id, check_id, status, statement, evidence,
			opened_at, opened_by, ledger_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		d.EntryID, d.Number, d.RoundID, d.CheckID, string(d.Status), d.Statement, d.Evidence,
		s.d.time(d.OpenedAt), openedBy, record); err != nil {
		return 0, fmt.Errorf("couldn't store the dispute: %w", err)
	}
	return record, nil
}

// checkNewOutcome bounds an outcome before its transaction and returns its payload
// digest.
func checkNewOutcome(o *NewOutcome) (string, error) {
	switch o.Decision {
	case attest.DecisionUpheld, attest.DecisionRejected, attest.DecisionCorrected:
	default:
		return "", fmt.Errorf("unknown decision %q", clipText(o.Decision, 32))
	}
	if (o.Decision == attest.DecisionCorrected) != (o.SuiteVersion != "") || (o.SuiteVersion != "" && !attest.IsToken(o.SuiteVersion)) {
		return "", errors.New("a corrected decision, and only it, names a suite version (a token)")
	}
	if err := attest.CheckDisputeText(o.Reason); err != nil {
		return "", fmt.Errorf("reason: %w", err)
	}
	if o.DecidedAt.IsZero() || len(o.Envelope) == 0 {
		return "", errors.New("an outcome needs a time and its envelope")
	}
	return signedDigest(o.Envelope, o.KeyID, "", maxDisputeEnvelope)
}

// saveOutcome is SaveOutcome's transaction on q, after the dispute's row is locked (on
// PostgreSQL): it refuses a second outcome, stores the ledger record pending (the
// dispute's entry's), the outcome, and closes the dispute. It returns the record's id.
func (s *sqlStore) saveOutcome(ctx context.Context, q querier, o NewOutcome, digest string, now time.Time) (int64, error) {
	var entryID int64
	var decided int
	err := q.QueryRow(ctx, `SELECT d.entry_id, (SELECT count(*) FROM outcomes WHERE dispute_id = d.id) FROM disputes d WHERE d.id = ?`,
		o.DisputeID).Scan(&entryID, &decided)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, ErrNotFound
	case err != nil:
		return 0, err
	case decided > 0:
		return 0, ErrDisputeDecided
	}
	var record int64
	if err := q.QueryRow(ctx, insertRecordSQL, string(RecordOutcome), entryID, digest, o.KeyID, o.Envelope, s.d.time(now)).Scan(&record); err != nil {
		return 0, fmt.Errorf("couldn't store the outcome's record: %w", err)
	}
	var decidedBy any
	if o.DecidedBy != 0 {
		decidedBy = o.DecidedBy
	}
	if _, err := q.Exec(ctx, `INSERT INTO outcomes (dispute_id, decision, suite_version, reason, decided_at, decided_by, ledger_id)
		VALUES (?, ?, ?, ?, ?, ?, ?)`,
		o.DisputeID, o.Decision, o.SuiteVersion, o.Reason, s.d.time(o.DecidedAt), decidedBy, record); err != nil {
		return 0, fmt.Errorf("couldn't store the outcome: %w", err)
	}
	if _, err := q.Exec(ctx, `UPDATE disputes SET closed = TRUE WHERE id = ?`, o.DisputeID); err != nil {
		return 0, fmt.Errorf("couldn't close the dispute: %w", err)
	}
	return record, nil
}

// notFoundIfNoRows maps a missing row to ErrNotFound.
func notFoundIfNoRows(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}
