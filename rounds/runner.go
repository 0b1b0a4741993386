package rounds

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/checks"
	"github.com/probity-dev/probity/checks/supply"
	"github.com/probity-dev/probity/store"
)

// Prober gathers an Observation of a remote endpoint; *probe.Prober is one.
type Prober interface {
	Probe(ctx context.Context, url string) (*checks.Observation, error)
}

// Baselines reads the approved fingerprints of an entry's current baseline: nil when it
// has none. baseline.Approvals is one.
type Baselines interface {
	Approved(ctx context.Context, entryID int64) (*attest.Fingerprints, error)
}

// Signer signs DSSE payloads and names its key; *signing.Signer is one.
type Signer interface {
	attest.Signer
	KeyID() (string, error)
}

// Config configures a Runner.
type Config struct {
	Store  Store
	Prober Prober
	Signer Signer
	// ToolVersion is Probity's version, recorded in every statement.
	ToolVersion string
	// History, when set, brings the entry's change history up to date after each stored
	// round (history.Processor). Its failure is logged, not a failure of the round: the
	// next round of the entry catches up.
	History interface {
		Process(ctx context.Context, entryID int64) (int, error)
	}
	// Baselines reads an entry's approved baseline (baseline.Approvals), which the
	// round's *_unchanged_vs_approved checks compare with; nil, or no baseline: those
	// checks are UNVERIFIED (unless the Prober sets Observation.Approved itself).
	Baselines Baselines
	// Collector gathers supply-chain facts (RunSupply); nil: no supply runs.
	Collector Collector
	// SupplyHistory takes packages' newest versions and bundle manifests' tools into
	// the history; nil: not recorded. When it also has ManifestRead (ManifestHistory;
	// history.Processor does), a cadence read of an unchanged bundle manifest makes no
	// signed supply run.
	SupplyHistory SupplyHistory
	// Watcher reads, on the cadence of a package or repository entry, what seed 000
	// reads of it every round: the package's newest version, or the repository's MCP
	// bundle manifest (Runner.Watch). nil: the Collector, when it is a Watcher too;
	// otherwise such entries are read only by their supply checks (weekly, and daily
	// when the version or README changed).
	Watcher  Watcher
	Schedule Schedule
	// SaveTimeout bounds storing one round; default 30 s. A round that was probed is
	// stored even when the context is cancelled meanwhile (e.g. on Ctrl-C).
	SaveTimeout time.Duration
	// ListBytes bounds the bytes of tool lists whose rounds are being built and stored
	// at once; default 64 MiB (DefaultListBytes). Building the round of a list of tens of
	// MB (checks, fingerprints, surface document, statement) and storing its surface
	// document take a few times the list's size, and a round of many large lists would
	// otherwise do all of it at once; one list, however large, always proceeds.
	ListBytes int64
	Now       func() time.Time
	Logger    *slog.Logger
}

// DefaultListBytes is Config.ListBytes's default: twice the 32 MiB a probe may read.
const DefaultListBytes = 64 << 20

// Runner runs rounds. It is safe for concurrent use.
type Runner struct {
	cfg   Config
	keyID string
	// lists holds Config.ListBytes: each round holds the bytes of its tool list from
	// building to storing.
	lists *semaphore.Weighted
}

