package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/riverqueue/river"

	"github.com/probity-dev/probity/checks/probe/egress"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/locator"
	"github.com/probity-dev/probity/registry"
	"github.com/probity-dev/probity/registry/regsync"
	"github.com/probity-dev/probity/rounds"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/web"
	"github.com/probity-dev/probity/web/mcpserver"
)

const serveUsage = `Usage:

	probity serve [--listen ADDR] [--base-url URL] [--allow-loopback] [--ca-file FILE]
	              [--concurrency N] [--cadence D] [--claimed-cadence D]
	probity serve --publish-only [--listen ADDR] [--base-url URL]

Runs the scheduler and workers until interrupted: every listed entry is read on its
cadence (--cadence, 3 h by default; --claimed-cadence, 15 min, for claimed entries;
jittered by up to ±10 %): a remote's handshake and tools/list, a package's newest
version (recorded at once: the first is its baseline), a repository's MCP bundle
manifest. A difference gets a confirming re-read a minute later (two hours for a tool
list that became empty), a manifest's as a remote's; every remote entry gets a daily
status check, and rate-limited entries back off. Every entry gets the supply-chain
checks weekly, and a package entry again when its version or README changes (looked at
daily). Unlisted entries (deprecated or deleted in the registry) are not read. Several
serve processes on one PostgreSQL database share the work, and each entry is probed
once per due time. Logs go to stderr, one line per round and a summary every 30 s.
SIGINT or SIGTERM stops it gracefully: rounds in flight finish and are stored. The
rounds a killed process (kill -9, a crash) had in flight are run again once they have
been running longer than --rescue-after (3 min). The supply sources' HTTP cache is
pruned daily of responses not revalidated for 30 days.

With --registry-url BASE, serve syncs that MCP registry's servers (GET /v0.1/servers,
as "probity registry sync" does) every --registry-interval (default 3h), first at
start: one entry per server, incremental, resumable; off by default.

It also publishes the directory on --listen (default 127.0.0.1:8080; "" publishes
nothing, e.g. for extra workers): pages, JSON, Markdown, Atom feeds, badges, the key list
at /.well-known/probity-keys.json, every envelope, /healthz, /metrics, and Probity's own
MCP server at /mcp. --base-url is the public address links are built from (default
http://ADDR); when it is given, Probity's own MCP server at BASE-URL/mcp is listed as an
entry (slug probity, added once) and read every round like any other. --rate-limit and
--burst set the per-client token bucket of the pages (default 10 requests/s, bursts of
40); --badge-rate-limit and --badge-burst that of the badges (default 20 requests/s,
bursts of 600: READMEs fetch them through shared proxies); /mcp has its own.
--trusted-proxy ADDRESS|CIDR[,…] names the reverse proxies whose X-Forwarded-For names
the client (the rate limits count clients); --accounts on an https site requires it.
--directory-cache is how long a rendered directory page is served again (default 1s; 0
renders every request): the directory lags the store by up to that long.

--publish-only publishes and does nothing else: no scheduler, no workers, no probes. It
needs only the key document (keys.json in the key directory), never the private key,
and never creates a key: run it for more publishing replicas on the same PostgreSQL
database, beside the serve processes that probe and sign.

Scheduling flags:

	--cadence D          time between reads of unclaimed entries, remotes, packages
	                     and bundle manifests alike (default 3h; 2m to 168h)
	--claimed-cadence D  time between reads of claimed entries (default 15m, or
	                     --cadence when that is shorter; 2m to
	                     --cadence)
	--first-spread D     spread the first rounds of new entries over D (default 15m;
	                     at most 24h)
	--registry-url BASE  sync this MCP registry (e.g. https://registry.modelcontextprotocol.io)
	--registry-interval D  how often (default 3h; 5m to 168h)
	--tick D             how often due rounds are enqueued (default 15s)
	--poll D             how often workers poll for jobs on SQLite (default 1s)
	--job-timeout D      bounds one round or supply run (default 2m)
	--rescue-after D     a round or supply run still marked running after D, because
	                     the process running it was killed, is run again (default:
	                     job timeout + 1m, so 3m; must exceed --job-timeout): by
	                     another serve process on the database, or this one restarted,
	                     within about 45 s more (River's leader looks every 30 s, and
	                     a killed leader's term lapses after 15 s)

` + probeHelp + "\n" + logHelp + "\n" + accountsHelp + "\n" + claimsHelp + "\n" + listingHelp + "\n" + envHelp

