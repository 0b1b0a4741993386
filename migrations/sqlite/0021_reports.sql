-- Reports and withdrawals on SQLite (issue 18); mirrors migrations/postgres/0021_reports.sql,
-- which documents the tables. Conventions as in 0001_init.sql: STRICT tables, times in
-- Unix milliseconds.

CREATE TABLE reports (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    entry_id    INTEGER NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    text        TEXT    NOT NULL CHECK (length(text) BETWEEN 1 AND 4000),
    contact     TEXT    CHECK (contact IS NULL OR length(contact) BETWEEN 3 AND 254),
    received_at INTEGER NOT NULL,
    due_at      INTEGER NOT NULL CHECK (due_at > received_at),
    status      TEXT    NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'withdrawn', 'declined')),
    decided_at  INTEGER,
    decided_by  INTEGER REFERENCES accounts (id) ON DELETE SET NULL,
    reason      TEXT    CHECK (reason IS NULL OR length(reason) BETWEEN 1 AND 2000),
    CHECK ((status = 'open') = (decided_at IS NULL)),
    CHECK ((status = 'open') = (reason IS NULL))
) STRICT;
CREATE INDEX reports_open_due ON reports (due_at, id) WHERE status = 'open';
CREATE INDEX reports_entry ON reports (entry_id, received_at);
CREATE INDEX reports_closed ON reports (decided_at) WHERE contact IS NOT NULL AND status <> 'open';

CREATE TABLE withdrawals (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    entry_id   INTEGER NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    number     INTEGER NOT NULL CHECK (number >= 1),
    action     TEXT    NOT NULL CHECK (action IN ('withdrawn', 'restored')),
    reason     TEXT    NOT NULL CHECK (length(reason) BETWEEN 1 AND 2000),
    at         INTEGER NOT NULL,
    supply_seq INTEGER NOT NULL CHECK (supply_seq >= 1),
    ledger_id  INTEGER NOT NULL UNIQUE REFERENCES ledger (id) ON DELETE CASCADE,
    UNIQUE (entry_id, number)
) STRICT;

ALTER TABLE entries ADD COLUMN verified_withdrawn INTEGER NOT NULL DEFAULT 0 CHECK (verified_withdrawn IN (0, 1));

-- entries.verified_withdrawn is owned by this trigger (SQLite's single writer serializes it).
CREATE TRIGGER withdrawals_withdrawn
AFTER INSERT ON withdrawals
BEGIN
    UPDATE entries SET verified_withdrawn = (NEW.action = 'withdrawn') WHERE id = NEW.entry_id;
END;
