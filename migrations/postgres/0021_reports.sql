-- Reports of harmful Verified servers, and the withdrawals of Verified that answer them
-- (issue 18, seed 004: a report is answered within 72 hours).
--
-- reports: one report a visitor sent about an entry. The text is kept for the operators
-- and shown as plain text; the contact e-mail is optional, never shown publicly, and
-- erased (set NULL) 30 days after the report is closed (reports.Service.Prune). due_at
-- is received_at + 72 hours. A report is open until an operator withdraws the entry's
-- Verified (withdrawn) or declines it, with a reason.
CREATE TABLE reports (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    entry_id    bigint      NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    text        text        NOT NULL CHECK (length(text) BETWEEN 1 AND 4000),
    contact     text        CHECK (contact IS NULL OR length(contact) BETWEEN 3 AND 254),
    received_at timestamptz NOT NULL,
    due_at      timestamptz NOT NULL CHECK (due_at > received_at),
    status      text        NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'withdrawn', 'declined')),
    decided_at  timestamptz,
    decided_by  bigint      REFERENCES accounts (id) ON DELETE SET NULL,
    reason      text        CHECK (reason IS NULL OR length(reason) BETWEEN 1 AND 2000),
    CHECK ((status = 'open') = (decided_at IS NULL)),
    CHECK ((status = 'open') = (reason IS NULL))
);
CREATE INDEX reports_open_due ON reports (due_at, id) WHERE status = 'open';
CREATE INDEX reports_entry ON reports (entry_id, received_at);
CREATE INDEX reports_closed ON reports (decided_at) WHERE contact IS NOT NULL AND status <> 'open';

-- withdrawals: each withdrawal/v1 record of an entry (withdrawn or restored), numbered
-- per entry, stored with its ledger record (kind withdrawal) in one transaction.
CREATE TABLE withdrawals (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    entry_id   bigint      NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    number     bigint      NOT NULL CHECK (number >= 1),
    action     text        NOT NULL CHECK (action IN ('withdrawn', 'restored')),
    reason     text        NOT NULL CHECK (length(reason) BETWEEN 1 AND 2000),
    at         timestamptz NOT NULL,
    supply_seq bigint      NOT NULL CHECK (supply_seq >= 1),
    ledger_id  bigint      NOT NULL UNIQUE REFERENCES ledger (id) ON DELETE CASCADE,
    UNIQUE (entry_id, number)
);

-- entries.verified_withdrawn is owned by this trigger: true while the entry's newest
-- withdrawal record says withdrawn. No supply run changes it; only a restored record.
ALTER TABLE entries ADD COLUMN verified_withdrawn boolean NOT NULL DEFAULT false;

CREATE FUNCTION withdrawals_set_withdrawn() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE entries SET verified_withdrawn = (NEW.action = 'withdrawn') WHERE id = NEW.entry_id;
    RETURN NULL;
END;
$$;

CREATE TRIGGER withdrawals_withdrawn AFTER INSERT ON withdrawals
FOR EACH ROW EXECUTE FUNCTION withdrawals_set_withdrawn();
