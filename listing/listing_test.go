package listing_test

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/export"
	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/keys/signing"
	"github.com/probity-dev/probity/listing"
	"github.com/probity-dev/probity/notify"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/verifier"
	"github.com/probity-dev/probity/verifier/cli"
)

var now = time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)

type env struct {
	st   store.Store
	doc  *keys.Document
	proc *history.Processor
	e    store.Entry
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, store.Config{SQLitePath: filepath.Join(dir, "probity.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	keyDir := filepath.Join(dir, "keys")
	if _, err := signing.GenerateDir(keyDir, "https://probity.test", now.Add(-time.Hour), nil); err != nil {
		t.Fatal(err)
	}
	doc, signer, err := signing.OpenDir(keyDir, now)
	if err != nil {
		t.Fatal(err)
	}
	proc, err := history.NewProcessor(history.Config{Store: st, Signer: signer, ToolVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	e, _, err := st.AddEntry(ctx, store.NewEntry{SlugBase: "acme", Kind: store.KindRemote, Locator: "https://mcp.acme.test/mcp", Source: "import"})
	if err != nil {
		t.Fatal(err)
	}
	return &env{st: st, doc: doc, proc: proc, e: e}
}

func (v *env) changes(t *testing.T) []store.ChangeRecord {
	t.Helper()
	cs, err := v.st.Changes(context.Background(), store.ChangeFilter{EntryID: v.e.ID})
	if err != nil {
		t.Fatal(err)
	}
	return cs // newest first
}

func (v *env) details(t *testing.T, c store.ChangeRecord) history.ChangeDetails {
	t.Helper()
	d, err := history.DecodeChangeDetails(c.Details)
	if err != nil {
		t.Fatal(err)
	}
	return *d
}

// TestEdit: each changed field is one signed operator edit, numbered in the fields'
// order, with its text before and after (the setup notes: only their name), without
// who made it; an unchanged listing records nothing; the listing reads back
// normalized; everything the history holds verifies offline.
func TestEdit(t *testing.T) {
	ctx := context.Background()
	v := newEnv(t)
	svc, err := listing.New(listing.Config{Store: v.st, History: v.proc, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	first := store.MaintainerListing{Description: "Search our docs.\r\nSecond line.  ", SetupNotes: "secret-ish setup\n`npx acme`",
		Links: []store.ListingLink{{Label: " Docs ", URL: "https://acme.test/docs"}}}
	fields, err := svc.Edit(ctx, v.e.ID, first)
	if err != nil || strings.Join(fields, ",") != "description,setup_notes,links" {
		t.Fatalf("Edit = %v, %v", fields, err)
	}
	cs := v.changes(t)
	if len(cs) != 3 {
		t.Fatalf("%d changes, want 3", len(cs))
	}
	for i, want := range []struct{ field, summary, before, after string }{
		{"links", "links edited by the operator", "", "Docs <https://acme.test/docs>"},
		{"setup_notes", "setup notes edited by the operator", "", ""},
		{"description", "description edited by the operator", "", "Search our docs.\nSecond line."},
	} {
		c := cs[i]
		d := v.details(t, c)
		if c.Number != int64(3-i) || c.Origin != attest.OriginOperator || c.Kind != attest.ChangeOperatorEdit || c.Summary != want.summary || d.Field != want.field {
			t.Errorf("change %d = %+v %+v", c.Number, c, d)
		}
		if want.field == "setup_notes" {
			if d.Before != nil || d.After != nil || strings.Contains(string(c.Details), "secret-ish") {
				t.Errorf("the setup notes' text was recorded: %s", c.Details)
			}
			continue
		}
		if d.Before == nil || d.After == nil || *d.Before != want.before || *d.After != want.after {
			t.Errorf("change %d: details %s", c.Number, c.Details)
		}
	}
	got, err := svc.MaintainerListing(ctx, v.e.ID)
	if err != nil || got.Revision != 1 || got.Description != "Search our docs.\nSecond line." || got.Links[0].Label != "Docs" {
		t.Fatalf("MaintainerListing = %+v, %v", got, err)
	}

	// Followers' e-mails name the fields edited, never their text nor who.
	var ncs []notify.Change
	for i := len(cs) - 1; i >= 0; i-- {
		ncs = append(ncs, notify.ChangeOf(&store.NotifyChange{Number: cs[i].Number, RecordedAt: cs[i].RecordedAt, Kind: cs[i].Kind, Details: cs[i].Details}))
	}
	if sum := notify.Summarize(ncs, ""); !sum.Notable || sum.Text() != "listing edited by the operator: description, links, setup notes" {
		t.Errorf("e-mail summary %+v: %q", sum, sum.Text())
	}

	// The same listing again: nothing changes, nothing is recorded.
	if fields, err := svc.Edit(ctx, v.e.ID, first); err != nil || fields != nil || len(v.changes(t)) != 3 {
		t.Fatalf("Edit(same) = %v, %v", fields, err)
	}
	// One field: one change, its before the stored text.
	second := got
	second.Description = "New words."
	if fields, err := svc.Edit(ctx, v.e.ID, second); err != nil || strings.Join(fields, ",") != "description" {
		t.Fatalf("Edit(description) = %v, %v", fields, err)
	}
	c := v.changes(t)[0]
	if d := v.details(t, c); c.Number != 4 || *d.Before != "Search our docs.\nSecond line." || *d.After != "New words." {
		t.Fatalf("change %d: %s", c.Number, c.Details)
	}
	// A listing that breaks the rules: a field error, nothing recorded.
	bad := second
	bad.Links = []store.ListingLink{{Label: "x", URL: "javascript:alert(1)"}}
	var fe *store.ListingFieldError
	if _, err := svc.Edit(ctx, v.e.ID, bad); !errors.As(err, &fe) || fe.Field != "links" || len(v.changes(t)) != 4 {
		t.Fatalf("Edit(bad link) = %v", err)
	}

	// Everything exported verifies offline: the 4 changes.
	out := t.TempDir()
	counts, err := export.Write(ctx, v.st, v.doc, out, store.EnvelopeFilter{}, nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := cli.VerifyPaths(ctx, []string{out}, cli.StreamConfig{Keys: v.doc, Policy: verifier.DefaultPolicy()})
	if err != nil || sum.Failed != 0 || counts.Changes != 4 || sum.Verified != counts.Changes {
		t.Fatalf("export %+v verified %+v (%v)", counts, sum, err)
	}
}

// racingHistory saves another maintainer's edit just before the first call it
// forwards, as a concurrent edit would.
type racingHistory struct {
	proc  *history.Processor
	other func()
	calls int
}

func (r *racingHistory) RecordOperatorEdits(ctx context.Context, entryID int64, edits []history.Edit, l *store.ListingUpdate, at time.Time) ([]store.ChangeRecord, error) {
	r.calls++
	if r.calls == 1 {
		r.other()
	}
	return r.proc.RecordOperatorEdits(ctx, entryID, edits, l, at)
}

// TestEditAfterAConcurrentEdit: an edit computed from a listing that another edit
// replaced is computed again, so its change's "before" is the text it replaced.
func TestEditAfterAConcurrentEdit(t *testing.T) {
	ctx := context.Background()
	v := newEnv(t)
	direct, err := listing.New(listing.Config{Store: v.st, History: v.proc})
	if err != nil {
		t.Fatal(err)
	}
	rh := &racingHistory{proc: v.proc, other: func() {
		if _, err := direct.Edit(ctx, v.e.ID, store.MaintainerListing{Description: "theirs"}); err != nil {
			t.Error(err)
		}
	}}
	svc, err := listing.New(listing.Config{Store: v.st, History: rh})
	if err != nil {
		t.Fatal(err)
	}
	if fields, err := svc.Edit(ctx, v.e.ID, store.MaintainerListing{Description: "ours"}); err != nil || len(fields) != 1 || rh.calls != 2 {
		t.Fatalf("Edit = %v, %v after %d calls", fields, err, rh.calls)
	}
	cs := v.changes(t)
	if len(cs) != 2 {
		t.Fatalf("%d changes, want 2", len(cs))
	}
	if d := v.details(t, cs[0]); *d.Before != "theirs" || *d.After != "ours" {
		t.Fatalf("the second edit's change: %s", cs[0].Details)
	}
	if l, _ := v.st.MaintainerListing(ctx, v.e.ID); l.Description != "ours" || l.Revision != 2 {
		t.Fatalf("listing %+v", l)
	}
}

// failingHistory fails every save, as a crash before the commit does.
type failingHistory struct{}

func (failingHistory) RecordOperatorEdits(context.Context, int64, []history.Edit, *store.ListingUpdate, time.Time) ([]store.ChangeRecord, error) {
	return nil, errors.New("disk gone")
}

// TestEditThatFailsStoresNothing: the listing is saved only by the history's save.
func TestEditThatFailsStoresNothing(t *testing.T) {
	ctx := context.Background()
	v := newEnv(t)
	svc, err := listing.New(listing.Config{Store: v.st, History: failingHistory{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Edit(ctx, v.e.ID, store.MaintainerListing{Description: "x"}); err == nil {
		t.Fatal("Edit = nil")
	}
	if l, _ := v.st.MaintainerListing(ctx, v.e.ID); l.Revision != 0 || len(v.changes(t)) != 0 {
		t.Fatalf("after a failed save: listing %+v, %d changes", l, len(v.changes(t)))
	}
}

// TestRecheck: once per interval per entry; the refusal says when the next is allowed.
func TestRecheck(t *testing.T) {
	ctx := context.Background()
	v := newEnv(t)
	at := now
	svc, err := listing.New(listing.Config{Store: v.st, History: v.proc, Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	if svc.RecheckInterval() != listing.DefaultRecheckInterval {
		t.Fatalf("interval %v", svc.RecheckInterval())
	}
	if err := svc.Recheck(ctx, v.e.ID); err != nil {
		t.Fatal(err)
	}
	at = now.Add(time.Minute)
	var refused *store.RecheckRefused
	if err := svc.Recheck(ctx, v.e.ID); !errors.As(err, &refused) || !refused.Next.Equal(now.Add(10*time.Minute)) {
		t.Fatalf("Recheck(again) = %v", err)
	}
	at = now.Add(10 * time.Minute)
	if err := svc.Recheck(ctx, v.e.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := listing.New(listing.Config{Store: v.st, History: v.proc, RecheckInterval: -time.Second}); err == nil {
		t.Error("a negative interval was accepted")
	}
}

// TestEditBudget: an entry's listing takes EditsPerHour saved edits an hour (each saved
// field is a signed change); the next is refused with when to try again, stores
// nothing, and is taken once the hour has passed. An edit that changes nothing is free.
func TestEditBudget(t *testing.T) {
	ctx := context.Background()
	v := newEnv(t)
	clock := now
	svc, err := listing.New(listing.Config{Store: v.st, History: v.proc, EditsPerHour: 2, Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range []string{"one", "two"} {
		clock = clock.Add(time.Minute)
		if _, err := svc.Edit(ctx, v.e.ID, store.MaintainerListing{Description: d}); err != nil {
			t.Fatalf("edit %d: %v", i+1, err)
		}
	}
	if _, err := svc.Edit(ctx, v.e.ID, store.MaintainerListing{Description: "two"}); err != nil {
		t.Errorf("an edit that changes nothing: %v", err)
	}
	var tm *listing.TooManyEdits
	if _, err := svc.Edit(ctx, v.e.ID, store.MaintainerListing{Description: "three"}); !errors.As(err, &tm) || tm.RetryAfter != 59*time.Minute {
		t.Fatalf("a third edit in the hour: %v, want TooManyEdits after 59m", err)
	}
	if n := len(v.changes(t)); n != 2 {
		t.Errorf("%d changes after the refused edit, want 2", n)
	}
	clock = clock.Add(59 * time.Minute)
	if _, err := svc.Edit(ctx, v.e.ID, store.MaintainerListing{Description: "three"}); err != nil {
		t.Errorf("after the hour: %v", err)
	}
}
