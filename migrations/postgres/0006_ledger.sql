-- The ledger: one append-only table of every signed record (issue 13), replacing the
-- three places envelopes lived (envelopes, changes.envelope, supply_runs.envelope). It
-- mirrors migrations/sqlite/0006_ledger.sql table for table and column for column, with
-- the types of 0001_init.sql.
--
-- ledger: one signed record each. seq is the record's sequence number (the future
-- transparency-log index); kind what it signs ('probe', 'change', 'supply'; the pattern
-- leaves room for the kinds to come, which the store names); entry_id the entry it is
-- about (NULL for a record about no entry, such as a key document to come);
-- payload_digest the hex SHA-256 of the signed payload; envelope the DSSE envelope, byte
-- for byte as signed; created_at when it was stored. Rounds (observations), changes and
-- supply runs reference their record by ledger_seq.
--
-- Sequence numbers come from ledger_counter, one row, which a writer increments in the
-- transaction that inserts the record (UPDATE … SET next = next + 1). The row lock is held
-- until that transaction ends, so writers take numbers one after the other and commit in
-- number order: a second writer waits for the first to commit (or roll back, which gives
-- the number back) before it gets the next number. Hence every number is used exactly once
-- (by a ledger row or a tombstone), there are no gaps, and a reader always sees a prefix
-- 1..n of the numbers (but for the records removed with their entry, which tombstones
-- list). The insert triggers below refuse a number that is not the one just taken.
--
-- Nothing updates a ledger row: ledger_immutable refuses every UPDATE, and TRUNCATE.
-- A row is deleted only with its entry (ON DELETE CASCADE from entries), and only after
-- the deletion is recorded: ledger_delete_recorded refuses the DELETE of a row whose
-- entry still exists or whose removal no ledger_removed row records. DeleteEntry first
-- inserts a tombstone (ledger_tombstones, its own sequence number, the entry and why)
-- and one ledger_removed row per record of the entry (seq, kind, payload digest), then
-- deletes the entry. Tombstones and removal rows are never updated or deleted.
CREATE TABLE ledger_counter (
    one  boolean PRIMARY KEY DEFAULT true CHECK (one),
    next bigint  NOT NULL CHECK (next >= 1)
);

CREATE TABLE ledger (
    seq            bigint      PRIMARY KEY CHECK (seq >= 1),
    kind           text        NOT NULL CHECK (kind ~ '^[a-z][a-z0-9_]{0,31}$'),
    entry_id       bigint      REFERENCES entries (id) ON DELETE CASCADE,
    payload_digest text        NOT NULL CHECK (payload_digest ~ '^[0-9a-f]{64}$'),
    key_id         text        NOT NULL CHECK (key_id <> ''),
    envelope       bytea       NOT NULL CHECK (length(envelope) > 0),
    created_at     timestamptz NOT NULL
);

-- An entry's records, in order (export by entry; the cascade of an entry's deletion).
CREATE INDEX ledger_entry ON ledger (entry_id, seq);

CREATE TABLE ledger_tombstones (
    seq        bigint      PRIMARY KEY CHECK (seq >= 1),
    entry_id   bigint      NOT NULL,
    entry_slug text        NOT NULL,
    -- One line: no C0 control character or DEL.
    reason     text        NOT NULL CHECK (
                   char_length(reason) BETWEEN 1 AND 200 AND reason !~ '[\x01-\x1f\x7f]'),
    removed    bigint      NOT NULL CHECK (removed >= 0),
    deleted_at timestamptz NOT NULL
);

CREATE TABLE ledger_removed (
    seq            bigint PRIMARY KEY,
    tombstone      bigint NOT NULL REFERENCES ledger_tombstones (seq),
    kind           text   NOT NULL,
    payload_digest text   NOT NULL
);

CREATE INDEX ledger_removed_tombstone ON ledger_removed (tombstone, seq);

-- The records as they were stored, numbered. Stored order: within each table the order
-- of its ids (rows were inserted in id order), across tables the time each was stored
-- (envelopes.created_at, changes.recorded_at, supply_runs.ran_at), made non-decreasing
-- along each table's ids so that the ids' order is kept; at one time a round comes
-- before a change (which compares rounds stored before it), a change before a supply run.
-- A change's or supply run's payload digest was not stored: it is computed here, the
-- SHA-256 of the envelope's base64 payload, as the store computes it from what was signed.
CREATE TEMPORARY TABLE ledger_0006 ON COMMIT DROP AS
SELECT row_number() OVER (ORDER BY at, rank, id) AS seq, kind, id, entry_id, payload_digest,
       key_id, envelope, created_at
