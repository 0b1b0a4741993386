package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The maintainer's listing of an entry and "Re-check now" (issue 18; migration 0022).
//
// A maintainer's listing is what a maintainer of the entry wrote about it: a
// description, setup notes and up to MaxListingLinks links. It is apart from the
// registry's listing (Listing, entries.listing), which a sync overwrites; the site
// shows it next to the registry's, as the server's operator's. It is stored only by
// SaveHistory (HistoryUpdate.Listing), in the transaction that stores the edit's
// changes, so an edit is never stored without its changes nor a change without its
// edit; its revision makes an edit computed from a stale listing fail with ErrConflict.
// The rules of its fields are CheckMaintainerListing's, here, for every caller.

// Bounds of a maintainer's listing, in characters (Unicode code points).
const (
	MaxListingDescription = 1000
	MaxListingSetupNotes  = 4000
	MaxListingLinks       = 5
	MaxListingLinkLabel   = 100
	MaxListingLinkURL     = 2048 // bytes
)

// MaintainerListing is the maintainer's listing of an entry. The zero value (Revision
// 0) is an entry whose maintainers never saved one.
type MaintainerListing struct {
	EntryID int64
	// Description and SetupNotes are plain text (newlines kept); the site never
	// renders them as HTML.
	Description string
	SetupNotes  string
	Links       []ListingLink
	// Revision counts the saved edits (0: none); UpdatedAt is when the last was saved.
	Revision  int64
	UpdatedAt time.Time
}

// ListingLink is one link of a maintainer's listing: an https address and its label.
type ListingLink struct {
	Label string `json:"label"`
	URL   string `json:"url"`
}

// ListingUpdate is a maintainer's listing saved with a history update: the new
// listing (its EntryID, Revision and UpdatedAt are set by the store: the update's
// entry, ExpectRevision+1 and the time of the save) stored only when the stored
// revision is still ExpectRevision (else ErrConflict).
type ListingUpdate struct {
	Listing        MaintainerListing
	ExpectRevision int64
}

// ErrStaleListing is SaveHistory's error for a listing update whose ExpectRevision is
// not the stored revision (another edit was saved meanwhile). It is an ErrConflict;
// retrying with the same listing cannot succeed.
var ErrStaleListing = fmt.Errorf("the maintainer's listing was edited meanwhile: %w", ErrConflict)

// ListingFieldError is CheckMaintainerListing's error: which field breaks which rule,
// in words a person can act on.
type ListingFieldError struct {
	Field   string // "description", "setup_notes" or "links"
	Message string
}

func (e *ListingFieldError) Error() string { return e.Field + ": " + e.Message }

// CheckMaintainerListing refuses a listing whose fields break the rules: description
// and setup notes valid UTF-8 of at most MaxListingDescription and
// MaxListingSetupNotes characters, without control characters but newline and tab;
// at most MaxListingLinks links, each with a one-line label of 1 to
// MaxListingLinkLabel characters and an absolute https address with a host and no
// user information, of at most MaxListingLinkURL bytes. The error is a
// *ListingFieldError.
func CheckMaintainerListing(l *MaintainerListing) error {
	if err := checkListingText(l.Description, MaxListingDescription); err != "" {
		return &ListingFieldError{Field: "description", Message: "the description " + err}
	}
	if err := checkListingText(l.SetupNotes, MaxListingSetupNotes); err != "" {
		return &ListingFieldError{Field: "setup_notes", Message: "the setup notes " + err}
	}
	if len(l.Links) > MaxListingLinks {
		return &ListingFieldError{Field: "links", Message: fmt.Sprintf("there are %d links, more than %d", len(l.Links), MaxListingLinks)}
	}
	for i, k := range l.Links {
		if msg := checkListingLink(k); msg != "" {
			return &ListingFieldError{Field: "links", Message: fmt.Sprintf("link %d: %s", i+1, msg)}
		}
	}
	return nil
}

func checkListingText(s string, limit int) string {
	switch n := utf8.RuneCountInString(s); {
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	case n > limit:
		return fmt.Sprintf("are %d characters, more than %d", n, limit)
	case strings.ContainsFunc(s, func(r rune) bool { return r != '\n' && r != '\t' && unicode.IsControl(r) }):
		return "hold a control character"
	}
	return ""
}