// NewRunner returns a Runner. It fails when the configuration is incomplete.
func NewRunner(cfg Config) (*Runner, error) {
	if cfg.Store == nil || cfg.Prober == nil || cfg.Signer == nil {
		return nil, errors.New("rounds: Config needs a Store, a Prober and a Signer")
	}
	keyID, err := cfg.Signer.KeyID()
	if err != nil {
		return nil, fmt.Errorf("couldn't read the signing key's id: %w", err)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.SaveTimeout <= 0 {
		cfg.SaveTimeout = 30 * time.Second
	}
	if cfg.ListBytes <= 0 {
		cfg.ListBytes = DefaultListBytes
	}
	cfg.Schedule = cfg.Schedule.withDefaults()
	if w, ok := cfg.Collector.(Watcher); ok && cfg.Watcher == nil {
		cfg.Watcher = w
	}
	return &Runner{cfg: cfg, keyID: keyID, lists: semaphore.NewWeighted(cfg.ListBytes)}, nil
}

// listWeight is what a round of obs holds of Config.ListBytes: the bytes of its tool
// list, at most all of it.
func (r *Runner) listWeight(obs *checks.Observation) int64 {
	var n int64
	for _, t := range obs.Tools.Tools {
		n += int64(len(t))
	}
	return min(n, r.cfg.ListBytes)
}

// RoundOutcome is what became of one entry's round.
type RoundOutcome string

// The outcomes of RunEntry.
const (
	SignedFull  RoundOutcome = "signed_full"          // stored with a full-coverage envelope
	SignedAuth  RoundOutcome = "signed_auth_required" // stored with an auth_required envelope
	Unsigned    RoundOutcome = "unsigned"             // stored without an envelope
	AlreadyDone RoundOutcome = "already_done"         // a round for this due time was stored before
	NotProbed   RoundOutcome = "not_probed"           // a package or repository entry: no probe rounds
	Failed      RoundOutcome = "failed"               // nothing stored (see the error)
	EntryGone   RoundOutcome = "entry_gone"           // the entry was deleted meanwhile
	SupplyRan   RoundOutcome = "supply_ran"           // a package entry's supply checks ran (RunAll)
)

// RoundReport is what RunEntry reports of one entry's round: its outcome, the id of the
// stored round (store.RoundSummary.ID; 0 when none was stored), the attempt and the
// time the round took.
type RoundReport struct {
	Outcome  RoundOutcome
	ID       int64
	Attempt  int
	Duration time.Duration
}

// RunEntry runs the round of entry e for due (see the package documentation). runID
// names the manual run a manual round belongs to ("" otherwise). An error means nothing
// was stored; the round can be retried.
func (r *Runner) RunEntry(ctx context.Context, e store.Entry, due store.Due, runID string) (RoundReport, error) {
	start := r.cfg.Now()
	out := RoundReport{Outcome: Failed}
	if e.Kind != store.KindRemote {
		out.Outcome = NotProbed
		return out, nil
	}
	switch due.EntryID {
	case 0:
		due.EntryID = e.ID // the round id names the entry
	case e.ID:
	default:
		return out, fmt.Errorf("the due time of entry %d was given for %s (entry %d)", due.EntryID, e.Slug, e.ID)
	}
	attempt, err := r.cfg.Store.StartAttempt(ctx, e.ID, due.At, start)
	switch {
	case errors.Is(err, store.ErrRoundDone):
		out.Outcome = AlreadyDone
		return out, nil
	case errors.Is(err, store.ErrNotFound):
		out.Outcome = EntryGone
		return out, nil
	case err != nil:
		return out, fmt.Errorf("couldn't record the attempt for %s: %w", e.Slug, err)
	}
	out.Attempt = attempt
	prev, err := r.cfg.Store.Rounds(ctx, e.ID, 8)
	if err != nil {
		return out, fmt.Errorf("couldn't read the rounds of %s: %w", e.Slug, err)
	}
	var approved *attest.Fingerprints
	if r.cfg.Baselines != nil {
		if approved, err = r.cfg.Baselines.Approved(ctx, e.ID); err != nil {
			return out, fmt.Errorf("couldn't read the approved baseline of %s: %w", e.Slug, err)
		}
	}

	probing := r.cfg.Now()
	obs, err := r.cfg.Prober.Probe(ctx, e.Locator)
	if ctx.Err() != nil {
		// Cut by our own cancellation: what the probe saw is not data about the server.
		return out, ctx.Err()
	}
	if err != nil {
		return out, fmt.Errorf("couldn't probe %s: %w", e.Slug, err)
	}
	probed := r.cfg.Now()
	if approved != nil {
		obs.Approved = approved // the entry's approved baseline, read before the probe
	}

	// Building and storing the round of a large list take a few times its size, so the
	// lists in those steps together stay under Config.ListBytes. A probed round waits
	// for its turn even when ctx is cancelled: it is stored all the same.
	weight := r.listWeight(obs)
	if err := r.lists.Acquire(context.WithoutCancel(ctx), weight); err != nil {
		return out, err
	}
	defer r.lists.Release(weight)
	round, err := r.build(ctx, e, due, runID, obs, historyOf(prev))
	if err != nil {
		return out, err
	}
	// obs is not used past here: the round holds what is stored (its surface document
	// is the one large part), so the recorded pages are garbage while it waits for the
	// store.
	built := r.cfg.Now()

	saveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.cfg.SaveTimeout)
	defer cancel()
	id, err := r.cfg.Store.SaveRound(saveCtx, round)
	switch {
	case errors.Is(err, store.ErrRoundDone):
		out.Outcome = AlreadyDone
		return out, nil
	case errors.Is(err, store.ErrNotFound):
		out.Outcome = EntryGone
		return out, nil
	case err != nil:
		return out, fmt.Errorf("couldn't store the round of %s: %w", e.Slug, err)
	}
	end := r.cfg.Now()
	out.ID, out.Duration = id, end.Sub(start)
	if r.cfg.History != nil {
		if _, err := r.cfg.History.Process(saveCtx, e.ID); err != nil {
			r.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "history not updated", slog.String("entry", e.Slug), slog.String("error", err.Error()))
		}
	}
	switch {
	case round.Coverage == string(attest.CoverageFull):
		out.Outcome = SignedFull
	case round.Coverage == string(attest.CoverageAuthRequired):
		out.Outcome = SignedAuth
	default:
		out.Outcome = Unsigned
	}
	r.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "round",
		slog.String("entry", e.Slug), slog.String("round", round.RoundID), slog.String("reason", string(due.Reason)),
		slog.String("outcome", string(out.Outcome)), slog.Int("attempt", attempt),
		slog.String("reach", round.Reach), slog.Int("tools", round.ToolCount),
		slog.Int64("prepare_ms", probing.Sub(start).Milliseconds()),
		slog.Int64("probe_ms", probed.Sub(probing).Milliseconds()),
		slog.Int64("sign_ms", built.Sub(probed).Milliseconds()),
		slog.Int64("store_ms", end.Sub(built).Milliseconds()))
	return out, nil
}

