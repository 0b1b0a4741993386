// Package verifier checks Probity's DSSE envelopes and log bundles offline, against a
// key document and a policy, and returns a typed result that records what was verified.
// It is verification only: bytes and a key document in, a Result out. It reads no file,
// directory or stream (that is verifier/cli's, which walks paths and streams JSONL
// exports through Verify and VerifyBundle) and imports no network, storage or web
// package: an auditor reads it beside attest and keys, and builds it from the standard
// library, golang.org/x (of golang.org/x/mod only sumdb/note and sumdb/tlog), jcs and
// go-securesystemslib alone.
//
// An envelope verifies when all of these hold, checked in this order:
//
//  1. The envelope is strict JSON (CheckJSON: no duplicate keys, no invalid UTF-8, no
//     trailing data) with exactly the members payloadType, payload and signatures, each
//     signature exactly keyid and sig, all base64 standard and padded.
//  2. payloadType is exactly application/vnd.in-toto+json.
//  3. It carries 1 to 4 signatures.
//  4. Every signature names a key id listed in the key document, no public key signs
//     twice (under the same or another key id), and every signature is a valid Ed25519
//     signature over the DSSE PAE of the payload.
//  5. The payload is exactly its own nfc-jcs/v1 canonical form.
//  6. The payload is an in-toto Statement v1 of a known predicateType whose predicate is
//     valid against its JSON Schema and the format's further rules (attest.DecodeStatement).
//  7. No signing key is revoked, and each key's validity window contains the predicate's
//     observedAt (inclusive, millisecond precision).
//  8. The policy holds: enough distinct keys signed, and the predicate type is allowed.
//
// Signatures are authenticated before the payload is parsed beyond the envelope, so the
// statement decoder only ever sees signed bytes.
//
// A bundle (attest's "Bundle") is an envelope with its proof of inclusion in Probity's
// transparency log; VerifyBundle checks it as its documentation lists: the envelope's
// steps 1 to 6, the log's signed checkpoint and the trusted witnesses' cosignatures
// (C2SP tlog-checkpoint, signed-note, tlog-cosignature/v1), the inclusion proof of the
// leaf rebuilt from the envelope (whose kind must be the statement's), the consistency
// of the previous checkpoint, then step 7 with the revocation rule below, the record's
// time against the witnessed times, and step 8.
//
// Revocation. A signature by a key revoked at time R is valid for a record that was
// logged and witnessed before R: some trusted witness cosigned a checkpoint holding the
// record with a timestamp before R (a bundle's checkpoint is the earliest that holds its
// record, so its earliest trusted cosignature is when the record was first witnessed).
// Otherwise, and always for a bare envelope, it is invalid (revoked_key, or
// logged_after_revocation when a witness saw the record only at or after R).
//
// Time. Witness cosignatures carry the witness's own clock (whole seconds). A record's
// time (a probe's observedAt, a change's recordedAt, a supply run's evaluatedAt, a key
// document version's issuedAt) must not be after the earliest trusted cosignature on the
// checkpoint holding it (postdated), nor earlier than the latest trusted cosignature on
// the checkpoint before it by more than Policy.MaxBackdate, one hour by default
// (backdated). Without trusted witnesses there is no time to hold a record to.
//
// Each checkpoint is verified once per distinct note and key set, however many bundles
// name it. Compact bundles, envelopes and canonical probe statements, the forms Probity
// writes, are read by scanners that accept only those forms (fast.go); anything else
// goes to attest's general parsers, which decide.
package verifier

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/keys"
)

// FailureReason says why an envelope failed to verify. The values are stable: reports and
// test vectors use them.
type FailureReason string

// The reasons an envelope can fail.
const (
	ReasonMalformedEnvelope    FailureReason = "malformed_envelope"
	ReasonPayloadType          FailureReason = "wrong_payload_type"
	ReasonSignatureCount       FailureReason = "signature_count"
	ReasonUnknownKey           FailureReason = "unknown_key"
	ReasonDuplicateKey         FailureReason = "duplicate_key"
	ReasonBadSignature         FailureReason = "bad_signature"
	ReasonNonCanonical         FailureReason = "non_canonical_payload"
	ReasonMalformedStatement   FailureReason = "malformed_statement"
	ReasonUnknownPredicateType FailureReason = "unknown_predicate_type"
	ReasonSchemaViolation      FailureReason = "schema_violation"
	ReasonRevokedKey           FailureReason = "revoked_key"
	ReasonOutsideWindow        FailureReason = "outside_key_window"
	ReasonPolicy               FailureReason = "policy_not_met"

	// The reasons a bundle can fail besides its envelope's (see VerifyBundle).
	ReasonMalformedBundle       FailureReason = "malformed_bundle"
	ReasonInclusion             FailureReason = "inclusion_mismatch"
	ReasonCheckpointSignature   FailureReason = "bad_checkpoint_signature"
	ReasonWrongOrigin           FailureReason = "wrong_origin"
	ReasonTooFewWitnesses       FailureReason = "too_few_witnesses"
	ReasonBadCosignature        FailureReason = "bad_cosignature"
	ReasonInconsistent          FailureReason = "inconsistent_checkpoints"
	ReasonBackdated             FailureReason = "backdated"
	ReasonPostdated             FailureReason = "postdated"
	ReasonLoggedAfterRevocation FailureReason = "logged_after_revocation"
)

