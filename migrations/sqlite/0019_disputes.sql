-- Disputes and outcomes on SQLite (issue 18); mirrors migrations/postgres/0019_disputes.sql,
-- which documents the tables. Conventions as in 0001_init.sql: STRICT tables, times in
-- Unix milliseconds. (0017 and 0018 are other parts' of issue 18.)

CREATE TABLE disputes (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    entry_id    INTEGER NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    number      INTEGER NOT NULL CHECK (number >= 1),
    round_id    INTEGER NOT NULL REFERENCES rounds (id) ON DELETE CASCADE,
    check_id    TEXT    NOT NULL CHECK (length(check_id) BETWEEN 1 AND 64 AND check_id GLOB '[a-z]*' AND check_id NOT GLOB '*[^a-z0-9_]*'),
    status      TEXT    NOT NULL CHECK (status IN ('VERIFIED', 'FAILED', 'OBSERVED_RISK', 'UNVERIFIED')),
    statement   TEXT    NOT NULL CHECK (length(statement) BETWEEN 1 AND 2000),
    evidence    TEXT    NOT NULL DEFAULT '' CHECK (length(evidence) <= 2048),
    opened_at   INTEGER NOT NULL,
    opened_by   INTEGER REFERENCES accounts (id) ON DELETE SET NULL,
    ledger_id   INTEGER NOT NULL UNIQUE REFERENCES ledger (id) ON DELETE CASCADE,
    closed      INTEGER NOT NULL DEFAULT 0 CHECK (closed IN (0, 1)),
    UNIQUE (entry_id, number)
) STRICT;
CREATE UNIQUE INDEX disputes_open ON disputes (entry_id, round_id, check_id) WHERE closed = 0;
CREATE INDEX disputes_queue ON disputes (opened_at, id) WHERE closed = 0;
CREATE INDEX disputes_account ON disputes (opened_by, opened_at);

CREATE TABLE outcomes (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    dispute_id    INTEGER NOT NULL UNIQUE REFERENCES disputes (id) ON DELETE CASCADE,
    decision      TEXT    NOT NULL CHECK (decision IN ('upheld', 'rejected', 'corrected')),
    suite_version TEXT    NOT NULL DEFAULT '' CHECK (length(suite_version) <= 64),
    reason        TEXT    NOT NULL CHECK (length(reason) BETWEEN 1 AND 2000),
    decided_at    INTEGER NOT NULL,
    decided_by    INTEGER REFERENCES accounts (id) ON DELETE SET NULL,
    ledger_id     INTEGER NOT NULL UNIQUE REFERENCES ledger (id) ON DELETE CASCADE,
    CHECK ((decision = 'corrected') = (suite_version <> ''))
) STRICT;
