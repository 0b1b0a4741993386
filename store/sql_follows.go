package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Follows and change e-mails (issue 17; migration 0012): who follows which entry, the
// followed entries that were deleted, each account's e-mail settings, and the outbox of
// planned e-mails. The rules that decide what an e-mail says live in package notify;
// the store keeps the rows and runs the set-based steps (planning, claiming) in SQL.
//
// Planning walks the changes in commit order (migration 0015): a change's ledger
// number (ledger.seq, gap-free and in commit order) is the cursor. Each account keeps
// the number its last e-mail covered changes through (NotifySettings.CoveredSeq), each
// outbox row the numbers it covers (OutboxEmail.SeqFrom, SeqThrough), so a change
// committed late, whatever its recorded time, falls into the next e-mail after its
// commit. Recorded times still decide the seed's time rules (after the follow began,
// none older than 7 days). A change without a ledger record (unsigned: history signs
// every change it records) has no place in that order and is never e-mailed.

// MaxFollows is how many entries one account may follow (seed 000). The schema
// enforces it (notify_settings.follows, counted by triggers).
const MaxFollows = 200

// ErrFollowLimit is returned by Follow when the account already follows MaxFollows
// entries.
var ErrFollowLimit = errors.New("an account follows at most 200 entries: unfollow one first")

// E-mail modes (NotifySettings.Mode).
const (
	MailHourly = "hourly" // as soon as something changes, at most one e-mail an hour (default)
	MailDaily  = "daily"  // one summary a day
	MailOff    = "off"    // no change e-mails
)

// Outbox states (OutboxEmail.State).
const (
	OutboxPending = "pending" // to be sent at NextAttemptAt
	OutboxSending = "sending" // claimed by a worker until its lease (NextAttemptAt) ends
	OutboxSent    = "sent"
	OutboxFailed  = "failed"  // refused permanently or out of retries: LastError says why
	OutboxSkipped = "skipped" // nothing was left to tell when it was composed
)

// maxOutboxError bounds OutboxEmail.LastError as stored.
const maxOutboxError = 500

// FollowedEntry is an entry an account follows, since when.
type FollowedEntry struct {
	Entry Entry
	Since time.Time
}

// Follower is an account that follows an entry, and since when.
type Follower struct {
	AccountID int64
	Since     time.Time
}

// GoneFollow is a followed entry that was deleted: its slug and name as they were.
type GoneFollow struct {
	ID        int64
	AccountID int64
	Slug      string
	Name      string
	DeletedAt time.Time
	ToldAt    time.Time // zero until an e-mail told it
}

// NotifySettings are an account's e-mail settings.
type NotifySettings struct {
	AccountID     int64
	Mode          string // MailHourly, MailDaily or MailOff
	ModeChangedAt time.Time
	// LastEmailAt is when the last e-mail was planned. CoveredThrough is when its
	// window closed (the plan's time), or when e-mails came back on: a daily account is
	// due when it is before the day's summary time (zero: none yet).
	LastEmailAt    time.Time
	CoveredThrough time.Time
	// CoveredSeq is the ledger number the account's changes were covered through (by
	// its last e-mail, or when e-mails came back on; 0: none yet): the next e-mail
	// covers the changes numbered after it.
	CoveredSeq int64
	// Follows is how many entries the account follows.
	Follows int
}

// ChangeRound is what a change's round read: its surface and instructions fingerprints
// ("" when the round read no whole tool list, or there is no round) and the
// server-reported version.
type ChangeRound struct {
	Surface, Instructions, Version string
}

// NotifyChange is a visible change as e-mail planning and composition read it: without
// its envelope, with its entry's slug and name and the states of the rounds it compares.
type NotifyChange struct {
	EntryID int64
	// Slug, Name and Title are the entry's (Title: its listed title, "" when none).
	Slug, Name, Title string
	Number            int64
	RecordedAt        time.Time
	// Seq is the number of the change's ledger record: its place in commit order.
	Seq     int64
	Origin  string
	Kind    string
	Summary string
	// Details is the change's JSON (history.ChangeDetails): it may hold server text.
	Details []byte
	// Badges are the change's badges (history/diff's Badge* kinds and
	// history.BadgeDiffersFromApproved).
	Badges        []string
	Before, After ChangeRound
	// A dispute or its outcome (Kind "dispute" or "outcome", RecordDispute and
	// RecordOutcome; issue 18) is told to followers as a change is: Number is the
	// entry's dispute number, RecordedAt when it was opened or decided, CheckID and
	// Round (the round's public id) what it contests, Decision an outcome's decision.
	// Origin is "maintainer" or "operator"; Summary and Details are empty.
	CheckID, Round, Decision string
}

