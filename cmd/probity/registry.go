package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/probity-dev/probity/checks/probe/egress"
	"github.com/probity-dev/probity/history/stats"
	"github.com/probity-dev/probity/registry"
	"github.com/probity-dev/probity/registry/regsync"
	"github.com/probity-dev/probity/rounds"
)

const registryUsage = `Usage:

	probity registry sync [--url BASE] [--full] [--data-dir DIR] [--allow-loopback]
	                      [--first-spread D]

sync reads the servers of an MCP registry (GET BASE/v0.1/servers, the official
registry's API; default BASE ` + registry.DefaultBaseURL + `) and lists each as
one entry with its remotes, packages and repository: the version the registry marks
isLatest, listed when active, unlisted (kept with its history, left out of the
directory and the schedule) when deprecated or deleted, and listed again when active
again. A server Probity never listed that is deprecated or deleted is not added.

The first sync reads everything; each later one only what the registry updated since
the newest update the last one read, less 5 minutes of overlap (re-reading a server
changes nothing), with deleted servers included so deletions come through. The sync
stores each page before it asks for the next and keeps its place, so a sync that
stopped (interrupted, a crash, a page the registry got wrong) resumes where it stopped
when run again. Pages larger than 4 MiB or with more than 500 servers, answers that are
not a server list and cursors that loop are refused with an error; what was imported
before stays.

	--url BASE        the registry's base URL, without /v0.1
	--full            read everything, and start over instead of resuming
	--allow-loopback  allow a registry on 127.0.0.0/8 or ::1 (tests and local mirrors
	                  only); private networks and metadata addresses stay refused
	--first-spread D  new remote entries get their first round within D (default 15m)

Flags may come before or after "sync". Progress goes to standard error, the summary to
standard output. The exit status is 0 when the sync completed, 1 when it stopped early
(run it again to resume), 2 on usage or store errors.

` + envHelp

func runRegistry(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		io.WriteString(stdout, registryUsage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	fs := flag.NewFlagSet("probity registry", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var ef envFlags
	ef.register(fs, false)
	base := fs.String("url", registry.DefaultBaseURL, "")
	full := fs.Bool("full", false, "")
	allowLoopback := fs.Bool("allow-loopback", false, "")
	var schedule rounds.Schedule
	fs.DurationVar(&schedule.FirstSpread, "first-spread", 15*time.Minute, "")
	if err := parseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(stdout, registryUsage)
			return 0
		}
		fmt.Fprintf(stderr, "error: %v\n%s", err, registryUsage)
		return 2
	}
	switch {
	case fs.NArg() == 0:
		fmt.Fprintf(stderr, "error: want a registry command\nhint: probity registry sync\n")
		return 2
	case fs.Arg(0) != "sync":
		fmt.Fprintf(stderr, "error: unknown registry command %q\n%s", strings.Join(fs.Args(), " "), registryUsage)
		return 2
	case fs.NArg() > 1:
		fmt.Fprintf(stderr, "error: registry sync takes no operands, got %q\n%s", fs.Args()[1:], registryUsage)
		return 2
	}
	client, err := registry.New(registry.Config{BaseURL: *base,
		HTTPClient: registry.GuardedHTTPClient(egress.Config{AllowLoopback: *allowLoopback})})
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	st, _, err := ef.openStore(ctx, slog.New(slog.DiscardHandler))
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	defer st.Close()
	sy, err := regsync.NewSyncer(regsync.SyncConfig{Store: st, Client: client, Due: schedule.FirstDue,
		Progress: func(s regsync.Summary) {
			rate := 0.0
			if s.Elapsed > 0 {
				rate = float64(s.Items) / s.Elapsed.Seconds()
			}
			fmt.Fprintf(stderr, "page %d: %s read, %d added, %d updated, %d unchanged (%.0f/s)\n",
				s.Pages, stats.Servers(s.Items), s.Created, s.Updated, s.Unchanged, rate)
		}})
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	from := "everything"
	state, err := st.RegistrySyncState(ctx, client.BaseURL())
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "error: couldn't read the sync state: %v\n", err)
		return 2
	case !state.WalkStarted.IsZero() && !*full:
		from = "resuming the sync started " + state.WalkStarted.UTC().Format(time.RFC3339)
	case !state.Since.IsZero() && !*full:
		from = "updates since " + state.Since.Add(-regsync.DefaultOverlap).UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(stderr, "syncing %s: %s\n", client.BaseURL(), from)
	sum, err := sy.Sync(ctx, regsync.SyncOptions{Full: *full})
	for _, p := range sum.Problems {
		fmt.Fprintf(stderr, "%s\n", p)
	}
	if more := sum.Invalid + sum.Conflicts - len(sum.Problems); more > 0 {
		fmt.Fprintf(stderr, "… and %d more refused servers or parts held by other entries\n", more)
	}
	fmt.Fprintf(stdout, "%s: %s, %s read in %s: %s added, %d updated, %d unchanged, %d unlisted, %d not added (deprecated or deleted), %d refused, %s held by other entries\n",
		sum.BaseURL, stats.Plural(sum.Pages, "page", "pages"), stats.Servers(sum.Items), sum.Elapsed.Round(time.Millisecond),
		stats.Plural(sum.Created, "entry", "entries"), sum.Updated, sum.Unchanged, sum.Unlisted, sum.Skipped, sum.Invalid, stats.Plural(sum.Conflicts, "part", "parts"))
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\nhint: run the same command again to resume; --full starts over\n", err)
		if ctx.Err() == nil && isStoreTrouble(err) {
			return 2
		}
		return 1
	}
	return 0
}

// isStoreTrouble reports whether a sync stopped because of the store rather than the
// registry (a refused page, the network, an interrupt).
func isStoreTrouble(err error) bool {
	var pe *registry.PageError
	return !errors.As(err, &pe)
}
