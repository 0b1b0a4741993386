package web

import (
	"context"

	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/web/badge"
	"github.com/probity-dev/probity/web/feed"
)

// badgeOf returns the badge of slug, from the same newest round and supply run the
// pages show.
func (s *site) badgeOf(ctx context.Context, slug string) (badge.Badge, error) {
	d, err := s.st.EntryDigest(ctx, slug, store.EntryQuery{})
	if err != nil {
		return badge.Badge{}, err
	}
	return badge.For(badgeState(d.Round, d.Supply, d.SupplySigned)), nil
}

// badgeState is the badge of an entry's newest round and supply run (nil: none), which
// is signed when runSigned.
func badgeState(round *store.RoundSummary, run *store.SupplyRecord, runSigned bool) badge.State {
	var st badge.State
	if round != nil {
		st.Probed, st.Signed, st.Coverage = true, round.Signed, round.Coverage
	}
	if run != nil {
		// An unsigned supply run is not a verdict anyone can check: it does not count.
		st.HasSupply = runSigned
		st.Verified, st.Score = run.Verified, run.Score
	}
	return st
}

// entryFeed returns the Atom feed of slug's history.
func (s *site) entryFeed(ctx context.Context, slug string) ([]byte, error) {
	e, err := s.st.Entry(ctx, slug)
	if err != nil {
		return nil, err
	}
	cs, err := s.st.Changes(ctx, store.ChangeFilter{EntryID: e.ID, Limit: feed.MaxEntryFeed})
	if err != nil {
		return nil, err
	}
	for i := range cs {
		cs[i].EntrySlug = e.Slug
	}
	return feed.EntryFeed(s.feed, e.Slug, e.Name, cs, s.now())
}

// directoryFeed returns the Atom feed of the newest changes across the directory.
func (s *site) directoryFeed(ctx context.Context) ([]byte, error) {
	cs, err := s.st.Changes(ctx, store.ChangeFilter{Limit: feed.MaxDirectoryFeed})
	if err != nil {
		return nil, err
	}
	return feed.DirectoryFeed(s.feed, cs, s.now())
}
