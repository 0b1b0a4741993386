package main

import (
	"context"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/probity-dev/probity/baseline"
	"github.com/probity-dev/probity/checks/probe"
	"github.com/probity-dev/probity/checks/supply"
	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/keys/signing"
	"github.com/probity-dev/probity/rounds"
	"github.com/probity-dev/probity/store"
)

// defaultDataDir holds the embedded store and, by default, the signing key.
const defaultDataDir = "probity-data"

// envHelp documents the environment and flags every store-using command shares.
const envHelp = `Store and keys:

	DATABASE_URL      a postgres:// URL selects PostgreSQL; without it the embedded
	                  SQLite store in DATA-DIR/probity.db is used (no setup)
	--data-dir DIR    where the embedded store lives (default ./probity-data)
	--key-dir DIR     the signing key directory, also PROBITY_KEY_DIR (default
	                  DATA-DIR/keys; created with a new key on first start)
`

// probeHelp documents the probe flags of round and serve.
const probeHelp = `Probing:

	--allow-loopback  allow 127.0.0.0/8 and ::1, for the probe and the supply-chain
	                  sources (local test servers, mirrors and the demo only);
	                  private networks and metadata addresses stay refused
	--ca-file FILE    trust the PEM certificates in FILE instead of the system roots
	--concurrency N   rounds in flight at once (default 32; at least 1)

Supply-chain sources (base URLs, for mirrors and tests; GITHUB_TOKEN, when set, is sent
to the GitHub API only). Every request to them, redirects included (at most 3, never
from https to http), goes through the same egress guard as the probe:

	--npm-url URL        default https://registry.npmjs.org
	--pypi-url URL       default https://pypi.org
	--github-url URL     default https://api.github.com
	--depsdev-url URL    default https://api.deps.dev
	--osv-url URL        default https://api.osv.dev
	--scorecard-url URL  default https://api.securityscorecards.dev
`

// envFlags are the flags of commands that use the store.
type envFlags struct {
	dataDir string
	keyDir  string
	// probe flags
	allowLoopback bool
	caFile        string
	concurrency   int
	withProbe     bool
	// supply source base URLs
	npmURL, pypiURL, githubURL, depsdevURL, osvURL, scorecardURL string
}

func (f *envFlags) register(fs *flag.FlagSet, withProbe bool) {
	fs.StringVar(&f.dataDir, "data-dir", defaultDataDir, "")
	fs.StringVar(&f.keyDir, "key-dir", "", "")
	f.withProbe = withProbe
	if withProbe {
		fs.BoolVar(&f.allowLoopback, "allow-loopback", false, "")
		fs.StringVar(&f.caFile, "ca-file", "", "")
		fs.IntVar(&f.concurrency, "concurrency", 32, "")
		fs.StringVar(&f.npmURL, "npm-url", "", "")
		fs.StringVar(&f.pypiURL, "pypi-url", "", "")
		fs.StringVar(&f.githubURL, "github-url", "", "")
		fs.StringVar(&f.depsdevURL, "depsdev-url", "", "")
		fs.StringVar(&f.osvURL, "osv-url", "", "")
		fs.StringVar(&f.scorecardURL, "scorecard-url", "", "")
	}
}

// valid reports whether the flags hold values a command can run with, and prints an
// error and a hint to stderr when not: --concurrency below 1 is refused.
func (f *envFlags) valid(stderr io.Writer) bool {
	if f.withProbe && f.concurrency < 1 {
		fmt.Fprintf(stderr, "error: --concurrency must be at least 1, got %d\nhint: --concurrency N keeps N rounds in flight at once (default 32)\n", f.concurrency)
		return false
	}
	return true
}

// keyDirectory is --key-dir, else PROBITY_KEY_DIR, else DATA-DIR/keys.
func (f *envFlags) keyDirectory() string {
	switch {
	case f.keyDir != "":
		return f.keyDir
	case os.Getenv("PROBITY_KEY_DIR") != "":
		return os.Getenv("PROBITY_KEY_DIR")
	}
	return filepath.Join(f.dataDir, "keys")
}

// openStore opens the store DATABASE_URL selects (or the embedded one) and migrates it.
func (f *envFlags) openStore(ctx context.Context, logger *slog.Logger) (store.Store, string, error) {
	url := os.Getenv("DATABASE_URL")
	cfg := store.Config{DatabaseURL: url, SQLitePath: filepath.Join(f.dataDir, "probity.db"), Logger: logger}
	where := cfg.SQLitePath
	if url != "" {
		where = "PostgreSQL (DATABASE_URL)" // never print the URL: it may carry a password
	}
	st, err := store.Open(ctx, cfg)
	if err != nil {
		return nil, where, fmt.Errorf("couldn't open the store at %s: %w", where, err)
	}
	if err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, where, fmt.Errorf("couldn't migrate the store at %s: %w", where, err)
	}
	return st, where, nil
}

