package verifier

import (
	"errors"
	"fmt"
	"time"

	"github.com/probity-dev/probity/keys"
)

// The reasons a key document history, or a served key document, fails (KeyHistoryError).
// The history rules are package keys' ("Key document history"); the log order and the
// served document are this file's.
const (
	ReasonKeyHistoryEmpty          FailureReason = "key_history_empty"
	ReasonKeyVersionMalformed      FailureReason = "key_version_malformed"
	ReasonKeyVersionGap            FailureReason = "key_version_gap"
	ReasonKeyVersionPrevious       FailureReason = "key_version_previous_mismatch"
	ReasonKeyVersionIssuedEarlier  FailureReason = "key_version_issued_before_previous"
	ReasonKeyVersionBadSignature   FailureReason = "key_version_bad_signature"
	ReasonKeyVersionUnauthorized   FailureReason = "key_version_unauthorized_signer"
	ReasonKeyVersionRevokedSigner  FailureReason = "key_version_revoked_signer"
	ReasonKeyVersionOutsideWindow  FailureReason = "key_version_signer_outside_window"
	ReasonKeyVersionInvalidChange  FailureReason = "key_version_invalid_change"
	ReasonKeyVersionLogOrder       FailureReason = "key_version_log_order"
	ReasonKeyDocumentNotLogged     FailureReason = "key_document_not_logged"
	ReasonKeyDocumentStale         FailureReason = "key_document_stale"
	ReasonKeyDocumentIssuerChanged FailureReason = "key_document_issuer_mismatch"
)

var historyReasons = map[keys.HistoryReason]FailureReason{
	keys.HistoryMalformed:            ReasonKeyVersionMalformed,
	keys.HistoryVersionGap:           ReasonKeyVersionGap,
	keys.HistoryPreviousMismatch:     ReasonKeyVersionPrevious,
	keys.HistoryIssuedBeforePrevious: ReasonKeyVersionIssuedEarlier,
	keys.HistoryBadSignature:         ReasonKeyVersionBadSignature,
	keys.HistoryUnauthorized:         ReasonKeyVersionUnauthorized,
	keys.HistoryRevokedSigner:        ReasonKeyVersionRevokedSigner,
	keys.HistorySignerOutsideWindow:  ReasonKeyVersionOutsideWindow,
	keys.HistoryInvalidChange:        ReasonKeyVersionInvalidChange,
}

// A KeyHistoryError says why a key document history or a served key document was
// refused.
type KeyHistoryError struct {
	Reason FailureReason
	// Version is the key document version concerned (0 if unknown), and LogIndex the
	// log index it was given with (-1 when the error is not about one entry).
	Version  int
	LogIndex int64
	Detail   string
}

func (e *KeyHistoryError) Error() string {
	where := ""
	switch {
	case e.Version > 0 && e.LogIndex >= 0:
		where = fmt.Sprintf(" (version %d at log index %d)", e.Version, e.LogIndex)
	case e.Version > 0:
		where = fmt.Sprintf(" (version %d)", e.Version)
	case e.LogIndex >= 0:
		where = fmt.Sprintf(" (log index %d)", e.LogIndex)
	}
	return fmt.Sprintf("%s%s: %s", e.Reason, where, e.Detail)
}

// Failure returns e as a verification Failure.
func (e *KeyHistoryError) Failure() *Failure { return &Failure{Reason: e.Reason, Detail: e.Error()} }

// LoggedKeyVersion is a keys/v1 envelope (one signed key document version) and its index
// in the log.
type LoggedKeyVersion struct {
	LogIndex int64
	Envelope []byte
}

// KeyHistory is an issuer's key document history as its log holds it: every signed
// version, checked as a chain, with the log index it was logged at.
type KeyHistory struct {
	versions []*keys.Version
	indexes  []int64
}

