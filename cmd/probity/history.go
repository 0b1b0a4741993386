package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/history/stats"
	"github.com/probity-dev/probity/store"
)

const historyUsage = `Usage:

	probity history [--json] [--limit N] [--hidden] SLUG
	probity history hide --reason TEXT SLUG NUMBER
	probity history show SLUG NUMBER

Prints an entry's change history, newest first: number (for #ch-N links), UTC time,
origin, kind, one-line summary and badges. --json prints the full changes, details
included (tools added and removed, descriptions before and after, …); server text in
them is JSON-escaped, never interpreted. --hidden includes hidden changes.

hide hides a change (a fetch that turned out wrong, or on request) with a reason;
hidden changes appear in no page, feed or statistic, but stay signed records and are
exported. show prints one change, and unhide (same arguments as show) shows it again.

` + envHelp

func runHistory(args []string, stdout, stderr io.Writer) int {
	sub := ""
	if len(args) > 0 && (args[0] == "hide" || args[0] == "unhide" || args[0] == "show") {
		sub, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("probity history", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var ef envFlags
	ef.register(fs, false)
	asJSON := fs.Bool("json", false, "")
	limit := fs.Int("limit", 100, "")
	hidden := fs.Bool("hidden", false, "")
	reason := fs.String("reason", "", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(stdout, historyUsage)
			return 0
		}
		fmt.Fprintf(stderr, "error: %v\n%s", err, historyUsage)
		return 2
	}
	want := 1
	if sub != "" {
		want = 2
	}
	if fs.NArg() != want {
		fmt.Fprintf(stderr, "error: want %d arguments\n%s", want, historyUsage)
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
	var number int64
	if sub != "" {
		if number, err = strconv.ParseInt(fs.Arg(1), 10, 64); err != nil || number < 1 {
			fmt.Fprintf(stderr, "error: %q is not a change number\n", fs.Arg(1))
			return 2
		}
	}
	switch sub {
	case "hide", "unhide":
		if sub == "hide" && strings.TrimSpace(*reason) == "" {
			fmt.Fprintf(stderr, "error: hiding a change needs --reason\n")
			return 2
		}
		if err := st.HideChange(ctx, e.ID, number, sub == "hide", *reason); err != nil {
			fmt.Fprintf(stderr, "error: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "change %d of %s %s\n", number, e.Slug, map[string]string{"hide": "hidden", "unhide": "shown again"}[sub])
		return 0
	case "show":
		c, err := st.Change(ctx, e.ID, number)
		if err != nil {
			fmt.Fprintf(stderr, "error: %v\n", err)
			return 1
		}
		return printJSON(stdout, changeJSON(c))
	}
	cs, err := st.Changes(ctx, store.ChangeFilter{EntryID: e.ID, IncludeHidden: *hidden, Limit: *limit})
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	if *asJSON {
		out := make([]any, len(cs))
		for i, c := range cs {
			out[i] = changeJSON(c)
		}
		return printJSON(stdout, out)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tRECORDED (UTC)\tORIGIN\tKIND\tSUMMARY\tBADGES")
	for _, c := range cs {
		h := ""
		if c.Hidden {
			h = " (hidden)"
		}
		// Summaries hold counts and version numbers only; badges are fixed words.
		fmt.Fprintf(tw, "ch-%d%s\t%s\t%s\t%s\t%s\t%s\n", c.Number, h, c.RecordedAt.UTC().Format("2006-01-02 15:04:05"),
			c.Origin, c.Kind, c.Summary, strings.Join(c.Badges, ","))
	}
	tw.Flush()
	return 0
}

// changeJSON is the printed form of a change.
func changeJSON(c store.ChangeRecord) map[string]any {
	m := map[string]any{
		"entry": c.EntrySlug, "number": c.Number, "recordedAt": c.RecordedAt.UTC().Format(time.RFC3339Nano),
		"origin": c.Origin, "kind": c.Kind, "summary": c.Summary, "badges": c.Badges,
		"details": json.RawMessage(c.Details), "hidden": c.Hidden, "keyId": c.KeyID,
	}
	if c.Hidden {
		m["hiddenReason"] = c.HiddenReason
	}
	return m
}

func printJSON(w io.Writer, v any) int {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return 2
	}
	return 0
}

const statsUsage = `Usage:

	probity stats [--json] [--now TIME]

Prints the drift and uptime statistics of the whole store as Markdown (or JSON): how
often toolsets change (within the first 7/14/21 days, changes per server, change types,
by tool count, intervals, names vs descriptions and schemas, changed reads per day), the
7- and 30-day drift tables, single tools in the changed lists, protocol versions,
handshake paths, logins (where a 401 came, its challenge and RFC 9728 metadata), and
uptime by group, each with its definition. Reads are the stored rounds; the drift tables
compare each tool's name, description and input schema, as the seed studies did.
Claimed entries and paginated lists are left out of them, as in the seeds.
--now sets the cut-off (default: now).

` + envHelp

func runStats(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("probity stats", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var ef envFlags
	ef.register(fs, false)
	asJSON := fs.Bool("json", false, "")
	nowFlag := fs.String("now", "", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(stdout, statsUsage)
			return 0
		}
		fmt.Fprintf(stderr, "error: %v\n%s", err, statsUsage)
		return 2
	}
	now := time.Now().UTC()
	if *nowFlag != "" {
		t, err := parseSince(*nowFlag)
		if err != nil {
			fmt.Fprintf(stderr, "error: %v\n", err)
			return 2
		}
		now = t
	}
	ctx := context.Background()
	st, _, err := ef.openStore(ctx, slog.New(slog.DiscardHandler))
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	defer st.Close()
	start := time.Now()
	opt := stats.Options{Now: now}
	if err := opt.Validate(); err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	fmt.Fprintln(stderr, "reading rounds, surfaces and uptime …")
	servers, err := history.LoadStats(ctx, st, opt)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	rep := stats.Compute(servers, opt)
	fmt.Fprintf(stderr, "computed over %d entries in %s\n", len(servers), time.Since(start).Round(time.Millisecond))
	if *asJSON {
		return printJSON(stdout, rep)
	}
	io.WriteString(stdout, rep.Markdown())
	return 0
}
