-- Operators and their audit log (issue 18). Package operators owns the rules;
-- store/sql_operators.go reads and writes these tables. Mirrored by
-- migrations/sqlite/0020_operators.sql. (Migrations 0017 to 0019 are other parts'.)
--
-- An operator is an account granted the role from the CLI ("probity operators add
-- EMAIL"); deleting the account removes the role.
CREATE TABLE operators (
    account_id bigint      PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    granted_at timestamptz NOT NULL
);

-- The audit log: one row per operator action, appended and never changed. actor_id
-- is the acting operator's account (no reference: the row outlives the account), NULL
-- for the CLI; actor says who in words ("cli", "operator"). entry_slug and entry_id
-- name the entry acted on, if any (no reference: the row outlives the entry's
-- deletion); target what in it (a change number, a claim, a dispute); detail the
-- reason and what else the action records (text or JSON, bounded).
CREATE TABLE operator_actions (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at         timestamptz NOT NULL,
    actor_id   bigint,
    actor      text        NOT NULL CHECK (length(actor) BETWEEN 1 AND 64),
    action     text        NOT NULL CHECK (length(action) BETWEEN 1 AND 64),
    entry_slug text        NOT NULL DEFAULT '' CHECK (length(entry_slug) <= 200),
    entry_id   bigint,
    target     text        NOT NULL DEFAULT '' CHECK (length(target) <= 2048),
    detail     text        NOT NULL DEFAULT '' CHECK (length(detail) <= 4000)
);
CREATE INDEX operator_actions_entry ON operator_actions (entry_slug, id) WHERE entry_slug <> '';

-- Append-only: the schema refuses every UPDATE, DELETE and TRUNCATE of the log.
CREATE FUNCTION operator_actions_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'operator_actions is append-only: % refused', TG_OP;
END $$;

CREATE TRIGGER operator_actions_no_change
BEFORE UPDATE OR DELETE ON operator_actions
FOR EACH ROW EXECUTE FUNCTION operator_actions_append_only();

CREATE TRIGGER operator_actions_no_truncate
BEFORE TRUNCATE ON operator_actions
FOR EACH STATEMENT EXECUTE FUNCTION operator_actions_append_only();
