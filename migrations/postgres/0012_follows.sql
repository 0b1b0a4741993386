-- Follows and change e-mails (issue 17, seed 000 "Einem Eintrag folgen"). Every table
-- belongs to an account and goes with it (ON DELETE CASCADE): deleting an account
-- deletes its follows, its e-mail settings, what it was still to be told and its
-- outbox rows, pending e-mails included.

-- notify_settings: one row per account, made by the trigger below when the account is
-- made (and here for the accounts that exist). mode is how change e-mails go out:
-- 'hourly' (as soon as something changes, at most one an hour; the default), 'daily'
-- (one summary a day) or 'off'. last_email_at is when the last e-mail was planned and
-- covered_through the end of the window it covered (NULL: none yet): the next e-mail
-- covers the changes recorded after it. follows counts the account's follows, kept by
-- the follows_count triggers; its CHECK is the limit of 200 followed entries (seed
-- 000), enforced by the schema: the counting UPDATE locks the row, so two follows of
-- one account at once cannot both pass.
CREATE TABLE notify_settings (
    account_id      bigint      PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    mode            text        NOT NULL DEFAULT 'hourly' CHECK (mode IN ('hourly', 'daily', 'off')),
    mode_changed_at timestamptz NOT NULL,
    last_email_at   timestamptz,
    covered_through timestamptz,
    follows         integer     NOT NULL DEFAULT 0,
    CONSTRAINT notify_settings_follows_limit CHECK (follows BETWEEN 0 AND 200)
);

-- Planning finds the accounts due for an e-mail by mode and last e-mail.
CREATE INDEX notify_settings_due ON notify_settings (mode, last_email_at);

INSERT INTO notify_settings (account_id, mode_changed_at) SELECT id, created_at FROM accounts;

CREATE FUNCTION accounts_notify_settings() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO notify_settings (account_id, mode_changed_at) VALUES (NEW.id, NEW.created_at);
    RETURN NULL;
END;
$$;

CREATE TRIGGER accounts_notify_settings
AFTER INSERT ON accounts
FOR EACH ROW EXECUTE FUNCTION accounts_notify_settings();

-- follows: an account follows an entry since created_at; only changes recorded after
-- it are e-mailed. follows_entry serves planning, which starts from the entries that
-- changed and reads their followers from the index alone.
CREATE TABLE follows (
    account_id bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    entry_id   bigint      NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (account_id, entry_id)
);

CREATE INDEX follows_entry ON follows (entry_id, account_id, created_at);

CREATE FUNCTION follows_count() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE notify_settings SET follows = follows + 1 WHERE account_id = NEW.account_id;
    ELSE
        UPDATE notify_settings SET follows = follows - 1 WHERE account_id = OLD.account_id;
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER follows_count_insert
AFTER INSERT ON follows
FOR EACH ROW EXECUTE FUNCTION follows_count();

CREATE TRIGGER follows_count_delete
AFTER DELETE ON follows
FOR EACH ROW EXECUTE FUNCTION follows_count();

-- followed_gone: a followed entry that was deleted (seed 000: nobody follows it any
-- more), one row per follower, written by the trigger below in the deleting
-- transaction, before the follows go with the entry. The next e-mail tells it
-- (told_at), and the Followed page lists it; rows are pruned 30 days after the
-- deletion. slug and name are copies: the entry is gone.
CREATE TABLE followed_gone (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    slug       text        NOT NULL CHECK (char_length(slug) BETWEEN 1 AND 100),
    name       text        NOT NULL CHECK (char_length(name) <= 200),
    deleted_at timestamptz NOT NULL,
    told_at    timestamptz
);

CREATE INDEX followed_gone_account ON followed_gone (account_id, id);
CREATE INDEX followed_gone_untold ON followed_gone (account_id) WHERE told_at IS NULL;

CREATE FUNCTION entries_followed_gone() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO followed_gone (account_id, slug, name, deleted_at)
    SELECT account_id, OLD.slug, left(OLD.name, 200), now() FROM follows WHERE entry_id = OLD.id;
    RETURN OLD;
END;
$$;

CREATE TRIGGER entries_followed_gone
BEFORE DELETE ON entries
FOR EACH ROW EXECUTE FUNCTION entries_followed_gone();

-- outbox: one planned e-mail each. It keeps the window the e-mail covers, not its
-- text: the e-mail is composed from the store when it is sent, so a change hidden in
-- the meantime is left out, and planning writes small rows. window_from NULL means
-- "since the follows began". message_id is the e-mail's Message-ID, the same on every
-- attempt. state: 'pending' (to send at next_attempt_at), 'sending' (claimed by a
-- worker until lease_until, which next_attempt_at then equals: a lease that ran out
-- makes the row claimable again), 'sent', 'failed' (permanently, or out of retries;
-- last_error says why), 'skipped' (nothing was left to tell when it was composed).
CREATE TABLE outbox (
    id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id      bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at      timestamptz NOT NULL,
    window_from     timestamptz,
    window_through  timestamptz NOT NULL,
    message_id      text        NOT NULL UNIQUE CHECK (char_length(message_id) BETWEEN 3 AND 250),
    state           text        NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sending', 'sent', 'failed', 'skipped')),
    attempts        integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at timestamptz NOT NULL,
    lease_until     timestamptz,
    sent_at         timestamptz,
    last_error      text        NOT NULL DEFAULT '' CHECK (char_length(last_error) <= 500),
    CHECK ((state = 'sending') = (lease_until IS NOT NULL)),
    CHECK ((state = 'sent') = (sent_at IS NOT NULL))
);

CREATE INDEX outbox_due ON outbox (next_attempt_at) WHERE state IN ('pending', 'sending');
CREATE INDEX outbox_account ON outbox (account_id, id);
