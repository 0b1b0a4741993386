package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// SaveKeyDocumentVersion runs on the writer: the version's ledger record (kind keys, no
// entry) and its row in key_document_versions in one IMMEDIATE transaction, numbered
// before it commits, as SaveSupply does. A version stored already is compared, not
// stored again.
func (s *sqliteStore) SaveKeyDocumentVersion(ctx context.Context, v KeyDocumentVersion) (int64, error) {
	if err := checkKeyVersion(&v); err != nil {
		return 0, fmt.Errorf("couldn't save key document version %d: %w", v.Version, err)
	}
	now := s.now()
	var seq *int64
	err := s.inTx(ctx, func(tx *sqliteTx) error {
		var stored []byte
		err := tx.QueryRowContext(ctx, `
			SELECT l.envelope, l.seq FROM key_document_versions k JOIN ledger l ON l.id = k.ledger_id
			WHERE k.version = ?`, v.Version).Scan(&stored, &seq)
		switch {
		case err == nil:
			return sameKeyVersion(KeyDocumentVersion{Envelope: stored}, v)
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		var id int64
		if err := tx.QueryRowContext(ctx, insertRecordSQL,
			string(RecordKeys), nil, v.PayloadDigest, v.KeyID, v.Envelope, millis(now)).Scan(&id); err != nil {
			return fmt.Errorf("couldn't store the keys record: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `
			INSERT INTO key_document_versions (version, ledger_id, issued_at, document_digest)
			VALUES (?, ?, ?, ?)`, v.Version, id, millis(v.IssuedAt), v.DocumentDigest); err != nil {
			return fmt.Errorf("couldn't store the version: %w", err)
		}
		if err := s.sqliteSequence(ctx, tx, id); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT seq FROM ledger WHERE id = ?`, id).Scan(&seq)
	})
	if err != nil {
		return 0, fmt.Errorf("couldn't save key document version %d: %w", v.Version, err)
	}
	if seq == nil {
		return 0, nil
	}
	return *seq, nil
}

// TryLogLock always succeeds on SQLite: the log's appender is one process per data
// directory, which the log's own lock file (an exclusive flock) ensures; a SQLite store
// is not shared by machines.
func (s *sqliteStore) TryLogLock(context.Context) (func(), bool, error) {
	return func() {}, true, nil
}

// LogLockHeld is always nil on SQLite (TryLogLock).
func (s *sqliteStore) LogLockHeld(context.Context) error { return nil }
