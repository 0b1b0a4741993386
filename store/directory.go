package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// This file is the directory read model: one query (Store.Directory) that searches,
// filters, sorts and pages the entries in SQL and returns each row with its state
// (newest round, newest supply run, and whether the entry is Verified). The directory
// pages, /api/v1/servers and /mcp's search_servers all read it, so the three agree on
// what matches and on what Verified means.
//
// The SQL is written once, here, for both backends; a backend supplies only what its
// engine spells differently (its dialect): placeholders, how a time and a day are
// passed, and case-insensitive matching.
//
// What the directory filters and sorts on is kept on the entry's row, so that a query
// over every entry reads no round: the newest round's uptime class (last_uptime), the
// newest signed round's findings, tool count and protocol version (signed_*), the
// 30-day uptime the ByUptime order sorts on (uptime30_*) and the last change
// (last_change_at). Each of these facts has one owner, a trigger of migration 0010 that
// recomputes it from the rows it derives from (rounds, uptime_days, changes) whenever
// one is written, in the writer's transaction; no store code writes them. The 30-day
// uptime a row shows (Entry.Uptime30*) is not that column: it is read at query time from
// uptime_days for the page's rows only, over the 30 UTC days up to
// DirectoryQuery.UptimeTo (today by default), so it stays right as days pass without a
// round. The column is the same rate over the 30 days up to the entry's newest uptime
// day; the two agree while the entry has a round every day, as every listed remote has
// (the daily status check).

// MaxDirectoryLimit bounds the rows one Directory call returns.
const MaxDirectoryLimit = 1000

// MaxDirectoryOffset bounds DirectoryQuery.Offset: an offset is read past row by row,
// so a deeper page costs more (the pages stop at page 1000 of 100 rows).
const MaxDirectoryOffset = 1_000_000

// MaxDirectorySearch bounds DirectoryQuery.Search, in bytes.
const MaxDirectorySearch = 1024

// MaxDirectoryProtocol bounds DirectoryQuery.Protocol, in bytes (a protocol version is
// a date, 2025-11-25).
const MaxDirectoryProtocol = 64

// UptimeWindowDays is the span of the directory's uptime (Entry.Uptime30OnlineDays).
const UptimeWindowDays = 30

// VerifiedFilter selects entries by the Verified rule (IsVerified).
type VerifiedFilter int

// The values of DirectoryQuery.Verified.
const (
	AnyVerified  VerifiedFilter = iota // Verified or not
	OnlyVerified                       // only Verified entries
	NotVerified                        // only entries that are not Verified
)

// DirectoryOrder is the order of a directory query's rows.
type DirectoryOrder int

// The orders of DirectoryQuery.Order. Every order ends on the entry id, so it is total
// and a page boundary is stable.
const (
	// ByID is the order entries were added (id ascending): the directory's order.
	ByID DirectoryOrder = iota
	// ByLastRound puts the entries with the newest round first (Entry.LastRoundAt
	// descending), entries never probed last.
	ByLastRound
	// ByName orders by display name, ignoring case.
	ByName
	// ByLastChange puts the entries with the newest change first (Entry.LastChangeAt
	// descending), entries without a change last.
	ByLastChange
	// ByFindings puts the entries with the most findings of their newest signed round
	// first (FAILED before OBSERVED_RISK: by Failed, then ObservedRisk, descending).
	ByFindings
	// ByUptime puts the entries with the highest 30-day uptime first, entries without
	// counted days last.
	ByUptime
)

