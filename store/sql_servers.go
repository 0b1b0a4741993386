package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrPartsTaken is returned by UpsertServer when every checked part of a new server
// belongs to other entries, so there is nothing to make an entry of.
var ErrPartsTaken = errors.New("every checked part of the server belongs to another entry")

// partKinds are the kinds a part may have; the first four are checked.
var partKinds = []string{KindRemote, KindNPM, KindPyPI, KindGitHub, PartOCI, PartNuGet, PartMCPB}

// listingColumns are the columns scanListing reads, after the entry's.
const listingColumns = `description, website, listing_version, listing, registry_meta, listing_updated_at`

// scanEntryListing scans entryColumns then listingColumns of one row.
func scanEntryListing(row rowScanner) (ServerListing, error) {
	var (
		sl        ServerListing
		cadenceMS int64
		status    string
		parent    *int64
		e         = &sl.Entry
		l         = &sl.Listing
	)
	err := row.Scan(&e.ID, &e.Slug, &e.Kind, &e.Locator, &e.Name, &e.Source, &e.Claimed, &cadenceMS,
		timeCol(&e.CreatedAt), timeCol(&e.LastRoundAt), nullStringCol{&e.LastSurface},
		&e.UptimeOnlineDays, &e.UptimeCountedDays, nullStringCol{&e.ServerName}, &e.Title, &status, &parent,
		&l.Description, &l.Website, &l.Version, &l.Document, &l.RegistryMeta, timeCol(&l.UpdatedAt))
	if err != nil {
		return ServerListing{}, err
	}
	e.Cadence = time.Duration(cadenceMS) * time.Millisecond
	e.Listed = status == StatusActive
	if parent != nil {
		e.Parent = *parent
	}
	l.ServerName, l.Title, l.Status = e.ServerName, e.Title, status
	if len(l.Document) == 0 {
		l.Document = nil
	}
	if len(l.RegistryMeta) == 0 {
		l.RegistryMeta = nil
	}
	return sl, nil
}

// remotesOfSQL reads the listed remote entries of a server's entry (?), oldest first.
const remotesOfSQL = `SELECT ` + entryColumns + ` FROM entries WHERE parent_id = ? AND listing_status = 'active' ORDER BY id`

func scanPart(row rowScanner) (entryPart, error) {
	var p entryPart
	err := row.Scan(&p.entryID, &p.position, &p.Kind, &p.Locator, &p.Transport, &p.Version)
	return p, err
}

// entryPart is a part as stored, with its entry and position; or a server's later
// remote, held by its own entry (position -1) whose server is parent.
type entryPart struct {
	Part
	entryID  int64
	position int
	parent   int64
}

const partColumns = `entry_id, position, kind, locator, transport, version`

// Bounds of a listing's documents.
const (
	// MaxListingDocument is the largest server.json a listing keeps.
	MaxListingDocument = 1 << 20
	// MaxRegistryMeta is the largest registry metadata a listing keeps.
	MaxRegistryMeta = 64 << 10
)

// Check reports what UpsertServer would refuse in u before it touches the store: the
// one statement of a server's bounds, for callers that go on with the next server.
func (u ServerUpsert) Check() error {
	_, err := checkUpsert(u)
	return err
}

