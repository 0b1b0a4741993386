package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/probity-dev/probity/history/stats"
	"github.com/probity-dev/probity/operators"
	"github.com/probity-dev/probity/registry/regsync"
	"github.com/probity-dev/probity/rounds"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/targets"
)

const targetsUsage = `Usage:

	probity targets import [--data-dir DIR] [--first-spread D] FILE|-
	probity targets list [--data-dir DIR]
	probity targets remove [--data-dir DIR] [--yes] [--reason TEXT] SLUG

import adds the servers an import file lists, one entry per server: one reference per
line (an https:// URL of a remote MCP endpoint; npm:NAME, pypi:NAME, github:OWNER/REPO
or their registry URLs; blank lines and # comments are skipped), each a one-part
entry, or official MCP registry server.json documents (one, an array, JSON Lines, or a
registry API list response), each one entry with its remotes, packages and repository
linked. Importing a server again updates its listing (title, description, parts, the
server.json) and never its history; a deprecated or deleted server is unlisted. A part
another entry already has stays there and is reported. Bad lines are reported with
their line numbers and the rest are imported; the exit status is then 1. New remote
entries get their first round at a random moment within --first-spread (default 15m)
and a daily status check.

list prints every entry: slug, kind, locator (its primary part), server name ("-" for
a bare reference; "(unlisted)" when deprecated or deleted), parts, last round and
uptime.

remove deletes the entry SLUG with its whole history (rounds, changes, supply runs,
their signed records, uptime, due times), as seed 000 has it: nobody follows a deleted
entry. The ledger keeps a tombstone that says when and why (--reason, one line of at
most 200 characters; default "removed by the operator") and which records went; records
published before stay verifiable with the key document. It asks for confirmation on
standard input unless --yes is given; anything but "y" or "yes" leaves the entry as it
is (exit status 1).

Flags may come before or after the command and its operand ("--" ends them), as in
"probity targets remove SLUG --yes".

` + envHelp

func runTargets(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		io.WriteString(stdout, targetsUsage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	fs := flag.NewFlagSet("probity targets", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var ef envFlags
	ef.register(fs, false)
	var schedule rounds.Schedule
	fs.DurationVar(&schedule.FirstSpread, "first-spread", 15*time.Minute, "")
	yes := fs.Bool("yes", false, "")
	reason := fs.String("reason", "removed by the operator", "")
	if err := parseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(stdout, targetsUsage)
			return 0
		}
		fmt.Fprintf(stderr, "error: %v\n%s", err, targetsUsage)
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintf(stderr, "error: want a targets command (import, list or remove)\nhint: probity targets list\n")
		return 2
	}
	sub, operands := fs.Arg(0), fs.Args()[1:]
	// The operand each command takes ("": none), checked before the store is opened.
	operand, known := map[string]string{"import": "FILE", "list": "", "remove": "SLUG"}[sub]
	switch {
	case !known:
		fmt.Fprintf(stderr, "error: unknown targets command %q\n%s", sub, targetsUsage)
		return 2
	case operand == "" && len(operands) != 0:
		fmt.Fprintf(stderr, "error: targets %s takes no arguments, got %q\nhint: probity targets %s\n", sub, operands, sub)
		return 2
	case operand != "" && len(operands) != 1:
		fmt.Fprintf(stderr, "error: targets %s wants one %s, got %s\nhint: probity targets %s %s\n",
			sub, operand, stats.Plural(len(operands), "argument", "arguments"), sub, operand)
		return 2
	}
	ctx := context.Background()
	st, _, err := ef.openStore(ctx, slog.New(slog.DiscardHandler))
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	defer st.Close()
	switch sub {
	case "import":
		return importTargets(ctx, st, operands[0], schedule, stdout, stderr)
	case "remove":
		return removeTarget(ctx, st, operands[0], *reason, *yes, os.Stdin, stdout, stderr)
	default:
		return listTargets(ctx, st, stdout, stderr)
	}
}

