-- The ledger: one append-only table of every signed record; mirrors
-- migrations/postgres/0006_ledger.sql, which documents the tables, the sequence numbers
-- and the guards. Conventions as in 0001_init.sql (STRICT tables, times in Unix ms).
--
-- On SQLite every write transaction holds the database's write lock from its start
-- (the store begins them IMMEDIATE), so writers take sequence numbers, and commit, one
-- after the other; the counter row makes the numbering the same as on PostgreSQL, and a
-- rolled-back transaction gives its numbers back.
--
-- probity_payload_digest(envelope) is a function the store registers on every
-- connection: the hex SHA-256 of a DSSE envelope's payload (SQLite has neither SHA-256
-- nor base64). The migration fails on an envelope it cannot parse rather than guess.
CREATE TABLE ledger_counter (
    one  INTEGER PRIMARY KEY CHECK (one = 1),
    next INTEGER NOT NULL CHECK (next >= 1)
) STRICT;

CREATE TABLE ledger (
    seq            INTEGER PRIMARY KEY CHECK (seq >= 1),
    kind           TEXT    NOT NULL CHECK (
                       length(kind) BETWEEN 1 AND 32 AND kind GLOB '[a-z]*' AND kind NOT GLOB '*[^a-z0-9_]*'),
    entry_id       INTEGER REFERENCES entries (id) ON DELETE CASCADE,
    payload_digest TEXT    NOT NULL CHECK (length(payload_digest) = 64 AND payload_digest NOT GLOB '*[^0-9a-f]*'),
    key_id         TEXT    NOT NULL CHECK (key_id <> ''),
    envelope       BLOB    NOT NULL CHECK (length(envelope) > 0),
    created_at     INTEGER NOT NULL
) STRICT;

CREATE INDEX ledger_entry ON ledger (entry_id, seq);

CREATE TABLE ledger_tombstones (
    seq        INTEGER PRIMARY KEY CHECK (seq >= 1),
    entry_id   INTEGER NOT NULL,
    entry_slug TEXT    NOT NULL,
    -- One line: no C0 control character or DEL (GLOB ranges compare code points).
    reason     TEXT    NOT NULL CHECK (
                   length(reason) BETWEEN 1 AND 200
                   AND reason NOT GLOB ('*[' || char(1) || '-' || char(31) || char(127) || ']*')),
    removed    INTEGER NOT NULL CHECK (removed >= 0),
    deleted_at INTEGER NOT NULL
) STRICT;

CREATE TABLE ledger_removed (
    seq            INTEGER PRIMARY KEY,
    tombstone      INTEGER NOT NULL REFERENCES ledger_tombstones (seq),
    kind           TEXT    NOT NULL,
    payload_digest TEXT    NOT NULL
) STRICT;

CREATE INDEX ledger_removed_tombstone ON ledger_removed (tombstone, seq);

-- The records as they were stored, numbered in stored order (see the PostgreSQL file).
CREATE TEMP TABLE ledger_0006 AS
SELECT row_number() OVER (ORDER BY at, rank, id) AS seq, kind, id, entry_id, payload_digest,
       key_id, envelope, created_at
FROM (
    SELECT s.*, max(s.created_at) OVER (PARTITION BY s.rank ORDER BY s.id ROWS UNBOUNDED PRECEDING) AS at
    FROM (
        SELECT 1 AS rank, 'probe' AS kind, v.observation_id AS id, o.entry_id, v.payload_digest,
               v.key_id, v.envelope, v.created_at
        FROM envelopes v JOIN observations o ON o.id = v.observation_id
        UNION ALL
        SELECT 2, 'change', c.id, c.entry_id, probity_payload_digest(c.envelope), c.key_id, c.envelope,
               c.recorded_at
        FROM changes c WHERE c.envelope IS NOT NULL
        UNION ALL
        SELECT 3, 'supply', r.id, r.entry_id, probity_payload_digest(r.envelope), r.key_id, r.envelope,
               r.ran_at
        FROM supply_runs r WHERE r.envelope IS NOT NULL
    ) s
);

CREATE INDEX temp.ledger_0006_kind_id ON ledger_0006 (kind, id);

INSERT INTO ledger (seq, kind, entry_id, payload_digest, key_id, envelope, created_at)
SELECT seq, kind, entry_id, payload_digest, key_id, envelope, created_at FROM ledger_0006 ORDER BY seq;

INSERT INTO ledger_counter (one, next) SELECT 1, count(*) + 1 FROM ledger_0006;

