package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/probity-dev/probity/checks/probe/egress"
	"github.com/probity-dev/probity/claims"
	"github.com/probity-dev/probity/disputes"
	"github.com/probity-dev/probity/keys/signing"
	"github.com/probity-dev/probity/rounds"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/web"
)

// claimsHelp is the part of serve's help about claiming entries (issue 18).
const claimsHelp = `Claiming entries (with --accounts):
  A signed-in person claims an entry on its Claim page by proving control of one of
  its parts: a token at https://ORIGIN/.well-known/probity-claim (an https remote) or
  in a TXT record at _probity-claim.HOST (a remote), in the newest version's README
  (npm, PyPI), or in .well-known/probity-claim on the default branch of the entry's
  own repository (read with $GITHUB_TOKEN when set). Checks are throttled (one per
  token every 10 s, 30 an hour per account). Claimed entries are read on
  --claimed-cadence.
  --claim-dns-server HOST:PORT   the resolver the TXT records are asked of (default:
                                 the system's)
  --claim-recheck D              how often every claim is proven again (24h; 1h-168h;
                                 each claim on its own time, a few at once every 5
                                 min); a claim lapses when its proof is gone on two
                                 checks a day apart, or unreadable for 7 days
The registries and GitHub are read at --npm-url, --pypi-url and --github-url.
A maintainer approves the entry's current tools as its baseline at /s/SLUG/baseline;
from the next round the *_unchanged_vs_approved checks compare with it.
`

// The claims service is the site's maintainer rule (web.Config.Maintainers).
var _ web.Maintainers = (*claims.Service)(nil)

// claimFlags are serve's settings of claims.
type claimFlags struct {
	dnsServer string
	recheck   time.Duration
}

func (f *claimFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.dnsServer, "claim-dns-server", "", "")
	fs.DurationVar(&f.recheck, "claim-recheck", claims.DefaultRecheckInterval, "")
}

// check validates the flags.
func (f *claimFlags) check() error {
	if f.recheck < time.Hour || f.recheck > 7*24*time.Hour {
		return fmt.Errorf("--claim-recheck %s: want 1h to 168h", f.recheck)
	}
	if f.dnsServer != "" {
		if _, _, err := net.SplitHostPort(f.dnsServer); err != nil {
			return fmt.Errorf("--claim-dns-server %q: want HOST:PORT", f.dnsServer)
		}
	}
	return nil
}

// addClaims gives the write paths the claims service: its checks go through the egress
// guard (loopback only with --allow-loopback), read the supply sources' base URLs and
// trust --ca-file, and a claim flipping an entry's claimed state moves its cadence
// round by schedule.
func (w *writePaths) addClaims(f claimFlags, st store.Store, ef *envFlags, schedule rounds.Schedule, logger *slog.Logger) error {
	if err := f.check(); err != nil {
		return err
	}
	pool, err := ef.rootCAs()
	if err != nil {
		return err
	}
	w.claims, err = claims.New(claims.Config{Store: st, Schedule: schedule, Egress: egress.Config{AllowLoopback: ef.allowLoopback},
		RootCAs: pool, DNSServer: f.dnsServer, NPMURL: ef.npmURL, PyPIURL: ef.pypiURL, GitHubAPIURL: ef.githubURL,
		GitHubToken: os.Getenv("GITHUB_TOKEN"), RecheckInterval: f.recheck, Logger: logger})
	return err
}

// addMaintainers gives the write paths every service of maintainers and operators
// (issue 18): claims, the maintainers' listing, disputes, the operator role and
// console, reports and baselines; serve --accounts and the demo both call it.
func (w *writePaths) addMaintainers(cf claimFlags, lf listingFlags, st store.Store, ef *envFlags, schedule rounds.Schedule, signer *signing.Signer, logger *slog.Logger) error {
	if err := w.addClaims(cf, st, ef, schedule, logger); err != nil {
		return err
	}
	if err := w.addListings(lf, st, signer, logger); err != nil {
		return err
	}
	if err := w.addDisputes(st, signer, logger); err != nil {
		return err
	}
	if err := w.addOperators(st, schedule, logger); err != nil {
		return err
	}
	if err := w.addReports(st, signer, reportsAudit{w.operators}, logger); err != nil {
		return err
	}
	return w.addBaselines(st, signer, logger)
}

// addDisputes makes the disputes service (package disputes) beside the claims service,
// which says who maintains an entry (claims.Service.IsMaintainer).
func (w *writePaths) addDisputes(st store.Store, signer *signing.Signer, logger *slog.Logger) error {
	if w.claims == nil {
		return errors.New("disputes need the claims service")
	}
	var err error
	w.disputes, err = disputes.New(disputes.Config{Store: st, Maintainers: w.claims, Signer: signer, ToolVersion: version, Logger: logger})
	return err
}