// A Failure is the error Verify returns for an envelope that does not verify.
type Failure struct {
	Reason FailureReason `json:"reason"`
	Detail string        `json:"detail,omitempty"`
}

func (f *Failure) Error() string {
	if f.Detail == "" {
		return string(f.Reason)
	}
	return fmt.Sprintf("%s: %s", f.Reason, f.Detail)
}

// SignatureOutcome is the result of checking one signature.
type SignatureOutcome string

// OutcomeValid marks a signature that passed every check; any other outcome is the
// FailureReason that signature failed with.
const OutcomeValid SignatureOutcome = "valid"

// SignatureResult records one signature's key id and outcome.
type SignatureResult struct {
	KeyID   string           `json:"keyId"`
	Outcome SignatureOutcome `json:"outcome"`
}

// Result records what Verify established. On failure it holds whatever was learned
// before the failing step, and Failure says why.
type Result struct {
	PayloadType   string                   `json:"payloadType,omitempty"`
	PredicateType string                   `json:"predicateType,omitempty"`
	Subject       *attest.Subject          `json:"subject,omitempty"`
	Coverage      attest.Coverage          `json:"coverage,omitempty"`
	ObservedAt    time.Time                `json:"-"`
	Signatures    []SignatureResult        `json:"signatures,omitempty"`
	Statement     *attest.DecodedStatement `json:"-"`
	// PayloadDigest is "sha256:" + the hex SHA-256 of the envelope's payload, set once
	// the statement decoded (what a later record, e.g. an outcome, names it by).
	PayloadDigest string `json:"-"`
	// Log is set by VerifyBundle once the bundle's checkpoint verified.
	Log     *LogResult `json:"log,omitempty"`
	Failure *Failure   `json:"failure,omitempty"`
}

// MarshalJSON writes observedAt in attest.TimeLayout, as the statement has it.
func (r *Result) MarshalJSON() ([]byte, error) {
	type plain Result
	w := struct {
		*plain
		ObservedAt string `json:"observedAt,omitempty"`
	}{plain: (*plain)(r)}
	if !r.ObservedAt.IsZero() {
		w.ObservedAt = attest.FormatTime(r.ObservedAt)
	}
	return json.Marshal(w)
}

// OK reports whether the envelope verified.
func (r *Result) OK() bool { return r != nil && r.Failure == nil }

// Policy is what a caller requires beyond the format's rules.
type Policy struct {
	// Threshold is how many distinct keys must have signed, 1 to 4. Every signature
	// present must be valid regardless.
	Threshold int
	// PredicateTypes lists the predicate types accepted; empty accepts every type this
	// version knows.
	PredicateTypes []string

	// RequireLog makes Verify fail every bare envelope: only a bundle, with its proof of
	// inclusion in the log, can pass.
	RequireLog bool
	// LogKey is the log's checkpoint verifier key, a C2SP signed-note vkey
	// (origin+hash+base64(0x01 || Ed25519 public key)); its name is the log's origin.
	// Empty: the key document's log key.
	LogKey string
	// WitnessKeys are the witnesses trusted for cosignatures, each a signed-note vkey of
	// type 0x04 (tlog-cosignature/v1), each public key once (a cosignature does not
	// cover the witness's name). Cosignatures by other keys are ignored.
	WitnessKeys []string
	// MinWitnesses is how many of WitnessKeys must have cosigned a bundle's checkpoint.
	MinWitnesses int
	// MaxBackdate is how much earlier than the latest trusted cosignature on a bundle's
	// previous checkpoint its record's own time may be (a record is signed, then logged
	// at the next integration; clocks differ). Zero means DefaultMaxBackdate.
	MaxBackdate time.Duration
}

// DefaultMaxBackdate is Policy.MaxBackdate's default: one hour.
const DefaultMaxBackdate = time.Hour

// DefaultPolicy accepts one valid signature over any known predicate type.
func DefaultPolicy() Policy { return Policy{Threshold: 1} }

