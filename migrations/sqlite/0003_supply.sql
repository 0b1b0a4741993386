-- Supply-chain runs on SQLite, and the due reason that schedules them. Conventions as
-- in 0001_init.sql (STRICT tables, times in Unix ms).

-- supply_runs: one run of the supply-chain checks of an entry each (seed 004).
-- SaveSupply inserts a run and, in the same transaction, deletes the entry's runs
-- beyond the newest ten (by ran_at, then id), so an entry has at most ten. facts and
-- verdict are JSON documents (checks/supply.Facts and .Verdict) and may hold
-- third-party text; the store checks that they are valid JSON and bounds their sizes
-- before writing. key_id and envelope (the signed supply statement) are both present or
-- both absent. Immutable: the supply_runs_immutable trigger refuses every UPDATE; rows
-- go when they fall out of the newest ten, or with their entry (ON DELETE CASCADE).
-- AUTOINCREMENT: ids only grow, so the id breaks ties of ran_at in storing order.
CREATE TABLE supply_runs (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    entry_id       INTEGER NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    ran_at         INTEGER NOT NULL,
    score          INTEGER NOT NULL CHECK (score BETWEEN 0 AND 100),
    verified       INTEGER NOT NULL CHECK (verified IN (0, 1)),
    latest_version TEXT    NOT NULL DEFAULT '',
    facts          BLOB    NOT NULL CHECK (length(facts) > 0),
    verdict        BLOB    NOT NULL CHECK (length(verdict) > 0),
    envelope       BLOB    CHECK (length(envelope) > 0),
    key_id         TEXT    CHECK (key_id <> ''),
    CHECK ((key_id IS NULL) = (envelope IS NULL))
) STRICT;

-- SupplyRuns (an entry's runs, newest first), SaveSupply's pruning and WalkSupply (each
-- entry's newest run): all read an entry's runs in this order. It holds the rowid, so
-- finding the runs to keep or the newest one never reads a row's documents.
CREATE INDEX supply_runs_entry_ran ON supply_runs (entry_id, ran_at DESC, id DESC);

CREATE TRIGGER supply_runs_immutable
BEFORE UPDATE ON supply_runs
BEGIN
    SELECT RAISE(ABORT, 'supply runs are immutable');
END;

-- due: the reason 'supply' (the weekly supply-chain checks) joins the four of
-- 0001_init.sql. SQLite cannot alter a CHECK constraint, so the table is rebuilt: steps
-- 2 to 11 of https://sqlite.org/lang_altertable.html#otheralter, inside the
-- transaction the store applies this file in. Foreign keys stay enforced: PRAGMA
-- foreign_keys is a no-op inside a transaction (step 1 cannot be done here), and it
-- need not be off, because no table references due, so dropping it deletes nothing
-- elsewhere, and the copied rows are checked against entries as they are inserted
-- (which step 10's foreign_key_check would do afterwards). due has no trigger or view,
-- and one index besides its primary key, due_at, which goes with the old table and is
-- made again.
CREATE TABLE due_new (
    entry_id INTEGER NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    reason   TEXT    NOT NULL CHECK (reason IN ('cadence', 'confirm', 'status', 'manual', 'supply')),
    at       INTEGER NOT NULL,
    PRIMARY KEY (entry_id, reason)
) STRICT, WITHOUT ROWID;

INSERT INTO due_new (entry_id, reason, at) SELECT entry_id, reason, at FROM due;

DROP TABLE due;

ALTER TABLE due_new RENAME TO due;

CREATE INDEX due_at ON due (at);