func historyOf(rounds []store.RoundSummary) history {
	var h history
	counting := true
	for i := range rounds {
		rs := &rounds[i]
		if counting && rs.Reach == string(checks.ReachRateLimited) {
			h.rateLimited++
		} else {
			counting = false
		}
		if h.prev == nil && rs.Fingerprints != nil {
			h.prev = rs
		}
	}
	return h
}

// build turns an observation into the round to store: results, statement, envelope,
// surface, uptime and due times. It does no I/O.
func (r *Runner) build(ctx context.Context, e store.Entry, due store.Due, runID string, obs *checks.Observation, h history) (*store.Round, error) {
	// The fingerprints and the surface document are computed once, for the checks, the
	// statement and the store: a list of 10,000 tools is tens of MB in canonical form.
	ev := checks.EvaluateRound(obs)
	results, coverage, signed := ev.Results, ev.Coverage, ev.Signed
	round := &store.Round{
		EntryID:    e.ID,
		DueAt:      due.At,
		Reason:     due.Reason,
		RoundID:    RoundID(due, runID),
		StartedAt:  obs.StartedAt,
		FinishedAt: r.cfg.Now(),
		Reach:      string(obs.Reach.Failure),
		HTTPStatus: obs.Reach.FirstStatus,
		Stop:       string(obs.Stop),
		Uptime:     UptimeClass(obs),
		RetryAfter: obs.RetryAfter,
		ToolCount:  len(obs.Tools.Tools),
		Pages:      obs.Tools.Pages,
		Login:      loginFacts(obs, results),
	}
	handshakeFacts(round, obs)
	if round.StartedAt.IsZero() {
		round.StartedAt = r.cfg.Now()
	}
	if obs.Handshake.Completed() {
		round.ProtocolVersion = obs.Handshake.ProtocolVersion
		round.ServerName = obs.Handshake.ServerName
		round.ServerVersion = obs.Handshake.ServerVersion
	}
	fp, err := ev.Fingerprints()
	if err != nil {
		fp = nil // an unfingerprintable list: the checks say so, the round is unsigned
	}
	if fp != nil {
		round.Fingerprints, round.Surface = fp, ev.Surface()
		// The instructions as a canonical JSON string: the bytes their fingerprint
		// digests ("" when the server sent none), kept for the history's before/after.
		ins := ""
		if obs.Handshake.Instructions != nil {
			ins = *obs.Handshake.Instructions
		}
		quoted, err := json.Marshal(ins)
		if err == nil {
			quoted, err = attest.Canonicalize(quoted)
		}
		if err == nil && attest.Digest(quoted) == fp.Instructions {
			round.Instructions = quoted
		}
	}
	if round.Results, err = checks.EncodeResults(results); err != nil {
		return nil, fmt.Errorf("couldn't encode the results of %s: %w", e.Slug, err)
	}
	if round.Timings, err = json.Marshal(obs.Timings); err != nil {
		return nil, fmt.Errorf("couldn't encode the timings of %s: %w", e.Slug, err)
	}
	if signed {
		// Built and checked once by the verifier's rules; Sign does not check it again.
		st, err := ev.Statement(attest.ProbeInfo{ToolVersion: r.cfg.ToolVersion}, round.RoundID)
		if err != nil {
			return nil, fmt.Errorf("couldn't build the statement of %s: %w", e.Slug, err)
		}
		env, payload, err := st.Sign(ctx, r.cfg.Signer)
		if err != nil {
			return nil, fmt.Errorf("couldn't sign the round of %s: %w", e.Slug, err)
		}
		if round.Envelope, err = attest.EncodeEnvelope(env); err != nil {
			return nil, fmt.Errorf("couldn't encode the envelope of %s: %w", e.Slug, err)
		}
		sum := sha256.Sum256(payload)
		round.Coverage, round.KeyID, round.PayloadDigest = string(coverage), r.keyID, hex.EncodeToString(sum[:])
	} else {
		round.UnsignedReason = unsignedReason(obs)
	}
	round.Due = r.cfg.Schedule.dueUpdates(e, due, obs, fp, h, r.cfg.Now())
	return round, nil
}

