package history_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/checks"
	"github.com/probity-dev/probity/checks/supply"
	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/rounds"
	"github.com/probity-dev/probity/store"
)

// packageFacts is a Collector of prepared facts of a well-kept npm package at version,
// remembering each set it returned.
type packageFacts struct {
	mu      sync.Mutex
	version string
	now     func() time.Time
	given   []*supply.Facts
}

func (c *packageFacts) Collect(ctx context.Context, tg supply.Target, tools []json.RawMessage, ep *supply.EndpointFacts) *supply.Facts {
	kind, locator := tg.Kind, tg.Locator
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	ok := supply.Source{Outcome: supply.SourceOK, FetchedAt: now, URL: "https://registry.npmjs.org/acme-weather-mcp"}
	repo := "https://github.com/acme/weather-mcp"
	f := &supply.Facts{
		Kind: kind, Locator: locator,
		Package: &supply.PackageFacts{Source: ok, Ecosystem: "npm", Name: "acme-weather-mcp", Latest: c.version,
			PublishedAt: now.Add(-24 * time.Hour), RepositoryURL: repo, License: "MIT", README: "Weather tools."},
		Repo: &supply.RepoFacts{Source: supply.Source{Outcome: supply.SourceOK, FetchedAt: now, URL: repo}, URL: repo, Owner: "acme",
			Name: "weather-mcp", Exists: true, LicenseSPDX: "MIT", LastPush: now.Add(-48 * time.Hour), LastCommit: now.Add(-48 * time.Hour),
			HeadCommit: "0123456789abcdef0123456789abcdef01234567"},
		Advisories: &supply.AdvisoryFacts{Source: supply.Source{Outcome: supply.SourceOK, FetchedAt: now}, Version: c.version, Dependencies: 12},
	}
	c.given = append(c.given, f)
	return f
}

// TestStoredDocumentsRoundTrip stores every kind of JSON document the way the service
// writes it (rounds, the history processor, operator edits, supply runs with their
// package versions), on each backend, and reads each back with its owner's Decode: the
// decoded value is what was written (re-encoding it gives the stored bytes), and each
// carries what its kind must (evidence, a diff, versions, an edit's text or none).
func TestStoredDocumentsRoundTrip(t *testing.T) {
	statsBackends(t, testStoredDocumentsRoundTrip)
}

