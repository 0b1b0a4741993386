package verifier

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/keys"
)

// This file reads records for people ("probity inspect"): what an envelope, a bundle, a
// key document or a tombstone document says, decoded by attest's strict parsers, without
// deciding whether to trust it. Verify and VerifyBundle decide that; a Description only
// carries their Result beside what it read.

// Description is what one record says: its statement's types, subject, entry, times,
// checks, fingerprints and signers, and for a bundle its place in the log as the bundle
// claims it (unverified until Verification says otherwise).
type Description struct {
	// Form is "envelope", "bundle", "key_document" or "tombstone".
	Form          string           `json:"form"`
	PayloadType   string           `json:"payloadType,omitempty"`
	StatementType string           `json:"statementType,omitempty"`
	PredicateType string           `json:"predicateType,omitempty"`
	RecordKind    string           `json:"recordKind,omitempty"`
	Subject       []attest.Subject `json:"subject,omitempty"`
	// Times are the statement's own times by name (observedAt, recordedAt, evaluatedAt,
	// issuedAt, approvedAt), in attest.TimeLayout.
	Times []NamedTime `json:"times,omitempty"`
	// KeyIDs are the key ids the signatures name, in order.
	KeyIDs []string `json:"keyIds,omitempty"`

	Probe  *attest.ProbePredicate  `json:"probe,omitempty"`
	Change *attest.ChangePredicate `json:"change,omitempty"`
	Supply *attest.SupplyPredicate `json:"supply,omitempty"`
	// Dispute and Outcome hold a maintainer's statement and an operator's reason: text
	// from people, to be shown as plain text.
	Dispute *attest.DisputePredicate `json:"dispute,omitempty"`
	Outcome *attest.OutcomePredicate `json:"outcome,omitempty"`
	Keys    *KeysVersionDescription  `json:"keys,omitempty"`
	// Withdrawal is a withdrawal/v1 record: Verified withdrawn from an entry, or
	// restored. Its reason is text an operator wrote: show it as plain text.
	Withdrawal *attest.WithdrawalPredicate `json:"withdrawal,omitempty"`
	// Baseline is an approved baseline (baseline/v1).
	Baseline *attest.BaselinePredicate `json:"baseline,omitempty"`

	Log          *LogClaim               `json:"log,omitempty"`
	KeyDocument  *KeyDocumentDescription `json:"keyDocument,omitempty"`
	Tombstone    *TombstoneDescription   `json:"tombstone,omitempty"`
	Verification *Verification           `json:"verification,omitempty"`
}

// NamedTime is one of a statement's times.
type NamedTime struct {
	Name string `json:"name"`
	Time string `json:"time"`
}

// KeysVersionDescription is a signed key document version (keys/v1) without its
// document, which KeyDocument describes.
type KeysVersionDescription struct {
	Version  int    `json:"version"`
	Event    string `json:"event"`
	IssuedAt string `json:"issuedAt"`
	Previous string `json:"previous,omitempty"`
}

// LogClaim is what a bundle says about its record's place in the log: the log index,
// the checkpoint's origin, size and root, the names on its signature lines, the proof
// lengths. None of it is checked here; VerifyBundle checks it.
type LogClaim struct {
	LogIndex             int64    `json:"logIndex"`
	Kind                 string   `json:"kind"`
	CheckpointOrigin     string   `json:"checkpointOrigin"`
	CheckpointSize       int64    `json:"checkpointSize"`
	CheckpointRoot       string   `json:"checkpointRoot"`
	CheckpointSigners    []string `json:"checkpointSigners"`
	InclusionProofHashes int      `json:"inclusionProofHashes"`
	PreviousSize         *int64   `json:"previousSize,omitempty"`
	ConsistencyHashes    int      `json:"consistencyProofHashes,omitempty"`
}

// KeyDocumentDescription is a key document with each key's digests recomputed from its
// SPKI, so that a reader pinning a key compares what the key is, not what the document
// says about it.
type KeyDocumentDescription struct {
	FormatVersion int              `json:"formatVersion"`
	Issuer        string           `json:"issuer"`
	Keys          []KeyDescription `json:"keys"`
	LogOrigin     string           `json:"logOrigin,omitempty"`
	LogKey        string           `json:"logKey,omitempty"`
	// WebhookKey is the key that signs the issuer's webhook deliveries ("whpk_…",
	// format_version 3).
	WebhookKey string `json:"webhookKey,omitempty"`
}

// KeyDescription is one key of a key document: its id and SHA-256 recomputed over the
// SPKI DER (keys' definitions of key_id and spki_sha256), its window and revocation, and
// whether it may sign at the time of the description.
type KeyDescription struct {
	KeyID            string `json:"keyId"`
	SPKISHA256       string `json:"spkiSha256"`
	ValidFrom        string `json:"validFrom"`
	ValidUntil       string `json:"validUntil,omitempty"`
	RevokedAt        string `json:"revokedAt,omitempty"`
	RevocationReason string `json:"revocationReason,omitempty"`
	ValidNow         bool   `json:"validNow"`
}

