-- An entry is a server (issue 14): its listing, its linked parts, the registry sync's
-- state, and the supply sources' HTTP cache. Mirrored by migrations/sqlite/0008_servers.sql.
--
-- entries gains what a server's listing says. server_name is the registry's reverse-DNS
-- name, NULL for an entry from a bare reference; listing is the server.json as listed
-- (canonical JSON) and registry_meta the registry's own metadata of that version. A
-- deprecated or deleted listing is unlisted: kept with its history, left out of the
-- directory and the schedule. Listing changes leave no history (seed 000).
ALTER TABLE entries
    ADD COLUMN server_name        text COLLATE "C" UNIQUE
        CHECK (length(server_name) BETWEEN 3 AND 200),
    ADD COLUMN title              text NOT NULL DEFAULT '' CHECK (length(title) <= 200),
    ADD COLUMN description        text NOT NULL DEFAULT '' CHECK (length(description) <= 2000),
    ADD COLUMN website            text NOT NULL DEFAULT '' CHECK (length(website) <= 2000),
    ADD COLUMN listing_version    text NOT NULL DEFAULT '' CHECK (length(listing_version) <= 255),
    ADD COLUMN listing            bytea,
    ADD COLUMN registry_meta      bytea,
    ADD COLUMN listing_status     text NOT NULL DEFAULT 'active'
        CHECK (listing_status IN ('active', 'deprecated', 'deleted')),
    ADD COLUMN listing_updated_at timestamptz,
    ADD COLUMN parent_id          bigint REFERENCES entries (id);

-- A server's remotes after its first are entries of their own (parent_id: the server's
-- entry), probed as any remote and with their own history, shown on the server's page and
-- not in the directory. DeleteEntry deletes them first: the reference has no cascade.
CREATE INDEX entries_parent ON entries (parent_id) WHERE parent_id IS NOT NULL;

-- entry_parts: every part of every entry, the primary one (the entry's kind and
-- locator) at position 0. A part belongs to at most one entry.
CREATE TABLE entry_parts (
    entry_id  bigint  NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    position  integer NOT NULL CHECK (position >= 0),
    kind      text    NOT NULL
        CHECK (kind IN ('remote', 'npm', 'pypi', 'github', 'oci', 'nuget', 'mcpb')),
    locator   text    COLLATE "C" NOT NULL CHECK (locator <> '' AND length(locator) <= 2000),
    transport text    NOT NULL DEFAULT '' CHECK (length(transport) <= 32),
    version   text    NOT NULL DEFAULT '' CHECK (length(version) <= 255),
    PRIMARY KEY (entry_id, position),
    UNIQUE (kind, locator)
);
INSERT INTO entry_parts (entry_id, position, kind, locator)
SELECT id, 0, kind, locator FROM entries;

-- Subregistry pages and incremental syncs read listings by name and by update time.
CREATE INDEX entries_listing_updated ON entries (listing_updated_at) WHERE server_name IS NOT NULL;

-- registry_sync: per registry base URL, the mark the next incremental sync starts from
-- (since) and the walk in progress (walk_since, cursor, walk_newest, walk_started), so a
-- crash resumes at the page it stopped at.
CREATE TABLE registry_sync (
    base_url     text        COLLATE "C" PRIMARY KEY CHECK (base_url <> ''),
    since        timestamptz,
    walk_since   timestamptz,
    cursor       text        NOT NULL DEFAULT '' CHECK (length(cursor) <= 4096),
    walk_newest  timestamptz,
    walk_started timestamptz,
    finished     timestamptz,
    servers      bigint      NOT NULL DEFAULT 0 CHECK (servers >= 0)
);

-- http_cache: the supply sources' responses kept for revalidation (ETag /
-- Last-Modified), so a restart does not start cold. One row per request key.
CREATE TABLE http_cache (
    key           text        COLLATE "C" PRIMARY KEY CHECK (key <> '' AND length(key) <= 4096),
    status        integer     NOT NULL CHECK (status BETWEEN 100 AND 599),
    etag          text        NOT NULL DEFAULT '',
    last_modified text        NOT NULL DEFAULT '',
    header        bytea,
    body          bytea       NOT NULL CHECK (length(body) <= 8388608),
    stored_at     timestamptz NOT NULL
);
