package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// entryColumns are the columns scanEntry reads.
const entryColumns = `id, slug, kind, locator, name, source, claimed, cadence_ms, created_at,
	last_round_at, last_surface, uptime_online_days, uptime_counted_days, server_name, title,
	listing_status, parent_id`

// entryWithdrawnColumn is Entry.VerifiedWithdrawn (migration 0021). It is read apart
// from entryColumns, by the reads that show Verified (Entry, EntryByID, and with the
// entry's facts, entryFactsSQL), so that the writes of a store at an older migration
// (the migration tests') read entries as they were.
const entryWithdrawnColumn = `verified_withdrawn`

// scanEntryWithdrawn scans the entryColumns and entryWithdrawnColumn of one row.
func scanEntryWithdrawn(row rowScanner) (Entry, error) {
	var w bool
	e, err := scanEntry(scanWith{row, []any{&w}})
	e.VerifiedWithdrawn = w
	return e, err
}

// scanEntry scans the entryColumns of one row.
func scanEntry(row rowScanner) (Entry, error) {
	var (
		e         Entry
		cadenceMS int64
		status    string
		parent    *int64
	)
	err := row.Scan(&e.ID, &e.Slug, &e.Kind, &e.Locator, &e.Name, &e.Source, &e.Claimed, &cadenceMS,
		timeCol(&e.CreatedAt), timeCol(&e.LastRoundAt), nullStringCol{&e.LastSurface},
		&e.UptimeOnlineDays, &e.UptimeCountedDays, nullStringCol{&e.ServerName}, &e.Title, &status, &parent)
	if err != nil {
		return Entry{}, err
	}
	if parent != nil {
		e.Parent = *parent
	}
	e.Cadence = time.Duration(cadenceMS) * time.Millisecond
	e.Listed = status == StatusActive
	return e, nil
}

func (s *sqlStore) Entry(ctx context.Context, slug string) (Entry, error) {
	e, err := scanEntryWithdrawn(s.read.QueryRow(ctx, `SELECT `+entryColumns+`, `+entryWithdrawnColumn+` FROM entries WHERE slug = ?`, slug))
	if errors.Is(err, sql.ErrNoRows) {
		return Entry{}, fmt.Errorf("entry %q: %w", slug, ErrNotFound)
	}
	if err != nil {
		return Entry{}, fmt.Errorf("couldn't read entry %q: %w", slug, err)
	}
	return e, nil
}

