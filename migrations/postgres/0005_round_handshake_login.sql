-- What seed 003's handshake-path and login tables need of every round (history/stats),
-- which no column held before: the handshake method that answered and the protocol
-- version Probity proposed on it, and what the round saw of a login challenge.
--
-- handshake_method is 'server/discover' or 'initialize' when the handshake completed,
-- '' otherwise; proposed_version is the version Probity proposed on the last handshake
-- path it tried ('' when none was tried). Rounds stored before this migration have ''
-- in both: the statistics list them as "path not recorded".
--
-- The three login columns are NULL for rounds stored before this migration (not
-- recorded) and set together for every later round:
--   login_unauthorized  where the probe was first answered 401: 'handshake', 'tools_list',
--                       'tools_call' (only the call of the nonexistent tool), 'other'
--                       (another request), or '' (no 401);
--   login_challenge     'with_metadata' (a WWW-Authenticate challenge names an RFC 9728
--                       resource_metadata URL), 'without_metadata', 'unparseable', 'none'
--                       (a 401 without a challenge), or '' (no 401);
--   login_metadata      the auth_metadata check's reason key for a round with a 401
--                       ('metadata_consistent', 'scope_contradiction', …), '' otherwise.
--
-- Adding columns with a constant default rewrites no row; the CHECK constraints are
-- validated with one scan of observations. On 204,000 rounds (75 MB): `probity migrate`
-- 0.09 s, the statement alone in psql 0.15 s (medians of 3).
ALTER TABLE observations
    ADD COLUMN handshake_method text NOT NULL DEFAULT ''
        CHECK (handshake_method IN ('', 'server/discover', 'initialize')),
    ADD COLUMN proposed_version text NOT NULL DEFAULT ''
        CHECK (length(proposed_version) <= 64),
    ADD COLUMN login_unauthorized text
        CHECK (login_unauthorized IN ('', 'handshake', 'tools_list', 'tools_call', 'other')),
    ADD COLUMN login_challenge text
        CHECK (login_challenge IN ('', 'with_metadata', 'without_metadata', 'unparseable', 'none')),
    ADD COLUMN login_metadata text
        CHECK (login_metadata ~ '^[a-z0-9_]{0,64}$'),
    ADD CONSTRAINT observations_login_recorded CHECK (
        (login_unauthorized IS NULL) = (login_challenge IS NULL)
        AND (login_unauthorized IS NULL) = (login_metadata IS NULL)
        AND ((login_unauthorized = '') = (login_challenge = ''))
        AND (login_unauthorized <> '' OR login_metadata = ''));
