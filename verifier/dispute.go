package verifier

import (
	"fmt"

	"github.com/probity-dev/probity/attest"
)

// ReasonOutcomeLink is the reason CheckOutcomeLink fails an outcome that does not
// decide the dispute it is given.
const ReasonOutcomeLink FailureReason = "outcome_link_mismatch"

// CheckOutcomeLink checks, offline, that outcome (an outcome/v1 record) decides dispute
// (a dispute/v1 record), both verified already by Verify or VerifyBundle: the same
// entry, the dispute's number and the dispute payload's digest; and, when the dispute
// was verified as a bundle (its log index known), that the outcome names the dispute's
// sequence number (log index + 1). What stays uncheckable offline: that the contested
// round held the status the dispute names (verify the round's own bundle, which the
// finding names by seq and digest) and whether a dispute has an outcome at all (only
// the log, `probity log audit`, says what was recorded).
func CheckOutcomeLink(dispute, outcome *Result) *Failure {
	switch {
	case !dispute.OK() || !outcome.OK():
		return &Failure{Reason: ReasonOutcomeLink, Detail: "both records must verify first"}
	case dispute.Statement == nil || dispute.Statement.Dispute == nil:
		return &Failure{Reason: ReasonOutcomeLink, Detail: fmt.Sprintf("the first record is not a dispute (%s)", clip(dispute.PredicateType))}
	case outcome.Statement == nil || outcome.Statement.Outcome == nil:
		return &Failure{Reason: ReasonOutcomeLink, Detail: fmt.Sprintf("the second record is not an outcome (%s)", clip(outcome.PredicateType))}
	}
	var seq int64
	if dispute.Log != nil {
		seq = dispute.Log.LogIndex + 1
	}
	if err := attest.CheckOutcomeLink(outcome.Statement.Outcome, dispute.Statement.Dispute, dispute.PayloadDigest, seq); err != nil {
		return &Failure{Reason: ReasonOutcomeLink, Detail: err.Error()}
	}
	return nil
}