func (s *sqlStore) EntryByID(ctx context.Context, id int64) (Entry, error) {
	e, err := scanEntryWithdrawn(s.read.QueryRow(ctx, `SELECT `+entryColumns+`, `+entryWithdrawnColumn+` FROM entries WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Entry{}, fmt.Errorf("entry %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Entry{}, fmt.Errorf("couldn't read entry %d: %w", id, err)
	}
	return e, nil
}

func (s *sqlStore) Entries(ctx context.Context, afterID int64, limit int) ([]Entry, error) {
	es, err := queryAll(ctx, s.read, scanEntry,
		`SELECT `+entryColumns+` FROM entries WHERE id > ? ORDER BY id LIMIT ?`, afterID, s.d.limit(limit))
	if err != nil {
		return nil, fmt.Errorf("couldn't list entries: %w", err)
	}
	return es, nil
}

// scanDue scans entry_id, reason, at.
func scanDue(row rowScanner) (Due, error) {
	var (
		d      Due
		reason string
	)
	if err := row.Scan(&d.EntryID, &reason, timeCol(&d.At)); err != nil {
		return Due{}, err
	}
	d.Reason = DueReason(reason)
	return d, nil
}

func (s *sqlStore) DueBefore(ctx context.Context, t time.Time, limit int) ([]Due, error) {
	ds, err := queryAll(ctx, s.read, scanDue, `
		SELECT entry_id, reason, at FROM due WHERE at <= ?
			AND NOT EXISTS (SELECT 1 FROM entries e WHERE e.id = due.entry_id AND e.listing_status <> 'active')
		ORDER BY at, entry_id, reason LIMIT ?`, s.d.time(t), s.d.limit(limit))
	if err != nil {
		return nil, fmt.Errorf("couldn't list due rounds: %w", err)
	}
	return ds, nil
}

func (s *sqlStore) DueTimes(ctx context.Context, entryID int64) ([]Due, error) {
	ds, err := queryAll(ctx, s.read, scanDue,
		`SELECT entry_id, reason, at FROM due WHERE entry_id = ? ORDER BY at, reason`, entryID)
	if err != nil {
		return nil, fmt.Errorf("couldn't list due times of entry %d: %w", entryID, err)
	}
	return ds, nil
}

func (s *sqlStore) Attempts(ctx context.Context, entryID int64, dueAt time.Time) (int, error) {
	var n int
	err := s.read.QueryRow(ctx,
		`SELECT attempts FROM attempts WHERE entry_id = ? AND due_at = ?`, entryID, s.d.time(dueAt)).Scan(&n)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("couldn't count the attempts of entry %d: %w", entryID, err)
	}
	return n, nil
}

// runColumns are the columns scanRun reads.
const runColumns = `id, due_at, started_at, finished_at`

func scanRun(row rowScanner) (Run, error) {
	var r Run
	if err := row.Scan(&r.ID, timeCol(&r.DueAt), timeCol(&r.StartedAt), timeCol(&r.FinishedAt)); err != nil {
		return Run{}, err
	}
	return r, nil
}

func (s *sqlStore) UnfinishedRun(ctx context.Context) (Run, error) {
	r, err := scanRun(s.read.QueryRow(ctx, `
		SELECT `+runColumns+` FROM runs WHERE finished_at IS NULL
		ORDER BY started_at DESC, id DESC LIMIT 1`))
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, fmt.Errorf("unfinished run: %w", ErrNotFound)
	}
	if err != nil {
		return Run{}, fmt.Errorf("couldn't read the unfinished run: %w", err)
	}
	return r, nil
}

func (s *sqlStore) StartRun(ctx context.Context, r Run) error {
	if r.ID == "" || r.DueAt.IsZero() || r.StartedAt.IsZero() {
		return errors.New("couldn't start a run: it needs an id, a due time and a start time")
	}
	_, err := s.write.Exec(ctx, `INSERT INTO runs (`+runColumns+`) VALUES (?, ?, ?, ?)`,
		r.ID, s.d.time(r.DueAt), s.d.time(r.StartedAt), s.d.nullTime(r.FinishedAt))
	if err != nil {
		return fmt.Errorf("couldn't start run %q: %w", r.ID, err)
	}
	return nil
}

// FinishRun marks a run finished at at; a run already finished keeps its first time.
// Runs are never deleted, so a run the update did not change is finished or missing.
func (s *sqlStore) FinishRun(ctx context.Context, id string, at time.Time) error {
	if at.IsZero() {
		return fmt.Errorf("couldn't finish run %q: zero time", id)
	}
	n, err := s.write.Exec(ctx, `UPDATE runs SET finished_at = ? WHERE id = ? AND finished_at IS NULL`,
		s.d.time(at), id)
	if err == nil && n == 0 {
		var exists bool
		err = s.write.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM runs WHERE id = ?)`, id).Scan(&exists)
		if err == nil && !exists {
			err = ErrNotFound
		}
	}
	if err != nil {
		return fmt.Errorf("couldn't finish run %q: %w", id, err)
	}
	return nil
}

// EntryDigest reads with the methods it stands for, one after the other: on an embedded
// database a query costs no round trip (PostgreSQL sends them as one batch instead:
// pgStore.EntryDigest).
func (s *sqlStore) EntryDigest(ctx context.Context, slug string, q EntryQuery) (EntryDigest, error) {
	if err := checkEntryQuery(q); err != nil {
		return EntryDigest{}, fmt.Errorf("couldn't read entry %q: %w", slug, err)
	}
	// The entry with its listing, in one read of its row.
	sl, err := scanEntryListing(s.read.QueryRow(ctx, `SELECT `+entryColumns+`, `+listingColumns+` FROM entries WHERE slug = ?`, slug))
	if errors.Is(err, sql.ErrNoRows) {
		return EntryDigest{}, fmt.Errorf("entry %q: %w", slug, ErrNotFound)
	}
	if err != nil {
		return EntryDigest{}, fmt.Errorf("couldn't read entry %q: %w", slug, err)
	}
	e := sl.Entry
	// The facts the directory shows of the entry, read as its rows read them.
	if err := s.read.QueryRow(ctx, `SELECT `+entryFactsSQL(s.d)+` FROM entries p WHERE p.id = ?`, append(uptime30Args("", s.clock()), e.ID)...).Scan(
		timeCol(&e.LastChangeAt), &e.Uptime30OnlineDays, &e.Uptime30CountedDays, &e.VerifiedWithdrawn); err != nil {
		return EntryDigest{}, fmt.Errorf("couldn't read the uptime and last change of %q: %w", slug, err)
	}
	d := EntryDigest{Entry: e, Listing: sl.Listing}
	parts, err := s.partsOf(ctx, []int64{e.ID})
	if err != nil {
		return EntryDigest{}, err
	}
	d.Parts = parts[e.ID]
	if d.Remotes, err = queryAll(ctx, s.read, scanEntry, remotesOfSQL, e.ID); err != nil {
		return EntryDigest{}, fmt.Errorf("couldn't read the remotes of %q: %w", slug, err)
	}
	if e.Parent != 0 {
		server, err := s.EntryByID(ctx, e.Parent)
		if err != nil {
			return EntryDigest{}, err
		}
		d.Server = &server
	}
	rs, err := s.Rounds(ctx, e.ID, 1)
	if err != nil {
		return EntryDigest{}, err
	}
	if len(rs) == 1 {
		d.Round = &rs[0]
		if d.ToolsReadAt, err = s.toolsReadAt(ctx, rs[0]); err != nil {
			return EntryDigest{}, err
		}
	}
	signed, err := queryAll(ctx, s.read, scanSummary, signedRoundSQL+`(SELECT signed_round_id FROM entries WHERE id = ?)`, e.ID)
	if err != nil {
		return EntryDigest{}, fmt.Errorf("couldn't read the newest signed round of %q: %w", slug, err)
	}
	if len(signed) == 1 {
		d.SignedRound = &signed[0]
	}
	run, err := s.newestSupplyState(ctx, e.ID)
	if err != nil {
		return EntryDigest{}, err
	}
	if run != nil {
		d.Supply, d.SupplySigned = &run.run, run.signed
	}
	if q.Changes > 0 {
		if d.Changes, err = s.Changes(ctx, ChangeFilter{EntryID: e.ID, Limit: q.Changes, WithoutEnvelopes: true}); err != nil {
			return EntryDigest{}, err
		}
	}
	if q.UptimeFrom != "" {
		if d.Uptime, err = s.UptimeDays(ctx, e.ID, q.UptimeFrom, q.UptimeTo); err != nil {
			return EntryDigest{}, err
		}
	}
	return d, nil
}

