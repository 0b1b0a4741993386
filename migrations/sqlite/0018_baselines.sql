-- Approved baselines on SQLite (issue 18); mirrors migrations/postgres/0018_baselines.sql,
-- which documents the table. Conventions as in 0001_init.sql: STRICT tables, times in
-- Unix milliseconds. (Migration 0017 is another part's.)
CREATE TABLE baselines (
    id                   INTEGER PRIMARY KEY AUTOINCREMENT,
    entry_id             INTEGER NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    number               INTEGER NOT NULL CHECK (number >= 1),
    toolset              TEXT    NOT NULL CHECK (length(toolset) = 71 AND toolset GLOB 'sha256:*' AND substr(toolset, 8) NOT GLOB '*[^0-9a-f]*'),
    schema_fp            TEXT    NOT NULL CHECK (length(schema_fp) = 71 AND schema_fp GLOB 'sha256:*' AND substr(schema_fp, 8) NOT GLOB '*[^0-9a-f]*'),
    surface              TEXT    NOT NULL CHECK (length(surface) = 71 AND surface GLOB 'sha256:*' AND substr(surface, 8) NOT GLOB '*[^0-9a-f]*'),
    tool_count           INTEGER NOT NULL CHECK (tool_count BETWEEN 1 AND 10000),
    basis_round_id       TEXT    NOT NULL CHECK (length(basis_round_id) BETWEEN 1 AND 64),
    basis_payload_digest TEXT    NOT NULL CHECK (length(basis_payload_digest) = 64 AND basis_payload_digest NOT GLOB '*[^0-9a-f]*'),
    approved_at          INTEGER NOT NULL,
    approved_by          INTEGER REFERENCES accounts (id) ON DELETE SET NULL,
    ledger_id            INTEGER NOT NULL UNIQUE REFERENCES ledger (id) ON DELETE CASCADE,
    UNIQUE (entry_id, number)
) STRICT;

CREATE TRIGGER baselines_immutable
BEFORE UPDATE ON baselines
WHEN NOT (NEW.approved_by IS NULL AND OLD.approved_by IS NOT NULL
    AND NEW.id = OLD.id AND NEW.entry_id = OLD.entry_id AND NEW.number = OLD.number
    AND NEW.toolset = OLD.toolset AND NEW.schema_fp = OLD.schema_fp AND NEW.surface = OLD.surface
    AND NEW.tool_count = OLD.tool_count AND NEW.basis_round_id = OLD.basis_round_id
    AND NEW.basis_payload_digest = OLD.basis_payload_digest AND NEW.approved_at = OLD.approved_at
    AND NEW.ledger_id = OLD.ledger_id)
BEGIN
    SELECT RAISE(ABORT, 'a baseline is never changed');
END;
