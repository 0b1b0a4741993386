package history

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/history/diff"
	"github.com/probity-dev/probity/store"
)

// Store is what the history needs from the store.
type Store interface {
	EntryByID(ctx context.Context, id int64) (store.Entry, error)
	HistoryState(ctx context.Context, entryID int64) ([]byte, int64, error)
	RoundsAfter(ctx context.Context, entryID, afterID int64, limit int) ([]store.RoundSummary, error)
	Surface(ctx context.Context, fingerprint string) ([]byte, error)
	PutSurface(ctx context.Context, fingerprint string, doc []byte) error
	SaveHistory(ctx context.Context, u store.HistoryUpdate) error
}

// Signer signs change statements; *signing.Signer is one.
type Signer interface {
	attest.Signer
	KeyID() (string, error)
}

// Config configures a Processor.
type Config struct {
	Store       Store
	Signer      Signer
	ToolVersion string
	Rules       Rules
	// Baselines reads an entry's approved baseline (baseline.Approvals): a tools change
	// whose new surface differs from it gets the badge BadgeDiffersFromApproved. nil: no
	// such badge.
	Baselines interface {
		Approved(ctx context.Context, entryID int64) (*attest.Fingerprints, error)
	}
	Logger *slog.Logger
}

// BadgeDiffersFromApproved marks a tools change whose new surface differs from the
// entry's approved baseline; it follows the badges of package history/diff.
const BadgeDiffersFromApproved = "differs_from_approved"

// Processor turns an entry's stored rounds into its change history: it reads the rounds
// stored since it last ran, applies the Rules, and stores the new state and the
// numbered, signed changes in one transaction. It is idempotent and safe to run from
// several processes: the store refuses an update computed from a stale state
// (store.ErrConflict), and Process then starts over from the stored one.
type Processor struct {
	cfg   Config
	keyID string
}

// NewProcessor returns a Processor.
func NewProcessor(cfg Config) (*Processor, error) {
	if cfg.Store == nil || cfg.Signer == nil {
		return nil, errors.New("history: Config needs a Store and a Signer")
	}
	id, err := cfg.Signer.KeyID()
	if err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Processor{cfg: cfg, keyID: id}, nil
}

// maxBatch bounds the rounds taken into one update.
const maxBatch = 500

// Process brings an entry's history up to date with its stored rounds and returns how
// many changes it recorded.
func (p *Processor) Process(ctx context.Context, entryID int64) (int, error) {
	total := 0
	for attempt := 0; ; attempt++ {
		n, more, err := p.processBatch(ctx, entryID)
		total += n
		switch {
		case errors.Is(err, store.ErrConflict) && attempt < 5:
			continue // another process moved the state on: start again from it
		case err != nil:
			return total, err
		case !more:
			return total, nil
		}
	}
}

func (p *Processor) processBatch(ctx context.Context, entryID int64) (int, bool, error) {
	e, err := p.cfg.Store.EntryByID(ctx, entryID)
	if err != nil {
		return 0, false, err
	}
	raw, processed, err := p.cfg.Store.HistoryState(ctx, entryID)
	if err != nil {
		return 0, false, err
	}
	st, err := DecodeState(raw)
	if err != nil {
		return 0, false, fmt.Errorf("couldn't read the history state of %s: %w", e.Slug, err)
	}
	rounds, err := p.cfg.Store.RoundsAfter(ctx, entryID, processed, maxBatch)
	if err != nil || len(rounds) == 0 {
		return 0, false, err
	}
	d := p.newDiffer(ctx)
	compare := d.compare
	rules := p.cfg.Rules
	rules.Same = d.same

	var changes []store.ChangeRecord
	for i := range rounds {
		read := readOf(&rounds[i])
		var events []Event
		st, events, err = rules.Apply(st, read)
		if err != nil {
			return 0, false, fmt.Errorf("couldn't apply round %s of %s: %w", read.RoundID, e.Slug, err)
		}
		for _, ev := range events {
			c, err := p.change(ctx, e, ev, compare)
			if err != nil {
				return 0, false, err
			}
			changes = append(changes, c)
		}
	}
	state, err := EncodeState(st)
	if err != nil {
		return 0, false, err
	}
	last := rounds[len(rounds)-1].ID
	err = p.cfg.Store.SaveHistory(ctx, store.HistoryUpdate{
		EntryID: entryID, ExpectProcessed: processed, Processed: last, State: state, Changes: changes,
	})
	if err != nil {
		return 0, false, err
	}
	for _, c := range changes {
		p.cfg.Logger.Info("change recorded", "entry", e.Slug, "number", c.Number, "kind", c.Kind, "summary", c.Summary)
	}
	return len(changes), len(rounds) == maxBatch, nil
}

