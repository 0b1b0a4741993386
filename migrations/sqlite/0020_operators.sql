-- Operators and their audit log on SQLite (issue 18); mirrors
-- migrations/postgres/0020_operators.sql, which documents the tables. Conventions as
-- in 0001_init.sql: STRICT tables, times in Unix milliseconds.
CREATE TABLE operators (
    account_id INTEGER PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    granted_at INTEGER NOT NULL
) STRICT;

CREATE TABLE operator_actions (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    at         INTEGER NOT NULL,
    actor_id   INTEGER,
    actor      TEXT    NOT NULL CHECK (length(actor) BETWEEN 1 AND 64),
    action     TEXT    NOT NULL CHECK (length(action) BETWEEN 1 AND 64),
    entry_slug TEXT    NOT NULL DEFAULT '' CHECK (length(entry_slug) <= 200),
    entry_id   INTEGER,
    target     TEXT    NOT NULL DEFAULT '' CHECK (length(target) <= 2048),
    detail     TEXT    NOT NULL DEFAULT '' CHECK (length(detail) <= 4000)
) STRICT;
CREATE INDEX operator_actions_entry ON operator_actions (entry_slug, id) WHERE entry_slug <> '';

-- Append-only: the schema refuses every UPDATE and DELETE of the log.
CREATE TRIGGER operator_actions_no_update
BEFORE UPDATE ON operator_actions
BEGIN
    SELECT RAISE(ABORT, 'operator_actions is append-only: UPDATE refused');
END;

CREATE TRIGGER operator_actions_no_delete
BEFORE DELETE ON operator_actions
BEGIN
    SELECT RAISE(ABORT, 'operator_actions is append-only: DELETE refused');
END;
