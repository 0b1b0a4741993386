package regsync

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/probity-dev/probity/registry"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/targets"
)

// SyncStore is what a Syncer needs of the store; store.Store has it.
type SyncStore interface {
	Store
	// RegistrySyncState returns a registry's sync state (store.Store).
	RegistrySyncState(ctx context.Context, baseURL string) (store.RegistrySync, error)
	// SaveRegistrySync stores it (store.Store).
	SaveRegistrySync(ctx context.Context, s store.RegistrySync) error
}

// DefaultOverlap is how far before the stored mark an incremental sync starts reading:
// the mark is the newest updatedAt the last walk read, on the registry's clock, and an
// item the registry wrote with an earlier updatedAt that was not yet visible then (a
// concurrent transaction) would otherwise be missed. Items read again change nothing.
const DefaultOverlap = 5 * time.Minute

// maxProblems bounds the problems a Summary lists; the counts count them all.
const maxProblems = 50

// SyncConfig configures a Syncer.
type SyncConfig struct {
	// Store keeps the servers and the sync state.
	Store SyncStore
	// Client reads the registry; its BaseURL keys the sync state.
	Client *registry.Client
	// Due gives new entries their first due times (rounds.Schedule.FirstDue); nil:
	// none.
	Due DueFunc
	// Overlap is DefaultOverlap unless set; negative for none.
	Overlap time.Duration
	// Logger receives one event per walk and per refused server; default discards.
	Logger *slog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Progress, when set, is called after each page is stored.
	Progress func(Summary)
}

// Syncer syncs the servers of one registry into the store. It is safe for use by one
// goroutine at a time; two syncs of one registry at once (two processes) do no harm
// but redundant work: every step is idempotent.
type Syncer struct {
	cfg SyncConfig
}