func runServe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("probity serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var ef envFlags
	ef.register(fs, true)
	var schedule rounds.Schedule
	fs.DurationVar(&schedule.Cadence, "cadence", rounds.DefaultCadence, "")
	// 0: the schedule's default, 15 min or --cadence when that is shorter.
	fs.DurationVar(&schedule.ClaimedCadence, "claimed-cadence", 0, "")
	fs.DurationVar(&schedule.FirstSpread, "first-spread", 15*time.Minute, "")
	listen := fs.String("listen", "127.0.0.1:8080", "")
	baseURL := fs.String("base-url", "", "")
	var site siteOptions
	fs.Float64Var(&site.rate.PerSecond, "rate-limit", web.DefaultRateLimit.PerSecond, "")
	fs.IntVar(&site.rate.Burst, "burst", web.DefaultRateLimit.Burst, "")
	fs.Float64Var(&site.badgeRate.PerSecond, "badge-rate-limit", web.DefaultBadgeRateLimit.PerSecond, "")
	fs.IntVar(&site.badgeRate.Burst, "badge-burst", web.DefaultBadgeRateLimit.Burst, "")
	fs.DurationVar(&site.dirCache, "directory-cache", web.DefaultDirectoryCacheTTL, "")
	var lsf listingFlags
	lsf.register(fs)
	fs.Func("trusted-proxy", "", func(v string) error {
		for p := range strings.SplitSeq(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				site.trustedProxies = append(site.trustedProxies, p)
			}
		}
		return nil
	})
	tick := fs.Duration("tick", 15*time.Second, "")
	poll := fs.Duration("poll", time.Second, "")
	jobTimeout := fs.Duration("job-timeout", rounds.DefaultJobTimeout, "")
	rescueAfter := fs.Duration("rescue-after", 0, "")
	publishOnly := fs.Bool("publish-only", false, "")
	registryURL := fs.String("registry-url", "", "")
	registryEvery := fs.Duration("registry-interval", regsync.DefaultSyncInterval, "")
	var lf logFlags
	lf.register(fs)
	var af accountFlags
	af.register(fs)
	if err := parseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(stdout, serveUsage)
			return 0
		}
		fmt.Fprintf(stderr, "error: %v\n%s", err, serveUsage)
		return 2
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "error: unexpected argument %q\n%s", fs.Arg(0), serveUsage)
		return 2
	}
	if site.dirCache == 0 {
		site.dirCache = -1 // --directory-cache 0: no cache (web's zero is its default)
	}
	if *jobTimeout <= 0 || *rescueAfter < 0 || *rescueAfter != 0 && *rescueAfter <= *jobTimeout {
		fmt.Fprintf(stderr, "error: --job-timeout must be positive and --rescue-after longer than it\n%s", serveUsage)
		return 2
	}
	if err := validateSchedule(schedule); err != nil {
		fmt.Fprintf(stderr, "error: %v\n%s", err, serveUsage)
		return 2
	}
	if err := lf.validate(); err != nil {
		fmt.Fprintf(stderr, "error: %v\n%s", err, serveUsage)
		return 2
	}
	if !ef.valid(stderr) {
		return 2
	}
	if *registryURL != "" {
		if _, err := registry.New(registry.Config{BaseURL: *registryURL}); err != nil {
			fmt.Fprintf(stderr, "error: --registry-url: %v\n%s", err, serveUsage)
			return 2
		}
		if *registryEvery < 5*time.Minute || *registryEvery > 7*24*time.Hour {
			fmt.Fprintf(stderr, "error: --registry-interval %s: want 5m to 168h\n%s", *registryEvery, serveUsage)
			return 2
		}
	}
	if *publishOnly && af.on {
		fmt.Fprintf(stderr, "error: --accounts serves the write paths of the process that signs; a --publish-only replica publishes read-only\n%s", serveUsage)
		return 2
	}
	if af.on && strings.HasPrefix(*baseURL, "https://") && len(site.trustedProxies) == 0 {
		// serve speaks plain HTTP: an https site is behind a proxy, and without its
		// address every visitor is one client to the sign-in limits, which one person
		// could then use up for everyone.
		fmt.Fprintf(stderr, "error: --accounts on an https site needs --trusted-proxy ADDRESS|CIDR, the proxy in front of serve, so that the sign-in limits count each visitor\n%s", serveUsage)
		return 2
	}
	if *publishOnly && *listen == "" {
		fmt.Fprintf(stderr, "error: --publish-only with --listen \"\" would do nothing\n%s", serveUsage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	st, where, err := ef.openStore(ctx, logger)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	defer st.Close()
	if *publishOnly {
		return publishOnlyUntilDone(ctx, st, where, &ef, *listen, *baseURL, site, logger, stderr)
	}
	doc, signer, err := ef.openSigner(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	if af.on {
		base := *baseURL
		if base == "" {
			base = "http://" + *listen
		}

		w, err := af.build(st, ef.keyDirectory(), ef.dataDir, base, ef.allowLoopback, logger)
		if err != nil {
			fmt.Fprintf(stderr, "error: %v\n", err)
			return 2
		}
		defer w.close()
		if err := w.addMaintainers(af.claims, lsf, st, &ef, schedule, signer, logger); err != nil {
			fmt.Fprintf(stderr, "error: %v\n", err)
			return 2
		}
		doc, site.write = w.doc, w
	}
	// The transparency log: this process appends when no other does.
	_, waitLog, err := ef.startLog(ctx, st, lf, logger)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	// Whatever ends serve, the log makes its last append before the process exits.
	defer func() { stop(); waitLog() }()
	go watchKeyVersions(ctx, st, ef.keyDirectory(), logger)
	r, err := ef.runner(st, signer, schedule, logger)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	// Beside the rounds: the registry sync (--registry-url) and the HTTP cache's
	// daily pruning.
	var regSync *regsync.SyncWorker
	if *registryURL != "" {
		regSync, err = regsync.NewSyncWorker(regsync.WorkerConfig{Store: st, Due: schedule.FirstDue, Logger: logger,
			Client: registry.Config{HTTPClient: registry.GuardedHTTPClient(egress.Config{AllowLoopback: ef.allowLoopback})}})
		if err != nil {
			fmt.Fprintf(stderr, "error: %v\n", err)
			return 2
		}
	}
	jobs := []*river.PeriodicJob{prunePeriodic()}
	if regSync != nil {
		jobs = append(jobs, regsync.PeriodicSync(*registryURL, *registryEvery))
	}
	if site.write != nil {
		jobs = append(jobs, site.write.periodicJobs()...)
	}
	svc, err := rounds.NewService(rounds.ServiceConfig{Runner: r, Concurrency: ef.concurrency, Tick: *tick, PollInterval: *poll,
		JobTimeout: *jobTimeout, RescueAfter: *rescueAfter, PeriodicJobs: jobs,
		Workers: func(ws *river.Workers) error {
			if regSync != nil {
				if err := river.AddWorkerSafely(ws, regSync); err != nil {
					return err
				}
			}
			if site.write != nil {
				if err := site.write.addJobs(ws); err != nil {
					return err
				}
			}
			return river.AddWorkerSafely(ws, &pruneWorker{st: st, now: time.Now, log: logger})
		}})
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	if *baseURL != "" {
		own, created, err := watchOwnServer(ctx, st, *baseURL, schedule, time.Now())
		if err != nil {
			fmt.Fprintf(stderr, "error: %v\n", err)
			return 2
		}
		logger.Info("own MCP server", "entry", own.Slug, "url", own.Locator, "added", created)
	}
	logger.Info("serving", "store", where, "backend", st.Backend())
	go reportStats(ctx, st, logger)
	if *listen != "" {
		srv, err := publish(ctx, st, doc, ef.logDirectory(), *listen, *baseURL, site, logger)
		if err != nil {
			fmt.Fprintf(stderr, "error: %v\n", err)
			return 2
		}
		logger.Info("publishing", "url", "http://"+*listen)
		defer srv.Shutdown(context.Background())
	}
	if err := svc.Run(ctx); err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	logger.Info("stopped")
	return 0
}

// validateSchedule checks the scheduling flags (rounds.Schedule.Validate), naming a
// flag set to zero or below, which the schedule would otherwise take for its default.
func validateSchedule(s rounds.Schedule) error {
	if s.Cadence <= 0 {
		return fmt.Errorf("--cadence %s: a cadence must be positive", s.Cadence)
	}
	if s.ClaimedCadence < 0 { // 0 is the default
		return fmt.Errorf("--claimed-cadence %s: a cadence must be positive", s.ClaimedCadence)
	}
	if s.FirstSpread < 0 {
		return fmt.Errorf("--first-spread %s: must not be negative", s.FirstSpread)
	}
	if err := s.Validate(); err != nil {
		return fmt.Errorf("invalid --cadence, --claimed-cadence or --first-spread: %w", err)
	}
	return nil
}

// ownServerSlug and ownServerName name the entry of Probity's own MCP server.
const (
	ownServerSlug = "probity"
	ownServerName = "Probity (this directory's own MCP server)"
)

// watchOwnServer lists this service's own MCP server, BASE-URL/mcp, as a remote entry
// read every round like any other (seed 000 counts the service's own MCP server among
// what it reads). It is idempotent: the entry is added once (store.AddEntry by kind and
// locator), with its first due times from the schedule, and later calls return it
// unchanged (created false).
func watchOwnServer(ctx context.Context, st store.Store, baseURL string, schedule rounds.Schedule, now time.Time) (store.Entry, bool, error) {
	loc, err := locator.NormalizeURL(strings.TrimRight(baseURL, "/") + "/mcp")
	if err != nil {
		return store.Entry{}, false, fmt.Errorf("--base-url %q does not make a URL for the own MCP server: %w", baseURL, err)
	}
	e, created, err := st.AddEntry(ctx, store.NewEntry{SlugBase: ownServerSlug, Kind: store.KindRemote, Locator: loc,
		Name: ownServerName, Source: "self", Due: schedule.FirstDue(store.Entry{Kind: store.KindRemote, Locator: loc}, now)})
	if err != nil {
		return store.Entry{}, false, fmt.Errorf("couldn't list the own MCP server %s: %w", loc, err)
	}
	return e, created, nil
}

// publishOnlyUntilDone publishes the store with the key document of keyDir until ctx
// ends (serve --publish-only).
func publishOnlyUntilDone(ctx context.Context, st store.Store, where string, ef *envFlags, listen, baseURL string, site siteOptions, logger *slog.Logger, stderr io.Writer) int {
	doc, err := keys.Load(filepath.Join(ef.keyDirectory(), keys.DocumentFile))
	if err != nil {
		fmt.Fprintf(stderr, "error: --publish-only publishes the key document of the service that signs, and found none: %v\n", err)
		return 2
	}
	srv, err := publish(ctx, st, doc, ef.logDirectory(), listen, baseURL, site, logger)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	defer srv.Shutdown(context.Background()) // publish began it when ctx ended; wait for it
	logger.Info("publishing only: no scheduler, no workers", "store", where, "backend", st.Backend(), "url", "http://"+listen)
	<-ctx.Done()
	logger.Info("stopped")
	return 0
}

// reportStats logs what the store holds every 30 s, so a running service shows progress.
func reportStats(ctx context.Context, st store.Store, logger *slog.Logger) {
	t := time.NewTicker(30 * time.Second)
	defer t.Stop()
	var prev int64
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s, err := st.Stats(ctx)
		if err != nil {
			continue
		}
		logger.Info("progress", "entries", s.Entries, "rounds", s.Rounds, "signed", s.Signed, "new_rounds_30s", s.Rounds-prev)
		prev = s.Rounds
	}
}

const migrateUsage = `Usage:

	probity migrate [--data-dir DIR]

Applies the store's migrations (Probity's and River's), idempotently. The service and
every command that uses the store migrate on start as well; run this to migrate
ahead of a deployment.

` + envHelp

func runMigrate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("probity migrate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var ef envFlags
	ef.register(fs, false)
	if err := parseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(stdout, migrateUsage)
			return 0
		}
		fmt.Fprintf(stderr, "error: %v\n%s", err, migrateUsage)
		return 2
	}
	st, where, err := ef.openStore(context.Background(), slog.New(slog.DiscardHandler))
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	defer st.Close()
	fmt.Fprintf(stdout, "migrated the %s store at %s\n", st.Backend(), where)
	return 0
}

