package logaudit

import (
	"cmp"
	"fmt"
	"slices"
	"sync"

	"github.com/probity-dev/probity/verifier"
)

// Reason says what an audit found wrong. The values are stable: reports and tests use
// them. An envelope that does not verify under the key document in force at its index
// carries the verifier's own reason (verifier.FailureReason: bad_signature,
// unknown_key, revoked_key, outside_key_window, …).
type Reason string

// The reasons the audit itself finds. Index is -1 for those about the log as a whole.
const (
	// The checkpoint.
	// Where the verifier has a reason for the same finding, the audit uses its name.
	ReasonCheckpointMalformed Reason = "checkpoint_malformed"                     // not a tlog-checkpoint signed note
	ReasonCheckpointSignature        = Reason(verifier.ReasonCheckpointSignature) // the log's signature is missing or invalid
	ReasonCheckpointOrigin           = Reason(verifier.ReasonWrongOrigin)         // origin is not the log key's or the key document's
	ReasonCosignature                = Reason(verifier.ReasonBadCosignature)      // a trusted witness's cosignature does not verify
	ReasonTooFewWitnesses            = Reason(verifier.ReasonTooFewWitnesses)     // fewer valid trusted cosignatures than required
	ReasonLogKeyMismatch      Reason = "log_key_mismatch"                         // the log key is not the one the key document and its latest logged version list
	ReasonLogKeyChanged       Reason = "log_key_changed"                          // the origin's log key, or the source's log, is not the one saved last time

	// The tree.
	ReasonTileMissing      Reason = "tile_missing"      // a hash tile the checkpoint needs is not served
	ReasonTileMalformed    Reason = "tile_malformed"    // a hash tile of the wrong length
	ReasonTileMismatch     Reason = "tile_mismatch"     // a served hash differs from the one recomputed from the entries
	ReasonEntriesMissing   Reason = "entries_missing"   // an entry bundle the checkpoint needs is not served
	ReasonEntriesMalformed Reason = "entries_malformed" // an entry bundle that is not length-prefixed entries, or too few
	ReasonRootMismatch     Reason = "root_mismatch"     // the tree of the entries does not have the checkpoint's root
	ReasonEntriesChanged   Reason = "entries_changed"   // an entry bundle read again holds other entries than the first time

	// The leaves.
	ReasonLeafMalformed      Reason = "leaf_malformed"                 // not a probity.dev/log-leaf/v1 leaf (attest.ParseLeaf)
	ReasonSequence           Reason = "sequence_mismatch"              // leaf i does not carry seq i+1: dropped, reordered or duplicated
	ReasonKindMismatch       Reason = "kind_mismatch"                  // the leaf's kind is not its statement's predicate type
	ReasonUnknownKind        Reason = "unknown_kind"                   // a kind this auditor does not know
	ReasonTombstone          Reason = "tombstone_invalid"              // a tombstone document that is malformed or not canonical
	ReasonTombstoneMismatch  Reason = "tombstone_mismatch"             // a removed record that is not the earlier leaf it names
	ReasonWithdrawalSupply   Reason = "withdrawal_supply_mismatch"     // a withdrawal record does not name an earlier supply record by its number and payload digest
	ReasonRecordAfterWitness        = Reason(verifier.ReasonPostdated) // a record's time is after the checkpoint's earliest trusted cosignature
	ReasonRecordBackdated           = Reason(verifier.ReasonBackdated) // a record's time is long before the saved checkpoint that did not hold it

	// The key history. A keys record that does not extend the history, and a served key
	// document that is not the latest logged version, carry the verifier's reasons
	// (verifier.KeyHistoryError: key_version_*, key_history_empty,
	// key_document_not_logged, key_document_stale, key_document_issuer_mismatch);
	// ReasonKeyHistory is for any other error of the history.
	ReasonKeyHistory Reason = "key_history_invalid"

	// The saved checkpoint.
	ReasonShrunk     Reason = "log_shrunk"        // smaller than the checkpoint saved last time
	ReasonSplitView  Reason = "split_view"        // same size as the saved checkpoint, another root
	ReasonRewritten  Reason = "history_rewritten" // larger, but its first saved-size leaves are not the saved tree
	ReasonIncomplete Reason = "audit_incomplete"  // the audit stopped before reading every leaf
)

