-- What seed 003's handshake-path and login tables need of every round; mirrors
-- migrations/postgres/0005_round_handshake_login.sql, which documents the columns.
-- SQLite adds one column per statement and checks a new column's constraints against
-- the existing rows; the constraint tying the three login columns together sits on the
-- last of them.
ALTER TABLE observations ADD COLUMN handshake_method TEXT NOT NULL DEFAULT ''
    CHECK (handshake_method IN ('', 'server/discover', 'initialize'));
ALTER TABLE observations ADD COLUMN proposed_version TEXT NOT NULL DEFAULT ''
    CHECK (length(proposed_version) <= 64);
ALTER TABLE observations ADD COLUMN login_unauthorized TEXT
    CHECK (login_unauthorized IN ('', 'handshake', 'tools_list', 'tools_call', 'other'));
ALTER TABLE observations ADD COLUMN login_challenge TEXT
    CHECK (login_challenge IN ('', 'with_metadata', 'without_metadata', 'unparseable', 'none'));
ALTER TABLE observations ADD COLUMN login_metadata TEXT
    CHECK (length(login_metadata) <= 64 AND login_metadata NOT GLOB '*[^a-z0-9_]*')
    CHECK ((login_unauthorized IS NULL) = (login_challenge IS NULL)
       AND (login_unauthorized IS NULL) = (login_metadata IS NULL)
       AND ((login_unauthorized = '') = (login_challenge = ''))
       AND (login_unauthorized <> '' OR login_metadata = ''));
