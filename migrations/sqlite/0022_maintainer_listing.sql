-- The maintainer's listing of an entry and the re-check requests on SQLite (issue 18);
-- mirrors migrations/postgres/0022_maintainer_listing.sql, which documents the tables.
-- Conventions as in 0001_init.sql: STRICT tables, times in Unix milliseconds.

CREATE TABLE maintainer_listings (
    entry_id    INTEGER PRIMARY KEY REFERENCES entries (id) ON DELETE CASCADE,
    description TEXT    NOT NULL CHECK (length(description) <= 1000),
    setup_notes TEXT    NOT NULL CHECK (length(setup_notes) <= 4000),
    links       TEXT    NOT NULL CHECK (json_valid(links) AND json_type(links) = 'array' AND json_array_length(links) <= 5),
    revision    INTEGER NOT NULL CHECK (revision >= 1),
    updated_at  INTEGER NOT NULL
) STRICT;

CREATE TABLE rechecks (
    entry_id     INTEGER PRIMARY KEY REFERENCES entries (id) ON DELETE CASCADE,
    requested_at INTEGER NOT NULL
) STRICT;
