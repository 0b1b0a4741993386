-- Entry histories on PostgreSQL. It mirrors migrations/sqlite/0002_history.sql table
-- for table and column for column, with the types of 0001_init.sql.

-- changes: one recorded change of an entry each, numbered 1, 2, … per entry (the
-- #ch-N of its page). SaveHistory writes them, under the entry's row lock, in one
-- transaction. details is the JSON of the full change and badges a JSON array of
-- strings. key_id and envelope (the signed change statement) are both present or both
-- absent. Immutable but for hidden and hidden_reason: the changes_immutable trigger
-- refuses every other UPDATE, and TRUNCATE. Rows go only with their entry, or with a
-- round they compare (which goes only with the same entry): ON DELETE CASCADE.
CREATE TABLE changes (
    id                 bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    entry_id           bigint      NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    number             bigint      NOT NULL CHECK (number >= 1),
    recorded_at        timestamptz NOT NULL,
    origin             text        NOT NULL CHECK (origin IN ('automatic', 'operator')),
    kind               text        NOT NULL CHECK (kind IN ('baseline', 'tools', 'version', 'operator_edit')),
    -- One line: no C0 control character or DEL.
    summary            text        NOT NULL CHECK (
                           char_length(summary) BETWEEN 1 AND 200 AND summary !~ '[\x01-\x1f\x7f]'),
    details            bytea       NOT NULL CHECK (length(details) > 0),
    badges             text        NOT NULL CHECK (jsonb_typeof(badges::jsonb) = 'array'),
    before_observation bigint      REFERENCES observations (id) ON DELETE CASCADE,
    after_observation  bigint      REFERENCES observations (id) ON DELETE CASCADE,
    hidden             boolean     NOT NULL DEFAULT false,
    hidden_reason      text        NOT NULL DEFAULT '' CHECK (
                           char_length(hidden_reason) <= 500 AND hidden_reason !~ '[\x01-\x1f\x7f]'),
    key_id             text        CHECK (key_id <> ''),
    envelope           bytea       CHECK (length(envelope) > 0),
    CONSTRAINT changes_entry_number UNIQUE (entry_id, number),
    CHECK (hidden = (hidden_reason <> '')),
    CHECK ((key_id IS NULL) = (envelope IS NULL))
);

-- Changes across entries, newest first. An entry's changes are read, newest first, on
-- the UNIQUE (entry_id, number) index, backwards.
CREATE INDEX changes_recorded ON changes (recorded_at DESC, entry_id DESC, number DESC);

-- Deleting an observation (with its entry) looks for the changes naming it: without
-- these, once per deleted observation through the whole table.
CREATE INDEX changes_before ON changes (before_observation) WHERE before_observation IS NOT NULL;
CREATE INDEX changes_after ON changes (after_observation) WHERE after_observation IS NOT NULL;

CREATE FUNCTION changes_immutable() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'changes are immutable but for hidden and hidden_reason'
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$;

-- A row trigger for UPDATE of any other column, a statement trigger for TRUNCATE
-- (which fires no row triggers).
CREATE TRIGGER changes_immutable
BEFORE UPDATE OF id, entry_id, number, recorded_at, origin, kind, summary, details, badges,
    before_observation, after_observation, key_id, envelope ON changes
FOR EACH ROW EXECUTE FUNCTION changes_immutable();

CREATE TRIGGER changes_no_truncate
BEFORE TRUNCATE ON changes
FOR EACH STATEMENT EXECUTE FUNCTION changes_immutable();

-- history_state: per entry, the history engine's state (opaque to the store) and the
-- id of the last observation it has taken into account. SaveHistory replaces both only
-- when processed is still what the update was computed from.
CREATE TABLE history_state (
    entry_id   bigint      PRIMARY KEY REFERENCES entries (id) ON DELETE CASCADE,
    state      bytea       NOT NULL,
    processed  bigint      NOT NULL DEFAULT 0 CHECK (processed >= 0),
    updated_at timestamptz NOT NULL
);

-- RoundsAfter (an entry's rounds by id) and WalkRounds (every round by entry, then id,
-- in keyset pages).
CREATE INDEX observations_entry_id ON observations (entry_id, id);