// NotifyWindow says that an account whose pending changes of an entry are those
// numbered after c (its CoveredSeq) and recorded after f (the later of its follow's
// start and the plan's Oldest) has something to be told when SeqFrom ≤ c < SeqTo and
// From ≤ f < To (the zero From: any f before To). Package notify works the windows out
// from the changes.
type NotifyWindow struct {
	EntryID        int64
	SeqFrom, SeqTo int64
	From, To       time.Time
}

// open reports whether w holds for every start below its ends: SeqFrom 0 and From at
// or before oldest (every f is at or after oldest).
func (w *NotifyWindow) open(oldest time.Time) bool {
	return w.SeqFrom == 0 && (w.From.IsZero() || !w.From.After(oldest))
}

// NotifyRange selects the changes NotifyChanges reads: the visible changes that are not
// baselines, whose ledger number is in (AfterSeq, ThroughSeq] and that were recorded
// after Since; with AccountID, only those of the entries the account follows, recorded
// after its follow began.
type NotifyRange struct {
	AccountID            int64
	Since                time.Time
	AfterSeq, ThroughSeq int64
}

// EmailPlan is one planning step (PlanEmails).
type EmailPlan struct {
	// Now is the planning time: the rows' created_at and the accounts' last e-mail.
	Now time.Time
	// ThroughSeq ends the windows planned: the highest ledger number given when the
	// plan's changes were read (LedgerNumbered). The planned accounts are covered
	// through it; changes numbered after it wait for the next e-mail.
	ThroughSeq int64
	// Oldest is the earliest recorded time a window looks at: changes recorded before
	// it are never e-mailed (seed 000: none older than 7 days).
	Oldest time.Time
	// Mode is the accounts planned: MailHourly or MailDaily.
	Mode string
	// DueBefore: an hourly account is due when its last e-mail was at or before it (or
	// it had none); a daily account when its CoveredThrough is before it (the day's
	// summary time). An account with an e-mail pending or sending is never due: its
	// changes wait for the next plan after that e-mail.
	DueBefore time.Time
	// Windows are the entries with something to tell, and for which starts.
	Windows []NotifyWindow
	// MessageIDPrefix and MessageIDDomain make each row's Message-ID:
	// <PREFIX.ACCOUNT@DOMAIN>; the prefix must be new for every plan (random).
	MessageIDPrefix, MessageIDDomain string
}

// OutboxEmail is one row of the outbox.
type OutboxEmail struct {
	ID        int64
	AccountID int64
	CreatedAt time.Time
	// WindowFrom (zero: none) is the account's CoveredThrough when the e-mail was
	// planned, WindowThrough the plan's time.
	WindowFrom, WindowThrough time.Time
	// SeqFrom and SeqThrough bound the changes the e-mail covers: those numbered in
	// (SeqFrom, SeqThrough].
	SeqFrom, SeqThrough int64
	MessageID           string
	State               string
	Attempts            int
	NextAttemptAt       time.Time
	SentAt              time.Time
	LastError           string
}

// EmailOutcome is what became of one claimed e-mail (FinishEmail).
type EmailOutcome struct {
	ID int64
	// Attempt is the claim's attempt number (OutboxEmail.Attempts after ClaimEmail): an
	// outcome whose claim was overtaken (the lease ran out and another worker claimed the
	// row) changes nothing.
	Attempt int
	// State is OutboxSent, OutboxPending (a retry at NextAttemptAt), OutboxFailed or
	// OutboxSkipped.
	State         string
	At            time.Time
	NextAttemptAt time.Time
	Error         string
	// ToldGone are the followed_gone rows the e-mail told: marked told with a sent
	// outcome.
	ToldGone []int64
}

// ErrLeaseLost is returned by FinishEmail when the claim was overtaken: the row is no
// longer held by that attempt.
var ErrLeaseLost = errors.New("the e-mail's claim was overtaken by another attempt")

func checkMode(mode string) error {
	switch mode {
	case MailHourly, MailDaily, MailOff:
		return nil
	}
	return fmt.Errorf("e-mail mode %q is not one of hourly, daily, off", mode)
}

