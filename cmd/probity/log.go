package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/probity-dev/probity/logaudit"
)

const logUsage = `Usage:

	probity log audit [flags] SOURCE

Audits a Probity transparency log as a monitor does. SOURCE is a Probity site's URL
(the log is read from SOURCE/log/, the key document from
SOURCE/.well-known/probity-keys.json) or a log directory (DATA-DIR/log; the key
document from --keys, else DATA-DIR/keys/keys.json when it exists).

It reads every entry bundle and hash tile the checkpoint covers and recomputes the
tree (RFC 6962), comparing every served hash and the root; checks the checkpoint's
log signature and the trusted witnesses' cosignatures; holds leaf i to sequence
number i+1 (a dropped, reordered or duplicated record shows); builds the key
history from the log's keys records and verifies every envelope under the key
document in force at its index; holds each record's time to the trusted witnesses'
cosignatures (not after the checkpoint's earliest, not more than --max-backdate
before the saved checkpoint's latest) and applies the revocation rule (a revoked
key vouches only for records a trusted witness saw before its revocation); checks
every tombstone against the records it names; checks the served key document is the latest logged version; and compares
the log with the checkpoint it saved last time for the same origin (a smaller log,
another root at the same size, a rewritten prefix, another log key, or another
origin at the same SOURCE is a failure). The checkpoint is saved only when
everything passed.

Flags:

	--keys FILE          the key document to use instead of the served one
	--log-key VKEY       the log's signed-note verifier key (default: the key
	                     document's log.key)
	--witness-key VKEY   a trusted witness's tlog-cosignature/v1 verifier key;
	                     repeat for several. Without one the audit has no
	                     independent time: records' times are not checked
	--min-witnesses N    trusted witnesses that must have cosigned (default 0)
	--state FILE         where the last good checkpoint of each log is kept
	                     (default: probity/log-audit-state.json in the user's
	                     configuration directory)
	--no-state           neither read nor save a checkpoint
	--json               print a machine-readable report instead of the text
	--timeout DURATION   limit for each HTTP request (default 30s)
	--workers N          envelopes verified in parallel (default: every core)
	--max-failures N     failures listed in the report (default 1000; all are
	                     counted)
	--max-backdate DUR   how much earlier than the saved checkpoint's latest
	                     cosignature a newer record may be dated (default 1h)

Progress goes to standard error: a bar on a terminal, a line every 5 s elsewhere.

Exit status: 0 when the log checked out, 1 when anything failed (each failure has
a typed reason and the log index concerned, -1 for the log as a whole), 2 on usage
or I/O errors.
`

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func runLog(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "error: missing subcommand\n%s", logUsage)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		io.WriteString(stdout, logUsage)
		return 0
	case "audit":
		return runLogAudit(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "error: unknown subcommand %q\nhint: probity log audit SOURCE\n", args[0])
	return 2
}

func runLogAudit(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("probity log audit", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var cfg logaudit.Config
	var witnesses stringList
	fs.StringVar(&cfg.KeysFile, "keys", "", "")
	fs.StringVar(&cfg.LogKey, "log-key", "", "")
	fs.Var(&witnesses, "witness-key", "")
	fs.IntVar(&cfg.MinWitnesses, "min-witnesses", 0, "")
	stateFile := fs.String("state", "", "")
	noState := fs.Bool("no-state", false, "")
	asJSON := fs.Bool("json", false, "")
	fs.DurationVar(&cfg.Timeout, "timeout", 30*time.Second, "")
	fs.IntVar(&cfg.Workers, "workers", 0, "")
	fs.IntVar(&cfg.MaxFailures, "max-failures", 1000, "")
	fs.DurationVar(&cfg.MaxBackdate, "max-backdate", logaudit.DefaultMaxBackdate, "")
	// Flags may come before or after SOURCE.
	if err := parseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(stdout, logUsage)
			return 0
		}
		fmt.Fprintf(stderr, "error: %v\n%s", err, logUsage)
		return 2
	}
	positional := fs.Args()
	if len(positional) != 1 {
		fmt.Fprintf(stderr, "error: want one SOURCE, got %d\nhint: probity log audit https://probity.example  or  probity log audit probity-data/log\n", len(positional))
		return 2
	}
	cfg.Source = positional[0]
	cfg.WitnessKeys = witnesses
	switch {
	case *noState && *stateFile != "":
		fmt.Fprintf(stderr, "error: --state and --no-state together\n")
		return 2
	case *noState:
	case *stateFile != "":
		cfg.StateFile = *stateFile
	default:
		p, err := logaudit.DefaultStateFile()
		if err != nil {
			fmt.Fprintf(stderr, "error: %v\n", err)
			return 2
		}
		cfg.StateFile = p
	}
	if cfg.Timeout <= 0 || cfg.MaxFailures < 1 || cfg.Workers < 0 || cfg.MaxBackdate <= 0 {
		fmt.Fprintf(stderr, "error: --timeout, --max-failures and --max-backdate must be positive, --workers at least 0\n")
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	p := &logProgress{w: stderr, tty: isTerminal(stderr), start: time.Now()}
	cfg.Progress = p.update
	rep, err := logaudit.Run(ctx, cfg)
	p.finish()
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		if errors.Is(err, logaudit.ErrConfig) {
			fmt.Fprintf(stderr, "hint: probity log audit -h\n")
		}
		return 2
	}
	if *asJSON {
		if code := printJSON(stdout, rep); code != 0 {
			return code
		}
	} else {
		printLogReport(stdout, rep, cfg.StateFile)
	}
	if !rep.OK() {
		return 1
	}
	return 0
}

