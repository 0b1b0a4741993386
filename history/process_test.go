package history_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/checks"
	"github.com/probity-dev/probity/checks/fixtures"
	"github.com/probity-dev/probity/checks/probe"
	"github.com/probity-dev/probity/export"
	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/history/stats"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/keys/signing"
	"github.com/probity-dev/probity/rounds"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/verifier"
	"github.com/probity-dev/probity/verifier/cli"
)

// scripted is a Prober that answers with a real observation of a fleet server, its tools
// replaced by the current script, at the fake clock's time.
type scripted struct {
	template *checks.Observation
	now      *time.Time
	tools    []json.RawMessage
	fail     bool
}

func (s *scripted) Probe(ctx context.Context, url string) (*checks.Observation, error) {
	obs := *s.template
	obs.URL, obs.StartedAt = url, *s.now
	obs.Tools.Tools = s.tools
	if s.fail {
		obs.Reach = checks.Reach{Failure: checks.ReachConnect}
		obs.Handshake = checks.Handshake{}
		obs.Tools = checks.ToolsList{}
	}
	return &obs, nil
}

func tool(name, desc string, extra string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"name":%q,"description":%q,"inputSchema":{"type":"object","properties":{"q":{"type":"string"}}%s}}`, name, desc, extra))
}

// testKeys makes a signing key an hour before now in a temporary directory and
// opens it at now.
func testKeys(t *testing.T, now time.Time) (*keys.Document, *signing.Signer) {
	t.Helper()
	keyDir := filepath.Join(t.TempDir(), "keys")
	if _, err := signing.GenerateDir(keyDir, "https://probity.test", now.Add(-time.Hour), nil); err != nil {
		t.Fatal(err)
	}
	doc, signer, err := signing.OpenDir(keyDir, now)
	if err != nil {
		t.Fatal(err)
	}
	return doc, signer
}

// fleetTemplate is a template observation from a real probe of a fleet server; its URL
// is the server's, which lives until the end of the test.
func fleetTemplate(t *testing.T) *checks.Observation {
	t.Helper()
	fleet, err := fixtures.StartFleet(fixtures.FleetConfig{N: 1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fleet.Close() })
	tmpl, err := probe.New(probe.Config{Version: "test", AllowLoopback: true}).Probe(t.Context(), fleet.URL(0))
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

func TestHistoryFromRounds(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, store.Config{SQLitePath: filepath.Join(dir, "probity.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	doc, signer := testKeys(t, now)
	tmpl := fleetTemplate(t)
	p := &scripted{template: tmpl, now: &now}

	proc, err := history.NewProcessor(history.Config{Store: st, Signer: signer, ToolVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := rounds.NewRunner(rounds.Config{Store: st, Prober: p, Signer: signer, ToolVersion: "test", History: proc, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	e, _, err := st.AddEntry(ctx, store.NewEntry{SlugBase: "scripted", Kind: store.KindRemote, Locator: tmpl.URL, Source: "import"})
	if err != nil {
		t.Fatal(err)
	}
	round := func(at time.Duration, tools ...json.RawMessage) {
		t.Helper()
		now = time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC).Add(at)
		p.tools, p.fail = tools, tools == nil
		o, err := r.RunEntry(ctx, e, store.Due{EntryID: e.ID, Reason: store.ReasonCadence, At: now}, "")
		if err != nil {
			t.Fatal(err)
		}
		if !p.fail && o.Outcome != rounds.SignedFull {
			t.Fatalf("round at %v: %s", at, o.Outcome)
		}
	}
	changes := func() []store.ChangeRecord {
		t.Helper()
		cs, err := st.Changes(ctx, store.ChangeFilter{EntryID: e.ID})
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}

	search := tool("search", "Search the catalog. Current date: 2026-12-01.", "")
	searchNextDay := tool("search", "Search the catalog. Current date: 2026-12-02.", "")
	del := tool("delete_item", "Delete an item.", `,"required":["q"]`)
	delAnnotated := json.RawMessage(`{"name":"delete_item","description":"Delete an item.","inputSchema":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]},"annotations":{"destructiveHint":true}}`)

	round(0, search)
	if cs := changes(); len(cs) != 1 || cs[0].Kind != attest.ChangeBaseline || cs[0].Number != 1 || cs[0].Summary != "observation started with 1 tool" {
		t.Fatalf("after the first read: %+v", cs)
	}
	// A failed read is no data; a date-only difference is no difference.
	round(12 * time.Hour)
	round(24*time.Hour, searchNextDay)
	round(24*time.Hour+2*time.Minute, searchNextDay)
	if cs := changes(); len(cs) != 1 {
		t.Fatalf("a failed read and a date-stamped description recorded changes: %+v", cs[0])
	}
	// A new destructive tool: pending after one read, recorded after the second a minute later.
	round(36*time.Hour, searchNextDay, delAnnotated)
	if cs := changes(); len(cs) != 1 {
		t.Fatalf("recorded after one read: %+v", cs[0])
	}
	round(36*time.Hour+30*time.Second, searchNextDay, delAnnotated)
	if cs := changes(); len(cs) != 1 {
		t.Fatalf("recorded after 30 s: %+v", cs[0])
	}
	round(36*time.Hour+time.Minute, searchNextDay, delAnnotated)
	cs := changes()
	if len(cs) != 2 || cs[0].Number != 2 || cs[0].Kind != attest.ChangeTools || cs[0].Summary != "1 tool added" {
		t.Fatalf("after the confirming read: %+v", cs)
	}
	if fmt.Sprint(cs[0].Badges) != "[new_destructive_tool]" {
		t.Errorf("badges %v", cs[0].Badges)
	}
	// The change statement names the two rounds by their payload digests.
	env, _, err := attest.ParseEnvelope(cs[0].Envelope)
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := attest.DecodeBase64(env.Payload)
	ds, err := attest.DecodeStatement(payload)
	if err != nil {
		t.Fatal(err)
	}
	digests := map[string]string{}
	err = st.Envelopes(ctx, store.EnvelopeFilter{}, func(er store.EnvelopeRecord) error {
		e, _, err := attest.ParseEnvelope(er.Envelope)
		if err != nil {
			return err
		}
		p, _ := attest.DecodeBase64(e.Payload)
		sum := sha256.Sum256(p)
		digests[er.RoundID] = "sha256:" + hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	c := ds.Change
	if c.Before == nil || digests[c.Before.RoundID] != c.Before.PayloadDigest || digests[c.After.RoundID] != c.After.PayloadDigest {
		t.Errorf("change names rounds %+v / %+v; stored digests %v", c.Before, c.After, digests)
	}
	// A parameter newly required on a remaining tool is a breaking change with its badge;
	// removing the tool again is a change too.
	round(48*time.Hour, tool("search", "Search the catalog. Current date: 2026-12-03.", `,"required":["q"]`), delAnnotated)
	round(48*time.Hour+time.Minute, tool("search", "Search the catalog. Current date: 2026-12-03.", `,"required":["q"]`), delAnnotated)
	cs = changes()
	if len(cs) != 3 || fmt.Sprint(cs[0].Badges) != "[newly_required_param]" {
		t.Fatalf("newly required parameter: %+v", cs[0])
	}
	_ = del

	// The statistics see two changes (date-only differences are none) and three surfaces…
	if n, surf := statsChanges(t, st, e.ID, now); n != 2 || surf != 3 {
		t.Errorf("statistics: %d changes over %d surfaces, want 2 over 3", n, surf)
	}
	// Hidden changes leave every listing, and every statistic.
	if err := st.HideChange(ctx, e.ID, 2, true, "test: wrong fetch"); err != nil {
		t.Fatal(err)
	}
	if n, surf := statsChanges(t, st, e.ID, now); n != 1 || surf != 2 {
		t.Errorf("statistics after hiding change 2: %d changes over %d surfaces, want 1 over 2", n, surf)
	}
	if cs := changes(); len(cs) != 2 || cs[0].Number != 3 || cs[1].Number != 1 {
		t.Fatalf("after hiding change 2: %+v", cs)
	}

	// An operator edit is recorded with its text, numbered next.
	rec, err := proc.RecordOperatorEdit(ctx, e.ID, "description", "old words", "new words", now)
	if err != nil || rec.Number != 4 || rec.Origin != attest.OriginOperator {
		t.Fatalf("operator edit: %+v, %v", rec, err)
	}

	// Everything exported verifies offline: 9 rounds (8 signed) and 4 changes.
	out := t.TempDir()
	counts, err := export.Write(ctx, st, doc, out, store.EnvelopeFilter{}, nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := cli.VerifyPaths(ctx, []string{out}, cli.StreamConfig{Keys: doc, Policy: verifier.DefaultPolicy()})
	if err != nil || sum.Failed != 0 || sum.Verified != counts.Rounds+counts.Changes || counts.Changes != 4 {
		t.Fatalf("export %+v verified %+v (%v)", counts, sum, err)
	}
}

// statsChanges counts the reads LoadStats classifies as changes for one entry.
func statsChanges(t *testing.T, st history.StatsStore, id int64, now time.Time) (changes, surfaces int) {
	t.Helper()
	ss, err := history.LoadStats(context.Background(), st, stats.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, s := range ss {
		if s.ID != id {
			continue
		}
		for _, r := range s.Reads {
			if r.Change != nil {
				changes++
			}
			seen[r.Surface] = true
		}
	}
	return changes, len(seen)
}

func TestOperatorEditOfSetupNotesRecordsNoText(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	st, _, proc := newHistoryEnv(t, now)
	e, _, err := st.AddEntry(ctx, store.NewEntry{SlugBase: "pkg", Kind: store.KindNPM, Locator: "pkg:npm/%40acme/mcp", Source: "import"})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := proc.RecordOperatorEdit(ctx, e.ID, "setup_notes", "secret-ish old notes", "new notes", now)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Number != 1 || rec.Summary != "setup notes edited by the operator" || string(rec.Details) != `{"field":"setup_notes"}` {
		t.Fatalf("setup notes edit: %+v, details %s", rec, rec.Details)
	}
	if strings.Contains(string(rec.Details), "secret-ish") || strings.Contains(string(rec.Details), "new notes") {
		t.Errorf("setup notes text recorded: %s", rec.Details)
	}
	if _, err := proc.RecordOperatorEdit(ctx, e.ID, "Bad Field", "", "", now); err == nil {
		t.Error("an invalid field name was accepted")
	}
	// The change of a package entry names it by its package reference, and verifies.
	env, _, err := attest.ParseEnvelope(rec.Envelope)
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := attest.DecodeBase64(env.Payload)
	ds, err := attest.DecodeStatement(payload)
	if err != nil || ds.Subject[0].Name != "pkg:npm/%40acme/mcp" {
		t.Fatalf("statement %+v, %v", ds, err)
	}
}

func TestManifestToolsFeedTheHistory(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	st, doc, proc := newHistoryEnv(t, now)
	e, _, err := st.AddEntry(ctx, store.NewEntry{SlugBase: "gh-acme-bundle", Kind: store.KindGitHub, Locator: "https://github.com/acme/bundle", Source: "import"})
	if err != nil {
		t.Fatal(err)
	}
	a := []json.RawMessage{tool("search", "Search.", "")}
	b := []json.RawMessage{tool("search", "Search.", ""), tool("drop_table", "Drop a table.", "")}
	steps := []struct {
		tools []json.RawMessage
		at    time.Duration
		want  int
	}{
		{a, 0, 1},                            // baseline
		{b, 24 * time.Hour, 0},               // first read of a difference
		{b, 24*time.Hour + 2*time.Minute, 1}, // confirmed
		{b, 48 * time.Hour, 0},
	}
	for i, s := range steps {
		n, err := proc.RecordManifest(ctx, e.ID, s.tools, int64(i+1), attest.Digest([]byte(fmt.Sprint(i))), now.Add(s.at))
		if err != nil || n != s.want {
			t.Fatalf("step %d: %d changes, %v; want %d", i, n, err, s.want)
		}
	}
	cs, err := st.Changes(ctx, store.ChangeFilter{EntryID: e.ID})
	if err != nil || len(cs) != 2 || cs[0].Summary != "1 tool added" || cs[0].Kind != attest.ChangeTools {
		t.Fatalf("changes %+v, %v", cs, err)
	}
	out := t.TempDir()
	counts, err := export.Write(ctx, st, doc, out, store.EnvelopeFilter{}, nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := cli.VerifyPaths(ctx, []string{out}, cli.StreamConfig{Keys: doc, Policy: verifier.DefaultPolicy()})
	if err != nil || sum.Failed != 0 || counts.Changes != 2 || sum.Verified != 2 {
		t.Fatalf("export %+v verified %+v (%v)", counts, sum, err)
	}
}

// TestManifestDifferenceSchedulesItsConfirmation: a manifest read that becomes the
// pending candidate schedules the confirming read a minute later (as a remote's round
// does), in the same transaction as the state; a read that keeps the candidate, or
// agrees with the recorded tools, schedules none. ManifestRead says whether a cheap read
// of the manifest is worth a signed one.
func TestManifestDifferenceSchedulesItsConfirmation(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	st, _, proc := newHistoryEnv(t, now)
	e, _, err := st.AddEntry(ctx, store.NewEntry{SlugBase: "gh-acme-bundle", Kind: store.KindGitHub, Locator: "https://github.com/acme/bundle", Source: "import"})
	if err != nil {
		t.Fatal(err)
	}
	confirm := func() (time.Time, bool) {
		t.Helper()
		dues, err := st.DueTimes(ctx, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dues {
			if d.Reason == store.ReasonConfirm {
				return d.At, true
			}
		}
		return time.Time{}, false
	}
	news := func(tools []json.RawMessage, at time.Time) bool {
		t.Helper()
		n, err := proc.ManifestRead(ctx, e.ID, tools, at)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	a := []json.RawMessage{tool("search", "Search.", "")}
	dated := []json.RawMessage{tool("search", "Search. Today is 2026-12-01.", "")}
	datedLater := []json.RawMessage{tool("search", "Search. Today is 2026-12-02.", "")}
	b := []json.RawMessage{tool("search", "Search.", ""), tool("drop_table", "Drop a table.", "")}
	record := func(tools []json.RawMessage, run int64, at time.Time) int {
		t.Helper()
		n, err := proc.RecordManifest(ctx, e.ID, tools, run, attest.Digest([]byte(fmt.Sprint(run))), at)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if !news(a, now) {
		t.Error("no baseline yet, and the manifest is not news")
	}
	if record(dated, 1, now) != 1 {
		t.Fatal("no baseline")
	}
	if _, ok := confirm(); ok {
		t.Error("the baseline scheduled a confirmation")
	}
	readAt := func() time.Time {
		t.Helper()
		raw, _, err := st.HistoryState(ctx, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		s, err := history.DecodeState(raw)
		if err != nil {
			t.Fatal(err)
		}
		return s.ManifestReadAt
	}
	if got := readAt(); !got.Equal(now) {
		t.Errorf("manifest read at %v after the baseline, want %v", got, now)
	}
	if news(dated, now.Add(3*time.Hour)) || news(datedLater, now.Add(27*time.Hour)) {
		t.Error("the same tools (dates masked) are news")
	}
	if got := readAt(); !got.Equal(now.Add(27 * time.Hour)) {
		t.Errorf("manifest read at %v after the cheap reads, want the last one's time %v", got, now.Add(27*time.Hour))
	}
	if !news(b, now.Add(6*time.Hour)) {
		t.Error("a new tool is not news")
	}
	first := now.Add(6 * time.Hour)
	if record(b, 2, first) != 0 {
		t.Fatal("a first read of a difference recorded a change")
	}
	at, ok := confirm()
	if !ok || at.Sub(first) < time.Minute || at.Sub(first) > 2*time.Minute {
		t.Fatalf("confirmation due %v after the first read of the difference (%v), want about a minute", at.Sub(first), ok)
	}
	if !news(b, first.Add(time.Minute)) {
		t.Error("a pending difference is not news: its confirming read would not be made")
	}
	// Too soon: the candidate stays, no new confirmation.
	if err := st.SetDue(ctx, e.ID, store.DueUpdate{Reason: store.ReasonConfirm}); err != nil {
		t.Fatal(err)
	}
	if record(b, 3, first.Add(10*time.Second)) != 0 {
		t.Fatal("confirmed 10 s later")
	}
	if _, ok := confirm(); ok {
		t.Error("a read that kept the candidate scheduled another confirmation")
	}
	if record(b, 4, at) != 1 {
		t.Fatal("the confirming read a minute later recorded nothing")
	}
	if news(b, at.Add(3*time.Hour)) {
		t.Error("the recorded tools are news")
	}
}

// TestPackageVersionBaseline: a package entry's first version is recorded as its
// baseline, "observation started at version X", later ones at once under the version
// rules; the changes are signed and verify offline.
func TestPackageVersionBaseline(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	st, doc, proc := newHistoryEnv(t, now)
	e, _, err := st.AddEntry(ctx, store.NewEntry{SlugBase: "acme", Kind: store.KindNPM, Locator: "pkg:npm/acme", Source: "import"})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range []struct {
		version string
		at      time.Duration
		want    bool
	}{
		{"1.0.0", 0, true},              // the baseline
		{"1.0.0", 3 * time.Hour, false}, // the same
		{"1.1.0", 6 * time.Hour, true},  // at once, no second read
		{"1.2.0", 9 * time.Hour, false}, // one version change per 24 h: waits
		{"1.2.0", 30 * time.Hour, true}, // recorded a day after 1.1.0
		{"1.1.0", 33 * time.Hour, false},
	} {
		got, err := proc.RecordPackageVersion(ctx, e.ID, s.version, now.Add(s.at))
		if err != nil || got != s.want {
			t.Fatalf("read %d (%s): recorded %v, %v; want %v", i, s.version, got, err, s.want)
		}
	}
	cs, err := st.Changes(ctx, store.ChangeFilter{EntryID: e.ID})
	if err != nil || len(cs) != 3 {
		t.Fatalf("changes %+v, %v", cs, err)
	}
	if c := cs[2]; c.Number != 1 || c.Kind != attest.ChangeBaseline || c.Summary != "observation started at version 1.0.0" || !c.RecordedAt.Equal(now) {
		t.Errorf("baseline %+v", c)
	}
	if cs[1].Summary != "version 1.0.0 → 1.1.0" || cs[0].Summary != "version 1.1.0 → 1.2.0" {
		t.Errorf("version changes %q, %q", cs[1].Summary, cs[0].Summary)
	}
	out := t.TempDir()
	counts, err := export.Write(ctx, st, doc, out, store.EnvelopeFilter{}, nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := cli.VerifyPaths(ctx, []string{out}, cli.StreamConfig{Keys: doc, Policy: verifier.DefaultPolicy()})
	if err != nil || sum.Failed != 0 || counts.Changes != 3 || sum.Verified != 3 {
		t.Fatalf("export %+v verified %+v (%v)", counts, sum, err)
	}
}

// newHistoryEnv is a migrated SQLite store, a key valid from an hour before now, and a
// Processor signing with it.
func newHistoryEnv(t *testing.T, now time.Time) (store.Store, *keys.Document, *history.Processor) {
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
	doc, signer := testKeys(t, now)
	proc, err := history.NewProcessor(history.Config{Store: st, Signer: signer, ToolVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return st, doc, proc
}