// checkUpsert refuses a ServerUpsert UpsertServer cannot store, and returns its parts
// without repeats.
func checkUpsert(u ServerUpsert) ([]Part, error) {
	if !slugBasePattern.MatchString(u.SlugBase) {
		return nil, fmt.Errorf("slug %q does not match %s", u.SlugBase, slugBasePattern)
	}
	if len(u.Parts) == 0 {
		return nil, errors.New("a server needs at least one part")
	}
	if !slices.Contains(entryKinds, u.Parts[0].Kind) {
		return nil, fmt.Errorf("the primary part's kind %q is not one of %v", u.Parts[0].Kind, entryKinds)
	}
	l := u.Listing
	for _, f := range []struct {
		name, v string
		max     int
	}{
		{"server name", l.ServerName, 200}, {"title", l.Title, 200}, {"description", l.Description, 2000},
		{"website", l.Website, 2000}, {"version", l.Version, 255}, {"name", u.Name, 2000},
	} {
		if utf8.RuneCountInString(f.v) > f.max || !utf8.ValidString(f.v) {
			return nil, fmt.Errorf("the listing's %s is longer than %d characters or not UTF-8", f.name, f.max)
		}
	}
	if l.ServerName != "" && len(l.ServerName) < 3 {
		return nil, fmt.Errorf("server name %q is shorter than 3 characters", l.ServerName)
	}
	if len(l.Document) > MaxListingDocument || len(l.RegistryMeta) > MaxRegistryMeta {
		return nil, fmt.Errorf("the listing's server.json (%d bytes) or registry metadata (%d bytes) is over %d or %d bytes",
			len(l.Document), len(l.RegistryMeta), MaxListingDocument, MaxRegistryMeta)
	}
	switch l.Status {
	case "", StatusActive, StatusDeprecated, StatusDeleted:
	default:
		return nil, fmt.Errorf("listing status %q is not active, deprecated or deleted", l.Status)
	}
	parts := make([]Part, 0, len(u.Parts))
	for _, p := range u.Parts {
		if !slices.Contains(partKinds, p.Kind) {
			return nil, fmt.Errorf("part kind %q is not one of %v", p.Kind, partKinds)
		}
		if p.Locator == "" || len(p.Locator) > 2000 || len(p.Transport) > 32 || len(p.Version) > 255 {
			return nil, fmt.Errorf("part %s %q: empty or too long", p.Kind, p.Locator)
		}
		if !slices.ContainsFunc(parts, func(q Part) bool { return q.Kind == p.Kind && q.Locator == p.Locator }) {
			parts = append(parts, p)
		}
	}
	for _, d := range u.Due {
		if err := checkReason(d.Reason); err != nil {
			return nil, err
		}
	}
	return parts, nil
}

