// Package regsync brings listed servers into the store: Import, the one way a server
// read from an import file or a registry enters it, and Syncer, the sync from an MCP
// registry's GET /v0.1/servers (package registry is its client), run by `probity
// registry sync` and, under `probity serve`, by a River job (SyncWorker).
//
// It is kept apart from package registry so that the client, its types and its bounds
// stay importable without the store and its database drivers.
//
// # Import
//
// Import takes a targets.Server (targets owns the rule that turns a server.json into
// parts, the primary part first) and upserts it (store.UpsertServer): a new server
// becomes an entry with its first due times; a known one (same server name, or a bare
// reference's entry that holds its primary part) gets its listing and parts updated,
// never its slug, history or schedule; listing and unlisting leave no history (seed
// 000). The server.json is stored in Probity's canonical JSON (nfc-jcs/v1,
// attest.Canonicalize), so a document read twice is stored byte for byte the same and a
// re-import that changes nothing changes nothing. A server whose listing is deprecated
// or deleted is unlisted; one Probity has no entry for is not added at all. A part
// another entry holds stays with it and is reported (ConflictText).
//
// # Sync
//
// See Syncer.Sync for the walk: incremental by updated_since, resumable after a crash,
// idempotent.
package regsync

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/targets"
)

// Store is what Import needs of the store; store.Store has it.
type Store interface {
	// UpsertServer adds or updates one server (store.Store.UpsertServer).
	UpsertServer(ctx context.Context, s store.ServerUpsert) (store.UpsertResult, error)
	// Listings reads servers by name (store.Store.Listings).
	Listings(ctx context.Context, q store.ListingQuery) ([]store.ServerListing, error)
}

// DueFunc returns a new entry's first due times; rounds.Schedule.FirstDue is one.
type DueFunc func(e store.Entry, now time.Time) []store.Due

// ImportOptions say how Import adds a server.
type ImportOptions struct {
	// Source is the new entry's source ("import", "registry"); default the
	// Server's.
	Source string
	// Due gives a new entry its first due times; nil: none.
	Due DueFunc
	// Now is the time the due times count from; default time.Now().
	Now time.Time
}

// Result is what Import did.
type Result struct {
	store.UpsertResult
	// Skipped: the server is unlisted (deprecated or deleted) and Probity has no entry
	// for it, so nothing was added.
	Skipped bool
}

// ErrInvalid marks a server Import refuses before the store sees it (a server.json
// that is not acceptable canonical JSON input, a listing the store would refuse);
// callers go on with the next server.
var ErrInvalid = errors.New("invalid server")

// Import adds s to the store or updates its listing; see the package documentation.
// An error wrapping ErrInvalid or store.ErrPartsTaken concerns s alone; any other is
// the store's.
func Import(ctx context.Context, st Store, s targets.Server, opts ImportOptions) (Result, error) {
	u, err := upsertOf(s, opts)
	if err != nil {
		return Result{}, err
	}
	if !u.Listing.Listed() && u.Listing.ServerName != "" {
		known, err := st.Listings(ctx, store.ListingQuery{Name: u.Listing.ServerName, IncludeUnlisted: true, Limit: 1})
		if err != nil {
			return Result{}, fmt.Errorf("couldn't look up %s: %w", u.Listing.ServerName, err)
		}
		if len(known) == 0 {
			return Result{Skipped: true}, nil
		}
	}
	res, err := st.UpsertServer(ctx, u)
	if err != nil {
		return Result{}, fmt.Errorf("couldn't store %s: %w", serverLabel(s), err)
	}
	return Result{UpsertResult: res}, nil
}

// upsertOf makes the store's ServerUpsert of s.
func upsertOf(s targets.Server, opts ImportOptions) (store.ServerUpsert, error) {
	if len(s.Parts) == 0 {
		return store.ServerUpsert{}, fmt.Errorf("%w: %s has no parts", ErrInvalid, serverLabel(s))
	}
	u := store.ServerUpsert{
		SlugBase: s.SlugBase,
		Name:     s.Name,
		Source:   s.Source,
		Listing: store.Listing{
			ServerName:   s.ServerName,
			Title:        s.Title,
			Description:  s.Description,
			Website:      s.Website,
			Version:      s.Version,
			RegistryMeta: s.RegistryMeta,
			Status:       s.Status,
		},
	}
	if opts.Source != "" {
		u.Source = opts.Source
	}
	if s.Document != nil {
		doc, err := attest.Canonicalize(s.Document)
		if err != nil {
			return store.ServerUpsert{}, fmt.Errorf("%w: the server.json of %s: %v", ErrInvalid, serverLabel(s), err)
		}
		u.Listing.Document = doc
	}
	for _, p := range s.Parts {
		u.Parts = append(u.Parts, store.Part{Kind: p.Kind, Locator: p.Locator, Transport: p.Transport, Version: p.Version})
	}
	if err := u.Check(); err != nil {
		return store.ServerUpsert{}, fmt.Errorf("%w: %s: %v", ErrInvalid, serverLabel(s), err)
	}
	if opts.Due != nil {
		now := opts.Now
		if now.IsZero() {
			now = time.Now()
		}
		u.Due = opts.Due(store.Entry{Kind: s.Kind, Locator: s.Locator, Name: s.Name, Source: u.Source}, now)
	}
	return u, nil
}

// serverLabel names s in a message: its server name, else its primary part.
func serverLabel(s targets.Server) string {
	if s.ServerName != "" {
		return s.ServerName
	}
	return PartText(store.Part{Kind: s.Kind, Locator: s.Locator})
}

// PartText names a part as an operator writes it: npm:NAME, pypi:NAME, the URL of a
// remote or repository, oci:ID, nuget:ID, mcpb:URL.
func PartText(p store.Part) string {
	switch p.Kind {
	case store.KindNPM, store.KindPyPI:
		name := p.Locator[strings.LastIndexByte(p.Locator, ':')+1:]
		name = strings.TrimPrefix(name, p.Kind+"/")
		if n, err := url.PathUnescape(name); err == nil {
			name = n
		}
		return p.Kind + ":" + name
	case store.KindRemote, store.KindGitHub:
		return p.Locator
	}
	return p.Kind + ":" + p.Locator
}

// ConflictText says which entry holds a part Import could not link:
// "npm:foo is already part of entry bar".
func ConflictText(c store.PartConflict) string {
	return fmt.Sprintf("%s is already part of entry %s", PartText(c.Part), c.EntrySlug)
}
