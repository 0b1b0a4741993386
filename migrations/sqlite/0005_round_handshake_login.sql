-- What seed 003's handshake-path and login tables need of every round; mirrors
-- migrations/postgres/0005_round_handshake_login.sql, which documents the columns.
--
-- SQLite adds one column per statement, and a column added with a CHECK constraint has
-- the constraint tested against every existing row: a scan of observations per such
-- column. Every constraint therefore sits on the last column, so the migration scans
-- once. On 204,000 rounds in a 290 MB file, medians of 3: `probity migrate` 3.2 s instead
-- of 3.9 s with a constraint on each column; the sqlite3 shell 1.7 s instead of 8.1 s.
ALTER TABLE observations ADD COLUMN handshake_method TEXT NOT NULL DEFAULT '';
ALTER TABLE observations ADD COLUMN proposed_version TEXT NOT NULL DEFAULT '';
ALTER TABLE observations ADD COLUMN login_unauthorized TEXT;
ALTER TABLE observations ADD COLUMN login_challenge TEXT;
ALTER TABLE observations ADD COLUMN login_metadata TEXT
    CHECK (handshake_method IN ('', 'server/discover', 'initialize'))
    CHECK (length(proposed_version) <= 64)
    CHECK (login_unauthorized IN ('', 'handshake', 'tools_list', 'tools_call', 'other'))
    CHECK (login_challenge IN ('', 'with_metadata', 'without_metadata', 'unparseable', 'none'))
    CHECK (length(login_metadata) <= 64 AND login_metadata NOT GLOB '*[^a-z0-9_]*')
    CHECK ((login_unauthorized IS NULL) = (login_challenge IS NULL)
       AND (login_unauthorized IS NULL) = (login_metadata IS NULL)
       AND ((login_unauthorized = '') = (login_challenge = ''))
       AND (login_unauthorized <> '' OR login_metadata = ''));
