package baseline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/store"
)

// Store is what the service reads and writes of the store (store.Store is one).
type Store interface {
	Entry(ctx context.Context, slug string) (store.Entry, error)
	Rounds(ctx context.Context, entryID int64, limit int) ([]store.RoundSummary, error)
	CurrentBaseline(ctx context.Context, entryID int64) (store.Baseline, error)
	SaveBaseline(ctx context.Context, b store.Baseline) (int64, error)
}

// Maintainers says whether an account is a maintainer of an entry (claims.Service is
// one). An error is a failure to find out, not a no.
type Maintainers interface {
	IsMaintainer(ctx context.Context, accountID, entryID int64) (bool, error)
}

// History records an approval in the entry's history as an operator change
// (*history.Processor is one).
type History interface {
	RecordOperatorEdit(ctx context.Context, entryID int64, field, before, after string, at time.Time) (store.ChangeRecord, error)
}

// Signer signs DSSE payloads and names its key; *signing.Signer is one.
type Signer interface {
	attest.Signer
	KeyID() (string, error)
}

// Config configures a Service. Store, Maintainers and Signer are required.
type Config struct {
	Store       Store
	Maintainers Maintainers
	Signer      Signer
	// History records each approval; nil: not recorded (tests of the service alone).
	History History
	// ToolVersion is Probity's version, recorded in every statement.
	ToolVersion string
	Now         func() time.Time
	Logger      *slog.Logger
}

// Service approves baselines. It is safe for concurrent use.
type Service struct {
	cfg   Config
	keyID string
}

// Errors of Approve and Status that callers branch on; store.ErrNotFound is returned
// for an unknown entry.
var (
	// ErrNotMaintainer: the account is not a maintainer of the entry.
	ErrNotMaintainer = errors.New("only a maintainer of the entry can approve its baseline")
	// ErrNoRound: the entry has no signed round to take a baseline from.
	ErrNoRound = errors.New("the entry has no successful signed round to approve yet")
	// ErrNoTools: the newest signed round read no tools (none listed, or a login
	// required before the list).
	ErrNoTools = errors.New("the newest signed round read no tools: there is no tool surface to approve")
	// ErrAlreadyApproved: the newest round's tool surface is the approved one already.
	ErrAlreadyApproved = errors.New("the newest round's tool surface is the approved baseline already")
	// ErrChanged: the newest round's tools are not the ones the maintainer was shown
	// (a round landed in between); nothing was approved.
	ErrChanged = errors.New("the newest round's tools changed since the page was shown; look at them again before you approve")
)

// roundsRead is how many of an entry's newest rounds are searched for a signed one.
const roundsRead = 50

// New returns a Service; it fails when the configuration is incomplete.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil || cfg.Maintainers == nil || cfg.Signer == nil {
		return nil, errors.New("baseline: Config needs a Store, Maintainers and a Signer")
	}
	id, err := cfg.Signer.KeyID()
	if err != nil {
		return nil, fmt.Errorf("couldn't read the signing key's id: %w", err)
	}
	if cfg.ToolVersion == "" {
		cfg.ToolVersion = "0.0.0-dev"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{cfg: cfg, keyID: id}, nil
}

// Status is what the baseline page shows: the entry, its current baseline (nil when
// none) and its newest signed round (nil when none; its Fingerprints nil when it read
// no tool list).
type Status struct {
	Entry   store.Entry
	Current *store.Baseline
	Newest  *store.RoundSummary
	// Differs: the newest round's tool surface is not the approved one (both present).
	Differs bool
	// Approval says why the newest round cannot be approved now (ErrNoRound,
	// ErrNoTools, ErrAlreadyApproved), nil when it can.
	Approval error
}

// Status returns the entry's baseline status for a maintainer: ErrNotMaintainer for
// any other account.
func (s *Service) Status(ctx context.Context, accountID int64, slug string) (Status, error) {
	e, err := s.maintained(ctx, accountID, slug)
	if err != nil {
		return Status{}, err
	}
	return s.status(ctx, e)
}