// instructions loads the instructions text with the fingerprint: nil when the server
// sent none, and known false when the store does not have the text (rounds stored
// before it kept instructions).
func (p *Processor) instructions(ctx context.Context, fp string) (text *string, known bool, err error) {
	if fp == "" {
		return nil, true, nil
	}
	doc, err := p.cfg.Store.Surface(ctx, fp)
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("couldn't load instructions %s: %w", fp, err)
	}
	var s string
	if err := json.Unmarshal(doc, &s); err != nil {
		return nil, false, fmt.Errorf("instructions %s: %w", fp, err)
	}
	if s == "" {
		return nil, true, nil
	}
	return &s, true, nil
}

// readOf maps a stored round to the history's Read. Only a signed full round read a
// complete, fingerprinted tool list.
func readOf(r *store.RoundSummary) Read {
	read := Read{ID: r.ID, RoundID: r.RoundID, At: r.StartedAt, ToolCount: r.ToolCount, Version: r.ServerVersion}
	if r.PayloadDigest != "" {
		read.PayloadDigest = "sha256:" + r.PayloadDigest
	}
	if r.Signed && r.Coverage == string(attest.CoverageFull) && r.Fingerprints != nil {
		read.OK = true
		read.Surface, read.Instructions = r.Fingerprints.Surface, r.Fingerprints.Instructions
	}
	return read
}

func state(r *Read) *attest.ChangeState {
	if r == nil {
		return nil
	}
	n := r.ToolCount
	s := &attest.ChangeState{Surface: r.Surface, Instructions: r.Instructions, ToolCount: &n}
	if r.PayloadDigest != "" {
		s.RoundID, s.PayloadDigest = r.RoundID, r.PayloadDigest
	}
	return s
}

// versionBaselineKind is the change kind a package's version baseline is recorded and
// signed as: a baseline that names only the version its observation started at.
const versionBaselineKind = attest.ChangeBaseline