// openSigner loads the signing key, creating a key directory with a notice on first
// start (signing.EnsureDir: crash-safe, and safe against a second process starting at
// the same moment).
func (f *envFlags) openSigner(stderr io.Writer) (*keys.Document, *signing.Signer, error) {
	dir := f.keyDirectory()
	now := time.Now()
	created, err := signing.EnsureDir(dir, "https://probity.dev", now, nil)
	if err != nil {
		return nil, nil, err
	}
	if created != nil {
		fmt.Fprintf(stderr, "notice: created a new signing key %s in %s; publish %s and back up the directory\n",
			created.Keys[0].KeyID, dir, filepath.Join(dir, keys.DocumentFile))
	}
	// Open at a time taken after EnsureDir: when another process starting at the same
	// moment won the race, its key is valid from its own clock reading, which can be
	// later than now (TestServeThreeWorkers once saw a worker refuse the key as "not
	// valid at" its own earlier reading).
	doc, signer, err := signing.OpenDir(dir, time.Now())
	if err != nil {
		return nil, nil, fmt.Errorf("couldn't load the signing key: %w", err)
	}
	return doc, signer, nil
}

// prober builds the probe from the flags.
func (f *envFlags) prober(logger *slog.Logger) (*probe.Prober, error) {
	cfg := probe.Config{Version: version, AllowLoopback: f.allowLoopback, Logger: logger}
	pool, err := f.rootCAs()
	if err != nil {
		return nil, err
	}
	cfg.RootCAs = pool
	return probe.New(cfg), nil
}

// rootCAs are the certificates of --ca-file (nil without it: the system roots), which
// the probe and the claims' checks trust.
func (f *envFlags) rootCAs() (*x509.CertPool, error) {
	if f.caFile == "" {
		return nil, nil
	}
	pem, err := readInput(f.caFile, 1<<20)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate", f.caFile)
	}
	return pool, nil
}

// runner builds a Runner on an open store.
func (f *envFlags) runner(st store.Store, signer *signing.Signer, schedule rounds.Schedule, logger *slog.Logger) (*rounds.Runner, error) {
	p, err := f.prober(logger)
	if err != nil {
		return nil, err
	}
	h, err := history.NewProcessor(history.Config{Store: st, Signer: signer, ToolVersion: version,
		Baselines: baseline.Approvals{Store: st}, Logger: logger})
	if err != nil {
		return nil, err
	}
	collector, err := f.collector(st, logger)
	if err != nil {
		return nil, err
	}
	return rounds.NewRunner(rounds.Config{Store: st, Prober: p, Signer: signer, ToolVersion: version, Schedule: schedule,
		History: h, Baselines: baseline.Approvals{Store: st}, Collector: collector, SupplyHistory: h, Logger: logger})
}

// collector builds the supply-chain collector: the sources at their base URLs over one
// caching client behind the egress guard (loopback only with --allow-loopback), its
// cache kept in the store (so a restart or the next round revalidates instead of
// starting cold) and its requests throttled under each source's published quota
// (supply.DefaultLimits), and the provenance verifier with the pinned trusted root.
func (f *envFlags) collector(st httpCacheStore, logger *slog.Logger) (*supply.Collector, error) {
	verifier, err := supply.NewVerifier(supply.DefaultTrustedRoot())
	if err != nil {
		return nil, fmt.Errorf("couldn't load the pinned Sigstore trusted root: %w", err)
	}
	client := supply.NewClient(supply.ClientConfig{UserAgent: "probity/" + version + " (+https://probity.dev/probe)", Logger: logger,
		AllowLoopback: f.allowLoopback, Store: httpCache{st: st}})
	return supply.NewCollector(supply.CollectorConfig{
		Client:       client,
		NPM:          supply.NewNPM(supply.NPMConfig{Client: client, BaseURL: f.npmURL}),
		PyPI:         supply.NewPyPI(supply.PyPIConfig{Client: client, BaseURL: f.pypiURL}),
		GitHub:       supply.NewGitHub(supply.GitHubConfig{Client: client, BaseURL: f.githubURL, Token: os.Getenv("GITHUB_TOKEN")}),
		DepsDev:      supply.NewDepsDev(supply.DepsDevConfig{Client: client, BaseURL: f.depsdevURL}),
		ScorecardAPI: supply.NewScorecardAPI(supply.ScorecardAPIConfig{Client: client, BaseURL: f.scorecardURL}),
		OSV:          supply.NewOSV(supply.OSVConfig{Client: client, BaseURL: f.osvURL}),
		Provenance:   verifier,
		Logger:       logger,
	}), nil
}

// isTerminal reports whether w is a terminal (for progress bars).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