// NewSyncer returns a Syncer for cfg.
func NewSyncer(cfg SyncConfig) (*Syncer, error) {
	if cfg.Store == nil || cfg.Client == nil {
		return nil, errors.New("regsync: SyncConfig needs a Store and a Client")
	}
	switch {
	case cfg.Overlap == 0:
		cfg.Overlap = DefaultOverlap
	case cfg.Overlap < 0:
		cfg.Overlap = 0
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Syncer{cfg: cfg}, nil
}

// SyncOptions select the kind of walk.
type SyncOptions struct {
	// Full reads every server instead of those updated since the mark, and discards a
	// walk in progress (so it is the way out of a walk that cannot go on).
	Full bool
}

// Summary is what a sync did, so far or in all.
type Summary struct {
	BaseURL string
	// Since is the walk's updated_since (zero: a full walk); Resumed says the walk
	// was one a crash or an error had stopped, continued at its cursor.
	Since   time.Time
	Resumed bool
	// Pages and Items count the pages and list items (server versions) read by this
	// run; Servers the server names whose listing they decided.
	Pages, Items, Servers int
	// What became of those servers: Created (new entries), Updated (listing or parts
	// changed), Unchanged, Unlisted (of those, the ones now deprecated or deleted),
	// Skipped (unlisted and never added), Invalid (a server.json Probity cannot use,
	// or parts all held by other entries).
	Created, Updated, Unchanged, Unlisted, Skipped, Invalid int
	// Conflicts counts parts left with the entry that holds them.
	Conflicts int
	// Problems are the first 50 refused servers and conflicts, one line each.
	Problems []string
	// Newest is the newest updatedAt read; Elapsed the time this run took.
	Newest  time.Time
	Elapsed time.Duration
}

// problem records one line of Problems.
func (s *Summary) problem(format string, args ...any) {
	if len(s.Problems) < maxProblems {
		s.Problems = append(s.Problems, fmt.Sprintf(format, args...))
	}
}

// Sync walks the registry's list and imports, page by page, the version of each server
// the registry lists (isLatest; registry.Latest). It
//
//   - reads what was updated since the stored mark less the overlap (updated_since), or
//     everything on the first sync and with Full, always with include_deleted=true, so
//     deprecated and deleted servers come through and are unlisted, and come back when
//     they are active again;
//   - stores each page's servers, then the cursor of the next page (and the newest
//     updatedAt read), so a sync stopped anywhere, by a crash or a refused page,
//     resumes at the first page it did not store: the next Sync continues that walk
//     before it starts another;
//   - on the last page, moves the mark to the newest updatedAt read (never past the
//     walk's start) and ends the walk.
//
// A page the client refuses (too large, too many items, a cursor loop, not a server
// list, an HTTP error; registry.PageError) ends the sync with that error: everything
// stored before stays, and the walk stays resumable. A server the store refuses ends it
// too (the page is read again next time); a server.json Probity cannot use is counted
// in Invalid and skipped. The Summary says what was done either way.
//
// The version listed is chosen per page (registry.Latest over the page's items): a
// name whose versions straddle two pages is decided by the isLatest item wherever it
// stands. A registry that writes no official metadata (no updatedAt) gives no mark, so
// each of its syncs reads everything.
func (sy *Syncer) Sync(ctx context.Context, opts SyncOptions) (Summary, error) {
	start := sy.cfg.Now()
	base := sy.cfg.Client.BaseURL()
	sum := Summary{BaseURL: base}
	st, err := sy.cfg.Store.RegistrySyncState(ctx, base)
	if err != nil {
		return sum, fmt.Errorf("couldn't read the sync state of %s: %w", base, err)
	}
	st.BaseURL = base
	inWalk := !st.WalkStarted.IsZero()
	if inWalk && !opts.Full {
		sum.Resumed = true
	} else {
		st.WalkSince, st.Cursor, st.WalkNewest, st.WalkStarted = time.Time{}, "", time.Time{}, start.UTC()
		if !opts.Full && !st.Since.IsZero() {
			st.WalkSince = st.Since.Add(-sy.cfg.Overlap)
		}
		if err := sy.cfg.Store.SaveRegistrySync(ctx, st); err != nil {
			return sum, fmt.Errorf("couldn't save the sync state of %s: %w", base, err)
		}
	}
	sum.Since = st.WalkSince
	sum.Newest = st.WalkNewest
	sy.cfg.Logger.InfoContext(ctx, "registry sync", "registry", base, "since", st.WalkSince, "cursor", st.Cursor, "resumed", sum.Resumed)
	for page, err := range sy.cfg.Client.Pages(ctx, registry.ListOptions{Cursor: st.Cursor, UpdatedSince: st.WalkSince, IncludeDeleted: true}) {
		if err != nil {
			sum.Elapsed = sy.cfg.Now().Sub(start)
			return sum, fmt.Errorf("registry sync of %s stopped; the %d pages before were stored and the next sync resumes there: %w", base, sum.Pages, err)
		}
		if err := sy.page(ctx, page, &sum); err != nil {
			sum.Elapsed = sy.cfg.Now().Sub(start)
			return sum, err
		}
		st.Cursor, st.WalkNewest = page.NextCursor, sum.Newest
		if page.NextCursor == "" {
			// The last page: the walk is done, the mark moves, but never past the walk's
			// start: a server on a page read early and updated later in the walk (a
			// resumed walk can span hours) is read again by the next sync.
			newest := sum.Newest
			if !st.WalkStarted.IsZero() && newest.After(st.WalkStarted) {
				newest = st.WalkStarted.UTC()
			}
			if newest.After(st.Since) {
				st.Since = newest
			}
			st.WalkSince, st.WalkNewest, st.WalkStarted = time.Time{}, time.Time{}, time.Time{}
			st.Finished, st.Servers = sy.cfg.Now().UTC(), int64(sum.Items)
		}
		if err := sy.cfg.Store.SaveRegistrySync(ctx, st); err != nil {
			sum.Elapsed = sy.cfg.Now().Sub(start)
			return sum, fmt.Errorf("couldn't save the sync state of %s after page %d: %w", base, sum.Pages, err)
		}
		sum.Elapsed = sy.cfg.Now().Sub(start)
		if sy.cfg.Progress != nil {
			sy.cfg.Progress(sum)
		}
	}
	sum.Elapsed = sy.cfg.Now().Sub(start)
	sy.cfg.Logger.InfoContext(ctx, "registry sync done", "registry", base, "pages", sum.Pages, "items", sum.Items,
		"created", sum.Created, "updated", sum.Updated, "unchanged", sum.Unchanged, "unlisted", sum.Unlisted,
		"skipped", sum.Skipped, "invalid", sum.Invalid, "conflicts", sum.Conflicts, "ms", sum.Elapsed.Milliseconds())
	return sum, nil
}

// page imports the listed version of every server name of one page.
func (sy *Syncer) page(ctx context.Context, page *registry.Page, sum *Summary) error {
	sum.Pages++
	sum.Items += len(page.Entries)
	for _, e := range page.Entries {
		if e.Official != nil && e.Official.UpdatedAt.After(sum.Newest) {
			sum.Newest = e.Official.UpdatedAt.UTC()
		}
	}
	var latest registry.Latest
	latest.Add(page.Entries)
	now := sy.cfg.Now()
	for _, l := range latest.Listings() {
		if l.Latest == nil {
			continue // only older versions changed: the listing stays as it is
		}
		sum.Servers++
		s, _, err := targets.ParseServerJSON(l.Latest.Raw)
		if err != nil {
			sum.Invalid++
			sum.problem("%s: %v", l.Name, err)
			sy.cfg.Logger.WarnContext(ctx, "registry server refused", "server", l.Name, "err", err)
			continue
		}
		s.RegistryMeta, s.Status = officialOf(l.Latest)
		res, err := Import(ctx, sy.cfg.Store, s, ImportOptions{Source: "registry", Due: sy.cfg.Due, Now: now})
		switch {
		case errors.Is(err, ErrInvalid), errors.Is(err, store.ErrPartsTaken):
			sum.Invalid++
			sum.problem("%s: %v", l.Name, err)
			continue
		case err != nil:
			return err
		}
		for _, c := range res.Conflicts {
			sum.Conflicts++
			sum.problem("%s: %s", l.Name, ConflictText(c))
		}
		switch {
		case res.Skipped:
			sum.Skipped++
			continue
		case res.Created:
			sum.Created++
		case res.Updated:
			sum.Updated++
		default:
			sum.Unchanged++
		}
		if s.Status != "" && s.Status != store.StatusActive {
			sum.Unlisted++
		}
	}
	return nil
}

// officialOf returns the registry's metadata of e as received, compact (nil when it
// has none), and its status.
func officialOf(e *registry.Entry) ([]byte, string) {
	if e.Official == nil {
		return nil, ""
	}
	var meta map[string]json.RawMessage
	var b bytes.Buffer
	if json.Unmarshal(e.Meta, &meta) == nil && json.Compact(&b, meta[registry.OfficialMetaKey]) == nil {
		return b.Bytes(), string(e.Official.Status)
	}
	raw, _ := json.Marshal(e.Official) // the typed view, should the bytes be unusable
	return raw, string(e.Official.Status)
}
