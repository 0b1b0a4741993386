-- Follows and change e-mails on SQLite (issue 17); mirrors
-- migrations/postgres/0012_follows.sql, which documents the tables. Conventions as in
-- 0001_init.sql: STRICT tables, times in Unix milliseconds.

CREATE TABLE notify_settings (
    account_id      INTEGER PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    mode            TEXT    NOT NULL DEFAULT 'hourly' CHECK (mode IN ('hourly', 'daily', 'off')),
    mode_changed_at INTEGER NOT NULL,
    last_email_at   INTEGER,
    covered_through INTEGER,
    follows         INTEGER NOT NULL DEFAULT 0,
    CONSTRAINT notify_settings_follows_limit CHECK (follows BETWEEN 0 AND 200)
) STRICT;

CREATE INDEX notify_settings_due ON notify_settings (mode, last_email_at);

INSERT INTO notify_settings (account_id, mode_changed_at) SELECT id, created_at FROM accounts;

CREATE TRIGGER accounts_notify_settings
AFTER INSERT ON accounts
BEGIN
    INSERT INTO notify_settings (account_id, mode_changed_at) VALUES (NEW.id, NEW.created_at);
END;

CREATE TABLE follows (
    account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    entry_id   INTEGER NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (account_id, entry_id)
) STRICT, WITHOUT ROWID;

CREATE INDEX follows_entry ON follows (entry_id, account_id, created_at);

CREATE TRIGGER follows_count_insert
AFTER INSERT ON follows
BEGIN
    UPDATE notify_settings SET follows = follows + 1 WHERE account_id = NEW.account_id;
END;

CREATE TRIGGER follows_count_delete
AFTER DELETE ON follows
BEGIN
    UPDATE notify_settings SET follows = follows - 1 WHERE account_id = OLD.account_id;
END;

CREATE TABLE followed_gone (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    slug       TEXT    NOT NULL CHECK (length(slug) BETWEEN 1 AND 100),
    name       TEXT    NOT NULL CHECK (length(name) <= 200),
    deleted_at INTEGER NOT NULL,
    told_at    INTEGER
) STRICT;

CREATE INDEX followed_gone_account ON followed_gone (account_id, id);
CREATE INDEX followed_gone_untold ON followed_gone (account_id) WHERE told_at IS NULL;

-- The time is the database's clock, in Unix milliseconds (julianday keeps fractions).
CREATE TRIGGER entries_followed_gone
BEFORE DELETE ON entries
BEGIN
    INSERT INTO followed_gone (account_id, slug, name, deleted_at)
    SELECT account_id, OLD.slug, substr(OLD.name, 1, 200),
           CAST(round((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)
    FROM follows WHERE entry_id = OLD.id;
END;

CREATE TABLE outbox (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id      INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at      INTEGER NOT NULL,
    window_from     INTEGER,
    window_through  INTEGER NOT NULL,
    message_id      TEXT    NOT NULL UNIQUE CHECK (length(message_id) BETWEEN 3 AND 250),
    state           TEXT    NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sending', 'sent', 'failed', 'skipped')),
    attempts        INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at INTEGER NOT NULL,
    lease_until     INTEGER,
    sent_at         INTEGER,
    last_error      TEXT    NOT NULL DEFAULT '' CHECK (length(last_error) <= 500),
    CHECK ((state = 'sending') = (lease_until IS NOT NULL)),
    CHECK ((state = 'sent') = (sent_at IS NOT NULL))
) STRICT;

CREATE INDEX outbox_due ON outbox (next_attempt_at) WHERE state IN ('pending', 'sending');
CREATE INDEX outbox_account ON outbox (account_id, id);
