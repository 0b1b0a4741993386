package store

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"
)

// The transparency log's side of the store (migration 0009), written once: what the
// log's appender reads (LogSources) and marks (SetLogged), the checkpoints it archives,
// and the key document's versions. SaveKeyDocumentVersion, which stores a ledger record,
// and TryLogLock are the backends' own (pg_log.go, sqlite_log.go).

// LogCheckpoint is one checkpoint the log published: a signed note (C2SP
// tlog-checkpoint) with every cosignature it carried when it was read.
type LogCheckpoint struct {
	Size     int64
	RootHash []byte // 32 bytes
	Note     []byte // the note as published, signature lines included
	SeenAt   time.Time
	// Cosigned says the note carries a signature besides the log's own.
	Cosigned bool
}

// KeyDocumentVersion is one version of the key document, signed (a keys/v1 statement)
// and stored as a ledger record of kind RecordKeys.
type KeyDocumentVersion struct {
	Version  int
	IssuedAt time.Time
	// DocumentDigest names the key document of this version (e.g. "sha256:…").
	DocumentDigest string
	// Envelope is the DSSE envelope of the keys/v1 statement, KeyID the key that signed
	// it, PayloadDigest the hex SHA-256 of its payload (computed by
	// SaveKeyDocumentVersion; one given must match).
	Envelope      []byte
	KeyID         string
	PayloadDigest string
	// Seq is the record's sequence number (0 while pending, on PostgreSQL only).
	Seq int64
}

// Bounds of what the log stores.
const (
	maxCheckpointNote  = 1 << 16 // bytes of a checkpoint note (the schema says the same)
	maxKeysEnvelope    = 1 << 20 // bytes of a keys/v1 envelope
	maxDocumentDigest  = 200     // characters of a key document's digest
	maxLogSourcesLimit = 10_000  // numbers LogSources reads at once
)

// ErrKeyVersionConflict is returned by SaveKeyDocumentVersion when the version is
// stored with another envelope.
var ErrKeyVersionConflict = errors.New("key document version stored with another envelope")

// logSourcesSQL reads, in one statement (one snapshot on either backend), every number
// in (?, ?]: the ledger's records, the tombstones (one row per record each lists, or one
// row when it lists none) and the records removed with their entry. Ordered by number,
// then by the listed record's number.
const logSourcesSQL = `
	SELECT l.seq, 'l', l.kind, coalesce(l.entry_id, 0), coalesce(e.slug, ''), l.payload_digest, l.key_id,
	       l.envelope, l.created_at, coalesce(o.round_id, ''), coalesce(c.number, 0), r.ran_at, l.log_index,
	       '', NULL, NULL, NULL, NULL
	FROM ` + ledgerFrom + `
	WHERE l.seq > ? AND l.seq <= ?
	UNION ALL
	SELECT t.seq, 't', '', t.entry_id, t.entry_slug, '', '',
	       NULL, NULL, '', 0, NULL, t.log_index,
	       t.reason, t.deleted_at, x.seq, x.kind, x.payload_digest
	FROM ledger_tombstones t LEFT JOIN ledger_removed x ON x.tombstone = t.seq
	WHERE t.seq > ? AND t.seq <= ?
	UNION ALL
	SELECT x.seq, 'x', x.kind, 0, '', x.payload_digest, '',
	       NULL, NULL, '', 0, NULL, NULL,
	       '', NULL, NULL, NULL, NULL
	FROM ledger_removed x
	WHERE x.seq > ? AND x.seq <= ?
	ORDER BY 1, 16`

// logSourceRow is one row of logSourcesSQL.
type logSourceRow struct {
	src       string
	rec       LedgerRecord
	reason    string
	deletedAt time.Time
	rseq      *int64
	rkind     *string
	rdigest   *string
}

