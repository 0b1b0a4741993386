-- Claims on SQLite (issue 18); mirrors migrations/postgres/0016_claims.sql, which
-- documents the tables. Conventions as in 0001_init.sql: STRICT tables, times in Unix
-- milliseconds. (Migration 0015 is another issue's.)

CREATE TABLE claim_tokens (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    token_hash BLOB    NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    entry_id   INTEGER NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    method     TEXT    NOT NULL CHECK (method IN ('well-known', 'dns', 'npm', 'pypi', 'github-permission', 'repo-file')),
    target     TEXT    NOT NULL CHECK (length(target) BETWEEN 1 AND 2048),
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL CHECK (expires_at > created_at),
    used_at    INTEGER
) STRICT;
CREATE INDEX claim_tokens_account ON claim_tokens (account_id, expires_at);
CREATE INDEX claim_tokens_entry ON claim_tokens (entry_id);
CREATE INDEX claim_tokens_expires ON claim_tokens (expires_at);

CREATE TABLE claims (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id      INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    entry_id        INTEGER NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    method          TEXT    NOT NULL CHECK (method IN ('well-known', 'dns', 'npm', 'pypi', 'github-permission', 'repo-file')),
    target          TEXT    NOT NULL CHECK (length(target) BETWEEN 1 AND 2048),
    token_hash      BLOB    CHECK (token_hash IS NULL OR length(token_hash) = 32),
    proof           TEXT    NOT NULL CHECK (length(proof) <= 500),
    verified_at     INTEGER NOT NULL,
    last_checked_at INTEGER NOT NULL CHECK (last_checked_at >= verified_at),
    lapsed_at       INTEGER,
    lapse_reason    TEXT    CHECK (lapse_reason IS NULL OR length(lapse_reason) <= 500),
    CHECK ((lapsed_at IS NULL) = (lapse_reason IS NULL)),
    UNIQUE (account_id, entry_id, method, target)
) STRICT;
CREATE INDEX claims_entry ON claims (entry_id) WHERE lapsed_at IS NULL;
CREATE INDEX claims_checked ON claims (last_checked_at, id) WHERE lapsed_at IS NULL;

-- entries.claimed is owned by these triggers (SQLite's single writer serializes them).
CREATE TRIGGER claims_claimed_insert
AFTER INSERT ON claims
BEGIN
    UPDATE entries SET claimed = EXISTS (SELECT 1 FROM claims WHERE entry_id = NEW.entry_id AND lapsed_at IS NULL)
    WHERE id = NEW.entry_id;
END;

CREATE TRIGGER claims_claimed_update
AFTER UPDATE OF lapsed_at ON claims
BEGIN
    UPDATE entries SET claimed = EXISTS (SELECT 1 FROM claims WHERE entry_id = NEW.entry_id AND lapsed_at IS NULL)
    WHERE id = NEW.entry_id;
END;

CREATE TRIGGER claims_claimed_delete
AFTER DELETE ON claims
BEGIN
    UPDATE entries SET claimed = EXISTS (SELECT 1 FROM claims WHERE entry_id = OLD.entry_id AND lapsed_at IS NULL)
    WHERE id = OLD.entry_id;
END;
