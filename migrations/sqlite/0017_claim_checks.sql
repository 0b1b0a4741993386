-- The re-check schedule of claims (issue 18); mirrors
-- migrations/postgres/0017_claim_checks.sql, which documents the columns. Times in Unix
-- milliseconds.
ALTER TABLE claims ADD COLUMN next_check_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE claims ADD COLUMN unanswered_since INTEGER;
ALTER TABLE claims ADD COLUMN gone_since INTEGER;
UPDATE claims SET next_check_at = last_checked_at + 86400000;
DROP INDEX claims_checked;
CREATE INDEX claims_due ON claims (next_check_at, id) WHERE lapsed_at IS NULL;
