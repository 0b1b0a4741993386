package verifier

import (
	"fmt"
	"slices"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/keys"
)

// LogResult records what VerifyBundle established about a record's place in the log.
type LogResult struct {
	// LogIndex is the record's index in the log (its ledger sequence number minus 1).
	LogIndex int64 `json:"logIndex"`
	// Origin is the log's origin, as the checkpoint names it.
	Origin string `json:"origin"`
	// CheckpointSize is the size of the checkpoint the record is proven against.
	CheckpointSize int64 `json:"checkpointSize"`
	// Cosignatures are the trusted witnesses' verified cosignatures on that checkpoint,
	// earliest first.
	Cosignatures []Cosignature `json:"cosignatures,omitempty"`
	// WitnessedAt is the earliest of them: the record was in the log by then. Zero when
	// no trusted witness cosigned.
	WitnessedAt time.Time `json:"witnessedAt,omitzero"`
	// PreviousSize is the size of the previous checkpoint (which does not hold the
	// record), when the bundle has one.
	PreviousSize *int64 `json:"previousSize,omitempty"`
	// NotBefore is the latest trusted cosignature on the previous checkpoint: the record
	// was logged after it. Zero when unknown.
	NotBefore time.Time `json:"notBefore,omitzero"`
}

// VerifyBundle checks a bundle (attest.ParseBundle's format): its envelope as Verify does,
// and the record's place in the log, in this order after the envelope's steps 1 to 6:
//
//  1. The checkpoint is a signed note signed by the log key (Policy.LogKey, else the key
//     document's), its origin is that key's name, and every cosignature by a trusted
//     witness (Policy.WitnessKeys, tlog-cosignature/v1) verifies.
//  2. The leaf rebuilt from the record (attest.RecordLeaf(logIndex+1, kind, envelope)) is
//     at logIndex in the checkpoint's tree: the inclusion proof holds (RFC 6962). Its
//     kind is the statement's (RecordKind), else malformed_bundle.
//  3. A previous checkpoint, when present, verifies as in 1, has a size at most logIndex,
//     and the consistency proof shows the checkpoint extends it.
//  4. At least Policy.MinWitnesses trusted witnesses cosigned the checkpoint.
//  5. The signing keys, as Verify's step 7, except that a key revoked at R still vouches
//     for a record a trusted witness cosigned a checkpoint of before R (the earliest
//     trusted cosignature is before R); revoked keys fail as logged_after_revocation
//     when a witness saw the record only at or after R, as revoked_key when no trusted
//     witness saw it at all.
//  6. Time: the record's own time (Result.ObservedAt), in whole seconds, is not after the
//     earliest trusted cosignature on the checkpoint (else postdated), nor more than
//     Policy.MaxBackdate before the latest trusted cosignature on the previous checkpoint
//     (else backdated).
//  7. The policy, as Verify's step 8.
//
// Checkpoints are verified once per distinct note text and keys, however many bundles
// name them. The result's Log records the index, checkpoint and witnesses.
func VerifyBundle(bundle []byte, doc *keys.Document, policy Policy) (*Result, error) {
	if err := policy.Validate(); err != nil {
		return nil, err
	}
	if doc == nil || len(doc.Keys) == 0 {
		return nil, fmt.Errorf("%w: no keys to verify against", ErrPolicy)
	}
	logKey := policy.LogKey
	if logKey == "" {
		logKey = documentLogKey(doc)
	}
	if logKey == "" {
		return nil, fmt.Errorf("%w: no log key to verify the checkpoint with (give Policy.LogKey, or a key document that lists the log)", ErrPolicy)
	}
	tk, err := parseTrusted(logKey, policy.WitnessKeys)
	if err != nil {
		return nil, err
	}

	r := &Result{}
	fail := func(reason FailureReason, format string, args ...any) (*Result, error) {
		r.Failure = &Failure{Reason: reason, Detail: fmt.Sprintf(format, args...)}
		return r, r.Failure
	}
	b, err := parseBundle(bundle)
	if err != nil {
		return fail(ReasonMalformedBundle, "%v", err)
	}
	var signers []*keys.Key
	if b.env != nil {
		signers, err = authenticateParsed(r, b.env, doc)
	} else {
		signers, err = authenticate(r, b.envelope, doc)
	}
	if err != nil {
		return r, err
	}

	cp, err := b.openCheckpoint(tk, false)
	if err != nil {
		r.Failure = err.(*Failure)
		return r, err
	}
	lr := &LogResult{LogIndex: b.logIndex, Origin: cp.Origin, CheckpointSize: cp.Size, Cosignatures: slices.Clone(cp.Cosignatures), WitnessedAt: cp.Earliest()}
	r.Log = lr
	if b.logIndex >= cp.Size {
		return fail(ReasonInclusion, "log index %d is not in a checkpoint of size %d", b.logIndex, cp.Size)
	}
	leafHash, err := recordLeafHash(b.logIndex+1, b.kind, b.envelope)
	if err != nil {
		return fail(ReasonMalformedBundle, "%v", err)
	}
	if err := tlog.CheckRecord(b.proof, cp.Size, cp.Hash, b.logIndex, leafHash); err != nil {
		return fail(ReasonInclusion, "the record's leaf at index %d is not in the checkpoint's tree of size %d: %v", b.logIndex, cp.Size, err)
	}
	// The leaf's kind is the log's word for what the record is, and the time bounds
	// depend on it (key document versions are exempt from the backdating bound): the
	// leaf the log holds must name the statement's own.
	if want := RecordKind(r.PredicateType); b.kind != want {
		return fail(ReasonMalformedBundle, "the log holds the record as kind %q, but its statement is a %s record", b.kind, want)
	}

	if b.previous != nil || b.previousRaw != nil {
		prev, err := b.openCheckpoint(tk, true)
		if err != nil {
			f := *err.(*Failure)
			f.Detail = "previous checkpoint: " + f.Detail
			r.Failure = &f
			return r, r.Failure
		}
		if prev.Size > b.logIndex {
			return fail(ReasonMalformedBundle, "the previous checkpoint has %d leaves, so it holds the record at index %d", prev.Size, b.logIndex)
		}
		if err := checkConsistency(prev.Checkpoint, cp.Checkpoint, b.consistency); err != nil {
			return fail(ReasonInconsistent, "%v", err)
		}
		size := prev.Size
		lr.PreviousSize, lr.NotBefore = &size, prev.Latest()
	}
	if n := len(cp.Cosignatures); n < policy.MinWitnesses {
		return fail(ReasonTooFewWitnesses, "%d trusted witnesses cosigned the checkpoint, the policy requires %d", n, policy.MinWitnesses)
	}

	if f := checkKeys(r, signers, lr.WitnessedAt); f != nil {
		return r, f
	}
	if f := CheckTimeBounds(b.kind, r.ObservedAt, lr.WitnessedAt, lr.NotBefore, policy.maxBackdate()); f != nil {
		r.Failure = f
		return r, f
	}
	if f := checkPolicy(r, signers, policy); f != nil {
		return r, f
	}
	return r, nil
}