// change builds the record of an event, with its signed change statement.
func (p *Processor) change(ctx context.Context, e store.Entry, ev Event, compare func(a, b *Read) (*diff.Change, error)) (store.ChangeRecord, error) {
	rec := store.ChangeRecord{EntryID: e.ID, Number: ev.Number, RecordedAt: ev.At.UTC().Truncate(time.Millisecond), Origin: attest.OriginAutomatic, Kind: ev.Kind}
	pred := &attest.ChangePredicate{
		Entry:       attest.EntryRef(e.Kind, e.Slug, e.Locator),
		Number:      ev.Number,
		RecordedAt:  attest.FormatTime(rec.RecordedAt),
		Origin:      attest.OriginAutomatic,
		Kind:        ev.Kind,
		Badges:      []string{},
		ToolVersion: p.cfg.ToolVersion,
	}
	var d ChangeDetails
	switch ev.Kind {
	case EventBaseline:
		if ev.After == nil {
			// A package's version baseline: no tool list, the version it started at.
			// Signed as versionBaselineKind, with no before.
			rec.Kind, pred.Kind = versionBaselineKind, versionBaselineKind
			d.VersionAfter = ev.VersionAfter
			rec.Summary = "observation started at version " + ev.VersionAfter
			pred.After = attest.ChangeState{Version: ev.VersionAfter}
			break
		}
		n := ev.After.ToolCount
		d.ToolCount = &n
		rec.Summary = fmt.Sprintf("observation started with %d %s", n, plural(n, "tool", "tools"))
		rec.AfterRound = ev.After.ID
		pred.After = *state(ev.After)
	case EventTools:
		c, err := compare(ev.Before, ev.After)
		if err != nil {
			return rec, err
		}
		d.Diff = c
		rec.Summary = c.Summary()
		if rec.Summary == "" {
			rec.Summary = "tool list changed"
		}
		for _, b := range c.Badges {
			if !slices.Contains(rec.Badges, b.Kind) {
				rec.Badges = append(rec.Badges, b.Kind)
			}
		}
		if p.cfg.Baselines != nil {
			approved, err := p.cfg.Baselines.Approved(ctx, e.ID)
			if err != nil {
				return rec, err
			}
			if approved != nil && approved.Surface != ev.After.Surface {
				rec.Badges = append(rec.Badges, BadgeDiffersFromApproved)
			}
		}
		rec.BeforeRound, rec.AfterRound = ev.Before.ID, ev.After.ID
		pred.Before, pred.After = state(ev.Before), *state(ev.After)
	case EventVersion:
		d.VersionBefore, d.VersionAfter = ev.VersionBefore, ev.VersionAfter
		rec.Summary = fmt.Sprintf("version %s → %s", ev.VersionBefore, ev.VersionAfter)
		pred.Before = &attest.ChangeState{Version: ev.VersionBefore}
		pred.After = attest.ChangeState{Version: ev.VersionAfter}
	}
	if rec.Badges == nil {
		rec.Badges = []string{}
	}
	pred.Summary, pred.Badges = rec.Summary, rec.Badges
	var err error
	if rec.Details, err = EncodeChangeDetails(&d); err != nil {
		return rec, err
	}
	st, err := attest.NewChangeStatement(pred)
	if err != nil {
		return rec, err
	}
	env, _, err := attest.Sign(ctx, st, p.cfg.Signer)
	if err != nil {
		return rec, fmt.Errorf("couldn't sign change %d of %s: %w", ev.Number, e.Slug, err)
	}
	if rec.Envelope, err = attest.EncodeEnvelope(env); err != nil {
		return rec, err
	}
	rec.KeyID = p.keyID
	return rec, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// RecordOperatorEdit records an edit the server's operator saved on the entry: the field
// with its text before and after (for setup notes only that they changed), numbered
// after the entry's other changes, signed, and outside the automatic limits.
func (p *Processor) RecordOperatorEdit(ctx context.Context, entryID int64, field, before, after string, at time.Time) (store.ChangeRecord, error) {
	recs, err := p.RecordOperatorEdits(ctx, entryID, []Edit{{Field: field, Before: before, After: after}}, nil, at)
	if err != nil {
		return store.ChangeRecord{}, err
	}
	return recs[0], nil
}

// Edit is one field of an edit the server's operator saved: its name (lower case and
// underscores) and its text before and after.
type Edit struct {
	Field, Before, After string
}

// maxEdits bounds the fields of one RecordOperatorEdits call.
const maxEdits = 16

// RecordOperatorEdits records the fields of one edit the server's operator saved, as
// RecordOperatorEdit does each, numbered in their order, in one SaveHistory: with
// listing, when set, the maintainer's listing that the edit saves, stored in the same
// transaction as its changes (store.HistoryUpdate.Listing), so that neither is stored
// without the other. A listing whose ExpectRevision is stale fails with
// store.ErrStaleListing and nothing stored.
func (p *Processor) RecordOperatorEdits(ctx context.Context, entryID int64, edits []Edit, listing *store.ListingUpdate, at time.Time) ([]store.ChangeRecord, error) {
	if len(edits) == 0 || len(edits) > maxEdits {
		return nil, fmt.Errorf("an operator edit has %d fields, not 1 to %d", len(edits), maxEdits)
	}
	for _, ed := range edits {
		if f := ed.Field; f == "" || len(f) > 64 || strings.ContainsFunc(f, func(r rune) bool { return !(r == '_' || r >= 'a' && r <= 'z') }) {
			return nil, fmt.Errorf("invalid field name %q", f)
		}
	}
	for attempt := 0; ; attempt++ {
		recs, err := p.recordEdits(ctx, entryID, edits, listing, at)
		if errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrStaleListing) && attempt < 5 {
			continue
		}
		return recs, err
	}
}

// FieldApprovedBaseline is the field of the operator edit that records a new approved
// baseline (package baseline): its before and after are the surface fingerprints.
const FieldApprovedBaseline = "approved_baseline"

// editSummary is the one-line summary of an operator edit of field.
func editSummary(field string) string {
	if field == FieldApprovedBaseline {
		return "new approved baseline"
	}
	return strings.ReplaceAll(field, "_", " ") + " edited by the operator"
}

