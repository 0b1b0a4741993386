-- Supply-chain runs on PostgreSQL, and the due reason that schedules them. It mirrors
-- migrations/sqlite/0003_supply.sql table for table and column for column, with the
-- types of 0001_init.sql.

-- supply_runs: one run of the supply-chain checks of an entry each (seed 004).
-- SaveSupply inserts a run and, under the entry's row lock and in the same transaction,
-- deletes the entry's runs beyond the newest ten (by ran_at, then id), so an entry has
-- at most ten. facts and verdict are JSON documents (checks/supply.Facts and .Verdict),
-- kept byte for byte, and may hold third-party text; the store checks that they are
-- valid JSON and bounds their sizes before writing. key_id and envelope (the signed
-- supply statement) are both present or both absent. Immutable: the
-- supply_runs_immutable trigger refuses every UPDATE; rows go when they fall out of the
-- newest ten, or with their entry (ON DELETE CASCADE). Unlike envelopes and changes,
-- TRUNCATE is not refused: deleting runs is allowed, and TRUNCATE only deletes.
CREATE TABLE supply_runs (
    id             bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    entry_id       bigint      NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    ran_at         timestamptz NOT NULL,
    score          integer     NOT NULL CHECK (score BETWEEN 0 AND 100),
    verified       boolean     NOT NULL,
    latest_version text        NOT NULL DEFAULT '',
    facts          bytea       NOT NULL CHECK (length(facts) > 0),
    verdict        bytea       NOT NULL CHECK (length(verdict) > 0),
    envelope       bytea       CHECK (length(envelope) > 0),
    key_id         text        CHECK (key_id <> ''),
    CHECK ((key_id IS NULL) = (envelope IS NULL))
);

-- SupplyRuns (an entry's runs, newest first), SaveSupply's pruning and WalkSupply (each
-- entry's newest run, LIMIT 1 per entry): all read an entry's runs in this order.
CREATE INDEX supply_runs_entry_ran ON supply_runs (entry_id, ran_at DESC, id DESC);

CREATE FUNCTION supply_runs_immutable() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'supply runs are immutable'
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$;

CREATE TRIGGER supply_runs_immutable
BEFORE UPDATE ON supply_runs
FOR EACH ROW EXECUTE FUNCTION supply_runs_immutable();

-- due: the reason 'supply' (the weekly supply-chain checks) joins the four of
-- 0001_init.sql. due_reason_check is the name PostgreSQL gave 0001's unnamed column
-- CHECK (table_column_check); should it be named otherwise, DROP CONSTRAINT fails and
-- the migration with it, rather than leaving the old check beside the new one. Adding
-- the check validates the existing rows, under the ACCESS EXCLUSIVE lock the ALTER
-- TABLE takes: due holds a few rows per entry.
ALTER TABLE due DROP CONSTRAINT due_reason_check;
ALTER TABLE due ADD CONSTRAINT due_reason_check
    CHECK (reason IN ('cadence', 'confirm', 'status', 'manual', 'supply'));