// Watcher reads cheaply what an entry's cadence read watches of a package or a
// repository: one request to the package registry, or the repository and its
// manifest.json, none of the supply checks' other sources. *supply.Collector is meant to
// be one.
type Watcher interface {
	// PackageLatest reads the package of an npm or PyPI entry (kind and locator as in
	// store.Entry); its Latest is the newest published version when Source.Outcome is
	// supply.SourceOK.
	PackageLatest(ctx context.Context, kind, locator string) supply.PackageFacts
	// BundleManifest reads manifest.json at the head commit of a GitHub repository
	// entry's locator; the parsed manifest is nil unless Source.Outcome is
	// supply.SourceOK.
	BundleManifest(ctx context.Context, locator string) (supply.ManifestFacts, *supply.Manifest)
}

// ManifestHistory takes a cheap read of a bundle manifest's tools: it says whether they
// are news for the entry's history (a signed read should follow), and notes the time of
// a read that is not (when the tools were last fetched); *history.Processor is one
// (history.Processor.ManifestRead).
type ManifestHistory interface {
	ManifestRead(ctx context.Context, entryID int64, tools []json.RawMessage, at time.Time) (bool, error)
}

// WatchOutcome is what a cadence read of a package or repository entry did.
type WatchOutcome string

// The outcomes of Watch.
const (
	WatchVersion   WatchOutcome = "version"    // a package's newest version was read and taken into the history
	WatchUnchanged WatchOutcome = "unchanged"  // the bundle manifest's tools are what the history has
	WatchSupply    WatchOutcome = "supply_run" // the manifest is news: a signed supply run read it into the history
	WatchNoData    WatchOutcome = "no_data"    // the source could not be read (or has no bundle manifest): nothing recorded
	WatchOff       WatchOutcome = "off"        // no Watcher configured: the due time only moves on
)

