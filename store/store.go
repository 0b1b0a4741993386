// Package store persists Probity's entries, rounds, changes, supply runs, the ledger of
// their signed records, tool surfaces, due times and uptime, on PostgreSQL (pgx/v5,
// pgxpool, raw SQL) for production and several workers, or on an embedded SQLite file
// (modernc.org/sqlite, pure Go) as the default that needs no setup.
//
// Both backends implement one interface, Store, and pass one contract test suite
// (contract_test.go). Driver types (pgx.Tx, *sql.Tx) never leave this package; the River
// job queue, which needs the driver, is built here too (NewQueue) and handed out behind
// the Queue interface. Consumers declare the part of Store they use (rounds.Store,
// web.Store, mcpserver.Store, history.Store, history.StatsStore, export.Ledger,
// claims.Store).
//
// # Layout
//
// The SQL is written once. dialect.go is the dialect-neutral layer: a query is written
// with ? placeholders and run through a querier (pgx on PostgreSQL, database/sql on
// SQLite) that binds them in the backend's spelling; a dialect says how a time, a day,
// "no limit" and a case-insensitive match are spelled; timeCol scans either backend's
// time column. On it, sql_entries.go, sql_rounds.go, sql_history.go, sql_supply.go,
// sql_ledger.go and directory.go hold the queries and their scans (one per table), and
// sql_writes.go and migrate.go the write statements and the migration bookkeeping both
// backends run. Both backends embed sqlStore, which holds those methods.
//
// A backend's own files (pg_*.go, sqlite_*.go) keep only what must differ, each with
// its reason: the transactions that write (PostgreSQL locks the entry's row and sends
// pipelined batches, whose round trips were measured; SQLite runs one IMMEDIATE
// transaction on its single writer, through a statement cache), EntryDigest and
// Directory on PostgreSQL (one batch, one round trip, instead of a query per part),
// advisory locks, where the ledger's sequencing step runs and how it holds the counter,
// the SQL one engine lacks (LATERAL, ILIKE, greatest, FOR NO KEY UPDATE), and opening,
// closing and migrating.
//
// # Contract
//
//   - Every method is safe for concurrent use by many goroutines and, on PostgreSQL, by
//     many processes.
//   - SaveRound is the only way a round enters the store. It writes the round, its
//     tool surface (content-addressed by surface fingerprint), its ledger record (when
//     signed), the day's uptime and the entry's new due times in one transaction: after
//     a crash either all of it is there or none of it. A round is marked signed exactly
//     when it references its ledger record.
//   - A round is identified by (entry, due time). A second SaveRound for the same pair
//     returns ErrRoundDone and changes nothing, so a restarted worker can never store or
//     publish an entry twice for the same due time.
//   - Every signed record (a round's, a change's, a supply run's envelope) is a row of
//     one append-only table, the ledger (ledger.go); rounds, changes and supply runs
//     reference their record. The method that stores the round, change or run stores
//     its record in the same transaction, and returns once the record has its sequence
//     number (on PostgreSQL, should the numbering fail after the commit, the write still
//     succeeded: the record stays pending until the next step). See "The ledger" below.
//   - Records are immutable: no method changes one, and the schema refuses every
//     update but the one that gives a record its sequence number.
//     They are deleted only with their entry (DeleteEntry deletes the entry's whole
//     history), and that deletion is itself recorded, in a tombstone. Tool surfaces are
//     shared between entries and are kept.
//   - What is kept: an entry's rounds, changes, supply runs and uptime days, all of
//     them, for as long as the entry exists. Seed 004's "the last ten results" is what
//     the pages show (MaxSupplyRuns), not what is kept.
//   - Times are stored with millisecond precision in UTC and come back in UTC.
//   - Callers never hold a transaction: no method takes or returns one, so no transaction
//     can span network I/O.
//   - An entry's derived facts that the directory filters and sorts on (the newest
//     round's uptime class, the newest signed round's findings, tool count and protocol
//     version, the 30-day uptime, the last change) are columns of its row, each owned by
//     one trigger of migration 0010 that recomputes it in the transaction that writes a
//     round, an uptime day or a change (directory.go). No store code writes them.
//
// # The ledger
//
// A record has an identity (id), given when it is stored, which rounds, changes and
// supply runs reference, and a sequence number (seq), its position: 1, 2, … with no
// gaps, the index it will have in the transparency log. The number is given after the
// record is stored, as a log sequencer does:
//
//   - A writer (SaveRound, SaveHistory, SaveSupply) stores its record pending (seq
//     NULL) in its own transaction, without touching the counter, so writers of
//     different entries commit side by side.
//   - Then a sequencing step numbers every committed pending record, in id order, in one
//     short transaction: it locks the counter (ledger_counter), numbers the pending
//     records from the counter's next number on, moves the counter past them, and
//     commits. Steps run one after the other on the counter's lock, each numbering the
//     records committed before it, so a step numbers a batch of many writers' records
//     at once. A writer runs a step after its commit and returns once its record is
//     numbered; if another writer's step has numbered it already, it takes no lock.
//   - A writer that stops between its commit and its step leaves its record pending:
//     the next step, any writer's, numbers it, and so do Open and Migrate. So does one
//     whose step fails twice (a dropped connection, a timeout): the write committed, so
//     it returns success, with a warning in the log, rather than an error that would
//     have the caller retry what is stored.
//
// Hence:
//
//   - numbers are gap-free: every number 1..n is used exactly once, by a record or a
//     tombstone (a rolled-back step gives its numbers back);
//   - numbers follow the order in which they are committed: a step commits its run of
//     numbers at once, after the run before it, so a reader never sees number n+1 without
//     n (but for the records removed with their entry, which a tombstone lists);
//   - readers that walk the ledger by number (Ledger, Envelopes, and so the export) see
//     numbered records only; a pending record is signed all the same (its round, change
//     or run references it) and is walked once numbered, normally before its writer
//     has returned.
//
// Numbers follow commit order, not store order: of two records stored at once, the
// one committed first is numbered first, or both in one step in id order.
//
// On PostgreSQL the step is one pipelined batch in an implicit transaction (lock,
// number, count, commit: one round trip), and the counter's lock is held for that step
// only, never across another write's transaction or commit. On SQLite, whose single
// writer already serializes write transactions, the step runs inside the writer's own
// transaction, so a record is numbered when it commits and is never left pending.
//
// The schema enforces the numbering: a record is inserted pending; the only update of a
// record sets seq, once, to one of the counter's next numbers; the counter moves only
// forward, past numbers all used; and on PostgreSQL, at commit, no number given is
// beyond the counter.
//
// Nothing deletes a record but DeleteEntry, which in one transaction locks the entry,
// then the counter (the order every writer takes them), numbers the pending records,
// writes a tombstone (the counter's next number, the entry, the reason, and the number,
// kind and payload digest of each record that goes) and then deletes the entry; the
// schema refuses the deletion of a record whose entry still exists or whose removal no
// tombstone lists, and refuses every change to a tombstone.
package store

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"

	"github.com/probity-dev/probity/attest"
)

