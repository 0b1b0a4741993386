-- The newest signed round of each entry, by id (issue 16): the round whose findings,
-- tool count and protocol version migration 0010 keeps on the entry's row
-- (signed_failed, signed_observed_risk, signed_tool_count, signed_protocol). The
-- entry's pages, its badge and its Checks tab read that round through this column
-- (EntryDigest.SignedRound) instead of looking back through the newest rounds, so a
-- signed round is found however many unsigned rounds came after it, and what the pages
-- show of it is the round the directory counts. Mirrored by
-- migrations/sqlite/0014_signed_round.sql.
--
--   signed_round_id   the id of the newest signed round (by started_at, then id, as
--                     Rounds orders them); NULL: no signed round.
--
-- Its owner is entry_round_facts, the function of 0010 that the trigger
-- rounds_entry_facts runs on every round inserted: it now sets the id with the other
-- facts of the same round, in the same statement. No foreign key: a round is deleted
-- only with its entry, and a round's signed flag never changes (rounds_signed_fixed).
ALTER TABLE entries ADD COLUMN signed_round_id bigint;

CREATE OR REPLACE FUNCTION entry_round_facts(entry bigint) RETURNS void
LANGUAGE sql AS $$
    UPDATE entries SET
        last_uptime = (SELECT o.uptime FROM rounds o WHERE o.entry_id = entry
            ORDER BY o.started_at DESC, o.id DESC LIMIT 1),
        (signed_round_id, signed_failed, signed_observed_risk, signed_tool_count, signed_protocol) = (
            SELECT o.id, o.failed, o.observed_risk, o.tool_count, o.protocol_version FROM rounds o
            WHERE o.entry_id = entry AND o.signed
            ORDER BY o.started_at DESC, o.id DESC LIMIT 1)
    WHERE id = entry;
$$;

-- The entries already stored, through the owner.
SELECT entry_round_facts(id) FROM entries;
