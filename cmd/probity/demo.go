package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/probity-dev/probity/checks/fixtures"
	"github.com/probity-dev/probity/checks/supply"
	"github.com/probity-dev/probity/claims"
	"github.com/probity-dev/probity/disputes"
	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/internal/demowitness"
	"github.com/probity-dev/probity/listing"
	"github.com/probity-dev/probity/mail"
	"github.com/probity-dev/probity/mail/sink"
	"github.com/probity-dev/probity/registry/regsync"
	"github.com/probity-dev/probity/rounds"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/targets"
	"github.com/probity-dev/probity/translog"
)

const demoUsage = `Usage:

	probity demo [--data-dir DIR] [--listen ADDR] [--fixtures ADDR]

Shows Probity on this machine with nothing else installed. It starts simulated MCP
servers on loopback at --fixtures (default 127.0.0.1:8765):

	/healthy      a well-behaved server: every check passes
	/auth         asks for a login (401) and publishes valid RFC 9728 metadata
	/hidden       a tool description with an invisible character and an
	              instruction to the model
	/destructive  a delete_* tool that does not declare destructiveHint
	/drifting     a server that adds a destructive tool between the rounds
	              (listed by its TLS URL, on the port after --fixtures)
	/s/0000 …     six generated, healthy servers

It creates the signing key and the embedded store in DATA-DIR (default
./probity-data), adds the servers as entries, runs a round over every entry, lets
/drifting change, runs a second round, and publishes the directory on --listen
(default 127.0.0.1:8080). A minute after the second round a third one confirms the
change (the history records a change of tools only when a second read at least a
minute after the first agrees), and the demo says where to see it. It prints what to
open and the commands that export the signed envelopes and verify them offline.

The drifting server has a maintainer, maintainer@demo.probity.test, who claims it
through the claims service (a token served at the demo's TLS origin's
/.well-known/probity-claim), approves round 1's tools as its baseline (so after the
drift its three *_unchanged_vs_approved checks report the difference), edits its
listing, and contests a finding of round 2: the dispute stays open. operator@demo.probity.test is an operator
and sees the dispute at /ops. Sign in as either at /signin: the codes, like the
follower's e-mails, are files in DATA-DIR/mail. A second run finds the claim, the
baseline, the listing and the open dispute and adds none of them again.

Ctrl-C (or SIGTERM) stops it: the directory and the servers shut down, and the exit
status is 0. Running it again reuses the store, the key and the entries, and adds new
rounds.

Exit status: 0 when stopped by a signal, 1 when the directory stops by itself, 2 on
usage or setup errors (a port in use, a store that does not open).

` + envHelp