FROM (
    SELECT s.*, max(s.created_at) OVER (PARTITION BY s.rank ORDER BY s.id ROWS UNBOUNDED PRECEDING) AS at
    FROM (
        SELECT 1 AS rank, 'probe' AS kind, v.observation_id AS id, o.entry_id, v.payload_digest,
               v.key_id, v.envelope, v.created_at
        FROM envelopes v JOIN observations o ON o.id = v.observation_id
        UNION ALL
        SELECT 2, 'change', c.id, c.entry_id,
               encode(sha256(decode(convert_from(c.envelope, 'UTF8')::jsonb ->> 'payload', 'base64')), 'hex'),
               c.key_id, c.envelope, c.recorded_at
        FROM changes c WHERE c.envelope IS NOT NULL
        UNION ALL
        SELECT 3, 'supply', r.id, r.entry_id,
               encode(sha256(decode(convert_from(r.envelope, 'UTF8')::jsonb ->> 'payload', 'base64')), 'hex'),
               r.key_id, r.envelope, r.ran_at
        FROM supply_runs r WHERE r.envelope IS NOT NULL
    ) s
) m;

INSERT INTO ledger (seq, kind, entry_id, payload_digest, key_id, envelope, created_at)
SELECT seq, kind, entry_id, payload_digest, key_id, envelope, created_at FROM ledger_0006;

INSERT INTO ledger_counter (one, next) SELECT true, count(*) + 1 FROM ledger_0006;

-- Rounds: observations.ledger_seq replaces the envelopes table. A round is signed exactly
-- when it references its record (observations_signed_recorded); the reference never
-- changes (observations_ledger_fixed).
ALTER TABLE observations ADD COLUMN ledger_seq bigint REFERENCES ledger (seq) ON DELETE CASCADE;
UPDATE observations o SET ledger_seq = m.seq FROM ledger_0006 m WHERE m.kind = 'probe' AND m.id = o.id;
ALTER TABLE observations ADD CONSTRAINT observations_signed_recorded CHECK (signed = (ledger_seq IS NOT NULL));
CREATE UNIQUE INDEX observations_ledger ON observations (ledger_seq) WHERE ledger_seq IS NOT NULL;
DROP TABLE envelopes;
DROP FUNCTION envelopes_immutable();
DROP FUNCTION envelopes_signed_only();

CREATE FUNCTION observations_ledger_fixed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'an observation''s ledger record cannot change'
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$;

CREATE TRIGGER observations_ledger_fixed
BEFORE UPDATE OF ledger_seq ON observations
FOR EACH ROW WHEN (OLD.ledger_seq IS DISTINCT FROM NEW.ledger_seq)
EXECUTE FUNCTION observations_ledger_fixed();

-- Changes: changes.ledger_seq replaces key_id and envelope; immutable as before, the
-- reference included.
DROP TRIGGER changes_immutable ON changes;
ALTER TABLE changes ADD COLUMN ledger_seq bigint REFERENCES ledger (seq) ON DELETE CASCADE;
UPDATE changes c SET ledger_seq = m.seq FROM ledger_0006 m WHERE m.kind = 'change' AND m.id = c.id;
ALTER TABLE changes DROP COLUMN envelope, DROP COLUMN key_id;
CREATE UNIQUE INDEX changes_ledger ON changes (ledger_seq) WHERE ledger_seq IS NOT NULL;
CREATE TRIGGER changes_immutable
BEFORE UPDATE OF id, entry_id, number, recorded_at, origin, kind, summary, details, badges,
    before_observation, after_observation, ledger_seq ON changes
FOR EACH ROW EXECUTE FUNCTION changes_immutable();