-- Rounds: observations.ledger_seq replaces the envelopes table. SQLite adds a column
-- without a CHECK that existing rows fail, so the two rules are triggers:
-- observations_signed_recorded (signed exactly when the round references its record)
-- and observations_ledger_fixed (the reference never changes).
ALTER TABLE observations ADD COLUMN ledger_seq INTEGER REFERENCES ledger (seq) ON DELETE CASCADE;
UPDATE observations SET ledger_seq = (
    SELECT m.seq FROM ledger_0006 m WHERE m.kind = 'probe' AND m.id = observations.id)
WHERE signed = 1;
CREATE UNIQUE INDEX observations_ledger ON observations (ledger_seq) WHERE ledger_seq IS NOT NULL;
DROP TABLE envelopes;

CREATE TRIGGER observations_signed_recorded
BEFORE INSERT ON observations
WHEN (NEW.signed = 1) <> (NEW.ledger_seq IS NOT NULL)
BEGIN
    SELECT RAISE(ABORT, 'an observation is signed exactly when it references its ledger record');
END;

CREATE TRIGGER observations_ledger_fixed
BEFORE UPDATE OF ledger_seq ON observations
WHEN OLD.ledger_seq IS NOT NEW.ledger_seq
BEGIN
    SELECT RAISE(ABORT, 'an observation''s ledger record cannot change');
END;

-- Changes and supply runs: ledger_seq replaces key_id and envelope. SQLite cannot drop a
-- column a CHECK names, so both tables are rebuilt as 0003_supply.sql rebuilt due (no
-- table references either). Ids are copied, and each table's AUTOINCREMENT counter is
-- carried over, so no id of a deleted row is ever given again (history states name
-- supply runs by id).
CREATE TABLE changes_new (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    entry_id           INTEGER NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    number             INTEGER NOT NULL CHECK (number >= 1),
    recorded_at        INTEGER NOT NULL,
    origin             TEXT    NOT NULL CHECK (origin IN ('automatic', 'operator')),
    kind               TEXT    NOT NULL CHECK (kind IN ('baseline', 'tools', 'version', 'operator_edit')),
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
    ledger_seq         INTEGER REFERENCES ledger (seq) ON DELETE CASCADE,
    UNIQUE (entry_id, number),
    CHECK ((hidden = 1) = (hidden_reason <> ''))
) STRICT;

INSERT INTO changes_new (id, entry_id, number, recorded_at, origin, kind, summary, details, badges,
    before_observation, after_observation, hidden, hidden_reason, ledger_seq)
SELECT c.id, c.entry_id, c.number, c.recorded_at, c.origin, c.kind, c.summary, c.details, c.badges,
    c.before_observation, c.after_observation, c.hidden, c.hidden_reason, m.seq
FROM changes c LEFT JOIN ledger_0006 m ON m.kind = 'change' AND m.id = c.id
ORDER BY c.id;

DELETE FROM sqlite_sequence WHERE name = 'changes_new';
INSERT INTO sqlite_sequence (name, seq)
SELECT 'changes_new', max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'changes'), 0),
                          coalesce((SELECT max(id) FROM changes_new), 0));

DROP TABLE changes;
ALTER TABLE changes_new RENAME TO changes;

CREATE INDEX changes_recorded ON changes (recorded_at DESC, entry_id DESC, number DESC);
CREATE INDEX changes_before ON changes (before_observation) WHERE before_observation IS NOT NULL;
CREATE INDEX changes_after ON changes (after_observation) WHERE after_observation IS NOT NULL;
CREATE UNIQUE INDEX changes_ledger ON changes (ledger_seq) WHERE ledger_seq IS NOT NULL;

CREATE TRIGGER changes_immutable
BEFORE UPDATE OF id, entry_id, number, recorded_at, origin, kind, summary, details, badges,
    before_observation, after_observation, ledger_seq ON changes
BEGIN
    SELECT RAISE(ABORT, 'changes are immutable but for hidden and hidden_reason');
END;

CREATE TABLE supply_runs_new (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    entry_id       INTEGER NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    ran_at         INTEGER NOT NULL,
    score          INTEGER NOT NULL CHECK (score BETWEEN 0 AND 100),
    verified       INTEGER NOT NULL CHECK (verified IN (0, 1)),
    latest_version TEXT    NOT NULL DEFAULT '',
    facts          BLOB    NOT NULL CHECK (length(facts) > 0),
    verdict        BLOB    NOT NULL CHECK (length(verdict) > 0),
    ledger_seq     INTEGER REFERENCES ledger (seq) ON DELETE CASCADE
) STRICT;

INSERT INTO supply_runs_new (id, entry_id, ran_at, score, verified, latest_version, facts, verdict, ledger_seq)
SELECT r.id, r.entry_id, r.ran_at, r.score, r.verified, r.latest_version, r.facts, r.verdict, m.seq
FROM supply_runs r LEFT JOIN ledger_0006 m ON m.kind = 'supply' AND m.id = r.id
ORDER BY r.id;