// Consistency is what CheckConsistency verified: the saved checkpoint and the newer one
// that extends it. Either is nil when it did not verify.
type Consistency struct {
	Saved *VerifiedCheckpoint
	Newer *VerifiedCheckpoint
}

// CheckConsistency checks that newer extends saved, two checkpoint notes of one log (for
// an auditor who saved a checkpoint and later reads a newer one): both verify as
// VerifyBundle's checkpoints do (log key from the policy or doc, which may then be nil;
// trusted cosignatures; MinWitnesses on newer), and proof is the RFC 6962 consistency
// proof from saved's size to newer's (empty for equal sizes, which must have equal
// hashes). The error is a *Failure (inconsistent_checkpoints, or a checkpoint's own
// reason) or wraps ErrPolicy.
func CheckConsistency(saved, newer []byte, proof [][]byte, doc *keys.Document, policy Policy) (*Consistency, error) {
	if err := policy.Validate(); err != nil {
		return nil, err
	}
	logKey := policy.LogKey
	if logKey == "" && doc != nil {
		logKey = documentLogKey(doc)
	}
	if logKey == "" {
		return nil, fmt.Errorf("%w: no log key to verify the checkpoints with", ErrPolicy)
	}
	tk, err := parseTrusted(logKey, policy.WitnessKeys)
	if err != nil {
		return nil, err
	}
	c := &Consistency{}
	if len(proof) > 2*63 {
		return c, &Failure{Reason: ReasonInconsistent, Detail: "proof longer than any tree needs"}
	}
	for _, h := range proof {
		if len(h) != tlog.HashSize {
			return c, &Failure{Reason: ReasonInconsistent, Detail: fmt.Sprintf("proof hash of %d bytes, want %d", len(h), tlog.HashSize)}
		}
	}
	if c.Saved, err = cloneResult(openCheckpoint(saved, tk)); err != nil {
		f := *err.(*Failure)
		f.Detail = "saved checkpoint: " + f.Detail
		return c, &f
	}
	if c.Newer, err = cloneResult(openCheckpoint(newer, tk)); err != nil {
		f := *err.(*Failure)
		f.Detail = "newer checkpoint: " + f.Detail
		return c, &f
	}
	if err := checkConsistency(c.Saved.Checkpoint, c.Newer.Checkpoint, hashes(proof)); err != nil {
		return c, &Failure{Reason: ReasonInconsistent, Detail: err.Error()}
	}
	if n := len(c.Newer.Cosignatures); n < policy.MinWitnesses {
		return c, &Failure{Reason: ReasonTooFewWitnesses, Detail: fmt.Sprintf("%d trusted witnesses cosigned the newer checkpoint, the policy requires %d", n, policy.MinWitnesses)}
	}
	return c, nil
}