// Errors callers branch on.
var (
	// ErrNotFound is returned when the entry, run or surface asked for does not exist.
	ErrNotFound = errors.New("not found")
	// ErrRoundDone is returned by StartAttempt and SaveRound when a round for the same
	// entry and due time is already stored.
	ErrRoundDone = errors.New("round already stored for this entry and due time")
	// ErrConflict is returned by SaveHistory when another process updated the entry's
	// history since the update was computed.
	ErrConflict = errors.New("history was updated concurrently")
)

// Entry kinds, as in attest.TargetKinds.
const (
	KindRemote = "remote" // a remote MCP endpoint, probed over HTTP
	KindNPM    = "npm"    // an npm package
	KindPyPI   = "pypi"   // a PyPI package
	KindGitHub = "github" // a GitHub repository with an MCP bundle manifest
)

// MaxSupplyRuns is how many of an entry's newest supply runs the pages show (seed 004:
// "the last ten results"). It is a display rule: every run is kept, with its signed
// record, for as long as the entry exists.
const MaxSupplyRuns = 10

// DueReason says why a round is due.
type DueReason string

// The reasons a round can be due. Each entry has at most one due time per reason.
const (
	ReasonCadence DueReason = "cadence" // the entry's regular cadence
	ReasonConfirm DueReason = "confirm" // a confirmation re-fetch after a difference
	ReasonStatus  DueReason = "status"  // the daily status check of a remote entry
	ReasonManual  DueReason = "manual"  // a `probity round` run, or a maintainer's "Re-check now"
	ReasonSupply  DueReason = "supply"  // the weekly supply-chain checks
)

// UptimeClass is what one round says about whether the endpoint answered.
type UptimeClass string

// The classes of a round for uptime (see Round.Uptime).
const (
	UptimeAnswered     UptimeClass = "answered"     // it connected (a 401 challenge is an answer)
	UptimeNoAnswer     UptimeClass = "no_answer"    // DNS, connect, timeout, TLS, or 5xx on the handshake
	UptimeInconclusive UptimeClass = "inconclusive" // e.g. rate limited or blocked by the egress guard
)

// Daily uptime statuses.
const (
	DayOnline     = "online"      // every round that UTC day connected
	DayOffline    = "offline"     // a round that day found no answer
	DayNotCounted = "not_counted" // only inconclusive rounds that day
)

// Entry is one directory entry.
type Entry struct {
	ID   int64
	Slug string // stable, unique, URL-safe: [a-z0-9][a-z0-9-]*
	Kind string
	// Locator identifies the entry uniquely within its kind: the normalized URL of a
	// remote endpoint, the purl without version of a package (pkg:npm/%40scope/name,
	// pkg:pypi/name), or the repository URL of a GitHub entry (https://github.com/o/r).
	Locator string
	Name    string // display name
	Source  string // where the entry came from: "import", "registry"
	// ServerName is the registry's server name ("" for an entry from a bare
	// reference); Title the listed title. The rest of the listing, and the entry's
	// parts, are read with EntryListing (servers.go).
	ServerName string
	Title      string
	// Listed is false for a server whose listing is deprecated or deleted: it keeps
	// its history but is left out of the directory and the schedule.
	Listed bool
	// Parent is, for a server's second and later remote, the server's entry (0 for a
	// server's own entry): such a remote is probed as any remote, with its own rounds
	// and history, and shown on its server's page, not in the directory (servers.go).
	Parent  int64
	Claimed bool
	// VerifiedWithdrawn says an operator withdrew the entry's Verified (a withdrawal/v1
	// record, migration 0021): no supply run makes it Verified until a restored record.
	VerifiedWithdrawn bool
	// Cadence overrides the default cadence; 0 means the default for its claimed state.
	Cadence   time.Duration
	CreatedAt time.Time

	// LastRoundAt is the start of the newest stored round (zero when none).
	LastRoundAt time.Time
	// LastSurface is the surface fingerprint of the newest round that had one ("" when none).
	LastSurface string
	// UptimeOnlineDays and UptimeCountedDays give the entry's uptime rate: online days
	// divided by counted days (online + offline).
	UptimeOnlineDays  int
	UptimeCountedDays int
	// Uptime30OnlineDays and Uptime30CountedDays are the same over the 30 UTC days up to
	// and including DirectoryQuery.UptimeTo (today by default): the directory's uptime,
	// read by Directory and EntryDigest (up to today); zero from the other reads.
	Uptime30OnlineDays  int
	Uptime30CountedDays int
	// LastChangeAt is when the newest visible change that is not a baseline was
	// recorded (zero when none): the directory's "last change". Baselines are not
	// changes. Read by Directory and EntryDigest; zero from the other reads.
	LastChangeAt time.Time
}

// NewEntry is an entry to add.
type NewEntry struct {
	// SlugBase is the wanted slug; when another entry holds it, AddEntry appends -2, -3, …
	SlugBase string
	Kind     string
	Locator  string
	Name     string
	Source   string
	// Cadence overrides the default cadence (0: the default). A new entry is never
	// claimed: only a claim makes it so (the claims trigger owns entries.claimed).
	Cadence time.Duration
	// Due are the entry's first due times (e.g. a jittered first cadence round and the
	// daily status check).
	Due []Due
}

// Due is the next time a round of an entry is due for a reason.
type Due struct {
	EntryID int64
	Reason  DueReason
	At      time.Time
}

// DueUpdate sets (At non-zero) or clears (At zero) an entry's due time for Reason.
type DueUpdate struct {
	Reason DueReason
	At     time.Time
}

// Round is one probe of one entry at one due time, with everything derived from it.
type Round struct {
	EntryID int64
	DueAt   time.Time
	Reason  DueReason
	// RoundID is the statement's roundId (attest's pattern ^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$).
	RoundID    string
	StartedAt  time.Time
	FinishedAt time.Time

	// Coverage is "full" or "auth_required" for a signed round, "" for an unsigned one.
	Coverage string
	// UnsignedReason says in a word why an unsigned round was not signed
	// ("no_handshake", "no_tools", "blocked", "not_probed"); "" when signed.
	UnsignedReason string
	// Reach is checks.ReachFailure ("" when the endpoint answered); HTTPStatus the first
	// response's status; Stop the probe's early-stop reason.
	Reach      string
	HTTPStatus int
	Stop       string
	Uptime     UptimeClass
	RetryAfter time.Duration

	ProtocolVersion string
	// HandshakeMethod is the handshake that completed ("server/discover" or
	// "initialize"; "" when none did); ProposedVersion the protocol version Probity
	// proposed on the last handshake path it tried.
	HandshakeMethod string
	ProposedVersion string
	ServerName      string
	ServerVersion   string
	ToolCount       int
	Pages           int
	// Login is what the round saw of a login challenge.
	Login Login
	// Fingerprints are set when the tool list was complete and fingerprinted.
	Fingerprints *attest.Fingerprints
	// Surface is the canonical tools document whose fingerprint is Fingerprints.Surface
	// (stored once per distinct surface); nil when there are no fingerprints.
	Surface []byte
	// Instructions is the server's instructions as a canonical JSON string (`""` when it
	// sent none), whose digest is Fingerprints.Instructions; stored content-addressed
	// beside the surfaces, and readable with Surface(Fingerprints.Instructions). Optional.
	Instructions []byte

	// Results is the JSON array of the round's check results, evidence included.
	Results []byte
	// Timings is the JSON of the probe's attest.Timings.
	Timings []byte

	// Envelope is the DSSE envelope JSON of a signed round; nil when unsigned. KeyID is
	// the signing key's id and PayloadDigest the hex SHA-256 of the signed payload.
	Envelope      []byte
	KeyID         string
	PayloadDigest string

	// Due are the entry's due-time changes, applied in the same transaction.
	Due []DueUpdate
}

