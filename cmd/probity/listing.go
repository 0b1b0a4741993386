package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/keys/signing"
	"github.com/probity-dev/probity/listing"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/web"
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
	// TEMPORARY, for the lead: the Maintainers of the site should be
	// claims.Service.IsMaintainer (helper A, "a live claim on one of the entry's current
	// parts"). Until that is merged, liveClaims admits an account with any live claim
	// on the entry.
	if w.maint == nil {
		w.maint = liveClaims{st}
	}
	return nil
}

// liveClaims is a temporary web.Maintainers over the store's claims (see addListings).
type liveClaims struct{ st store.Store }

var _ web.Maintainers = liveClaims{}

func (l liveClaims) IsMaintainer(ctx context.Context, accountID, entryID int64) (bool, error) {
	cs, err := l.st.Claims(ctx, entryID)
	if err != nil {
		return false, err
	}
	for _, c := range cs {
		if c.AccountID == accountID && c.Live() {
			return true, nil
		}
	}
	return false, nil
}