// Watch runs the cadence read (due.Reason cadence) or the confirming read (confirm) of a
// package or repository entry, which has no probe rounds. A package: its newest version
// goes into the history at once, under the version rules (the first one is the
// baseline). A repository: its MCP bundle manifest is read, and when its tools are news
// for the history (ManifestHistory) a signed supply run reads them into it
// (RunSupply, RecordManifest), which schedules the confirming read a minute later when
// they differ from the recorded ones; a confirming read always makes that signed run.
// Then the entry's next cadence due time is set (a confirmation clears its own, before
// the read, so that the read can schedule another). A source that could not be read is
// no data: logged, nothing recorded, the cadence moves on.
func (r *Runner) Watch(ctx context.Context, e store.Entry, due store.Due) (WatchOutcome, error) {
	st := r.cfg.Store
	now := r.cfg.Now().UTC().Truncate(time.Millisecond)
	if due.Reason == store.ReasonConfirm {
		if err := st.SetDue(ctx, e.ID, store.DueUpdate{Reason: store.ReasonConfirm}); err != nil {
			return "", err
		}
	}
	out, err := r.watch(ctx, e, due, now)
	if err != nil {
		return out, err
	}
	if due.Reason == store.ReasonCadence {
		if err := st.SetDue(context.WithoutCancel(ctx), e.ID, store.DueUpdate{Reason: store.ReasonCadence, At: r.cfg.Schedule.nextCadence(e, due.At, now)}); err != nil {
			return out, err
		}
	}
	r.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "watch", slog.String("entry", e.Slug), slog.String("reason", string(due.Reason)),
		slog.String("outcome", string(out)))
	return out, nil
}

func (r *Runner) watch(ctx context.Context, e store.Entry, due store.Due, now time.Time) (WatchOutcome, error) {
	w, h := r.cfg.Watcher, r.cfg.SupplyHistory
	if w == nil {
		if due.Reason == store.ReasonConfirm && e.Kind == store.KindGitHub && r.cfg.Collector != nil {
			// A manifest's confirming read without a Watcher: the supply run reads it.
			if _, err := r.RunSupply(ctx, e, false); err != nil {
				return "", err
			}
			return WatchSupply, nil
		}
		return WatchOff, nil
	}
	switch e.Kind {
	case store.KindNPM, store.KindPyPI:
		pkg := w.PackageLatest(ctx, e.Kind, e.Locator)
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if pkg.Source.Outcome != supply.SourceOK || pkg.Latest == "" {
			r.noData(ctx, e, pkg.Source)
			return WatchNoData, nil
		}
		if h != nil {
			if _, err := h.RecordPackageVersion(context.WithoutCancel(ctx), e.ID, pkg.Latest, now); err != nil {
				return "", fmt.Errorf("couldn't record the version of %s: %w", e.Slug, err)
			}
		}
		return WatchVersion, nil
	case store.KindGitHub:
		if due.Reason != store.ReasonConfirm {
			m, parsed := w.BundleManifest(ctx, e.Locator)
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			// Only a complete list is a read (tools_generated marks it partial).
			if m.Source.Outcome != supply.SourceOK || parsed == nil || parsed.ToolsGenerated || len(parsed.Tools) == 0 {
				r.noData(ctx, e, m.Source)
				return WatchNoData, nil
			}
			if mh, ok := h.(ManifestHistory); ok {
				news, err := mh.ManifestRead(ctx, e.ID, parsed.Tools, now)
				if err != nil {
					return "", fmt.Errorf("couldn't compare the manifest of %s with its history: %w", e.Slug, err)
				}
				if !news {
					return WatchUnchanged, nil
				}
			}
		}
		if r.cfg.Collector == nil {
			return WatchNoData, nil
		}
		// The signed read of news, or the confirming re-read a minute later: a real
		// fetch of the repository, its head commit and its manifest, never the cache's
		// copy of a minute ago.
		if _, err := r.RunSupply(supply.WithRevalidate(ctx), e, false); err != nil {
			return "", err
		}
		return WatchSupply, nil
	}
	return WatchOff, nil
}

// noData logs a cadence read that got no data.
func (r *Runner) noData(ctx context.Context, e store.Entry, src supply.Source) {
	r.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "watch: no data", slog.String("entry", e.Slug),
		slog.String("outcome", string(src.Outcome)), slog.String("error", src.Error))
}
