package store

import (
	"crypto/sha256"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"modernc.org/sqlite"

	"github.com/probity-dev/probity/attest"
)

// RecordKind says what a ledger record signs.
type RecordKind string

// The kinds of signed record. The schema accepts any lowercase name, so a kind to come
// (a baseline, a dispute, a key document) needs no migration, only a constant here.
const (
	RecordProbe  RecordKind = "probe"  // a round's probe/v1 statement (SaveRound)
	RecordChange RecordKind = "change" // a change's change/v1 statement (SaveHistory)
	RecordSupply RecordKind = "supply" // a supply run's supply/v1 statement (SaveSupply)
	RecordKeys   RecordKind = "keys"   // a key document version's keys/v1 statement (SaveKeyDocumentVersion)

	RecordDispute RecordKind = "dispute" // a dispute's dispute/v1 statement (SaveDispute)
	RecordOutcome RecordKind = "outcome" // an outcome's outcome/v1 statement (SaveOutcome)
	// RecordBaseline is an approved baseline's baseline/v1 statement (SaveBaseline).
	RecordBaseline RecordKind = "baseline"
)

// LedgerRecord is one signed record of the ledger.
type LedgerRecord struct {
	// Seq is the record's sequence number: 1, 2, … in the order the numbers were
	// committed (a sequencing step numbers records shortly after they are stored), each
	// number used once, by a record or a tombstone (see the package documentation). It
	// is the record's index in the transparency log to come.
	Seq  int64
	Kind RecordKind
	// EntryID and EntrySlug name the entry the record is about (0 and "": none).
	EntryID   int64
	EntrySlug string
	// PayloadDigest is the hex SHA-256 of the signed payload; KeyID the signing key's id.
	PayloadDigest string
	KeyID         string
	// Envelope is the DSSE envelope JSON, byte for byte as it was signed and stored.
	Envelope  []byte
	CreatedAt time.Time // when it was stored

	// What the record signs, by kind: the round's id (RecordProbe), the change's
	// number (RecordChange), the supply run's time (RecordSupply); zero otherwise.
	RoundID      string
	ChangeNumber int64
	RanAt        time.Time

	// LogIndex is the record's index in the transparency log, Seq-1, once the log's
	// appender has integrated its leaf (SetLogged); nil until then.
	LogIndex *int64
}

// LedgerFilter selects ledger records; the zero value selects every one.
type LedgerFilter struct {
	AfterSeq  int64     // only records with a higher sequence number
	Through   int64     // only records with a sequence number at most this (0: no bound)
	Since     time.Time // only records stored at or after Since
	EntrySlug string    // only the records of this entry
}

// Tombstone records the deletion of an entry's signed records: it takes a sequence
// number of its own, and lists the numbers that went, so that the ledger (and the log
// built on it) can say what was removed and why.
type Tombstone struct {
	Seq       int64
	EntryID   int64
	EntrySlug string
	Reason    string // one line, why the entry was deleted
	DeletedAt time.Time
	// Removed are the records deleted with the entry, in sequence order.
	Removed []RemovedRecord
	// LogIndex is the tombstone's index in the transparency log, Seq-1, once logged;
	// nil until then. (LogSources fills it; Tombstones leaves it nil.)
	LogIndex *int64
}

// RemovedRecord is one record a tombstone lists.
type RemovedRecord struct {
	Seq           int64
	Kind          RecordKind
	PayloadDigest string
}

// LogSource is what the log leaf of one sequence number is built from: exactly one of
// Record (a ledger record), Tombstone (a tombstone, with the records it lists) or
// Removed (a record an entry's deletion removed from the ledger; its tombstone lists
// it). See LogSources.
type LogSource struct {
	Seq       int64
	Record    *LedgerRecord
	Tombstone *Tombstone
	Removed   *RemovedRecord
}

// maxDeleteReason bounds the reason of DeleteEntry (the schema's CHECK says the same).
const maxDeleteReason = 200

// ledgerPage is how many records Ledger and Envelopes read per query: a page of
// envelopes is a few MB at most.
const ledgerPage = 256