// Signed reports whether the round carries an envelope.
func (r *Round) Signed() bool { return r.Envelope != nil }

// RoundSummary is a stored round without its large columns.
type RoundSummary struct {
	// ID is the round's id in the store (what changes name as BeforeRound and
	// AfterRound); RoundID is its public id, the statement's roundId.
	ID              int64
	EntryID         int64
	DueAt           time.Time
	Reason          DueReason
	RoundID         string
	StartedAt       time.Time
	FinishedAt      time.Time
	Coverage        string
	Signed          bool
	UnsignedReason  string
	Reach           string
	HTTPStatus      int
	Uptime          UptimeClass
	ProtocolVersion string
	HandshakeMethod string // "" also for rounds stored before it was recorded
	ProposedVersion string
	ServerName      string
	ServerVersion   string
	ToolCount       int
	Pages           int
	// Failed and ObservedRisk count the round's check results by status (FAILED,
	// OBSERVED_RISK): its findings. Both are 0 for a round without check results.
	Failed       int
	ObservedRisk int
	// Login is nil for rounds stored before login facts were recorded (migration 0005).
	Login         *Login
	Fingerprints  *attest.Fingerprints
	KeyID         string
	PayloadDigest string
}

// Login is what a round saw of a login challenge (HTTP 401), as seed 003's login table
// counts it. The zero value is a round without a 401.
type Login struct {
	// Unauthorized is where the probe was first answered 401: LoginAtHandshake,
	// LoginAtToolsList, LoginAtToolsCall (only the call of the nonexistent tool),
	// LoginAtOther, or "" for no 401.
	Unauthorized string
	// Challenge is what the 401s' WWW-Authenticate headers held: ChallengeWithMetadata,
	// ChallengeWithoutMetadata, ChallengeUnparseable or ChallengeNone; "" without a 401.
	Challenge string
	// Metadata is the auth_metadata check's reason key for a round with a 401
	// ("metadata_consistent", "scope_contradiction", "metadata_unreachable", …); "" without.
	Metadata string
}

// The places a 401 can come first (Login.Unauthorized).
const (
	LoginAtHandshake = "handshake"
	LoginAtToolsList = "tools_list"
	LoginAtToolsCall = "tools_call"
	LoginAtOther     = "other"
)

// What the 401s' challenges held (Login.Challenge).
const (
	ChallengeWithMetadata    = "with_metadata"    // a challenge names an RFC 9728 resource_metadata URL
	ChallengeWithoutMetadata = "without_metadata" // challenges, none with a metadata URL
	ChallengeUnparseable     = "unparseable"      // WWW-Authenticate headers that did not parse
	ChallengeNone            = "none"             // no WWW-Authenticate header
)

// UptimeDay is one entry's uptime on one UTC day.
type UptimeDay struct {
	Day          string // YYYY-MM-DD (UTC)
	Answered     int
	NoAnswer     int
	Inconclusive int
	Status       string // DayOnline, DayOffline or DayNotCounted
}

// Run is one `probity round` run over every entry. A run that was interrupted is
// resumed by the next `probity round`, with the same id and due time, so entries it
// already stored are not probed again.
type Run struct {
	ID         string
	DueAt      time.Time
	StartedAt  time.Time
	FinishedAt time.Time // zero while unfinished
}

// EnvelopeRecord is one stored round envelope with where it belongs.
type EnvelopeRecord struct {
	Seq       int64 // the record's sequence number in the ledger
	Round     int64 // the round's id (RoundSummary.ID)
	EntrySlug string
	RoundID   string
	StartedAt time.Time
	KeyID     string
	Envelope  []byte
}

// EnvelopeFilter selects round envelopes (Envelopes) and exported records (export.Write:
// stored at or after Since); zero fields select everything.
type EnvelopeFilter struct {
	Since     time.Time // rounds started at or after Since
	EntrySlug string
}

// ChangeRecord is one recorded change of an entry's history.
type ChangeRecord struct {
	EntryID   int64
	EntrySlug string // filled on reads
	// Number is the change's stable per-entry number (1, 2, …), for #ch-N links.
	Number     int64
	RecordedAt time.Time
	Origin     string // "automatic" or "operator"
	Kind       string // "baseline", "tools", "version", "operator_edit"
	Summary    string // one line, no server text
	// Details is the JSON of the full change (tools added and removed, descriptions
	// before and after, …); it may hold server text and must be escaped when shown.
	Details []byte
	Badges  []string
	// BeforeRound and AfterRound are the ids of the rounds compared (0: none).
	BeforeRound  int64
	AfterRound   int64
	Hidden       bool
	HiddenReason string
	// Envelope is the signed change statement (DSSE JSON) and KeyID its key, both or
	// neither. PayloadDigest is the hex SHA-256 of its payload: SaveHistory computes it
	// (one given must match), reads return it.
	Envelope      []byte
	KeyID         string
	PayloadDigest string
}

// HistoryUpdate is the result of processing an entry's new rounds, stored in one
// transaction by SaveHistory.
type HistoryUpdate struct {
	EntryID int64
	// ExpectProcessed is the processed round id the update was computed from;
	// SaveHistory fails with ErrConflict when the stored one differs (another process
	// got there first), and changes nothing.
	ExpectProcessed int64
	// Processed is the id of the last round the update has taken into account.
	Processed int64
	// State is the history state after the update (opaque to the store).
	State []byte
	// Changes are new changes to insert; their Numbers must be the next free ones.
	Changes []ChangeRecord
	// Due, when set, are due-time changes of the entry (e.g. a confirmation re-fetch).
	Due []DueUpdate
	// Listing, when set, is a maintainer's listing edit, stored with its changes (the
	// operator edits of the changed fields) in the same transaction; ErrConflict when
	// the stored listing's revision is not Listing.ExpectRevision.
	Listing *ListingUpdate
}