// upsertServer is UpsertServer run in tx (a write transaction; on PostgreSQL holding
// the AddEntry lock), with the cadence of a new entry.
func (s *sqlStore) upsertServer(ctx context.Context, tx querier, u ServerUpsert, parts []Part,
	cadence time.Duration, now time.Time) (UpsertResult, error) {
	var (
		res   UpsertResult
		found *ServerListing
	)
	if u.Listing.Status == "" {
		u.Listing.Status = StatusActive
	}
	byName := func() error {
		if u.Listing.ServerName == "" {
			return nil
		}
		sl, err := scanEntryListing(tx.QueryRow(ctx,
			`SELECT `+entryColumns+`, `+listingColumns+` FROM entries WHERE server_name = ?`, u.Listing.ServerName))
		if err == nil {
			found = &sl
		} else if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		return nil
	}
	if err := byName(); err != nil {
		return res, err
	}

	// Who holds each part now.
	holders := make(map[Part]entryPart, len(parts))
	for _, p := range parts {
		ep, err := scanPart(tx.QueryRow(ctx,
			`SELECT `+partColumns+` FROM entry_parts WHERE kind = ? AND locator = ?`, p.Kind, p.Locator))
		if err == nil {
			holders[p.key()] = ep
			continue
		} else if !errors.Is(err, sql.ErrNoRows) {
			return res, err
		}
		// A server's later remote has an entry of its own and no part row: its entry
		// holds it, also once its server no longer lists it.
		var id, parent int64
		err = tx.QueryRow(ctx, `SELECT id, parent_id FROM entries WHERE kind = ? AND locator = ? AND parent_id IS NOT NULL`,
			p.Kind, p.Locator).Scan(&id, &parent)
		if err == nil {
			holders[p.key()] = entryPart{Part: p, entryID: id, position: -1, parent: parent}
		} else if !errors.Is(err, sql.ErrNoRows) {
			return res, err
		}
	}

	if found == nil {
		// The entry holding the primary part, made from a bare reference or an earlier
		// import, becomes this server's entry when it has no server name yet.
		if ep, ok := holders[parts[0].key()]; ok {
			sl, err := scanEntryListing(tx.QueryRow(ctx,
				`SELECT `+entryColumns+`, `+listingColumns+` FROM entries WHERE id = ?`, ep.entryID))
			if err != nil {
				return res, err
			}
			if u.Listing.ServerName == "" || sl.Entry.ServerName != "" {
				// A bare reference of a part some entry holds, or a part of another
				// named server: that entry, unchanged.
				if u.Listing.ServerName == "" {
					res.Entry = sl.Entry
					return res, nil
				}
			} else if ep.position == 0 {
				found = &sl
			}
		}
	}

	var owner int64
	if found != nil {
		owner = found.Entry.ID
	}
	keep := parts[:0:0]
	for _, p := range parts {
		if ep, ok := holders[p.key()]; ok && ep.entryID != owner && (owner == 0 || ep.parent != owner) {
			slug, err := s.slugOf(ctx, tx, ep.entryID)
			if err != nil {
				return res, err
			}
			res.Conflicts = append(res.Conflicts, PartConflict{Part: p, EntrySlug: slug})
			continue
		}
		keep = append(keep, p)
	}
	// The primary part is the entry's own while it is listed, else the first checked
	// one left, in the order given.
	i := slices.IndexFunc(keep, func(p Part) bool { return slices.Contains(entryKinds, p.Kind) })
	if found != nil {
		if j := slices.IndexFunc(keep, func(p Part) bool {
			return p.Kind == found.Entry.Kind && p.Locator == found.Entry.Locator
		}); j >= 0 {
			i = j
		}
	}
	if i < 0 {
		return res, ErrPartsTaken
	}
	if i > 0 {
		p := keep[i]
		keep = append([]Part{p}, slices.Delete(slices.Clone(keep), i, i+1)...)
	}

	if found != nil && (keep[0].Kind != found.Entry.Kind || keep[0].Locator != found.Entry.Locator) {
		// The primary part moves (the old one is no longer listed). A remote that has
		// an entry of its own (a later remote of this server) cannot become the
		// server's entry's locator without merging two histories: the listing (title,
		// status, …) is updated, the parts stay as they were, and the move is reported
		// as a conflict naming that entry (remove it, then sync again with --full).
		var slug string
		err := tx.QueryRow(ctx, `SELECT slug FROM entries WHERE kind = ? AND locator = ? AND id <> ?`,
			keep[0].Kind, keep[0].Locator, found.Entry.ID).Scan(&slug)
		if err == nil {
			res.Conflicts = append(res.Conflicts, PartConflict{Part: keep[0], EntrySlug: slug})
			stored, err := queryAll(ctx, tx, scanPart,
				`SELECT `+partColumns+` FROM entry_parts WHERE entry_id = ? ORDER BY position`, found.Entry.ID)
			if err != nil {
				return res, err
			}
			keep = keep[:0]
			for _, p := range stored {
				keep = append(keep, p.Part)
			}
		} else if !errors.Is(err, sql.ErrNoRows) {
			return res, err
		}
	}
	if found == nil {
		e, err := s.createServer(ctx, tx, u, keep, cadence, now)
		if err != nil {
			return res, err
		}
		res.Entry, res.Created = e, true
	} else {
		e, updated, err := s.updateServer(ctx, tx, *found, u, keep, now)
		if err != nil {
			return res, err
		}
		res.Entry, res.Updated = e, updated
	}
	changed, err := s.syncRemotes(ctx, tx, res.Entry, u, keep, now)
	if err != nil {
		return res, err
	}
	res.Updated = res.Updated || (changed && !res.Created)
	return res, nil
}

