-- Probity's schema on SQLite.
--
-- Every time is an INTEGER of Unix milliseconds (UTC by definition); a nullable time
-- column is NULL where the Go value is the zero time ("none yet"). Days are TEXT
-- YYYY-MM-DD in UTC. Tables are STRICT, so a value of the wrong type is refused, and
-- foreign keys are enforced (every connection sets PRAGMA foreign_keys=ON).

-- surfaces: canonical tools documents, addressed by their surface fingerprint
-- ("sha256:" + hex of SHA-256 over doc). Shared by entries and rounds; never deleted.
CREATE TABLE surfaces (
    fingerprint TEXT    PRIMARY KEY CHECK (fingerprint GLOB 'sha256:*' AND length(fingerprint) = 71),
    doc         BLOB    NOT NULL,
    created_at  INTEGER NOT NULL
) STRICT;

-- entries: one directory entry each. (kind, locator) identifies it; slug names it in URLs
-- and never changes. AUTOINCREMENT: a deleted entry's id is never given to another, so a
-- queued job naming it cannot reach a stranger. last_round_at, last_surface and the uptime
-- day counts are kept up to date by SaveRound, in the round's transaction.
CREATE TABLE entries (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    slug                TEXT    NOT NULL UNIQUE CHECK (
                            length(slug) BETWEEN 1 AND 100
                            AND slug GLOB '[a-z0-9]*'
                            AND slug NOT GLOB '*[^a-z0-9-]*'),
    kind                TEXT    NOT NULL CHECK (kind IN ('remote', 'npm', 'pypi', 'github')),
    locator             TEXT    NOT NULL CHECK (locator <> ''),
    name                TEXT    NOT NULL,
    source              TEXT    NOT NULL,
    claimed             INTEGER NOT NULL CHECK (claimed IN (0, 1)),
    cadence_ms          INTEGER NOT NULL CHECK (cadence_ms >= 0),
    created_at          INTEGER NOT NULL,
    last_round_at       INTEGER,
    last_surface        TEXT    REFERENCES surfaces (fingerprint),
    uptime_online_days  INTEGER NOT NULL DEFAULT 0 CHECK (uptime_online_days >= 0),
    uptime_counted_days INTEGER NOT NULL DEFAULT 0 CHECK (uptime_counted_days >= uptime_online_days),
    UNIQUE (kind, locator)
) STRICT;

-- due: when each entry is next due a round, at most one time per reason. DueBefore reads
-- it by time.
CREATE TABLE due (
    entry_id INTEGER NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    reason   TEXT    NOT NULL CHECK (reason IN ('cadence', 'confirm', 'status', 'manual')),
    at       INTEGER NOT NULL,
    PRIMARY KEY (entry_id, reason)
) STRICT, WITHOUT ROWID;

CREATE INDEX due_at ON due (at);

-- attempts: how many probes of an entry were started for one due time, counted before
-- each probe so that attempts of a crashed worker count too.
CREATE TABLE attempts (
    entry_id        INTEGER NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    due_at          INTEGER NOT NULL,
    attempts        INTEGER NOT NULL CHECK (attempts >= 1),
    last_started_at INTEGER NOT NULL,
    PRIMARY KEY (entry_id, due_at)
) STRICT, WITHOUT ROWID;

