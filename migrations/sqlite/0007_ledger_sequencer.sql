-- The ledger numbers its records after they are stored, and the schema says "round";
-- mirrors migrations/postgres/0007_ledger_sequencer.sql, which documents the columns,
-- the sequencing step and the guards.
--
-- On SQLite every write transaction holds the database's write lock, so the store runs
-- the sequencing step inside the transaction that stores the record: the record is
-- never left pending there. The schema is the same as on PostgreSQL all the same (a
-- record is inserted pending, then numbered), so that the sequencing SQL is written once.
-- SQLite has no deferred triggers, so the commit-time check that every number given was
-- counted (ledger_counted on PostgreSQL) is missing here: a statement could number a
-- record without moving the counter. It can still leave no gap: ledger_numbered keeps a
-- number within the run the pending records need, and ledger_counter_forward moves the
-- counter only past a run fully used.
--
-- SQLite rewrites the triggers that name a column it renames; the triggers that name
-- ledger.seq or observations are dropped first and created again below.
DROP TRIGGER observations_signed_fixed;
DROP TRIGGER observations_signed_recorded;
DROP TRIGGER observations_ledger_fixed;
DROP TRIGGER ledger_number_taken;
DROP TRIGGER ledger_immutable;
DROP TRIGGER ledger_delete_recorded;
DROP TRIGGER ledger_tombstones_number_taken;
DROP TRIGGER ledger_removed_live;
DROP TRIGGER ledger_counter_forward;
DROP TRIGGER changes_immutable;

-- 1. Names (SQLite renames an index only by creating it again; the AUTOINCREMENT
-- counter of observations moves with the table).
DROP INDEX observations_entry_id;
DROP INDEX observations_entry_started_id;
DROP INDEX observations_ledger;
DROP INDEX changes_ledger;
DROP INDEX supply_runs_ledger;
ALTER TABLE observations RENAME TO rounds;
ALTER TABLE changes RENAME COLUMN before_observation TO before_round;
ALTER TABLE changes RENAME COLUMN after_observation TO after_round;
ALTER TABLE rounds RENAME COLUMN ledger_seq TO ledger_id;
ALTER TABLE changes RENAME COLUMN ledger_seq TO ledger_id;
ALTER TABLE supply_runs RENAME COLUMN ledger_seq TO ledger_id;
CREATE INDEX rounds_entry_id ON rounds (entry_id, id);
CREATE INDEX rounds_entry_started_id ON rounds (entry_id, started_at, id);

-- 2. Identity and position: the old seq becomes id (the INTEGER PRIMARY KEY, which the
-- foreign keys of rounds, changes and supply runs follow), and seq is added beside it.
-- A new id is one more than the highest.
ALTER TABLE ledger RENAME COLUMN seq TO id;
ALTER TABLE ledger ADD COLUMN seq INTEGER CHECK (seq >= 1);
UPDATE ledger SET seq = id;
CREATE UNIQUE INDEX ledger_seq ON ledger (seq);
DROP INDEX ledger_entry;
CREATE INDEX ledger_entry ON ledger (entry_id, seq);
CREATE INDEX ledger_pending ON ledger (id) WHERE seq IS NULL;

CREATE UNIQUE INDEX rounds_ledger ON rounds (ledger_id) WHERE ledger_id IS NOT NULL;
CREATE UNIQUE INDEX changes_ledger ON changes (ledger_id) WHERE ledger_id IS NOT NULL;
CREATE UNIQUE INDEX supply_runs_ledger ON supply_runs (ledger_id) WHERE ledger_id IS NOT NULL;

-- 3. The guards of 0001 and 0006 on rounds and changes, renamed.
CREATE TRIGGER rounds_signed_fixed
BEFORE UPDATE OF signed ON rounds
BEGIN
    SELECT RAISE(ABORT, 'a round''s signed flag cannot change');
END;

CREATE TRIGGER rounds_signed_recorded
BEFORE INSERT ON rounds
WHEN (NEW.signed = 1) <> (NEW.ledger_id IS NOT NULL)
BEGIN
    SELECT RAISE(ABORT, 'a round is signed exactly when it references its ledger record');
