// Package listing is what a maintainer of an entry does to it besides claiming it
// (issue 18, seed 000 "Für Server-Betreiber"): edit the maintainer's listing, and ask
// for a re-check now.
//
// The maintainer's listing is a description, setup notes and up to five https links
// (store.MaintainerListing; the rules are store.CheckMaintainerListing's). It is apart
// from the registry's listing, which a sync overwrites, and the site shows it next to
// the registry's, as the server's operator's text, never as HTML. Every saved edit is in
// the entry's history as one operator edit per changed field ("description",
// "setup_notes", "links"), with the text before and after (the setup notes: only that
// they changed, history.RecordsEditText), without who saved it, and so goes to
// followers. The listing and its changes are stored in one transaction
// (history.Processor.RecordOperatorEdits with store.HistoryUpdate.Listing): a crash
// stores both or neither. An edit computed from a listing that another edit replaced
// meanwhile (store.ErrStaleListing) is computed again from the new one, so each
// change's "before" is the text it replaced.
//
// A re-check asks for a round of the entry at once (store.RequestRecheck: the entry's
// manual due time, which the rounds worker polls for, within its per-host politeness),
// at most once per entry per Config.RecheckInterval.
package listing

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/store"
)

// Store is what the service reads and writes of the store (store.Store is one).
type Store interface {
	MaintainerListing(ctx context.Context, entryID int64) (store.MaintainerListing, error)
	RequestRecheck(ctx context.Context, entryID int64, at time.Time, every time.Duration) error
}

// History records the edits (*history.Processor is one): the changes and the listing
// in one transaction, store.ErrStaleListing when the listing's revision is stale.
type History interface {
	RecordOperatorEdits(ctx context.Context, entryID int64, edits []history.Edit, listing *store.ListingUpdate, at time.Time) ([]store.ChangeRecord, error)
}

// DefaultRecheckInterval is how often a zero Config.RecheckInterval lets an entry's
// maintainers ask for a re-check.
const DefaultRecheckInterval = 10 * time.Minute

// DefaultEditsPerHour is a zero Config.EditsPerHour.
const DefaultEditsPerHour = 10

// TooManyEdits refuses an edit past Config.EditsPerHour; RetryAfter is when the next
// is taken.
type TooManyEdits struct{ RetryAfter time.Duration }

func (e *TooManyEdits) Error() string {
	return fmt.Sprintf("this listing was edited often in the last hour; save again in %v", e.RetryAfter.Round(time.Minute))
}

// Config configures New.
type Config struct {
	Store   Store
	History History
	// RecheckInterval is the least time between two re-checks of one entry asked for
	// by its maintainers; zero means DefaultRecheckInterval.
	RecheckInterval time.Duration
	// EditsPerHour is how many saved edits an entry's listing takes an hour (0:
	// DefaultEditsPerHour), counted in this process: every saved field is a signed
	// change in the ledger and the log, and a maintainer toggling a field must not
	// flood them or push the entry's real changes out of sight.
	EditsPerHour int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Service edits maintainers' listings and asks for re-checks. Safe for concurrent use.
type Service struct {
	cfg Config

	mu    sync.Mutex
	saved map[int64][]time.Time // an entry's saved edits in the last hour
}

// New returns a Service; it fails without a Store or History, or with a negative
// interval.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil || cfg.History == nil {
		return nil, errors.New("listing: Config needs a Store and a History")
	}
	if cfg.RecheckInterval < 0 {
		return nil, fmt.Errorf("listing: the re-check interval %v is negative", cfg.RecheckInterval)
	}
	if cfg.RecheckInterval == 0 {
		cfg.RecheckInterval = DefaultRecheckInterval
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.EditsPerHour <= 0 {
		cfg.EditsPerHour = DefaultEditsPerHour
	}
	return &Service{cfg: cfg, saved: map[int64][]time.Time{}}, nil
}

// RecheckInterval is the least time between two re-checks of one entry.
func (s *Service) RecheckInterval() time.Duration { return s.cfg.RecheckInterval }

// MaintainerListing returns the entry's maintainer listing (Revision 0: none saved).
func (s *Service) MaintainerListing(ctx context.Context, entryID int64) (store.MaintainerListing, error) {
	return s.cfg.Store.MaintainerListing(ctx, entryID)
}

