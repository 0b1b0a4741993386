package web

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/web/badge"
	"github.com/probity-dev/probity/web/feed"
)

// badgeOf returns the badge of slug: its verdict (verdict.go) from the same newest
// round, newest signed round and newest supply run the pages show.
func (s *site) badgeOf(ctx context.Context, slug string) (badge.Badge, error) {
	d, err := s.st.EntryDigest(ctx, slug, store.EntryQuery{})
	if err != nil {
		return badge.Badge{}, err
	}
	return badge.For(entryState(digestState(&d))), nil
}

// entryFeed returns the Atom feed of slug's history.
func (s *site) entryFeed(ctx context.Context, slug string) ([]byte, error) {
	e, err := s.st.Entry(ctx, slug)
	if err != nil {
		return nil, err
	}
	cs, err := s.st.Changes(ctx, store.ChangeFilter{EntryID: e.ID, Limit: feed.MaxEntryFeed, WithoutEnvelopes: true})
	if err != nil {
		return nil, err
	}
	for i := range cs {
		cs[i].EntrySlug = e.Slug
	}
	return feed.EntryFeed(s.feed, e.Slug, e.Name, cs, s.now())
}

// directoryFeed returns the Atom feed of the newest changes across the directory. The
// same changes make the same feed, and the directory's newest changes change far less
// often than the feed is polled: the last feed is kept with its changes (changesKey)
// and served again while they are the newest.
func (s *site) directoryFeed(ctx context.Context) ([]byte, error) {
	cs, err := s.st.Changes(ctx, store.ChangeFilter{Limit: feed.MaxDirectoryFeed, WithoutEnvelopes: true})
	if err != nil {
		return nil, err
	}
	key := changesKey(cs)
	s.dirFeed.mu.Lock()
	if key != "" && key == s.dirFeed.key {
		b := s.dirFeed.body
		s.dirFeed.mu.Unlock()
		return b, nil
	}
	s.dirFeed.mu.Unlock()
	b, err := feed.DirectoryFeed(s.feed, cs, s.now())
	if err != nil || key == "" {
		return b, err
	}
	s.dirFeed.mu.Lock()
	s.dirFeed.key, s.dirFeed.body = key, b
	s.dirFeed.mu.Unlock()
	return b, nil
}

// lastFeed is a rendered feed and the key of the changes it shows.
type lastFeed struct {
	mu   sync.Mutex
	key  string
	body []byte // shared: never modified
}

// changesKey identifies a list of changes by what a feed shows of them: a change's text
// never changes once recorded, and hiding one takes it out of the list. "" for no
// changes (such a feed is dated now).
func changesKey(cs []store.ChangeRecord) string {
	var b strings.Builder
	for i := range cs {
		c := &cs[i]
		fmt.Fprintf(&b, "%d/%s/%d/%d/%t;", c.EntryID, c.EntrySlug, c.Number, c.RecordedAt.UnixMilli(), c.Hidden)
	}
	return b.String()
}
