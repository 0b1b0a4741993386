-- Disputes and outcomes (issue 18): a maintainer contests one check result of a signed
-- round in public, and an operator decides. Each is a signed record of the ledger (kind
-- dispute or outcome, the entry's), stored with its row in one transaction; package
-- disputes decides what may be stored, store/sql_disputes.go reads and writes these
-- tables. Mirrored by migrations/sqlite/0019_disputes.sql. (0017 and 0018 are other
-- parts' of issue 18.)
--
-- A dispute: the entry's number-th (1, 2, …), of the check check_id of the round
-- round_id, whose status the round recorded as status; the maintainer's statement and
-- evidence URL (plain text, bounded as the dispute/v1 format bounds them); opened_by is
-- the account that opened it: private, never shown nor signed, kept only to rate-limit
-- and to answer abuse (NULL once the account is deleted: the public record stays).
-- closed is set when the outcome is stored, so that at most one dispute per entry,
-- round and check is open (disputes_open). The round's row is never altered.
CREATE TABLE disputes (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    entry_id    bigint      NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    number      bigint      NOT NULL CHECK (number >= 1),
    round_id    bigint      NOT NULL REFERENCES rounds (id) ON DELETE CASCADE,
    check_id    text        NOT NULL CHECK (check_id ~ '^[a-z][a-z0-9_]{0,63}$'),
    status      text        NOT NULL CHECK (status IN ('VERIFIED', 'FAILED', 'OBSERVED_RISK', 'UNVERIFIED')),
    statement   text        NOT NULL CHECK (char_length(statement) BETWEEN 1 AND 2000),
    evidence    text        NOT NULL DEFAULT '' CHECK (length(evidence) <= 2048),
    opened_at   timestamptz NOT NULL,
    opened_by   bigint      REFERENCES accounts (id) ON DELETE SET NULL,
    ledger_id   bigint      NOT NULL UNIQUE REFERENCES ledger (id) ON DELETE CASCADE,
    closed      boolean     NOT NULL DEFAULT false,
    UNIQUE (entry_id, number)
);
CREATE UNIQUE INDEX disputes_open ON disputes (entry_id, round_id, check_id) WHERE NOT closed;
CREATE INDEX disputes_queue ON disputes (opened_at, id) WHERE NOT closed;
CREATE INDEX disputes_account ON disputes (opened_by, opened_at);

-- An outcome: the operator's decision on one dispute (one outcome per dispute), with
-- the suite version that corrects the finding (decision corrected only) and a reason;
-- decided_by is the operator's account: private, never shown nor signed.
CREATE TABLE outcomes (
    id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    dispute_id    bigint      NOT NULL UNIQUE REFERENCES disputes (id) ON DELETE CASCADE,
    decision      text        NOT NULL CHECK (decision IN ('upheld', 'rejected', 'corrected')),
    suite_version text        NOT NULL DEFAULT '' CHECK (length(suite_version) <= 64),
    reason        text        NOT NULL CHECK (char_length(reason) BETWEEN 1 AND 2000),
    decided_at    timestamptz NOT NULL,
    decided_by    bigint      REFERENCES accounts (id) ON DELETE SET NULL,
    ledger_id     bigint      NOT NULL UNIQUE REFERENCES ledger (id) ON DELETE CASCADE,
    CHECK ((decision = 'corrected') = (suite_version <> ''))
);
