package store

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestMaintainerListingContract: a maintainer's listing is stored only with its
// history update, in its transaction: a stale revision, a change that cannot be stored
// or a listing that breaks the rules leaves neither the listing nor the changes; the
// stored listing reads back as saved, revision by revision; deleting the entry takes it.
func TestMaintainerListingContract(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		e := mustAddEntry(t, s, "one")
		l, err := s.MaintainerListing(ctx, e.ID)
		if err != nil || l.Revision != 0 || l.Description != "" || l.Links != nil || l.EntryID != e.ID {
			t.Fatalf("MaintainerListing(none) = %+v, %v", l, err)
		}
		want := MaintainerListing{Description: "Wörter\nzwei Zeilen", SetupNotes: strings.Repeat("n", MaxListingSetupNotes),
			Links: []ListingLink{{Label: "Docs", URL: "https://example.com/docs"}, {Label: "Status", URL: "https://status.example.com/"}}}
		mustSaveHistory(t, s, HistoryUpdate{EntryID: e.ID, State: []byte(`{}`), Changes: []ChangeRecord{testChange(e.ID, 1, t0)},
			Listing: &ListingUpdate{Listing: want, ExpectRevision: 0}})
		got, err := s.MaintainerListing(ctx, e.ID)
		if err != nil || got.Revision != 1 || got.Description != want.Description || got.SetupNotes != want.SetupNotes ||
			!reflect.DeepEqual(got.Links, want.Links) || got.UpdatedAt.IsZero() {
			t.Fatalf("MaintainerListing = %+v, %v", got, err)
		}

		// A stale revision: ErrStaleListing (an ErrConflict), and nothing stored.
		other := MaintainerListing{Description: "other"}
		err = s.SaveHistory(ctx, HistoryUpdate{EntryID: e.ID, State: []byte(`{"x":1}`), Changes: []ChangeRecord{testChange(e.ID, 2, t0)},
			Listing: &ListingUpdate{Listing: other, ExpectRevision: 0}})
		if !errors.Is(err, ErrStaleListing) || !errors.Is(err, ErrConflict) {
			t.Fatalf("SaveHistory(stale listing) = %v, want ErrStaleListing", err)
		}
		// A change that cannot be stored (its number is taken): the listing stays.
		err = s.SaveHistory(ctx, HistoryUpdate{EntryID: e.ID, State: []byte(`{"x":1}`), Changes: []ChangeRecord{testChange(e.ID, 1, t0)},
			Listing: &ListingUpdate{Listing: other, ExpectRevision: 1}})
		if err == nil {
			t.Fatal("SaveHistory(taken change number) = nil")
		}
		// A listing that breaks the rules is refused before anything is written.
		for name, bad := range map[string]MaintainerListing{
			"long description": {Description: strings.Repeat("é", MaxListingDescription+1)},
			"control":          {Description: "a\x00b"},
			"http link":        {Links: []ListingLink{{Label: "x", URL: "http://example.com/"}}},
			"javascript link":  {Links: []ListingLink{{Label: "x", URL: "javascript:alert(1)"}}},
			"user info":        {Links: []ListingLink{{Label: "x", URL: "https://u:p@example.com/"}}},
			"empty label":      {Links: []ListingLink{{Label: " ", URL: "https://example.com/"}}},
			"six links":        {Links: make([]ListingLink, MaxListingLinks+1)},
		} {
			err := s.SaveHistory(ctx, HistoryUpdate{EntryID: e.ID, State: []byte(`{"x":1}`), Changes: []ChangeRecord{testChange(e.ID, 2, t0)},
				Listing: &ListingUpdate{Listing: bad, ExpectRevision: 1}})
			var fe *ListingFieldError
			if !errors.As(err, &fe) {
				t.Errorf("%s: SaveHistory = %v, want a *ListingFieldError", name, err)
			}
		}
		if got2, err := s.MaintainerListing(ctx, e.ID); err != nil || !reflect.DeepEqual(got2, got) {
			t.Fatalf("after refused updates: %+v, %v; want %+v", got2, err, got)
		}
		cs, err := s.Changes(ctx, ChangeFilter{EntryID: e.ID, IncludeHidden: true})
		if err != nil || len(cs) != 1 {
			t.Fatalf("after refused updates: %d changes, %v; want 1", len(cs), err)
		}

		// The next edit, at the stored revision; no links is an empty list.
		mustSaveHistory(t, s, HistoryUpdate{EntryID: e.ID, State: []byte(`{"x":2}`), Changes: []ChangeRecord{testChange(e.ID, 2, t0)},
			Listing: &ListingUpdate{Listing: other, ExpectRevision: 1}})
		if got, err := s.MaintainerListing(ctx, e.ID); err != nil || got.Revision != 2 || got.Description != "other" || len(got.Links) != 0 || got.SetupNotes != "" {
			t.Fatalf("MaintainerListing = %+v, %v", got, err)
		}
		if err := s.DeleteEntry(ctx, e.Slug, "test"); err != nil {
			t.Fatal(err)
		}
		if got, err := s.MaintainerListing(ctx, e.ID); err != nil || got.Revision != 0 {
			t.Fatalf("MaintainerListing(deleted entry) = %+v, %v", got, err)
		}
	})
}

// TestRequestRecheckContract: a re-check sets the entry's manual due time at once; a
// second within the interval is refused with when the next is allowed, and changes
// nothing; after the interval it is allowed again.
func TestRequestRecheckContract(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		e := mustAddEntry(t, s, "one")
		manual := func() time.Time {
			t.Helper()
			ds, err := s.DueTimes(ctx, e.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range ds {
				if d.Reason == ReasonManual {
					return d.At
				}
			}
			return time.Time{}
		}
		if err := s.RequestRecheck(ctx, e.ID, t0, 10*time.Minute); err != nil {
			t.Fatal(err)
		}
		if at := manual(); !at.Equal(ms(t0)) {
			t.Fatalf("manual due time = %v, want %v", at, t0)
		}
		if err := s.SetDue(ctx, e.ID, DueUpdate{Reason: ReasonManual}); err != nil { // the round ran
			t.Fatal(err)
		}
		var refused *RecheckRefused
		if err := s.RequestRecheck(ctx, e.ID, t0.Add(9*time.Minute), 10*time.Minute); !errors.As(err, &refused) || !refused.Next.Equal(ms(t0.Add(10*time.Minute))) {
			t.Fatalf("RequestRecheck(within the interval) = %v, want refused until %v", err, t0.Add(10*time.Minute))
		}
		if at := manual(); !at.IsZero() {
			t.Fatalf("a refused re-check set the due time %v", at)
		}
		if err := s.RequestRecheck(ctx, e.ID, t0.Add(10*time.Minute), 10*time.Minute); err != nil {
			t.Fatal(err)
		}
		if at := manual(); !at.Equal(ms(t0.Add(10 * time.Minute))) {
			t.Fatalf("manual due time = %v", at)
		}
		if err := s.RequestRecheck(ctx, 99999, t0, time.Minute); !errors.Is(err, ErrNotFound) {
			t.Fatalf("RequestRecheck(no entry) = %v, want ErrNotFound", err)
		}
	})
}
