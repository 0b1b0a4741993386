-- The re-check schedule of claims (issue 18). Mirrored by
-- migrations/sqlite/0017_claim_checks.sql. Package claims decides the values; the store
-- keeps them:
--
-- next_check_at: when the claim is proven again (daily, with jitter; sooner after a
-- check that got no answer). The re-check reads the due claims in next_check_at order,
-- so a claim whose source never answers cannot keep others waiting.
-- unanswered_since: the first of an unbroken run of checks that got no answer (a
-- timeout, a 5xx, a refused connection); NULL after any answer. The grace before such
-- a claim lapses counts from here, not from the last answer.
-- gone_since: the first of an unbroken run of checks whose answer says the proof is
-- gone (a 404, a record or file without the token); NULL after a check finds it. A
-- claim lapses only when the proof is gone again a day or more after gone_since.
ALTER TABLE claims ADD COLUMN next_check_at timestamptz;
ALTER TABLE claims ADD COLUMN unanswered_since timestamptz;
ALTER TABLE claims ADD COLUMN gone_since timestamptz;
UPDATE claims SET next_check_at = last_checked_at + interval '1 day';
ALTER TABLE claims ALTER COLUMN next_check_at SET NOT NULL;
DROP INDEX claims_checked;
CREATE INDEX claims_due ON claims (next_check_at, id) WHERE lapsed_at IS NULL;