func checkListingLink(k ListingLink) string {
	n := utf8.RuneCountInString(k.Label)
	switch {
	case n == 0 || strings.TrimSpace(k.Label) == "":
		return "the label is empty"
	case n > MaxListingLinkLabel:
		return fmt.Sprintf("the label is %d characters, more than %d", n, MaxListingLinkLabel)
	case !utf8.ValidString(k.Label) || strings.ContainsFunc(k.Label, unicode.IsControl):
		return "the label must be one line of text"
	case len(k.URL) > MaxListingLinkURL:
		return fmt.Sprintf("the address is %d bytes, more than %d", len(k.URL), MaxListingLinkURL)
	case strings.ContainsFunc(k.URL, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return "the address holds a space or a control character"
	}
	u, err := url.Parse(k.URL)
	switch {
	case err != nil:
		return "the address is not a URL"
	case u.Scheme != "https" || u.Host == "" || u.Opaque != "":
		return "the address must start with https://"
	case u.User != nil:
		return "the address must not hold a user name or password"
	}
	return ""
}

// checkListingUpdate refuses a listing update that cannot be stored.
func checkListingUpdate(u *ListingUpdate) error {
	if u.ExpectRevision < 0 {
		return fmt.Errorf("listing update expects revision %d", u.ExpectRevision)
	}
	if err := CheckMaintainerListing(&u.Listing); err != nil {
		return fmt.Errorf("the maintainer's listing: %w", err)
	}
	return nil
}

// encodeListingLinks is the links column's JSON (an array, never null).
func encodeListingLinks(links []ListingLink) (string, error) {
	if links == nil {
		links = []ListingLink{}
	}
	b, err := json.Marshal(links)
	return string(b), err
}

const maintainerListingColumns = `entry_id, description, setup_notes, links, revision, updated_at`

func scanMaintainerListing(row rowScanner) (MaintainerListing, error) {
	var (
		l     MaintainerListing
		links string
	)
	if err := row.Scan(&l.EntryID, &l.Description, &l.SetupNotes, &links, &l.Revision, timeCol(&l.UpdatedAt)); err != nil {
		return MaintainerListing{}, err
	}
	if err := json.Unmarshal([]byte(links), &l.Links); err != nil {
		return MaintainerListing{}, fmt.Errorf("couldn't read the links of entry %d's listing: %w", l.EntryID, err)
	}
	return l, nil
}

// MaintainerListing returns the maintainer's listing of the entry: the zero value with
// EntryID set when none was saved (whether or not the entry exists).
func (s *sqlStore) MaintainerListing(ctx context.Context, entryID int64) (MaintainerListing, error) {
	l, err := scanMaintainerListing(s.read.QueryRow(ctx,
		`SELECT `+maintainerListingColumns+` FROM maintainer_listings WHERE entry_id = ?`, entryID))
	if errors.Is(err, sql.ErrNoRows) {
		return MaintainerListing{EntryID: entryID}, nil
	}
	if err != nil {
		return MaintainerListing{}, fmt.Errorf("couldn't read the maintainer's listing of entry %d: %w", entryID, err)
	}
	return l, nil
}

// RecheckRefused is RequestRecheck's answer to a request within the interval: the next
// request is allowed at Next.
type RecheckRefused struct {
	Next time.Time
}

func (e *RecheckRefused) Error() string {
	return "a re-check was asked for less than the interval ago; the next is allowed at " + e.Next.UTC().Format(time.RFC3339)
}

// RequestRecheck asks for a round of the entry at once: unless one was asked for less
// than every before at, it records the request and sets the entry's ReasonManual due
// time to at, in one transaction (the rounds worker picks it up at its next poll). A
// request within the interval changes nothing and returns a *RecheckRefused;
// ErrNotFound without such entry.
func (s *sqlStore) RequestRecheck(ctx context.Context, entryID int64, at time.Time, every time.Duration) error {
	at = at.UTC().Truncate(time.Millisecond)
	err := s.writeTx(ctx, func(tx querier) error {
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM entries WHERE id = ?`, entryID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("entry %d: %w", entryID, ErrNotFound)
		}
		var last time.Time
		err := tx.QueryRow(ctx, `SELECT requested_at FROM rechecks WHERE entry_id = ?`, entryID).Scan(timeCol(&last))
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		case at.Before(last.Add(every)):
			return &RecheckRefused{Next: last.Add(every)}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO rechecks (entry_id, requested_at) VALUES (?, ?)
			ON CONFLICT (entry_id) DO UPDATE SET requested_at = excluded.requested_at`, entryID, s.d.time(at)); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, upsertDueSQL, entryID, string(ReasonManual), s.d.time(at))
		return err
	})
	if err != nil {
		var refused *RecheckRefused
		if errors.As(err, &refused) {
			return err
		}
		return fmt.Errorf("couldn't ask for a re-check of entry %d: %w", entryID, err)
	}
	return nil
}

// upsertMaintainerListingSQL writes an entry's maintainer listing (entry_id,
// description, setup_notes, links, revision, updated_at); SaveHistory runs it after
// checking the revision, in the transaction of the edit's changes.
const upsertMaintainerListingSQL = `
	INSERT INTO maintainer_listings (entry_id, description, setup_notes, links, revision, updated_at)
	VALUES (?, ?, ?, ?, ?, ?)
	ON CONFLICT (entry_id) DO UPDATE SET description = excluded.description, setup_notes = excluded.setup_notes,
		links = excluded.links, revision = excluded.revision, updated_at = excluded.updated_at`

// historyListingLinks is the links column of a history update's listing ("" without).
func historyListingLinks(u *HistoryUpdate) (string, error) {
	if u.Listing == nil {
		return "", nil
	}
	return encodeListingLinks(u.Listing.Listing.Links)
}
