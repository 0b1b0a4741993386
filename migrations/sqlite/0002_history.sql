-- Entry histories on SQLite: the changes recorded between rounds, and each entry's
-- history state. Conventions as in 0001_init.sql (STRICT tables, times in Unix ms).

-- changes: one recorded change of an entry each, numbered 1, 2, … per entry (the
-- #ch-N of its page). SaveHistory writes them, under the entry's history state, in one
-- transaction. details is the JSON of the full change and badges a JSON array of
-- strings. key_id and envelope (the signed change statement) are both present or both
-- absent. Immutable but for hidden and hidden_reason: the changes_immutable trigger
-- refuses every other UPDATE. Rows go only with their entry, or with a round they
-- compare (which goes only with the same entry): ON DELETE CASCADE.
CREATE TABLE changes (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    entry_id           INTEGER NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    number             INTEGER NOT NULL CHECK (number >= 1),
    recorded_at        INTEGER NOT NULL,
    origin             TEXT    NOT NULL CHECK (origin IN ('automatic', 'operator')),
    kind               TEXT    NOT NULL CHECK (kind IN ('baseline', 'tools', 'version', 'operator_edit')),
    -- One line: no C0 control character or DEL (GLOB ranges compare code points).
    summary            TEXT    NOT NULL CHECK (
                           length(summary) BETWEEN 1 AND 200
                           AND summary NOT GLOB ('*[' || char(1) || '-' || char(31) || char(127) || ']*')),
    details            BLOB    NOT NULL CHECK (length(details) > 0),
    badges             TEXT    NOT NULL CHECK (json_valid(badges) AND json_type(badges) = 'array'),
    before_observation INTEGER REFERENCES observations (id) ON DELETE CASCADE,
    after_observation  INTEGER REFERENCES observations (id) ON DELETE CASCADE,
    hidden             INTEGER NOT NULL DEFAULT 0 CHECK (hidden IN (0, 1)),
    hidden_reason      TEXT    NOT NULL DEFAULT '' CHECK (
                           length(hidden_reason) <= 500
                           AND hidden_reason NOT GLOB ('*[' || char(1) || '-' || char(31) || char(127) || ']*')),
    key_id             TEXT    CHECK (key_id <> ''),
    envelope           BLOB    CHECK (length(envelope) > 0),
    UNIQUE (entry_id, number),
    CHECK ((hidden = 1) = (hidden_reason <> '')),
    CHECK ((key_id IS NULL) = (envelope IS NULL))
) STRICT;

-- Changes across entries, newest first. An entry's changes are read, newest first, on
-- the UNIQUE (entry_id, number) index, backwards.
CREATE INDEX changes_recorded ON changes (recorded_at DESC, entry_id DESC, number DESC);

-- Deleting an observation (with its entry) looks for the changes naming it.
CREATE INDEX changes_before ON changes (before_observation) WHERE before_observation IS NOT NULL;
CREATE INDEX changes_after ON changes (after_observation) WHERE after_observation IS NOT NULL;

CREATE TRIGGER changes_immutable
BEFORE UPDATE OF id, entry_id, number, recorded_at, origin, kind, summary, details, badges,
    before_observation, after_observation, key_id, envelope ON changes
BEGIN
    SELECT RAISE(ABORT, 'changes are immutable but for hidden and hidden_reason');
END;

-- history_state: per entry, the history engine's state (opaque to the store) and the
-- id of the last observation it has taken into account. SaveHistory replaces both only
-- when processed is still what the update was computed from.
CREATE TABLE history_state (
    entry_id   INTEGER PRIMARY KEY REFERENCES entries (id) ON DELETE CASCADE,
    state      BLOB    NOT NULL,
    processed  INTEGER NOT NULL DEFAULT 0 CHECK (processed >= 0),
    updated_at INTEGER NOT NULL
) STRICT;

-- RoundsAfter (an entry's rounds by id) and WalkRounds (every round by entry, then id).
CREATE INDEX observations_entry_id ON observations (entry_id, id);
