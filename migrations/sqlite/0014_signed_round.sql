-- The newest signed round of each entry, by id (issue 16); mirrors
-- migrations/postgres/0014_signed_round.sql, which documents the column. SQLite has no
-- stored functions: the trigger of 0010 that sets the newest signed round's facts is
-- replaced by the same trigger that sets its id with them, and the backfill repeats its
-- statement.
ALTER TABLE entries ADD COLUMN signed_round_id INTEGER;

DROP TRIGGER rounds_entry_facts;
CREATE TRIGGER rounds_entry_facts AFTER INSERT ON rounds
BEGIN
    UPDATE rounds SET
        failed = (SELECT count(*) FROM json_each(CAST(NEW.results AS TEXT)) x
            WHERE x.type = 'object' AND json_extract(x.value, '$.status') = 'FAILED'),
        observed_risk = (SELECT count(*) FROM json_each(CAST(NEW.results AS TEXT)) x
            WHERE x.type = 'object' AND json_extract(x.value, '$.status') = 'OBSERVED_RISK')
    WHERE id = NEW.id AND NEW.results IS NOT NULL
        AND CASE WHEN json_valid(CAST(NEW.results AS TEXT)) THEN json_type(CAST(NEW.results AS TEXT)) END = 'array';
    UPDATE entries SET
        last_uptime = (SELECT o.uptime FROM rounds o WHERE o.entry_id = NEW.entry_id
            ORDER BY o.started_at DESC, o.id DESC LIMIT 1),
        (signed_round_id, signed_failed, signed_observed_risk, signed_tool_count, signed_protocol) = (
            SELECT o.id, o.failed, o.observed_risk, o.tool_count, o.protocol_version FROM rounds o
            WHERE o.entry_id = NEW.entry_id AND o.signed
            ORDER BY o.started_at DESC, o.id DESC LIMIT 1)
    WHERE id = NEW.entry_id;
END;

-- The entries already stored.
UPDATE entries SET
    (signed_round_id, signed_failed, signed_observed_risk, signed_tool_count, signed_protocol) = (
        SELECT o.id, o.failed, o.observed_risk, o.tool_count, o.protocol_version FROM rounds o
        WHERE o.entry_id = entries.id AND o.signed
        ORDER BY o.started_at DESC, o.id DESC LIMIT 1);