// hashes converts proof hashes, checked to be 32 bytes, to tlog's.
func hashes(p [][]byte) []tlog.Hash {
	out := make([]tlog.Hash, len(p))
	for i, h := range p {
		copy(out[i][:], h)
	}
	return out
}

// openCheckpoint verifies the bundle's checkpoint (or previous checkpoint), memoized by
// the JSON text it was read from when the fast path read it, else by the note's text.
func (b *parsedBundle) openCheckpoint(tk *trustedKeys, previous bool) (*VerifiedCheckpoint, error) {
	text, raw := b.checkpoint, b.checkpointRaw
	if previous {
		text, raw = b.previous, b.previousRaw
	}
	if raw == nil {
		return openCheckpoint(text, tk)
	}
	if e, ok := getBytes(&tk.raw, raw); ok {
		return e.result()
	}
	cp, err := openCheckpoint(unescapeNote(raw), tk)
	e := &checkpointEntry{cp: cp}
	if err != nil {
		e.fail = err.(*Failure)
	}
	tk.raw.put(string(raw), e)
	return e.result()
}

// RecordKind is the log leaf kind of a record with the given predicate type (the kind a
// bundle and its leaf must name): probe, change, supply, keys, dispute or outcome; ""
// for any other type.
// bundle and its leaf must name): probe, change, supply, keys or withdrawal; "" for any other type.
// bundle and its leaf must name): probe, change, supply, keys or baseline; "" for any other type.
func RecordKind(predicateType string) string {
	switch predicateType {
	case attest.ProbePredicateType:
		return "probe"
	case attest.ChangePredicateType:
		return "change"
	case attest.SupplyPredicateType:
		return "supply"
	case attest.KeysPredicateType:
		return "keys"
	case attest.DisputePredicateType:
		return "dispute"
	case attest.OutcomePredicateType:
		return "outcome"
	case attest.WithdrawalPredicateType:
		return "withdrawal"
	case attest.BaselinePredicateType:
		return "baseline"
	}
	return ""
}

// documentLogKey is the log's verifier key the key document lists (format 2), if any;
// keys.Document.Validate holds its name to the log's origin.
func documentLogKey(doc *keys.Document) string {
	if doc.Log == nil {
		return ""
	}
	return doc.Log.Key
}

// CheckTimeBounds holds a logged record's own time (observedAt, recordedAt, evaluatedAt
// or issuedAt) to the witnessed times around its logging; it is the one place the rule
// is written (VerifyBundle and the log audit use it):
//
//   - not after witnessedAt, the earliest trusted cosignature on the first checkpoint
//     that holds the record (postdated), compared at whole seconds, a
//     tlog-cosignature/v1 timestamp's precision;
//   - not more than maxBackdate before notBefore, the latest trusted cosignature on a
//     checkpoint that did not hold it (backdated). A key document version (kind keys)
//     is exempt: a rotation made while the service runs is logged when the service
//     next looks for it, and the key history's own rules date it.
//
// A zero witnessedAt or notBefore is not checked. kind must be the record's own, checked
// against its statement (RecordKind): a leaf's kind is only the log's word.
func CheckTimeBounds(kind string, recorded, witnessedAt, notBefore time.Time, maxBackdate time.Duration) *Failure {
	if !witnessedAt.IsZero() && recorded.Truncate(time.Second).After(witnessedAt) {
		return &Failure{Reason: ReasonPostdated, Detail: fmt.Sprintf("the record's time %s is after its checkpoint was first witnessed, at %s", attest.FormatTime(recorded), attest.FormatTime(witnessedAt))}
	}
	if kind != "keys" && !notBefore.IsZero() && recorded.Before(notBefore.Add(-maxBackdate)) {
		return &Failure{Reason: ReasonBackdated, Detail: fmt.Sprintf("the record's time %s is more than %s before a checkpoint that did not hold it was witnessed, at %s", attest.FormatTime(recorded), maxBackdate, attest.FormatTime(notBefore))}
	}
	return nil
}
