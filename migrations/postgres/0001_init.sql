-- Probity's schema on PostgreSQL. It mirrors migrations/sqlite/0001_init.sql table for
-- table and column for column; where the types differ, this is what they are here:
--
-- Times are timestamptz, written truncated to milliseconds (the store truncates before
-- writing); a nullable time column is NULL where the Go value is the zero time ("none
-- yet"). Days are date (UTC days). Durations are bigint milliseconds. Documents are bytea.
-- Ids are bigint identity columns. Enumerations are text with CHECK constraints.
--
-- schema_migrations is created by the store before it applies this file.

-- surfaces: canonical tools documents, addressed by their surface fingerprint
-- ("sha256:" + hex of SHA-256 over doc). Shared by entries and rounds; never deleted.
CREATE TABLE surfaces (
    fingerprint text        PRIMARY KEY CHECK (fingerprint ~ '^sha256:[0-9a-f]{64}$'),
    doc         bytea       NOT NULL,
    created_at  timestamptz NOT NULL
);

-- entries: one directory entry each. (kind, locator) identifies it; slug names it in URLs
-- and never changes. last_round_at, last_surface and the uptime day counts are kept up to
-- date by SaveRound, in the round's transaction. slug is in the "C" collation, so that
-- its UNIQUE index also serves AddEntry's prefix search (slug LIKE 'base-%').
CREATE TABLE entries (
    id                  bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    slug                text        COLLATE "C" NOT NULL UNIQUE CHECK (
                            length(slug) BETWEEN 1 AND 100 AND slug ~ '^[a-z0-9][a-z0-9-]*$'),
    kind                text        NOT NULL CHECK (kind IN ('remote', 'npm', 'pypi', 'github')),
    locator             text        NOT NULL CHECK (locator <> ''),
    name                text        NOT NULL,
    source              text        NOT NULL,
    claimed             boolean     NOT NULL,
    cadence_ms          bigint      NOT NULL CHECK (cadence_ms >= 0),
    created_at          timestamptz NOT NULL,
    last_round_at       timestamptz,
    last_surface        text        REFERENCES surfaces (fingerprint),
    uptime_online_days  integer     NOT NULL DEFAULT 0 CHECK (uptime_online_days >= 0),
    uptime_counted_days integer     NOT NULL DEFAULT 0 CHECK (uptime_counted_days >= uptime_online_days),
    UNIQUE (kind, locator)
);

-- due: when each entry is next due a round, at most one time per reason. DueBefore reads
-- it by time: on due_at, its ORDER BY at, entry_id, reason is an incremental sort, 0.2 ms
-- for the first 100 of a backlog of 10,000 (measured on PostgreSQL 15).
CREATE TABLE due (
    entry_id bigint      NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    reason   text        NOT NULL CHECK (reason IN ('cadence', 'confirm', 'status', 'manual')),
    at       timestamptz NOT NULL,
    PRIMARY KEY (entry_id, reason)
);

CREATE INDEX due_at ON due (at);

-- attempts: how many probes of an entry were started for one due time, counted before
-- each probe so that attempts of a crashed worker count too.
CREATE TABLE attempts (
    entry_id        bigint      NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    due_at          timestamptz NOT NULL,
    attempts        integer     NOT NULL CHECK (attempts >= 1),
    last_started_at timestamptz NOT NULL,
    PRIMARY KEY (entry_id, due_at)
);

-- observations: one stored round each, identified by (entry_id, due_at). signed is true
-- exactly when the round's envelope is stored: SaveRound writes both in one transaction,
-- the envelopes_signed_only trigger refuses an envelope for an unsigned observation and
-- observations_signed_fixed refuses to change the flag. A signed round has a coverage, an
-- unsigned one has none; the four fingerprints are all present or all absent.
CREATE TABLE observations (
    id               bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    entry_id         bigint      NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    due_at           timestamptz NOT NULL,
    reason           text        NOT NULL CHECK (reason IN ('cadence', 'confirm', 'status', 'manual')),
    round_id         text        NOT NULL,
    started_at       timestamptz NOT NULL,
    finished_at      timestamptz NOT NULL,
    coverage         text        NOT NULL CHECK (coverage IN ('', 'full', 'auth_required')),
    signed           boolean     NOT NULL,
    unsigned_reason  text        NOT NULL,
    reach            text        NOT NULL,
    http_status      integer     NOT NULL CHECK (http_status BETWEEN 0 AND 999),
    stop             text        NOT NULL,
    uptime           text        NOT NULL CHECK (uptime IN ('answered', 'no_answer', 'inconclusive')),
    retry_after_ms   bigint      NOT NULL CHECK (retry_after_ms >= 0),
    protocol_version text        NOT NULL,
    server_name      text        NOT NULL,
    server_version   text        NOT NULL,
    tool_count       integer     NOT NULL CHECK (tool_count >= 0),
    pages            integer     NOT NULL CHECK (pages >= 0),
    fp_surface       text        REFERENCES surfaces (fingerprint),
    fp_toolset       text,
    fp_schema        text,
    fp_instructions  text,
    results          bytea,
    timings          bytea,
    -- The store maps a violation of this constraint, by name, to ErrRoundDone.
    CONSTRAINT observations_entry_due UNIQUE (entry_id, due_at),
    CHECK (signed = (coverage <> '')),
    CHECK (NOT signed OR unsigned_reason = ''),
    CHECK ((fp_surface IS NULL) = (fp_toolset IS NULL)
       AND (fp_surface IS NULL) = (fp_schema IS NULL)
       AND (fp_surface IS NULL) = (fp_instructions IS NULL))
);

-- Rounds (an entry's newest first) and the newest-surface lookup of SaveRound; both are
-- index scans on it, 0.5 ms and 0.03 ms with 200,000 rounds of 5,000 entries.
CREATE INDEX observations_entry_started ON observations (entry_id, started_at);

CREATE FUNCTION observations_signed_fixed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'an observation''s signed flag cannot change'
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$;

CREATE TRIGGER observations_signed_fixed
BEFORE UPDATE OF signed ON observations
FOR EACH ROW WHEN (OLD.signed IS DISTINCT FROM NEW.signed)
EXECUTE FUNCTION observations_signed_fixed();

-- envelopes: the DSSE envelope of each signed observation. Immutable: the trigger below
-- refuses every UPDATE; rows go only with their entry (ON DELETE CASCADE).
CREATE TABLE envelopes (
    observation_id bigint      PRIMARY KEY REFERENCES observations (id) ON DELETE CASCADE,
    key_id         text        NOT NULL CHECK (key_id <> ''),
    payload_digest text        NOT NULL CHECK (payload_digest ~ '^[0-9a-f]{64}$'),
    envelope       bytea       NOT NULL CHECK (length(envelope) > 0),
    created_at     timestamptz NOT NULL
);

CREATE FUNCTION envelopes_immutable() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'envelopes are immutable'
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$;

-- A row trigger for UPDATE, a statement trigger for TRUNCATE (which fires no row triggers).
CREATE TRIGGER envelopes_immutable
BEFORE UPDATE ON envelopes
FOR EACH ROW EXECUTE FUNCTION envelopes_immutable();

CREATE TRIGGER envelopes_no_truncate
BEFORE TRUNCATE ON envelopes
FOR EACH STATEMENT EXECUTE FUNCTION envelopes_immutable();

CREATE FUNCTION envelopes_signed_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT signed FROM observations WHERE id = NEW.observation_id) IS NOT TRUE THEN
        RAISE EXCEPTION 'an envelope needs a signed observation'
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER envelopes_signed_only
BEFORE INSERT ON envelopes
FOR EACH ROW EXECUTE FUNCTION envelopes_signed_only();

-- uptime_days: per entry and UTC day, how many rounds answered, found no answer or were
-- inconclusive, and the day's status, which the CHECK keeps equal to what the counts say.
CREATE TABLE uptime_days (
    entry_id     bigint  NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    day          date    NOT NULL,
    answered     integer NOT NULL CHECK (answered >= 0),
    no_answer    integer NOT NULL CHECK (no_answer >= 0),
    inconclusive integer NOT NULL CHECK (inconclusive >= 0),
    status       text    NOT NULL CHECK (status = CASE
                             WHEN no_answer > 0 THEN 'offline'
                             WHEN answered > 0 THEN 'online'
                             ELSE 'not_counted' END),
    PRIMARY KEY (entry_id, day)
);

-- runs: `probity round` runs; finished_at is NULL while a run is unfinished. Ids compare
-- bytewise (collation "C"), as on SQLite.
CREATE TABLE runs (
    id          text        COLLATE "C" PRIMARY KEY CHECK (id <> ''),
    due_at      timestamptz NOT NULL,
    started_at  timestamptz NOT NULL,
    finished_at timestamptz
);

CREATE INDEX runs_unfinished ON runs (started_at) WHERE finished_at IS NULL;