// Follow makes the account follow the entry from at; following one it follows already
// changes nothing (created false). ErrFollowLimit at MaxFollows; ErrNotFound when the
// entry or account does not exist.
func (s *sqlStore) Follow(ctx context.Context, accountID, entryID int64, at time.Time) (bool, error) {
	n, err := s.write.Exec(ctx, `
		INSERT INTO follows (account_id, entry_id, created_at) VALUES (?, ?, ?)
		ON CONFLICT (account_id, entry_id) DO NOTHING`, accountID, entryID, s.d.time(at))
	switch {
	case err != nil && isFollowLimit(err):
		return false, ErrFollowLimit
	case err != nil && isForeignKey(err):
		return false, fmt.Errorf("account %d or entry %d: %w", accountID, entryID, ErrNotFound)
	case err != nil:
		return false, fmt.Errorf("couldn't follow entry %d: %w", entryID, err)
	}
	return n > 0, nil
}

// Unfollow ends the follow; removed false when there was none.
func (s *sqlStore) Unfollow(ctx context.Context, accountID, entryID int64) (bool, error) {
	n, err := s.write.Exec(ctx, `DELETE FROM follows WHERE account_id = ? AND entry_id = ?`, accountID, entryID)
	if err != nil {
		return false, fmt.Errorf("couldn't unfollow entry %d: %w", entryID, err)
	}
	return n > 0, nil
}

// FollowSince returns when the account began to follow the entry (zero: it does not).
func (s *sqlStore) FollowSince(ctx context.Context, accountID, entryID int64) (time.Time, error) {
	var since time.Time
	err := s.read.QueryRow(ctx, `SELECT created_at FROM follows WHERE account_id = ? AND entry_id = ?`,
		accountID, entryID).Scan(timeCol(&since))
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("couldn't read the follow of entry %d: %w", entryID, err)
	}
	return since, nil
}

// Followers returns the accounts that follow the entry and since when, by account id
// (the webhook planner's question; the follows_entry index answers it).
func (s *sqlStore) Followers(ctx context.Context, entryID int64) ([]Follower, error) {
	ids, err := queryAll(ctx, s.read, func(row rowScanner) (Follower, error) {
		var f Follower
		return f, row.Scan(&f.AccountID, timeCol(&f.Since))
	}, `SELECT account_id, created_at FROM follows WHERE entry_id = ? ORDER BY account_id`, entryID)
	if err != nil {
		return nil, fmt.Errorf("couldn't list the followers of entry %d: %w", entryID, err)
	}
	return ids, nil
}

// Follows returns the entries the account follows, by name then slug (at most
// MaxFollows).
func (s *sqlStore) Follows(ctx context.Context, accountID int64) ([]FollowedEntry, error) {
	fs, err := queryAll(ctx, s.read, func(row rowScanner) (FollowedEntry, error) {
		var f FollowedEntry
		e, err := scanEntry(extraColumns{row, []any{timeCol(&f.Since)}})
		f.Entry = e
		return f, err
	}, `
		SELECT `+prefixColumns("e", entryColumns)+`, f.created_at
		FROM follows f JOIN entries e ON e.id = f.entry_id
		WHERE f.account_id = ?
		ORDER BY `+s.d.fold("e.name")+`, e.slug
		LIMIT ?`, accountID, MaxFollows)
	if err != nil {
		return nil, fmt.Errorf("couldn't list the followed entries of account %d: %w", accountID, err)
	}
	return fs, nil
}

// extraColumns scans a row whose first columns a scan function reads and whose last
// ones go to extra.
type extraColumns struct {
	row   rowScanner
	extra []any
}

func (x extraColumns) Scan(dest ...any) error { return x.row.Scan(append(dest, x.extra...)...) }

// FollowedChanges returns the newest perEntry visible changes of each entry the account
// follows (baselines included: the page shows where observation began), newest first
// per entry, without envelopes.
func (s *sqlStore) FollowedChanges(ctx context.Context, accountID int64, perEntry int) ([]ChangeRecord, error) {
	perEntry = min(max(perEntry, 1), 20)
	cs, err := queryAll(ctx, s.read, scanChange, `
		SELECT `+changeColumnsWithoutEnvelope+`
		FROM `+changeFrom+` JOIN (
			SELECT c2.id, row_number() OVER (PARTITION BY c2.entry_id ORDER BY c2.number DESC) AS rn
			FROM follows f JOIN changes c2 ON c2.entry_id = f.entry_id
			WHERE f.account_id = ? AND NOT c2.hidden
		) k ON k.id = c.id
		WHERE k.rn <= ?
		ORDER BY c.entry_id, c.number DESC`, accountID, perEntry)
	if err != nil {
		return nil, fmt.Errorf("couldn't list the changes of the entries account %d follows: %w", accountID, err)
	}
	return cs, nil
}