// NewKeyHistory checks the keys/v1 envelopes of a log, given in the order the log holds
// them: versions 1, 2, …, n without a gap, each naming the previous one's document
// digest, each authorized as package keys requires (version 1 by a key it lists; version
// k+1 by a key version k lists, unrevoked and valid at its issuedAt (before its
// valid_until, when set), and not revoked by it), each changing the document only as
// its event allows, and each logged at a higher log index than the one before. It fails with a *KeyHistoryError.
func NewKeyHistory(versions []LoggedKeyVersion) (*KeyHistory, error) {
	if len(versions) == 0 {
		return nil, &KeyHistoryError{Reason: ReasonKeyHistoryEmpty, LogIndex: -1, Detail: "the log holds no key document version"}
	}
	h := &KeyHistory{}
	for _, lv := range versions {
		if err := h.Append(lv); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// Append checks lv as the next version of h, by the rules of NewKeyHistory, and adds it;
// a monitor reading the log in order calls it for each keys record instead of checking
// the whole chain again. On error h is unchanged. (A zero KeyHistory is an empty history
// that Append can start; its other methods need at least one version.)
//
// A keys record is checked here, not by Verify under the document in force at its index:
// a rotation is signed by the new key too, which the version before it does not list.
func (h *KeyHistory) Append(lv LoggedKeyVersion) error {
	n := len(h.versions) + 1
	if lv.LogIndex < 0 {
		return &KeyHistoryError{Reason: ReasonKeyVersionMalformed, Version: n, LogIndex: lv.LogIndex, Detail: "negative log index"}
	}
	var prev *keys.Version
	if n > 1 {
		prev = h.versions[n-2]
		if last := h.indexes[n-2]; lv.LogIndex <= last {
			return &KeyHistoryError{Reason: ReasonKeyVersionLogOrder, Version: n, LogIndex: lv.LogIndex,
				Detail: fmt.Sprintf("logged at index %d, not after version %d at index %d", lv.LogIndex, n-1, last)}
		}
	}
	v, err := keys.OpenVersion(prev, lv.Envelope)
	if err != nil {
		var he *keys.HistoryError
		if !errors.As(err, &he) {
			return &KeyHistoryError{Reason: ReasonKeyVersionMalformed, Version: n, LogIndex: lv.LogIndex, Detail: err.Error()}
		}
		version := he.Version
		if version == 0 {
			version = n
		}
		return &KeyHistoryError{Reason: historyReasons[he.Reason], Version: version, LogIndex: lv.LogIndex, Detail: he.Detail}
	}
	h.versions = append(h.versions, v)
	h.indexes = append(h.indexes, lv.LogIndex)
	return nil
}

// Len returns the number of versions.
func (h *KeyHistory) Len() int { return len(h.versions) }

// Version returns version n (1-based) and its log index.
func (h *KeyHistory) Version(n int) (*keys.Version, int64, bool) {
	if n < 1 || n > len(h.versions) {
		return nil, 0, false
	}
	return h.versions[n-1], h.indexes[n-1], true
}

// Latest returns the document of the latest logged version.
func (h *KeyHistory) Latest() *keys.Document { return h.versions[len(h.versions)-1].Document }

// InForce returns the key document in force at logIndex: the document of the latest
// version logged at a lower index, or version 1's for an index before every version
// (records logged before the history began are read under its first version).
func (h *KeyHistory) InForce(logIndex int64) *keys.Document {
	in := h.versions[0]
	for i, idx := range h.indexes {
		if idx >= logIndex {
			break
		}
		in = h.versions[i]
	}
	return in.Document
}

// CheckServed checks that doc, the key document a site serves, is exactly (canonically)
// the latest logged version's. A document listing a key, window, revocation or log no
// logged version holds fails with ReasonKeyDocumentNotLogged — this is how a key added
// to the key document without logging it is caught; an older version fails with
// ReasonKeyDocumentStale.
func (h *KeyHistory) CheckServed(doc *keys.Document) error {
	latest := h.versions[len(h.versions)-1]
	if doc == nil {
		return &KeyHistoryError{Reason: ReasonKeyDocumentNotLogged, LogIndex: -1, Detail: "no key document served"}
	}
	if keys.SameDocument(doc, latest.Document) {
		return nil
	}
	if doc.Issuer != latest.Document.Issuer {
		return &KeyHistoryError{Reason: ReasonKeyDocumentIssuerChanged, LogIndex: -1, Detail: fmt.Sprintf("the served key document is for issuer %q, the logged history for %q", clip(doc.Issuer), clip(latest.Document.Issuer))}
	}
	for i := len(h.versions) - 2; i >= 0; i-- {
		if keys.SameDocument(doc, h.versions[i].Document) {
			return &KeyHistoryError{Reason: ReasonKeyDocumentStale, Version: i + 1, LogIndex: h.indexes[i],
				Detail: fmt.Sprintf("the served key document is version %d; version %d is logged", i+1, latest.Number)}
		}
	}
	detail := "the served key document differs from the latest logged version"
	for i := range doc.Keys {
		k := &doc.Keys[i]
		lk, ok := latest.Document.Lookup(k.KeyID)
		switch {
		case !ok:
			detail = fmt.Sprintf("the served key document lists key %s, which no logged version lists", clip(k.KeyID))
		case !k.ValidFrom.Equal(lk.ValidFrom) || !sameTimePtr(k.ValidUntil, lk.ValidUntil):
			detail = fmt.Sprintf("the served key document gives key %s another window than the latest logged version", k.KeyID)
		case k.Revoked() != lk.Revoked() || k.Revoked() && !k.RevokedAt.Equal(*lk.RevokedAt):
			detail = fmt.Sprintf("the served key document gives key %s another revocation than the latest logged version", k.KeyID)
		default:
			continue
		}
		break
	}
	return &KeyHistoryError{Reason: ReasonKeyDocumentNotLogged, Version: latest.Number, LogIndex: -1, Detail: detail}
}

func sameTimePtr(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}
