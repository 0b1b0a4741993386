package registry

import (
	"cmp"
	"slices"
)

// Listing is the decision for one server name after a walk: which version the
// registry lists, and whether it is listed at all.
type Listing struct {
	// Name is the server name.
	Name string
	// Latest is the version the registry marks isLatest, or nil when none of the
	// name's items seen did (an incremental walk that saw only an older version's
	// update): the listing of the name is then unchanged.
	Latest *Entry
	// Listed is Latest.Listed(): active, or without a status; false for deprecated
	// and deleted, and when Latest is nil.
	Listed bool
	// Versions counts the name's items seen.
	Versions int
	// Conflicts counts items beyond the first that also claimed isLatest; the newest
	// by UpdatedAt (then the later one seen) won.
	Conflicts int
}

// Latest picks the listed version of each server name among the entries of a walk
// (add them page by page; a name's versions may straddle pages). The rule, from the
// official registry's metadata: the entry whose isLatest is true is the one listed,
// its status decides whether it is listed (active) or unlisted (deprecated,
// deleted). Entries without official metadata (a subregistry that writes none) count
// as the latest only when they are the name's one item seen. The zero Latest is ready
// to use; it is not safe for concurrent use.
type Latest struct {
	names map[string]*Listing
	bare  map[string]*Entry // a name's item without official metadata, while it is its only one
}

// Add takes the entries of one page. It keeps copies of the entries it may list, not
// the slice: the caller may reuse it, and the rest of each page is not held for the
// whole walk.
func (l *Latest) Add(entries []Entry) {
	if l.names == nil {
		l.names = map[string]*Listing{}
		l.bare = map[string]*Entry{}
	}
	for i := range entries {
		e := &entries[i]
		name := e.Server.Name
		li := l.names[name]
		if li == nil {
			li = &Listing{Name: name}
			l.names[name] = li
		}
		li.Versions++
		if e.Official == nil {
			if li.Versions == 1 {
				l.bare[name] = clonePtr(e)
			}
			continue
		}
		if !e.Official.IsLatest {
			continue
		}
		if li.Latest == nil {
			li.Latest = clonePtr(e)
			continue
		}
		li.Conflicts++
		if !e.Official.UpdatedAt.Before(li.Latest.Official.UpdatedAt) {
			li.Latest = clonePtr(e)
		}
	}
}

// clonePtr returns a pointer to a copy of *e.
func clonePtr(e *Entry) *Entry {
	c := *e
	return &c
}

// Listings returns the decision for every name seen, sorted by name.
func (l *Latest) Listings() []Listing {
	out := make([]Listing, 0, len(l.names))
	for name, li := range l.names {
		d := *li
		if d.Latest == nil && d.Versions == 1 {
			d.Latest = l.bare[name]
		}
		d.Listed = d.Latest != nil && d.Latest.Listed()
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b Listing) int { return cmp.Compare(a.Name, b.Name) })
	return out
}