func (p *Processor) recordEdits(ctx context.Context, entryID int64, edits []Edit, listing *store.ListingUpdate, at time.Time) ([]store.ChangeRecord, error) {
	e, err := p.cfg.Store.EntryByID(ctx, entryID)
	if err != nil {
		return nil, err
	}
	raw, processed, err := p.cfg.Store.HistoryState(ctx, entryID)
	if err != nil {
		return nil, err
	}
	st, err := DecodeState(raw)
	if err != nil {
		return nil, fmt.Errorf("couldn't read the history state of %s: %w", e.Slug, err)
	}
	if st.NextNumber < 1 {
		st.NextNumber = 1
	}
	recs := make([]store.ChangeRecord, 0, len(edits))
	for _, ed := range edits {
		rec, err := p.editChange(ctx, e, st.number(), ed, at)
		if err != nil {
			return nil, err
		}
		recs = append(recs, rec)
	}
	state, err := EncodeState(st)
	if err != nil {
		return nil, err
	}
	err = p.cfg.Store.SaveHistory(ctx, store.HistoryUpdate{EntryID: e.ID, ExpectProcessed: processed, Processed: processed, State: state,
		Changes: recs, Listing: listing})
	if err != nil {
		return nil, err
	}
	return recs, nil
}

// editChange is the signed change record of one edited field, numbered number.
func (p *Processor) editChange(ctx context.Context, e store.Entry, number int64, ed Edit, at time.Time) (store.ChangeRecord, error) {
	d := ChangeDetails{Field: ed.Field}
	if RecordsEditText(ed.Field) {
		d.Before, d.After = &ed.Before, &ed.After
	}
	details, err := EncodeChangeDetails(&d)
	if err != nil {
		return store.ChangeRecord{}, err
	}
	canon, err := attest.Canonicalize(details)
	if err != nil {
		return store.ChangeRecord{}, fmt.Errorf("the edit is not recordable: %w", err)
	}
	rec := store.ChangeRecord{EntryID: e.ID, Number: number, RecordedAt: at.UTC().Truncate(time.Millisecond),
		Origin: attest.OriginOperator, Kind: attest.ChangeOperatorEdit, Summary: editSummary(ed.Field),
		Details: details, Badges: []string{}}
	pred := &attest.ChangePredicate{Entry: attest.EntryRef(e.Kind, e.Slug, e.Locator), Number: number, RecordedAt: attest.FormatTime(rec.RecordedAt),
		Origin: attest.OriginOperator, Kind: attest.ChangeOperatorEdit, Summary: rec.Summary, Badges: []string{},
		After: attest.ChangeState{Edit: attest.Digest(canon)}, ToolVersion: p.cfg.ToolVersion}
	stmt, err := attest.NewChangeStatement(pred)
	if err != nil {
		return rec, err
	}
	env, _, err := attest.Sign(ctx, stmt, p.cfg.Signer)
	if err != nil {
		return rec, err
	}
	if rec.Envelope, err = attest.EncodeEnvelope(env); err != nil {
		return rec, err
	}
	rec.KeyID = p.keyID
	return rec, nil
}

// RecordPackageVersion takes a package's newest published version (npm, PyPI) into the
// history: recorded at once, within the version limits (Rules.ApplyPackageVersion); the
// first version of an entry without a baseline is its baseline ("observation started at
// version X"). It returns whether a change was recorded.
func (p *Processor) RecordPackageVersion(ctx context.Context, entryID int64, version string, at time.Time) (bool, error) {
	for attempt := 0; ; attempt++ {
		ok, err := p.recordPackageVersion(ctx, entryID, version, at)
		if errors.Is(err, store.ErrConflict) && attempt < 5 {
			continue
		}
		return ok, err
	}
}

func (p *Processor) recordPackageVersion(ctx context.Context, entryID int64, version string, at time.Time) (bool, error) {
	e, err := p.cfg.Store.EntryByID(ctx, entryID)
	if err != nil {
		return false, err
	}
	raw, processed, err := p.cfg.Store.HistoryState(ctx, entryID)
	if err != nil {
		return false, err
	}
	st, err := DecodeState(raw)
	if err != nil {
		return false, fmt.Errorf("couldn't read the history state of %s: %w", e.Slug, err)
	}
	before := st.Version
	st, events := p.cfg.Rules.ApplyPackageVersion(st, version, at)
	if st.Version == before && len(events) == 0 && raw != nil && st.PendingVersion == "" {
		return false, nil // nothing new: leave the state as it is
	}
	var changes []store.ChangeRecord
	for _, ev := range events {
		c, err := p.change(ctx, e, ev, nil)
		if err != nil {
			return false, err
		}
		changes = append(changes, c)
	}
	state, err := EncodeState(st)
	if err != nil {
		return false, err
	}
	err = p.cfg.Store.SaveHistory(ctx, store.HistoryUpdate{EntryID: e.ID, ExpectProcessed: processed, Processed: processed, State: state, Changes: changes})
	return len(changes) > 0, err
}

