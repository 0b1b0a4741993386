package mcpserver

import (
	"testing"
	"time"

	"github.com/probity-dev/probity/store"
)

// TestUnsignedSupplyNotVerified shows that /mcp applies the one Verified rule
// (store.IsVerified): a supply run that passed but is not signed makes no server
// Verified, in search_servers (its verified field and verified_only) and in get_server.
// Before the directory read model, /mcp read the run's own decision alone and said
// "verified".
func TestUnsignedSupplyNotVerified(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	e, _, err := f.st.AddEntry(ctx, store.NewEntry{SlugBase: "unsigned-pkg", Kind: store.KindNPM, Locator: "pkg:npm/unsigned-pkg", Name: "Unsigned Pkg", Source: "import"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.SaveSupply(ctx, store.SupplyRecord{
		EntryID: e.ID, RanAt: t0.Add(2 * time.Hour), Score: 100, Verified: true,
		Facts: []byte(`{}`), Verdict: []byte(`{}`), // no envelope: signing was off or failed
	}, nil); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, newHandler(t, Config{Store: f.st, BaseURL: baseURL, Burst: 1000}))

	var found SearchOutput
	call(t, cs, "search_servers", map[string]any{"query": "unsigned"}, &found)
	if len(found.Servers) != 1 || found.Servers[0].Slug != "unsigned-pkg" || found.Servers[0].Verified {
		t.Errorf("search unsigned = %+v, want unsigned-pkg not verified", found.Servers)
	}
	var only SearchOutput
	call(t, cs, "search_servers", map[string]any{"query": "", "verified_only": true}, &only)
	if len(only.Servers) != 1 || only.Servers[0].Slug != "acme-search" || !only.Servers[0].Verified {
		t.Errorf("verified_only = %+v, want only acme-search (its run is signed)", only.Servers)
	}
	var server ServerOutput
	call(t, cs, "get_server", map[string]any{"slug": "unsigned-pkg"}, &server)
	if s := server.Supply; s == nil || s.Score != 100 || s.Verified {
		t.Errorf("get_server supply = %+v, want score 100, not verified", s)
	}
}
