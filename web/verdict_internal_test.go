package web

import (
	"testing"
	"time"

	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/web/badge"
)

// TestOneVerdict: the badge, the entry's card and its directory row say one verdict
// (badge.Decide, whose precedence badge's TestFor tests) for the states where they
// once disagreed: an offline server with older risks, a newer unsigned round after a
// signed round behind a login or without findings, a package with an unsigned supply
// run only, risks of a Verified server.
func TestOneVerdict(t *testing.T) {
	at := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	signed := func(coverage string, failed, risks int) *store.RoundSummary {
		return &store.RoundSummary{ID: 1, RoundID: "r-1", StartedAt: at, Signed: true, Coverage: coverage,
			Uptime: store.UptimeAnswered, Failed: failed, ObservedRisk: risks, ToolCount: 3}
	}
	unsigned := func(uptime store.UptimeClass) *store.RoundSummary {
		return &store.RoundSummary{ID: 2, RoundID: "u-2", StartedAt: at.Add(time.Hour), UnsignedReason: "no_handshake", Uptime: uptime}
	}
	run := func(passed bool) *store.SupplyRecord {
		return &store.SupplyRecord{ID: 1, RanAt: at, Score: 91, Verified: passed}
	}
	remote := store.Entry{Slug: "s", Kind: store.KindRemote, Name: "s"}
	pkg := store.Entry{Slug: "p", Kind: store.KindNPM, Name: "p"}
	for _, c := range []struct {
		name         string
		e            store.Entry
		round        *store.RoundSummary
		signedRound  *store.RoundSummary
		supply       *store.SupplyRecord
		supplySigned bool
		want         badge.Verdict
		message      string // the badge's
		status       string // the card's and the row's
	}{
		{"offline over older risks", remote, unsigned(store.UptimeNoAnswer), signed("full", 1, 2), nil, false,
			badge.Offline, "offline", cardOffline},
		{"unsigned after a signed round behind a login", remote, unsigned(store.UptimeAnswered), signed("auth_required", 0, 0), nil, false,
			badge.Unsigned, "unsigned", cardNone},
		{"unsigned after a signed round without findings", remote, unsigned(store.UptimeAnswered), signed("full", 0, 0), run(false), true,
			badge.Unsigned, "unsigned | score 91", cardNone},
		{"risks over Verified", remote, signed("full", 0, 2), signed("full", 0, 2), run(true), true,
			badge.Risks, "2 risks", cardRisk},
		{"login required over Verified", remote, signed("auth_required", 0, 0), signed("auth_required", 0, 0), run(true), true,
			badge.LoginRequired, "login required", cardLogin},
		{"a package with an unsigned supply run only", pkg, nil, nil, run(true), false,
			badge.Unsigned, "unsigned", cardNone},
		{"a package with a signed supply run only", pkg, nil, nil, run(false), true,
			badge.SupplyScore, "score 91", cardNone},
		{"Verified after an unsigned round", remote, unsigned(store.UptimeAnswered), signed("full", 0, 0), run(true), true,
			badge.Verified, "verified", cardVerified},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := store.EntryDigest{Entry: c.e, Round: c.round, SignedRound: c.signedRound, Supply: c.supply, SupplySigned: c.supplySigned}
			roundState, runState := digestState(&d)
			if v := verdictOf(roundState, runState); v != c.want {
				t.Fatalf("verdict %s, want %s", v, c.want)
			}
			if b := badge.For(entryState(roundState, runState)); b.Message != c.message {
				t.Errorf("badge %q, want %q", b.Message, c.message)
			}
			card := cardOf(&d, stateOf(c.e, roundState, runState), c.signedRound, nil, nil)
			status, label := verdictLabel(c.want, roundState, runState)
			if card.Status != c.status || status != c.status || card.Label != label {
				t.Errorf("card %s %q, row %s %q; want %s", card.Status, card.Label, status, label, c.status)
			}
			if card.Sentence == "" {
				t.Errorf("the card says nothing")
			}
		})
	}
}
