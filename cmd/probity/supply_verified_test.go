package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/checks/supply"
	"github.com/probity-dev/probity/store"
)

// TestSupplyUnsignedIsNotVerified: "probity supply" applies the one Verified rule
// (store.IsVerified): a newest run whose checks passed but which is not signed is not
// Verified, in the table and in --json, and the table says why.
func TestSupplyUnsignedIsNotVerified(t *testing.T) {
	dataDir := t.TempDir()
	ctx := t.Context()
	st, err := store.Open(ctx, store.Config{SQLitePath: filepath.Join(dataDir, "probity.db")})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	e, _, err := st.AddEntry(ctx, store.NewEntry{SlugBase: "acme", Kind: store.KindNPM, Locator: "pkg:npm/acme", Source: "import"})
	if err != nil {
		t.Fatal(err)
	}
	verdict, err := supply.EncodeVerdict(supply.Verdict{Results: []supply.Result{}, WeightRan: 100, PointsPassed: 90, Score: 90, Verified: true, SuiteVersion: supply.SuiteVersion})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.SaveSupply(ctx, store.SupplyRecord{EntryID: e.ID, RanAt: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC),
		Score: 90, Verified: true, Facts: []byte(`{}`), Verdict: verdict}, nil); err != nil {
		t.Fatal(err)
	}
	st.Close()

	code, out, errOut := probity(t, nil, "supply", "--data-dir", dataDir, e.Slug)
	if code != 0 {
		t.Fatalf("supply: exit %d\n%s%s", code, out, errOut)
	}
	if first := strings.SplitN(out, "\n", 2)[0]; !strings.Contains(first, "not Verified (unsigned: its checks passed, but only a signed run counts)") {
		t.Errorf("supply calls an unsigned run that passed: %q", first)
	}
	code, out, errOut = probity(t, nil, "supply", "--json", "--data-dir", dataDir, e.Slug)
	if code != 0 {
		t.Fatalf("supply --json: exit %d\n%s%s", code, out, errOut)
	}
	var j struct {
		Verified *bool `json:"verified"`
		Signed   *bool `json:"signed"`
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil || j.Verified == nil || j.Signed == nil || *j.Verified || *j.Signed {
		t.Errorf("supply --json = %s (%v): want verified and signed false", out, err)
	}
}