// ChangeFilter selects changes; the zero value selects every visible change.
type ChangeFilter struct {
	EntryID int64 // 0: every entry
	// BeforeNumber pages an entry's changes: only numbers below it (0: no bound).
	BeforeNumber  int64
	Since         time.Time // only changes recorded at or after Since
	IncludeHidden bool
	// WithoutEnvelopes leaves the changes' Envelope nil: pages and feeds that show
	// changes do not read their signed records.
	WithoutEnvelopes bool
	Limit            int // ≤ 0: no limit
}

// SupplyRecord is one run of the supply-chain checks of an entry (seed 004).
type SupplyRecord struct {
	ID      int64 // assigned by SaveSupply
	EntryID int64
	RanAt   time.Time
	// Score is 0–100; Verified the badge decision.
	Score    int
	Verified bool
	// LatestVersion is the package version the run read ("" for remote entries).
	LatestVersion string
	// Facts is the JSON of what the sources found (checks/supply.Facts), Verdict the
	// JSON of the results with their evidence and links (checks/supply.Verdict). Both
	// may hold third-party text and must be escaped when shown.
	Facts   []byte
	Verdict []byte
	// Envelope is the signed supply statement (DSSE JSON) and KeyID its key, both or
	// neither. PayloadDigest is the hex SHA-256 of its payload: SaveSupply computes it
	// (one given must match), reads return it.
	Envelope      []byte
	KeyID         string
	PayloadDigest string
}

// EntryQuery says what EntryDigest reads besides the entry and its newest round and
// supply run.
type EntryQuery struct {
	// Changes is how many of the entry's newest visible changes to read (≤ 0: none).
	Changes int
	// UptimeFrom and UptimeTo are the uptime days to read (YYYY-MM-DD, inclusive); both
	// empty: none.
	UptimeFrom, UptimeTo string
}

// ToolsReadRounds is how many of an entry's newest rounds EntryDigest looks through for
// the last one that read a whole tool list: the bound keeps the page's cost fixed for an
// entry whose server stopped answering long ago.
const ToolsReadRounds = 50

// EntryDigest is what one entry's pages show, read in one call: on PostgreSQL in one
// round trip.
type EntryDigest struct {
	Entry Entry
	Round *RoundSummary // the newest round; nil when none
	// SignedRound is the newest signed round, however many unsigned rounds came after
	// it (the same round as Round when the newest round is signed); nil when no round
	// is signed. It is the round whose findings the directory counts (entries'
	// signed_round_id, kept with those facts by migration 0014's trigger).
	SignedRound *RoundSummary
	// Supply is the newest supply run (nil when none) without its documents: Facts,
	// Verdict and Envelope are nil, SupplyRuns reads them. SupplySigned says whether it
	// has an envelope.
	Supply       *SupplyRecord
	SupplySigned bool
	// ToolsReadAt is when the newest of the entry's last ToolsReadRounds rounds that read
	// a whole tool list (one with fingerprints) started; zero when none of them did.
	ToolsReadAt time.Time
	// Changes are the newest visible changes, newest first (EntryQuery.Changes), without
	// their envelopes (Envelope is nil; Change and Changes read them).
	Changes []ChangeRecord
	// Uptime are the days asked for, oldest first.
	Uptime []UptimeDay
	// Listing and Parts are the entry's listing and linked parts (EntryListing).
	Listing Listing
	Parts   []Part
	// Remotes are the listed entries of the server's second and later remotes
	// (Entry.Parent), oldest first; Server is, for such a remote, its server's entry
	// (nil otherwise).
	Remotes []Entry
	Server  *Entry
}

// Stats counts what the store holds.
type Stats struct {
	Entries   int64
	Rounds    int64
	Signed    int64
	Envelopes int64
	Surfaces  int64
	// Bytes is the size of the database on disk (SQLite: page_count × page_size;
	// PostgreSQL: pg_database_size).
	Bytes int64
}