// importTargets imports a targets file into st and reports what it did. It returns the
// exit status: 0 all lines imported, 1 some lines bad, 2 the file could not be read.
func importTargets(ctx context.Context, st store.Store, path string, schedule rounds.Schedule, stdout, stderr io.Writer) int {
	var in io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintf(stderr, "error: %v\n", err)
			return 2
		}
		defer f.Close()
		in = f
	}
	servers, bad, err := targets.Parse(in)
	if err != nil {
		fmt.Fprintf(stderr, "error: couldn't read %s: %v\n", path, err)
		return 2
	}
	for _, le := range bad {
		fmt.Fprintf(stderr, "%s: %v\n", path, le)
	}
	var created, updated, unchanged, skipped, conflicts int
	failed := len(bad)
	last := time.Now()
	for i, s := range servers {
		res, err := regsync.Import(ctx, st, s, regsync.ImportOptions{Due: schedule.FirstDue, Now: time.Now()})
		if err != nil {
			fmt.Fprintf(stderr, "%s: line %d: %v\n", path, s.Line, err)
			failed++
			continue
		}
		for _, c := range res.Conflicts {
			fmt.Fprintf(stderr, "%s: line %d: %s\n", path, s.Line, regsync.ConflictText(c))
			conflicts++
		}
		switch {
		case res.Skipped:
			skipped++
		case res.Created:
			created++
		case res.Updated:
			updated++
		default:
			unchanged++
		}
		if time.Since(last) > 5*time.Second {
			fmt.Fprintf(stderr, "imported %d of %d …\n", i+1, len(servers))
			last = time.Now()
		}
	}
	fmt.Fprintf(stdout, "%s added, %d updated, %d already listed, %d not added (deprecated or deleted), %s held by other entries, %s with errors\n",
		stats.Plural(created, "entry", "entries"), updated, unchanged, skipped, stats.Plural(conflicts, "part", "parts"), stats.Plural(failed, "line", "lines"))
	if failed > 0 {
		return 1
	}
	return 0
}

// removeTarget deletes the entry slug with its history after asking on in (unless yes).
// It returns the exit status: 0 deleted, 1 not deleted (declined, or no such entry), 2
// the store failed.
func removeTarget(ctx context.Context, st store.Store, slug, reason string, yes bool, in io.Reader, stdout, stderr io.Writer) int {
	e, err := st.Entry(ctx, slug)
	if err != nil {
		printEntryError(stderr, slug, err)
		if errors.Is(err, store.ErrNotFound) {
			return 1
		}
		return 2
	}
	if !yes {
		fmt.Fprintf(stdout, "Delete %s (%s %s) and its whole history? Its rounds, changes and supply runs go; the ledger keeps a tombstone. [y/N] ",
			e.Slug, e.Kind, e.Locator)
		answer, _ := bufio.NewReader(io.LimitReader(in, 64)).ReadString('\n')
		switch strings.ToLower(strings.TrimSpace(answer)) {
		case "y", "yes":
		default:
			fmt.Fprintf(stdout, "\n%s is kept.\n", e.Slug)
			return 1
		}
	}
	if err := st.DeleteEntry(ctx, e.Slug, reason); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			fmt.Fprintf(stderr, "error: no entry %q (deleted meanwhile)\n", slug)
			return 1
		}
		fmt.Fprintf(stderr, "error: couldn't delete %s: %v\n", e.Slug, rootCause(err))
		return 2
	}
	fmt.Fprintf(stdout, "deleted %s and its history; the ledger's tombstone records it\n", e.Slug)
	// The operators' audit log records it too, by "cli", right after the deletion (its
	// own transaction).
	ops, err := operators.New(operators.Config{Store: st})
	if err == nil {
		err = ops.Record(ctx, operators.Action{By: operators.CLI, Name: operators.ActionDeleteEntry, EntrySlug: e.Slug, EntryID: e.ID,
			Target: "entry", Reason: reason})
	}
	if err != nil {
		fmt.Fprintf(stderr, "warning: the deletion of %s is not in the operators' audit log: %v\n", e.Slug, rootCause(err))
	}
	return 0
}

func listTargets(ctx context.Context, st store.Store, stdout, stderr io.Writer) int {
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SLUG\tKIND\tLOCATOR\tSERVER\tPARTS\tLAST ROUND\tUPTIME")
	var after int64
	for {
		es, err := st.Entries(ctx, after, 1000)
		if err != nil {
			fmt.Fprintf(stderr, "error: %v\n", err)
			return 2
		}
		for _, e := range es {
			last, up := "-", "-"
			if !e.LastRoundAt.IsZero() {
				last = e.LastRoundAt.UTC().Format(time.RFC3339)
			}
			if e.UptimeCountedDays > 0 {
				up = fmt.Sprintf("%d%% of %s", (e.UptimeOnlineDays*100+e.UptimeCountedDays/2)/e.UptimeCountedDays, stats.Plural(int(e.UptimeCountedDays), "day", "days"))
			}
			_, parts, err := st.EntryListing(ctx, e.ID)
			if err != nil {
				fmt.Fprintf(stderr, "error: couldn't read the listing of %s: %v\n", e.Slug, rootCause(err))
				return 2
			}
			server := "-"
			if e.ServerName != "" {
				// A server name matches the registry's pattern ([a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+
				// when it came from a registry; targets refuses white space and control
				// characters in any), never free text.
				server = e.ServerName
			}
			if !e.Listed {
				server += " (unlisted)"
			}
			// Locators are validated on import (URLs and package names), never free text.
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", e.Slug, e.Kind, e.Locator, server, len(parts), last, up)
			after = e.ID
		}
		if len(es) < 1000 {
			break
		}
	}
	tw.Flush()
	return 0
}