// RecordManifest takes the tools of an MCP bundle manifest, read at a repository's
// latest commit during supply run runID (whose signed payload has payloadDigest), into
// the history under the same rules as a remote endpoint's tool list: the first read is
// the baseline, a difference needs a second agreeing read at least a minute later, at
// most three tool changes a day. The recorded changes name the supply runs they compare
// (roundId "s" + run id). A read that becomes the pending candidate of a difference
// schedules the confirming read (store.ReasonConfirm) Rules.Confirmation later, in the
// same transaction as the state, as a remote's round does: the change is confirmed a
// minute later, not at the next weekly run. It returns how many changes it recorded.
func (p *Processor) RecordManifest(ctx context.Context, entryID int64, tools []json.RawMessage, runID int64, payloadDigest string, at time.Time) (int, error) {
	// The fingerprints and the surface document from one canonicalization of the tools.
	fp, doc, err := attest.ComputeSurface(tools, nil)
	if err != nil {
		return 0, fmt.Errorf("couldn't fingerprint the manifest's tools: %w", err)
	}
	if err := p.cfg.Store.PutSurface(ctx, fp.Surface, doc); err != nil {
		return 0, err
	}
	read := Read{RoundID: "s" + strconv.FormatInt(runID, 10), PayloadDigest: payloadDigest, At: at.UTC().Truncate(time.Millisecond),
		OK: true, Surface: fp.Surface, Instructions: fp.Instructions, ToolCount: len(tools)}
	for attempt := 0; ; attempt++ {
		n, err := p.recordManifest(ctx, entryID, read)
		if errors.Is(err, store.ErrConflict) && attempt < 5 {
			continue
		}
		return n, err
	}
}

func (p *Processor) recordManifest(ctx context.Context, entryID int64, read Read) (int, error) {
	e, err := p.cfg.Store.EntryByID(ctx, entryID)
	if err != nil {
		return 0, err
	}
	raw, processed, err := p.cfg.Store.HistoryState(ctx, entryID)
	if err != nil {
		return 0, err
	}
	st, err := DecodeState(raw)
	if err != nil {
		return 0, fmt.Errorf("couldn't read the history state of %s: %w", e.Slug, err)
	}
	d := p.newDiffer(ctx)
	compare := d.compare
	rules := p.cfg.Rules
	rules.Same = d.same
	prevPending := st.Pending
	st, events, err := rules.Apply(st, read)
	if err != nil {
		return 0, err
	}
	if read.At.After(st.ManifestReadAt) {
		st.ManifestReadAt = read.At
	}
	var changes []store.ChangeRecord
	for _, ev := range events {
		c, err := p.change(ctx, e, ev, compare)
		if err != nil {
			return 0, err
		}
		changes = append(changes, c)
	}
	state, err := EncodeState(st)
	if err != nil {
		return 0, err
	}
	u := store.HistoryUpdate{EntryID: e.ID, ExpectProcessed: processed, Processed: processed, State: state, Changes: changes}
	if at, ok := confirmAt(rules, prevPending, st.Pending); ok {
		u.Due = []store.DueUpdate{{Reason: store.ReasonConfirm, At: at}}
	}
	err = p.cfg.Store.SaveHistory(ctx, u)
	return len(changes), err
}

// confirmMargin is added to the confirmation delay of a manifest's pending difference,
// so that the confirming read, which takes its time when it starts, is surely late
// enough.
const confirmMargin = 5 * time.Second

// confirmAt returns when the confirming read of a new pending candidate is due: ok when
// the read just taken became the candidate (none before, or another one).
func confirmAt(rules Rules, before, after *Read) (time.Time, bool) {
	if after == nil || before != nil && before.At.Equal(after.At) && before.Surface == after.Surface {
		return time.Time{}, false
	}
	wait, empty := rules.Confirmation()
	if after.ToolCount == 0 {
		wait = empty
	}
	return after.At.Add(wait + confirmMargin).UTC().Truncate(time.Millisecond), true
}