func testStoredDocumentsRoundTrip(t *testing.T, st store.Store) {
	ctx := t.Context()
	start := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	now := start
	_, signer := testKeys(t, now)
	tmpl := fleetTemplate(t)
	p := &scripted{template: tmpl, now: &now}
	proc, err := history.NewProcessor(history.Config{Store: st, Signer: signer, ToolVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	col := &packageFacts{version: "1.0.0", now: func() time.Time { return now }}
	r, err := rounds.NewRunner(rounds.Config{Store: st, Prober: p, Signer: signer, ToolVersion: "test", History: proc,
		Collector: col, SupplyHistory: proc, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}

	// A remote entry: a baseline, then a confirmed tools change, every round with
	// evidence (an invisible character in a description).
	remote, _, err := st.AddEntry(ctx, store.NewEntry{SlugBase: "documents", Kind: store.KindRemote, Locator: tmpl.URL, Source: "import"})
	if err != nil {
		t.Fatal(err)
	}
	search := tool("search", "Search the catalog.\u200b", "")
	del := json.RawMessage(`{"name":"delete_item","description":"Delete an item.","inputSchema":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]},"annotations":{"destructiveHint":true}}`)
	var wantResults [][]byte
	for i, tools := range [][]json.RawMessage{{search}, {search, del}, {search, del}} {
		now = start.Add(time.Duration(i) * time.Hour)
		p.tools = tools
		obs, err := p.Probe(ctx, remote.Locator)
		if err != nil {
			t.Fatal(err)
		}
		results, _, _ := checks.Evaluate(obs)
		want, err := checks.EncodeResults(results)
		if err != nil {
			t.Fatal(err)
		}
		wantResults = append(wantResults, want)
		if o, err := r.RunEntry(ctx, remote, store.Due{EntryID: remote.ID, Reason: store.ReasonCadence, At: now}, ""); err != nil || o.Outcome != rounds.SignedFull {
			t.Fatalf("round %d: %+v, %v", i, o, err)
		}
	}
	rs, err := st.Rounds(ctx, remote.ID, 10)
	if err != nil || len(rs) != 3 {
		t.Fatalf("rounds: %d, %v", len(rs), err)
	}
	slices.Reverse(rs) // oldest first
	for i, round := range rs {
		raw, err := st.RoundResults(ctx, round.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(raw, wantResults[i]) {
			t.Errorf("round %d: stored results\n%s\nwant\n%s", i, raw, wantResults[i])
		}
		got, err := checks.DecodeResults(raw)
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		again, err := checks.EncodeResults(got)
		if err != nil || !bytes.Equal(again, raw) {
			t.Errorf("round %d: results do not survive decoding: %s (%v)", i, again, err)
		}
		if len(got) != len(checks.CheckIDs()) || !slices.ContainsFunc(got, func(r checks.Result) bool {
			return r.Reason != nil && len(r.Evidence) > 0 && r.Evidence[0].Tool == "search" && r.Evidence[0].Sample != ""
		}) {
			t.Errorf("round %d: decoded results lack the evidence of the invisible character: %+v", i, got)
		}
	}

	// Operator edits: one with its text (hostile characters kept as they were), one of
	// the setup notes without.
	before, after := "Old <b>text</b>\u202e.", "New text,\r\non two lines \"quoted\"."
	if _, err := proc.RecordOperatorEdit(ctx, remote.ID, "description", before, after, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := proc.RecordOperatorEdit(ctx, remote.ID, "setup_notes", "secret 1", "secret 2", now.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}

	// A package entry: two supply runs, two versions.
	pkg, _, err := st.AddEntry(ctx, store.NewEntry{SlugBase: "acme-weather-mcp", Kind: store.KindNPM, Locator: "pkg:npm/acme-weather-mcp", Source: "import"})
	if err != nil {
		t.Fatal(err)
	}
	var wantVerdicts [][]byte
	for i, v := range []string{"1.0.0", "1.1.0"} {
		now = start.Add(time.Duration(10+i) * time.Hour)
		col.version = v
		if out, err := r.RunSupply(ctx, pkg, false); err != nil || !out.Ran {
			t.Fatalf("supply run %s: %+v, %v", v, out, err)
		}
		want, err := supply.EncodeVerdict(supply.Evaluate(col.given[i], supply.Options{Now: now.UTC().Truncate(time.Millisecond)}))
		if err != nil {
			t.Fatal(err)
		}
		wantVerdicts = append(wantVerdicts, want)
	}
	runs, err := st.SupplyRuns(ctx, pkg.ID, 10)
	if err != nil || len(runs) != 2 {
		t.Fatalf("supply runs: %d, %v", len(runs), err)
	}
	slices.Reverse(runs)
	for i, run := range runs {
		if !bytes.Equal(run.Verdict, wantVerdicts[i]) {
			t.Errorf("supply run %d: stored verdict\n%s\nwant\n%s", i, run.Verdict, wantVerdicts[i])
		}
		v, err := supply.DecodeVerdict(run.Verdict)
		if err != nil {
			t.Fatalf("supply run %d: %v", i, err)
		}
		again, err := supply.EncodeVerdict(v)
		if err != nil || !bytes.Equal(again, run.Verdict) {
			t.Errorf("supply run %d: verdict does not survive decoding: %s (%v)", i, again, err)
		}
		if len(v.Results) != len(supply.Catalog()) || v.Score != run.Score || v.Verified != run.Verified || v.SuiteVersion == "" {
			t.Errorf("supply run %d: decoded verdict %+v does not match the run %+v", i, v, run)
		}
	}

	// Every change's details, by kind.
	kinds := map[string]int{}
	for _, e := range []store.Entry{remote, pkg} {
		cs, err := st.Changes(ctx, store.ChangeFilter{EntryID: e.ID, IncludeHidden: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			d, err := history.DecodeChangeDetails(c.Details)
			if err != nil {
				t.Fatalf("%s change %d: %v", e.Slug, c.Number, err)
			}
			again, err := history.EncodeChangeDetails(d)
			if err != nil || !bytes.Equal(again, c.Details) {
				t.Errorf("%s change %d: details do not survive decoding: %s, stored %s (%v)", e.Slug, c.Number, again, c.Details, err)
			}
			kinds[c.Kind]++
			switch c.Kind {
			case attest.ChangeBaseline:
				switch {
				case e.ID == pkg.ID:
					// The package's first version: its baseline, with no before.
					if d.VersionBefore != "" || d.VersionAfter != "1.0.0" || c.Summary != "observation started at version 1.0.0" || d.ToolCount != nil {
						t.Errorf("version baseline details: %s, summary %q", c.Details, c.Summary)
					}
					kinds["version baseline"]++
					kinds[c.Kind]--
				case d.ToolCount == nil || *d.ToolCount != 1 || d.Diff != nil:
					t.Errorf("baseline details: %s", c.Details)
				}
			case attest.ChangeTools:
				if d.Diff == nil || len(d.Diff.Added) != 1 || d.Diff.Added[0].Name != "delete_item" || len(d.Diff.Badges) == 0 {
					t.Errorf("tools change details: %s", c.Details)
				}
			case attest.ChangeVersion:
				switch {
				case d.VersionBefore != "1.0.0" || d.VersionAfter != "1.1.0":
					t.Errorf("version change details: %s", c.Details)
				}
			case attest.ChangeOperatorEdit:
				switch d.Field {
				case "description":
					if d.Before == nil || *d.Before != before || d.After == nil || *d.After != after {
						t.Errorf("edit details: %s", c.Details)
					}
				case "setup_notes":
					if d.Before != nil || d.After != nil || history.RecordsEditText(d.Field) {
						t.Errorf("setup notes edit recorded its text: %s", c.Details)
					}
				default:
					t.Errorf("edit of %q", d.Field)
				}
			default:
				t.Errorf("change of kind %q", c.Kind)
			}
		}
		// The history state: decodes strictly, loses nothing, and numbers on.
		raw, _, err := st.HistoryState(ctx, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		s, err := history.DecodeState(raw)
		if err != nil {
			t.Fatalf("%s: %v", e.Slug, err)
		}
		again, err := history.EncodeState(s)
		if err != nil || !bytes.Equal(again, raw) {
			t.Errorf("%s: state does not survive decoding: %s, stored %s (%v)", e.Slug, again, raw, err)
		}
		if s.NextNumber != int64(len(cs))+1 {
			t.Errorf("%s: state numbers change %d next, after %d changes", e.Slug, s.NextNumber, len(cs))
		}
		if e.ID == remote.ID && (s.Recorded == nil || s.Recorded.Surface == "" || s.Recorded.ToolCount != 2) {
			t.Errorf("%s: state records %+v", e.Slug, s.Recorded)
		}
		if e.ID == pkg.ID && s.Version != "1.1.0" {
			t.Errorf("%s: state version %q", e.Slug, s.Version)
		}
	}
	if kinds[attest.ChangeBaseline] != 1 || kinds["version baseline"] != 1 || kinds[attest.ChangeTools] != 1 || kinds[attest.ChangeVersion] != 1 || kinds[attest.ChangeOperatorEdit] != 2 {
		t.Errorf("changes by kind: %v", kinds)
	}
}
