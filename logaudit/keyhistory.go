package logaudit

import (
	"errors"
	"fmt"

	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/verifier"
)

// keyHistory is the key history the audit builds from the log's keys records, in index
// order (verifier.KeyHistory.Append), with the served key document to fall back on for a
// log whose document has no history (format 1).
type keyHistory struct {
	served  *keys.Document
	history verifier.KeyHistory
}

func newKeyHistory(served *keys.Document) *keyHistory { return &keyHistory{served: served} }

// add checks the keys record at index as the next version. A record that does not
// extend the history is left out of it; the error is a *verifier.KeyHistoryError.
func (h *keyHistory) add(index int64, envelope []byte) error {
	return h.history.Append(verifier.LoggedKeyVersion{LogIndex: index, Envelope: envelope})
}

// versions is the number of versions verified.
func (h *keyHistory) versions() int { return h.history.Len() }

// needsVersion1 reports that envelopes seen before the first keys record must wait for
// it (they are verified under version 1): the site's key document has a history
// (format 2), or there is none to fall back on.
func (h *keyHistory) needsVersion1() bool {
	return h.versions() == 0 && (h.served == nil || h.served.FormatVersion >= keys.FormatVersion)
}

// inForce is the key document to verify the record at index under: the history's
// (verifier.KeyHistory.InForce), or for a log without keys records the served document
// (a format 1 document has no history).
func (h *keyHistory) inForce(index int64) *keys.Document {
	if h.versions() == 0 {
		return h.served
	}
	return h.history.InForce(index)
}

// checkServed checks that the served document is the latest logged version. A log
// that holds records but no version fails (a service logs version 1 as it starts, and
// upgrading one logs it after the records before it); an empty log does not.
func (h *keyHistory) checkServed(doc *keys.Document, empty bool) error {
	if h.versions() == 0 {
		if doc.FormatVersion < keys.FormatVersion || empty {
			return nil // format 1: no history to hold it to; an empty log: nothing logged yet
		}
		return &verifier.KeyHistoryError{Reason: verifier.ReasonKeyHistoryEmpty, LogIndex: -1, Detail: "the key document lists a log, and the log holds no key document version"}
	}
	return h.history.CheckServed(doc)
}

// historyFailure turns a key history error into the audit's reason and detail.
func historyFailure(err error) (Reason, string) {
	var ke *verifier.KeyHistoryError
	if errors.As(err, &ke) {
		return Reason(ke.Reason), ke.Error()
	}
	return ReasonKeyHistory, fmt.Sprint(err)
}
