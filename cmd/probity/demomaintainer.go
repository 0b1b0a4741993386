package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/probity-dev/probity/checks/fixtures"
	"github.com/probity-dev/probity/claims"
	"github.com/probity-dev/probity/disputes"
	"github.com/probity-dev/probity/operators"
	"github.com/probity-dev/probity/store"
)

// The demo's maintainer of the drifting server and its operator: accounts made by the
// demo, signed in to with a code e-mailed to the demo's mail sink.
const (
	demoMaintainer = "maintainer@demo.probity.test"
	demoOperator   = "operator@demo.probity.test"
)

// demoContested is the check the demo's maintainer contests on the drifting server's
// newest signed round: after the drift it fails against the approved baseline.
const demoContested = "toolset_unchanged_vs_approved"

// demoStatement is the demo maintainer's dispute, in the demo's voice.
const demoStatement = "This is the Probity demo's maintainer speaking. delete_city was added on purpose in " +
	"the demo's drift and declares destructiveHint; we ask for the finding to be reviewed before a new " +
	"baseline is approved. (A demo dispute: nobody is harmed, an operator can decide it at /ops.)"

// demoListing is the maintainer's listing of the drifting server (an operator change in
// its history).
var demoListing = store.MaintainerListing{
	Description: "A weather server of the Probity demo that changes its tools between rounds, " +
		"so the history, the baseline checks and the dispute have something to show.",
	SetupNotes: "Nothing to install: `probity demo` serves it on loopback, over TLS with the demo's CA.",
	Links:      []store.ListingLink{{Label: "Probity", URL: "https://probity.dev/"}},
}

// demoAccount returns the demo's account of email, making it at the first run.
func demoAccount(ctx context.Context, st store.Store, email string) (store.Account, error) {
	a, _, err := st.EmailAccount(ctx, email, email, time.Now())
	if err != nil {
		return store.Account{}, fmt.Errorf("couldn't make the demo's account %s: %w", email, err)
	}
	return a, nil
}

// claimDemo has the demo's maintainer claim e through the claims service, as a person
// does on the Claim page: a token for the entry's https remote (Start), served by the
// demo at its TLS origin's /.well-known/probity-claim, then Check. An entry the
// maintainer maintains already (a second run) is left as it is.
func claimDemo(ctx context.Context, w *writePaths, demo *fixtures.Demo, maint store.Account, e store.Entry, stderr io.Writer) error {
	ok, err := w.claims.IsMaintainer(ctx, maint.ID, e.ID)
	if err != nil {
		return fmt.Errorf("couldn't ask whether %s maintains %s: %w", demoMaintainer, e.Slug, err)
	}
	if ok {
		fmt.Fprintf(stderr, "claim: %s maintains %s already\n", demoMaintainer, e.Slug)
		return nil
	}
	started, err := w.claims.Start(ctx, maint.ID, e.Slug, claims.MethodWellKnown, e.Locator)
	if err != nil {
		return fmt.Errorf("couldn't start a claim of %s: %w", e.Slug, err)
	}
	demo.SetClaimToken(started.Token)
	if _, err := w.claims.Check(ctx, maint.ID, e.Slug, started.Token); err != nil {
		return fmt.Errorf("the claim of %s by %s was not proven: %w", e.Slug, started.Where, err)
	}
	fmt.Fprintf(stderr, "claim: %s claimed %s with the token at %s\n", demoMaintainer, e.Slug, started.Where)
	return nil
}

// editDemoListing saves the maintainer's listing of e; nothing changes when it is saved
// already.
func editDemoListing(ctx context.Context, w *writePaths, e store.Entry, stderr io.Writer) error {
	fields, err := w.listings.Edit(ctx, e.ID, demoListing)
	if err != nil {
		return fmt.Errorf("couldn't edit the listing of %s: %w", e.Slug, err)
	}
	if len(fields) > 0 {
		fmt.Fprintf(stderr, "listing: the maintainer edited %v of %s\n", fields, e.Slug)
	}
	return nil
}

// approveDemoBaseline approves the tool surface of e's newest signed round as its
// baseline, unless e has one (a second run keeps the first run's, so that its drift
// fails the *_unchanged_vs_approved checks again).
func approveDemoBaseline(ctx context.Context, st store.Store, w *writePaths, maint store.Account, e store.Entry, stderr io.Writer) error {
	cur, err := st.CurrentBaseline(ctx, e.ID)
	if err == nil {
		fmt.Fprintf(stderr, "baseline: %s has baseline %d already (%d tools)\n", e.Slug, cur.Number, cur.ToolCount)
		return nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("couldn't read the baseline of %s: %w", e.Slug, err)
	}
	b, err := w.baselines.Approve(ctx, maint.ID, e.Slug)
	if err != nil {
		return fmt.Errorf("couldn't approve the baseline of %s: %w", e.Slug, err)
	}
	fmt.Fprintf(stderr, "baseline: the maintainer approved baseline %d of %s (%d tools)\n", b.Number, e.Slug, b.ToolCount)
	return nil
}

// contestDemo opens the maintainer's dispute of demoContested on e's newest signed
// round, unless e has an open dispute already (a second run). The round must be
// numbered in the ledger (disputes.ErrPending otherwise): call it after the log synced.
func contestDemo(ctx context.Context, st store.Store, w *writePaths, maint store.Account, e store.Entry, stderr io.Writer) (disputes.Dispute, error) {
	ds, err := w.disputes.OfEntry(ctx, e.Slug)
	if err != nil {
		return disputes.Dispute{}, fmt.Errorf("couldn't read the disputes of %s: %w", e.Slug, err)
	}
	for _, d := range ds {
		if d.Outcome == nil {
			fmt.Fprintf(stderr, "dispute: %s has open dispute %d already (%s)\n", e.Slug, d.Number, d.CheckID)
			return d, nil
		}
	}
	rs, err := st.Rounds(ctx, e.ID, 10)
	if err != nil {
		return disputes.Dispute{}, fmt.Errorf("couldn't read the rounds of %s: %w", e.Slug, err)
	}
	for _, r := range rs {
		if !r.Signed || r.PayloadDigest == "" {
			continue
		}
		d, err := w.disputes.Contest(ctx, maint.ID, e.Slug, r.ID, demoContested, demoStatement, "")
		if err != nil {
			return disputes.Dispute{}, fmt.Errorf("couldn't contest %s of %s's round %s: %w", demoContested, e.Slug, r.RoundID, err)
		}
		fmt.Fprintf(stderr, "dispute: the maintainer contested %s (%s) of round %s of %s\n", demoContested, d.Status, r.RoundID, e.Slug)
		return d, nil
	}
	return disputes.Dispute{}, fmt.Errorf("%s has no signed round to contest", e.Slug)
}

// grantDemoOperator gives the demo's operator account the operator role (once).
func grantDemoOperator(ctx context.Context, st store.Store, w *writePaths) error {
	if _, err := demoAccount(ctx, st, demoOperator); err != nil {
		return err
	}
	if _, _, err := w.operators.Grant(ctx, operators.CLI, demoOperator); err != nil {
		return fmt.Errorf("couldn't make %s an operator: %w", demoOperator, err)
	}
	return nil
}