// DirectoryQuery selects a page of the directory. The zero value (with a Limit) is the
// first page of every entry in id order.
type DirectoryQuery struct {
	// Search, when not empty, keeps the entries whose name, locator or slug contains it,
	// ignoring case. It is matched literally: %, _ and \ are not wildcards.
	Search string
	// Kind, when not empty, keeps the entries of that kind (KindRemote, …).
	Kind string
	// Verified filters by the Verified rule.
	Verified VerifiedFilter
	// ChangedSince, when not zero, keeps the entries whose last change
	// (Entry.LastChangeAt: visible, not a baseline) was recorded at or after it.
	ChangedSince time.Time
	// OfflineFrom and OfflineTo (YYYY-MM-DD, inclusive), when set, keep the entries whose
	// newest counted uptime day (online or offline) in that range is offline. Both or
	// neither.
	OfflineFrom, OfflineTo string
	// Offline keeps the entries whose newest round got no answer (RoundState.Offline).
	Offline bool
	// HasFindings keeps the entries whose newest signed round has a FAILED or
	// OBSERVED_RISK check result.
	HasFindings bool
	// Protocol, when not empty, keeps the entries whose newest signed round negotiated
	// that protocol version (RoundState.ProtocolVersion); at most MaxDirectoryProtocol
	// bytes.
	Protocol string
	// UptimeTo (YYYY-MM-DD) is the last day of the rows' 30-day uptime
	// (Entry.Uptime30OnlineDays); empty is today (UTC) by the store's clock.
	UptimeTo string
	// Order is the rows' order.
	Order DirectoryOrder
	// AfterID is a cursor: only entries with a larger id (ByID only).
	AfterID int64
	// Offset skips that many matching rows (0 to MaxDirectoryOffset).
	Offset int
	// Limit is the most rows returned, 1 to MaxDirectoryLimit. Ask for one more than a
	// page to learn whether another page follows.
	Limit int
	// CountEntries asks for DirectoryPage.Entries, CountMatches for
	// DirectoryPage.Matches, ListProtocols for DirectoryPage.Protocols.
	CountEntries  bool
	CountMatches  bool
	ListProtocols bool
}

// DirectoryRow is one entry of a directory page with its state.
type DirectoryRow struct {
	Entry Entry
	// Round is the newest round's state; Round.Present is false when it has none.
	Round RoundState
	// Supply is the newest supply run's state; Supply.Present is false when none ran.
	Supply SupplyState
	// Verified is the Verified rule (IsVerified) applied to the newest supply run.
	Verified bool
}

// RoundState is what the directory shows of an entry's newest round.
type RoundState struct {
	Present  bool
	Signed   bool
	Coverage string // "full" or "auth_required" when signed, else ""
	// Uptime is the newest round's uptime class: a round with no answer
	// (UptimeNoAnswer) makes the entry offline (Offline).
	Uptime UptimeClass
	// SignedRound says that the entry has a signed round. Failed and ObservedRisk count
	// the findings of the newest one (which may be older than the newest round);
	// ToolCount and ProtocolVersion are its tool count and negotiated protocol version.
	SignedRound     bool
	Failed          int
	ObservedRisk    int
	ToolCount       int
	ProtocolVersion string
}

// Offline reports that the newest round got no answer from the endpoint.
func (r RoundState) Offline() bool { return r.Present && r.Uptime == UptimeNoAnswer }

// SupplyState is what the directory shows of an entry's newest supply run.
type SupplyState struct {
	Present bool
	Score   int  // 0–100; 0 when not Present
	Passed  bool // the run's own decision (SupplyRecord.Verified), signed or not
	Signed  bool // the run has an envelope
	// Withdrawn says an operator withdrew the entry's Verified (Entry.VerifiedWithdrawn).
	Withdrawn bool
}

// DirectoryPage is the answer of Store.Directory.
type DirectoryPage struct {
	Rows []DirectoryRow
	// Entries is how many entries the directory holds, matching or not; set only when
	// DirectoryQuery.CountEntries asked for it.
	Entries int
	// Matches is how many entries match the query, on every page; set only when
	// DirectoryQuery.CountMatches asked for it.
	Matches int
	// Protocols are the protocol versions of the directory's entries
	// (RoundState.ProtocolVersion, the values DirectoryQuery.Protocol selects), newest
	// first, at most 100; set only when DirectoryQuery.ListProtocols asked for them.
	Protocols []string
}