// syncRemotes gives each remote of a server after its primary part an entry of its own
// (Entry.Parent): probed as any remote, with its own rounds and history. A remote no
// longer listed keeps its entry and history, unlisted; one listed again is listed
// again; every remote entry follows its server's listing status. It reports whether it
// changed anything.
func (s *sqlStore) syncRemotes(ctx context.Context, tx querier, server Entry, u ServerUpsert, parts []Part, now time.Time) (bool, error) {
	children, err := queryAll(ctx, tx, scanEntry, `SELECT `+entryColumns+` FROM entries WHERE parent_id = ? ORDER BY id`, server.ID)
	if err != nil {
		return false, err
	}
	status := u.Listing.Status
	if status == "" {
		status = StatusActive
	}
	changed := false
	listed := map[string]bool{}
	for _, p := range parts[1:] {
		if p.Kind != KindRemote {
			continue
		}
		listed[p.Locator] = true
		if slices.ContainsFunc(children, func(c Entry) bool { return c.Locator == p.Locator }) {
			continue
		}
		if err := s.createRemote(ctx, tx, server, u, p, status, now); err != nil {
			return false, err
		}
		changed = true
	}
	for _, c := range children {
		want := status
		if !listed[c.Locator] {
			want = StatusDeleted
		}
		if c.Listed == (want == StatusActive) {
			continue
		}
		if _, err := tx.Exec(ctx, `UPDATE entries SET listing_status = ?, listing_updated_at = ? WHERE id = ?`,
			want, s.d.time(now), c.ID); err != nil {
			return false, err
		}
		changed = true
	}
	return changed, nil
}

// createRemote inserts the entry of a server's remote p: slug SERVER-remote(-N), named
// after the server and the remote's transport, with the server's first due times but
// the supply run (which the server's entry runs over all its parts).
func (s *sqlStore) createRemote(ctx context.Context, tx querier, server Entry, u ServerUpsert, p Part, status string, now time.Time) error {
	base := strings.TrimRight(server.Slug[:min(len(server.Slug), 72)], "-") + "-remote"
	taken, err := queryAll(ctx, tx, func(r rowScanner) (string, error) {
		var v string
		return v, r.Scan(&v)
	}, `SELECT slug FROM entries WHERE slug = ? OR (slug >= ? AND slug < ?)`, base, base+"-", base+".")
	if err != nil {
		return err
	}
	name := u.Name
	if p.Transport != "" {
		name += " (" + p.Transport + ")"
	}
	if utf8.RuneCountInString(name) > 2000 {
		name = u.Name
	}
	var id int64
	err = tx.QueryRow(ctx, `
		INSERT INTO entries (slug, kind, locator, name, source, claimed, cadence_ms, created_at,
			listing_status, listing_updated_at, parent_id)
		VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?)
		RETURNING id`,
		freeSlug(base, taken), KindRemote, p.Locator, name, server.Source, false, s.d.time(now),
		status, s.d.time(now), server.ID).Scan(&id)
	if err != nil {
		return err
	}
	for _, d := range u.Due {
		if d.At.IsZero() || d.Reason == ReasonSupply {
			continue
		}
		if _, err := tx.Exec(ctx, upsertDueSQL, id, string(d.Reason), s.d.time(d.At)); err != nil {
			return err
		}
	}
	return nil
}

// errRemotesAdded is deleteOne's answer when a remote entry of the entry was added
// after its remotes were deleted (a registry sync in between).
var errRemotesAdded = errors.New("a remote of the entry was added while it was being deleted")

