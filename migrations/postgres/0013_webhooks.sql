-- Webhooks (issue 17): URLs an account registers to be told, by a signed POST, of each
-- change of the entries it follows (package notify/webhook), and their deliveries.
--
-- webhooks: at most five per account, enforced here by slot (1 to 5, unique per
-- account: a sixth insert finds no free slot, and two racing inserts cannot take the
-- same one). url is the URL as registered (https, or http to loopback in tests and the
-- demo; at most 2048 bytes; checked by the application). consecutive_failures counts
-- the failed delivery attempts since the last success; at 10 the webhook is disabled:
-- disabled_at and disabled_reason (what the owner is shown) are both set or both NULL.
--
-- webhook_deliveries: one row per change per webhook. message_id is the webhook-id
-- header, the same on every attempt (receivers deduplicate on it); it is derived from
-- the webhook, the entry and the change number, so planning the same change twice adds
-- nothing. entry_id is a plain number, not a reference: the delivery log outlives an
-- entry's deletion. payload is the exact JSON body (no server text). A pending row is
-- due at next_attempt_at; a worker that claims it holds it until lease_until. Finished
-- rows (delivered or failed) have finished_at; the store keeps the newest 100 rows per
-- webhook (the delivery log its owner reads).
--
-- webhook_planner: one row, how far the planner has read the changes.
CREATE TABLE webhooks (
    id                   bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id           bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    slot                 smallint    NOT NULL CHECK (slot BETWEEN 1 AND 5),
    url                  text        NOT NULL CHECK (length(url) BETWEEN 8 AND 2048),
    created_at           timestamptz NOT NULL,
    consecutive_failures integer     NOT NULL DEFAULT 0 CHECK (consecutive_failures >= 0),
    disabled_at          timestamptz,
    disabled_reason      text        CHECK (disabled_reason IS NULL OR length(disabled_reason) BETWEEN 1 AND 500),
    CONSTRAINT webhooks_account_slot UNIQUE (account_id, slot),
    CONSTRAINT webhooks_account_url UNIQUE (account_id, url),
    CHECK ((disabled_at IS NULL) = (disabled_reason IS NULL))
);

CREATE TABLE webhook_deliveries (
    id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    webhook_id      bigint      NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    message_id      text        NOT NULL UNIQUE CHECK (length(message_id) BETWEEN 1 AND 100),
    entry_id        bigint      NOT NULL CHECK (entry_id > 0),
    change_number   bigint      NOT NULL CHECK (change_number >= 1),
    payload         bytea       NOT NULL CHECK (length(payload) BETWEEN 2 AND 16384),
    created_at      timestamptz NOT NULL,
    state           text        NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts        integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at timestamptz NOT NULL,
    lease_until     timestamptz,
    last_attempt_at timestamptz,
    last_status     integer     NOT NULL DEFAULT 0 CHECK (last_status BETWEEN 0 AND 999),
    last_error      text        NOT NULL DEFAULT '' CHECK (length(last_error) <= 500),
    finished_at     timestamptz,
    CHECK ((state = 'pending') = (finished_at IS NULL))
);
-- The worker's question: which pending deliveries are due.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
-- A webhook's delivery log, newest first, and its pruning.
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (webhook_id, id);

CREATE TABLE webhook_planner (
    id              boolean     PRIMARY KEY DEFAULT true CHECK (id),
    planned_through timestamptz NOT NULL
);
