package keys

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/probity-dev/probity/attest"
)

// HistoryReason says why a signed key document version does not extend a history. The
// values are stable: reports and tests use them.
type HistoryReason string

// The reasons a version can be refused.
const (
	// HistoryMalformed: the envelope, its statement or its document breaks the format.
	HistoryMalformed HistoryReason = "malformed_version"
	// HistoryVersionGap: the version number is not the previous one plus 1 (or not 1).
	HistoryVersionGap HistoryReason = "version_gap"
	// HistoryPreviousMismatch: previous is not the digest of the previous version's
	// document.
	HistoryPreviousMismatch HistoryReason = "previous_mismatch"
	// HistoryIssuedBeforePrevious: issuedAt is earlier than the previous version's.
	HistoryIssuedBeforePrevious HistoryReason = "issued_before_previous"
	// HistoryBadSignature: a signature names a key the new document does not list, a
	// key signs twice, or a signature does not verify.
	HistoryBadSignature HistoryReason = "bad_signature"
	// HistoryUnauthorized: no signature is by a key the previous version lists (for
	// version 1: a key it lists itself), e.g. a version signed only by the key it adds.
	HistoryUnauthorized HistoryReason = "unauthorized_signer"
	// HistoryRevokedSigner: the only signers the previous version lists are revoked
	// there, or are revoked by this very version.
	HistoryRevokedSigner HistoryReason = "revoked_signer"
	// HistorySignerOutsideWindow: the only signers the previous version lists are not
	// valid at issuedAt.
	HistorySignerOutsideWindow HistoryReason = "signer_outside_window"
	// HistoryInvalidChange: the document changes in a way no version may (a key removed
	// or altered, a back-dated key, a revocation undone, the issuer or log replaced), or
	// not in the way its event says.
	HistoryInvalidChange HistoryReason = "invalid_change"
)

// A HistoryError reports why a signed key document version was refused.
type HistoryError struct {
	Reason  HistoryReason
	Version int // the version refused, 0 if unknown
	Detail  string
}

func (e *HistoryError) Error() string {
	if e.Version > 0 {
		return fmt.Sprintf("key document version %d: %s: %s", e.Version, e.Reason, e.Detail)
	}
	return fmt.Sprintf("key document version: %s: %s", e.Reason, e.Detail)
}

// Version is one signed version of a key document, opened and checked by OpenVersion.
type Version struct {
	Number         int
	Event          string
	IssuedAt       time.Time
	Document       *Document
	DocumentDigest string // hex SHA-256 of the canonical document (the subject digest)
	Previous       string // "sha256:"+hex of the previous version's document; "" for version 1
	PayloadDigest  string // hex SHA-256 of the DSSE payload, as the ledger records it
	// KeyIDs are the key ids of the envelope's signatures, in order; the first one that
	// authorizes the version (a key of the previous version, or for version 1 of its own
	// document, unrevoked and valid at issuedAt) is AuthorizedBy.
	KeyIDs       []string
	AuthorizedBy string
	Envelope     []byte
}

// PreviousDigest returns the value a version following v names as previous.
func (v *Version) PreviousDigest() string { return "sha256:" + v.DocumentDigest }