// Failure is one finding.
type Failure struct {
	Index  int64  `json:"index"` // log index of the leaf concerned, -1 for the log as a whole
	Reason Reason `json:"reason"`
	Detail string `json:"detail,omitempty"`
}

func (f *Failure) Error() string {
	if f.Index < 0 {
		return fmt.Sprintf("%s: %s", f.Reason, f.Detail)
	}
	return fmt.Sprintf("index %d: %s: %s", f.Index, f.Reason, f.Detail)
}

// Report is what an audit found. A report with no Failures is a log that checked out.
type Report struct {
	Source     string `json:"source"`
	KeysSource string `json:"keysSource,omitempty"` // where the key document came from
	Origin     string `json:"origin"`
	Size       int64  `json:"size"`
	Root       string `json:"root"`       // base64, as in the checkpoint
	Checkpoint string `json:"checkpoint"` // the signed note, cosignatures included
	LogKey     string `json:"logKey"`     // the note verifier key the checkpoint was checked with
	// Witnesses lists the trusted witnesses' verified cosignatures on the checkpoint.
	Witnesses []Cosignature `json:"witnesses"`
	// Counts counts leaves by kind (probe, change, supply, keys, dispute, outcome, tombstone, and
	// "removed" for records removed before they were logged).
	Counts map[string]int64 `json:"counts"`
	// Verified counts envelopes that verified under the key document in force at
	// their index.
	Verified int64 `json:"verified"`
	// DigestOnly counts records logged by digest (envelopes too large to be inline):
	// the log proves their order, but not their signature.
	DigestOnly int64 `json:"digestOnly"`
	// RemovedAwaitingTombstone lists the indices of records logged as removed that no
	// tombstone in the log names yet (its tombstone comes later in the ledger; a
	// monitor expects it in a later audit).
	RemovedAwaitingTombstone []int64 `json:"removedAwaitingTombstone,omitempty"`
	// RevokedUnproven counts records, verified otherwise, signed by a key the latest
	// key document revokes, that this audit cannot show were witnessed before the
	// revocation nor logged after it (it knows only the current and the saved
	// checkpoint): their bundles, which name the earliest checkpoint holding them,
	// decide. A monitor that audits regularly places them.
	RevokedUnproven int64 `json:"revokedUnproven"`
	// KeyVersions counts the key document versions logged (keys records).
	KeyVersions int `json:"keyVersions"`
	// Failures lists the findings in index order (at most Config.MaxFailures;
	// FailureCounts counts them all by reason).
	Failures          []Failure        `json:"failures"`
	FailureCounts     map[Reason]int64 `json:"failureCounts"`
	FailuresTruncated bool             `json:"failuresTruncated,omitempty"`
	// SavedSize is the size of the checkpoint saved last time (0 when none was), and
	// ConsistentWithSaved whether this log extends it; null when there was none.
	SavedSize           int64 `json:"savedSize"`
	ConsistentWithSaved *bool `json:"consistentWithSaved"`
	// StateSaved says the checkpoint was saved as the one to compare with next time
	// (only when nothing failed).
	StateSaved bool  `json:"stateSaved"`
	DurationMs int64 `json:"durationMs"`
}

// OK reports whether the audit found nothing wrong.
func (r *Report) OK() bool { return r != nil && len(r.FailureCounts) == 0 }

// findings collects failures from concurrent workers, keeping at most max of them.
type findings struct {
	mu        sync.Mutex
	max       int
	list      []Failure
	counts    map[Reason]int64
	truncated bool
}

func (f *findings) add(index int64, reason Reason, format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts[reason]++
	if len(f.list) >= f.max {
		f.truncated = true
		return
	}
	f.list = append(f.list, Failure{Index: index, Reason: reason, Detail: fmt.Sprintf(format, args...)})
}

func (f *findings) addFailure(fl *Failure) { f.add(fl.Index, fl.Reason, "%s", fl.Detail) }

func (f *findings) fill(r *Report) {
	f.mu.Lock()
	defer f.mu.Unlock()
	slices.SortStableFunc(f.list, func(a, b Failure) int { return cmp.Compare(a.Index, b.Index) })
	r.Failures = append([]Failure{}, f.list...)
	r.FailureCounts = map[Reason]int64{}
	for k, v := range f.counts {
		r.FailureCounts[k] = v
	}
	r.FailuresTruncated = f.truncated
}

// verifierReason maps the verifier's reasons onto the audit's.
func verifierReason(r verifier.FailureReason) Reason { return Reason(r) }
