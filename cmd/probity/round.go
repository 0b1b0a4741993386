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
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/probity-dev/probity/history/stats"
	"github.com/probity-dev/probity/rounds"
)

const roundUsage = `Usage:

	probity round [--targets FILE] [--allow-loopback] [--ca-file FILE] [--concurrency N]

Runs one round over every entry now: probes each remote endpoint (politely, without
credentials, through the egress guard), runs the checks, signs every round that may be
signed (full or auth_required coverage) and stores observation, envelope and results in
one transaction per entry. Package and repository entries get the supply-chain checks
instead (npm, PyPI, GitHub, deps.dev, OSV, Scorecard, Sigstore provenance; see
"probity supply -h"), signed as well. --targets FILE first imports the entries FILE
lists (see "probity targets -h"). Before it ends, every record it signed is appended to
the transparency log (DATA-DIR/log) and a checkpoint holding them is published, unless
a running "probity serve" is the log's appender (it logs them within seconds).

Progress shows as a bar on a terminal and as a line every 5 s otherwise; a summary
table follows at the end. Ctrl-C stops starting new probes, lets the ones in flight
finish and store, and leaves the run unfinished: the next "probity round" resumes it,
without probing or signing again the entries already stored.

Exit status: 0 when every entry was handled, 1 when some failed, the run was
interrupted or the --targets file had bad lines (the rest is imported and the round
runs), 2 on usage or setup errors.

` + probeHelp + "\n" + logHelp + "\n" + envHelp

func runRound(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("probity round", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var ef envFlags
	ef.register(fs, true)
	targetsFile := fs.String("targets", "", "")
	var lf logFlags
	lf.register(fs)
	if err := parseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(stdout, roundUsage)
			return 0
		}
		fmt.Fprintf(stderr, "error: %v\n%s", err, roundUsage)
		return 2
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "error: unexpected argument %q\n%s", fs.Arg(0), roundUsage)
		return 2
	}
	if err := lf.validate(); err != nil {
		fmt.Fprintf(stderr, "error: %v\n%s", err, roundUsage)
		return 2
	}
	if !ef.valid(stderr) {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.DiscardHandler)
	st, where, err := ef.openStore(ctx, logger)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	defer st.Close()
	_, signer, err := ef.openSigner(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	tl, err := ef.openLog(ctx, st, lf, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	if tl != nil {
		defer tl.Close(context.Background())
	}
	badTargets := false // the targets file had bad lines: the round runs, and exits 1
	if *targetsFile != "" {
		switch importTargets(ctx, st, *targetsFile, rounds.Schedule{}, stdout, stderr) {
		case 2:
			return 2
		case 1:
			badTargets = true
		}
	}
	r, err := ef.runner(st, signer, rounds.Schedule{}, logger)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	counts, err := st.Stats(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	fmt.Fprintf(stderr, "round over %s, store %s\n", stats.Plural(int(counts.Entries), "entry", "entries"), where)
	prog := newProgress(stderr, int(counts.Entries))
	sum, err := r.RunAll(ctx, rounds.RunOptions{Concurrency: ef.concurrency, Progress: prog.update})
	prog.finish(sum)
	printSummary(stdout, sum)
	for _, e := range sum.Errors {
		fmt.Fprintf(stderr, "error: %v\n", e)
	}
	// What was signed goes into the transparency log before the command ends, even
	// after an interruption (what was stored is logged).
	if lerr := syncLog(context.WithoutCancel(ctx), tl, stderr); lerr != nil {
		fmt.Fprintf(stderr, "error: %v\n", lerr)
		if err == nil {
			err = lerr
		}
	}
	switch {
	case errors.Is(err, context.Canceled):
		fmt.Fprintf(stderr, "interrupted: run %s is unfinished; run \"probity round\" again to resume it\n", sum.RunID)
		return 1
	case err != nil:
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	case !sum.Finished:
		fmt.Fprintf(stderr, "%s failed: run %s stays unfinished; run \"probity round\" again to retry them\n",
			stats.Plural(sum.Failed, "entry", "entries"), sum.RunID)
		return 1
	case badTargets:
		fmt.Fprintf(stderr, "error: %s has lines with errors (listed above); the round ran over the rest\n", *targetsFile)
		return 1
	}
	return 0
}

func printSummary(w io.Writer, s rounds.Summary) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	row := func(k string, v any) { fmt.Fprintf(tw, "%s\t%v\t\n", k, v) }
	resumed := ""
	if s.Resumed {
		resumed = " (resumed)"
	}
	fmt.Fprintf(w, "\nrun %s%s\n", s.RunID, resumed)
	row("probed", s.Probed)
	row("signed full", s.SignedFull)
	row("signed auth-required", s.SignedAuth)
	row("unsigned", s.Unsigned)
	row("failed", s.Failed)
	if s.AlreadyDone > 0 {
		row("stored earlier in this run", s.AlreadyDone)
	}
	if s.SupplyRuns > 0 {
		row("supply checks (package or repository)", s.SupplyRuns)
	}
	if s.NotProbed > 0 {
		row("not probed (package or repository)", s.NotProbed)
	}
	row("duration", s.Duration.Round(time.Millisecond))
	tw.Flush()
}

// progress draws a bar on a terminal, and a plain line every 5 s elsewhere.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	total int
	start time.Time
	last  time.Time
}

func newProgress(w io.Writer, total int) *progress {
	now := time.Now()
	return &progress{w: w, tty: isTerminal(w), total: total, start: now, last: now}
}

func (p *progress) update(s rounds.Summary) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	every := 5 * time.Second
	if p.tty {
		every = 100 * time.Millisecond
	}
	if now.Sub(p.last) < every {
		return
	}
	p.last = now
	p.draw(s, now)
}

func (p *progress) draw(s rounds.Summary, now time.Time) {
	done, total := s.Done(), max(p.total, s.Total, s.Done())
	elapsed := now.Sub(p.start)
	eta := "—"
	if done > 0 && done < total {
		eta = (time.Duration(float64(elapsed) / float64(done) * float64(total-done))).Round(time.Second).String()
	}
	counts := fmt.Sprintf("%d/%d  full %d  auth %d  unsigned %d  failed %d  %s elapsed, eta %s",
		done, total, s.SignedFull, s.SignedAuth, s.Unsigned, s.Failed, elapsed.Round(time.Second), eta)
	if !p.tty {
		fmt.Fprintln(p.w, counts)
		return
	}
	const width = 30
	filled := 0
	if total > 0 {
		filled = done * width / total
	}
	fmt.Fprintf(p.w, "\r[%s%s] %s\x1b[K", strings.Repeat("#", filled), strings.Repeat(".", width-filled), counts)
}

func (p *progress) finish(s rounds.Summary) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.draw(s, time.Now())
	if p.tty {
		fmt.Fprintln(p.w)
	}
}