// IsVerified is the Verified rule, its one definition in Go: an entry is Verified when
// its newest supply run decided Verified (passed) and is signed. A run that was not
// signed (no key, or signing failed) never makes an entry Verified, whatever it found.
// An operator's withdrawal (withdrawn: Entry.VerifiedWithdrawn, a withdrawal/v1 record)
// takes Verified away whatever the run found, until a restored record; a later supply
// run does not give it back.
// The directory query applies the same rule in SQL (verifiedSQL); the contract test
// TestDirectoryVerifiedRule checks that they agree.
func IsVerified(passed, signed, withdrawn bool) bool { return passed && signed && !withdrawn }

// supplySignedSQL says, in SQL, whether the supply run r is signed. It is the one place
// the directory query knows where a supply run's signature is kept.
const supplySignedSQL = `(r.ledger_id IS NOT NULL)`

// verifiedSQL is IsVerified over the supply run r of the entry (alias) entry, in SQL.
func verifiedSQL(entry string) string {
	return `(r.verified AND ` + supplySignedSQL + ` AND NOT ` + entry + `.verified_withdrawn)`
}

// newestSupplyIDSQL is the id of entry p's newest supply run (NULL: none), on the index
// supply_runs_entry_ran. Its order is SupplyRuns'.
const newestSupplyIDSQL = `(SELECT r2.id FROM supply_runs r2 WHERE r2.entry_id = %s.id
	ORDER BY r2.ran_at DESC, r2.id DESC LIMIT 1)`

// newestRoundIDSQL is the id of entry p's newest round (NULL: none), on the index
// rounds_entry_started_id. Its order is Rounds'.
const newestRoundIDSQL = `(SELECT o2.id FROM rounds o2 WHERE o2.entry_id = p.id
	ORDER BY o2.started_at DESC, o2.id DESC LIMIT 1)`

// checkDirectoryQuery refuses a query outside the bounds above.
func checkDirectoryQuery(q DirectoryQuery) error {
	var errs []error
	if len(q.Search) > MaxDirectorySearch {
		errs = append(errs, fmt.Errorf("search of %d bytes, at most %d", len(q.Search), MaxDirectorySearch))
	}
	if q.Kind != "" && q.Kind != KindRemote && q.Kind != KindNPM && q.Kind != KindPyPI && q.Kind != KindGitHub {
		errs = append(errs, fmt.Errorf("kind %q is not remote, npm, pypi or github", q.Kind))
	}
	if q.Verified < AnyVerified || q.Verified > NotVerified {
		errs = append(errs, fmt.Errorf("verified filter %d is not known", q.Verified))
	}
	if (q.OfflineFrom == "") != (q.OfflineTo == "") {
		errs = append(errs, errors.New("offline filter needs both days"))
	} else if q.OfflineFrom != "" {
		errs = append(errs, checkDay(q.OfflineFrom), checkDay(q.OfflineTo))
	}
	if len(q.Protocol) > MaxDirectoryProtocol {
		errs = append(errs, fmt.Errorf("protocol version of %d bytes, at most %d", len(q.Protocol), MaxDirectoryProtocol))
	}
	if q.UptimeTo != "" {
		errs = append(errs, checkDay(q.UptimeTo))
	}
	switch q.Order {
	case ByID:
	case ByLastRound, ByName, ByLastChange, ByFindings, ByUptime:
		if q.AfterID != 0 {
			errs = append(errs, errors.New("a cursor (after id) pages only the id order"))
		}
	default:
		errs = append(errs, fmt.Errorf("order %d is not known", q.Order))
	}
	if q.AfterID < 0 {
		errs = append(errs, fmt.Errorf("after id %d is negative", q.AfterID))
	}
	if q.Offset < 0 || q.Offset > MaxDirectoryOffset {
		errs = append(errs, fmt.Errorf("offset %d outside 0 to %d", q.Offset, MaxDirectoryOffset))
	}
	if q.Limit < 1 || q.Limit > MaxDirectoryLimit {
		errs = append(errs, fmt.Errorf("limit %d outside 1 to %d", q.Limit, MaxDirectoryLimit))
	}
	return errors.Join(errs...)
}