// OpenVersion checks a keys/v1 DSSE envelope as the version following prev (nil for
// version 1) and returns it. It applies every rule of a key document history (see the
// package documentation, "Key document history") and fails with a *HistoryError.
func OpenVersion(prev *Version, envelope []byte) (*Version, error) {
	want := 1
	if prev != nil {
		want = prev.Number + 1
	}
	bad := func(reason HistoryReason, version int, format string, args ...any) (*Version, error) {
		return nil, &HistoryError{Reason: reason, Version: version, Detail: fmt.Sprintf(format, args...)}
	}
	env, payload, err := attest.ParseEnvelope(envelope)
	if err != nil {
		return bad(HistoryMalformed, 0, "%v", err)
	}
	if env.PayloadType != attest.PayloadType {
		return bad(HistoryMalformed, 0, "payloadType is not %s", attest.PayloadType)
	}
	if n := len(env.Signatures); n < 1 || n > attest.MaxSignatures {
		return bad(HistoryMalformed, 0, "%d signatures, want 1 to %d", n, attest.MaxSignatures)
	}
	st, err := attest.DecodeStatement(payload)
	if err != nil {
		return bad(HistoryMalformed, 0, "%v", err)
	}
	if st.PredicateType != attest.KeysPredicateType || st.Keys == nil {
		return bad(HistoryMalformed, 0, "predicate type %q is not %s", st.PredicateType, attest.KeysPredicateType)
	}
	p := st.Keys
	n := p.Version
	doc, err := Parse(p.Document)
	if err != nil {
		return bad(HistoryMalformed, n, "document: %v", err)
	}
	sum := sha256.Sum256(payload)
	v := &Version{
		Number:         n,
		Event:          p.Event,
		IssuedAt:       st.ObservedAt,
		Document:       doc,
		DocumentDigest: attest.KeysDocumentDigest(p.Document),
		Previous:       p.Previous,
		PayloadDigest:  hex.EncodeToString(sum[:]),
		Envelope:       bytes.Clone(envelope),
	}
	if n != want {
		return bad(HistoryVersionGap, n, "version %d follows version %d", n, want-1)
	}
	if prev != nil {
		if p.Previous != prev.PreviousDigest() {
			return bad(HistoryPreviousMismatch, n, "previous is %s, but version %d's document is %s", p.Previous, prev.Number, prev.PreviousDigest())
		}
		if v.IssuedAt.Before(prev.IssuedAt) {
			return bad(HistoryIssuedBeforePrevious, n, "issuedAt %s is before version %d's %s", attest.FormatTime(v.IssuedAt), prev.Number, attest.FormatTime(prev.IssuedAt))
		}
		if err := CheckChange(prev.Document, doc, p.Event, v.IssuedAt); err != nil {
			return bad(HistoryInvalidChange, n, "%v", err)
		}
	}

	// Every signature is by a distinct key of the new document (which lists every key
	// of the previous one) and verifies.
	pae := attest.PAE(payload)
	var seen []ed25519.PublicKey
	for i, s := range env.Signatures {
		k, ok := doc.Lookup(s.KeyID)
		if !ok {
			return bad(HistoryBadSignature, n, "signature %d names key %q, which the document does not list", i, clipName(s.KeyID))
		}
		pub := k.PublicKey()
		for _, p := range seen {
			if p.Equal(pub) {
				return bad(HistoryBadSignature, n, "key %s signs twice", k.KeyID)
			}
		}
		seen = append(seen, pub)
		sig, _ := attest.DecodeBase64(s.Sig) // ParseEnvelope checked the encoding
		if len(sig) != ed25519.SignatureSize || !ed25519.Verify(pub, pae, sig) {
			return bad(HistoryBadSignature, n, "signature %d (key %s) does not verify", i, k.KeyID)
		}
		v.KeyIDs = append(v.KeyIDs, k.KeyID)
	}

	// At least one signer is authorized: listed by the previous version (version 1: by
	// itself), unrevoked there, valid at issuedAt, and not revoked by this version.
	authority := doc
	if prev != nil {
		authority = prev.Document
	}
	reason, detail := HistoryUnauthorized, "no signature is by a key the previous version lists"
	if prev == nil {
		detail = "no signature is by a key the document lists"
	}
	for _, id := range v.KeyIDs {
		k, ok := authority.Lookup(id)
		switch {
		case !ok:
			continue
		case k.Revoked():
			reason, detail = HistoryRevokedSigner, fmt.Sprintf("key %s was revoked at %s", id, attest.FormatTime(*k.RevokedAt))
			continue
		case !k.ValidAt(v.IssuedAt):
			if reason != HistoryRevokedSigner {
				reason, detail = HistorySignerOutsideWindow, fmt.Sprintf("key %s is not valid at issuedAt %s", id, attest.FormatTime(v.IssuedAt))
			}
			continue
		case k.ValidUntil != nil && !v.IssuedAt.Before(*k.ValidUntil):
			// A rotation ends the old key's window at its own issuedAt, and the next
			// version may be issued at that instant: the retired key must not
			// authorize it (it could add a key of its choosing for good).
			if reason != HistoryRevokedSigner {
				reason, detail = HistorySignerOutsideWindow, fmt.Sprintf("key %s's window ends at issuedAt %s: a key authorizes versions only before its valid_until", id, attest.FormatTime(v.IssuedAt))
			}
			continue
		}
		if nk, _ := doc.Lookup(id); prev != nil && nk.Revoked() {
			reason, detail = HistoryRevokedSigner, fmt.Sprintf("key %s signs the version that revokes it; a remaining key must sign", id)
			continue
		}
		v.AuthorizedBy = id
		break
	}
	if v.AuthorizedBy == "" {
		return bad(reason, n, "%s", detail)
	}
	return v, nil
}

// ErrInvalidChange is wrapped by every error CheckChange returns.
var ErrInvalidChange = errors.New("invalid key document change")