-- Supply runs: supply_runs.ledger_seq replaces envelope and key_id. Runs are no longer
-- pruned to the newest ten (seed 004's "last ten results" is what the pages show), so
-- they are now kept like the rest: TRUNCATE is refused too.
DROP TRIGGER supply_runs_immutable ON supply_runs;
ALTER TABLE supply_runs ADD COLUMN ledger_seq bigint REFERENCES ledger (seq) ON DELETE CASCADE;
UPDATE supply_runs r SET ledger_seq = m.seq FROM ledger_0006 m WHERE m.kind = 'supply' AND m.id = r.id;
ALTER TABLE supply_runs DROP COLUMN envelope, DROP COLUMN key_id;
CREATE UNIQUE INDEX supply_runs_ledger ON supply_runs (ledger_seq) WHERE ledger_seq IS NOT NULL;
CREATE TRIGGER supply_runs_immutable
BEFORE UPDATE ON supply_runs
FOR EACH ROW EXECUTE FUNCTION supply_runs_immutable();
CREATE TRIGGER supply_runs_no_truncate
BEFORE TRUNCATE ON supply_runs
FOR EACH STATEMENT EXECUTE FUNCTION supply_runs_immutable();

-- Nothing was lost: every envelope has its record, and every record its row.
DO $$
BEGIN
    IF (SELECT count(*) FROM ledger_0006) <> (SELECT count(*) FROM observations WHERE ledger_seq IS NOT NULL)
            + (SELECT count(*) FROM changes WHERE ledger_seq IS NOT NULL)
            + (SELECT count(*) FROM supply_runs WHERE ledger_seq IS NOT NULL) THEN
        RAISE EXCEPTION 'migration 0006: a record lost its row';
    END IF;
END;
$$;

-- The guards, created after the records were copied in.
CREATE FUNCTION ledger_refuse() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only', TG_TABLE_NAME
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$;

CREATE FUNCTION ledger_counter_forward() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.next <> OLD.next + 1 OR NEW.one IS DISTINCT FROM OLD.one THEN
        RAISE EXCEPTION 'the ledger counter only counts up by one'
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$;

-- A new record or tombstone takes the number its transaction just took, and no other
-- row holds it.
CREATE FUNCTION ledger_number_taken() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.seq IS DISTINCT FROM (SELECT next - 1 FROM ledger_counter)
            OR EXISTS (SELECT 1 FROM ledger WHERE seq = NEW.seq)
            OR EXISTS (SELECT 1 FROM ledger_tombstones WHERE seq = NEW.seq) THEN
        RAISE EXCEPTION 'sequence number % is not the one just taken from the ledger counter', NEW.seq
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$;

CREATE FUNCTION ledger_delete_recorded() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM entries WHERE id = OLD.entry_id)
            OR NOT EXISTS (SELECT 1 FROM ledger_removed WHERE seq = OLD.seq) THEN
        RAISE EXCEPTION 'ledger record % goes only with its entry, recorded in a tombstone', OLD.seq
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN OLD;
END;
$$;

CREATE FUNCTION ledger_removed_live() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM ledger
                   WHERE seq = NEW.seq AND kind = NEW.kind AND payload_digest = NEW.payload_digest) THEN
        RAISE EXCEPTION 'ledger_removed names record %, which is not stored as named', NEW.seq
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER ledger_counter_forward BEFORE UPDATE ON ledger_counter
FOR EACH ROW EXECUTE FUNCTION ledger_counter_forward();
CREATE TRIGGER ledger_counter_kept BEFORE DELETE ON ledger_counter
FOR EACH ROW EXECUTE FUNCTION ledger_refuse();
CREATE TRIGGER ledger_counter_no_truncate BEFORE TRUNCATE ON ledger_counter
FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse();

CREATE TRIGGER ledger_number_taken BEFORE INSERT ON ledger
FOR EACH ROW EXECUTE FUNCTION ledger_number_taken();
CREATE TRIGGER ledger_immutable BEFORE UPDATE ON ledger
FOR EACH ROW EXECUTE FUNCTION ledger_refuse();
CREATE TRIGGER ledger_delete_recorded BEFORE DELETE ON ledger
FOR EACH ROW EXECUTE FUNCTION ledger_delete_recorded();
CREATE TRIGGER ledger_no_truncate BEFORE TRUNCATE ON ledger
FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse();

CREATE TRIGGER ledger_tombstones_number_taken BEFORE INSERT ON ledger_tombstones
FOR EACH ROW EXECUTE FUNCTION ledger_number_taken();
CREATE TRIGGER ledger_tombstones_immutable BEFORE UPDATE OR DELETE ON ledger_tombstones
FOR EACH ROW EXECUTE FUNCTION ledger_refuse();
CREATE TRIGGER ledger_tombstones_no_truncate BEFORE TRUNCATE ON ledger_tombstones
FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse();

CREATE TRIGGER ledger_removed_live BEFORE INSERT ON ledger_removed
FOR EACH ROW EXECUTE FUNCTION ledger_removed_live();
CREATE TRIGGER ledger_removed_immutable BEFORE UPDATE OR DELETE ON ledger_removed
FOR EACH ROW EXECUTE FUNCTION ledger_refuse();
CREATE TRIGGER ledger_removed_no_truncate BEFORE TRUNCATE ON ledger_removed
FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse();
