-- Accounts of the people who follow entries (issue 17): the site's first write path.
-- This file holds the account itself; the tables of what an account has (sessions,
-- sign-in codes, follows, e-mail settings, the outbox, webhooks) follow in the next
-- migrations, each referencing accounts (id) ON DELETE CASCADE, so that deleting an
-- account is one DELETE that takes everything it had with it.
--
-- An account is known by a verified e-mail address, a GitHub user id, or both. The
-- address is stored as the person typed it and confirmed it; email_key is its lower-cased
-- form, the one address comparisons use. github_id is GitHub's numeric user id (a login
-- can be renamed and reused, the id never). Nothing else about the person is kept.
CREATE TABLE accounts (
    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email        text        CHECK (email IS NULL OR length(email) BETWEEN 3 AND 254),
    email_key    text        UNIQUE CHECK ((email IS NULL) = (email_key IS NULL)),
    github_id    bigint      UNIQUE CHECK (github_id IS NULL OR github_id > 0),
    github_login text        CHECK (github_login IS NULL OR length(github_login) BETWEEN 1 AND 39),
    created_at   timestamptz NOT NULL,
    CHECK (email IS NOT NULL OR github_id IS NOT NULL)
);

-- Sessions, sign-in codes and sign-in throttles (issue 17; store/sql_accounts.go, the
-- accounts package). Mirrored by migrations/sqlite/0011_accounts.sql.
--
-- No secret is stored in clear. A session is known by the SHA-256 of its token (the
-- token itself lives only in the browser's cookie); a sign-in code by the HMAC-SHA256 of
-- the code keyed by the address's email_key, filed under the SHA-256 of the address
-- (address_hash: an address that asks for a code and never signs in is not kept in
-- clear); a throttle by the SHA-256 of what it counts (a client key or an address). Every
-- row carries its own end (expires_at), after which it is useless and pruned.

-- A signed-in browser. expires_at slides forward (renewed_at) on use, at most once an
-- hour; a session is deleted at sign-out, with every other session of its account at
-- "sign out everywhere", and with its account.
CREATE TABLE sessions (
    id_hash    bytea       PRIMARY KEY CHECK (length(id_hash) = 32),
    account_id bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL,
    renewed_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    CHECK (renewed_at >= created_at AND expires_at > renewed_at)
);
CREATE INDEX sessions_account ON sessions (account_id);
CREATE INDEX sessions_expires ON sessions (expires_at);

-- A code sent by e-mail: valid until expires_at, used once (the row is deleted, with
-- every other code of the address, when it signs in), dead after 5 tries: each check
-- against the address spends a try of each of its live codes before comparing, so no
-- code is ever compared more than 5 times.
CREATE TABLE signin_codes (
    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    address_hash bytea       NOT NULL CHECK (length(address_hash) = 32),
    code_hash    bytea       NOT NULL CHECK (length(code_hash) = 32),
    tries        integer     NOT NULL DEFAULT 0 CHECK (tries BETWEEN 0 AND 5),
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL CHECK (expires_at > created_at)
);
CREATE INDEX signin_codes_address ON signin_codes (address_hash);
CREATE INDEX signin_codes_expires ON signin_codes (expires_at);

-- A sliding-window rate limit: the times (big-endian int64 Unix milliseconds, oldest
-- first, at most 64) of the requests counted in the last window, for one client or
-- address and one scope. rev is bumped by every write: a writer replaces the row only
-- if rev is still what it read (compare-and-swap), so concurrent requests never count
-- once for two.
CREATE TABLE signin_throttles (
    scope      text        NOT NULL CHECK (scope IN ('client', 'address', 'verify')),
    key_hash   bytea       NOT NULL CHECK (length(key_hash) = 32),
    events     bytea       NOT NULL CHECK (length(events) % 8 = 0 AND length(events) <= 512),
    rev        bigint      NOT NULL CHECK (rev > 0),
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (scope, key_hash)
);
CREATE INDEX signin_throttles_expires ON signin_throttles (expires_at);
