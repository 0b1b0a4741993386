package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/probity-dev/probity/attest"
)

// Baselines (issue 18, "Approve a baseline"; migration 0018): the tool surfaces an
// entry's maintainers approved, numbered 1, 2, … per entry, each signed (a
// baseline/v1 statement, package baseline) and stored with its ledger record (kind
// baseline) in one transaction. The newest is the entry's current baseline. Who
// approved is kept (ApprovedBy) but is never part of what is signed or shown.

// maxBaselineEnvelope bounds a baseline's envelope: a baseline/v1 statement is under
// 2 KB.
const maxBaselineEnvelope = 64 << 10

// ErrBaselineNumber is returned by SaveBaseline when the baseline's number is not the
// entry's next (another approval was stored meanwhile): the caller numbers and signs
// it again.
var ErrBaselineNumber = errors.New("the baseline's number is not the entry's next")

// Baseline is an approved baseline.
type Baseline struct {
	ID      int64 // set by the store
	EntryID int64
	// Number is the entry's baseline number, 1, 2, …: the current one's plus one.
	Number int64
	// Fingerprints are the approved toolset, schema and surface fingerprints (the
	// Instructions member is not kept: empty).
	Fingerprints attest.Fingerprints
	ToolCount    int
	// BasisRoundID and BasisPayloadDigest (hex) name the signed round it was taken from.
	BasisRoundID       string
	BasisPayloadDigest string
	ApprovedAt         time.Time
	// ApprovedBy is the account that approved (0 once that account is deleted); never
	// signed, never shown.
	ApprovedBy int64
	// Envelope is the signed baseline/v1 statement, KeyID its key and PayloadDigest the
	// hex SHA-256 of its payload (SaveBaseline computes it when empty).
	Envelope      []byte
	KeyID         string
	PayloadDigest string
	// Seq is the ledger record's sequence number once numbered (0 before).
	Seq int64
}

var (
	baselineRoundID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)
	hex64Pattern    = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// checkBaseline refuses a baseline the table would refuse, with a clear error, and
// computes its payload digest.
func checkBaseline(b *Baseline) error {
	switch {
	case b.ID != 0:
		return fmt.Errorf("baseline has id %d: SaveBaseline assigns it", b.ID)
	case b.Number < 1:
		return fmt.Errorf("baseline number %d: numbers start at 1", b.Number)
	case !fingerprintPattern.MatchString(b.Fingerprints.Toolset) || !fingerprintPattern.MatchString(b.Fingerprints.Schema) || !fingerprintPattern.MatchString(b.Fingerprints.Surface):
		return errors.New("baseline fingerprints must each be sha256: and 64 lowercase hex digits")
	case b.ToolCount < 1 || b.ToolCount > 10000:
		return fmt.Errorf("baseline of %d tools: 1 to 10000 are allowed", b.ToolCount)
	case !baselineRoundID.MatchString(b.BasisRoundID):
		return fmt.Errorf("baseline basis round id %q is not a round id", b.BasisRoundID)
	case !hex64Pattern.MatchString(b.BasisPayloadDigest):
		return errors.New("baseline basis payload digest must be 64 lowercase hex digits")
	case b.ApprovedAt.IsZero():
		return errors.New("baseline has no approval time")
	case len(b.Envelope) == 0:
		return errors.New("a baseline is signed: it has no envelope")
	}
	digest, err := signedDigest(b.Envelope, b.KeyID, b.PayloadDigest, maxBaselineEnvelope)
	if err != nil {
		return fmt.Errorf("baseline %w", err)
	}
	b.PayloadDigest = digest
	return nil
}

const baselineColumns = `b.id, b.entry_id, b.number, b.toolset, b.schema_fp, b.surface, b.tool_count,
	b.basis_round_id, b.basis_payload_digest, b.approved_at, coalesce(b.approved_by, 0),
	l.envelope, l.key_id, l.payload_digest, coalesce(l.seq, 0)`

const baselineFrom = `baselines b JOIN ledger l ON l.id = b.ledger_id`

func scanBaseline(r rowScanner) (Baseline, error) {
	var b Baseline
	err := r.Scan(&b.ID, &b.EntryID, &b.Number, &b.Fingerprints.Toolset, &b.Fingerprints.Schema, &b.Fingerprints.Surface,
		&b.ToolCount, &b.BasisRoundID, &b.BasisPayloadDigest, timeCol(&b.ApprovedAt), &b.ApprovedBy,
		&b.Envelope, &b.KeyID, &b.PayloadDigest, &b.Seq)
	return b, err
}

// CurrentBaseline returns the entry's newest baseline, or ErrNotFound when it has none.
func (s *sqlStore) CurrentBaseline(ctx context.Context, entryID int64) (Baseline, error) {
	b, err := scanBaseline(s.read.QueryRow(ctx, `SELECT `+baselineColumns+` FROM `+baselineFrom+`
		WHERE b.entry_id = ? ORDER BY b.number DESC LIMIT 1`, entryID))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Baseline{}, ErrNotFound
	case err != nil:
		return Baseline{}, fmt.Errorf("couldn't read the baseline of entry %d: %w", entryID, err)
	}
	return b, nil
}

// Baselines returns the entry's baselines, newest first, at most limit (1 to 1000).
func (s *sqlStore) Baselines(ctx context.Context, entryID int64, limit int) ([]Baseline, error) {
	if limit < 1 || limit > 1000 {
		return nil, fmt.Errorf("couldn't read baselines: limit %d is not 1 to 1000", limit)
	}
	rows, err := s.read.Query(ctx, `SELECT `+baselineColumns+` FROM `+baselineFrom+`
		WHERE b.entry_id = ? ORDER BY b.number DESC LIMIT ?`, entryID, limit)
	if err != nil {
		return nil, fmt.Errorf("couldn't read the baselines of entry %d: %w", entryID, err)
	}
	bs, err := collect(rows, scanBaseline)
	if err != nil {
		return nil, fmt.Errorf("couldn't read the baselines of entry %d: %w", entryID, err)
	}
	return bs, nil
}
