-- Claims (issue 18): an account proves that it controls a part of an entry (its remote
-- endpoint, package or repository) and so becomes one of the entry's maintainers. The
-- rules are package claims'; store/sql_claims.go reads and writes these tables.
-- Mirrored by migrations/sqlite/0016_claims.sql. (Migration 0015 is another issue's.)
--
-- A claim token is what the account publishes as its proof: random, shown once, stored
-- as its SHA-256 only, bound to the account, the entry, the method and the part
-- (target, the part's locator), valid until expires_at and used once (used_at), when a
-- check finds it and the claim is made.
CREATE TABLE claim_tokens (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    token_hash bytea       NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    account_id bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    entry_id   bigint      NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    method     text        NOT NULL CHECK (method IN ('well-known', 'dns', 'npm', 'pypi', 'github-permission', 'repo-file')),
    target     text        NOT NULL CHECK (length(target) BETWEEN 1 AND 2048),
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL CHECK (expires_at > created_at),
    used_at    timestamptz
);
CREATE INDEX claim_tokens_account ON claim_tokens (account_id, expires_at);
CREATE INDEX claim_tokens_entry ON claim_tokens (entry_id);
CREATE INDEX claim_tokens_expires ON claim_tokens (expires_at);

-- A claim: the account proved control of the part target of the entry by method, with
-- proof (what was found where, one line), first at verified_at. The scheduled re-check
-- proves it again (last_checked_at) and lapses it (lapsed_at, lapse_reason) when the
-- proof is gone; a new proof of the same account, entry, method and part makes it live
-- again. token_hash is the proof's token (NULL for github-permission, which has none).
-- One row per account, entry, method and part.
CREATE TABLE claims (
    id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id      bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    entry_id        bigint      NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    method          text        NOT NULL CHECK (method IN ('well-known', 'dns', 'npm', 'pypi', 'github-permission', 'repo-file')),
    target          text        NOT NULL CHECK (length(target) BETWEEN 1 AND 2048),
    token_hash      bytea       CHECK (token_hash IS NULL OR length(token_hash) = 32),
    proof           text        NOT NULL CHECK (length(proof) <= 500),
    verified_at     timestamptz NOT NULL,
    last_checked_at timestamptz NOT NULL CHECK (last_checked_at >= verified_at),
    lapsed_at       timestamptz,
    lapse_reason    text        CHECK (lapse_reason IS NULL OR length(lapse_reason) <= 500),
    CHECK ((lapsed_at IS NULL) = (lapse_reason IS NULL)),
    UNIQUE (account_id, entry_id, method, target)
);
CREATE INDEX claims_entry ON claims (entry_id) WHERE lapsed_at IS NULL;
CREATE INDEX claims_checked ON claims (last_checked_at, id) WHERE lapsed_at IS NULL;

-- entries.claimed is owned by this trigger from here on: an entry is claimed while it
-- has at least one live claim (lapsed_at NULL). It locks the entry's row (FOR NO KEY
-- UPDATE, the lock every writer of an entry takes) before it counts, so that two
-- transactions that lapse an entry's last two claims at once see each other's change:
-- the second counts after the first committed. Every write of a claim takes the
-- claim's row first and the entry's here, in that order (DeleteEntry, which takes the
-- entry first, is the exception; PostgreSQL ends such a rare deadlock by failing one of
-- the two transactions, to be run again).
CREATE FUNCTION claims_set_claimed() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    eid bigint;
BEGIN
    IF TG_OP = 'DELETE' THEN
        eid := OLD.entry_id;
    ELSE
        eid := NEW.entry_id;
    END IF;
    PERFORM 1 FROM entries WHERE id = eid FOR NO KEY UPDATE;
    UPDATE entries SET claimed = EXISTS (SELECT 1 FROM claims WHERE entry_id = eid AND lapsed_at IS NULL)
    WHERE id = eid AND claimed IS DISTINCT FROM EXISTS (SELECT 1 FROM claims WHERE entry_id = eid AND lapsed_at IS NULL);
    RETURN NULL;
END $$;

CREATE TRIGGER claims_claimed
AFTER INSERT OR DELETE OR UPDATE OF lapsed_at ON claims
FOR EACH ROW EXECUTE FUNCTION claims_set_claimed();
