package cli

import (
	"fmt"

	"github.com/probity-dev/probity/verifier"
)

// Outcomes and the disputes they decide: when a verify run is given both records (as
// envelopes or bundles), it also checks that each outcome decides its dispute
// (verifier.CheckOutcomeLink: the same entry, the dispute's number and payload digest,
// and its seq when the dispute came as a bundle). An outcome whose dispute is not among
// the inputs is reported as not checked: offline, only the given records can be
// linked; whether a dispute has an outcome at all only the log says (probity log
// audit).

// maxLinked bounds the disputes a run remembers for linking.
const maxLinked = 100_000

// LinkReport is one outcome's link to its dispute.
type LinkReport struct {
	// Outcome and Dispute are the inputs' sources ("" Dispute: not given).
	Outcome string `json:"outcome"`
	Dispute string `json:"dispute,omitempty"`
	// Checked is false when the dispute was not among the inputs; OK says whether a
	// checked link holds.
	Checked bool              `json:"checked"`
	OK      bool              `json:"ok"`
	Failure *verifier.Failure `json:"failure,omitempty"`
	Detail  string            `json:"detail,omitempty"`
}

type seenRecord struct {
	source string
	res    *verifier.Result
}

// linker remembers the verified disputes (by payload digest) and outcomes of a run.
type linker struct {
	disputes map[string]seenRecord
	outcomes []seenRecord
}

func newLinker() *linker { return &linker{disputes: map[string]seenRecord{}} }

// add remembers a verified dispute or outcome.
func (l *linker) add(it Item) {
	if it.Err != nil || it.Result == nil || it.Result.Statement == nil {
		return
	}
	st := it.Result.Statement
	switch {
	case st.Dispute != nil && len(l.disputes) < maxLinked:
		l.disputes[it.Result.PayloadDigest] = seenRecord{it.Source, it.Result}
	case st.Outcome != nil && len(l.outcomes) < maxLinked:
		l.outcomes = append(l.outcomes, seenRecord{it.Source, it.Result})
	}
}

// reports links each outcome to its dispute, in input order.
func (l *linker) reports() []LinkReport {
	out := make([]LinkReport, 0, len(l.outcomes))
	for _, o := range l.outcomes {
		ref := o.res.Statement.Outcome.Dispute
		d, ok := l.disputes[ref.Record.PayloadDigest]
		if !ok {
			out = append(out, LinkReport{Outcome: o.source,
				Detail: fmt.Sprintf("its dispute %d (record %d) was not given: the link is not checked", ref.Number, ref.Record.Seq)})
			continue
		}
		r := LinkReport{Outcome: o.source, Dispute: d.source, Checked: true}
		if f := verifier.CheckOutcomeLink(d.res, o.res); f != nil {
			r.Failure = f
		} else {
			r.OK = true
			r.Detail = fmt.Sprintf("decides dispute %d of %s", ref.Number, o.res.Statement.Outcome.Entry.Slug)
		}
		out = append(out, r)
	}
	return out
}