// ErrPolicy is returned, wrapped, when a Policy is empty or contradictory.
var ErrPolicy = errors.New("verifier: invalid policy")

// Validate reports an empty or contradictory policy, wrapping ErrPolicy.
func (p Policy) Validate() error {
	if p.Threshold < 1 || p.Threshold > attest.MaxSignatures {
		return fmt.Errorf("%w: threshold %d is not between 1 and %d", ErrPolicy, p.Threshold, attest.MaxSignatures)
	}
	for _, t := range p.PredicateTypes {
		if _, ok := attest.PredicateSchema(t); !ok {
			return fmt.Errorf("%w: predicate type %q is unknown", ErrPolicy, t)
		}
	}
	switch {
	case p.MinWitnesses < 0 || p.MinWitnesses > len(p.WitnessKeys):
		return fmt.Errorf("%w: %d witnesses required of the %d witness keys given", ErrPolicy, p.MinWitnesses, len(p.WitnessKeys))
	case p.MaxBackdate < 0:
		return fmt.Errorf("%w: negative MaxBackdate %s", ErrPolicy, p.MaxBackdate)
	}
	if p.LogKey != "" || len(p.WitnessKeys) > 0 {
		if _, err := parseTrusted(p.LogKey, p.WitnessKeys); err != nil {
			return err
		}
	}
	return nil
}

func (p Policy) maxBackdate() time.Duration {
	if p.MaxBackdate == 0 {
		return DefaultMaxBackdate
	}
	return p.MaxBackdate
}

// Verify checks one envelope against a validated key document (from keys.Load or
// keys.Parse) and a policy. It returns a Result in every case but an invalid policy or
// a nil document; the error is a *Failure when the envelope does not verify. A policy
// with RequireLog fails every bare envelope: use VerifyBundle.
func Verify(envelope []byte, doc *keys.Document, policy Policy) (*Result, error) {
	if err := policy.Validate(); err != nil {
		return nil, err
	}
	if doc == nil || len(doc.Keys) == 0 {
		return nil, fmt.Errorf("%w: no keys to verify against", ErrPolicy)
	}
	r := &Result{}
	if policy.RequireLog {
		r.Failure = &Failure{Reason: ReasonPolicy, Detail: "a bare envelope carries no proof of inclusion in the log, and the policy requires one"}
		return r, r.Failure
	}
	signers, err := authenticate(r, envelope, doc)
	if err != nil {
		return r, err
	}
	if f := checkKeys(r, signers, time.Time{}); f != nil {
		return r, f
	}
	if f := checkPolicy(r, signers, policy); f != nil {
		return r, f
	}
	return r, nil
}

// authenticate applies steps 1 to 6 of the package documentation: the envelope's shape,
// its signatures by listed keys, then the payload's canonical form and statement rules.
// It fills r and returns the signing keys, or the *Failure it recorded in r.
func authenticate(r *Result, envelope []byte, doc *keys.Document) ([]*keys.Key, error) {
	fail := func(reason FailureReason, format string, args ...any) ([]*keys.Key, error) {
		r.Failure = &Failure{Reason: reason, Detail: fmt.Sprintf(format, args...)}
		return nil, r.Failure
	}

	env, err := parseEnvelope(envelope)
	if err != nil {
		return fail(ReasonMalformedEnvelope, "%v", err)
	}
	return authenticateParsed(r, env, doc)
}