// CheckChange reports whether next may follow prev as the version recording event, issued
// at issuedAt: the rules of the package documentation, "Key document history". The
// error wraps ErrInvalidChange.
func CheckChange(prev, next *Document, event string, issuedAt time.Time) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidChange, fmt.Sprintf(format, args...))
	}
	if next.Issuer != prev.Issuer {
		return fail("the issuer changes from %q to %q", clipName(prev.Issuer), clipName(next.Issuer))
	}
	if len(next.Keys) < len(prev.Keys) {
		return fail("%d keys are removed; a key stays listed for good", len(prev.Keys)-len(next.Keys))
	}
	issuedAt = issuedAt.UTC().Truncate(time.Millisecond)
	ended, revoked := 0, 0
	for i := range prev.Keys {
		a, b := &prev.Keys[i], &next.Keys[i]
		if a.KeyID != b.KeyID || a.SPKI != b.SPKI || a.SPKISHA256 != b.SPKISHA256 || a.Algorithm != b.Algorithm || !a.ValidFrom.Equal(b.ValidFrom) {
			return fail("keys[%d] (%s) is replaced or its valid_from changed", i, a.KeyID)
		}
		switch {
		case sameTime(a.ValidUntil, b.ValidUntil):
		case b.ValidUntil == nil:
			return fail("keys[%d] (%s): valid_until is removed", i, a.KeyID)
		case a.ValidUntil != nil && b.ValidUntil.After(*a.ValidUntil):
			return fail("keys[%d] (%s): valid_until is extended", i, a.KeyID)
		case b.ValidUntil.Before(issuedAt):
			return fail("keys[%d] (%s): valid_until %s is before issuedAt %s (end a key's past with a revocation)", i, a.KeyID, attest.FormatTime(*b.ValidUntil), attest.FormatTime(issuedAt))
		default:
			ended++
		}
		switch {
		case a.Revoked():
			if !b.Revoked() || !a.RevokedAt.Equal(*b.RevokedAt) || *a.RevocationReason != *b.RevocationReason {
				return fail("keys[%d] (%s): its revocation is changed or undone", i, a.KeyID)
			}
		case b.Revoked():
			if b.RevokedAt.After(issuedAt) {
				return fail("keys[%d] (%s): revoked_at %s is after issuedAt %s", i, a.KeyID, attest.FormatTime(*b.RevokedAt), attest.FormatTime(issuedAt))
			}
			revoked++
		}
	}
	added := len(next.Keys) - len(prev.Keys)
	for i := len(prev.Keys); i < len(next.Keys); i++ {
		k := &next.Keys[i]
		if k.ValidFrom.Before(issuedAt) {
			return fail("keys[%d] (%s): a new key's valid_from %s is before issuedAt %s", i, k.KeyID, attest.FormatTime(k.ValidFrom), attest.FormatTime(issuedAt))
		}
		if k.Revoked() {
			return fail("keys[%d] (%s): a new key is revoked", i, k.KeyID)
		}
	}
	logAdded := false
	switch {
	case prev.Log == nil && next.Log != nil:
		logAdded = true
	case prev.Log != nil && (next.Log == nil || *prev.Log != *next.Log):
		return fail("the log is replaced or removed")
	}
	webhookAdded := false
	switch {
	case prev.Webhook == nil && next.Webhook != nil:
		webhookAdded = true
	case prev.Webhook != nil && (next.Webhook == nil || *prev.Webhook != *next.Webhook):
		return fail("the webhook key is replaced or removed")
	}
	if next.FormatVersion < prev.FormatVersion {
		return fail("format_version goes back from %d to %d", prev.FormatVersion, next.FormatVersion)
	}
	ok := false
	switch event {
	case attest.KeysEventRotated:
		ok = added > 0 && revoked == 0 && !logAdded && !webhookAdded
	case attest.KeysEventRevoked:
		ok = revoked > 0 && added == 0 && ended == 0 && !logAdded && !webhookAdded
	case attest.KeysEventLogKeyAdded:
		ok = logAdded && added == 0 && revoked == 0 && ended == 0 && !webhookAdded
	case attest.KeysEventWebhookKeyAdded:
		ok = webhookAdded && added == 0 && revoked == 0 && ended == 0 && !logAdded
	}
	if !ok {
		return fail("event %q does not describe the change (%d keys added, %d windows ended, %d keys revoked, log added %v, webhook key added %v)", event, added, ended, revoked, logAdded, webhookAdded)
	}
	return nil
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

// AuthorizesAt reports whether the key keyID may sign at t under d: listed, unrevoked and
// valid at t.
func (d *Document) AuthorizesAt(keyID string, t time.Time) bool {
	k, ok := d.Lookup(keyID)
	return ok && !k.Revoked() && k.ValidAt(t)
}
