-- Accounts of the people who follow entries (issue 17): the site's first write path.
-- This file holds the account itself; the tables of what an account has (sessions,
-- sign-in codes, follows, e-mail settings, the outbox, webhooks) follow in the next
-- migrations, each referencing accounts (id) ON DELETE CASCADE, so that deleting an
-- account is one DELETE that takes everything it had with it.
--
-- An account is known by a verified e-mail address, a GitHub user id, or both. The
-- address is stored as the person typed it and confirmed it; email_key is its lower-cased
-- form, the one address comparisons use. github_id is GitHub's numeric user id (a login
-- can be renamed and reused, the id never). Nothing else about the person is kept.
CREATE TABLE accounts (
    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email        text        CHECK (email IS NULL OR length(email) BETWEEN 3 AND 254),
    email_key    text        UNIQUE CHECK ((email IS NULL) = (email_key IS NULL)),
    github_id    bigint      UNIQUE CHECK (github_id IS NULL OR github_id > 0),
    github_login text        CHECK (github_login IS NULL OR length(github_login) BETWEEN 1 AND 39),
    created_at   timestamptz NOT NULL,
    CHECK (email IS NOT NULL OR github_id IS NOT NULL)
);
