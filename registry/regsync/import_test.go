package regsync

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/targets"
)

// TestPartKindsAreTheStores: the kinds targets gives parts are the store's.
func TestPartKindsAreTheStores(t *testing.T) {
	s, _, err := targets.ParseServerJSON([]byte(`{"name":"a/w","remotes":[{"url":"https://w.example.com/mcp"}],"repository":{"url":"https://github.com/a/w","source":"github"},"packages":[` +
		`{"registryType":"npm","identifier":"w"},{"registryType":"pypi","identifier":"w"},{"registryType":"oci","identifier":"ghcr.io/a/w:1"},` +
		`{"registryType":"nuget","identifier":"A.W"},{"registryType":"mcpb","identifier":"https://github.com/a/w/releases/download/v1/w.mcpb"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{store.KindRemote, store.KindNPM, store.KindPyPI, store.PartOCI, store.PartNuGet, store.PartMCPB, store.KindGitHub}
	if len(s.Parts) != len(want) {
		t.Fatalf("%+v", s.Parts)
	}
	for i, p := range s.Parts {
		if p.Kind != want[i] {
			t.Errorf("part %d: kind %q, want %q", i, p.Kind, want[i])
		}
	}
}

// TestPartText: parts read as an operator writes them.
func TestPartText(t *testing.T) {
	for _, tc := range []struct {
		p    store.Part
		want string
	}{
		{store.Part{Kind: store.KindNPM, Locator: "pkg:npm/%40scope/name"}, "npm:@scope/name"},
		{store.Part{Kind: store.KindNPM, Locator: "pkg:npm/foo"}, "npm:foo"},
		{store.Part{Kind: store.KindPyPI, Locator: "pkg:pypi/foo-bar"}, "pypi:foo-bar"},
		{store.Part{Kind: store.KindRemote, Locator: "https://w.example.com/mcp"}, "https://w.example.com/mcp"},
		{store.Part{Kind: store.KindGitHub, Locator: "https://github.com/a/w"}, "https://github.com/a/w"},
		{store.Part{Kind: store.PartOCI, Locator: "ghcr.io/a/w:1"}, "oci:ghcr.io/a/w:1"},
	} {
		if got := PartText(tc.p); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.p, got, tc.want)
		}
	}
	if got := ConflictText(store.PartConflict{Part: store.Part{Kind: store.KindNPM, Locator: "pkg:npm/foo"}, EntrySlug: "bar"}); got != "npm:foo is already part of entry bar" {
		t.Errorf("%q", got)
	}
}

// TestImport: the upsert Import makes of a server: the canonical server.json, the
// listing, the parts in order, the due times of a new entry; an unlisted server Probity
// does not know is not added, one it knows is unlisted.
func TestImport(t *testing.T) {
	ctx := context.Background()
	doc := "{\n  \"name\": \"com.example/w\", \"version\": \"1.0.0\", \"title\": \"W\",\n  \"remotes\": [{\"type\": \"sse\", \"url\": \"https://w.example.com/sse\"}],\n  \"icons\": [{\"src\": \"https://w.example.com/i.png\"}]\n}"
	s, _, err := targets.ParseServerJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	st := newFakeStore()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var dueFor store.Entry
	res, err := Import(ctx, st, s, ImportOptions{Source: "registry", Now: now, Due: func(e store.Entry, at time.Time) []store.Due {
		dueFor = e
		return []store.Due{{Reason: store.ReasonStatus, At: at}}
	}})
	if err != nil || !res.Created {
		t.Fatalf("%+v %v", res, err)
	}
	e := st.byName("com.example/w")
	want, _ := attest.Canonicalize([]byte(doc))
	if string(e.listing.Document) != string(want) || !attest.IsCanonical(e.listing.Document) || !strings.Contains(string(e.listing.Document), "i.png") {
		t.Errorf("document %s", e.listing.Document)
	}
	if e.listing.Title != "W" || e.listing.Version != "1.0.0" || e.entry.Source != "registry" || e.entry.Name != "W" ||
		len(e.due) != 1 || !e.due[0].At.Equal(now) || dueFor.Kind != store.KindRemote || dueFor.Locator != "https://w.example.com/sse" {
		t.Errorf("entry %+v listing %+v due %+v for %+v", e.entry, e.listing, e.due, dueFor)
	}
	// The same again: unchanged.
	if res, err := Import(ctx, st, s, ImportOptions{}); err != nil || res.Created || res.Updated {
		t.Errorf("again: %+v %v", res, err)
	}
	// Deprecated: unlisted, same entry.
	s.Status = store.StatusDeprecated
	if res, err := Import(ctx, st, s, ImportOptions{}); err != nil || !res.Updated || res.Entry.Listed || res.Entry.Slug != e.entry.Slug {
		t.Errorf("deprecated: %+v %v", res, err)
	}
	// Deleted and unknown: not added.
	other := s
	other.ServerName, other.Status = "com.example/other", store.StatusDeleted
	if res, err := Import(ctx, st, other, ImportOptions{}); err != nil || !res.Skipped || st.byName("com.example/other") != nil {
		t.Errorf("deleted unknown: %+v %v", res, err)
	}
	// A document that is not canonical JSON input (a duplicate key) is refused before
	// the store sees it.
	bad, _, err := targets.ParseServerJSON([]byte(`{"name":"com.example/dup","name":"com.example/dup","remotes":[{"url":"https://d.example.com/mcp"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	n := st.upserts
	if _, err := Import(ctx, st, bad, ImportOptions{}); !errors.Is(err, ErrInvalid) || st.upserts != n {
		t.Errorf("duplicate key: %v", err)
	}
}

// TestImportRefusesWhatTheStoreWould: a server the store would refuse for its size is
// refused as invalid before the store sees it, so a sync skips it instead of stopping
// at its page every time.
func TestImportRefusesWhatTheStoreWould(t *testing.T) {
	long := "https://w.example.com/" + strings.Repeat("a", 2000)
	s, _, err := targets.ParseServerJSON([]byte(`{"name":"com.example/w","remotes":[{"url":"` + long + `"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	st := newFakeStore()
	if _, err := Import(context.Background(), st, s, ImportOptions{}); !errors.Is(err, ErrInvalid) || st.upserts != 0 {
		t.Errorf("%v, %d upserts", err, st.upserts)
	}
}
