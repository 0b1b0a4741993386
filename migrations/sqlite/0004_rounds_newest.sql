-- The newest round of an entry in one index probe; mirrors
-- migrations/postgres/0004_rounds_newest.sql. With the id in the index, ORDER BY
-- started_at DESC, id DESC LIMIT 1 needs no temporary B-tree for the order.
CREATE INDEX observations_entry_started_id ON observations (entry_id, started_at, id);
DROP INDEX observations_entry_started;