// TombstoneDescription is a tombstone document (attest.TombstoneDocument): an entry's
// deletion and the records it removed.
type TombstoneDescription struct {
	Entry     string               `json:"entry"`
	Reason    string               `json:"reason"`
	DeletedAt string               `json:"deletedAt"`
	Removed   []TombstoneReference `json:"removed"`
}

// TombstoneReference is one record a tombstone removed.
type TombstoneReference struct {
	Seq           int64  `json:"seq"`
	Kind          string `json:"kind"`
	PayloadDigest string `json:"payloadDigest"`
}

// Verification is the outcome of Verify or VerifyBundle on a described record: whether it
// verified, and the Result that says what was established or why not.
type Verification struct {
	Verified bool    `json:"verified"`
	Result   *Result `json:"result,omitempty"`
}

// A DescribeError says why bytes could not be read as a record at all (as opposed to a
// record that reads but does not verify).
type DescribeError struct{ Msg string }

func (e *DescribeError) Error() string { return e.Msg }

func describeErr(format string, args ...any) error {
	return &DescribeError{Msg: fmt.Sprintf(format, args...)}
}

// Describe reads one JSON value: a DSSE envelope, a bundle, a key document or a
// tombstone document, chosen by its top-level members (payloadType, bundle,
// format_version, deletedAt). now decides which keys of a key document are valid now.
// Every parse is attest's or keys' strict one; the error is a *DescribeError.
func Describe(data []byte, now time.Time) (*Description, error) {
	if err := attest.CheckJSON(data); err != nil {
		return nil, describeErr("not strict JSON: %v", err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, describeErr("not a JSON object")
	}
	switch {
	case top["bundle"] != nil:
		return describeBundle(data)
	case top["payloadType"] != nil || top["signatures"] != nil:
		return describeEnvelope(data)
	case top["format_version"] != nil:
		return describeKeyDocument(data, now)
	case top["deletedAt"] != nil && top["removed"] != nil:
		return describeTombstone(data)
	}
	return nil, describeErr("neither a DSSE envelope, a bundle, a key document nor a tombstone document (no payloadType, bundle, format_version or deletedAt member)")
}

// VerifyDescribed verifies the record d describes (data, as given to Describe) with
// Verify or VerifyBundle and records the outcome in d. A key document or tombstone has
// nothing to verify here and is left alone. The error is a policy error only.
func VerifyDescribed(d *Description, data []byte, doc *keys.Document, policy Policy) error {
	var res *Result
	var err error
	switch d.Form {
	case "envelope":
		res, err = Verify(data, doc, policy)
	case "bundle":
		res, err = VerifyBundle(data, doc, policy)
	default:
		return nil
	}
	if errors.Is(err, ErrPolicy) {
		return err
	}
	if res == nil {
		res = &Result{}
	}
	var f *Failure
	if errors.As(err, &f) && res.Failure == nil {
		res.Failure = f
	}
	d.Verification = &Verification{Verified: err == nil, Result: res}
	return nil
}

func describeEnvelope(data []byte) (*Description, error) {
	env, payload, err := attest.ParseEnvelope(data)
	if err != nil {
		return nil, describeErr("not a DSSE envelope: %v", err)
	}
	if env.PayloadType != attest.PayloadType {
		return nil, describeErr("payloadType %s is not %s", fmt.Sprintf("%q", clip(env.PayloadType)), attest.PayloadType)
	}
	st, err := attest.DecodeStatement(payload)
	if err != nil {
		return nil, describeErr("the payload is not a Probity statement: %v", err)
	}
	d := &Description{
		Form:          "envelope",
		PayloadType:   env.PayloadType,
		StatementType: st.Type,
		PredicateType: st.PredicateType,
		RecordKind:    RecordKind(st.PredicateType),
		Subject:       st.Subject,
		Probe:         st.Probe,
		Change:        st.Change,
		Supply:        st.Supply,
		Dispute:       st.Dispute,
		Outcome:       st.Outcome,
		Withdrawal:    st.Withdrawal,
		Baseline:      st.Baseline,
	}
	for _, s := range env.Signatures {
		d.KeyIDs = append(d.KeyIDs, s.KeyID)
	}
	at := attest.FormatTime(st.ObservedAt)
	switch {
	case st.Probe != nil:
		d.Times = []NamedTime{{"observedAt", at}}
	case st.Change != nil:
		d.Times = []NamedTime{{"recordedAt", at}}
	case st.Supply != nil:
		d.Times = []NamedTime{{"evaluatedAt", at}}
	case st.Dispute != nil:
		d.Times = []NamedTime{{"openedAt", at}}
	case st.Outcome != nil:
		d.Times = []NamedTime{{"decidedAt", at}}
	case st.Withdrawal != nil:
		d.Times = []NamedTime{{"at", at}}
	case st.Baseline != nil:
		d.Times = []NamedTime{{"approvedAt", at}}
	case st.Keys != nil:
		d.Times = []NamedTime{{"issuedAt", at}}
		k := st.Keys
		d.Keys = &KeysVersionDescription{Version: k.Version, Event: k.Event, IssuedAt: k.IssuedAt, Previous: k.Previous}
		kd, err := describeKeyDocument(k.Document, st.ObservedAt)
		if err != nil {
			return nil, err
		}
		d.KeyDocument = kd.KeyDocument
	}
	return d, nil
}

func describeBundle(data []byte) (*Description, error) {
	b, err := attest.ParseBundle(data)
	if err != nil {
		return nil, describeErr("not a bundle: %v", err)
	}
	d, err := describeEnvelope(b.Envelope)
	if err != nil {
		return nil, err
	}
	d.Form = "bundle"
	claim := &LogClaim{LogIndex: b.LogIndex, Kind: b.Kind, InclusionProofHashes: len(b.InclusionProof), ConsistencyHashes: len(b.ConsistencyProof)}
	cp, signers, err := readNote(b.Checkpoint)
	if err != nil {
		return nil, describeErr("the bundle's checkpoint: %v", err)
	}
	claim.CheckpointOrigin, claim.CheckpointSize, claim.CheckpointSigners = cp.Origin, cp.Size, signers
	claim.CheckpointRoot = hex.EncodeToString(cp.Hash[:])
	if b.PreviousCheckpoint != "" {
		prev, _, err := readNote(b.PreviousCheckpoint)
		if err != nil {
			return nil, describeErr("the bundle's previous checkpoint: %v", err)
		}
		claim.PreviousSize = &prev.Size
	}
	d.Log = claim
	return d, nil
}

// readNote splits a signed note into its checkpoint body and the key names of its
// signature lines ("— name base64"), without checking any signature.
func readNote(text string) (Checkpoint, []string, error) {
	body, sigs, ok := strings.Cut(text, "\n\n")
	if !ok {
		return Checkpoint{}, nil, errors.New("not a signed note (no blank line before the signatures)")
	}
	cp, err := ParseCheckpoint(body + "\n")
	if err != nil {
		return cp, nil, err
	}
	var names []string
	for line := range strings.Lines(sigs) {
		rest, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "— ")
		if !ok {
			continue
		}
		if name, _, ok := strings.Cut(rest, " "); ok {
			names = append(names, name)
		}
	}
	return cp, names, nil
}

