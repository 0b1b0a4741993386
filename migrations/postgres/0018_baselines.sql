-- Approved baselines (issue 18, "Approve a baseline"); mirrors
-- migrations/sqlite/0018_baselines.sql. (Migration 0017 is another part's.)
--
-- baselines: one row per baseline an entry's maintainer approved, numbered 1, 2, … per
-- entry; the newest number is the entry's current baseline, which the
-- *_unchanged_vs_approved checks of its rounds compare with. Each is a signed
-- baseline/v1 statement, stored as a ledger record of kind 'baseline' (ledger_id) in the
-- same transaction as the row (SaveBaseline). toolset, schema_fp and surface are the
-- approved fingerprints ("sha256:" + 64 hex), those of the basis round, named by its
-- public round id and its payload digest (hex), as the statement names it.
-- approved_by is the account that approved: kept for the operators, never shown and
-- never signed; NULL once that account is deleted. A baseline goes with its entry (its
-- ledger record with it, which the entry's tombstone lists); rows are never updated.
CREATE TABLE baselines (
    id                   bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    entry_id             bigint      NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    number               bigint      NOT NULL CHECK (number >= 1),
    toolset              text        NOT NULL CHECK (toolset ~ '^sha256:[0-9a-f]{64}$'),
    schema_fp            text        NOT NULL CHECK (schema_fp ~ '^sha256:[0-9a-f]{64}$'),
    surface              text        NOT NULL CHECK (surface ~ '^sha256:[0-9a-f]{64}$'),
    tool_count           integer     NOT NULL CHECK (tool_count BETWEEN 1 AND 10000),
    basis_round_id       text        NOT NULL CHECK (length(basis_round_id) BETWEEN 1 AND 64),
    basis_payload_digest text        NOT NULL CHECK (basis_payload_digest ~ '^[0-9a-f]{64}$'),
    approved_at          timestamptz NOT NULL,
    approved_by          bigint      REFERENCES accounts (id) ON DELETE SET NULL,
    ledger_id            bigint      NOT NULL UNIQUE REFERENCES ledger (id) ON DELETE CASCADE,
    UNIQUE (entry_id, number)
);

CREATE FUNCTION baselines_refuse_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.approved_by IS NULL AND OLD.approved_by IS NOT NULL
        AND (NEW.id, NEW.entry_id, NEW.number, NEW.toolset, NEW.schema_fp, NEW.surface, NEW.tool_count,
             NEW.basis_round_id, NEW.basis_payload_digest, NEW.approved_at, NEW.ledger_id)
          = (OLD.id, OLD.entry_id, OLD.number, OLD.toolset, OLD.schema_fp, OLD.surface, OLD.tool_count,
             OLD.basis_round_id, OLD.basis_payload_digest, OLD.approved_at, OLD.ledger_id) THEN
        RETURN NEW; -- the approving account was deleted (ON DELETE SET NULL)
    END IF;
    RAISE EXCEPTION 'a baseline is never changed';
END;
$$;

CREATE TRIGGER baselines_immutable BEFORE UPDATE ON baselines
FOR EACH ROW EXECUTE FUNCTION baselines_refuse_update();
