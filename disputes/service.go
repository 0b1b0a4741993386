package disputes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/store"
)

// Store is what the service needs of package store.
type Store interface {
	Entry(ctx context.Context, slug string) (store.Entry, error)
	EntryByID(ctx context.Context, id int64) (store.Entry, error)
	SignedRound(ctx context.Context, roundID int64) (store.SignedRoundRef, error)
	NextDisputeNumber(ctx context.Context, entryID int64) (int64, error)
	SaveDispute(ctx context.Context, d store.NewDispute) (store.DisputeRecord, error)
	SaveOutcome(ctx context.Context, o store.NewOutcome) (store.DisputeRecord, error)
	Disputes(ctx context.Context, f store.DisputeFilter) ([]store.DisputeRecord, error)
	Dispute(ctx context.Context, id int64) (store.DisputeRecord, error)
	DisputesOpenedSince(ctx context.Context, accountID int64, since time.Time) (int, error)
}

// Maintainers says whether an account maintains an entry (claims.Service is one). It
// returns false, nil for an account that does not; an error only when it cannot tell.
type Maintainers interface {
	IsMaintainer(ctx context.Context, accountID, entryID int64) (bool, error)
}

// Signer signs dispute and outcome statements; *signing.Signer is one.
type Signer interface {
	attest.Signer
	KeyID() (string, error)
}

// Config configures a Service.
type Config struct {
	Store       Store
	Maintainers Maintainers
	Signer      Signer
	// ToolVersion is Probity's version, signed into each record.
	ToolVersion string
	// DailyLimit is how many disputes one account may open in 24 hours (0: 10).
	DailyLimit int
	// Changed is called after a dispute or an outcome of the entry with the slug was
	// stored (e.g. to refresh the entry's cached pages); nil: nothing.
	Changed func(ctx context.Context, slug string)
	Now     func() time.Time
	Logger  *slog.Logger
}

// DefaultDailyLimit is Config.DailyLimit's default.
const DefaultDailyLimit = 10

// Service opens and decides disputes.
type Service struct {
	cfg   Config
	keyID string
}

// New returns a Service.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil || cfg.Maintainers == nil || cfg.Signer == nil {
		return nil, errors.New("disputes: Config needs a Store, Maintainers and a Signer")
	}
	if !attest.IsToken(cfg.ToolVersion) {
		return nil, fmt.Errorf("disputes: tool version %q is not a token", cfg.ToolVersion)
	}
	id, err := cfg.Signer.KeyID()
	if err != nil {
		return nil, fmt.Errorf("disputes: couldn't read the signer's key id: %w", err)
	}
	if cfg.DailyLimit <= 0 {
		cfg.DailyLimit = DefaultDailyLimit
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{cfg: cfg, keyID: id}, nil
}

// Dispute is a dispute with its outcome, as the site shows it: never who opened or
// decided it.
type Dispute struct {
	ID      int64
	EntryID int64
	Slug    string
	Number  int64
	// RoundID is the contested round's id in the store; Round its public id (the
	// statement's roundId).
	RoundID   int64
	Round     string
	CheckID   string
	Status    attest.CheckStatus
	Statement string
	Evidence  string
	OpenedAt  time.Time
	// Seq is the dispute's ledger sequence number (0 while it waits to be numbered).
	Seq     int64
	Outcome *Outcome
}

// Outcome is an operator's decision on a dispute.
type Outcome struct {
	Decision     string
	SuiteVersion string
	Reason       string
	DecidedAt    time.Time
	Seq          int64
}

