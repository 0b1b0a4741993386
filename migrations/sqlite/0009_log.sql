-- The transparency log (issue 15); mirrors migrations/postgres/0009_log.sql, which
-- documents the columns and tables. SQLite has no SHA-256: the store computes
-- note_sha256.
ALTER TABLE ledger ADD COLUMN log_index INTEGER
    CHECK (log_index IS NULL OR (seq IS NOT NULL AND log_index = seq - 1));
ALTER TABLE ledger_tombstones ADD COLUMN log_index INTEGER
    CHECK (log_index IS NULL OR log_index = seq - 1);

CREATE INDEX ledger_unlogged ON ledger (seq) WHERE log_index IS NULL AND seq IS NOT NULL;

CREATE TRIGGER ledger_logged_once
BEFORE UPDATE OF log_index ON ledger
WHEN OLD.log_index IS NOT NULL OR NEW.log_index IS NULL
BEGIN
    SELECT RAISE(ABORT, 'a ledger record is logged once, at index seq - 1');
END;

-- Tombstones were refused every update; now every update but of log_index.
DROP TRIGGER ledger_tombstones_immutable;
CREATE TRIGGER ledger_tombstones_immutable
BEFORE UPDATE OF seq, entry_id, entry_slug, reason, removed, deleted_at ON ledger_tombstones
BEGIN
    SELECT RAISE(ABORT, 'ledger_tombstones is append-only');
END;

CREATE TRIGGER ledger_tombstones_logged_once
BEFORE UPDATE OF log_index ON ledger_tombstones
WHEN OLD.log_index IS NOT NULL OR NEW.log_index IS NULL
BEGIN
    SELECT RAISE(ABORT, 'a tombstone is logged once, at index seq - 1');
END;

CREATE TABLE log_checkpoints (
    id          INTEGER PRIMARY KEY,
    size        INTEGER NOT NULL CHECK (size >= 0),
    root_hash   BLOB    NOT NULL CHECK (length(root_hash) = 32),
    note        BLOB    NOT NULL CHECK (length(note) BETWEEN 1 AND 65536),
    note_sha256 BLOB    NOT NULL UNIQUE CHECK (length(note_sha256) = 32),
    seen_at     INTEGER NOT NULL,
    cosigned    INTEGER NOT NULL CHECK (cosigned IN (0, 1))
) STRICT;

CREATE INDEX log_checkpoints_size ON log_checkpoints (size, seen_at);

CREATE TRIGGER log_checkpoints_immutable
BEFORE UPDATE ON log_checkpoints
BEGIN
    SELECT RAISE(ABORT, 'log_checkpoints is append-only');
END;

CREATE TRIGGER log_checkpoints_kept
BEFORE DELETE ON log_checkpoints
BEGIN
    SELECT RAISE(ABORT, 'log_checkpoints is append-only');
END;

CREATE TABLE key_document_versions (
    version         INTEGER PRIMARY KEY CHECK (version >= 1),
    ledger_id       INTEGER NOT NULL UNIQUE REFERENCES ledger (id),
    issued_at       INTEGER NOT NULL,
    document_digest TEXT    NOT NULL CHECK (length(document_digest) BETWEEN 1 AND 200)
) STRICT;

CREATE TRIGGER key_document_versions_immutable
BEFORE UPDATE ON key_document_versions
BEGIN
    SELECT RAISE(ABORT, 'key_document_versions is append-only');
END;

CREATE TRIGGER key_document_versions_kept
BEFORE DELETE ON key_document_versions
BEGIN
    SELECT RAISE(ABORT, 'key_document_versions is append-only');
END;
