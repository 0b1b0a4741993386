-- The maintainer's listing of an entry (issue 18), and the maintainers' re-check requests.
-- store/sql_listing.go reads and writes these tables; mirrored by
-- migrations/sqlite/0022_maintainer_listing.sql. (Migrations 0017-0021 are other parts'.)
--
-- maintainer_listings: what a maintainer of the entry wrote about it: a description,
-- setup notes and up to five links ({"label","url"}, https only), apart from the
-- registry's listing (entries.listing), which a sync overwrites. The site shows it next
-- to the registry's, as the server's operator's. It is written only by SaveHistory, in
-- the transaction that stores the edit's changes (one operator_edit change per changed
-- field), so that no edit is stored without its change, nor a change without its edit;
-- revision counts the saved edits and makes a stale edit fail (ErrConflict).
CREATE TABLE maintainer_listings (
    entry_id    bigint      PRIMARY KEY REFERENCES entries (id) ON DELETE CASCADE,
    description text        NOT NULL CHECK (length(description) <= 1000),
    setup_notes text        NOT NULL CHECK (length(setup_notes) <= 4000),
    links       jsonb       NOT NULL CHECK (jsonb_typeof(links) = 'array' AND jsonb_array_length(links) <= 5),
    revision    bigint      NOT NULL CHECK (revision >= 1),
    updated_at  timestamptz NOT NULL
);

-- rechecks: when a maintainer last asked for a round of the entry at once ("Re-check
-- now"); RequestRecheck allows one per entry per interval and sets the entry's manual
-- due time in the same transaction.
CREATE TABLE rechecks (
    entry_id     bigint      PRIMARY KEY REFERENCES entries (id) ON DELETE CASCADE,
    requested_at timestamptz NOT NULL
);