// ledgerColumns are the columns Ledger reads, of ledgerFrom (the same SQL on both
// backends): each record with its entry and the row that references it, found on the
// referencing tables' unique ledger_id indexes.
const (
	ledgerColumns = `l.seq, l.kind, coalesce(l.entry_id, 0), coalesce(e.slug, ''), l.payload_digest,
		l.key_id, l.envelope, l.created_at, coalesce(o.round_id, ''), coalesce(c.number, 0), r.ran_at,
		l.log_index`
	ledgerFrom = `ledger l
		LEFT JOIN entries e ON e.id = l.entry_id
		LEFT JOIN rounds o ON o.ledger_id = l.id
		LEFT JOIN changes c ON c.ledger_id = l.id
		LEFT JOIN supply_runs r ON r.ledger_id = l.id`
)

// checkLedgerFilter refuses a filter Ledger cannot answer.
func checkLedgerFilter(f LedgerFilter) error {
	if f.AfterSeq < 0 || f.Through < 0 {
		return fmt.Errorf("negative sequence number %d", min(f.AfterSeq, f.Through))
	}
	return nil
}

// signedDigest checks a change's or supply run's envelope, key id and payload digest
// and returns the payload digest to store: "" for an unsigned record (no envelope, no
// key id, no digest), else the digest of the envelope's payload (payloadDigestOf), which
// a digest given must equal. limit bounds the envelope's size.
func signedDigest(env []byte, keyID, given string, limit int) (string, error) {
	switch {
	case (len(env) == 0) != (keyID == ""):
		return "", errors.New("envelope and key id come together")
	case len(env) == 0 && given != "":
		return "", errors.New("payload digest without an envelope")
	case len(env) == 0:
		return "", nil
	case len(env) > limit:
		return "", fmt.Errorf("envelope is %d bytes, more than %d", len(env), limit)
	}
	digest, err := payloadDigestOf(env)
	if err != nil {
		return "", err
	}
	if given != "" && given != digest {
		return "", fmt.Errorf("payload digest %s is not the envelope's, %s", given, digest)
	}
	return digest, nil
}

// payloadDigestOf is a record's payload digest: the hex SHA-256 of its DSSE envelope's
// payload, as decoded by attest.ParseEnvelope (which checks neither the signatures nor
// the payload's contents).
func payloadDigestOf(env []byte) (string, error) {
	_, payload, err := attest.ParseEnvelope(env)
	if err != nil {
		return "", fmt.Errorf("envelope is not a DSSE envelope: %w", err)
	}
	sum := sha256.Sum256(payload)
	return hex.EncodeToString(sum[:]), nil
}

// sqlitePayloadDigest is the function migration 0006 calls on SQLite to compute the
// payload digest of the change and supply envelopes stored before it: the hex SHA-256 of
// the envelope's decoded payload, what the writers computed from the payload they signed.
const sqlitePayloadDigest = "probity_payload_digest"

func init() {
	sqlite.MustRegisterDeterministicScalarFunction(sqlitePayloadDigest, 1,
		func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			var env []byte
			switch v := args[0].(type) {
			case []byte:
				env = v
			case string:
				env = []byte(v)
			default:
				return nil, fmt.Errorf("%s: not an envelope (%T)", sqlitePayloadDigest, args[0])
			}
			digest, err := payloadDigestOf(env)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", sqlitePayloadDigest, err)
			}
			return digest, nil
		})
}

// tombstoneRow is a tombstone joined with one of the records it lists (nil: none).
type tombstoneRow struct {
	Tombstone
	removed *RemovedRecord
}

// groupTombstones folds rows ordered by tombstone, then record, into tombstones.
func groupTombstones(rows []tombstoneRow) []Tombstone {
	var out []Tombstone
	for _, r := range rows {
		if len(out) == 0 || out[len(out)-1].Seq != r.Seq {
			out = append(out, r.Tombstone)
		}
		if r.removed != nil {
			t := &out[len(out)-1]
			t.Removed = append(t.Removed, *r.removed)
		}
	}
	return out
}

// String returns the kind's name, as the ledger and the log leaves spell it.
func (k RecordKind) String() string { return string(k) }