// Errors callers branch on (package web maps them to statuses). store.ErrNotFound is
// returned for an unknown entry or dispute.
var (
	// ErrNotMaintainer: the account does not maintain the entry.
	ErrNotMaintainer = errors.New("only the entry's maintainers can contest its findings")
	// ErrNoFinding: the round is not a signed round of the entry, or holds no result
	// of the check.
	ErrNoFinding = errors.New("the round is not a signed round of this entry with that check")
	// ErrOpen: the check of the round has an open dispute already.
	ErrOpen = errors.New("this finding has an open dispute already")
	// ErrRateLimited: the account opened its daily number of disputes.
	ErrRateLimited = errors.New("too many disputes today; try again tomorrow")
	// ErrDecided: the dispute has an outcome already.
	ErrDecided = errors.New("the dispute has an outcome already")
	// ErrOwnDispute: an operator decides no dispute they opened as a maintainer.
	ErrOwnDispute = errors.New("an operator cannot decide a dispute they opened; another operator decides it")
	// ErrPending: a record the new one names is not numbered in the ledger yet; try
	// again in a moment.
	ErrPending = errors.New("the record is not in the ledger yet; try again in a moment")
)

// An InputError is a statement, evidence URL, decision, suite version or reason that
// is not acceptable; its message is for the person who typed it.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// cleanText normalizes text typed in a form: CR LF and CR become LF, NFC, and white
// space around it goes.
func cleanText(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return strings.TrimSpace(norm.NFC.String(s))
}

// maxInput bounds raw form text before it is normalized (four bytes per character).
const maxInput = 4*attest.MaxDisputeText + 64

// Contest opens a dispute of the check checkID of the entry's signed round roundID:
// the account must maintain the entry (ErrNotMaintainer), the round hold the check in
// its signed statement (ErrNoFinding), no dispute of it be open (ErrOpen), and the
// account be under its daily limit (ErrRateLimited); statement and evidence are
// bounded (*InputError). store.ErrNotFound for an unknown entry.
func (s *Service) Contest(ctx context.Context, accountID int64, slug string, roundID int64, checkID, statement, evidence string) (Dispute, error) {
	if len(statement) > maxInput || len(evidence) > attest.MaxEvidenceURL+64 {
		return Dispute{}, &InputError{Msg: fmt.Sprintf("The statement is limited to %d characters and the evidence URL to %d bytes.", attest.MaxDisputeText, attest.MaxEvidenceURL)}
	}
	statement, evidence = cleanText(statement), strings.TrimSpace(evidence)
	if err := attest.CheckDisputeText(statement); err != nil {
		return Dispute{}, &InputError{Msg: "Statement: " + err.Error() + "."}
	}
	if err := attest.CheckEvidenceURL(evidence); err != nil {
		return Dispute{}, &InputError{Msg: "Evidence: " + err.Error() + "."}
	}
	e, err := s.cfg.Store.Entry(ctx, slug)
	if err != nil {
		return Dispute{}, err
	}
	ok, err := s.cfg.Maintainers.IsMaintainer(ctx, accountID, e.ID)
	if err != nil {
		return Dispute{}, fmt.Errorf("couldn't check the maintainers of %s: %w", e.Slug, err)
	}
	if !ok {
		return Dispute{}, ErrNotMaintainer
	}
	now := s.cfg.Now().UTC()
	n, err := s.cfg.Store.DisputesOpenedSince(ctx, accountID, now.Add(-24*time.Hour))
	if err != nil {
		return Dispute{}, err
	}
	if n >= s.cfg.DailyLimit {
		return Dispute{}, ErrRateLimited
	}
	finding, err := s.finding(ctx, e, roundID, checkID)
	if err != nil {
		return Dispute{}, err
	}
	for attempt := 0; ; attempt++ {
		number, err := s.cfg.Store.NextDisputeNumber(ctx, e.ID)
		if err != nil {
			return Dispute{}, err
		}
		p := attest.NewDisputePredicate(attest.EntryRef(e.Kind, e.Slug, e.Locator), number, now, finding, statement, evidence, s.cfg.ToolVersion)
		env, err := s.sign(ctx, attest.NewDisputeStatement(p))
		if err != nil {
			return Dispute{}, fmt.Errorf("couldn't sign dispute %d of %s: %w", number, e.Slug, err)
		}
		rec, err := s.cfg.Store.SaveDispute(ctx, store.NewDispute{EntryID: e.ID, Number: number, RoundID: roundID,
			CheckID: checkID, Status: finding.Status, Statement: statement, Evidence: evidence, OpenedAt: now,
			OpenedBy: accountID, Envelope: env, KeyID: s.keyID})
		switch {
		case errors.Is(err, store.ErrDisputeNumber) && attempt < 3:
			continue // another dispute of the entry took the number: sign the next
		case errors.Is(err, store.ErrDisputeOpen):
			return Dispute{}, ErrOpen
		case errors.Is(err, store.ErrNotFound):
			return Dispute{}, ErrNoFinding
		case err != nil:
			return Dispute{}, err
		}
		s.cfg.Logger.Info("dispute opened", "entry", e.Slug, "number", rec.Number, "seq", rec.Seq, "check", checkID)
		if s.cfg.Changed != nil {
			s.cfg.Changed(ctx, e.Slug)
		}
		return fromRecord(rec), nil
	}
}