// publish starts the directory (web) with Probity's MCP server at /mcp and the
// transparency log of logDir at /log/ on listen, and shuts it down when ctx ends. The
// listener is open when publish returns.
// siteOptions are serve's settings of the site; the zero value is web's defaults.
type siteOptions struct {
	rate, badgeRate web.RateLimit
	dirCache        time.Duration // web.Config.DirectoryCacheTTL
	write           *writePaths   // the write paths (--accounts); nil: none
	// trustedProxies are the reverse proxies whose X-Forwarded-For names the client
	// (--trusted-proxy): behind a proxy without them, every visitor is one client to
	// the rate limits.
	trustedProxies []string
}

func publish(ctx context.Context, st store.Store, doc *keys.Document, logDir, listen, baseURL string, opts siteOptions, logger *slog.Logger) (*http.Server, error) {
	if baseURL == "" {
		baseURL = "http://" + listen
	}
	mcpHandler, err := mcpserver.New(mcpserver.Config{Store: st, BaseURL: baseURL, Version: version, Logger: logger})
	if err != nil {
		return nil, err
	}
	lg, err := newSiteLog(logDir, st)
	if err != nil {
		return nil, err
	}
	cfg := web.Config{Store: st, Keys: doc, BaseURL: baseURL, Logger: logger, MCP: mcpHandler, RateLimit: opts.rate, BadgeRateLimit: opts.badgeRate, Log: lg, DirectoryCacheTTL: opts.dirCache, TrustedProxies: opts.trustedProxies}
	if opts.write != nil {
		opts.write.site(&cfg)
	}
	h, err := web.New(cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("couldn't listen on %s: %w", listen, err)
	}
	srv := web.Server(listen, h)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("web server stopped", "error", err.Error())
		}
	}()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	return srv, nil
}