// GoneFollows returns the account's followed entries that were deleted, told or not,
// oldest first (at most MaxFollows).
func (s *sqlStore) GoneFollows(ctx context.Context, accountID int64) ([]GoneFollow, error) {
	gs, err := queryAll(ctx, s.read, scanGone, `
		SELECT id, account_id, slug, name, deleted_at, told_at FROM followed_gone
		WHERE account_id = ? ORDER BY id LIMIT ?`, accountID, MaxFollows)
	if err != nil {
		return nil, fmt.Errorf("couldn't list the deleted followed entries of account %d: %w", accountID, err)
	}
	return gs, nil
}

// UntoldGone returns the account's deleted followed entries no e-mail told yet, oldest
// first (at most MaxFollows).
func (s *sqlStore) UntoldGone(ctx context.Context, accountID int64) ([]GoneFollow, error) {
	gs, err := queryAll(ctx, s.read, scanGone, `
		SELECT id, account_id, slug, name, deleted_at, told_at FROM followed_gone
		WHERE account_id = ? AND told_at IS NULL ORDER BY id LIMIT ?`, accountID, MaxFollows)
	if err != nil {
		return nil, fmt.Errorf("couldn't list the untold deleted entries of account %d: %w", accountID, err)
	}
	return gs, nil
}

func scanGone(row rowScanner) (GoneFollow, error) {
	var g GoneFollow
	err := row.Scan(&g.ID, &g.AccountID, &g.Slug, &g.Name, timeCol(&g.DeletedAt), timeCol(&g.ToldAt))
	return g, err
}

// NotifySettings returns the account's e-mail settings; ErrNotFound when there is no
// such account.
func (s *sqlStore) NotifySettings(ctx context.Context, accountID int64) (NotifySettings, error) {
	var n NotifySettings
	err := s.read.QueryRow(ctx, `
		SELECT account_id, mode, mode_changed_at, last_email_at, covered_through, coalesce(covered_seq, 0), follows
		FROM notify_settings WHERE account_id = ?`, accountID).Scan(&n.AccountID, &n.Mode,
		timeCol(&n.ModeChangedAt), timeCol(&n.LastEmailAt), timeCol(&n.CoveredThrough), &n.CoveredSeq, &n.Follows)
	if errors.Is(err, sql.ErrNoRows) {
		return NotifySettings{}, fmt.Errorf("account %d: %w", accountID, ErrNotFound)
	}
	if err != nil {
		return NotifySettings{}, fmt.Errorf("couldn't read the e-mail settings of account %d: %w", accountID, err)
	}
	return n, nil
}

// SetNotifyMode sets the account's e-mail mode at at and returns the mode it had.
// Turning e-mails on from off starts the next e-mail's window at at: changes committed
// while e-mails were off are not sent. ErrNotFound when there is no such account.
func (s *sqlStore) SetNotifyMode(ctx context.Context, accountID int64, mode string, at time.Time) (string, error) {
	return s.setNotifyMode(ctx, accountID, mode, at, false)
}

// RestoreNotifyMode sets the mode back to mode (the undo of turning e-mails off) and
// keeps the window where it was: the next e-mail covers the changes since the last
// one, those committed while e-mails were off included, as if they had never been off.
// It returns the mode the account had.
func (s *sqlStore) RestoreNotifyMode(ctx context.Context, accountID int64, mode string, at time.Time) (string, error) {
	return s.setNotifyMode(ctx, accountID, mode, at, true)
}

func (s *sqlStore) setNotifyMode(ctx context.Context, accountID int64, mode string, at time.Time, restore bool) (string, error) {
	if err := checkMode(mode); err != nil {
		return "", err
	}
	cur, err := s.NotifySettings(ctx, accountID)
	if err != nil {
		return "", err
	}
	if cur.Mode == mode {
		return cur.Mode, nil
	}
	// The update names the mode it read: a concurrent change makes it match nothing,
	// and the caller is told to try again rather than overwrite it unseen. Back on
	// from off, the window starts at the highest ledger number given (and at at),
	// unless the window is restored.
	reset := !restore
	n, err := s.write.Exec(ctx, `
		UPDATE notify_settings
		SET mode = ?, mode_changed_at = ?,
		    covered_through = CASE WHEN mode = 'off' AND ? THEN ? ELSE covered_through END,
		    covered_seq = CASE WHEN mode = 'off' AND ? THEN (SELECT next - 1 FROM ledger_counter) ELSE covered_seq END
		WHERE account_id = ? AND mode = ?`, mode, s.d.time(at), reset, s.d.time(at), reset, accountID, cur.Mode)
	if err == nil && n == 0 {
		err = errors.New("the settings changed meanwhile: try again")
	}
	if err != nil {
		return "", fmt.Errorf("couldn't set the e-mail mode of account %d: %w", accountID, err)
	}
	return cur.Mode, nil
}