// finding reads the contested check result from the round's signed statement: the
// round's record and the status it signed.
func (s *Service) finding(ctx context.Context, e store.Entry, roundID int64, checkID string) (attest.Finding, error) {
	ref, err := s.cfg.Store.SignedRound(ctx, roundID)
	if errors.Is(err, store.ErrNotFound) || err == nil && ref.EntryID != e.ID {
		return attest.Finding{}, ErrNoFinding
	}
	if err != nil {
		return attest.Finding{}, err
	}
	if ref.Seq == 0 {
		return attest.Finding{}, ErrPending
	}
	_, payload, err := attest.ParseEnvelope(ref.Envelope)
	if err != nil {
		return attest.Finding{}, fmt.Errorf("couldn't read the envelope of round %d: %w", roundID, err)
	}
	st, err := attest.DecodeStatement(payload)
	if err != nil || st.Probe == nil {
		return attest.Finding{}, fmt.Errorf("round %d does not hold a probe statement: %v", roundID, err)
	}
	digest := attest.Digest(payload)
	if digest != "sha256:"+ref.PayloadDigest {
		return attest.Finding{}, fmt.Errorf("round %d: the stored payload digest is not the envelope's", roundID)
	}
	for _, c := range st.Probe.Checks {
		if c.ID == checkID {
			return attest.Finding{Record: attest.RecordRef{Seq: ref.Seq, PayloadDigest: digest}, CheckID: c.ID, Status: c.Status}, nil
		}
	}
	return attest.Finding{}, ErrNoFinding
}

// sign checks and signs a statement and returns the envelope's bytes.
func (s *Service) sign(ctx context.Context, st *attest.Statement) ([]byte, error) {
	env, _, err := attest.Sign(ctx, st, s.cfg.Signer)
	if err != nil {
		return nil, err
	}
	return attest.EncodeEnvelope(env)
}

// OfEntry returns the entry's disputes with their outcomes, newest first (at most
// 1,000). store.ErrNotFound for an unknown entry.
func (s *Service) OfEntry(ctx context.Context, slug string) ([]Dispute, error) {
	e, err := s.cfg.Store.Entry(ctx, slug)
	if err != nil {
		return nil, err
	}
	recs, err := s.cfg.Store.Disputes(ctx, store.DisputeFilter{EntryID: e.ID})
	if err != nil {
		return nil, err
	}
	return fromRecords(recs), nil
}

// Queue returns the open disputes, oldest first (at most 1,000): the operator's queue.
func (s *Service) Queue(ctx context.Context) ([]Dispute, error) {
	recs, err := s.cfg.Store.Disputes(ctx, store.DisputeFilter{OpenOnly: true, OldestFirst: true})
	if err != nil {
		return nil, err
	}
	return fromRecords(recs), nil
}

