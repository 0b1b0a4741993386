package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"

	"github.com/probity-dev/probity/checks/supply"
	"github.com/probity-dev/probity/store"
)

const supplyUsage = `Usage:

	probity supply [--json] SLUG

Prints the newest run of an entry's supply-chain checks (seed 004): each of the eleven
checks with its status, points of its weight, the reason in plain words and the public
source to check it yourself; the score, and whether the entry is Verified and if not
why. --json prints the stored verdict and facts. The run itself is signed
(supply/v1) and exported with the rounds; "probity verify" recomputes the Verified
decision from the signed checks.

The checks run with "probity round" (package and repository entries) and weekly under
"probity serve", and again when a package's version or README changes.

` + envHelp

func runSupply(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("probity supply", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var ef envFlags
	ef.register(fs, false)
	asJSON := fs.Bool("json", false, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(stdout, supplyUsage)
			return 0
		}
		fmt.Fprintf(stderr, "error: %v\n%s", err, supplyUsage)
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "error: want exactly one SLUG\n%s", supplyUsage)
		return 2
	}
	ctx := context.Background()
	st, _, err := ef.openStore(ctx, slog.New(slog.DiscardHandler))
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	defer st.Close()
	e, err := st.Entry(ctx, fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "error: no entry %q: %v\n", fs.Arg(0), err)
		return 2
	}
	runs, err := st.SupplyRuns(ctx, e.ID, 1)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	if len(runs) == 0 {
		fmt.Fprintf(stderr, "no supply run for %s yet; \"probity round\" runs one\n", e.Slug)
		return 1
	}
	run := runs[0]
	signed := run.Envelope != nil
	if *asJSON {
		return printJSON(stdout, map[string]any{"entry": e.Slug, "ranAt": run.RanAt, "score": run.Score,
			"verified": store.IsVerified(run.Verified, signed), "signed": signed,
			"verdict": json.RawMessage(run.Verdict), "facts": json.RawMessage(run.Facts)})
	}
	v, err := supply.DecodeVerdict(run.Verdict)
	if err != nil {
		fmt.Fprintf(stderr, "error: stored verdict: %v\n", err)
		return 2
	}
	verified := "not Verified"
	switch {
	case store.IsVerified(run.Verified, signed):
		verified = "Verified"
	case run.Verified:
		verified = "not Verified (unsigned: its checks passed, but only a signed run counts)"
	}
	fmt.Fprintf(stdout, "%s   score %d   %s   (%d of 100 points checked, run %s UTC)\n\n", e.Slug, run.Score, verified, v.WeightRan, run.RanAt.UTC().Format("2006-01-02 15:04"))
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tSTATUS\tPOINTS\tREASON\tSOURCE")
	for _, r := range v.Results {
		// Reasons are built from the suite's own text and checked identifiers only.
		fmt.Fprintf(tw, "%s\t%s\t%.2g/%d\t%s\t%s\n", r.ID, r.Status, r.Points, r.Weight, r.Reason, r.SourceURL)
	}
	tw.Flush()
	for _, why := range v.NotVerified {
		fmt.Fprintf(stdout, "not Verified: %s\n", why)
	}
	return 0
}
