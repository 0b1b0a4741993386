package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/probity-dev/probity/store"
)

// Store is the part of store.Store the service uses.
type Store interface {
	Entry(ctx context.Context, slug string) (store.Entry, error)
	EntryByID(ctx context.Context, id int64) (store.Entry, error)
	HistoryState(ctx context.Context, entryID int64) (state []byte, processed int64, err error)

	Follow(ctx context.Context, accountID, entryID int64, at time.Time) (bool, error)
	Unfollow(ctx context.Context, accountID, entryID int64) (bool, error)
	FollowSince(ctx context.Context, accountID, entryID int64) (time.Time, error)
	Follows(ctx context.Context, accountID int64) ([]store.FollowedEntry, error)
	FollowedChanges(ctx context.Context, accountID int64, perEntry int) ([]store.ChangeRecord, error)
	GoneFollows(ctx context.Context, accountID int64) ([]store.GoneFollow, error)
	UntoldGone(ctx context.Context, accountID int64) ([]store.GoneFollow, error)
	NotifySettings(ctx context.Context, accountID int64) (store.NotifySettings, error)
	SetNotifyMode(ctx context.Context, accountID int64, mode string, at time.Time) (string, error)
	RestoreNotifyMode(ctx context.Context, accountID int64, mode string, at time.Time) (string, error)
	NotifyRecipient(ctx context.Context, accountID int64) (string, error)
	LedgerNumbered(ctx context.Context) (int64, error)
	NotifyChanges(ctx context.Context, r store.NotifyRange, fn func(entry []store.NotifyChange) error) error
	PlanEmails(ctx context.Context, p store.EmailPlan) (int, error)
	ClaimEmail(ctx context.Context, now time.Time, lease time.Duration) (store.OutboxEmail, bool, error)
	FinishEmail(ctx context.Context, o store.EmailOutcome) error
	OutboxEmails(ctx context.Context, accountID int64, failedOnly bool, limit int) ([]store.OutboxEmail, error)
	PruneNotify(ctx context.Context, before, untoldBefore time.Time) (int64, error)
}

// Errors callers branch on.
var (
	// ErrLimit is returned by Follow at the limit of MaxFollows followed entries.
	ErrLimit = fmt.Errorf("you follow %d entries, the most one account may: unfollow one to follow another", store.MaxFollows)
	// ErrNotFound is returned for an entry that does not exist (any more).
	ErrNotFound = errors.New("no such entry")
	// ErrBadToken is returned for an unsubscribe token that is malformed, forged or
	// expired.
	ErrBadToken = errors.New("this unsubscribe link is not valid or has expired: use the link of a newer e-mail, or sign in and open your Followed page")
)

// MaxFollows is how many entries an account may follow (seed 000).
const MaxFollows = store.MaxFollows

// Defaults of Config.
const (
	DefaultSettle      = 5 * time.Minute
	DefaultDailyHour   = 7
	DefaultLease       = 2 * time.Minute
	DefaultSendTimeout = time.Minute
	DefaultConcurrency = 4
	// DefaultKeep is how long finished outbox rows, and deleted followed entries once
	// told, are kept.
	DefaultKeep = 30 * 24 * time.Hour
	// KeepUntold is how long a deleted followed entry no e-mail told (e-mails off, no
	// address) stays on the Followed page.
	KeepUntold = 180 * 24 * time.Hour
)

// DefaultBackoff are the waits after each failed attempt (seed-free choice of issue 17):
// 1 min, 5 min, 30 min, 2 h, 6 h; the attempt after the last wait is the last.
var DefaultBackoff = []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 6 * time.Hour}

// Config configures a Service.
type Config struct {
	Store Store
	// BaseURL is the site's address (https://probity.example), the base of every link
	// in an e-mail; its host names the Message-IDs and List-Id.
	BaseURL string
	// Key is the secret of the unsubscribe tokens, 32 bytes (LoadOrCreateKey).
	Key []byte
	// Sender sends the e-mails (package mail's Sender, adapted); nil: planning and the
	// Followed page work, delivery refuses to start.
	Sender Sender
	// IsPermanent says a Send error is a permanent refusal (SMTP 5xx: errors.Is(err,
	// mail.ErrPermanent)); nil: every error is transient.
	IsPermanent func(error) bool
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Logger receives events; default discards. Never given addresses or tokens.
	Logger *slog.Logger
	// Settle is how long after the daily summary time the summaries are planned
	// (DefaultSettle): a change is committed shortly after the round it was recorded
	// at, and one recorded just before the summary time belongs in that summary.
	// (Planning walks changes in commit order, so no change is lost to a late commit
	// either way; Settle only decides which e-mail tells it.)
	Settle time.Duration
	// DailyHour is the hour (UTC) of the daily summaries; default DefaultDailyHour;
	// -1 is taken as 0.
	DailyHour int
	// Lease is how long a claimed e-mail is held (DefaultLease); it must exceed
	// SendTimeout.
	Lease time.Duration
	// SendTimeout bounds one Send (DefaultSendTimeout).
	SendTimeout time.Duration
	// Backoff are the waits after failed attempts (DefaultBackoff); after the last one
	// an e-mail that fails again is failed for good.
	Backoff []time.Duration
	// Concurrency is how many e-mails one delivery job sends at once
	// (DefaultConcurrency).
	Concurrency int
	// Keep is how long finished outbox rows and deleted followed entries are kept
	// (DefaultKeep, the duration the privacy page states: a different Keep makes the
	// page wrong).
	Keep time.Duration
}

