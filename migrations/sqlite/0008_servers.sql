-- An entry is a server (issue 14); mirrors migrations/postgres/0008_servers.sql, which
-- documents the tables and columns. SQLite cannot add a UNIQUE column: server_name's
-- uniqueness is a unique index. Every added column's CHECK sits on the last one, so the
-- migration scans entries once (see 0005).
ALTER TABLE entries ADD COLUMN server_name TEXT;
ALTER TABLE entries ADD COLUMN title TEXT NOT NULL DEFAULT '';
ALTER TABLE entries ADD COLUMN description TEXT NOT NULL DEFAULT '';
ALTER TABLE entries ADD COLUMN website TEXT NOT NULL DEFAULT '';
ALTER TABLE entries ADD COLUMN listing_version TEXT NOT NULL DEFAULT '';
ALTER TABLE entries ADD COLUMN listing BLOB;
ALTER TABLE entries ADD COLUMN registry_meta BLOB;
ALTER TABLE entries ADD COLUMN listing_updated_at INTEGER;
ALTER TABLE entries ADD COLUMN parent_id INTEGER REFERENCES entries (id);
ALTER TABLE entries ADD COLUMN listing_status TEXT NOT NULL DEFAULT 'active'
    CHECK (listing_status IN ('active', 'deprecated', 'deleted'))
    CHECK (server_name IS NULL OR length(server_name) BETWEEN 3 AND 200)
    CHECK (length(title) <= 200 AND length(description) <= 2000 AND length(website) <= 2000)
    CHECK (length(listing_version) <= 255);
CREATE UNIQUE INDEX entries_server_name ON entries (server_name) WHERE server_name IS NOT NULL;
CREATE INDEX entries_listing_updated ON entries (listing_updated_at) WHERE server_name IS NOT NULL;
CREATE INDEX entries_parent ON entries (parent_id) WHERE parent_id IS NOT NULL;

CREATE TABLE entry_parts (
    entry_id  INTEGER NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    position  INTEGER NOT NULL CHECK (position >= 0),
    kind      TEXT    NOT NULL
        CHECK (kind IN ('remote', 'npm', 'pypi', 'github', 'oci', 'nuget', 'mcpb')),
    locator   TEXT    NOT NULL CHECK (locator <> '' AND length(locator) <= 2000),
    transport TEXT    NOT NULL DEFAULT '' CHECK (length(transport) <= 32),
    version   TEXT    NOT NULL DEFAULT '' CHECK (length(version) <= 255),
    PRIMARY KEY (entry_id, position),
    UNIQUE (kind, locator)
) STRICT;
INSERT INTO entry_parts (entry_id, position, kind, locator)
SELECT id, 0, kind, locator FROM entries;

CREATE TABLE registry_sync (
    base_url     TEXT    PRIMARY KEY CHECK (base_url <> ''),
    since        INTEGER,
    walk_since   INTEGER,
    cursor       TEXT    NOT NULL DEFAULT '' CHECK (length(cursor) <= 4096),
    walk_newest  INTEGER,
    walk_started INTEGER,
    finished     INTEGER,
    servers      INTEGER NOT NULL DEFAULT 0 CHECK (servers >= 0)
) STRICT;

CREATE TABLE http_cache (
    key           TEXT    PRIMARY KEY CHECK (key <> '' AND length(key) <= 4096),
    status        INTEGER NOT NULL CHECK (status BETWEEN 100 AND 599),
    etag          TEXT    NOT NULL DEFAULT '',
    last_modified TEXT    NOT NULL DEFAULT '',
    header        BLOB,
    body          BLOB    NOT NULL CHECK (length(body) <= 8388608),
    stored_at     INTEGER NOT NULL
) STRICT;