func (s *Service) status(ctx context.Context, e store.Entry) (Status, error) {
	st := Status{Entry: e}
	cur, err := s.cfg.Store.CurrentBaseline(ctx, e.ID)
	switch {
	case err == nil:
		st.Current = &cur
	case !errors.Is(err, store.ErrNotFound):
		return st, fmt.Errorf("couldn't read the baseline of %s: %w", e.Slug, err)
	}
	rs, err := s.cfg.Store.Rounds(ctx, e.ID, roundsRead)
	if err != nil {
		return st, fmt.Errorf("couldn't read the rounds of %s: %w", e.Slug, err)
	}
	// The newest signed round: unsigned rounds (no answer, no handshake) say nothing of
	// the tools, a signed one behind a login (auth_required) read none.
	for i := range rs {
		if rs[i].Signed && rs[i].PayloadDigest != "" {
			st.Newest = &rs[i]
			break
		}
	}
	r := st.Newest
	switch {
	case r == nil:
		st.Approval = ErrNoRound
	case r.Coverage != string(attest.CoverageFull) || r.Fingerprints == nil || r.ToolCount == 0:
		st.Approval = ErrNoTools
	case st.Current != nil && sameSurface(st.Current.Fingerprints, *r.Fingerprints):
		st.Approval = ErrAlreadyApproved
	}
	st.Differs = st.Current != nil && r != nil && r.Fingerprints != nil && !sameSurface(st.Current.Fingerprints, *r.Fingerprints)
	return st, nil
}

// sameSurface reports whether two sets of fingerprints approve the same tool surface.
func sameSurface(a, b attest.Fingerprints) bool {
	return a.Toolset == b.Toolset && a.Schema == b.Schema && a.Surface == b.Surface
}

// maintained returns the entry with the slug when the account maintains it.
func (s *Service) maintained(ctx context.Context, accountID int64, slug string) (store.Entry, error) {
	e, err := s.cfg.Store.Entry(ctx, slug)
	if err != nil {
		return e, err
	}
	ok, err := s.cfg.Maintainers.IsMaintainer(ctx, accountID, e.ID)
	if err != nil {
		return e, fmt.Errorf("couldn't check the maintainers of %s: %w", e.Slug, err)
	}
	if !ok {
		return e, ErrNotMaintainer
	}
	return e, nil
}

// Approve takes the tool surface of the entry's newest signed round as its approved
// baseline, for a maintainer of the entry: it signs the baseline, stores it
// with its ledger record, and records it in the entry's history. The errors are
// store.ErrNotFound (no such entry), ErrNotMaintainer, ErrNoRound, ErrNoTools and
// ErrAlreadyApproved, or a failure.
func (s *Service) Approve(ctx context.Context, accountID int64, slug string) (store.Baseline, error) {
	return s.ApproveSeen(ctx, accountID, slug, "")
}

// ApproveSeen is Approve of the tools the maintainer was shown: the newest signed
// round's surface fingerprint must be seen ("" takes whatever is newest, for callers
// that show nothing), else ErrChanged and nothing is approved. The page sends the
// fingerprint it showed, so a round landing between the page and the click is never
// approved unseen.
func (s *Service) ApproveSeen(ctx context.Context, accountID int64, slug, seen string) (store.Baseline, error) {
	e, err := s.maintained(ctx, accountID, slug)
	if err != nil {
		return store.Baseline{}, err
	}
	for attempt := 0; ; attempt++ {
		b, before, err := s.approve(ctx, accountID, e, seen)
		if errors.Is(err, store.ErrBaselineNumber) && attempt < 5 {
			continue // another approval was stored meanwhile: number and sign again
		}
		if err != nil {
			return b, err
		}
		if s.cfg.History != nil {
			// The baseline is stored; a history that cannot be written is logged and
			// returned, the approval stands.
			if _, err := s.cfg.History.RecordOperatorEdit(ctx, e.ID, history.FieldApprovedBaseline, before, b.Fingerprints.Surface, b.ApprovedAt); err != nil {
				s.cfg.Logger.LogAttrs(ctx, slog.LevelError, "baseline approved but not in the history",
					slog.String("entry", e.Slug), slog.Int64("number", b.Number), slog.String("error", err.Error()))
				return b, fmt.Errorf("baseline %d of %s was approved, but couldn't be recorded in its history: %w", b.Number, e.Slug, err)
			}
		}
		s.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "baseline approved",
			slog.String("entry", e.Slug), slog.Int64("number", b.Number), slog.String("round", b.BasisRoundID))
		return b, nil
	}
}

