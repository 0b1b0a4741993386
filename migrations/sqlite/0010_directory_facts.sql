-- What the directory shows and sorts on (issue 16); mirrors
-- migrations/postgres/0010_directory_facts.sql, which documents the columns. SQLite has
-- no stored functions: each trigger holds its statement, and the backfill repeats it.
ALTER TABLE rounds ADD COLUMN failed INTEGER NOT NULL DEFAULT 0 CHECK (failed >= 0);
ALTER TABLE rounds ADD COLUMN observed_risk INTEGER NOT NULL DEFAULT 0 CHECK (observed_risk >= 0);

-- results is a BLOB, which SQLite's JSON functions would read as its binary JSONB: read
-- it as text. Results that are not JSON (SaveRound refuses them; a row written by other
-- means may hold them) count no findings: json_type is asked only of valid JSON.
UPDATE rounds SET
    failed = (SELECT count(*) FROM json_each(CAST(rounds.results AS TEXT)) x
        WHERE x.type = 'object' AND json_extract(x.value, '$.status') = 'FAILED'),
    observed_risk = (SELECT count(*) FROM json_each(CAST(rounds.results AS TEXT)) x
        WHERE x.type = 'object' AND json_extract(x.value, '$.status') = 'OBSERVED_RISK')
WHERE results IS NOT NULL
    AND CASE WHEN json_valid(CAST(results AS TEXT)) THEN json_type(CAST(results AS TEXT)) END = 'array';

ALTER TABLE entries ADD COLUMN last_uptime TEXT
    CHECK (last_uptime IN ('answered', 'no_answer', 'inconclusive'));
ALTER TABLE entries ADD COLUMN signed_failed INTEGER CHECK (signed_failed >= 0);
ALTER TABLE entries ADD COLUMN signed_observed_risk INTEGER CHECK (signed_observed_risk >= 0);
ALTER TABLE entries ADD COLUMN signed_tool_count INTEGER CHECK (signed_tool_count >= 0);
ALTER TABLE entries ADD COLUMN signed_protocol TEXT;
ALTER TABLE entries ADD COLUMN uptime30_online INTEGER NOT NULL DEFAULT 0 CHECK (uptime30_online >= 0);
ALTER TABLE entries ADD COLUMN uptime30_counted INTEGER NOT NULL DEFAULT 0
    CHECK (uptime30_counted >= uptime30_online);
ALTER TABLE entries ADD COLUMN last_change_at INTEGER;

-- A round's findings, counted as the backfill above counts them, then the entry's facts
-- of its newest round and newest signed round: one trigger, so that the count comes
-- first.
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
        (signed_failed, signed_observed_risk, signed_tool_count, signed_protocol) = (
            SELECT o.failed, o.observed_risk, o.tool_count, o.protocol_version FROM rounds o
            WHERE o.entry_id = NEW.entry_id AND o.signed
            ORDER BY o.started_at DESC, o.id DESC LIMIT 1)
    WHERE id = NEW.entry_id;
END;

CREATE TRIGGER uptime_days_entry_facts_insert AFTER INSERT ON uptime_days
BEGIN
    UPDATE entries SET (uptime30_online, uptime30_counted) = (
        SELECT count(*) FILTER (WHERE u.status = 'online'),
               count(*) FILTER (WHERE u.status <> 'not_counted')
        FROM uptime_days u
        WHERE u.entry_id = NEW.entry_id
          AND u.day > date((SELECT max(n.day) FROM uptime_days n WHERE n.entry_id = NEW.entry_id), '-30 days'))
    WHERE id = NEW.entry_id;
END;

CREATE TRIGGER uptime_days_entry_facts_update AFTER UPDATE ON uptime_days
BEGIN
    UPDATE entries SET (uptime30_online, uptime30_counted) = (
        SELECT count(*) FILTER (WHERE u.status = 'online'),
               count(*) FILTER (WHERE u.status <> 'not_counted')
        FROM uptime_days u
        WHERE u.entry_id = NEW.entry_id
          AND u.day > date((SELECT max(n.day) FROM uptime_days n WHERE n.entry_id = NEW.entry_id), '-30 days'))
    WHERE id = NEW.entry_id;
END;

CREATE TRIGGER changes_entry_facts_insert AFTER INSERT ON changes
BEGIN
    UPDATE entries SET last_change_at = (
        SELECT max(c.recorded_at) FROM changes c
        WHERE c.entry_id = NEW.entry_id AND NOT c.hidden AND c.kind <> 'baseline')
    WHERE id = NEW.entry_id;
END;

CREATE TRIGGER changes_entry_facts_hidden AFTER UPDATE OF hidden ON changes
BEGIN
    UPDATE entries SET last_change_at = (
        SELECT max(c.recorded_at) FROM changes c
        WHERE c.entry_id = NEW.entry_id AND NOT c.hidden AND c.kind <> 'baseline')
    WHERE id = NEW.entry_id;
END;

-- The facts of the entries already stored.
UPDATE entries SET
    last_uptime = (SELECT o.uptime FROM rounds o WHERE o.entry_id = entries.id
        ORDER BY o.started_at DESC, o.id DESC LIMIT 1),
    (signed_failed, signed_observed_risk, signed_tool_count, signed_protocol) = (
        SELECT o.failed, o.observed_risk, o.tool_count, o.protocol_version FROM rounds o
        WHERE o.entry_id = entries.id AND o.signed
        ORDER BY o.started_at DESC, o.id DESC LIMIT 1),
    (uptime30_online, uptime30_counted) = (
        SELECT count(*) FILTER (WHERE u.status = 'online'),
               count(*) FILTER (WHERE u.status <> 'not_counted')
        FROM uptime_days u
        WHERE u.entry_id = entries.id
          AND u.day > date((SELECT max(n.day) FROM uptime_days n WHERE n.entry_id = entries.id), '-30 days')),
    last_change_at = (
        SELECT max(c.recorded_at) FROM changes c
        WHERE c.entry_id = entries.id AND NOT c.hidden AND c.kind <> 'baseline');

-- The directory's orders by last change and by findings, over the entries it lists.
CREATE INDEX entries_last_change ON entries (last_change_at DESC, id)
    WHERE listing_status = 'active' AND parent_id IS NULL;
CREATE INDEX entries_findings ON entries (signed_failed DESC, signed_observed_risk DESC, id)
    WHERE listing_status = 'active' AND parent_id IS NULL;
