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
