-- Change e-mails and webhooks walk the changes in commit order (issue 17); mirrors
-- migrations/postgres/0015_notify_cursor.sql, which documents the columns.
ALTER TABLE notify_settings ADD COLUMN covered_seq INTEGER CHECK (covered_seq >= 0);
ALTER TABLE outbox ADD COLUMN seq_from INTEGER CHECK (seq_from >= 0);
ALTER TABLE outbox ADD COLUMN seq_through INTEGER CHECK (seq_through >= 0);
ALTER TABLE webhook_planner ADD COLUMN planned_seq INTEGER CHECK (planned_seq >= 0);

CREATE INDEX outbox_unfinished ON outbox (account_id) WHERE state IN ('pending', 'sending');

CREATE TEMP TABLE seq_0015 AS
SELECT t.at, (SELECT max(l.seq) FROM changes c JOIN ledger l ON l.id = c.ledger_id
              WHERE c.recorded_at <= t.at) AS seq
FROM (
    SELECT covered_through AS at FROM notify_settings WHERE covered_through IS NOT NULL
    UNION SELECT window_from FROM outbox WHERE window_from IS NOT NULL AND state IN ('pending', 'sending')
    UNION SELECT window_through FROM outbox WHERE state IN ('pending', 'sending')
    UNION SELECT planned_through FROM webhook_planner
) t;

UPDATE notify_settings SET covered_seq = (SELECT coalesce(m.seq, 0) FROM seq_0015 m WHERE m.at = notify_settings.covered_through)
WHERE covered_through IS NOT NULL;

UPDATE outbox SET seq_from = (SELECT coalesce(m.seq, 0) FROM seq_0015 m WHERE m.at = outbox.window_from),
                  seq_through = (SELECT coalesce(m.seq, 0) FROM seq_0015 m WHERE m.at = outbox.window_through)
WHERE state IN ('pending', 'sending');

UPDATE webhook_planner SET planned_seq = (SELECT coalesce(m.seq, 0) FROM seq_0015 m WHERE m.at = webhook_planner.planned_through);

DROP TABLE temp.seq_0015;