END;

CREATE TRIGGER rounds_ledger_fixed
BEFORE UPDATE OF ledger_id ON rounds
WHEN OLD.ledger_id IS NOT NEW.ledger_id
BEGIN
    SELECT RAISE(ABORT, 'a round''s ledger record cannot change');
END;

CREATE TRIGGER changes_immutable
BEFORE UPDATE OF id, entry_id, number, recorded_at, origin, kind, summary, details, badges,
    before_round, after_round, ledger_id ON changes
BEGIN
    SELECT RAISE(ABORT, 'changes are immutable but for hidden and hidden_reason');
END;

-- 4. The ledger's guards (see the PostgreSQL file).
CREATE TRIGGER ledger_stored_pending
BEFORE INSERT ON ledger
WHEN NEW.seq IS NOT NULL
BEGIN
    SELECT RAISE(ABORT, 'a ledger record is stored pending (seq NULL) and numbered after');
END;

CREATE TRIGGER ledger_immutable
BEFORE UPDATE OF id, kind, entry_id, payload_digest, key_id, envelope, created_at ON ledger
BEGIN
    SELECT RAISE(ABORT, 'ledger is append-only');
END;

CREATE TRIGGER ledger_numbered
BEFORE UPDATE OF seq ON ledger
WHEN OLD.seq IS NOT NULL OR NEW.seq IS NULL
    OR NEW.seq < (SELECT next FROM ledger_counter)
    OR NEW.seq >= (SELECT next FROM ledger_counter)
                  + (SELECT count(*) FROM ledger WHERE seq IS NULL OR seq >= (SELECT next FROM ledger_counter))
    OR EXISTS (SELECT 1 FROM ledger_tombstones WHERE seq = NEW.seq)
    OR EXISTS (SELECT 1 FROM ledger_removed WHERE seq = NEW.seq)
BEGIN
    SELECT RAISE(ABORT, 'a ledger record is numbered once, with the counter''s next numbers');
END;

CREATE TRIGGER ledger_delete_recorded
BEFORE DELETE ON ledger
WHEN EXISTS (SELECT 1 FROM entries WHERE id = OLD.entry_id)
    OR NOT EXISTS (SELECT 1 FROM ledger_removed WHERE seq = OLD.seq)
BEGIN
    SELECT RAISE(ABORT, 'a ledger record goes only with its entry, recorded in a tombstone');
END;

CREATE TRIGGER ledger_counter_forward
BEFORE UPDATE ON ledger_counter
WHEN NEW.one IS NOT OLD.one OR NEW.next <= OLD.next
    OR (SELECT count(*) FROM ledger WHERE seq >= OLD.next AND seq < NEW.next)
       + (SELECT count(*) FROM ledger_tombstones WHERE seq >= OLD.next AND seq < NEW.next)
       <> NEW.next - OLD.next
    OR EXISTS (SELECT 1 FROM ledger WHERE seq >= NEW.next)
    OR EXISTS (SELECT 1 FROM ledger_tombstones WHERE seq >= NEW.next)
BEGIN
    SELECT RAISE(ABORT, 'the ledger counter moves only past the numbers just given, each used once');
END;

CREATE TRIGGER ledger_tombstones_number
BEFORE INSERT ON ledger_tombstones
WHEN NEW.seq IS NOT (SELECT next FROM ledger_counter)
    OR EXISTS (SELECT 1 FROM ledger WHERE seq = NEW.seq)
    OR EXISTS (SELECT 1 FROM ledger_removed WHERE seq = NEW.seq)
BEGIN
    SELECT RAISE(ABORT, 'a tombstone takes the ledger counter''s next number');
END;

CREATE TRIGGER ledger_removed_live
BEFORE INSERT ON ledger_removed
WHEN NOT EXISTS (SELECT 1 FROM ledger
                 WHERE seq = NEW.seq AND kind = NEW.kind AND payload_digest = NEW.payload_digest)
BEGIN
    SELECT RAISE(ABORT, 'ledger_removed names a record that is not stored as named');
END;