func describeKeyDocument(data []byte, now time.Time) (*Description, error) {
	doc, err := keys.Parse(data)
	if err != nil {
		return nil, describeErr("not a valid key document: %v", err)
	}
	kd := &KeyDocumentDescription{FormatVersion: doc.FormatVersion, Issuer: doc.Issuer}
	if doc.Log != nil {
		kd.LogOrigin, kd.LogKey = doc.Log.Origin, doc.Log.Key
	}
	if doc.Webhook != nil {
		kd.WebhookKey = doc.Webhook.PublicKey
	}
	for i := range doc.Keys {
		k := &doc.Keys[i]
		der, err := attest.DecodeBase64(k.SPKI)
		if err != nil {
			return nil, describeErr("keys[%d]: spki is not base64: %v", i, err)
		}
		// spki_sha256 and key_id as package keys defines them, computed here from the
		// key itself rather than read from the document.
		sum := sha256.Sum256(der)
		desc := KeyDescription{
			KeyID:      keys.KeyID(der),
			SPKISHA256: hex.EncodeToString(sum[:]),
			ValidFrom:  attest.FormatTime(k.ValidFrom),
			ValidNow:   !k.Revoked() && k.ValidAt(now),
		}
		if k.ValidUntil != nil {
			desc.ValidUntil = attest.FormatTime(*k.ValidUntil)
		}
		if k.RevokedAt != nil {
			desc.RevokedAt = attest.FormatTime(*k.RevokedAt)
		}
		if k.RevocationReason != nil {
			desc.RevocationReason = *k.RevocationReason
		}
		kd.Keys = append(kd.Keys, desc)
	}
	return &Description{Form: "key_document", KeyDocument: kd}, nil
}

// describeTombstone reads a tombstone document with attest's parser, the auditor's.
func describeTombstone(data []byte) (*Description, error) {
	doc, err := attest.ParseTombstoneDocument(data)
	if err != nil {
		return nil, describeErr("not a tombstone document: %v", err)
	}
	td := &TombstoneDescription{Entry: doc.Entry, Reason: doc.Reason, DeletedAt: attest.FormatTime(doc.DeletedAt), Removed: []TombstoneReference{}}
	for _, r := range doc.Removed {
		td.Removed = append(td.Removed, TombstoneReference{Seq: r.Seq, Kind: r.Kind, PayloadDigest: "sha256:" + r.PayloadDigestHex})
	}
	return &Description{Form: "tombstone", Tombstone: td}, nil
}