// signedRoundSQL reads EntryDigest.SignedRound: the summary of the round whose id
// follows it, the entry's signed_round_id (migration 0014), which the trigger that
// counts the directory's findings keeps with them.
const signedRoundSQL = `SELECT ` + summaryColumns + ` FROM ` + summaryFrom + ` WHERE o.id = `

// toolsReadAt is EntryDigest's ToolsReadAt, given the entry's newest round.
func (s *sqlStore) toolsReadAt(ctx context.Context, newest RoundSummary) (time.Time, error) {
	if newest.Fingerprints != nil {
		return newest.StartedAt, nil
	}
	rs, err := s.Rounds(ctx, newest.EntryID, ToolsReadRounds)
	if err != nil {
		return time.Time{}, err
	}
	for _, r := range rs {
		if r.Fingerprints != nil {
			return r.StartedAt, nil
		}
	}
	return time.Time{}, nil
}

// supplyStateColumns are the columns scanSupplyState reads, of supply_runs r joined
// with supplyLedger: a run without its documents, and whether it is signed.
const supplyStateColumns = `r.id, r.entry_id, r.ran_at, r.score, r.verified, r.latest_version, l.key_id,
	l.payload_digest, r.ledger_id IS NOT NULL`

// scanSupplyState scans the supplyStateColumns.
func scanSupplyState(row rowScanner) (supplyState, error) {
	var (
		st            supplyState
		keyID, digest *string
	)
	r := &st.run
	if err := row.Scan(&r.ID, &r.EntryID, timeCol(&r.RanAt), &r.Score, &r.Verified, &r.LatestVersion, &keyID, &digest, &st.signed); err != nil {
		return supplyState{}, err
	}
	if keyID != nil && digest != nil {
		r.KeyID, r.PayloadDigest = *keyID, *digest
	}
	return st, nil
}

// newestSupplyState reads the newest supply run of the entry without its documents; nil
// when it has none.
func (s *sqlStore) newestSupplyState(ctx context.Context, entryID int64) (*supplyState, error) {
	st, err := scanSupplyState(s.read.QueryRow(ctx, `
		SELECT `+supplyStateColumns+`
		FROM supply_runs r`+supplyLedger+` WHERE r.entry_id = ?
		ORDER BY r.ran_at DESC, r.id DESC
		LIMIT 1`, entryID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("couldn't read the newest supply run of entry %d: %w", entryID, err)
	}
	return &st, nil
}

// Stats counts what the store holds.
func (s *sqlStore) Stats(ctx context.Context) (Stats, error) {
	var st Stats
	err := s.read.QueryRow(ctx, `
		SELECT (SELECT count(*) FROM entries),
		       o.total, o.signed,
		       (SELECT count(*) FROM ledger WHERE kind = 'probe'),
		       (SELECT count(*) FROM surfaces),
		       `+s.d.databaseSize+`
		FROM (SELECT count(*) AS total, count(*) FILTER (WHERE signed) AS signed FROM rounds) o`,
	).Scan(&st.Entries, &st.Rounds, &st.Signed, &st.Envelopes, &st.Surfaces, &st.Bytes)
	if err != nil {
		return Stats{}, fmt.Errorf("couldn't count the store: %w", err)
	}
	return st, nil
}