// NotifyRecipient returns the account's e-mail address ("" when it signed in with
// GitHub only); ErrNotFound when there is no such account.
func (s *sqlStore) NotifyRecipient(ctx context.Context, accountID int64) (string, error) {
	var email string
	err := s.read.QueryRow(ctx, `SELECT coalesce(email, '') FROM accounts WHERE id = ?`, accountID).Scan(&email)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("account %d: %w", accountID, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("couldn't read the address of account %d: %w", accountID, err)
	}
	return email, nil
}

// notifyChangeColumns are the columns scanNotifyChange reads, of notifyChangeFrom.
const (
	notifyChangeColumns = `c.entry_id, e.slug, e.name, e.title, c.number, c.recorded_at, l.seq, c.origin, c.kind, c.summary, c.details, c.badges,
		b.fp_surface, b.fp_instructions, b.server_version, a.fp_surface, a.fp_instructions, a.server_version`
	notifyChangeFrom = `changes c JOIN entries e ON e.id = c.entry_id JOIN ledger l ON l.id = c.ledger_id
		LEFT JOIN rounds b ON b.id = c.before_round LEFT JOIN rounds a ON a.id = c.after_round`
)

func scanNotifyChange(row rowScanner) (NotifyChange, error) {
	var (
		c          NotifyChange
		badges     string
		bs, bi, bv *string
		as, ai, av *string
	)
	err := row.Scan(&c.EntryID, &c.Slug, &c.Name, &c.Title, &c.Number, timeCol(&c.RecordedAt), &c.Seq, &c.Origin, &c.Kind, &c.Summary,
		&c.Details, &badges, &bs, &bi, &bv, &as, &ai, &av)
	if err != nil {
		return NotifyChange{}, err
	}
	if c.Badges, err = decodeBadges(badges); err != nil {
		return NotifyChange{}, err
	}
	deref := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	c.Before = ChangeRound{Surface: deref(bs), Instructions: deref(bi), Version: deref(bv)}
	c.After = ChangeRound{Surface: deref(as), Instructions: deref(ai), Version: deref(av)}
	return c, nil
}

// notifyPage is how many changes NotifyChanges reads at once (a variable for tests).
var notifyPage = 5000

// LedgerNumbered returns the highest ledger number given (0: none). Numbers follow
// commit order: every record numbered at or below it is committed and visible, and a
// record committed later gets a higher one.
func (s *sqlStore) LedgerNumbered(ctx context.Context) (int64, error) {
	var n int64
	err := s.read.QueryRow(ctx, `SELECT coalesce((SELECT next - 1 FROM ledger_counter), 0)`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("couldn't read the ledger's counter: %w", err)
	}
	return n, nil
}

// NotifyChanges calls fn with the changes r selects, one entry's at a time, by entry
// and, within one, by number. It reads them a page at a time (notifyPage), so it
// passes on every change however many there are; an entry's changes span pages
// whole.
func (s *sqlStore) NotifyChanges(ctx context.Context, r NotifyRange, fn func(entry []NotifyChange) error) error {
	disputes, err := s.notifyDisputes(ctx, r)
	if err != nil {
		return err
	}
	// Each entry's disputes and outcomes join its changes, in commit (seq) order; an
	// entry with disputes only is called in its place by entry id.
	call := func(group []NotifyChange) error {
		if len(group) == 0 {
			return nil
		}
		id := group[0].EntryID
		for len(disputes) > 0 && disputes[0][0].EntryID < id {
			if err := fn(disputes[0]); err != nil {
				return err
			}
			disputes = disputes[1:]
		}
		if len(disputes) > 0 && disputes[0][0].EntryID == id {
			group = mergeBySeq(group, disputes[0])
			disputes = disputes[1:]
		}
		return fn(group)
	}
	query := `SELECT ` + notifyChangeColumns + ` FROM ` + notifyChangeFrom
	args := []any{}
	if r.AccountID != 0 {
		query += ` JOIN follows f ON f.entry_id = c.entry_id AND f.account_id = ? AND c.recorded_at > f.created_at`
		args = append(args, r.AccountID)
	}
	query += `
		WHERE l.seq > ? AND l.seq <= ? AND c.recorded_at > ? AND NOT c.hidden AND c.kind <> 'baseline'
		  AND (c.entry_id > ? OR (c.entry_id = ? AND c.number > ?))
		ORDER BY c.entry_id, c.number
		LIMIT ?`
	args = append(args, r.AfterSeq, r.ThroughSeq, s.d.time(r.Since))
	var (
		group             []NotifyChange
		afterEntry, after int64
	)
	for {
		page, err := queryAll(ctx, s.read, scanNotifyChange, query, append(args, afterEntry, afterEntry, after, notifyPage)...)
		if err != nil {
			return fmt.Errorf("couldn't list the changes to e-mail: %w", err)
		}
		for _, c := range page {
			if len(group) > 0 && group[0].EntryID != c.EntryID {
				if err := call(group); err != nil {
					return err
				}
				group = nil
			}
			group = append(group, c)
		}
		if len(page) < notifyPage {
			break
		}
		last := page[len(page)-1]
		afterEntry, after = last.EntryID, last.Number
	}
	if err := call(group); err != nil {
		return err
	}
	for _, d := range disputes {
		if err := fn(d); err != nil {
			return err
		}
	}
	return nil
}