// deleteWithRemotes deletes the remote entries of the entry with the slug
// (Entry.Parent) with del, each with its own tombstone, then the entry with deleteOne;
// a remote added in between (a sync) is deleted in turn, and the entry again.
func (s *sqlStore) deleteWithRemotes(ctx context.Context, slug, reason string,
	del, deleteOne func(ctx context.Context, slug, reason string) error) error {
	for attempt := 1; ; attempt++ {
		kids, err := queryAll(ctx, s.read, func(r rowScanner) (string, error) {
			var v string
			return v, r.Scan(&v)
		}, `SELECT c.slug FROM entries c JOIN entries p ON c.parent_id = p.id WHERE p.slug = ? ORDER BY c.id`, slug)
		if err != nil {
			return fmt.Errorf("couldn't delete entry %q: %w", slug, err)
		}
		for _, k := range kids {
			if err := del(ctx, k, reason); err != nil && !errors.Is(err, ErrNotFound) {
				return fmt.Errorf("couldn't delete entry %q with its remotes: %w", slug, err)
			}
		}
		if s.testBeforeDelete != nil {
			s.testBeforeDelete(slug)
		}
		err = deleteOne(ctx, slug, reason) // its errors name the entry
		if errors.Is(err, errRemotesAdded) && attempt < 5 {
			continue
		}
		return err
	}
}

func (p Part) key() Part { return Part{Kind: p.Kind, Locator: p.Locator} }

func (s *sqlStore) slugOf(ctx context.Context, tx querier, id int64) (string, error) {
	var slug string
	err := tx.QueryRow(ctx, `SELECT slug FROM entries WHERE id = ?`, id).Scan(&slug)
	return slug, err
}

// createServer inserts a new entry with its listing, parts and first due times.
func (s *sqlStore) createServer(ctx context.Context, tx querier, u ServerUpsert, parts []Part,
	cadence time.Duration, now time.Time) (Entry, error) {
	// The slugs base and base-*, on the slug index ("-" sorts just before ".").
	taken, err := queryAll(ctx, tx, func(r rowScanner) (string, error) {
		var v string
		return v, r.Scan(&v)
	}, `SELECT slug FROM entries WHERE slug = ? OR (slug >= ? AND slug < ?)`, u.SlugBase, u.SlugBase+"-", u.SlugBase+".")
	if err != nil {
		return Entry{}, err
	}
	l := u.Listing
	e := Entry{
		Slug: freeSlug(u.SlugBase, taken), Kind: parts[0].Kind, Locator: parts[0].Locator,
		Name: u.Name, Source: u.Source, ServerName: l.ServerName, Title: l.Title,
		Listed: l.Listed(), Cadence: cadence.Truncate(time.Millisecond),
		CreatedAt: now,
	}
	err = tx.QueryRow(ctx, `
		INSERT INTO entries (slug, kind, locator, name, source, claimed, cadence_ms, created_at,
			server_name, title, description, website, listing_version, listing, registry_meta,
			listing_status, listing_updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		RETURNING id`,
		e.Slug, e.Kind, e.Locator, e.Name, e.Source, e.Claimed, e.Cadence.Milliseconds(), s.d.time(now),
		nullString(l.ServerName), l.Title, l.Description, l.Website, l.Version, l.Document, l.RegistryMeta,
		l.Status, s.d.time(now),
	).Scan(&e.ID)
	if err != nil {
		return Entry{}, err
	}
	if err := s.insertParts(ctx, tx, e.ID, parts); err != nil {
		return Entry{}, err
	}
	for _, d := range u.Due {
		if d.At.IsZero() {
			continue
		}
		if _, err := tx.Exec(ctx, upsertDueSQL, e.ID, string(d.Reason), s.d.time(d.At)); err != nil {
			return Entry{}, err
		}
	}
	return e, nil
}

func (s *sqlStore) insertParts(ctx context.Context, tx querier, entryID int64, parts []Part) error {
	for i, p := range parts {
		if _, err := tx.Exec(ctx, `INSERT INTO entry_parts (`+partColumns+`) VALUES (?, ?, ?, ?, ?, ?)`,
			entryID, i, p.Kind, p.Locator, p.Transport, p.Version); err != nil {
			return err
		}
	}
	return nil
}