// logProgress draws a bar on a terminal, and a plain line every 5 s elsewhere.
type logProgress struct {
	mu          sync.Mutex
	w           io.Writer
	tty         bool
	start, last time.Time
	done, total int64
	drawn       bool
}

func (p *logProgress) update(done, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done, p.total = done, total
	now := time.Now()
	every := 5 * time.Second
	if p.tty {
		every = 200 * time.Millisecond
	}
	if now.Sub(p.last) < every {
		return
	}
	p.last = now
	p.draw(now)
}

func (p *logProgress) draw(now time.Time) {
	elapsed := now.Sub(p.start)
	rate := float64(p.done) / max(elapsed.Seconds(), 0.001)
	eta := "—"
	if p.done > 0 && p.done < p.total {
		eta = (time.Duration(float64(p.total-p.done) / rate * float64(time.Second))).Round(time.Second).String()
	}
	text := fmt.Sprintf("%d/%d leaves  %.0f/s  %s elapsed, eta %s", p.done, p.total, rate, elapsed.Round(time.Second), eta)
	p.drawn = true
	if !p.tty {
		fmt.Fprintf(p.w, "log audit: %s\n", text)
		return
	}
	const width = 30
	filled := 0
	if p.total > 0 {
		filled = int(min(p.done, p.total) * width / p.total)
	}
	fmt.Fprintf(p.w, "\r[%s%s] %s\x1b[K", strings.Repeat("#", filled), strings.Repeat(".", width-filled), text)
}

func (p *logProgress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.drawn {
		p.draw(time.Now())
		fmt.Fprintln(p.w)
	}
}

// printLogReport writes the human report. Text from the source (origin, details) is
// quoted or clipped by logaudit; it is printed as data, never interpreted.
func printLogReport(w io.Writer, r *logaudit.Report, stateFile string) {
	row := func(k, format string, args ...any) { fmt.Fprintf(w, "%-14s %s\n", k, fmt.Sprintf(format, args...)) }
	row("source", "%s", r.Source)
	if r.KeysSource != "" {
		row("key document", "%s", r.KeysSource)
	} else {
		row("key document", "none (the log key was given)")
	}
	row("origin", "%q", r.Origin)
	row("log key", "%s", r.LogKey)
	row("checkpoint", "size %d, root %s", r.Size, r.Root)
	if len(r.Witnesses) == 0 {
		row("witnesses", "no valid cosignature by a trusted witness")
	}
	for _, c := range r.Witnesses {
		row("witness", "%s cosigned at %s", c.Witness, c.Time.UTC().Format(time.RFC3339))
	}
	kinds := make([]string, 0, len(r.Counts))
	for k := range r.Counts {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%d %s", r.Counts[k], k))
	}
	row("leaves", "%d: %s", r.Size, strings.Join(parts, ", "))
	row("verified", "%d envelopes under the key document in force at their index (%d key document versions logged)", r.Verified, r.KeyVersions)
	if r.DigestOnly > 0 {
		row("digest only", "%d records logged by digest (too large to be inline): order proven, signature not", r.DigestOnly)
	}
	if r.RevokedUnproven > 0 {
		row("revoked keys", "%d records signed by keys revoked since: not shown witnessed before the revocation (check their bundles, or audit regularly)", r.RevokedUnproven)
	}
	if n := len(r.RemovedAwaitingTombstone); n > 0 {
		row("removed", "%d records logged as removed await their tombstone (first at index %d)", n, r.RemovedAwaitingTombstone[0])
	}
	switch {
	case stateFile == "":
		row("saved", "not compared (--no-state)")
	case r.ConsistentWithSaved == nil:
		row("saved", "first audit of this log (no checkpoint saved in %s)", stateFile)
	case *r.ConsistentWithSaved:
		row("saved", "consistent with the checkpoint of size %d saved last time", r.SavedSize)
	default:
		row("saved", "INCONSISTENT with the checkpoint of size %d saved last time", r.SavedSize)
	}
	if r.StateSaved {
		row("state", "checkpoint of size %d saved to %s", r.Size, stateFile)
	}
	row("duration", "%s", (time.Duration(r.DurationMs) * time.Millisecond).String())
	if r.OK() {
		row("result", "OK")
		return
	}
	var total int64
	reasons := make([]string, 0, len(r.FailureCounts))
	for k, n := range r.FailureCounts {
		total += n
		reasons = append(reasons, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(reasons)
	row("result", "FAILED: %d failures (%s)", total, strings.Join(reasons, ", "))
	for _, f := range r.Failures {
		fmt.Fprintf(w, "FAIL  index %d  %s  %s\n", f.Index, f.Reason, strings.ToValidUTF8(f.Detail, "?"))
	}
	if r.FailuresTruncated {
		fmt.Fprintf(w, "(only the first %d failures are listed)\n", len(r.Failures))
	}
}
