-- The transparency log (issue 15): where each ledger row sits in the log, the checkpoints
-- the log published, and the key document's versions as ledger records. Mirrored by
-- migrations/sqlite/0009_log.sql.
--
-- ledger.log_index and ledger_tombstones.log_index are a row's index in the log: NULL
-- until the log's appender has integrated its leaf, then seq - 1, set once (the leaf of
-- number n is the log's entry n-1, always). The schema allows exactly one update of
-- each: NULL to seq - 1. Every other guard of 0006 and 0007 stays: a record is inserted
-- pending and unlogged, numbered once, never otherwise changed; a tombstone is never
-- changed but for being logged. A record removed with its entry has no row left to hold
-- an index: its tombstone lists it, and the log holds a leaf for its number all the same.
ALTER TABLE ledger ADD COLUMN log_index bigint
    CHECK (log_index IS NULL OR (seq IS NOT NULL AND log_index = seq - 1));
ALTER TABLE ledger_tombstones ADD COLUMN log_index bigint
    CHECK (log_index IS NULL OR log_index = seq - 1);

-- The rows the appender has yet to mark, in number order: a handful at a time, so the
-- index stays small however large the ledger grows.
CREATE INDEX ledger_unlogged ON ledger (seq) WHERE log_index IS NULL AND seq IS NOT NULL;

-- Logged once: from NULL to the number the CHECK allows, never back, never again.
CREATE FUNCTION ledger_logged_once() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.log_index IS NOT NULL OR NEW.log_index IS NULL THEN
        RAISE EXCEPTION '% row % is logged once, at index seq - 1', TG_TABLE_NAME, OLD.seq
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER ledger_logged_once BEFORE UPDATE OF log_index ON ledger
FOR EACH ROW EXECUTE FUNCTION ledger_logged_once();

-- Tombstones were refused every update; now every update but of log_index.
DROP TRIGGER ledger_tombstones_immutable ON ledger_tombstones;
CREATE TRIGGER ledger_tombstones_immutable
BEFORE UPDATE OF seq, entry_id, entry_slug, reason, removed, deleted_at OR DELETE ON ledger_tombstones
FOR EACH ROW EXECUTE FUNCTION ledger_refuse();
CREATE TRIGGER ledger_tombstones_logged_once BEFORE UPDATE OF log_index ON ledger_tombstones
FOR EACH ROW EXECUTE FUNCTION ledger_logged_once();

-- Every distinct checkpoint note the log published (tlog-checkpoint, signed-note, with
-- the cosignatures it carried), so that a bundle can name the earliest checkpoint that
-- holds its record and the one before it. note_sha256 is the SHA-256 of note: a note is
-- stored once. cosigned: the note carries a signature besides the log's own.
CREATE TABLE log_checkpoints (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    size        bigint      NOT NULL CHECK (size >= 0),
    root_hash   bytea       NOT NULL CHECK (length(root_hash) = 32),
    note        bytea       NOT NULL CHECK (length(note) BETWEEN 1 AND 65536),
    note_sha256 bytea       NOT NULL UNIQUE CHECK (note_sha256 = sha256(note)),
    seen_at     timestamptz NOT NULL,
    cosigned    boolean     NOT NULL
);

CREATE INDEX log_checkpoints_size ON log_checkpoints (size, seen_at);

CREATE TRIGGER log_checkpoints_immutable BEFORE UPDATE OR DELETE ON log_checkpoints
FOR EACH ROW EXECUTE FUNCTION ledger_refuse();
CREATE TRIGGER log_checkpoints_no_truncate BEFORE TRUNCATE ON log_checkpoints
FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse();

-- The key document's versions: each is a ledger record of kind 'keys' (a signed
-- keys/v1 statement), numbered and logged like every other record; this table says
-- which version each is. A version is stored once and never changed.
CREATE TABLE key_document_versions (
    version         integer     PRIMARY KEY CHECK (version >= 1),
    ledger_id       bigint      NOT NULL UNIQUE REFERENCES ledger (id),
    issued_at       timestamptz NOT NULL,
    document_digest text        NOT NULL CHECK (length(document_digest) BETWEEN 1 AND 200)
);

CREATE TRIGGER key_document_versions_immutable BEFORE UPDATE OR DELETE ON key_document_versions
FOR EACH ROW EXECUTE FUNCTION ledger_refuse();
CREATE TRIGGER key_document_versions_no_truncate BEFORE TRUNCATE ON key_document_versions
FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse();