// ManifestRead takes a cheap read of an MCP bundle manifest's tools, made on the
// entry's cadence at `at`, and reports whether they are news for the entry's history,
// so that a signed read (a supply run, which RecordManifest then takes) is worth
// making: true when the history has no tool list yet, has a pending difference to
// confirm or drop, or its recorded tools differ from these once dates are masked
// (Rules.Same); then it stores nothing. When they are no news it only notes the read's
// time (State.ManifestReadAt: the tools were fetched then), so unchanged tools cost no
// signed run.
func (p *Processor) ManifestRead(ctx context.Context, entryID int64, tools []json.RawMessage, at time.Time) (bool, error) {
	for attempt := 0; ; attempt++ {
		news, err := p.manifestRead(ctx, entryID, tools, at.UTC().Truncate(time.Millisecond))
		if errors.Is(err, store.ErrConflict) && attempt < 5 {
			continue
		}
		return news, err
	}
}

func (p *Processor) manifestRead(ctx context.Context, entryID int64, tools []json.RawMessage, at time.Time) (bool, error) {
	raw, processed, err := p.cfg.Store.HistoryState(ctx, entryID)
	if err != nil {
		return false, err
	}
	st, err := DecodeState(raw)
	if err != nil {
		return false, fmt.Errorf("couldn't read the history state of entry %d: %w", entryID, err)
	}
	if st.Recorded == nil || st.Pending != nil {
		return true, nil
	}
	fp, doc, err := attest.ComputeSurface(tools, nil)
	if err != nil {
		return false, fmt.Errorf("couldn't fingerprint the manifest's tools: %w", err)
	}
	if fp.Surface != st.Recorded.Surface || fp.Instructions != st.Recorded.Instructions {
		// Different bytes: the same tools once dates are masked is no news. The
		// comparison reads both surfaces from the store, so the new one is stored
		// (content-addressed).
		if err := p.cfg.Store.PutSurface(ctx, fp.Surface, doc); err != nil {
			return false, err
		}
		read := Read{At: at, OK: true, Surface: fp.Surface, Instructions: fp.Instructions, ToolCount: len(tools)}
		same, err := p.newDiffer(ctx).same(st.Recorded, &read)
		if err != nil || !same {
			return !same, err
		}
	}
	if !at.After(st.ManifestReadAt) {
		return false, nil
	}
	st.ManifestReadAt = at
	state, err := EncodeState(st)
	if err != nil {
		return false, err
	}
	return false, p.cfg.Store.SaveHistory(ctx, store.HistoryUpdate{EntryID: entryID, ExpectProcessed: processed, Processed: processed, State: state})
}

// differ compares the surfaces (and instructions) of reads, loading each from the store
// once: Rules.Same and the details of recorded changes both use it.
type differ struct {
	p        *Processor
	ctx      context.Context
	surfaces map[string]diff.Surface
	// unknown are instructions fingerprints whose text the store does not have.
	unknown map[string]bool
}

func (p *Processor) newDiffer(ctx context.Context) *differ {
	return &differ{p: p, ctx: ctx, surfaces: map[string]diff.Surface{}, unknown: map[string]bool{}}
}

func (d *differ) load(r *Read) (diff.Surface, error) {
	key := r.Surface + r.Instructions
	if s, ok := d.surfaces[key]; ok {
		return s, nil
	}
	doc, err := d.p.cfg.Store.Surface(d.ctx, r.Surface)
	if err != nil {
		return diff.Surface{}, fmt.Errorf("couldn't load surface %s: %w", r.Surface, err)
	}
	ins, known, err := d.p.instructions(d.ctx, r.Instructions)
	if err != nil {
		return diff.Surface{}, err
	}
	if !known {
		d.unknown[r.Instructions] = true
	}
	s, err := diff.Parse(doc, ins, "")
	if err != nil {
		return diff.Surface{}, err
	}
	d.surfaces[key] = s
	return s, nil
}

// compare diffs two reads, masking dates as of the later one.
func (d *differ) compare(a, b *Read) (*diff.Change, error) {
	sa, err := d.load(a)
	if err != nil {
		return nil, err
	}
	sb, err := d.load(b)
	if err != nil {
		return nil, err
	}
	return diff.Compare(sa, sb, diff.Options{Now: b.At})
}

// same is Rules.Same: equal fingerprints, or no change once dates are masked.
func (d *differ) same(a, b *Read) (bool, error) {
	if a.Surface == b.Surface && a.Instructions == b.Instructions {
		return true, nil
	}
	c, err := d.compare(a, b)
	if err != nil {
		return false, err
	}
	if a.Instructions != b.Instructions && (d.unknown[a.Instructions] || d.unknown[b.Instructions]) {
		return false, nil // no text to mask dates in: the fingerprints decide
	}
	return c.Empty(), nil
}