// maxNotifyDisputes bounds the disputes and outcomes one NotifyChanges reads: far more
// than a week brings (an account opens at most a few a day).
const maxNotifyDisputes = 10_000

// notifyDisputes returns the disputes and outcomes r selects, grouped by entry (by id),
// each group in seq order.
func (s *sqlStore) notifyDisputes(ctx context.Context, r NotifyRange) ([][]NotifyChange, error) {
	part := func(kind, origin, at, decision, ledger, from string) (string, []any) {
		q := `SELECT d.entry_id, e.slug, e.name, e.title, d.number, ` + at + `, l.seq, '` + origin + `', '` + kind + `', d.check_id,
			r.round_id, ` + decision + ` FROM ` + from + ` JOIN entries e ON e.id = d.entry_id JOIN ledger l ON l.id = ` + ledger + `
			JOIN rounds r ON r.id = d.round_id`
		var args []any
		if r.AccountID != 0 {
			q += ` JOIN follows f ON f.entry_id = d.entry_id AND f.account_id = ? AND ` + at + ` > f.created_at`
			args = append(args, r.AccountID)
		}
		q += ` WHERE l.seq > ? AND l.seq <= ? AND ` + at + ` > ?`
		return q, append(args, r.AfterSeq, r.ThroughSeq, s.d.time(r.Since))
	}
	dq, dargs := part(string(RecordDispute), "maintainer", "d.opened_at", "''", "d.ledger_id", "disputes d")
	oq, oargs := part(string(RecordOutcome), "operator", "o.decided_at", "o.decision", "o.ledger_id", "outcomes o JOIN disputes d ON d.id = o.dispute_id")
	rows, err := queryAll(ctx, s.read, func(row rowScanner) (NotifyChange, error) {
		var c NotifyChange
		err := row.Scan(&c.EntryID, &c.Slug, &c.Name, &c.Title, &c.Number, timeCol(&c.RecordedAt), &c.Seq, &c.Origin, &c.Kind,
			&c.CheckID, &c.Round, &c.Decision)
		return c, err
	}, dq+` UNION ALL `+oq+` ORDER BY 1, 7 LIMIT ?`, append(append(dargs, oargs...), maxNotifyDisputes)...)
	if err != nil {
		return nil, fmt.Errorf("couldn't list the disputes to e-mail: %w", err)
	}
	var out [][]NotifyChange
	for _, c := range rows {
		if n := len(out); n > 0 && out[n-1][0].EntryID == c.EntryID {
			out[n-1] = append(out[n-1], c)
		} else {
			out = append(out, []NotifyChange{c})
		}
	}
	return out, nil
}

