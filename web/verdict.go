package web

import (
	"strconv"

	"github.com/probity-dev/probity/history/stats"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/web/badge"
)

// The verdict of an entry: what it is in a word (offline, N risks, login required,
// Verified, …). The badge, the summary card on top of the entry's pages and the entry's
// row in the directory all say it, decided once, by badge.Decide, whose table is the
// precedence; entryState is the one place an entry's state becomes its input, and
// verdictLabel the one place the pages put it in their words.

// entryState is the badge.State of an entry: its newest round's state with the findings
// of its newest signed round (store.RoundState, as the directory reads it and
// digestState makes it of an EntryDigest), and its newest supply run's state.
func entryState(round store.RoundState, run store.SupplyState) badge.State {
	var st badge.State
	if round.Present {
		st.Probed, st.Signed, st.Coverage, st.Offline = true, round.Signed, round.Coverage, round.Offline()
	}
	if round.SignedRound {
		st.Findings = round.Failed + round.ObservedRisk
	}
	if run.Present {
		// An unsigned supply run is not a verdict anyone can check: it does not count,
		// but the entry was checked.
		st.HasSupply, st.Checked = run.Signed, true
		st.Verified, st.Score = store.IsVerified(run.Passed, run.Signed, run.Withdrawn), run.Score
	}
	return st
}

// verdictOf decides the verdict of an entry in the state of its newest round and
// supply run.
func verdictOf(round store.RoundState, run store.SupplyState) badge.Verdict {
	return badge.Decide(entryState(round, run))
}

// verdictLabel says verdict v as the pages' status label: the label's class suffix
// (card*; the text says it too) and its few words. round's findings name a verdict of
// risks ("1 failed, 2 risks"), run's score a Verified one or one of a supply run only.
func verdictLabel(v badge.Verdict, round store.RoundState, run store.SupplyState) (status, label string) {
	switch v {
	case badge.NotYetChecked:
		return cardNone, "not yet checked"
	case badge.Offline:
		return cardOffline, "offline"
	case badge.Risks:
		risks := stats.Plural(round.ObservedRisk, "risk", "risks")
		if round.Failed == 0 {
			return cardRisk, risks
		}
		label = strconv.Itoa(round.Failed) + " failed"
		if round.ObservedRisk > 0 {
			label += ", " + risks
		}
		return cardFailed, label
	case badge.LoginRequired:
		return cardLogin, "login required"
	case badge.Verified:
		return cardVerified, "Verified " + strconv.Itoa(run.Score)
	case badge.SupplyScore:
		if badge.ShowsScore(entryState(round, run)) {
			return cardNone, "score " + strconv.Itoa(run.Score)
		}
		return cardNone, "checked"
	case badge.Unsigned:
		return cardNone, "unsigned"
	case badge.NoRisksFound:
		return cardOK, "no findings"
	}
	return cardNone, "checked" // badge.Checked: a coverage this site does not know
}
