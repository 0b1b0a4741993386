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
	"github.com/probity-dev/probity/operators"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/web/feed"
)

const historyUsage = `Usage:

	probity history [--json] [--limit N] [--hidden] SLUG
	probity history show [--json] SLUG NUMBER
	probity history hide --reason TEXT SLUG NUMBER
	probity history unhide SLUG NUMBER

Prints an entry's change history, newest first: number (for #ch-N links), UTC time,
origin, kind, one-line summary and badges. --json prints the full changes, details
included (tools added and removed, descriptions before and after, …); server text in
them is JSON-escaped, never interpreted. --hidden includes hidden changes; --limit
prints at most N (default 100).

show prints one change in words: when (UTC) and by whom it was recorded, its summary,
badges and details (server text with invisible characters shown as escapes), whether
it is hidden and why, and the key that signed it; --json prints it as JSON instead.
hide hides a change (a fetch that turned out wrong, or on request) with a reason;
hidden changes appear in no page, feed or statistic, but stay signed records and are
exported. unhide shows it again (--reason optional). Both are recorded in the
operators' audit log, by "cli".

Flags may come before or after the subcommand, SLUG and NUMBER ("--" ends them).

` + envHelp

func runHistory(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("probity history", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var ef envFlags
	ef.register(fs, false)
	asJSON := fs.Bool("json", false, "")
	limit := fs.Int("limit", 100, "")
	hidden := fs.Bool("hidden", false, "")
	reason := fs.String("reason", "", "")
	if err := parseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(stdout, historyUsage)
			return 0
		}
		fmt.Fprintf(stderr, "error: %v\n%s", err, historyUsage)
		return 2
	}
	operands := fs.Args()
	sub := ""
	if len(operands) > 0 && (operands[0] == "hide" || operands[0] == "unhide" || operands[0] == "show") {
		sub, operands = operands[0], operands[1:]
	}
	switch {
	case sub == "" && len(operands) != 1:
		fmt.Fprintf(stderr, "error: want one SLUG, got %s\nhint: probity history SLUG  or  probity history show SLUG NUMBER\n",
			stats.Plural(len(operands), "argument", "arguments"))
		return 2
	case sub != "" && len(operands) != 2:
		fmt.Fprintf(stderr, "error: history %s wants SLUG and NUMBER, got %s\nhint: probity history %s SLUG NUMBER\n",
			sub, stats.Plural(len(operands), "argument", "arguments"), sub)
		return 2
	case *limit < 1:
		fmt.Fprintf(stderr, "error: --limit must be at least 1, got %d\n", *limit)
		return 2
	}
	slug := operands[0]
	var number int64
	if sub != "" {
		var err error
		if number, err = strconv.ParseInt(operands[1], 10, 64); err != nil || number < 1 {
			fmt.Fprintf(stderr, "error: %q is not a change number\nhint: the numbers are the ch-N that \"probity history %s\" lists\n", operands[1], slug)
			return 2
		}
	}
	if sub == "hide" && strings.TrimSpace(*reason) == "" {
		fmt.Fprintf(stderr, "error: hiding a change needs --reason\nhint: probity history hide --reason \"a fetch that turned out wrong\" %s %d\n", slug, number)
		return 2
	}
	ctx := context.Background()
	st, _, err := ef.openStore(ctx, slog.New(slog.DiscardHandler))
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	defer st.Close()
	e, err := st.Entry(ctx, slug)
	if err != nil {
		printEntryError(stderr, slug, err)
		return 2
	}
	switch sub {
	case "hide", "unhide":
		// Through the operators' service, which records it in their audit log ("cli").
		ops, err := operators.New(operators.Config{Store: st})
		if err != nil {
			fmt.Fprintf(stderr, "error: %v\n", err)
			return 2
		}
		if err := ops.HideChange(ctx, operators.CLI, e.Slug, number, sub == "hide", *reason); err != nil {
			if errors.Is(err, operators.ErrReason) {
				fmt.Fprintf(stderr, "error: %v\n", err)
				return 2
			}
			printChangeError(stderr, e.Slug, number, err)
			return 1
		}
		fmt.Fprintf(stdout, "change %d of %s %s\n", number, e.Slug, map[string]string{"hide": "hidden", "unhide": "shown again"}[sub])
		return 0
	case "show":
		c, err := st.Change(ctx, e.ID, number)
		if err != nil {
			printChangeError(stderr, e.Slug, number, err)
			return 1
		}
		if *asJSON {
			return printJSON(stdout, changeJSON(c))
		}
		io.WriteString(stdout, changeText(e.Slug, c))
		return 0
	}
	cs, err := st.Changes(ctx, store.ChangeFilter{EntryID: e.ID, IncludeHidden: *hidden, Limit: *limit})
	if err != nil {
		fmt.Fprintf(stderr, "error: couldn't read the changes of %s: %v\n", e.Slug, rootCause(err))
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

// changeText is the human-readable form of change c of slug ("history show"): the
// feed's plain text of it (server text safe and visible), then its kind, whether it is
// hidden and why, and the key that signed it.
func changeText(slug string, c store.ChangeRecord) string {
	var b strings.Builder
	b.WriteString(feed.ChangeText("", slug, &c))
	fmt.Fprintf(&b, "\n\nKind: %s\n", oneLine(c.Kind))
	if c.Hidden {
		fmt.Fprintf(&b, "Hidden: yes, because %q (pages, feeds and statistics leave it out; \"probity history unhide %s %d\" shows it again)\n",
			oneLine(c.HiddenReason), slug, c.Number)
	} else {
		b.WriteString("Hidden: no\n")
	}
	if c.KeyID != "" {
		fmt.Fprintf(&b, "Signed by key: %s\n", oneLine(c.KeyID))
	} else {
		b.WriteString("Signed by key: none (not signed)\n")
	}
	return b.String()
}

// printEntryError prints why the entry slug could not be read: there is none (with where
// the slugs are listed), or the store failed.
func printEntryError(w io.Writer, slug string, err error) {
	if errors.Is(err, store.ErrNotFound) {
		fmt.Fprintf(w, "error: no entry %q\nhint: \"probity targets list\" shows the slugs\n", slug)
		return
	}
	fmt.Fprintf(w, "error: couldn't read the entry %q: %v\n", slug, rootCause(err))
}

// printChangeError prints why change number of slug could not be read or changed.
func printChangeError(w io.Writer, slug string, number int64, err error) {
	if errors.Is(err, store.ErrNotFound) {
		fmt.Fprintf(w, "error: %s has no change %d\nhint: \"probity history --hidden %s\" lists its changes\n", slug, number, slug)
		return
	}
	fmt.Fprintf(w, "error: couldn't read or update change %d of %s: %v\n", number, slug, rootCause(err))
}

// rootCause is the innermost error err wraps: the store's messages name entries by
// their internal id, which users never see, so a command names the entry by its slug
// and adds only the cause.
func rootCause(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
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
	if err := parseFlags(fs, args); err != nil {
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
	fmt.Fprintf(stderr, "computed over %s in %s\n", stats.Plural(len(servers), "entry", "entries"), time.Since(start).Round(time.Millisecond))
	if *asJSON {
		return printJSON(stdout, rep)
	}
	io.WriteString(stdout, rep.Markdown())
	return 0
}