func (s *sqlStore) LogSources(ctx context.Context, afterSeq int64, limit int) ([]LogSource, error) {
	if afterSeq < 0 {
		return nil, fmt.Errorf("couldn't read the log's sources: negative sequence number %d", afterSeq)
	}
	if limit <= 0 || limit > maxLogSourcesLimit {
		limit = maxLogSourcesLimit
	}
	upTo := afterSeq + int64(limit)
	rows, err := queryAll(ctx, s.read, func(row rowScanner) (logSourceRow, error) {
		var (
			r    logSourceRow
			kind string
		)
		err := row.Scan(&r.rec.Seq, &r.src, &kind, &r.rec.EntryID, &r.rec.EntrySlug, &r.rec.PayloadDigest,
			&r.rec.KeyID, &r.rec.Envelope, timeCol(&r.rec.CreatedAt), &r.rec.RoundID, &r.rec.ChangeNumber,
			timeCol(&r.rec.RanAt), &r.rec.LogIndex, &r.reason, timeCol(&r.deletedAt), &r.rseq, &r.rkind, &r.rdigest)
		r.rec.Kind = RecordKind(kind)
		return r, err
	}, logSourcesSQL, afterSeq, upTo, afterSeq, upTo, afterSeq, upTo)
	if err != nil {
		return nil, fmt.Errorf("couldn't read the log's sources: %w", err)
	}
	var out []LogSource
	next := afterSeq + 1
	for _, r := range rows {
		seq := r.rec.Seq
		if len(out) > 0 && out[len(out)-1].Seq == seq && out[len(out)-1].Tombstone != nil && r.src == "t" {
			if r.rseq != nil && r.rkind != nil && r.rdigest != nil {
				t := out[len(out)-1].Tombstone
				t.Removed = append(t.Removed, RemovedRecord{Seq: *r.rseq, Kind: RecordKind(*r.rkind), PayloadDigest: *r.rdigest})
			}
			continue
		}
		if seq != next {
			// A number not assigned yet (or a schema broken: a number used twice, which
			// the guards refuse): the sources end before it.
			break
		}
		next++
		switch r.src {
		case "l":
			rec := r.rec
			out = append(out, LogSource{Seq: seq, Record: &rec})
		case "t":
			t := &Tombstone{Seq: seq, EntryID: r.rec.EntryID, EntrySlug: r.rec.EntrySlug, Reason: r.reason,
				DeletedAt: r.deletedAt, LogIndex: r.rec.LogIndex}
			if r.rseq != nil && r.rkind != nil && r.rdigest != nil {
				t.Removed = append(t.Removed, RemovedRecord{Seq: *r.rseq, Kind: RecordKind(*r.rkind), PayloadDigest: *r.rdigest})
			}
			out = append(out, LogSource{Seq: seq, Tombstone: t})
		case "x":
			out = append(out, LogSource{Seq: seq, Removed: &RemovedRecord{Seq: seq, Kind: r.rec.Kind, PayloadDigest: r.rec.PayloadDigest}})
		}
	}
	return out, nil
}

// SetLogged marks the records and tombstones numbered through throughSeq that are not
// marked yet: log_index = seq - 1 (the schema allows that value only, once). Idempotent.
func (s *sqlStore) SetLogged(ctx context.Context, throughSeq int64) error {
	if throughSeq < 0 {
		return fmt.Errorf("couldn't mark the logged records: negative sequence number %d", throughSeq)
	}
	if _, err := s.write.Exec(ctx, `
		UPDATE ledger SET log_index = seq - 1
		WHERE log_index IS NULL AND seq IS NOT NULL AND seq <= ?`, throughSeq); err != nil {
		return fmt.Errorf("couldn't mark the logged records: %w", err)
	}
	if _, err := s.write.Exec(ctx, `
		UPDATE ledger_tombstones SET log_index = seq - 1
		WHERE log_index IS NULL AND seq <= ?`, throughSeq); err != nil {
		return fmt.Errorf("couldn't mark the logged tombstones: %w", err)
	}
	return nil
}

// SaveCheckpoint stores a published checkpoint; one whose note is stored already is a
// no-op.
func (s *sqlStore) SaveCheckpoint(ctx context.Context, c LogCheckpoint) error {
	switch {
	case c.Size < 0:
		return fmt.Errorf("couldn't save the checkpoint: negative size %d", c.Size)
	case len(c.RootHash) != sha256.Size:
		return fmt.Errorf("couldn't save the checkpoint: root hash of %d bytes, want %d", len(c.RootHash), sha256.Size)
	case len(c.Note) == 0 || len(c.Note) > maxCheckpointNote:
		return fmt.Errorf("couldn't save the checkpoint: note of %d bytes, want 1 to %d", len(c.Note), maxCheckpointNote)
	case c.SeenAt.IsZero():
		return errors.New("couldn't save the checkpoint: no time seen")
	}
	sum := sha256.Sum256(c.Note)
	if _, err := s.write.Exec(ctx, `
		INSERT INTO log_checkpoints (size, root_hash, note, note_sha256, seen_at, cosigned)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (note_sha256) DO NOTHING`,
		c.Size, c.RootHash, c.Note, sum[:], s.d.time(c.SeenAt), c.Cosigned); err != nil {
		return fmt.Errorf("couldn't save the checkpoint of size %d: %w", c.Size, err)
	}
	return nil
}

const checkpointColumns = `size, root_hash, note, seen_at, cosigned`

func scanCheckpoint(row rowScanner) (*LogCheckpoint, error) {
	var c LogCheckpoint
	if err := row.Scan(&c.Size, &c.RootHash, &c.Note, timeCol(&c.SeenAt), &c.Cosigned); err != nil {
		return nil, err
	}
	return &c, nil
}

