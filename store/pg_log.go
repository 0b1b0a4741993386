package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Advisory locks of the log (pgLockClass's key space; see pg.go). The numbers name
// issue 15, apart from pg.go's small ones.
const (
	pgLockLogAppender int32 = 15_001 // session lock: the one process that appends to the log
	pgLockKeyVersions int32 = 15_002 // transaction lock: SaveKeyDocumentVersion's check-then-insert
)

// SaveKeyDocumentVersion stores the version's ledger record (kind keys, no entry) pending
// and its row in key_document_versions in one transaction, then numbers the record, as
// SaveSupply does. A transaction advisory lock serializes saves, so that a version saved
// twice at once is compared, not refused on its primary key.
func (s *pgStore) SaveKeyDocumentVersion(ctx context.Context, v KeyDocumentVersion) (int64, error) {
	if err := checkKeyVersion(&v); err != nil {
		return 0, fmt.Errorf("couldn't save key document version %d: %w", v.Version, err)
	}
	now := s.now()
	var record int64
	var seq *int64
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, pgLockClass, pgLockKeyVersions); err != nil {
			return err
		}
		var stored []byte
		err := tx.QueryRow(ctx, `
			SELECT l.envelope, l.seq FROM key_document_versions k JOIN ledger l ON l.id = k.ledger_id
			WHERE k.version = $1`, v.Version).Scan(&stored, &seq)
		switch {
		case err == nil:
			return sameKeyVersion(KeyDocumentVersion{Envelope: stored}, v)
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		b := &pgx.Batch{}
		b.Queue(pgInsertRecord, string(RecordKeys), nil, v.PayloadDigest, v.KeyID, v.Envelope, pgTime(now)).
			QueryRow(func(row pgx.Row) error { return row.Scan(&record) })
		b.Queue(`
			INSERT INTO key_document_versions (version, ledger_id, issued_at, document_digest)
			VALUES ($1, `+pgRecordID+`, $2, $3)`, v.Version, pgTime(v.IssuedAt), v.DocumentDigest)
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return 0, fmt.Errorf("couldn't save key document version %d: %w", v.Version, err)
	}
	if record == 0 {
		// Stored before: its number as read.
		if seq == nil {
			return 0, nil
		}
		return *seq, nil
	}
	s.numberCommitted(ctx, record)
	var n *int64
	if err := s.pool.QueryRow(ctx, `SELECT seq FROM ledger WHERE id = $1`, record).Scan(&n); err != nil {
		return 0, fmt.Errorf("couldn't read the number of key document version %d: %w", v.Version, err)
	}
	if n == nil {
		return 0, nil // pending: the next sequencing step numbers it (numberCommitted warned)
	}
	return *n, nil
}

// TryLogLock takes the log appender's session advisory lock on a connection of its own,
// not the pool's (a pooled connection would return to the pool, lock and all), kept
// until release. If the process dies or the connection drops, the server ends the
// session and the lock is free for another process.
func (s *pgStore) TryLogLock(ctx context.Context) (func(), bool, error) {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig)
	if err != nil {
		return nil, false, fmt.Errorf("couldn't connect for the log lock: %w", err)
	}
	var ok bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1, $2)`, pgLockClass, pgLockLogAppender).Scan(&ok); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, false, fmt.Errorf("couldn't take the log lock: %w", err)
	}
	if !ok {
		conn.Close(context.WithoutCancel(ctx))
		return func() {}, false, nil
	}
	s.logLock.Lock()
	s.logLockConn = conn
	s.logLock.Unlock()
	var once sync.Once
	release := func() {
		once.Do(func() {
			s.logLock.Lock()
			defer s.logLock.Unlock()
			s.logLockConn = nil
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			// Closing the session releases the lock; the unlock first says so plainly.
			_, _ = conn.Exec(ctx, `SELECT pg_advisory_unlock($1, $2)`, pgLockClass, pgLockLogAppender)
			conn.Close(ctx)
		})
	}
	return release, true, nil
}

// LogLockHeld asks, on the lock's own connection, whether its session still holds the
// log appender's lock: an error when the connection is gone (the server ended the
// session, and with it the lock) or the lock is not held.
func (s *pgStore) LogLockHeld(ctx context.Context) error {
	s.logLock.Lock()
	defer s.logLock.Unlock()
	if s.logLockConn == nil {
		return errors.New("the log lock is not held")
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var held bool
	err := s.logLockConn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory'
		AND pid = pg_backend_pid() AND classid = $1::oid AND objid = $2::oid AND objsubid = 2 AND granted)`,
		int64(uint32(pgLockClass)), int64(uint32(pgLockLogAppender))).Scan(&held)
	switch {
	case err != nil:
		return fmt.Errorf("the log lock's connection is lost: %w", err)
	case !held:
		return errors.New("the log lock is no longer held")
	}
	return nil
}