// Store is Probity's persistence. See the package documentation for the contract.
type Store interface {
	// Backend names the backend: "postgres" or "sqlite".
	Backend() string
	// Migrate applies Probity's migrations and River's, idempotently. Open does not
	// migrate; `probity migrate` and the service call Migrate.
	Migrate(ctx context.Context) error
	Close() error

	// AddEntry adds an entry, or returns the existing one with the same Kind and
	// Locator unchanged (created false). The slug is SlugBase, or SlugBase-N for the
	// smallest N ≥ 2 that is free; it never changes afterwards.
	AddEntry(ctx context.Context, e NewEntry) (entry Entry, created bool, err error)
	// UpsertServer adds a server as an entry with its parts (servers.go), or updates
	// the entry that has its server name or, failing that, holds its primary part:
	// its listing and its parts (parts no longer listed are unlinked; the primary part,
	// the entry's Kind and Locator, may change), never its slug, history or schedule.
	// A part another entry holds stays there and is reported in Conflicts. An entry
	// whose listing status is deprecated or deleted is unlisted; active lists it again.
	UpsertServer(ctx context.Context, s ServerUpsert) (UpsertResult, error)
	// EntryListing returns an entry's listing and parts, the primary part first;
	// ErrNotFound when there is no such entry.
	EntryListing(ctx context.Context, entryID int64) (Listing, []Part, error)
	// Listings returns the servers matching q (entries with a server name), in
	// server-name order, each with its listing and parts.
	Listings(ctx context.Context, q ListingQuery) ([]ServerListing, error)
	// RegistrySyncState returns the sync state of the registry at baseURL (the zero
	// state with BaseURL set when none is stored).
	RegistrySyncState(ctx context.Context, baseURL string) (RegistrySync, error)
	// SaveRegistrySync stores a registry's sync state.
	SaveRegistrySync(ctx context.Context, s RegistrySync) error
	// HTTPCache returns the kept response with the key, or ErrNotFound.
	HTTPCache(ctx context.Context, key string) (HTTPCacheEntry, error)
	// PutHTTPCache keeps a response, replacing the one with the same key; a body
	// larger than MaxHTTPCacheBody is refused.
	PutHTTPCache(ctx context.Context, e HTTPCacheEntry) error
	// PruneHTTPCache deletes the kept responses stored before before (none has been
	// revalidated since), and returns how many.
	PruneHTTPCache(ctx context.Context, before time.Time) (int64, error)
	// Entry returns the entry with the slug, or ErrNotFound.
	Entry(ctx context.Context, slug string) (Entry, error)
	// EntryDigest returns the entry with the slug (or ErrNotFound), its newest round, its
	// newest signed round and its newest supply run, and the changes and uptime days q
	// asks for: what Entry, Rounds(1), SupplyRuns(1), Changes and UptimeDays return,
	// read together.
	EntryDigest(ctx context.Context, slug string, q EntryQuery) (EntryDigest, error)
	// Directory returns a page of the directory: the entries matching q, in q's order,
	// each with its newest round's and supply run's state and the Verified rule
	// (IsVerified), searched, filtered, sorted and paged in one query (directory.go).
	Directory(ctx context.Context, q DirectoryQuery) (DirectoryPage, error)
	// EntryByID returns the entry with the id, or ErrNotFound.
	EntryByID(ctx context.Context, id int64) (Entry, error)
	// Entries returns every entry ordered by id, after afterID, at most limit (≤ 0: all).
	Entries(ctx context.Context, afterID int64, limit int) ([]Entry, error)
	// DeleteEntry deletes an entry with its whole history (seed 000): rounds, changes,
	// supply runs, their ledger records, uptime and due times. In the same transaction
	// it records the deletion in a tombstone with reason (one line, at most 200
	// characters) and the sequence numbers removed. ErrNotFound when there is no such
	// entry.
	DeleteEntry(ctx context.Context, slug, reason string) error

	// DueBefore returns the due times at or before t of listed entries, earliest
	// first, at most limit.
	DueBefore(ctx context.Context, t time.Time, limit int) ([]Due, error)
	// SetDue sets (At non-zero) or clears (At zero) one due time of an entry.
	SetDue(ctx context.Context, entryID int64, u DueUpdate) error
	// DueTimes returns an entry's due times.
	DueTimes(ctx context.Context, entryID int64) ([]Due, error)

	// StartAttempt records, in its own committed transaction, that a probe of the
	// entry for dueAt is about to start, and returns its attempt number (1 for the
	// first). It returns ErrRoundDone when the round is already stored, and
	// ErrNotFound when the entry does not exist.
	StartAttempt(ctx context.Context, entryID int64, dueAt time.Time, at time.Time) (int, error)
	// Attempts returns how many attempts were recorded for the entry and due time.
	Attempts(ctx context.Context, entryID int64, dueAt time.Time) (int, error)
	// SaveRound stores a round in one transaction (see the package documentation)
	// and returns its round id. ErrRoundDone: already stored, nothing changed.
	SaveRound(ctx context.Context, r *Round) (int64, error)
	// Rounds returns an entry's newest rounds, newest first, at most limit.
	Rounds(ctx context.Context, entryID int64, limit int) ([]RoundSummary, error)
	// RoundResults returns the stored results JSON of a round, by round id.
	RoundResults(ctx context.Context, roundID int64) ([]byte, error)
	// PutSurface stores a content-addressed document (a canonical tools document read
	// outside a round, e.g. from an MCP bundle manifest) under its fingerprint, which
	// must be attest.Digest(doc); storing one that exists is a no-op.
	PutSurface(ctx context.Context, fingerprint string, doc []byte) error
	// Surface returns the content-addressed document with the fingerprint: a canonical
	// tools document (surface fingerprint) or instructions string (instructions
	// fingerprint).
	Surface(ctx context.Context, fingerprint string) ([]byte, error)

	// RoundsAfter returns an entry's rounds with round id above afterID, oldest
	// first (by id), at most limit.
	RoundsAfter(ctx context.Context, entryID, afterID int64, limit int) ([]RoundSummary, error)

	// WalkRounds calls fn for every stored round started at or after since, ordered by
	// entry id then round id, streaming (for statistics over the whole store). fn's
	// error stops the walk and is returned.
	WalkRounds(ctx context.Context, since time.Time, fn func(RoundSummary) error) error
	// WalkUptime calls fn for every uptime day from..to inclusive, ordered by entry id then
	// day, streaming.
	WalkUptime(ctx context.Context, from, to string, fn func(entryID int64, d UptimeDay) error) error

	// HistoryState returns an entry's history state and the last round id it has
	// processed; (nil, 0, nil) when none is stored yet.
	HistoryState(ctx context.Context, entryID int64) (state []byte, processed int64, err error)
	// SaveHistory stores a HistoryUpdate in one transaction: the state, the processed
	// id, the new changes and the due updates, or nothing (ErrConflict, ErrNotFound, or
	// a numbering error when a change's number is not the next free one).
	SaveHistory(ctx context.Context, u HistoryUpdate) error
	// Changes returns changes matching f, newest first (by recorded time, then entry and
	// number).
	Changes(ctx context.Context, f ChangeFilter) ([]ChangeRecord, error)
	// Change returns one change of an entry by number (hidden ones too), or ErrNotFound.
	Change(ctx context.Context, entryID, number int64) (ChangeRecord, error)
	// HideChange hides (hidden true) or shows again a change, with a reason; hidden
	// changes are left out of Changes unless asked for.
	HideChange(ctx context.Context, entryID, number int64, hidden bool, reason string) error

	// SaveSupply stores a supply run, its ledger record when signed, and due updates
	// (e.g. the weekly re-run), in one transaction. Every run is kept (MaxSupplyRuns is
	// a display rule). It returns the run's id; ErrNotFound when the entry is gone.
	SaveSupply(ctx context.Context, r SupplyRecord, due []DueUpdate) (int64, error)
	// SupplyRuns returns an entry's stored supply runs, newest first, at most limit.
	SupplyRuns(ctx context.Context, entryID int64, limit int) ([]SupplyRecord, error)

	// UptimeDays returns the entry's days from..to inclusive (YYYY-MM-DD), oldest first.
	UptimeDays(ctx context.Context, entryID int64, from, to string) ([]UptimeDay, error)

	// UnfinishedRun returns the newest run not finished, or ErrNotFound.
	UnfinishedRun(ctx context.Context) (Run, error)
	// StartRun records a new run.
	StartRun(ctx context.Context, r Run) error
	// FinishRun marks a run finished.
	FinishRun(ctx context.Context, id string, at time.Time) error

	// Envelopes calls fn for each stored round envelope matching f, in ledger order.
	// fn's error stops the walk and is returned.
	Envelopes(ctx context.Context, f EnvelopeFilter, fn func(EnvelopeRecord) error) error
	// Ledger calls fn for each ledger record matching f, of every kind, in sequence
	// order, streaming; it ends at the newest record committed when it began. fn's
	// error stops the walk and is returned.
	Ledger(ctx context.Context, f LedgerFilter, fn func(LedgerRecord) error) error
	// Tombstones returns the tombstones with a sequence number above afterSeq, in
	// sequence order, each with the records it lists.
	Tombstones(ctx context.Context, afterSeq int64) ([]Tombstone, error)
	// Stats counts what the store holds.
	Stats(ctx context.Context) (Stats, error)

	// The transparency log (sql_log.go; see "The transparency log" above).

	// LogSources returns, for every number after afterSeq that is assigned, in order,
	// what its leaf is built from (a record, a tombstone, or a record a tombstone
	// removed), at most limit (≤ 0 or above 10,000: 10,000); it stops at the first
	// number not assigned yet.
	LogSources(ctx context.Context, afterSeq int64, limit int) ([]LogSource, error)
	// SetLogged sets log_index = seq-1 on the records and tombstones numbered through
	// throughSeq that have none yet. Idempotent.
	SetLogged(ctx context.Context, throughSeq int64) error
	// SaveCheckpoint stores a published checkpoint; storing a note twice is a no-op.
	SaveCheckpoint(ctx context.Context, c LogCheckpoint) error
	// CheckpointsAround returns the earliest stored checkpoint holding the leaf at
	// index that witnesses cosigned (when none did, the earliest holding it) and the
	// latest one before index (size ≤ index, > 0); nil when none.
	CheckpointsAround(ctx context.Context, index int64) (holding, before *LogCheckpoint, err error)
	// LatestCheckpoint returns the largest stored checkpoint, nil when none.
	LatestCheckpoint(ctx context.Context) (*LogCheckpoint, error)
	// SaveKeyDocumentVersion stores a signed key document version as a ledger record of
	// kind RecordKeys, as the other writers store theirs (same transaction, numbered
	// the same way), and returns its sequence number (0 while pending on PostgreSQL).
	// Saving a stored version again with the same envelope is a no-op returning its
	// number; with another envelope it fails with ErrKeyVersionConflict.
	SaveKeyDocumentVersion(ctx context.Context, v KeyDocumentVersion) (seq int64, err error)
	// KeyDocumentVersions returns every stored version, in version order.
	KeyDocumentVersions(ctx context.Context) ([]KeyDocumentVersion, error)
	// TryLogLock takes the log appender's lock if it is free (ok true), until release is
	// called or the process ends: on PostgreSQL a session advisory lock on a connection
	// of its own; on SQLite it always succeeds (the log's lock file decides).
	TryLogLock(ctx context.Context) (release func(), ok bool, err error)
	// LogLockHeld reports whether this process still holds the lock TryLogLock took: on
	// PostgreSQL the lock dies with its connection (a server restart, a network cut)
	// without a word, so the appender asks now and then; nil on SQLite.
	LogLockHeld(ctx context.Context) error

	// Webhooks (issue 17, sql_webhooks.go): an account's webhook URLs, their
	// deliveries and delivery log, and the planner's place in the changes.
	//
	// AddWebhook registers url for the account: ErrWebhookExists, ErrWebhookLimit
	// (MaxWebhooksPerAccount, which the schema enforces) or ErrNotFound (no account).
	AddWebhook(ctx context.Context, accountID int64, url string, now time.Time) (Webhook, error)
	// Webhooks returns the account's webhooks, oldest first.
	Webhooks(ctx context.Context, accountID int64) ([]Webhook, error)
	// Webhook returns the account's webhook id; ErrNotFound if it has none such.
	Webhook(ctx context.Context, accountID, id int64) (Webhook, error)
	// DeleteWebhook deletes the account's webhook id and its deliveries; ErrNotFound.
	DeleteWebhook(ctx context.Context, accountID, id int64) error
	// EnableWebhook enables the account's webhook id again with no failures counted.
	EnableWebhook(ctx context.Context, accountID, id int64) error
	// EnabledWebhooks pages through the enabled webhooks by id (limit ≤ 1000).
	EnabledWebhooks(ctx context.Context, afterID int64, limit int) ([]Webhook, error)
	// AddWebhookDeliveries stores pending deliveries, skipping stored message ids and
	// deleted webhooks; it returns how many it added.
	AddWebhookDeliveries(ctx context.Context, ds []WebhookDelivery) (int, error)
	// ClaimWebhookDeliveries holds up to limit due deliveries of enabled webhooks until
	// now+lease, each for one worker at a time.
	ClaimWebhookDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]WebhookClaim, error)
	// FinishWebhookAttempt records an attempt's outcome, counts or resets the webhook's
	// failures, disables it when told, and cuts its log to MaxWebhookLog rows.
	FinishWebhookAttempt(ctx context.Context, a WebhookAttempt) (Webhook, error)
	// WebhookDeliveries returns the delivery log of the account's webhook, newest first.
	WebhookDeliveries(ctx context.Context, accountID, id int64) ([]WebhookDelivery, error)
	// WebhookCursor returns the ledger number the webhook planner has planned through
	// (started false before its first run).
	WebhookCursor(ctx context.Context) (seq int64, started bool, err error)
	// WebhookChanges returns the changes numbered in (afterSeq, throughSeq], by number,
	// at most limit (1–1000), hidden ones and baselines included, without envelopes.
	WebhookChanges(ctx context.Context, afterSeq, throughSeq int64, limit int) ([]WebhookChange, error)
	// PlanWebhookDeliveries moves the planner's cursor from from to to and stores the
	// deliveries planned for the changes between, in one transaction (skipping stored
	// message ids and deleted webhooks); ErrWebhookCursorMoved when the cursor is not at
	// from (another planner moved it: nothing is stored). It returns the deliveries
	// added.
	PlanWebhookDeliveries(ctx context.Context, from, to int64, at time.Time, ds []WebhookDelivery) (int, error)

	// Accounts, sessions, sign-in codes and sign-in throttles (issue 17;
	// sql_accounts.go). Secrets arrive hashed: the store never sees a sign-in code, a
	// session token or a client key, only digests of them. Deleting an account deletes,
	// through ON DELETE CASCADE, every row that belongs to it.

	// EmailAccount returns the account with the e-mail key, creating it with email at
	// at when there is none (created true).
	EmailAccount(ctx context.Context, email, emailKey string, at time.Time) (a Account, created bool, err error)
	// GitHubAccount returns the account of the GitHub user id, creating it at at when
	// there is none (created true), and sets its login to login: a renamed user keeps
	// the account.
	GitHubAccount(ctx context.Context, githubID int64, login string, at time.Time) (a Account, created bool, err error)
	// SetAccountEmail sets an account's address (a GitHub account adds one, an account
	// changes its own); ErrAddressTaken when another account has the key, ErrNotFound
	// when there is no such account.
	SetAccountEmail(ctx context.Context, id int64, email, emailKey string) error
	// AccountByID returns the account with the id, or ErrNotFound.
	AccountByID(ctx context.Context, id int64) (Account, error)
	// DeleteAccount deletes the account and, through ON DELETE CASCADE, everything that
	// belongs to it; ErrNotFound when there is no such account.
	DeleteAccount(ctx context.Context, id int64) error
	// CreateSession stores a new session.
	CreateSession(ctx context.Context, r SessionRecord) error
	// SessionByHash returns the session with the id hash, unexpired at now, and its
	// account; ErrNotFound when there is none.
	SessionByHash(ctx context.Context, idHash []byte, now time.Time) (SessionRecord, Account, error)
	// RenewSession moves an unexpired session's renewal forward to renewedAt and its
	// end to expiresAt; a renewal older than the stored one changes nothing.
	RenewSession(ctx context.Context, idHash []byte, renewedAt, expiresAt time.Time) error
	// DeleteSession deletes the session with the id hash, if there is one.
	DeleteSession(ctx context.Context, idHash []byte) error
	// DeleteAccountSessions deletes every session of the account and returns how many.
	DeleteAccountSessions(ctx context.Context, accountID int64) (int64, error)
	// AddSignInCode stores a sign-in code with no try spent and returns its id.
	AddSignInCode(ctx context.Context, c SignInCode) (int64, error)
	// ClaimSignInCodeTry spends one try of every code of the address that is unexpired
	// at now and has a try left (MaxSignInCodeTries), in one statement, and returns
	// those codes for the caller to compare.
	ClaimSignInCodeTry(ctx context.Context, addressHash []byte, now time.Time) ([]SignInCode, error)
	// UseSignInCode deletes the code with the id and, when it did (used true: no
	// concurrent call did first), every other code of the address.
	UseSignInCode(ctx context.Context, addressHash []byte, id int64) (used bool, err error)
	// ForgetAddress deletes the sign-in codes and the address throttle of an address.
	ForgetAddress(ctx context.Context, addressHash []byte) error
	// TakeThrottle counts one request against a sliding-window limit and reports
	// whether it is allowed; a refused request is not counted.
	TakeThrottle(ctx context.Context, t ThrottleTake) (allowed bool, err error)
	// PruneSignIn deletes the sessions, sign-in codes and throttles expired at now and
	// returns how many.
	PruneSignIn(ctx context.Context, now time.Time) (int64, error)

	// Follows and change e-mails (sql_follows.go, issue 17; the rules are package
	// notify's).
	// Followers returns the accounts that follow the entry and since when, by
	// account id.
	Followers(ctx context.Context, entryID int64) ([]Follower, error)

	// Follow makes the account follow the entry from at (created false: it did
	// already). ErrFollowLimit at MaxFollows; ErrNotFound without such entry or account.
	Follow(ctx context.Context, accountID, entryID int64, at time.Time) (created bool, err error)
	// Unfollow ends a follow (removed false: there was none).
	Unfollow(ctx context.Context, accountID, entryID int64) (removed bool, err error)
	// FollowSince returns when the account began following the entry (zero: it does not).
	FollowSince(ctx context.Context, accountID, entryID int64) (time.Time, error)
	// Follows returns the followed entries, by name then slug.
	Follows(ctx context.Context, accountID int64) ([]FollowedEntry, error)
	// FollowedChanges returns the newest perEntry (1–20) visible changes of each
	// followed entry, newest first per entry, without envelopes.
	FollowedChanges(ctx context.Context, accountID int64, perEntry int) ([]ChangeRecord, error)
	// GoneFollows returns the account's followed entries that were deleted, oldest
	// first; UntoldGone those no e-mail told yet.
	GoneFollows(ctx context.Context, accountID int64) ([]GoneFollow, error)
	UntoldGone(ctx context.Context, accountID int64) ([]GoneFollow, error)
	// NotifySettings returns the account's e-mail settings (ErrNotFound: no account).
	NotifySettings(ctx context.Context, accountID int64) (NotifySettings, error)
	// SetNotifyMode sets the e-mail mode and returns the previous one; turning e-mails
	// on from off starts the next window at at (and at the highest ledger number).
	SetNotifyMode(ctx context.Context, accountID int64, mode string, at time.Time) (previous string, err error)
	// RestoreNotifyMode is the undo of turning e-mails off: from off back to mode,
	// with the window where it was (as if e-mails had never been off).
	RestoreNotifyMode(ctx context.Context, accountID int64, mode string, at time.Time) (previous string, err error)
	// NotifyRecipient returns the account's e-mail address ("" when it has none).
	NotifyRecipient(ctx context.Context, accountID int64) (string, error)
	// LedgerNumbered returns the highest ledger number given: the planners' cursor
	// (numbers follow commit order; every record at or below it is visible).
	LedgerNumbered(ctx context.Context) (int64, error)
	// NotifyChanges calls fn with the visible non-baseline changes r selects (by ledger
	// number and recorded time; of an account's followed entries, recorded after the
	// follow began), one entry's at a time, by entry and then number, paging through
	// them all.
	NotifyChanges(ctx context.Context, r NotifyRange, fn func(entry []NotifyChange) error) error
	// PlanEmails writes the outbox rows of a plan and moves the planned accounts'
	// last e-mail and covered window, in one transaction, one plan at a time; it
	// returns the rows written.
	PlanEmails(ctx context.Context, p EmailPlan) (int, error)
	// ClaimEmail claims the outbox row due first (a pending one, or a sending one
	// whose lease ran out) until now + lease; ok false when none is due.
	ClaimEmail(ctx context.Context, now time.Time, lease time.Duration) (e OutboxEmail, ok bool, err error)
	// FinishEmail stores what became of a claimed e-mail, with the deleted followed
	// entries it told, in one transaction; ErrLeaseLost when the claim was overtaken.
	FinishEmail(ctx context.Context, o EmailOutcome) error
	// OutboxEmails returns the account's newest outbox rows (failedOnly: failed ones),
	// at most limit (1–100); OutboxEmail one row by id.
	OutboxEmails(ctx context.Context, accountID int64, failedOnly bool, limit int) ([]OutboxEmail, error)
	OutboxEmail(ctx context.Context, id int64) (OutboxEmail, error)
	// PruneNotify deletes finished outbox rows created, and deleted followed entries
	// told, before before, and deleted followed entries never told that were deleted
	// before untoldBefore; it returns how many rows went.
	PruneNotify(ctx context.Context, before, untoldBefore time.Time) (int64, error)

	// Claims (issue 18; sql_claims.go): the tokens an account publishes to prove
	// control of a part of an entry, and its claims. entries.claimed is true exactly
	// while the entry has a live claim (migration 0016's trigger owns it); deleting an
	// account or an entry deletes their tokens and claims.

	// AddClaimToken stores a new token (hashed) and returns its id; ErrClaimTokenLimit
	// at MaxLiveClaimTokens live tokens of the account; ErrNotFound without such
	// account or entry.
	AddClaimToken(ctx context.Context, t ClaimToken) (int64, error)
	// ClaimToken returns the token with the hash, or ErrNotFound.
	ClaimToken(ctx context.Context, tokenHash []byte) (ClaimToken, error)
	// ProveClaim uses the token of a successful proof and makes (or makes live again)
	// the claim of its account, entry, method and part, in one transaction.
	// ErrNotFound for an unknown token or another account's; ErrClaimTokenUsed;
	// ErrClaimTokenExpired.
	ProveClaim(ctx context.Context, p ClaimProof) (Claim, error)
	// Claims returns the entry's claims, live and lapsed, by id; AccountClaims the
	// account's.
	Claims(ctx context.Context, entryID int64) ([]Claim, error)
	AccountClaims(ctx context.Context, accountID int64) ([]Claim, error)
	// ClaimsDue returns the live claims due for a re-check at now, the most overdue
	// first, at most limit.
	ClaimsDue(ctx context.Context, now time.Time, limit int) ([]Claim, error)
	// RecheckClaim records a re-check of a live claim (proven again, no answer, the
	// proof gone, or lapsed); ErrNotFound without such live claim.
	RecheckClaim(ctx context.Context, id int64, r ClaimRecheck) (Claim, error)
	// MaintainsEntry reports whether the account holds a live claim on the entry on a
	// part the entry's claims count now (package claims' rule), in one query.
	MaintainsEntry(ctx context.Context, accountID, entryID int64) (bool, error)
	// PruneClaimTokens deletes the tokens expired or used before before.
	PruneClaimTokens(ctx context.Context, before time.Time) (int64, error)

	// The maintainer's listing and "Re-check now" (issue 18; sql_listing.go). A
	// listing is saved by SaveHistory (HistoryUpdate.Listing), with its changes.

	// MaintainerListing returns the entry's maintainer listing (Revision 0: none).
	MaintainerListing(ctx context.Context, entryID int64) (MaintainerListing, error)
	// RequestRecheck sets the entry's ReasonManual due time to at, unless a re-check
	// was asked for less than every before at (*RecheckRefused, nothing changed).
	RequestRecheck(ctx context.Context, entryID int64, at time.Time, every time.Duration) error
	// Disputes and outcomes (issue 18; sql_disputes.go): a maintainer's signed dispute
	// of one check result of a signed round, and an operator's signed outcome, each
	// stored with its ledger record in one transaction; deleted with their entry.

	// SignedRound returns a signed round with its ledger record; ErrNotFound when there
	// is no such round or it is unsigned.
	SignedRound(ctx context.Context, roundID int64) (SignedRoundRef, error)
	// NextDisputeNumber returns the number the entry's next dispute takes.
	NextDisputeNumber(ctx context.Context, entryID int64) (int64, error)
	// SaveDispute stores a signed dispute and its record. ErrNotFound when the round is
	// not a signed round of the entry; ErrDisputeOpen when that check of that round has
	// an open dispute; ErrDisputeNumber when Number is not the entry's next.
	SaveDispute(ctx context.Context, d NewDispute) (DisputeRecord, error)
	// SaveOutcome stores a signed outcome and its record, and closes the dispute.
	// ErrNotFound without such dispute; ErrDisputeDecided when it has an outcome.
	SaveOutcome(ctx context.Context, o NewOutcome) (DisputeRecord, error)
	// Disputes returns the disputes f selects, each with its outcome.
	Disputes(ctx context.Context, f DisputeFilter) ([]DisputeRecord, error)
	// Dispute returns one dispute with its outcome, or ErrNotFound.
	Dispute(ctx context.Context, id int64) (DisputeRecord, error)
	// DisputesOpenedSince counts the disputes the account opened at or after since.
	DisputesOpenedSince(ctx context.Context, accountID int64, since time.Time) (int, error)
	// Operators and their audit log (issue 18; sql_operators.go, sql_claims_review.go;
	// the rules are package operators'). The audit log is append-only: the schema
	// refuses UPDATE and DELETE of it, and it outlives the accounts and entries it names.

	// AddOperator grants an account the operator role and appends rec, in one
	// transaction (added false: it held the role, nothing appended); ErrNotFound without
	// such account. RemoveOperator takes the role and appends rec (removed false: none).
	AddOperator(ctx context.Context, accountID int64, at time.Time, rec OperatorAction) (added bool, err error)
	RemoveOperator(ctx context.Context, accountID int64, rec OperatorAction) (removed bool, err error)
	// Operators lists the operators by account id; IsOperator asks about one account.
	Operators(ctx context.Context) ([]Operator, error)
	IsOperator(ctx context.Context, accountID int64) (bool, error)
	// AccountByEmailKey returns the account with the e-mail key, or ErrNotFound (it
	// never creates one).
	AccountByEmailKey(ctx context.Context, emailKey string) (Account, error)
	// AppendOperatorAction appends one audit row; OperatorActions pages through the
	// log newest first (ids below beforeID, ≤ 0: from the newest; limit ≤
	// MaxOperatorActionsPage).
	AppendOperatorAction(ctx context.Context, a OperatorAction) (int64, error)
	OperatorActions(ctx context.Context, beforeID int64, limit int) ([]OperatorAction, error)
	// HideChangeRecorded is HideChange and its audit row, in one transaction.
	HideChangeRecorded(ctx context.Context, entryID, number int64, hidden bool, reason string, rec OperatorAction) error
	// ClaimsForReview returns claims with their entries, newest first;
	// RevokeClaimRecorded lapses a live claim with a reason and appends rec, in one
	// transaction (ErrNotFound: no such live claim).
	ClaimsForReview(ctx context.Context, q ClaimReviewQuery) ([]ClaimReview, error)
	RevokeClaimRecorded(ctx context.Context, id int64, at time.Time, reason string, rec OperatorAction) (Claim, error)
	// Reports and withdrawals (migration 0021; sql_reports.go): reports of harmful
	// Verified servers and the withdrawal/v1 records that answer them.
	AddReport(ctx context.Context, r Report) (Report, error)
	Report(ctx context.Context, id int64) (Report, error)
	OpenReports(ctx context.Context, limit int) ([]Report, error)
	CountEntryReports(ctx context.Context, entryID int64, since time.Time) (int, error)
	DeclineReport(ctx context.Context, d ReportDecision) (Report, error)
	PruneReportContacts(ctx context.Context, before time.Time) (int64, error)
	// SaveWithdrawal stores a signed withdrawal record with its ledger record in one
	// transaction, closing the report when closing is given.
	SaveWithdrawal(ctx context.Context, w Withdrawal, closing *ReportDecision) (Withdrawal, error)
	Withdrawals(ctx context.Context, entryID int64) ([]Withdrawal, error)
	// Baselines (issue 18; sql_baselines.go): the tool surfaces an entry's maintainers
	// approved, each a signed ledger record of kind baseline; deleted with the entry
	// (its tombstone lists their records).

	// SaveBaseline stores a signed baseline and its ledger record in one transaction
	// and returns its id; ErrNotFound without the entry; ErrBaselineNumber when its
	// number is not the entry's next.
	SaveBaseline(ctx context.Context, b Baseline) (int64, error)
	// CurrentBaseline returns the entry's newest baseline, or ErrNotFound.
	CurrentBaseline(ctx context.Context, entryID int64) (Baseline, error)
	// Baselines returns the entry's baselines, newest first (limit 1 to 1000).
	Baselines(ctx context.Context, entryID int64, limit int) ([]Baseline, error)

	// NewQueue builds a River client on the store's database (riverpgxv5 on
	// PostgreSQL, riversqlite on SQLite). cfg is River's configuration; its Workers
	// and PeriodicJobs come from the caller.
	NewQueue(cfg *river.Config) (Queue, error)
}

// Queue is a River client on the store's database, independent of the driver's
// transaction type.
type Queue interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	// Insert enqueues one job; a job that a unique job already covers is skipped
	// (skipped true).
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (skipped bool, err error)
}