// Normalize is the form of a listing that is stored and compared: line ends as "\n",
// the texts without trailing white space, the links' labels and addresses trimmed.
func Normalize(l store.MaintainerListing) store.MaintainerListing {
	text := func(s string) string {
		s = strings.ReplaceAll(s, "\r\n", "\n")
		s = strings.ReplaceAll(s, "\r", "\n")
		return strings.TrimRight(s, " \t\n")
	}
	out := store.MaintainerListing{EntryID: l.EntryID, Description: text(l.Description), SetupNotes: text(l.SetupNotes)}
	for _, k := range l.Links {
		out.Links = append(out.Links, store.ListingLink{Label: strings.TrimSpace(k.Label), URL: strings.TrimSpace(k.URL)})
	}
	return out
}

// LinksText is the links of a listing as the history records them: one line a link,
// "label <address>".
func LinksText(links []store.ListingLink) string {
	var b strings.Builder
	for i, k := range links {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(k.Label + " <" + k.URL + ">")
	}
	return b.String()
}

// maxStaleRetries bounds how often an edit is computed again after another edit
// replaced the listing it was computed from.
const maxStaleRetries = 3

// Edit saves want (normalized, Normalize) as the entry's maintainer listing and records
// an operator edit for each field that changed. It returns the names of the changed
// fields, none when want is the stored listing (nothing is recorded then). A listing
// that breaks the rules fails with a *store.ListingFieldError.
func (s *Service) Edit(ctx context.Context, entryID int64, want store.MaintainerListing) ([]string, error) {
	want = Normalize(want)
	want.EntryID = entryID
	if err := store.CheckMaintainerListing(&want); err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		cur, err := s.cfg.Store.MaintainerListing(ctx, entryID)
		if err != nil {
			return nil, err
		}
		edits := diff(cur, want)
		if len(edits) == 0 {
			return nil, nil
		}
		if err := s.budget(entryID, s.cfg.Now()); err != nil {
			return nil, err
		}
		_, err = s.cfg.History.RecordOperatorEdits(ctx, entryID, edits,
			&store.ListingUpdate{Listing: want, ExpectRevision: cur.Revision}, s.cfg.Now())
		if errors.Is(err, store.ErrStaleListing) && attempt < maxStaleRetries {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("couldn't save the listing of entry %d: %w", entryID, err)
		}
		s.spend(entryID, s.cfg.Now())
		fields := make([]string, len(edits))
		for i, e := range edits {
			fields[i] = e.Field
		}
		return fields, nil
	}
}

// diff is the operator edits that turn cur into want, in the fields' order.
func diff(cur, want store.MaintainerListing) []history.Edit {
	var edits []history.Edit
	if cur.Description != want.Description {
		edits = append(edits, history.Edit{Field: "description", Before: cur.Description, After: want.Description})
	}
	if cur.SetupNotes != want.SetupNotes {
		edits = append(edits, history.Edit{Field: "setup_notes", Before: cur.SetupNotes, After: want.SetupNotes})
	}
	if before, after := LinksText(cur.Links), LinksText(want.Links); before != after {
		edits = append(edits, history.Edit{Field: "links", Before: before, After: after})
	}
	return edits
}

// Recheck asks for a round of the entry at once. Within the interval of the last
// request it fails with a *store.RecheckRefused that says when the next is allowed.
func (s *Service) Recheck(ctx context.Context, entryID int64) error {
	return s.cfg.Store.RequestRecheck(ctx, entryID, s.cfg.Now(), s.cfg.RecheckInterval)
}

// budget refuses an edit of the entry when EditsPerHour were saved in the last hour.
func (s *Service) budget(entryID int64, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	hour := now.Add(-time.Hour)
	ts := slices.DeleteFunc(s.saved[entryID], func(t time.Time) bool { return !t.After(hour) })
	if len(ts) == 0 {
		delete(s.saved, entryID)
	} else {
		s.saved[entryID] = ts
	}
	if len(ts) >= s.cfg.EditsPerHour {
		return &TooManyEdits{RetryAfter: ts[0].Add(time.Hour).Sub(now)}
	}
	return nil
}

// spend counts a saved edit of the entry.
func (s *Service) spend(entryID int64, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.saved[entryID] = append(s.saved[entryID], now)
}