-- observations: one stored round each, identified by (entry_id, due_at). signed is 1
-- exactly when the round's envelope is stored: SaveRound writes both in one transaction,
-- the envelopes_signed_only trigger refuses an envelope for an unsigned observation and
-- observations_signed_fixed refuses to change the flag. A signed round has a coverage, an
-- unsigned one has none; the four fingerprints are all present or all absent. Ids only
-- grow (AUTOINCREMENT), so "observation order" is the order rounds were stored.
CREATE TABLE observations (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    entry_id         INTEGER NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    due_at           INTEGER NOT NULL,
    reason           TEXT    NOT NULL CHECK (reason IN ('cadence', 'confirm', 'status', 'manual')),
    round_id         TEXT    NOT NULL,
    started_at       INTEGER NOT NULL,
    finished_at      INTEGER NOT NULL,
    coverage         TEXT    NOT NULL CHECK (coverage IN ('', 'full', 'auth_required')),
    signed           INTEGER NOT NULL CHECK (signed IN (0, 1)),
    unsigned_reason  TEXT    NOT NULL,
    reach            TEXT    NOT NULL,
    http_status      INTEGER NOT NULL CHECK (http_status BETWEEN 0 AND 999),
    stop             TEXT    NOT NULL,
    uptime           TEXT    NOT NULL CHECK (uptime IN ('answered', 'no_answer', 'inconclusive')),
    retry_after_ms   INTEGER NOT NULL CHECK (retry_after_ms >= 0),
    protocol_version TEXT    NOT NULL,
    server_name      TEXT    NOT NULL,
    server_version   TEXT    NOT NULL,
    tool_count       INTEGER NOT NULL CHECK (tool_count >= 0),
    pages            INTEGER NOT NULL CHECK (pages >= 0),
    fp_surface       TEXT    REFERENCES surfaces (fingerprint),
    fp_toolset       TEXT,
    fp_schema        TEXT,
    fp_instructions  TEXT,
    results          BLOB,
    timings          BLOB,
    UNIQUE (entry_id, due_at),
    CHECK ((signed = 1) = (coverage <> '')),
    CHECK (signed = 0 OR unsigned_reason = ''),
    CHECK ((fp_surface IS NULL) = (fp_toolset IS NULL)
       AND (fp_surface IS NULL) = (fp_schema IS NULL)
       AND (fp_surface IS NULL) = (fp_instructions IS NULL))
) STRICT;

-- Rounds (an entry's newest first) and the newest-surface lookup of SaveRound.
CREATE INDEX observations_entry_started ON observations (entry_id, started_at);

CREATE TRIGGER observations_signed_fixed
BEFORE UPDATE OF signed ON observations
BEGIN
    SELECT RAISE(ABORT, 'an observation''s signed flag cannot change');
END;

-- envelopes: the DSSE envelope of each signed observation. Immutable: the trigger below
-- refuses every UPDATE; rows go only with their entry (ON DELETE CASCADE).
CREATE TABLE envelopes (
    observation_id INTEGER PRIMARY KEY REFERENCES observations (id) ON DELETE CASCADE,
    key_id         TEXT    NOT NULL CHECK (key_id <> ''),
    payload_digest TEXT    NOT NULL CHECK (length(payload_digest) = 64 AND payload_digest NOT GLOB '*[^0-9a-f]*'),
    envelope       BLOB    NOT NULL CHECK (length(envelope) > 0),
    created_at     INTEGER NOT NULL
) STRICT;

CREATE TRIGGER envelopes_immutable
BEFORE UPDATE ON envelopes
BEGIN
    SELECT RAISE(ABORT, 'envelopes are immutable');
END;

CREATE TRIGGER envelopes_signed_only
BEFORE INSERT ON envelopes
WHEN (SELECT signed FROM observations WHERE id = NEW.observation_id) IS NOT 1
BEGIN
    SELECT RAISE(ABORT, 'an envelope needs a signed observation');
END;

-- uptime_days: per entry and UTC day, how many rounds answered, found no answer or were
-- inconclusive, and the day's status, which the CHECK keeps equal to what the counts say.
CREATE TABLE uptime_days (
    entry_id     INTEGER NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    day          TEXT    NOT NULL CHECK (day GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
    answered     INTEGER NOT NULL CHECK (answered >= 0),
    no_answer    INTEGER NOT NULL CHECK (no_answer >= 0),
    inconclusive INTEGER NOT NULL CHECK (inconclusive >= 0),
    status       TEXT    NOT NULL CHECK (status = CASE
                             WHEN no_answer > 0 THEN 'offline'
                             WHEN answered > 0 THEN 'online'
                             ELSE 'not_counted' END),
    PRIMARY KEY (entry_id, day)
) STRICT, WITHOUT ROWID;

-- runs: `probity round` runs; finished_at is NULL while a run is unfinished.
CREATE TABLE runs (
    id          TEXT    PRIMARY KEY CHECK (id <> ''),
    due_at      INTEGER NOT NULL,
    started_at  INTEGER NOT NULL,
    finished_at INTEGER
) STRICT;

CREATE INDEX runs_unfinished ON runs (started_at) WHERE finished_at IS NULL;
