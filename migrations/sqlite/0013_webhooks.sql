-- Webhooks (issue 17); mirrors migrations/postgres/0013_webhooks.sql, which documents
-- the tables.
CREATE TABLE webhooks (
    id                   INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id           INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    slot                 INTEGER NOT NULL CHECK (slot BETWEEN 1 AND 5),
    url                  TEXT    NOT NULL CHECK (length(CAST(url AS BLOB)) BETWEEN 8 AND 2048),
    created_at           INTEGER NOT NULL,
    consecutive_failures INTEGER NOT NULL DEFAULT 0 CHECK (consecutive_failures >= 0),
    disabled_at          INTEGER,
    disabled_reason      TEXT    CHECK (disabled_reason IS NULL OR length(disabled_reason) BETWEEN 1 AND 500),
    CONSTRAINT webhooks_account_slot UNIQUE (account_id, slot),
    CONSTRAINT webhooks_account_url UNIQUE (account_id, url),
    CHECK ((disabled_at IS NULL) = (disabled_reason IS NULL))
) STRICT;

CREATE TABLE webhook_deliveries (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    webhook_id      INTEGER NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    message_id      TEXT    NOT NULL UNIQUE CHECK (length(message_id) BETWEEN 1 AND 100),
    entry_id        INTEGER NOT NULL CHECK (entry_id > 0),
    change_number   INTEGER NOT NULL CHECK (change_number >= 1),
    payload         BLOB    NOT NULL CHECK (length(payload) BETWEEN 2 AND 16384),
    created_at      INTEGER NOT NULL,
    state           TEXT    NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at INTEGER NOT NULL,
    lease_until     INTEGER,
    last_attempt_at INTEGER,
    last_status     INTEGER NOT NULL DEFAULT 0 CHECK (last_status BETWEEN 0 AND 999),
    last_error      TEXT    NOT NULL DEFAULT '' CHECK (length(last_error) <= 500),
    finished_at     INTEGER,
    CHECK ((state = 'pending') = (finished_at IS NULL))
) STRICT;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (webhook_id, id);

CREATE TABLE webhook_planner (
    id              INTEGER PRIMARY KEY CHECK (id = 1),
    planned_through INTEGER NOT NULL
) STRICT;