// updateServer writes a listing and parts that differ from the stored ones.
func (s *sqlStore) updateServer(ctx context.Context, tx querier, old ServerListing, u ServerUpsert,
	parts []Part, now time.Time) (Entry, bool, error) {
	stored, err := queryAll(ctx, tx, scanPart,
		`SELECT `+partColumns+` FROM entry_parts WHERE entry_id = ? ORDER BY position`, old.Entry.ID)
	if err != nil {
		return Entry{}, false, err
	}
	sameParts := len(stored) == len(parts)
	for i := 0; sameParts && i < len(parts); i++ {
		sameParts = stored[i].Part == parts[i]
	}
	l, o := u.Listing, old.Listing
	sameListing := o.ServerName == l.ServerName && o.Title == l.Title && o.Description == l.Description &&
		o.Website == l.Website && o.Version == l.Version && o.Status == l.Status &&
		bytes.Equal(o.Document, l.Document) && bytes.Equal(o.RegistryMeta, l.RegistryMeta) &&
		old.Entry.Name == u.Name
	e := old.Entry
	if sameParts && sameListing {
		return e, false, nil
	}
	e.Kind, e.Locator, e.Name = parts[0].Kind, parts[0].Locator, u.Name
	e.ServerName, e.Title, e.Listed = l.ServerName, l.Title, l.Listed()
	if !sameParts {
		if _, err := tx.Exec(ctx, `DELETE FROM entry_parts WHERE entry_id = ?`, e.ID); err != nil {
			return Entry{}, false, err
		}
	}
	_, err = tx.Exec(ctx, `
		UPDATE entries SET kind = ?, locator = ?, name = ?, server_name = ?, title = ?, description = ?,
			website = ?, listing_version = ?, listing = ?, registry_meta = ?, listing_status = ?,
			listing_updated_at = ?
		WHERE id = ?`,
		e.Kind, e.Locator, e.Name, nullString(l.ServerName), l.Title, l.Description, l.Website, l.Version,
		l.Document, l.RegistryMeta, l.Status, s.d.time(now), e.ID)
	if err != nil {
		return Entry{}, false, err
	}
	if !sameParts {
		if err := s.insertParts(ctx, tx, e.ID, parts); err != nil {
			return Entry{}, false, err
		}
	}
	return e, true, nil
}

// nullString is s, or NULL for "".
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (s *sqlStore) UpsertServer(ctx context.Context, u ServerUpsert) (UpsertResult, error) {
	parts, err := checkUpsert(u)
	if err != nil {
		return UpsertResult{}, fmt.Errorf("couldn't add server %q: %w", u.SlugBase, err)
	}
	var res UpsertResult
	err = s.writeTx(ctx, func(tx querier) error {
		var err error
		res, err = s.upsertServer(ctx, tx, u, parts, 0, s.clock().UTC().Truncate(time.Millisecond))
		return err
	})
	if err != nil {
		name := u.Listing.ServerName
		if name == "" {
			name = u.SlugBase
		}
		return UpsertResult{}, fmt.Errorf("couldn't add server %q: %w", name, err)
	}
	return res, nil
}

// AddEntry is UpsertServer of a one-part server from a bare reference.
func (s *sqlStore) AddEntry(ctx context.Context, ne NewEntry) (Entry, bool, error) {
	if err := checkNewEntry(ne); err != nil {
		return Entry{}, false, fmt.Errorf("couldn't add entry: %w", err)
	}
	u := ServerUpsert{SlugBase: ne.SlugBase, Name: ne.Name, Source: ne.Source,
		Parts: []Part{{Kind: ne.Kind, Locator: ne.Locator}}, Due: ne.Due}
	var res UpsertResult
	err := s.writeTx(ctx, func(tx querier) error {
		var err error
		res, err = s.upsertServer(ctx, tx, u, u.Parts, ne.Cadence, s.clock().UTC().Truncate(time.Millisecond))
		return err
	})
	if err != nil {
		return Entry{}, false, fmt.Errorf("couldn't add entry %q: %w", ne.SlugBase, err)
	}
	return res.Entry, res.Created, nil
}

