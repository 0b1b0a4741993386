-- Accounts of the people who follow entries (issue 17); mirrors
-- migrations/postgres/0011_accounts.sql, which documents the table.
CREATE TABLE accounts (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    email        TEXT    CHECK (email IS NULL OR length(email) BETWEEN 3 AND 254),
    email_key    TEXT    UNIQUE CHECK ((email IS NULL) = (email_key IS NULL)),
    github_id    INTEGER UNIQUE CHECK (github_id IS NULL OR github_id > 0),
    github_login TEXT    CHECK (github_login IS NULL OR length(github_login) BETWEEN 1 AND 39),
    created_at   INTEGER NOT NULL,
    CHECK (email IS NOT NULL OR github_id IS NOT NULL)
) STRICT;

-- Sessions, sign-in codes and sign-in throttles (issue 17); mirrors
-- migrations/postgres/0011_accounts.sql, which documents them.
CREATE TABLE sessions (
    id_hash    BLOB    NOT NULL PRIMARY KEY CHECK (length(id_hash) = 32),
    account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    renewed_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    CHECK (renewed_at >= created_at AND expires_at > renewed_at)
) STRICT;
CREATE INDEX sessions_account ON sessions (account_id);
CREATE INDEX sessions_expires ON sessions (expires_at);

CREATE TABLE signin_codes (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    address_hash BLOB    NOT NULL CHECK (length(address_hash) = 32),
    code_hash    BLOB    NOT NULL CHECK (length(code_hash) = 32),
    tries        INTEGER NOT NULL DEFAULT 0 CHECK (tries BETWEEN 0 AND 5),
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL CHECK (expires_at > created_at)
) STRICT;
CREATE INDEX signin_codes_address ON signin_codes (address_hash);
CREATE INDEX signin_codes_expires ON signin_codes (expires_at);

CREATE TABLE signin_throttles (
    scope      TEXT    NOT NULL CHECK (scope IN ('client', 'address', 'verify')),
    key_hash   BLOB    NOT NULL CHECK (length(key_hash) = 32),
    events     BLOB    NOT NULL CHECK (length(events) % 8 = 0 AND length(events) <= 512),
    rev        INTEGER NOT NULL CHECK (rev > 0),
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (scope, key_hash)
) STRICT;
CREATE INDEX signin_throttles_expires ON signin_throttles (expires_at);
