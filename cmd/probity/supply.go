package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"

	"github.com/probity-dev/probity/checks/supply"
	"github.com/probity-dev/probity/history/stats"
	"github.com/probity-dev/probity/store"
)

const supplyUsage = `Usage:

	probity supply [--json] SLUG

Prints the newest run of an entry's supply-chain checks (seed 004), which read the whole
server: the repository it lists, its first npm or PyPI package and its remote. Each of
the eleven checks with its status, points of its weight, the reason in plain words and
the public source to check it yourself, then the evidence of each check; the parts
listed but not checked; the score, and whether the entry is Verified and if not why.
A status "not run, retried" is a check Probity could not run because a source could not
be read on its side (quota, timeout, a 5xx answer, the network): it counts neither way,
and the checks run again within hours. --json prints the stored verdict and facts. The
run itself is signed (supply/v1, where a check not run is signed as skipped) and
exported with the rounds; "probity verify" recomputes the Verified decision from the
signed checks. Flags may come before or after SLUG.

The checks run with "probity round" (package and repository entries, and remote
servers with a linked package or repository, after their round) and weekly under
"probity serve", and again when a package's version or README changes.

` + envHelp

func runSupply(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("probity supply", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var ef envFlags
	ef.register(fs, false)
	asJSON := fs.Bool("json", false, "")
	if err := parseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(stdout, supplyUsage)
			return 0
		}
		fmt.Fprintf(stderr, "error: %v\n%s", err, supplyUsage)
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "error: want one SLUG, got %s\nhint: probity supply SLUG  (\"probity targets list\" shows the slugs)\n",
			stats.Plural(fs.NArg(), "argument", "arguments"))
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
		printEntryError(stderr, fs.Arg(0), err)
		return 2
	}
	runs, err := st.SupplyRuns(ctx, e.ID, 1)
	if err != nil {
		fmt.Fprintf(stderr, "error: couldn't read the supply runs of %s: %v\n", e.Slug, rootCause(err))
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
			"verified": store.IsVerified(run.Verified, signed, e.VerifiedWithdrawn), "signed": signed, "verifiedWithdrawn": e.VerifiedWithdrawn,
			"verdict": json.RawMessage(run.Verdict), "facts": json.RawMessage(run.Facts)})
	}
	v, err := supply.DecodeVerdict(run.Verdict)
	if err != nil {
		fmt.Fprintf(stderr, "error: stored verdict: %v\n", err)
		return 2
	}
	verified := "not Verified"
	switch {
	case store.IsVerified(run.Verified, signed, e.VerifiedWithdrawn):
		verified = "Verified"
	case run.Verified && signed && e.VerifiedWithdrawn:
		verified = "not Verified (withdrawn by an operator: see the entry's page)"
	case run.Verified:
		verified = "not Verified (unsigned: its checks passed, but only a signed run counts)"
	}
	fmt.Fprintf(stdout, "%s   score %d   %s   (%d of 100 points checked, run %s UTC)\n\n", e.Slug, run.Score, verified, v.WeightRan, run.RanAt.UTC().Format("2006-01-02 15:04"))
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tSTATUS\tPOINTS\tREASON\tSOURCE")
	for _, r := range v.Results {
		// Reasons are built from the suite's own text and checked identifiers only.
		fmt.Fprintf(tw, "%s\t%s\t%.2g/%d\t%s\t%s\n", r.ID, supply.StatusText(r.Status), r.Points, r.Weight, r.Reason, r.SourceURL)
	}
	tw.Flush()
	printSupplyEvidence(stdout, v)
	var facts supply.Facts
	if json.Unmarshal(run.Facts, &facts) == nil && len(facts.Unchecked) > 0 {
		fmt.Fprintln(stdout, "\nListed, not checked:")
		for _, p := range facts.Unchecked {
			fmt.Fprintf(stdout, "  %s %s\n", oneLine(p.Kind), oneLine(p.Locator))
		}
	}
	if ids := v.NotRun(); len(ids) > 0 {
		fmt.Fprintf(stdout, "\nnot run, retried: %s (a source could not be read on Probity's side; the checks run again within hours)\n", strings.Join(ids, ", "))
	}
	for _, why := range v.NotVerified {
		fmt.Fprintf(stdout, "not Verified: %s\n", why)
	}
	return 0
}

// printSupplyEvidence prints the evidence of each check: what it is, the escaped excerpt
// of third-party text (supply.Evidence.Sample) and the link to check it.
func printSupplyEvidence(w io.Writer, v supply.Verdict) {
	first := true
	for _, r := range v.Results {
		for _, e := range r.Evidence {
			if first {
				fmt.Fprintln(w, "\nEvidence:")
				first = false
			}
			line := "  " + r.ID + ": " + oneLine(e.What)
			if e.Sample != "" {
				line += " [" + oneLine(e.Sample) + "]"
			}
			if e.Link != "" {
				line += " <" + oneLine(e.Link) + ">"
			}
			fmt.Fprintln(w, line)
		}
	}
}

// oneLine keeps stored text on one line of printable characters: control characters
// (a terminal's escapes among them) become "?". Samples are escaped when stored; this
// guards against a verdict or facts document written by something else.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, s)
}