// Service is following, the Followed page, e-mail planning, composing and delivery,
// and unsubscribing.
type Service struct {
	cfg    Config
	st     Store
	base   string
	host   string
	now    func() time.Time
	log    *slog.Logger
	tokens tokenKey

	mu        sync.Mutex
	lastDaily time.Time // the daily summary time last planned by this process
	lastPrune time.Time
}

// New returns a Service for cfg.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil {
		return nil, errors.New("notify: Config needs a Store")
	}
	u, err := url.Parse(strings.TrimRight(cfg.BaseURL, "/"))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("notify: BaseURL %q is not an http(s) address of the site", cfg.BaseURL)
	}
	if len(cfg.Key) != KeySize {
		return nil, fmt.Errorf("notify: the token key must be %d bytes, not %d", KeySize, len(cfg.Key))
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Settle <= 0 {
		cfg.Settle = DefaultSettle
	}
	if cfg.DailyHour == 0 {
		cfg.DailyHour = DefaultDailyHour
	}
	if cfg.DailyHour < 0 || cfg.DailyHour > 23 {
		cfg.DailyHour = max(min(cfg.DailyHour, 23), 0)
	}
	if cfg.SendTimeout <= 0 {
		cfg.SendTimeout = DefaultSendTimeout
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.Lease <= cfg.SendTimeout {
		return nil, fmt.Errorf("notify: Lease (%s) must exceed SendTimeout (%s), or a slow send would be claimed twice", cfg.Lease, cfg.SendTimeout)
	}
	if len(cfg.Backoff) == 0 {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.Keep <= 0 {
		cfg.Keep = DefaultKeep
	}
	return &Service{cfg: cfg, st: cfg.Store, base: u.String(), host: u.Hostname(), now: cfg.Now, log: cfg.Logger,
		tokens: tokenKey(cfg.Key)}, nil
}

// Follow makes the account follow the entry with the slug (following it again changes
// nothing). ErrLimit at MaxFollows, ErrNotFound without such entry.
func (s *Service) Follow(ctx context.Context, accountID int64, slug string) error {
	e, err := s.st.Entry(ctx, slug)
	if errors.Is(err, store.ErrNotFound) {
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	_, err = s.follow(ctx, accountID, e.ID)
	return err
}

// follow makes the account follow the entry; created false: it did already.
func (s *Service) follow(ctx context.Context, accountID, entryID int64) (bool, error) {
	created, err := s.st.Follow(ctx, accountID, entryID, s.now())
	switch {
	case errors.Is(err, store.ErrFollowLimit):
		return false, ErrLimit
	case errors.Is(err, store.ErrNotFound):
		return false, ErrNotFound
	}
	return created, err
}

// Unfollow ends the account's follow of the entry with the slug (none: nothing
// changes). ErrNotFound without such entry.
func (s *Service) Unfollow(ctx context.Context, accountID int64, slug string) error {
	e, err := s.st.Entry(ctx, slug)
	if errors.Is(err, store.ErrNotFound) {
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	_, err = s.st.Unfollow(ctx, accountID, e.ID)
	return err
}

// Following reports whether the account follows the entry (the button an entry's page
// shows).
func (s *Service) Following(ctx context.Context, accountID, entryID int64) (bool, error) {
	since, err := s.st.FollowSince(ctx, accountID, entryID)
	return !since.IsZero(), err
}

// Modes are the e-mail modes, in the order the Followed page offers them.
var Modes = []string{store.MailHourly, store.MailDaily, store.MailOff}

// ModeLabel says what a mode does, for the page's choices.
func ModeLabel(mode string) string {
	switch mode {
	case store.MailHourly:
		return "As soon as something changes, at most one e-mail an hour"
	case store.MailDaily:
		return "A daily summary"
	case store.MailOff:
		return "No e-mails"
	}
	return ""
}

// SetMode sets the account's e-mail mode (store.MailHourly, MailDaily or MailOff).
func (s *Service) SetMode(ctx context.Context, accountID int64, mode string) error {
	_, err := s.st.SetNotifyMode(ctx, accountID, mode, s.now())
	return err
}

// Followed is what the Followed page shows.
type Followed struct {
	Mode      string // store.MailHourly, MailDaily or MailOff
	Count     int
	Limit     int
	HasEmail  bool // the account has an address to send to
	Entries   []FollowedEntry
	Gone      []GoneEntry
	Failures  []Failure
	ModeLabel string
}

// FollowedEntry is a followed entry with its latest visible changes.
type FollowedEntry struct {
	ID      int64
	Slug    string
	Name    string // plain text, one line
	Since   time.Time
	Link    string // the entry's page
	Changes []FollowedChange
}

// FollowedChange is one of a followed entry's latest changes.
type FollowedChange struct {
	Number     int64
	RecordedAt time.Time
	// Summary is the change's stored one-line summary (counts and fixed words, never
	// server text), or "First read (baseline)".
	Summary  string
	Baseline bool
	Link     string // BASE/s/SLUG/history#ch-N
}

// GoneEntry is a followed entry that was deleted: nobody follows it any more.
type GoneEntry struct {
	Slug, Name string
	DeletedAt  time.Time
	Told       bool // an e-mail said so
}

// Failure is an e-mail that could not be delivered.
type Failure struct {
	PlannedAt time.Time
	Attempts  int
	Error     string // one line
}

// ChangesPerEntry is how many of each followed entry's latest changes the Followed page
// lists.
const ChangesPerEntry = 3

// Followed returns the account's Followed page.
func (s *Service) Followed(ctx context.Context, accountID int64) (Followed, error) {
	st, err := s.st.NotifySettings(ctx, accountID)
	if err != nil {
		return Followed{}, err
	}
	email, err := s.st.NotifyRecipient(ctx, accountID)
	if err != nil {
		return Followed{}, err
	}
	fs, err := s.st.Follows(ctx, accountID)
	if err != nil {
		return Followed{}, err
	}
	cs, err := s.st.FollowedChanges(ctx, accountID, ChangesPerEntry)
	if err != nil {
		return Followed{}, err
	}
	gone, err := s.st.GoneFollows(ctx, accountID)
	if err != nil {
		return Followed{}, err
	}
	failed, err := s.st.OutboxEmails(ctx, accountID, true, 10)
	if err != nil {
		return Followed{}, err
	}
	byEntry := map[int64][]FollowedChange{}
	for _, c := range cs {
		fc := FollowedChange{Number: c.Number, RecordedAt: c.RecordedAt, Summary: plainLine(c.Summary, 200),
			Baseline: c.Kind == "baseline", Link: s.changeLink(c.EntrySlug, c.Number)}
		if fc.Baseline {
			fc.Summary = "First read (baseline)"
		}
		byEntry[c.EntryID] = append(byEntry[c.EntryID], fc)
	}
	f := Followed{Mode: st.Mode, ModeLabel: ModeLabel(st.Mode), Count: len(fs), Limit: MaxFollows, HasEmail: email != ""}
	for _, fe := range fs {
		f.Entries = append(f.Entries, FollowedEntry{ID: fe.Entry.ID, Slug: fe.Entry.Slug, Name: entryName(fe.Entry),
			Since: fe.Since, Link: s.base + "/s/" + url.PathEscape(fe.Entry.Slug), Changes: byEntry[fe.Entry.ID]})
	}
	for _, g := range gone {
		f.Gone = append(f.Gone, GoneEntry{Slug: g.Slug, Name: plainLine(g.Name, 200), DeletedAt: g.DeletedAt, Told: !g.ToldAt.IsZero()})
	}
	for _, o := range failed {
		f.Failures = append(f.Failures, Failure{PlannedAt: o.CreatedAt, Attempts: o.Attempts, Error: plainLine(o.LastError, 300)})
	}
	return f, nil
}

// changeLink is the address of change n in the entry's history.
func (s *Service) changeLink(slug string, n int64) string {
	return fmt.Sprintf("%s/s/%s/history#ch-%d", s.base, url.PathEscape(slug), n)
}

// disputeLink is the address of an entry's dispute on its Checks tab.
func (s *Service) disputeLink(slug string, n int64) string {
	return fmt.Sprintf("%s/s/%s/checks#dispute-%d", s.base, url.PathEscape(slug), n)
}

// entryName is how e-mails and the Followed page name an entry: its listed title, or
// its name, as one line of plain text.
func entryName(e store.Entry) string {
	if t := plainLine(e.Title, 120); t != "" {
		return t
	}
	if n := plainLine(e.Name, 120); n != "" {
		return n
	}
	return e.Slug
}

// plainLine is s as one line of visible text of at most max runes: control, format
// (bidi, zero-width), private-use and unassigned characters dropped, runs of spaces
// collapsed. The listing's names are third-party text; templates escape it besides.
func plainLine(s string, max int) string {
	var b strings.Builder
	n, space := 0, false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if r == utf8.RuneError || unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Co, r) ||
			unicode.Is(unicode.Cs, r) || (!unicode.IsPrint(r) && !unicode.IsSpace(r)) {
			continue
		}
		if n >= max {
			b.WriteString("…")
			break
		}
		if space {
			b.WriteByte(' ')
			n++
			space = false
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}