func (s *sqlStore) EntryListing(ctx context.Context, entryID int64) (Listing, []Part, error) {
	sl, err := scanEntryListing(s.read.QueryRow(ctx,
		`SELECT `+entryColumns+`, `+listingColumns+` FROM entries WHERE id = ?`, entryID))
	if errors.Is(err, sql.ErrNoRows) {
		return Listing{}, nil, fmt.Errorf("entry %d: %w", entryID, ErrNotFound)
	}
	if err != nil {
		return Listing{}, nil, fmt.Errorf("couldn't read the listing of entry %d: %w", entryID, err)
	}
	parts, err := s.partsOf(ctx, []int64{entryID})
	if err != nil {
		return Listing{}, nil, err
	}
	return sl.Listing, parts[entryID], nil
}

// partsOf reads the parts of the entries, each entry's in position order.
func (s *sqlStore) partsOf(ctx context.Context, ids []int64) (map[int64][]Part, error) {
	out := make(map[int64][]Part, len(ids))
	for chunk := range slices.Chunk(ids, 500) {
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		eps, err := queryAll(ctx, s.read, scanPart, `SELECT `+partColumns+` FROM entry_parts
			WHERE entry_id IN (?`+strings.Repeat(`, ?`, len(chunk)-1)+`) ORDER BY entry_id, position`, args...)
		if err != nil {
			return nil, fmt.Errorf("couldn't read the parts of entries: %w", err)
		}
		for _, ep := range eps {
			out[ep.entryID] = append(out[ep.entryID], ep.Part)
		}
	}
	return out, nil
}