// Decide records an operator's outcome of a dispute: decision upheld, rejected or
// corrected (with suiteVersion, the check suite version that corrects the finding),
// and a reason (*InputError when any is not acceptable). The caller has checked that
// operatorAccountID is an operator. ErrDecided for a dispute with an outcome;
// store.ErrNotFound for an unknown one.
func (s *Service) Decide(ctx context.Context, operatorAccountID, disputeID int64, decision, suiteVersion, reason string) (Dispute, error) {
	suiteVersion = strings.TrimSpace(suiteVersion)
	switch decision {
	case attest.DecisionUpheld, attest.DecisionRejected:
		if suiteVersion != "" {
			return Dispute{}, &InputError{Msg: "Only a corrected finding names a suite version."}
		}
	case attest.DecisionCorrected:
		if !attest.IsToken(suiteVersion) {
			return Dispute{}, &InputError{Msg: "Name the check suite version that corrects it (letters, digits, . _ + -; at most 64)."}
		}
	default:
		return Dispute{}, &InputError{Msg: "Choose upheld, rejected or corrected."}
	}
	if len(reason) > maxInput {
		return Dispute{}, &InputError{Msg: fmt.Sprintf("The reason is limited to %d characters.", attest.MaxDisputeText)}
	}
	reason = cleanText(reason)
	if err := attest.CheckDisputeText(reason); err != nil {
		return Dispute{}, &InputError{Msg: "Reason: " + err.Error() + "."}
	}
	d, err := s.cfg.Store.Dispute(ctx, disputeID)
	if err != nil {
		return Dispute{}, err
	}
	if d.Outcome != nil {
		return Dispute{}, ErrDecided
	}
	if d.OpenedBy != 0 && d.OpenedBy == operatorAccountID {
		return Dispute{}, ErrOwnDispute
	}
	if d.Seq == 0 {
		return Dispute{}, ErrPending
	}
	e, err := s.cfg.Store.EntryByID(ctx, d.EntryID)
	if err != nil {
		return Dispute{}, err
	}
	now := s.cfg.Now().UTC()
	p := attest.NewOutcomePredicate(attest.EntryRef(e.Kind, e.Slug, e.Locator),
		attest.OutcomeDispute{Number: d.Number, Record: attest.RecordRef{Seq: d.Seq, PayloadDigest: "sha256:" + d.PayloadDigest}},
		decision, suiteVersion, reason, now, s.cfg.ToolVersion)
	env, err := s.sign(ctx, attest.NewOutcomeStatement(p))
	if err != nil {
		return Dispute{}, fmt.Errorf("couldn't sign the outcome of dispute %d of %s: %w", d.Number, e.Slug, err)
	}
	rec, err := s.cfg.Store.SaveOutcome(ctx, store.NewOutcome{DisputeID: d.ID, Decision: decision, SuiteVersion: suiteVersion,
		Reason: reason, DecidedAt: now, DecidedBy: operatorAccountID, Envelope: env, KeyID: s.keyID})
	if errors.Is(err, store.ErrDisputeDecided) {
		return Dispute{}, ErrDecided
	}
	if err != nil {
		return Dispute{}, err
	}
	s.cfg.Logger.Info("dispute decided", "entry", e.Slug, "number", rec.Number, "decision", decision, "seq", rec.Outcome.Seq)
	if s.cfg.Changed != nil {
		s.cfg.Changed(ctx, e.Slug)
	}
	return fromRecord(rec), nil
}

func fromRecords(recs []store.DisputeRecord) []Dispute {
	out := make([]Dispute, len(recs))
	for i, r := range recs {
		out[i] = fromRecord(r)
	}
	return out
}

// fromRecord is the public part of a stored dispute: without OpenedBy and DecidedBy.
func fromRecord(r store.DisputeRecord) Dispute {
	d := Dispute{ID: r.ID, EntryID: r.EntryID, Slug: r.EntrySlug, Number: r.Number, RoundID: r.RoundID, Round: r.RoundPublicID,
		CheckID: r.CheckID, Status: r.Status, Statement: r.Statement, Evidence: r.Evidence, OpenedAt: r.OpenedAt, Seq: r.Seq}
	if o := r.Outcome; o != nil {
		d.Outcome = &Outcome{Decision: o.Decision, SuiteVersion: o.SuiteVersion, Reason: o.Reason, DecidedAt: o.DecidedAt, Seq: o.Seq}
	}
	return d
}