DELETE FROM sqlite_sequence WHERE name = 'supply_runs_new';
INSERT INTO sqlite_sequence (name, seq)
SELECT 'supply_runs_new', max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'supply_runs'), 0),
                              coalesce((SELECT max(id) FROM supply_runs_new), 0));

DROP TABLE supply_runs;
ALTER TABLE supply_runs_new RENAME TO supply_runs;

CREATE INDEX supply_runs_entry_ran ON supply_runs (entry_id, ran_at DESC, id DESC);
CREATE UNIQUE INDEX supply_runs_ledger ON supply_runs (ledger_seq) WHERE ledger_seq IS NOT NULL;

CREATE TRIGGER supply_runs_immutable
BEFORE UPDATE ON supply_runs
BEGIN
    SELECT RAISE(ABORT, 'supply runs are immutable');
END;

-- Nothing was lost: every envelope has its record, and every record its row. A failed
-- CHECK aborts the migration (RAISE works only in triggers).
CREATE TEMP TABLE ledger_0006_check (lost INTEGER NOT NULL CHECK (lost = 0)) STRICT;
INSERT INTO ledger_0006_check (lost)
SELECT (SELECT count(*) FROM ledger_0006)
     - (SELECT count(*) FROM observations WHERE ledger_seq IS NOT NULL)
     - (SELECT count(*) FROM changes WHERE ledger_seq IS NOT NULL)
     - (SELECT count(*) FROM supply_runs WHERE ledger_seq IS NOT NULL)
     + (SELECT count(*) FROM observations WHERE signed = 1 AND ledger_seq IS NULL);
DROP TABLE ledger_0006_check;
DROP TABLE ledger_0006;

-- The guards, created after the records were copied in.
CREATE TRIGGER ledger_counter_forward
BEFORE UPDATE ON ledger_counter
WHEN NEW.next IS NOT OLD.next + 1 OR NEW.one IS NOT OLD.one
BEGIN
    SELECT RAISE(ABORT, 'the ledger counter only counts up by one');
END;

CREATE TRIGGER ledger_counter_kept
BEFORE DELETE ON ledger_counter
BEGIN
    SELECT RAISE(ABORT, 'ledger_counter is append-only');
END;

CREATE TRIGGER ledger_number_taken
BEFORE INSERT ON ledger
WHEN NEW.seq IS NOT (SELECT next - 1 FROM ledger_counter)
    OR EXISTS (SELECT 1 FROM ledger_tombstones WHERE seq = NEW.seq)
BEGIN
    SELECT RAISE(ABORT, 'the sequence number is not the one just taken from the ledger counter');
END;

CREATE TRIGGER ledger_immutable
BEFORE UPDATE ON ledger
BEGIN
    SELECT RAISE(ABORT, 'ledger is append-only');
END;

CREATE TRIGGER ledger_delete_recorded
BEFORE DELETE ON ledger
WHEN EXISTS (SELECT 1 FROM entries WHERE id = OLD.entry_id)
    OR NOT EXISTS (SELECT 1 FROM ledger_removed WHERE seq = OLD.seq)
BEGIN
    SELECT RAISE(ABORT, 'a ledger record goes only with its entry, recorded in a tombstone');
END;

CREATE TRIGGER ledger_tombstones_number_taken
BEFORE INSERT ON ledger_tombstones
WHEN NEW.seq IS NOT (SELECT next - 1 FROM ledger_counter)
    OR EXISTS (SELECT 1 FROM ledger WHERE seq = NEW.seq)
BEGIN
    SELECT RAISE(ABORT, 'the sequence number is not the one just taken from the ledger counter');
END;

CREATE TRIGGER ledger_tombstones_immutable
BEFORE UPDATE ON ledger_tombstones
BEGIN
    SELECT RAISE(ABORT, 'ledger_tombstones is append-only');
END;

CREATE TRIGGER ledger_tombstones_kept
BEFORE DELETE ON ledger_tombstones
BEGIN
    SELECT RAISE(ABORT, 'ledger_tombstones is append-only');
END;

CREATE TRIGGER ledger_removed_live
BEFORE INSERT ON ledger_removed
WHEN NOT EXISTS (SELECT 1 FROM ledger
                 WHERE seq = NEW.seq AND kind = NEW.kind AND payload_digest = NEW.payload_digest)
BEGIN
    SELECT RAISE(ABORT, 'ledger_removed names a record that is not stored as named');
END;

CREATE TRIGGER ledger_removed_immutable
BEFORE UPDATE ON ledger_removed
BEGIN
    SELECT RAISE(ABORT, 'ledger_removed is append-only');
END;

CREATE TRIGGER ledger_removed_kept
BEFORE DELETE ON ledger_removed
BEGIN
    SELECT RAISE(ABORT, 'ledger_removed is append-only');
END;
