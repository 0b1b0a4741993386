-- Change e-mails and webhooks walk the changes in commit order (issue 17). Until now
-- both planners cut their windows by a change's recorded time, so a change committed
-- after the planner had covered its recorded time (a history step retried at the next
-- round) was never e-mailed nor webhooked. A change's ledger record's sequence number
-- (ledger.seq) follows commit order and has no gaps (see 0007), so it is the planners'
-- cursor: a pass covers the changes numbered up to the highest number given when it
-- starts, and the next pass those numbered after it, however late they were committed.
-- Mirrored by migrations/sqlite/0015_notify_cursor.sql.
--
--   notify_settings.covered_seq  the ledger number the account's last e-mail covered
--                                changes through (NULL: none yet, 0). covered_through
--                                is now the time that e-mail was planned, or the time
--                                e-mails came back on; the daily summary's due test.
--   outbox.seq_from, seq_through the e-mail covers the changes numbered in
--                                (seq_from, seq_through] (seq_from NULL: 0); window_from
--                                and window_through stay, as times.
--   webhook_planner.planned_seq  the ledger number the webhook planner has planned
--                                deliveries through (NULL until its first run).
--   outbox_unfinished            an account with an e-mail pending or sending gets no
--                                new one until it is finished.
--
-- Existing cursors are carried over as the highest number of a change recorded at or
-- before the time they held: what the time windows covered.
ALTER TABLE notify_settings ADD COLUMN covered_seq bigint CHECK (covered_seq >= 0);
ALTER TABLE outbox ADD COLUMN seq_from bigint CHECK (seq_from >= 0);
ALTER TABLE outbox ADD COLUMN seq_through bigint CHECK (seq_through >= 0);
ALTER TABLE webhook_planner ADD COLUMN planned_seq bigint CHECK (planned_seq >= 0);

CREATE INDEX outbox_unfinished ON outbox (account_id) WHERE state IN ('pending', 'sending');

CREATE TEMP TABLE seq_0015 ON COMMIT DROP AS
SELECT t.at, (SELECT max(l.seq) FROM changes c JOIN ledger l ON l.id = c.ledger_id
              WHERE c.recorded_at <= t.at) AS seq
FROM (
    SELECT covered_through AS at FROM notify_settings WHERE covered_through IS NOT NULL
    UNION SELECT window_from FROM outbox WHERE window_from IS NOT NULL AND state IN ('pending', 'sending')
    UNION SELECT window_through FROM outbox WHERE state IN ('pending', 'sending')
    UNION SELECT planned_through FROM webhook_planner
) t;

UPDATE notify_settings s SET covered_seq = coalesce(m.seq, 0)
FROM seq_0015 m WHERE m.at = s.covered_through;

UPDATE outbox o SET seq_from = (SELECT coalesce(m.seq, 0) FROM seq_0015 m WHERE m.at = o.window_from),
                    seq_through = (SELECT coalesce(m.seq, 0) FROM seq_0015 m WHERE m.at = o.window_through)
WHERE o.state IN ('pending', 'sending');

UPDATE webhook_planner p SET planned_seq = coalesce(m.seq, 0)
FROM seq_0015 m WHERE m.at = p.planned_through;