// oneCheckpoint runs a query of at most one checkpoint: nil when none.
func (s *sqlStore) oneCheckpoint(ctx context.Context, query string, args ...any) (*LogCheckpoint, error) {
	cs, err := queryAll(ctx, s.read, scanCheckpoint, query, args...)
	if err != nil || len(cs) == 0 {
		return nil, err
	}
	return cs[0], nil
}

// CheckpointsAround returns the earliest witnessed checkpoint that holds the leaf at
// index (the smallest size above index among the cosigned notes; when none is
// cosigned, the smallest size above index; of several notes of that size, the first
// seen) and the latest one before index that does not hold it (the largest size at most
// index, above 0; a cosigned one, then the last seen). Either is nil when there is none.
// The earliest witnessed one, not merely the earliest: a bundle proven against a
// checkpoint that went out while the witnesses were down would fail an auditor's
// required cosignatures for good.
func (s *sqlStore) CheckpointsAround(ctx context.Context, index int64) (holding, before *LogCheckpoint, err error) {
	if index < 0 {
		return nil, nil, fmt.Errorf("couldn't read the checkpoints: negative index %d", index)
	}
	holding, err = s.oneCheckpoint(ctx, `
		SELECT `+checkpointColumns+` FROM log_checkpoints
		WHERE size > ?
		ORDER BY cosigned DESC, size, seen_at, id LIMIT 1`, index)
	if err != nil {
		return nil, nil, fmt.Errorf("couldn't read the checkpoint holding index %d: %w", index, err)
	}
	before, err = s.oneCheckpoint(ctx, `
		SELECT `+checkpointColumns+` FROM log_checkpoints
		WHERE size <= ? AND size > 0
		ORDER BY size DESC, cosigned DESC, seen_at DESC, id DESC LIMIT 1`, index)
	if err != nil {
		return nil, nil, fmt.Errorf("couldn't read the checkpoint before index %d: %w", index, err)
	}
	return holding, before, nil
}

// LatestCheckpoint returns the largest checkpoint stored (of that size, the last
// seen); nil when none is.
func (s *sqlStore) LatestCheckpoint(ctx context.Context) (*LogCheckpoint, error) {
	c, err := s.oneCheckpoint(ctx, `
		SELECT `+checkpointColumns+` FROM log_checkpoints
		ORDER BY size DESC, seen_at DESC, id DESC LIMIT 1`)
	if err != nil {
		return nil, fmt.Errorf("couldn't read the latest checkpoint: %w", err)
	}
	return c, nil
}

// keyVersionColumns are the columns KeyDocumentVersions reads, of key_document_versions
// k joined with its ledger record l.
const keyVersionColumns = `k.version, k.issued_at, k.document_digest, l.envelope, l.key_id, l.payload_digest,
	coalesce(l.seq, 0)`

func scanKeyVersion(row rowScanner) (KeyDocumentVersion, error) {
	var v KeyDocumentVersion
	err := row.Scan(&v.Version, timeCol(&v.IssuedAt), &v.DocumentDigest, &v.Envelope, &v.KeyID, &v.PayloadDigest, &v.Seq)
	return v, err
}

// KeyDocumentVersions returns every stored version, in version order.
func (s *sqlStore) KeyDocumentVersions(ctx context.Context) ([]KeyDocumentVersion, error) {
	vs, err := queryAll(ctx, s.read, scanKeyVersion, `
		SELECT `+keyVersionColumns+`
		FROM key_document_versions k JOIN ledger l ON l.id = k.ledger_id
		ORDER BY k.version`)
	if err != nil {
		return nil, fmt.Errorf("couldn't read the key document versions: %w", err)
	}
	return vs, nil
}

// checkKeyVersion checks a version to store and computes its payload digest.
func checkKeyVersion(v *KeyDocumentVersion) error {
	switch {
	case v.Version < 1:
		return fmt.Errorf("version %d is not positive", v.Version)
	case v.IssuedAt.IsZero():
		return errors.New("no issue time")
	case len(v.Envelope) == 0:
		return errors.New("a key document version is signed: no envelope")
	}
	if err := checkLine("document digest", v.DocumentDigest, maxDocumentDigest); err != nil {
		return err
	}
	d, err := signedDigest(v.Envelope, v.KeyID, v.PayloadDigest, maxKeysEnvelope)
	if err != nil {
		return err
	}
	v.PayloadDigest = d
	return nil
}

// sameKeyVersion says whether a stored version is the one being saved again.
func sameKeyVersion(stored, v KeyDocumentVersion) error {
	if string(stored.Envelope) != string(v.Envelope) {
		return fmt.Errorf("%w: version %d", ErrKeyVersionConflict, v.Version)
	}
	return nil
}