// mergeBySeq merges an entry's changes and disputes, each in seq order, into seq order.
func mergeBySeq(a, b []NotifyChange) []NotifyChange {
	out := make([]NotifyChange, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0].Seq <= b[0].Seq {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// outboxColumns are the columns scanOutbox reads.
const outboxColumns = `id, account_id, created_at, window_from, window_through, coalesce(seq_from, 0), coalesce(seq_through, 0),
	message_id, state, attempts, next_attempt_at, sent_at, last_error`

func scanOutbox(row rowScanner) (OutboxEmail, error) {
	var o OutboxEmail
	err := row.Scan(&o.ID, &o.AccountID, timeCol(&o.CreatedAt), timeCol(&o.WindowFrom), timeCol(&o.WindowThrough),
		&o.SeqFrom, &o.SeqThrough, &o.MessageID, &o.State, &o.Attempts, timeCol(&o.NextAttemptAt), timeCol(&o.SentAt), &o.LastError)
	return o, err
}

// OutboxEmails returns the account's newest outbox rows, newest first, at most limit
// (≤ 0 or above 100: 100); with failedOnly, only failed ones.
func (s *sqlStore) OutboxEmails(ctx context.Context, accountID int64, failedOnly bool, limit int) ([]OutboxEmail, error) {
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	query := `SELECT ` + outboxColumns + ` FROM outbox WHERE account_id = ?`
	if failedOnly {
		query += ` AND state = 'failed'`
	}
	query += ` ORDER BY id DESC LIMIT ?`
	rows, err := queryAll(ctx, s.read, scanOutbox, query, accountID, limit)
	if err != nil {
		return nil, fmt.Errorf("couldn't list the e-mails of account %d: %w", accountID, err)
	}
	return rows, nil
}

// OutboxEmail returns one outbox row, or ErrNotFound.
func (s *sqlStore) OutboxEmail(ctx context.Context, id int64) (OutboxEmail, error) {
	o, err := scanOutbox(s.read.QueryRow(ctx, `SELECT `+outboxColumns+` FROM outbox WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return OutboxEmail{}, fmt.Errorf("e-mail %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return OutboxEmail{}, fmt.Errorf("couldn't read e-mail %d: %w", id, err)
	}
	return o, nil
}

// claimEmailSQL claims the outbox row due first: a pending row whose time has come, or
// a sending row whose lease ran out (a worker that died mid-send). lock is the
// backend's row-lock clause of the subquery ("" on SQLite, whose single writer
// serializes claims; FOR UPDATE SKIP LOCKED on PostgreSQL, so that workers claim
// different rows side by side).
func claimEmailSQL(lock string) string {
	return `
		UPDATE outbox SET state = 'sending', attempts = attempts + 1, lease_until = ?, next_attempt_at = ?
		WHERE id = (
			SELECT id FROM outbox
			WHERE state IN ('pending', 'sending') AND next_attempt_at <= ?
			ORDER BY next_attempt_at, id
			LIMIT 1 ` + lock + `
		)
		RETURNING ` + outboxColumns
}

// claimEmail runs claimEmailSQL on q.
func (s *sqlStore) claimEmail(ctx context.Context, q querier, lock string, now time.Time, lease time.Duration) (OutboxEmail, bool, error) {
	if lease <= 0 {
		return OutboxEmail{}, false, errors.New("couldn't claim an e-mail: the lease must be positive")
	}
	until := s.d.time(now.Add(lease))
	o, err := scanOutbox(q.QueryRow(ctx, claimEmailSQL(lock), until, until, s.d.time(now)))
	if errors.Is(err, sql.ErrNoRows) {
		return OutboxEmail{}, false, nil
	}
	if err != nil {
		return OutboxEmail{}, false, fmt.Errorf("couldn't claim an e-mail: %w", err)
	}
	return o, true, nil
}

// finishEmail stores an outcome on q, a transaction.
func (s *sqlStore) finishEmail(ctx context.Context, q querier, o EmailOutcome) error {
	msg := o.Error
	if len(msg) > maxOutboxError {
		msg = strings.ToValidUTF8(msg[:maxOutboxError], "")
	}
	var (
		n   int64
		err error
	)
	switch o.State {
	case OutboxSent:
		n, err = q.Exec(ctx, `UPDATE outbox SET state = 'sent', sent_at = ?, lease_until = NULL, last_error = ''
			WHERE id = ? AND state = 'sending' AND attempts = ?`, s.d.time(o.At), o.ID, o.Attempt)
		if err == nil && n == 1 && len(o.ToldGone) > 0 {
			for _, id := range o.ToldGone {
				if _, err = q.Exec(ctx, `UPDATE followed_gone SET told_at = ? WHERE id = ? AND told_at IS NULL`,
					s.d.time(o.At), id); err != nil {
					break
				}
			}
		}
	case OutboxPending:
		n, err = q.Exec(ctx, `UPDATE outbox SET state = 'pending', next_attempt_at = ?, lease_until = NULL, last_error = ?
			WHERE id = ? AND state = 'sending' AND attempts = ?`, s.d.time(o.NextAttemptAt), msg, o.ID, o.Attempt)
	case OutboxFailed, OutboxSkipped:
		n, err = q.Exec(ctx, `UPDATE outbox SET state = ?, lease_until = NULL, last_error = ?
			WHERE id = ? AND state = 'sending' AND attempts = ?`, o.State, msg, o.ID, o.Attempt)
	default:
		return fmt.Errorf("couldn't finish e-mail %d: %q is not an outcome", o.ID, o.State)
	}
	if err != nil {
		return fmt.Errorf("couldn't finish e-mail %d: %w", o.ID, err)
	}
	if n == 0 {
		return fmt.Errorf("e-mail %d, attempt %d: %w", o.ID, o.Attempt, ErrLeaseLost)
	}
	return nil
}

// PruneNotify deletes the outbox rows that are over (sent, failed, skipped) and created
// before before, the deleted followed entries told before before, and those never told
// (e-mails off, or no address) deleted before untoldBefore; it returns how many rows
// went.
func (s *sqlStore) PruneNotify(ctx context.Context, before, untoldBefore time.Time) (int64, error) {
	a, err := s.write.Exec(ctx, `DELETE FROM outbox WHERE state IN ('sent', 'failed', 'skipped') AND created_at < ?`, s.d.time(before))
	if err != nil {
		return 0, fmt.Errorf("couldn't prune the outbox: %w", err)
	}
	b, err := s.write.Exec(ctx, `DELETE FROM followed_gone WHERE told_at < ? OR (told_at IS NULL AND deleted_at < ?)`,
		s.d.time(before), s.d.time(untoldBefore))
	if err != nil {
		return a, fmt.Errorf("couldn't prune the deleted followed entries: %w", err)
	}
	return a + b, nil
}

// planDue is the condition that notify_settings row s is due for an e-mail of the
// plan's mode, with one parameter, EmailPlan.DueBefore: an hourly account is due when
// its last e-mail was an hour ago or more (at or before DueBefore), a daily one when
// its window closed before the day's summary time; neither while an e-mail of the
// account is pending or sending, so one account never has two. unfinished names the
// rows to look for those in: "outbox" (outbox_unfinished), or a CTE of
// unfinishedOutbox read before the plan inserts into the outbox (PostgreSQL: an
// anti-join on the table the statement fills would scan its new rows once per
// account).
func planDue(mode, param, unfinished string) string {
	notBusy := ` AND NOT EXISTS (SELECT 1 FROM ` + unfinished + ` u WHERE u.account_id = s.account_id AND u.state IN ` + outboxUnfinished + `)`
	if mode == MailDaily {
		return `s.mode = 'daily' AND (s.covered_through IS NULL OR s.covered_through < ` + param + `)` + notBusy
	}
	return `s.mode = 'hourly' AND (s.last_email_at IS NULL OR s.last_email_at <= ` + param + `)` + notBusy
}

// outboxUnfinished are the states of an e-mail not finished yet (the partial index
// outbox_unfinished's).
const outboxUnfinished = `('pending', 'sending')`

// unfinishedOutbox selects the outbox rows of e-mails not finished yet.
const unfinishedOutbox = `SELECT account_id, state FROM outbox WHERE state IN ` + outboxUnfinished

func checkPlan(p *EmailPlan) error {
	switch {
	case p.Mode != MailHourly && p.Mode != MailDaily:
		return fmt.Errorf("a plan is for hourly or daily accounts, not %q", p.Mode)
	case p.Now.IsZero() || p.Oldest.IsZero() || p.DueBefore.IsZero():
		return errors.New("a plan needs Now, Oldest and DueBefore")
	case p.Oldest.After(p.Now) || p.DueBefore.After(p.Now) || p.ThroughSeq < 0:
		return errors.New("a plan needs Oldest and DueBefore at or before Now, and a ThroughSeq")
	case p.MessageIDPrefix == "" || p.MessageIDDomain == "" ||
		strings.ContainsAny(p.MessageIDPrefix+p.MessageIDDomain, "<>@ \t\r\n\"\\") || len(p.MessageIDPrefix)+len(p.MessageIDDomain) > 200:
		return errors.New("a plan needs a Message-ID prefix and domain without <, >, @, quotes or spaces")
	}
	for _, w := range p.Windows {
		if !w.To.After(w.From) || w.SeqTo <= w.SeqFrom || w.SeqFrom < 0 || w.SeqTo > p.ThroughSeq {
			return fmt.Errorf("window of entry %d is empty or beyond the plan", w.EntryID)
		}
	}
	return nil
}