// likeEscape is the LIKE pattern (with ESCAPE '\') that matches s anywhere, literally.
func likeEscape(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('%')
	for _, c := range []byte(s) {
		if c == '\\' || c == '%' || c == '_' {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	b.WriteByte('%')
	return b.String()
}

// directoryFacts are the entry columns of the directory's facts (see the file's
// comment) that the query reads besides entryColumns.
const directoryFacts = `signed_failed, signed_observed_risk, signed_tool_count, signed_protocol,
	uptime30_online, uptime30_counted, last_change_at`

// directoryListed is the condition on entries e that the directory lists: unlisted
// servers (a deprecated or deleted registry listing) keep their history but are not in
// the directory, and a server's second and later remotes are on their server's page
// (Entry.Parent).
const directoryListed = `e.listing_status = 'active' AND e.parent_id IS NULL`

// directoryWhere is the condition for q's filters on entries e, with its arguments.
func directoryWhere(d dialect, q DirectoryQuery) (string, []any) {
	var (
		where = []string{directoryListed}
		args  []any
	)
	if q.AfterID > 0 {
		where, args = append(where, `e.id > ?`), append(args, q.AfterID)
	}
	if q.Kind != "" {
		where, args = append(where, `e.kind = ?`), append(args, q.Kind)
	}
	if q.Search != "" {
		pattern := likeEscape(strings.ToLower(q.Search))
		name, n1 := d.contains("e.name")
		locator, n2 := d.contains("e.locator")
		// Slugs are lowercase ASCII: a plain LIKE.
		where = append(where, `(`+name+` OR `+locator+` OR e.slug LIKE ? ESCAPE '\')`)
		for range n1 + n2 + 1 {
			args = append(args, pattern)
		}
	}
	if q.Verified != AnyVerified {
		verified := `COALESCE((SELECT ` + verifiedSQL("e") + ` FROM supply_runs r WHERE r.id = ` +
			fmt.Sprintf(newestSupplyIDSQL, "e") + `), FALSE)`
		if q.Verified == NotVerified {
			verified = `NOT ` + verified
		}
		where = append(where, verified)
	}
	if !q.ChangedSince.IsZero() {
		where, args = append(where, `e.last_change_at >= ?`), append(args, d.time(q.ChangedSince))
	}
	if q.OfflineFrom != "" {
		where = append(where, `(SELECT u.status FROM uptime_days u
			WHERE u.entry_id = e.id AND u.day BETWEEN `+d.day("?")+` AND `+d.day("?")+` AND u.status <> 'not_counted'
			ORDER BY u.day DESC LIMIT 1) = 'offline'`)
		args = append(args, q.OfflineFrom, q.OfflineTo)
	}
	if q.Offline {
		where = append(where, `e.last_uptime = '`+string(UptimeNoAnswer)+`'`)
	}
	if q.HasFindings {
		where = append(where, `(e.signed_failed > 0 OR e.signed_observed_risk > 0)`)
	}
	if q.Protocol != "" {
		where, args = append(where, `e.signed_protocol = ?`), append(args, q.Protocol)
	}
	return strings.Join(where, ` AND `), args
}

// directoryOrder is the ORDER BY of order over the entry columns of t, in d's spelling.
// Every order ends on the id: it is total.
func directoryOrder(d dialect, order DirectoryOrder, t string) string {
	switch order {
	case ByLastRound:
		return t + `.last_round_at DESC NULLS LAST, ` + t + `.id`
	case ByName:
		// The name the pages show: the listed title, else the entry's name.
		return d.fold(`CASE WHEN trim(`+t+`.title) <> '' THEN `+t+`.title ELSE `+t+`.name END`) + `, ` + t + `.id`
	case ByLastChange:
		return t + `.last_change_at DESC NULLS LAST, ` + t + `.id`
	case ByFindings:
		return t + `.signed_failed DESC NULLS LAST, ` + t + `.signed_observed_risk DESC NULLS LAST, ` + t + `.id`
	case ByUptime:
		// The rate, online days over counted days, as a fraction of integers: the
		// division is exact enough to order rates of at most 30 days.
		return `(1.0 * ` + t + `.uptime30_online / NULLIF(` + t + `.uptime30_counted, 0)) DESC NULLS LAST, ` + t + `.id`
	}
	return t + `.id`
}

// uptimeWindow is the first and last day of the 30 UTC days up to to (YYYY-MM-DD,
// checked), or up to today by now when to is empty.
func uptimeWindow(to string, now time.Time) (string, string) {
	last := now.UTC()
	if to != "" {
		last, _ = time.Parse(time.DateOnly, to)
	}
	return utcDay(last.AddDate(0, 0, -(UptimeWindowDays - 1))), utcDay(last)
}

// entryFactsSQL selects, for entry p, the facts Entry.LastChangeAt,
// Uptime30OnlineDays, Uptime30CountedDays and VerifiedWithdrawn (in that order), the uptime over the
// window of uptime30Args, on uptime_days' key. The directory's rows and EntryDigest
// read them with it.
func entryFactsSQL(d dialect) string {
	uptime := `(SELECT count(*) FROM uptime_days u WHERE u.entry_id = p.id
				AND u.day BETWEEN ` + d.day("?") + ` AND ` + d.day("?") + ` AND u.status `
	return `p.last_change_at, ` + uptime + `= 'online'), ` + uptime + `<> 'not_counted'), p.` + entryWithdrawnColumn
}

// uptime30Args are entryFactsSQL's arguments for the 30 days up to to (YYYY-MM-DD;
// "": the day of now).
func uptime30Args(to string, now time.Time) []any {
	from, last := uptimeWindow(to, now)
	return []any{from, last, from, last}
}

// directorySQL builds the query for q in d's spelling, with its arguments, for a store
// whose clock says now. The matching entries are filtered, ordered and paged in an
// inner query; only the page's rows then read their newest round and supply run, each
// on its index, and their 30-day uptime, on uptime_days' key.
func directorySQL(d dialect, q DirectoryQuery, now time.Time) (string, []any) {
	// The select list's parameters come first.
	args := uptime30Args(q.UptimeTo, now)
	cond, condArgs := directoryWhere(d, q)
	args = append(args, condArgs...)
	query := `
		SELECT ` + prefixColumns("p", entryColumns) + `,
			o.id IS NOT NULL, COALESCE(o.signed, FALSE), COALESCE(o.coverage, ''), COALESCE(o.uptime, ''),
			p.signed_failed IS NOT NULL, COALESCE(p.signed_failed, 0), COALESCE(p.signed_observed_risk, 0),
			COALESCE(p.signed_tool_count, 0), COALESCE(p.signed_protocol, ''), ` + entryFactsSQL(d) + `,
			r.id IS NOT NULL, COALESCE(r.score, 0), COALESCE(r.verified, FALSE),
			COALESCE(` + supplySignedSQL + `, FALSE), COALESCE(` + verifiedSQL("p") + `, FALSE)
		FROM (
			SELECT ` + prefixColumns("e", entryColumns) + `, ` + prefixColumns("e", directoryFacts) + `, e.` + entryWithdrawnColumn + ` FROM entries e
			WHERE ` + cond + `
			ORDER BY ` + directoryOrder(d, q.Order, "e") + `
			LIMIT ? OFFSET ?
		) p
		LEFT JOIN rounds o ON o.id = ` + newestRoundIDSQL + `
		LEFT JOIN supply_runs r ON r.id = ` + fmt.Sprintf(newestSupplyIDSQL, "p") + `
		ORDER BY ` + directoryOrder(d, q.Order, "p")
	args = append(args, q.Limit, q.Offset)
	return query, args
}

// directoryCountSQL counts the entries matching q, with its arguments.
func directoryCountSQL(d dialect, q DirectoryQuery) (string, []any) {
	cond, args := directoryWhere(d, q)
	return `SELECT count(*) FROM entries e WHERE ` + cond, args
}

// directoryEntriesSQL counts the entries the directory lists.
const directoryEntriesSQL = `SELECT count(*) FROM entries e WHERE ` + directoryListed

// directoryProtocolsSQL lists the protocol versions of the listed entries' newest
// signed rounds, newest first (versions are dates, YYYY-MM-DD), at most 100: they are
// what servers answered.
const directoryProtocolsSQL = `SELECT DISTINCT e.signed_protocol FROM entries e
	WHERE ` + directoryListed + ` AND e.signed_protocol <> ''
	ORDER BY e.signed_protocol DESC
	LIMIT 100`

// prefixColumns qualifies each of a comma-separated column list with table t.
func prefixColumns(t, columns string) string {
	fields := strings.Split(columns, ",")
	for i, f := range fields {
		fields[i] = t + "." + strings.TrimSpace(f)
	}
	return strings.Join(fields, ", ")
}

// scanDirectoryRow scans a row of directorySQL.
func scanDirectoryRow(row rowScanner) (DirectoryRow, error) {
	var (
		d               DirectoryRow
		online, counted int
		lastChange      time.Time
		withdrawn       bool
	)
	var uptime string
	rest := []any{
		&d.Round.Present, &d.Round.Signed, &d.Round.Coverage, &uptime,
		&d.Round.SignedRound, &d.Round.Failed, &d.Round.ObservedRisk, &d.Round.ToolCount, &d.Round.ProtocolVersion,
		timeCol(&lastChange), &online, &counted, &withdrawn,
		&d.Supply.Present, &d.Supply.Score, &d.Supply.Passed, &d.Supply.Signed, &d.Verified,
	}
	e, err := scanEntry(scanWith{row, rest})
	if err != nil {
		return DirectoryRow{}, err
	}
	e.Uptime30OnlineDays, e.Uptime30CountedDays, e.LastChangeAt = online, counted, lastChange
	e.VerifiedWithdrawn = withdrawn
	d.Entry = e
	d.Supply.Withdrawn = withdrawn
	d.Round.Uptime = UptimeClass(uptime)
	return d, nil
}

// scanWith scans a row's leading columns into the caller's destinations and the rest
// into more.
type scanWith struct {
	row  rowScanner
	more []any
}

func (s scanWith) Scan(dest ...any) error {
	return s.row.Scan(append(dest, s.more...)...)
}

// bindDollar rewrites ? placeholders into $1, $2, … (PostgreSQL). The directory SQL has
// no ? other than placeholders.
func bindDollar(query string) string {
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(query[i])
	}
	return b.String()
}

// Directory reads the page in one query, and the counts and protocol versions, when
// asked for, in one query each.
func (s *sqlStore) Directory(ctx context.Context, q DirectoryQuery) (DirectoryPage, error) {
	if err := checkDirectoryQuery(q); err != nil {
		return DirectoryPage{}, fmt.Errorf("couldn't read the directory: %w", err)
	}
	query, args := directorySQL(s.d, q, s.clock())
	rows, err := s.read.Query(ctx, query, args...)
	if err != nil {
		return DirectoryPage{}, fmt.Errorf("couldn't read the directory: %w", err)
	}
	page := DirectoryPage{Rows: make([]DirectoryRow, 0, min(q.Limit, 128))}
	if page.Rows, err = appendRows(page.Rows, rows, scanDirectoryRow); err != nil {
		return DirectoryPage{}, fmt.Errorf("couldn't read the directory: %w", err)
	}
	if q.CountEntries {
		if err := s.read.QueryRow(ctx, directoryEntriesSQL).Scan(&page.Entries); err != nil {
			return DirectoryPage{}, fmt.Errorf("couldn't count the directory's entries: %w", err)
		}
	}
	if q.CountMatches {
		query, args := directoryCountSQL(s.d, q)
		if err := s.read.QueryRow(ctx, query, args...).Scan(&page.Matches); err != nil {
			return DirectoryPage{}, fmt.Errorf("couldn't count the directory's matching entries: %w", err)
		}
	}
	if q.ListProtocols {
		if page.Protocols, err = queryAll(ctx, s.read, scanString, directoryProtocolsSQL); err != nil {
			return DirectoryPage{}, fmt.Errorf("couldn't list the directory's protocol versions: %w", err)
		}
	}
	return page, nil
}

// scanString scans a row of one text column.
func scanString(row rowScanner) (string, error) {
	var v string
	err := row.Scan(&v)
	return v, err
}