// authenticateParsed is authenticate after the envelope's shape (step 1) was checked.
func authenticateParsed(r *Result, env *parsedEnvelope, doc *keys.Document) ([]*keys.Key, error) {
	fail := func(reason FailureReason, format string, args ...any) ([]*keys.Key, error) {
		r.Failure = &Failure{Reason: reason, Detail: fmt.Sprintf(format, args...)}
		return nil, r.Failure
	}
	r.PayloadType = env.payloadType
	if env.payloadType != attest.PayloadType {
		return fail(ReasonPayloadType, "payloadType is %q, want %q", clip(env.payloadType), attest.PayloadType)
	}
	if n := len(env.sigs); n < 1 || n > attest.MaxSignatures {
		return fail(ReasonSignatureCount, "%d signatures, want 1 to %d", n, attest.MaxSignatures)
	}
	payload := env.payload

	// Authenticate before parsing the payload.
	pae := env.pae
	if pae == nil {
		pae = attest.PAE(payload)
	}
	signers := make([]*keys.Key, len(env.sigs))
	var firstBad *Failure
	var seen []ed25519.PublicKey
	for i, s := range env.sigs {
		sig := s.sig
		sr := SignatureResult{KeyID: clip(s.keyID), Outcome: OutcomeValid}
		k, ok := doc.Lookup(s.keyID)
		var pub ed25519.PublicKey
		if ok {
			if pub = k.PublicKey(); len(pub) != ed25519.PublicKeySize {
				return nil, fmt.Errorf("%w: key %q of the key document has no valid public key (validate the document first)", ErrPolicy, clip(s.keyID))
			}
		}
		switch {
		case !ok:
			sr.Outcome = SignatureOutcome(ReasonUnknownKey)
		case slices.ContainsFunc(seen, func(p ed25519.PublicKey) bool { return bytes.Equal(p, pub) }):
			sr.Outcome = SignatureOutcome(ReasonDuplicateKey)
		case len(sig) != ed25519.SignatureSize || !ed25519.Verify(pub, pae, sig):
			sr.Outcome = SignatureOutcome(ReasonBadSignature)
		}
		if ok {
			seen = append(seen, pub)
			signers[i] = k
		}
		if sr.Outcome != OutcomeValid && firstBad == nil {
			firstBad = &Failure{Reason: FailureReason(sr.Outcome), Detail: fmt.Sprintf("signature %d (key id %q)", i, sr.KeyID)}
		}
		r.Signatures = append(r.Signatures, sr)
	}
	if firstBad != nil {
		r.Failure = firstBad
		return nil, firstBad
	}

	st, err := decodeStatement(payload)
	if st != nil {
		r.PredicateType = st.PredicateType
		if len(st.Subject) > 0 {
			r.Subject = &st.Subject[0]
		}
	}
	if err != nil {
		var se *attest.SchemaError
		var je *attest.JSONError
		switch {
		case errors.Is(err, attest.ErrNotCanonical), errors.As(err, &je):
			return fail(ReasonNonCanonical, "%v", err)
		case errors.Is(err, attest.ErrUnknownPredicateType):
			return fail(ReasonUnknownPredicateType, "%v", err)
		case errors.As(err, &se):
			return fail(ReasonSchemaViolation, "%v", err)
		default:
			return fail(ReasonMalformedStatement, "%v", err)
		}
	}
	r.Statement = st
	r.PayloadDigest = attest.Digest(payload)
	r.ObservedAt = st.ObservedAt
	if st.Probe != nil {
		r.Coverage = st.Probe.Coverage
	}
	return signers, nil
}

// checkKeys applies step 7: no signing key revoked, each key's window holding the
// record's time. witnessed is the earliest trusted witness cosignature on a checkpoint
// holding the record (zero for a bare envelope): a key revoked at R still vouches for a
// record witnessed before R.
func checkKeys(r *Result, signers []*keys.Key, witnessed time.Time) *Failure {
	for i, k := range signers {
		switch {
		case k.Revoked() && witnessed.IsZero():
			r.Signatures[i].Outcome = SignatureOutcome(ReasonRevokedKey)
		case k.Revoked() && !witnessed.Before(*k.RevokedAt):
			r.Signatures[i].Outcome = SignatureOutcome(ReasonLoggedAfterRevocation)
		case !k.ValidAt(r.ObservedAt):
			r.Signatures[i].Outcome = SignatureOutcome(ReasonOutsideWindow)
		}
		if o := r.Signatures[i].Outcome; o != OutcomeValid && r.Failure == nil {
			detail := fmt.Sprintf("key %s at observedAt %s", k.KeyID, attest.FormatTime(r.ObservedAt))
			if FailureReason(o) == ReasonLoggedAfterRevocation {
				detail = fmt.Sprintf("key %s revoked at %s, first witnessed at %s", k.KeyID, attest.FormatTime(*k.RevokedAt), attest.FormatTime(witnessed))
			}
			r.Failure = &Failure{Reason: FailureReason(o), Detail: detail}
		}
	}
	return r.Failure
}

// checkPolicy applies step 8.
func checkPolicy(r *Result, signers []*keys.Key, policy Policy) *Failure {
	switch {
	case len(policy.PredicateTypes) > 0 && !slices.Contains(policy.PredicateTypes, r.PredicateType):
		r.Failure = &Failure{Reason: ReasonPolicy, Detail: fmt.Sprintf("predicate type %q is not accepted by the policy", r.PredicateType)}
	case len(signers) < policy.Threshold:
		r.Failure = &Failure{Reason: ReasonPolicy, Detail: fmt.Sprintf("%d distinct keys signed, the policy requires %d", len(signers), policy.Threshold)}
	}
	return r.Failure
}

// clip bounds attacker-controlled text echoed in results and messages.
func clip(s string) string {
	if len(s) <= 64 {
		return s
	}
	cut := 64
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