// approve makes, signs and stores one baseline of e; before is the surface of the
// baseline it replaces ("none" for the first).
func (s *Service) approve(ctx context.Context, accountID int64, e store.Entry, seen string) (store.Baseline, string, error) {
	st, err := s.status(ctx, e)
	if err != nil {
		return store.Baseline{}, "", err
	}
	if st.Approval != nil {
		return store.Baseline{}, "", st.Approval
	}
	r := st.Newest
	if seen != "" && r.Fingerprints.Surface != seen {
		return store.Baseline{}, "", ErrChanged
	}
	number, before := int64(1), "none"
	if st.Current != nil {
		number, before = st.Current.Number+1, st.Current.Fingerprints.Surface
	}
	at := s.cfg.Now().UTC().Truncate(time.Millisecond)
	fp := attest.Fingerprints{Toolset: r.Fingerprints.Toolset, Schema: r.Fingerprints.Schema, Surface: r.Fingerprints.Surface}
	pred := attest.NewBaselinePredicate(attest.EntryRef(string(e.Kind), e.Slug, e.Locator), number, at,
		r.RoundID, "sha256:"+r.PayloadDigest, fp, r.ToolCount, s.cfg.ToolVersion)
	env, _, err := attest.Sign(ctx, attest.NewBaselineStatement(pred), s.cfg.Signer)
	if err != nil {
		return store.Baseline{}, "", fmt.Errorf("couldn't sign baseline %d of %s: %w", number, e.Slug, err)
	}
	raw, err := attest.EncodeEnvelope(env)
	if err != nil {
		return store.Baseline{}, "", err
	}
	b := store.Baseline{EntryID: e.ID, Number: number, Fingerprints: fp, ToolCount: r.ToolCount,
		BasisRoundID: r.RoundID, BasisPayloadDigest: r.PayloadDigest, ApprovedAt: at, ApprovedBy: accountID,
		Envelope: raw, KeyID: s.keyID}
	if b.ID, err = s.cfg.Store.SaveBaseline(ctx, b); err != nil {
		return b, "", err
	}
	return b, before, nil
}

// Approved returns the approved fingerprints of the entry's current baseline, nil when
// it has none (rounds.Baselines).
func (s *Service) Approved(ctx context.Context, entryID int64) (*attest.Fingerprints, error) {
	return Approvals{Store: s.cfg.Store}.Approved(ctx, entryID)
}

// Approvals reads entries' approved baselines for their rounds' *_unchanged_vs_approved
// checks (rounds.Baselines), without the approving half of a Service.
type Approvals struct {
	Store interface {
		CurrentBaseline(ctx context.Context, entryID int64) (store.Baseline, error)
	}
}

// Approved returns the approved toolset, schema and surface fingerprints of the entry's
// current baseline (Instructions empty: not approved), nil when it has none.
func (a Approvals) Approved(ctx context.Context, entryID int64) (*attest.Fingerprints, error) {
	b, err := a.Store.CurrentBaseline(ctx, entryID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("couldn't read the approved baseline of entry %d: %w", entryID, err)
	}
	fp := b.Fingerprints
	fp.Instructions = ""
	return &fp, nil
}