func runDemo(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("probity demo", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var ef envFlags
	ef.register(fs, false)
	listen := fs.String("listen", "127.0.0.1:8080", "")
	fixturesAddr := fs.String("fixtures", fixtures.DefaultDemoAddr, "")
	if err := parseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(stdout, demoUsage)
			return 0
		}
		fmt.Fprintf(stderr, "error: %v\n%s", err, demoUsage)
		return 2
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "error: unexpected argument %q\n%s", fs.Arg(0), demoUsage)
		return 2
	}
	base, err := demoBaseURL(*listen)
	if err != nil {
		fmt.Fprintf(stderr, "error: --listen %q: %v\n", *listen, err)
		return 2
	}
	// The demo's servers are on loopback: the probe must be allowed there.
	ef.allowLoopback = true

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	started := time.Now()

	fmt.Fprintf(stderr, "starting the demo servers on http://%s …\n", *fixturesAddr)
	demo, err := fixtures.StartDemo(*fixturesAddr)
	if err != nil {
		fmt.Fprintf(stderr, "error: couldn't start the demo servers: %v\n", err)
		if !errors.Is(err, fixtures.ErrNotLoopback) {
			fmt.Fprintf(stderr, "hint: is another program (or another probity demo) using %s? --fixtures 127.0.0.1:PORT picks another port\n", *fixturesAddr)
		}
		return 2
	}
	defer demo.Close()

	st, where, err := ef.openStore(ctx, logger)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	defer st.Close()
	fmt.Fprintf(stderr, "store: %s\n", where)
	// The key document the site publishes is the one startDemoMail returns, which
	// lists the webhook key too.
	_, signer, err := ef.openSigner(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	// The listed servers and the drifting one are hosted over TLS with a certificate of
	// the demo's CA, which the probe and the claims' checks trust through --ca-file.
	if ef.caFile, err = writeDemoCA(ef.dataDir); err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	// The follower: an account that follows the drifting server, whose e-mails (and
	// sign-in codes, to sign in as it) go to a local SMTP server that keeps them as
	// files. Sign-in, the Follow buttons and the Followed page are on, and so are the
	// maintainers' and operators' services, as in serve --accounts.
	mails, write, err := startDemoMail(st, &ef, base, logger)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	defer mails.Close()
	defer write.close()
	if err := write.addMaintainers(claimFlags{recheck: claims.DefaultRecheckInterval}, listingFlags{recheck: listing.DefaultRecheckInterval},
		st, &ef, rounds.Schedule{}, signer, logger); err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	// EnsureWebhookKey made a new key document version (at the first run): it is
	// stored in the ledger when the log starts, below, as serve does.
	doc := write.doc
	// The transparency log, its checkpoints cosigned by the built-in test witness.
	var lf logFlags
	lf.witnessTimeout, lf.checkpointInterval = translog.DefaultWitnessTimeout, translog.MinCheckpointInterval
	policy, witnessVKey, stopWitness, err := startDemoWitness(ef.dataDir, ef.keyDirectory())
	lf.policy = policy
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	defer stopWitness()
	tl, waitLog, err := ef.startLog(ctx, st, lf, logger)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	defer func() { stop(); waitLog() }() // the log's last append before the demo exits
	// The directory is up before the rounds, so a port in use fails at once and the
	// pages fill in as the rounds store.
	srv, err := publish(ctx, st, doc, ef.logDirectory(), *listen, base, siteOptions{write: write}, logger)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		if errors.Is(err, syscall.EADDRINUSE) {
			fmt.Fprintf(stderr, "hint: --listen 127.0.0.1:PORT picks another port\n")
		}
		return 2
	}
	fmt.Fprintf(stderr, "publishing the directory at %s/\n", base)
	defer func() {
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()

	// The supply-chain sources answer from the demo's fixtures on loopback: the linked
	// servers' packages and repositories are read there, never on the network.
	ef.npmURL, ef.pypiURL, ef.githubURL = demo.DemoSourceURL("npm"), demo.DemoSourceURL("pypi"), demo.DemoSourceURL("github")
	ef.depsdevURL, ef.osvURL, ef.scorecardURL = demo.DemoSourceURL("depsdev"), demo.DemoSourceURL("osv"), demo.DemoSourceURL("scorecard")
	entries, servers, err := importDemo(ctx, st, demo, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	drifting := entries[demo.TLSURL(fixtures.DemoDrifting)]
	if err := followDemo(ctx, st, write, drifting); err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	// The maintainer claims the drifting server, as a person does on its Claim page.
	maint, err := demoAccount(ctx, st, demoMaintainer)
	if err == nil {
		err = claimDemo(ctx, write, demo, maint, drifting, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}

	r, err := ef.runner(st, signer, rounds.Schedule{}, logger)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	if !demoRound(ctx, r, "round 1", stderr) {
		return demoStopped(stderr, ef.dataDir)
	}
	// The maintainer approves round 1's tools as the baseline (the drift below then
	// fails the *_unchanged_vs_approved checks) and edits the listing.
	if err := approveDemoBaseline(ctx, st, write, maint, drifting, stderr); err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	if err := editDemoListing(ctx, write, drifting, stderr); err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	demo.Drift()
	fmt.Fprintf(stderr, "%s changed: it now lists delete_city (destructive) and a new description of get_weather\n", fixtures.DemoDrifting)
	if !demoRound(ctx, r, "round 2", stderr) {
		return demoStopped(stderr, ef.dataDir)
	}
	if err := syncLog(ctx, tl, stderr); err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	// The maintainer contests a finding of round 2, which the log numbered above, and
	// the operator, who decides disputes at /ops, gets the role; the log takes the
	// dispute in.
	dispute, err := contestDemo(ctx, st, write, maint, drifting, stderr)
	if err == nil {
		err = grantDemoOperator(ctx, st, write)
	}
	if err == nil {
		err = syncLog(ctx, tl, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "the demo is up after %v\n", time.Since(started).Round(100*time.Millisecond))
	printDemoGuide(stdout, base, drifting.Slug, ef, witnessVKey, dispute, mails.Dir())
	printDemoServers(ctx, st, stdout, base, servers)

	fmt.Fprintf(stdout, "the follower %s follows %s: its e-mails arrive in %s (one file each; sign in as it at %s/signin, its codes arrive there too)\n",
		demoFollower, drifting.Slug, mails.Dir(), base)
	var wg sync.WaitGroup
	wg.Go(func() { confirmDrift(ctx, st, r, drifting, base, stdout, stderr) })
	wg.Go(func() { sendDemoMail(ctx, write, stderr) })
	<-ctx.Done()
	fmt.Fprintf(stderr, "stopping …\n")
	wg.Wait()
	return demoStopped(stderr, ef.dataDir)
}

// demoBaseURL is the address the directory's links use: --listen, with 127.0.0.1 for
// an unspecified host.
func demoBaseURL(listen string) (string, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", err
	}
	if port == "0" {
		return "", errors.New("want a fixed port, such as 127.0.0.1:8080")
	}
	if ip, err := netip.ParseAddr(host); host == "" || (err == nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port), nil
}

// importDemo adds the demo's listed servers (fixtures.DemoServers: a remote, an npm
// package and a GitHub repository each, linked as one entry) and its other endpoints
// as one-part entries (the drifting server by its TLS URL); those already listed are
// kept. It returns the entries by URL
// and the listed servers' entries by server name.
func importDemo(ctx context.Context, st store.Store, demo *fixtures.Demo, stderr io.Writer) (map[string]store.Entry, map[string]store.Entry, error) {
	schedule := rounds.Schedule{}
	opts := regsync.ImportOptions{Due: schedule.FirstDue}
	byURL := map[string]store.Entry{}
	byName := map[string]store.Entry{}
	added, total := 0, 0
	add := func(s targets.Server) (store.Entry, error) {
		res, err := regsync.Import(ctx, st, s, opts)
		if err != nil {
			return store.Entry{}, err
		}
		for _, c := range res.Conflicts {
			fmt.Fprintf(stderr, "warning: %s\n", regsync.ConflictText(c))
		}
		total++
		if res.Created {
			added++
		}
		return res.Entry, nil
	}
	inServers := map[string]bool{}
	for _, ds := range fixtures.DemoServers {
		s, _, err := targets.ParseServerJSON(ds.ServerJSON(demo))
		if err != nil {
			return nil, nil, fmt.Errorf("couldn't read the demo's server.json of %s: %w", ds.Name, err)
		}
		e, err := add(s)
		if err != nil {
			return nil, nil, fmt.Errorf("couldn't add %s: %w", ds.Name, err)
		}
		byName[ds.Name] = e
		byURL[demo.TLSURL(ds.Path)] = e
		inServers[demo.URL(ds.Path)] = true
	}
	var urls []string
	for _, u := range demo.URLs() {
		switch {
		case inServers[u]:
		case u == demo.URL(fixtures.DemoDrifting):
			// The drifting server is read over TLS, so that its maintainer can claim it
			// by a file on its origin (an http endpoint on an IP address has no proof).
			urls = append(urls, demo.TLSURL(fixtures.DemoDrifting))
		default:
			urls = append(urls, u)
		}
	}
	ss, bad, err := targets.Parse(strings.NewReader(strings.Join(urls, "\n")))
	if err == nil && (len(bad) > 0 || len(ss) != len(urls)) {
		err = fmt.Errorf("%d of %d demo URLs did not parse", len(urls)-len(ss), len(urls))
	}
	if err != nil {
		return nil, nil, fmt.Errorf("couldn't read the demo's URLs: %w", err)
	}
	for i, s := range ss {
		e, err := add(s)
		if err != nil {
			return nil, nil, fmt.Errorf("couldn't add %s: %w", s.Locator, err)
		}
		byURL[urls[i]] = e
	}
	fmt.Fprintf(stderr, "entries: %d added, %d already listed (%d servers with a remote, a package and a repository linked)\n",
		added, total-added, len(fixtures.DemoServers))
	return byURL, byName, nil
}

// demoRound runs one round over every entry and reports it in a line; it returns false
// when the demo was interrupted.
func demoRound(ctx context.Context, r *rounds.Runner, name string, stderr io.Writer) bool {
	fmt.Fprintf(stderr, "%s: probing every entry …\n", name)
	sum, err := r.RunAll(ctx, rounds.RunOptions{Concurrency: 16})
	if errors.Is(err, context.Canceled) || ctx.Err() != nil {
		return false
	}
	fmt.Fprintf(stderr, "%s: run %s: %d probed (%d signed full, %d signed auth-required, %d unsigned), %d failed, in %v\n",
		name, sum.RunID, sum.Probed, sum.SignedFull, sum.SignedAuth, sum.Unsigned, sum.Failed, sum.Duration.Round(time.Millisecond))
	if err != nil {
		fmt.Fprintf(stderr, "warning: %v\n", err)
	}
	for _, e := range sum.Errors {
		fmt.Fprintf(stderr, "warning: %v\n", e)
	}
	return true
}

// demoStopped reports a clean stop.
func demoStopped(stderr io.Writer, dataDir string) int {
	fmt.Fprintf(stderr, "stopped; the data stays in %s: \"probity demo\" again continues with it\n", dataDir)
	return 0
}

// printDemoGuide prints what to open and how to verify the envelopes offline.
func printDemoGuide(w io.Writer, base, slug string, ef envFlags, witnessVKey string, d disputes.Dispute, mailDir string) {
	export := filepath.Join(ef.dataDir, "export")
	keyFlag := ""
	if ef.keyDir != "" {
		keyFlag = " --key-dir " + ef.keyDir
	}
	fmt.Fprintf(w, `
Probity's directory is at %[1]s/

  the drifting server        %[1]s/s/%[2]s
  its history                %[1]s/s/%[2]s/history
  its JSON                   %[1]s/s/%[2]s.json
  the recent changes (Atom)  %[1]s/changes.xml
  its badge                  %[1]s/badge/%[2]s.svg
  the signing keys           %[1]s/.well-known/probity-keys.json
  the transparency log       %[1]s/log/checkpoint (C2SP tlog-tiles under /log/)

Verify the signed envelopes offline (in another terminal), each with its proof of
inclusion in the log and the checkpoint it is proven against, cosigned by the demo's
%[7]s:

  probity export --data-dir %[3]s%[5]s --out %[4]s
  probity verify --keys %[6]s --require-log --min-witnesses 1 --witness-key %[8]s %[4]s

and audit the whole log as a monitor would:

  probity log audit --witness-key %[8]s --min-witnesses 1 %[1]s

The drifting server is claimed by %[9]s, who approved round 1's
tools as its baseline (so after the drift its three *_unchanged_vs_approved checks
report the difference), edited its listing, and contested %[10]s
(dispute %[11]d, open):

  its Checks tab, the dispute  %[1]s/s/%[2]s/checks
  its baseline                 %[1]s/s/%[2]s/baseline (signed in as the maintainer)
  the operator's console       %[1]s/ops/disputes (signed in as %[12]s)

Sign in at %[1]s/signin as %[9]s or %[12]s: the codes arrive in
%[13]s (one file each). The operator decides the dispute at /ops.

The change of /drifting is confirmed by a round a minute after the second one.
Ctrl-C stops the demo.
`, base, slug, ef.dataDir, export, keyFlag, filepath.Join(export, "keys.json"), demowitness.Label, witnessVKey,
		demoMaintainer, d.CheckID, d.Number, demoOperator, mailDir)
}

// confirmDrift waits until a minute after the drifting entry's newest round, runs a
// round that confirms its change, and says where the history shows it.
func confirmDrift(ctx context.Context, st store.Store, r *rounds.Runner, e store.Entry, base string, stdout, stderr io.Writer) {
	latest, err := st.Rounds(ctx, e.ID, 1)
	if err != nil || len(latest) == 0 {
		if ctx.Err() == nil {
			fmt.Fprintf(stderr, "warning: no round of %s to confirm: %v\n", e.Slug, err)
		}
		return
	}
	// The default confirmation delay of history.Rules, and a second to spare.
	at := latest[0].StartedAt.Add(time.Minute + time.Second)
	fmt.Fprintf(stderr, "round 3 (the confirmation) starts in %v …\n", time.Until(at).Round(time.Second))
	t := time.NewTimer(time.Until(at))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return
	case <-t.C:
	}
	if !demoRound(ctx, r, "round 3", stderr) {
		return
	}
	changes, err := st.Changes(ctx, store.ChangeFilter{EntryID: e.ID, Limit: 20})
	if err != nil {
		fmt.Fprintf(stderr, "warning: couldn't read the history of %s: %v\n", e.Slug, err)
		return
	}
	for _, c := range changes {
		if c.Kind != history.EventTools {
			continue
		}
		link := fmt.Sprintf("%s/s/%s/history#ch-%d", base, e.Slug, c.Number)
		if c.RecordedAt.Before(latest[0].StartedAt) {
			fmt.Fprintf(stdout, "the drift of %s was recorded by an earlier demo (%s): see %s\n", fixtures.DemoDrifting, c.Summary, link)
		} else {
			fmt.Fprintf(stdout, "the drift of %s is confirmed (%s): see %s\n", fixtures.DemoDrifting, c.Summary, link)
		}
		return
	}
	fmt.Fprintf(stderr, "warning: the history of %s records no change of tools yet\n", e.Slug)
}

// printDemoServers says, for each of the demo's listed servers, whether its newest
// supply run earned Verified and, when not, why, with the checks that failed.
func printDemoServers(ctx context.Context, st store.Store, w io.Writer, base string, servers map[string]store.Entry) {
	fmt.Fprintf(w, "\nThe demo's listed servers (a remote, an npm package and a GitHub repository each, read from\nthe demo's own source fixtures on loopback):\n\n")
	for _, ds := range fixtures.DemoServers {
		e, ok := servers[ds.Name]
		if !ok {
			continue
		}
		runs, err := st.SupplyRuns(ctx, e.ID, 1)
		if err != nil || len(runs) == 0 {
			fmt.Fprintf(w, "  %-26s %s/s/%s  no supply run yet\n", ds.Name, base, e.Slug)
			continue
		}
		run := runs[0]
		v, err := supply.DecodeVerdict(run.Verdict)
		if err != nil {
			fmt.Fprintf(w, "  %-26s %s/s/%s  unreadable verdict: %v\n", ds.Name, base, e.Slug, err)
			continue
		}
		if store.IsVerified(run.Verified, run.Envelope != nil, e.VerifiedWithdrawn) {
			fmt.Fprintf(w, "  %-26s %s/s/%s  Verified, score %d of 100 (%d points checked)\n", ds.Name, base, e.Slug, v.Score, v.WeightRan)
			continue
		}
		fmt.Fprintf(w, "  %-26s %s/s/%s  not Verified, score %d of 100 (%d points checked):\n", ds.Name, base, e.Slug, v.Score, v.WeightRan)
		for _, why := range v.NotVerified {
			fmt.Fprintf(w, "      - %s\n", why)
		}
		for _, r := range v.Results {
			if r.Status == supply.StatusFailed || r.Status == supply.StatusPartial {
				fmt.Fprintf(w, "      %s: %s\n", r.ID, r.Reason)
			}
		}
	}
}

// writeDemoCA writes the demo CA's certificate into the data directory and returns its
// path, for the probe's --ca-file.
func writeDemoCA(dataDir string) (string, error) {
	pem, err := fixtures.CAPEM()
	if err != nil {
		return "", fmt.Errorf("couldn't make the demo's CA: %w", err)
	}
	path := filepath.Join(dataDir, "demo-ca.pem")
	if err := os.WriteFile(path, pem, 0o644); err != nil {
		return "", fmt.Errorf("couldn't write the demo's CA: %w", err)
	}
	return path, nil
}

// demoFollower is the demo's follower account.
const demoFollower = "follower@demo.probity.test"

// startDemoMail starts the demo's SMTP server (mail/sink, DATA-DIR/mail) and the write
// paths sending through it.
func startDemoMail(st store.Store, ef *envFlags, base string, logger *slog.Logger) (*sink.Sink, *writePaths, error) {
	mails, err := sink.Start("127.0.0.1:0", filepath.Join(ef.dataDir, "mail"), sink.Options{})
	if err != nil {
		return nil, nil, fmt.Errorf("couldn't start the demo's SMTP server: %w", err)
	}
	af := accountFlags{on: true, settle: 5 * time.Second,
		smtp: mail.Config{Host: mails.Host(), Port: mails.Port(), Security: "none", From: "Probity demo <notify@demo.probity.test>"}}
	w, err := af.build(st, ef.keyDirectory(), ef.dataDir, base, true, logger)
	if err != nil {
		mails.Close()
		return nil, nil, err
	}
	return mails, w, nil
}

// followDemo makes the demo's follower (once) and has it follow e, before the drift
// is recorded: only changes recorded after a follow began are e-mailed.
func followDemo(ctx context.Context, st store.Store, w *writePaths, e store.Entry) error {
	a, _, err := st.EmailAccount(ctx, demoFollower, demoFollower, time.Now())
	if err != nil {
		return fmt.Errorf("couldn't make the demo's follower: %w", err)
	}
	if err := w.notify.Follow(ctx, a.ID, e.Slug); err != nil {
		return fmt.Errorf("couldn't follow %s: %w", e.Slug, err)
	}
	return nil
}

// sendDemoMail plans and sends the follower's e-mails every few seconds, as the
// service's jobs do every minute, until ctx ends.
func sendDemoMail(ctx context.Context, w *writePaths, stderr io.Writer) {
	t := time.NewTicker(3 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := w.notify.Plan(ctx); err != nil && ctx.Err() == nil {
			fmt.Fprintf(stderr, "warning: couldn't plan the follower's e-mails: %v\n", err)
			continue
		}
		if n, err := w.notify.Deliver(ctx); err != nil && ctx.Err() == nil {
			fmt.Fprintf(stderr, "warning: couldn't send the follower's e-mails: %v\n", err)
		} else if n > 0 {
			fmt.Fprintf(stderr, "sent %d e-mail(s) to the follower\n", n)
		}
	}
}
