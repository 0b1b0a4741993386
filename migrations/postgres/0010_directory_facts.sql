-- What the directory shows and sorts on (issue 16): each round's findings, and per entry
-- the facts of its newest round, its newest signed round, its 30-day uptime and its last
-- change, kept on the entry's row so that the directory filters and orders 6,000 entries
-- without reading their rounds. Mirrored by migrations/sqlite/0010_directory_facts.sql.
--
-- rounds.failed and rounds.observed_risk count the round's check results by status
-- (FAILED, OBSERVED_RISK): the elements of its results (a JSON array of {id, status, …}
-- objects, which SaveRound checks is an array). Their one owner is round_findings, which
-- the trigger rounds_findings runs on every round inserted and the backfill below on
-- every round stored.
ALTER TABLE rounds
    ADD COLUMN failed        integer NOT NULL DEFAULT 0 CHECK (failed >= 0),
    ADD COLUMN observed_risk integer NOT NULL DEFAULT 0 CHECK (observed_risk >= 0);

-- Results that are not UTF-8 JSON (SaveRound refuses them; a row written by other means
-- may hold them) count no findings.
CREATE FUNCTION round_findings(results bytea, OUT failed integer, OUT observed_risk integer)
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    doc jsonb;
BEGIN
    failed := 0;
    observed_risk := 0;
    IF results IS NULL THEN
        RETURN;
    END IF;
    BEGIN
        doc := convert_from(results, 'UTF8')::jsonb;
    EXCEPTION WHEN data_exception THEN
        RETURN;
    END;
    IF jsonb_typeof(doc) <> 'array' THEN
        RETURN;
    END IF;
    SELECT count(*) FILTER (WHERE x.value ->> 'status' = 'FAILED'),
           count(*) FILTER (WHERE x.value ->> 'status' = 'OBSERVED_RISK')
    INTO failed, observed_risk
    FROM jsonb_array_elements(doc) x
    WHERE jsonb_typeof(x.value) = 'object';
END;
$$;

CREATE FUNCTION rounds_findings() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    SELECT f.failed, f.observed_risk INTO NEW.failed, NEW.observed_risk FROM round_findings(NEW.results) f;
    RETURN NEW;
END;
$$;
CREATE TRIGGER rounds_findings BEFORE INSERT ON rounds
FOR EACH ROW EXECUTE FUNCTION rounds_findings();

UPDATE rounds o SET failed = f.failed, observed_risk = f.observed_risk
FROM rounds r CROSS JOIN LATERAL round_findings(r.results) f
WHERE o.id = r.id AND r.results IS NOT NULL AND (f.failed > 0 OR f.observed_risk > 0);

-- The entry's derived facts. Each has one owner, a trigger below, which recomputes it
-- from the rows it derives from whenever one of them is written; nothing else writes
-- them:
--
--   last_uptime        the uptime class of the newest round (by started_at, then id, as
--                      Rounds orders them); NULL: no round. 'no_answer' is offline.
--   signed_failed, signed_observed_risk, signed_tool_count, signed_protocol
--                      the newest signed round's findings, tool count and negotiated
--                      protocol version; NULL: no signed round.
--   uptime30_online, uptime30_counted
--                      online and counted (online + offline) days of the 30 UTC days up
--                      to and including the entry's newest uptime day: the key ByUptime
--                      sorts on. The directory shows the 30 days up to today, read from
--                      uptime_days at read time; the two are the same window while the
--                      entry has a round every day (the daily status check).
--   last_change_at     when the newest visible change that is not a baseline was
--                      recorded; NULL: none.
ALTER TABLE entries
    ADD COLUMN last_uptime          text CHECK (last_uptime IN ('answered', 'no_answer', 'inconclusive')),
    ADD COLUMN signed_failed        integer CHECK (signed_failed >= 0),
    ADD COLUMN signed_observed_risk integer CHECK (signed_observed_risk >= 0),
    ADD COLUMN signed_tool_count    integer CHECK (signed_tool_count >= 0),
    ADD COLUMN signed_protocol      text,
    ADD COLUMN uptime30_online      integer NOT NULL DEFAULT 0 CHECK (uptime30_online >= 0),
    ADD COLUMN uptime30_counted     integer NOT NULL DEFAULT 0 CHECK (uptime30_counted >= uptime30_online),
    ADD COLUMN last_change_at       timestamptz;

CREATE FUNCTION entry_round_facts(entry bigint) RETURNS void
LANGUAGE sql AS $$
    UPDATE entries SET
        last_uptime = (SELECT o.uptime FROM rounds o WHERE o.entry_id = entry
            ORDER BY o.started_at DESC, o.id DESC LIMIT 1),
        (signed_failed, signed_observed_risk, signed_tool_count, signed_protocol) = (
            SELECT o.failed, o.observed_risk, o.tool_count, o.protocol_version FROM rounds o
            WHERE o.entry_id = entry AND o.signed
            ORDER BY o.started_at DESC, o.id DESC LIMIT 1)
    WHERE id = entry;
$$;

CREATE FUNCTION entry_uptime_facts(entry bigint) RETURNS void
LANGUAGE sql AS $$
    UPDATE entries SET (uptime30_online, uptime30_counted) = (
        SELECT count(*) FILTER (WHERE u.status = 'online'),
               count(*) FILTER (WHERE u.status <> 'not_counted')
        FROM uptime_days u
        WHERE u.entry_id = entry
          AND u.day > (SELECT max(n.day) FROM uptime_days n WHERE n.entry_id = entry) - 30)
    WHERE id = entry;
$$;

CREATE FUNCTION entry_change_facts(entry bigint) RETURNS void
LANGUAGE sql AS $$
    UPDATE entries SET last_change_at = (
        SELECT max(c.recorded_at) FROM changes c
        WHERE c.entry_id = entry AND NOT c.hidden AND c.kind <> 'baseline')
    WHERE id = entry;
$$;

CREATE FUNCTION rounds_entry_facts() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM entry_round_facts(NEW.entry_id);
    RETURN NULL;
END;
$$;
CREATE TRIGGER rounds_entry_facts AFTER INSERT ON rounds
FOR EACH ROW EXECUTE FUNCTION rounds_entry_facts();

CREATE FUNCTION uptime_days_entry_facts() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM entry_uptime_facts(NEW.entry_id);
    RETURN NULL;
END;
$$;
CREATE TRIGGER uptime_days_entry_facts AFTER INSERT OR UPDATE ON uptime_days
FOR EACH ROW EXECUTE FUNCTION uptime_days_entry_facts();

CREATE FUNCTION changes_entry_facts() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM entry_change_facts(NEW.entry_id);
    RETURN NULL;
END;
$$;
CREATE TRIGGER changes_entry_facts AFTER INSERT OR UPDATE OF hidden ON changes
FOR EACH ROW EXECUTE FUNCTION changes_entry_facts();

-- The facts of the entries already stored.
SELECT entry_round_facts(id), entry_uptime_facts(id), entry_change_facts(id) FROM entries;

-- The directory's orders by last change and by findings, over the entries it lists.
CREATE INDEX entries_last_change ON entries (last_change_at DESC NULLS LAST, id)
    WHERE listing_status = 'active' AND parent_id IS NULL;
CREATE INDEX entries_findings ON entries (signed_failed DESC NULLS LAST, signed_observed_risk DESC NULLS LAST, id)
    WHERE listing_status = 'active' AND parent_id IS NULL;