func (s *sqlStore) Listings(ctx context.Context, q ListingQuery) ([]ServerListing, error) {
	where := []string{`server_name IS NOT NULL`}
	var args []any
	if q.Name != "" {
		where, args = append(where, `server_name = ?`), append(args, q.Name)
	}
	if q.AfterName != "" {
		where, args = append(where, `server_name > ?`), append(args, q.AfterName)
	}
	if !q.UpdatedSince.IsZero() {
		where, args = append(where, `listing_updated_at >= ?`), append(args, s.d.time(q.UpdatedSince))
	}
	if !q.IncludeUnlisted {
		where = append(where, `listing_status = 'active'`)
	}
	if q.Search != "" {
		cond, n := s.d.contains("server_name")
		where = append(where, cond)
		for range n {
			args = append(args, likeEscape(strings.ToLower(q.Search)))
		}
	}
	args = append(args, s.d.limit(q.Limit))
	// server_name sorts bytewise on both backends: COLLATE "C" on PostgreSQL, BINARY on
	// SQLite.
	sls, err := queryAll(ctx, s.read, scanEntryListing, `SELECT `+entryColumns+`, `+listingColumns+`
		FROM entries WHERE `+strings.Join(where, ` AND `)+` ORDER BY server_name LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("couldn't read the listings: %w", err)
	}
	ids := make([]int64, len(sls))
	for i, sl := range sls {
		ids[i] = sl.Entry.ID
	}
	parts, err := s.partsOf(ctx, ids)
	if err != nil {
		return nil, err
	}
	for i := range sls {
		sls[i].Parts = parts[sls[i].Entry.ID]
	}
	return sls, nil
}

func (s *sqlStore) RegistrySyncState(ctx context.Context, baseURL string) (RegistrySync, error) {
	r := RegistrySync{BaseURL: baseURL}
	err := s.read.QueryRow(ctx, `
		SELECT since, walk_since, cursor, walk_newest, walk_started, finished, servers
		FROM registry_sync WHERE base_url = ?`, baseURL).Scan(
		timeCol(&r.Since), timeCol(&r.WalkSince), &r.Cursor, timeCol(&r.WalkNewest), timeCol(&r.WalkStarted),
		timeCol(&r.Finished), &r.Servers)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return RegistrySync{}, fmt.Errorf("couldn't read the sync state of %s: %w", baseURL, err)
	}
	return r, nil
}

func (s *sqlStore) SaveRegistrySync(ctx context.Context, r RegistrySync) error {
	if r.BaseURL == "" || len(r.Cursor) > 4096 || r.Servers < 0 {
		return errors.New("couldn't save a registry's sync state: no base URL, a cursor over 4096 bytes or a negative count")
	}
	_, err := s.write.Exec(ctx, `
		INSERT INTO registry_sync (base_url, since, walk_since, cursor, walk_newest, walk_started, finished, servers)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (base_url) DO UPDATE SET since = excluded.since, walk_since = excluded.walk_since,
			cursor = excluded.cursor, walk_newest = excluded.walk_newest,
			walk_started = excluded.walk_started, finished = excluded.finished, servers = excluded.servers`,
		r.BaseURL, s.d.nullTime(r.Since), s.d.nullTime(r.WalkSince), r.Cursor, s.d.nullTime(r.WalkNewest),
		s.d.nullTime(r.WalkStarted), s.d.nullTime(r.Finished), r.Servers)
	if err != nil {
		return fmt.Errorf("couldn't save the sync state of %s: %w", r.BaseURL, err)
	}
	return nil
}

func (s *sqlStore) HTTPCache(ctx context.Context, key string) (HTTPCacheEntry, error) {
	e := HTTPCacheEntry{Key: key}
	err := s.read.QueryRow(ctx, `
		SELECT status, etag, last_modified, header, body, stored_at FROM http_cache WHERE key = ?`, key).Scan(
		&e.Status, &e.ETag, &e.LastModified, &e.Header, &e.Body, timeCol(&e.StoredAt))
	if errors.Is(err, sql.ErrNoRows) {
		return HTTPCacheEntry{}, fmt.Errorf("cached response: %w", ErrNotFound)
	}
	if err != nil {
		return HTTPCacheEntry{}, fmt.Errorf("couldn't read a cached response: %w", err)
	}
	if len(e.Header) == 0 {
		e.Header = nil
	}
	if e.Body == nil {
		e.Body = []byte{}
	}
	return e, nil
}

func (s *sqlStore) PutHTTPCache(ctx context.Context, e HTTPCacheEntry) error {
	switch {
	case e.Key == "" || len(e.Key) > 4096:
		return errors.New("couldn't keep a response: its key is empty or longer than 4096 bytes")
	case len(e.Body) > MaxHTTPCacheBody:
		return fmt.Errorf("couldn't keep a response: its body of %d bytes is over %d", len(e.Body), MaxHTTPCacheBody)
	case e.Status < 100 || e.Status > 599:
		return fmt.Errorf("couldn't keep a response: status %d", e.Status)
	case e.StoredAt.IsZero():
		return errors.New("couldn't keep a response: no time stored")
	}
	body := e.Body
	if body == nil {
		body = []byte{}
	}
	_, err := s.write.Exec(ctx, `
		INSERT INTO http_cache (key, status, etag, last_modified, header, body, stored_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET status = excluded.status, etag = excluded.etag,
			last_modified = excluded.last_modified, header = excluded.header, body = excluded.body,
			stored_at = excluded.stored_at`,
		e.Key, e.Status, e.ETag, e.LastModified, e.Header, body, s.d.time(e.StoredAt))
	if err != nil {
		return fmt.Errorf("couldn't keep a response: %w", err)
	}
	return nil
}

func (s *sqlStore) PruneHTTPCache(ctx context.Context, before time.Time) (int64, error) {
	n, err := s.write.Exec(ctx, `DELETE FROM http_cache WHERE stored_at < ?`, s.d.time(before))
	if err != nil {
		return 0, fmt.Errorf("couldn't prune the HTTP cache: %w", err)
	}
	return n, nil
}
