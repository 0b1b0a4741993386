-- The ledger numbers its records after they commit, as a log sequencer does, and the
-- schema says "round" where it said "observation" (issue 13). It mirrors
-- migrations/sqlite/0007_ledger_sequencer.sql.
--
-- Until 0006 a writer took a record's sequence number from ledger_counter inside the
-- transaction that stored the record, and so held the counter's row lock through its
-- commit: every signed write, WAL flush included, waited for the one before it. Now:
--
--   ledger.id   the record's identity, which rounds, changes and supply runs reference
--               (ledger_id); given at insert (an identity column).
--   ledger.seq  the record's sequence number (the future transparency-log index), NULL
--               while the record is pending, then set once and never again.
--
-- A writer inserts its record with seq NULL and takes no counter lock, so writers commit
-- side by side. A sequencing step then numbers every committed pending record, in id
-- order, in one short transaction: lock the counter's row, number the pending records
-- from the counter's next number on, move the counter past them, commit. The counter's
-- lock makes the steps one after the other, so numbers stay gap-free and a reader sees
-- number n+1 only with n (each step commits its numbers together). Tombstones take their
-- number from the same counter, under its lock, as before.
--
-- Existing records keep their numbers (id = seq = the old seq); new ids continue after
-- the highest id.
--
-- The guards, rewritten below:
--   * a record is inserted pending (seq NULL);
--   * the only UPDATE of a record numbers it: seq from NULL to a number the counter has
--     not given yet and that no tombstone or removal holds (that it lies within the run
--     the step's records need is the commit-time check below); every other column is
--     refused, even set to itself;
--   * the counter moves only forward, and only past numbers that are all used, each by a
--     record or a tombstone, with none used beyond it;
--   * at commit (deferred), every number a record or tombstone took is below the
--     counter: numbers are given only with the counter moved past them;
--   * deletion as in 0006: only with the entry, listed in a tombstone.

-- 1. Names: the table of rounds is rounds, and what was named after observations is
-- named after rounds.
ALTER TABLE observations RENAME TO rounds;
ALTER SEQUENCE observations_id_seq RENAME TO rounds_id_seq;
ALTER TABLE changes RENAME COLUMN before_observation TO before_round;
ALTER TABLE changes RENAME COLUMN after_observation TO after_round;
ALTER TABLE rounds RENAME COLUMN ledger_seq TO ledger_id;
ALTER TABLE changes RENAME COLUMN ledger_seq TO ledger_id;
ALTER TABLE supply_runs RENAME COLUMN ledger_seq TO ledger_id;

-- Constraints (with the indexes that back them) and indexes, by pattern: CHECK and
-- foreign-key constraints were named by PostgreSQL after the table and column.
DO $$
DECLARE
    r record;
BEGIN
    FOR r IN
        SELECT c.conrelid::regclass::text AS tbl, c.conname
        FROM pg_constraint c
        WHERE c.conrelid IN ('rounds'::regclass, 'changes'::regclass, 'supply_runs'::regclass)
          AND (c.conname LIKE '%observation%' OR c.conname LIKE '%ledger\_seq%')
        ORDER BY c.conname
    LOOP
        EXECUTE format('ALTER TABLE %I RENAME CONSTRAINT %I TO %I', r.tbl, r.conname,
            replace(replace(replace(r.conname, 'observations', 'rounds'), 'observation', 'round'),
                    'ledger_seq', 'ledger_id'));
    END LOOP;
    FOR r IN
        SELECT i.relname
        FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
        WHERE x.indrelid = 'rounds'::regclass AND i.relname LIKE 'observations%'
        ORDER BY i.relname
    LOOP
        EXECUTE format('ALTER INDEX %I RENAME TO %I', r.relname, replace(r.relname, 'observations', 'rounds'));
    END LOOP;
END;
$$;

ALTER TRIGGER observations_signed_fixed ON rounds RENAME TO rounds_signed_fixed;
ALTER FUNCTION observations_signed_fixed() RENAME TO rounds_signed_fixed;
ALTER TRIGGER observations_ledger_fixed ON rounds RENAME TO rounds_ledger_fixed;
ALTER FUNCTION observations_ledger_fixed() RENAME TO rounds_ledger_fixed;

CREATE OR REPLACE FUNCTION rounds_signed_fixed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'a round''s signed flag cannot change'
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$;

CREATE OR REPLACE FUNCTION rounds_ledger_fixed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'a round''s ledger record cannot change'
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$;

-- 2. Identity and position. The old guards go first (they would refuse the copy).
DROP TRIGGER ledger_number_taken ON ledger;
DROP TRIGGER ledger_immutable ON ledger;
DROP TRIGGER ledger_tombstones_number_taken ON ledger_tombstones;
DROP TRIGGER ledger_counter_forward ON ledger_counter;
DROP FUNCTION ledger_number_taken();
DROP FUNCTION ledger_counter_forward();

-- The old seq becomes the identity (the primary key, and the foreign keys of rounds,
-- changes and supply runs, follow the column), and seq is added beside it. The UPDATE
-- writes a new version of every record; the envelopes, stored out of line (TOAST), are
-- not copied.
ALTER TABLE ledger RENAME COLUMN seq TO id;
ALTER TABLE ledger RENAME CONSTRAINT ledger_seq_check TO ledger_id_check;
ALTER TABLE ledger ADD COLUMN seq bigint CHECK (seq >= 1);
UPDATE ledger SET seq = id;
ALTER TABLE ledger ADD CONSTRAINT ledger_seq UNIQUE (seq);
ALTER TABLE ledger ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (SEQUENCE NAME ledger_id_seq);
SELECT setval('ledger_id_seq', coalesce(max(id), 0) + 1, false) FROM ledger;

-- An entry's records in sequence order (export by entry; the cascade of its deletion).
DROP INDEX ledger_entry;
CREATE INDEX ledger_entry ON ledger (entry_id, seq);

-- The pending records, for the sequencing step: a handful at a time, so the index stays
-- a page or two however large the ledger grows.
CREATE INDEX ledger_pending ON ledger (id) WHERE seq IS NULL;

-- 3. The guards.
CREATE FUNCTION ledger_stored_pending() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.seq IS NOT NULL THEN
        RAISE EXCEPTION 'a ledger record is stored pending (seq NULL) and numbered after it commits'
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$;

-- A number in turn: one the counter has not given yet (the step moves the counter past
-- its numbers after setting them, which ledger_counter_forward checks), and that no
-- tombstone or removal holds. That it is within the run the step's records need is
-- checked at commit (ledger_counted: every number given lies below the moved counter)
-- rather than here: counting the pending records for every number would make a step
-- over k records cost k², and a step after a stall can number many.
CREATE FUNCTION ledger_numbered() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.seq IS NOT NULL OR NEW.seq IS NULL
            OR NEW.seq < (SELECT next FROM ledger_counter)
            OR EXISTS (SELECT 1 FROM ledger_tombstones WHERE seq = NEW.seq)
            OR EXISTS (SELECT 1 FROM ledger_removed WHERE seq = NEW.seq) THEN
        RAISE EXCEPTION 'ledger record % can only be numbered once, with the counter''s next number (not %)',
                OLD.id, NEW.seq
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$;

-- Checked at commit: a number given was counted.
CREATE FUNCTION ledger_counted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.seq >= (SELECT next FROM ledger_counter) THEN
        RAISE EXCEPTION 'sequence number % was given without moving the ledger counter past it', NEW.seq
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NULL;
END;
$$;

CREATE FUNCTION ledger_counter_forward() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.one IS DISTINCT FROM OLD.one OR NEW.next <= OLD.next
            OR (SELECT count(*) FROM ledger WHERE seq >= OLD.next AND seq < NEW.next)
               + (SELECT count(*) FROM ledger_tombstones WHERE seq >= OLD.next AND seq < NEW.next)
               <> NEW.next - OLD.next
            OR EXISTS (SELECT 1 FROM ledger WHERE seq >= NEW.next)
            OR EXISTS (SELECT 1 FROM ledger_tombstones WHERE seq >= NEW.next) THEN
        RAISE EXCEPTION 'the ledger counter moves only past the numbers just given, each used once'
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$;

-- A tombstone takes the counter's next number (then the counter moves past it).
CREATE FUNCTION ledger_tombstone_number() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.seq IS DISTINCT FROM (SELECT next FROM ledger_counter)
            OR EXISTS (SELECT 1 FROM ledger WHERE seq = NEW.seq)
            OR EXISTS (SELECT 1 FROM ledger_removed WHERE seq = NEW.seq) THEN
        RAISE EXCEPTION 'tombstone number % is not the ledger counter''s next', NEW.seq
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER ledger_stored_pending BEFORE INSERT ON ledger
FOR EACH ROW EXECUTE FUNCTION ledger_stored_pending();
-- Every column but seq, named in an UPDATE, is refused (a row trigger of UPDATE OF fires
-- when the column is set, to its own value too).
CREATE TRIGGER ledger_immutable
BEFORE UPDATE OF id, kind, entry_id, payload_digest, key_id, envelope, created_at ON ledger
FOR EACH ROW EXECUTE FUNCTION ledger_refuse();
CREATE TRIGGER ledger_numbered BEFORE UPDATE OF seq ON ledger
FOR EACH ROW EXECUTE FUNCTION ledger_numbered();
CREATE CONSTRAINT TRIGGER ledger_counted AFTER UPDATE OF seq ON ledger
DEFERRABLE INITIALLY DEFERRED
FOR EACH ROW EXECUTE FUNCTION ledger_counted();

CREATE TRIGGER ledger_counter_forward BEFORE UPDATE ON ledger_counter
FOR EACH ROW EXECUTE FUNCTION ledger_counter_forward();

CREATE TRIGGER ledger_tombstones_number BEFORE INSERT ON ledger_tombstones
FOR EACH ROW EXECUTE FUNCTION ledger_tombstone_number();
CREATE CONSTRAINT TRIGGER ledger_tombstones_counted AFTER INSERT ON ledger_tombstones
DEFERRABLE INITIALLY DEFERRED
FOR EACH ROW EXECUTE FUNCTION ledger_counted();
