package main

import (
	"flag"
	"fmt"
	"log/slog"
	"time"

	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/keys/signing"
	"github.com/probity-dev/probity/listing"
	"github.com/probity-dev/probity/store"
)

// listingHelp is the part of serve's help about the maintainers' listing (issue 18).
const listingHelp = `Maintainers (with --accounts):
  A maintainer of an entry edits its listing (description, setup notes, links) at
  /s/SLUG/edit; every saved edit is in the entry's history as a change by the
  server's operator. "Re-check now" reads the entry at once, at most once per entry per
  --recheck-interval D (default 10m; 1m-24h).
`

// listingFlags are serve's settings of the maintainers' listing.
type listingFlags struct {
	recheck time.Duration
}

func (f *listingFlags) register(fs *flag.FlagSet) {
	fs.DurationVar(&f.recheck, "recheck-interval", listing.DefaultRecheckInterval, "")
}

func (f *listingFlags) check() error {
	if f.recheck < time.Minute || f.recheck > 24*time.Hour {
		return fmt.Errorf("--recheck-interval %s: want 1m to 24h", f.recheck)
	}
	return nil
}

// addListings gives the write paths the maintainers' listing service: its edits are
// signed into the history by a processor of signer, like the rounds' changes.
func (w *writePaths) addListings(f listingFlags, st store.Store, signer *signing.Signer, logger *slog.Logger) error {
	if err := f.check(); err != nil {
		return err
	}
	proc, err := history.NewProcessor(history.Config{Store: st, Signer: signer, ToolVersion: version, Logger: logger})
	if err != nil {
		return err
	}
	w.listings, err = listing.New(listing.Config{Store: st, History: proc, RecheckInterval: f.recheck})
	if err != nil {
		return err
	}
	return nil
}
