package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/migrations"
)

// The contract test suite: every test here runs against every backend registered in
// testBackends (sqlite_test.go registers SQLite, pg_test.go PostgreSQL), through the
// Store interface only, except where a test needs the testExecer backdoor to show what
// the schema itself refuses.

// testBackend opens fresh stores of one backend and closes them when the test ends.
type testBackend struct {
	name string
	open func(t testing.TB) Store // a migrated store
	// openEmpty opens a store on an empty database, not migrated; the store implements
	// testMigrator.
	openEmpty func(t testing.TB) Store
}

// testBackends are the backends the contract tests run against; each backend's test
// file appends itself in an init function.
var testBackends []testBackend

// testExecer is implemented, in test files only, by every backend: execForTest runs one
// statement on the backend's database outside the Store interface, so a test can show
// that the schema refuses what no method would do.
type testExecer interface {
	execForTest(ctx context.Context, query string) error
}

// testMigrator is implemented, in test files only, by every backend: migrateForTest
// applies the backend's migrations up to version through (not River's), as a binary of
// that version would have, so a test can show what a later migration does to the rows
// of an earlier schema.
type testMigrator interface {
	migrateForTest(ctx context.Context, through int) error
}

// migrationsThrough returns the migrations of ms up to version through.
func migrationsThrough(ms []migrations.Migration, through int) []migrations.Migration {
	var out []migrations.Migration
	for _, m := range ms {
		if m.Version <= through {
			out = append(out, m)
		}
	}
	return out
}

// forEachBackend runs fn as a subtest for each backend, on a fresh store.
func forEachBackend(t *testing.T, fn func(t *testing.T, s Store)) {
	t.Helper()
	if len(testBackends) == 0 {
		t.Fatal("no store backends registered")
	}
	for _, b := range testBackends {
		t.Run(b.name, func(t *testing.T) {
			fn(t, b.open(t))
		})
	}
}

// t0 is a time with sub-millisecond digits, in UTC.
var t0 = time.Date(2026, 11, 30, 12, 0, 0, 123_456_789, time.UTC)

// ms truncates t to what a store keeps: UTC milliseconds.
func ms(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

func newTestEntry(slug string) NewEntry {
	return NewEntry{
		SlugBase: slug,
		Kind:     KindRemote,
		Locator:  "https://" + slug + ".example.com/mcp",
		Name:     "Server " + slug,
		Source:   "import",
	}
}

func mustAddEntry(t *testing.T, s Store, slug string) Entry {
	t.Helper()
	e, created, err := s.AddEntry(t.Context(), newTestEntry(slug))
	if err != nil || !created {
		t.Fatalf("AddEntry(%q) = created %v, %v", slug, created, err)
	}
	return e
}

// testSurface is a surface document and fingerprints whose surface member is its digest.
func testSurface(name string) ([]byte, *attest.Fingerprints) {
	doc := []byte(`[{"name":"` + name + `"}]`)
	return doc, &attest.Fingerprints{
		Surface:      attest.Digest(doc),
		Toolset:      attest.Digest([]byte(`["` + name + `"]`)),
		Schema:       attest.Digest([]byte(`[{"name":"` + name + `"}]x`)),
		Instructions: attest.Digest([]byte(`""`)),
	}
}

func hexDigest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// fullRound is a signed full-coverage round of entryID due at due, started at started,
// with the surface of tool name.
func fullRound(entryID int64, due, started time.Time, tool string) *Round {
	doc, fp := testSurface(tool)
	roundID := fmt.Sprintf("r-%d-%d", entryID, due.UnixMilli())
	return &Round{
		EntryID:         entryID,
		DueAt:           due,
		Reason:          ReasonCadence,
		RoundID:         roundID,
		StartedAt:       started,
		FinishedAt:      started.Add(260 * time.Millisecond),
		Coverage:        "full",
		HTTPStatus:      200,
		Uptime:          UptimeAnswered,
		ProtocolVersion: "2025-11-25",
		HandshakeMethod: "initialize",
		ProposedVersion: "2025-11-25",
		ServerName:      "example",
		ServerVersion:   "1.0.0",
		ToolCount:       1,
		Pages:           1,
		Fingerprints:    fp,
		Surface:         doc,
		Results:         []byte(`[{"id":"reachability","status":"VERIFIED"}]`),
		Timings:         []byte(`{"totalMs":260}`),
		Envelope:        []byte(`{"payloadType":"application/vnd.in-toto+json","round":"` + roundID + `"}`),
		KeyID:           "a050837d85070582",
		PayloadDigest:   hexDigest(roundID),
	}
}

// authRound is a signed auth_required round.
func authRound(entryID int64, due, started time.Time) *Round {
	r := fullRound(entryID, due, started, "")
	r.Coverage = "auth_required"
	r.HTTPStatus = 401
	r.Stop = "auth_required"
	r.Login = Login{Unauthorized: LoginAtToolsList, Challenge: ChallengeWithMetadata, Metadata: "metadata_consistent"}
	r.ToolCount, r.Pages = 0, 0
	r.Fingerprints, r.Surface = nil, nil
	return r
}

// unsignedRound is a round that found no answer.
func unsignedRound(entryID int64, due, started time.Time) *Round {
	return &Round{
		EntryID:        entryID,
		DueAt:          due,
		Reason:         ReasonCadence,
		RoundID:        fmt.Sprintf("u-%d-%d", entryID, due.UnixMilli()),
		StartedAt:      started,
		FinishedAt:     started.Add(10 * time.Second),
		UnsignedReason: "no_handshake",
		Reach:          "timeout",
		Uptime:         UptimeNoAnswer,
		RetryAfter:     90 * time.Second,
		Results:        []byte(`[]`),
	}
}

func mustSave(t *testing.T, s Store, r *Round) int64 {
	t.Helper()
	id, err := s.SaveRound(t.Context(), r)
	if err != nil {
		t.Fatalf("SaveRound(%s): %v", r.RoundID, err)
	}
	return id
}

// snapshot is everything the store holds that a test can see, but the file size.
type snapshot struct {
	Stats   Stats
	Entries []Entry
	Due     map[int64][]Due
	Rounds  map[int64][]RoundSummary
	Uptime  map[int64][]UptimeDay
	Envs    []EnvelopeRecord
	// Supply holds the supply runs of the entries that have some.
	Supply map[int64][]SupplyRecord
}

func takeSnapshot(t *testing.T, s Store) snapshot {
	t.Helper()
	ctx := t.Context()
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st.Bytes = 0
	es, err := s.Entries(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	snap := snapshot{Stats: st, Entries: es, Due: map[int64][]Due{}, Rounds: map[int64][]RoundSummary{},
		Uptime: map[int64][]UptimeDay{}, Supply: map[int64][]SupplyRecord{}}
	for _, e := range es {
		var runs []SupplyRecord
		if runs, err = s.SupplyRuns(ctx, e.ID, 0); err != nil {
			t.Fatal(err)
		}
		if len(runs) > 0 {
			snap.Supply[e.ID] = runs
		}
		if snap.Due[e.ID], err = s.DueTimes(ctx, e.ID); err != nil {
			t.Fatal(err)
		}
		if snap.Rounds[e.ID], err = s.Rounds(ctx, e.ID, 0); err != nil {
			t.Fatal(err)
		}
		if snap.Uptime[e.ID], err = s.UptimeDays(ctx, e.ID, "2000-01-01", "2999-12-31"); err != nil {
			t.Fatal(err)
		}
	}
	err = s.Envelopes(ctx, EnvelopeFilter{}, func(r EnvelopeRecord) error {
		snap.Envs = append(snap.Envs, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func checkUnchanged(t *testing.T, s Store, before snapshot, what string) {
	t.Helper()
	if after := takeSnapshot(t, s); !reflect.DeepEqual(before, after) {
		t.Errorf("%s changed the store:\nbefore %+v\nafter  %+v", what, before, after)
	}
}

// checkSignedInvariant re-checks from the outside that a round is marked signed
// exactly when its envelope is stored.
func checkSignedInvariant(t *testing.T, s Store) {
	t.Helper()
	ctx := t.Context()
	es, err := s.Entries(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	signed := map[int64]bool{}
	for _, e := range es {
		rs, err := s.Rounds(ctx, e.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if r.Signed != (r.KeyID != "" && r.PayloadDigest != "") {
				t.Errorf("round %d: signed %v, key id %q, payload digest %q", r.ID, r.Signed, r.KeyID, r.PayloadDigest)
			}
			if r.Signed {
				signed[r.ID] = true
			}
		}
	}
	seen := map[int64]bool{}
	err = s.Envelopes(ctx, EnvelopeFilter{}, func(r EnvelopeRecord) error {
		if !signed[r.Round] || seen[r.Round] {
			t.Errorf("envelope of round %d: signed %v, seen before %v", r.Round, signed[r.Round], seen[r.Round])
		}
		seen[r.Round] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if int(st.Signed) != len(signed) || int(st.Envelopes) != len(seen) || len(seen) != len(signed) {
		t.Errorf("stats: %d signed, %d envelopes; walk: %d signed, %d envelopes", st.Signed, st.Envelopes, len(signed), len(seen))
	}
}

func TestMigrateIdempotent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		e := mustAddEntry(t, s, "kept")
		mustSave(t, s, fullRound(e.ID, t0, t0, "echo"))
		before := takeSnapshot(t, s)
		for range 2 {
			if err := s.Migrate(t.Context()); err != nil {
				t.Fatalf("Migrate again: %v", err)
			}
		}
		checkUnchanged(t, s, before, "Migrate")
		if b := s.Backend(); b != "sqlite" && b != "postgres" {
			t.Errorf("Backend() = %q", b)
		}
	})
}

func TestAddEntry(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		due := []Due{{Reason: ReasonCadence, At: t0}, {Reason: ReasonStatus, At: t0.Add(time.Hour)}}
		ne := NewEntry{
			SlugBase: "acme", Kind: KindRemote, Locator: "https://acme.example.com/mcp",
			Name: "Acme", Source: "registry", Cadence: 90 * time.Minute, Due: due,
		}
		before := time.Now().Add(-time.Second)
		e, created, err := s.AddEntry(ctx, ne)
		if err != nil || !created {
			t.Fatalf("AddEntry = created %v, %v", created, err)
		}
		want := Entry{
			ID: e.ID, Slug: "acme", Kind: KindRemote, Locator: ne.Locator, Name: "Acme",
			Source: "registry", Listed: true, Cadence: 90 * time.Minute, CreatedAt: e.CreatedAt, // never claimed: only a claim claims

		}
		if e != want {
			t.Errorf("AddEntry = %+v, want %+v", e, want)
		}
		if e.CreatedAt.Location() != time.UTC || e.CreatedAt.Before(before) || e.CreatedAt.After(time.Now()) {
			t.Errorf("CreatedAt = %v", e.CreatedAt)
		}
		for _, got := range []func() (Entry, error){
			func() (Entry, error) { return s.Entry(ctx, "acme") },
			func() (Entry, error) { return s.EntryByID(ctx, e.ID) },
		} {
			if g, err := got(); err != nil || g != e {
				t.Errorf("read back %+v, %v; want %+v", g, err, e)
			}
		}
		ds, err := s.DueTimes(ctx, e.ID)
		if err != nil || len(ds) != 2 || ds[0] != (Due{e.ID, ReasonCadence, ms(t0)}) || ds[1] != (Due{e.ID, ReasonStatus, ms(t0.Add(time.Hour))}) {
			t.Errorf("DueTimes = %+v, %v", ds, err)
		}

		// The same kind and locator: the existing entry, unchanged, and no new due times.
		again := ne
		again.SlugBase, again.Name = "other", "Renamed"
		again.Due = []Due{{Reason: ReasonManual, At: t0}}
		got, created, err := s.AddEntry(ctx, again)
		if err != nil || created || got != e {
			t.Errorf("AddEntry(same locator) = %+v, created %v, %v; want %+v", got, created, err, e)
		}
		if ds2, _ := s.DueTimes(ctx, e.ID); !reflect.DeepEqual(ds2, ds) {
			t.Errorf("due times changed: %+v", ds2)
		}

		// The same locator in another kind is another entry; slugs get suffixes.
		slugOf := func(kind, locator, base string) string {
			t.Helper()
			e, created, err := s.AddEntry(ctx, NewEntry{SlugBase: base, Kind: kind, Locator: locator})
			if err != nil || !created {
				t.Fatalf("AddEntry(%s, %s) = created %v, %v", kind, locator, created, err)
			}
			return e.Slug
		}
		if got := slugOf(KindGitHub, ne.Locator, "acme"); got != "acme-2" {
			t.Errorf("second acme = %q, want acme-2", got)
		}
		if got := slugOf(KindRemote, "https://acme-3.example.com/mcp", "acme-3"); got != "acme-3" {
			t.Errorf("acme-3 = %q", got)
		}
		if got := slugOf(KindRemote, "https://acme-x.example.com/mcp", "acme-x"); got != "acme-x" {
			t.Errorf("acme-x = %q", got)
		}
		if got := slugOf(KindNPM, "pkg:npm/acme", "acme"); got != "acme-4" {
			t.Errorf("third acme = %q, want acme-4 (acme-3 is taken)", got)
		}
		if got := slugOf(KindPyPI, "pkg:pypi/acme-3", "acme-3"); got != "acme-3-2" {
			t.Errorf("second acme-3 = %q, want acme-3-2", got)
		}
		if err := s.DeleteEntry(ctx, "acme-2", "removed by its operator"); err != nil {
			t.Fatal(err)
		}
		if got := slugOf(KindPyPI, "pkg:pypi/acme", "acme"); got != "acme-2" {
			t.Errorf("acme after deleting acme-2 = %q, want acme-2", got)
		}

		if _, err := s.Entry(ctx, "nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Entry(nope) = %v, want ErrNotFound", err)
		}
		if _, err := s.EntryByID(ctx, 1<<40); !errors.Is(err, ErrNotFound) {
			t.Errorf("EntryByID(unknown) = %v, want ErrNotFound", err)
		}
	})
}

func TestAddEntryRefusesBadInput(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		mustAddEntry(t, s, "existing")
		before := takeSnapshot(t, s)
		for name, mutate := range map[string]func(*NewEntry){
			"kind":            func(e *NewEntry) { e.Kind = "docker" },
			"no kind":         func(e *NewEntry) { e.Kind = "" },
			"no locator":      func(e *NewEntry) { e.Locator = "" },
			"no slug":         func(e *NewEntry) { e.SlugBase = "" },
			"slug uppercase":  func(e *NewEntry) { e.SlugBase = "Acme" },
			"slug underscore": func(e *NewEntry) { e.SlugBase = "acme_1" },
			"slug hyphen":     func(e *NewEntry) { e.SlugBase = "-acme" },
			"slug dot":        func(e *NewEntry) { e.SlugBase = "acme.io" },
			"slug newline":    func(e *NewEntry) { e.SlugBase = "acme\n" },
			"slug long":       func(e *NewEntry) { e.SlugBase = strings.Repeat("a", 81) },
			"cadence":         func(e *NewEntry) { e.Cadence = -time.Second },
			"due reason":      func(e *NewEntry) { e.Due = []Due{{Reason: "weekly", At: t0}} },
			"due zero":        func(e *NewEntry) { e.Due = []Due{{Reason: ReasonCadence}} },
		} {
			ne := newTestEntry("fresh")
			mutate(&ne)
			if e, _, err := s.AddEntry(t.Context(), ne); err == nil {
				t.Errorf("%s: AddEntry accepted %+v", name, e)
			}
		}
		checkUnchanged(t, s, before, "refused AddEntry")
		ne := newTestEntry("a")
		ne.SlugBase = strings.Repeat("a", 80)
		if _, _, err := s.AddEntry(t.Context(), ne); err != nil {
			t.Errorf("80-character slug: %v", err)
		}
	})
}

func TestEntriesPaging(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		if es, err := s.Entries(ctx, 0, 0); err != nil || len(es) != 0 {
			t.Fatalf("Entries of an empty store = %v, %v", es, err)
		}
		var ids []int64
		for i := range 5 {
			ids = append(ids, mustAddEntry(t, s, fmt.Sprintf("e%d", i)).ID)
		}
		all, err := s.Entries(ctx, 0, 0)
		if err != nil || len(all) != 5 {
			t.Fatalf("Entries(0, 0) = %d entries, %v", len(all), err)
		}
		var paged []int64
		for after := int64(0); ; {
			page, err := s.Entries(ctx, after, 2)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) > 2 {
				t.Fatalf("page of %d entries, limit 2", len(page))
			}
			if len(page) == 0 {
				break
			}
			for _, e := range page {
				paged = append(paged, e.ID)
			}
			after = page[len(page)-1].ID
		}
		if !reflect.DeepEqual(paged, ids) {
			t.Errorf("paged ids %v, want %v", paged, ids)
		}
		if es, _ := s.Entries(ctx, ids[1], -1); len(es) != 3 || es[0].ID != ids[2] {
			t.Errorf("Entries(after 2nd, -1) = %+v", es)
		}
	})
}

func TestSaveRound(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		e := mustAddEntry(t, s, "acme")
		full := fullRound(e.ID, t0, t0.Add(time.Second), "echo")
		full.Due = []DueUpdate{{Reason: ReasonCadence, At: t0.Add(time.Hour)}, {Reason: ReasonConfirm, At: t0.Add(2 * time.Minute)}}
		auth := authRound(e.ID, t0.Add(time.Hour), t0.Add(time.Hour+time.Second))
		auth.Reason = ReasonStatus
		auth.Due = []DueUpdate{{Reason: ReasonConfirm}}
		unsigned := unsignedRound(e.ID, t0.Add(2*time.Hour), t0.Add(2*time.Hour+time.Second))
		unsigned.HTTPStatus = 503
		unsigned.Stop = "server_error"
		unsigned.Due = []DueUpdate{{Reason: ReasonCadence, At: t0.Add(3 * time.Hour)}}

		ids := map[*Round]int64{}
		for _, r := range []*Round{full, auth, unsigned} {
			ids[r] = mustSave(t, s, r)
		}

		rs, err := s.Rounds(ctx, e.ID, 10)
		if err != nil || len(rs) != 3 {
			t.Fatalf("Rounds = %d rounds, %v", len(rs), err)
		}
		for i, r := range []*Round{unsigned, auth, full} { // newest first
			want := RoundSummary{
				ID: ids[r], EntryID: e.ID, DueAt: ms(r.DueAt), Reason: r.Reason, RoundID: r.RoundID,
				StartedAt: ms(r.StartedAt), FinishedAt: ms(r.FinishedAt), Coverage: r.Coverage, Signed: r.Signed(),
				UnsignedReason: r.UnsignedReason, Reach: r.Reach, HTTPStatus: r.HTTPStatus, Uptime: r.Uptime,
				ProtocolVersion: r.ProtocolVersion, ServerName: r.ServerName, ServerVersion: r.ServerVersion,
				ToolCount: r.ToolCount, Pages: r.Pages, Fingerprints: r.Fingerprints, KeyID: r.KeyID,
				PayloadDigest: r.PayloadDigest, HandshakeMethod: r.HandshakeMethod, ProposedVersion: r.ProposedVersion,
				Login: &Login{Unauthorized: r.Login.Unauthorized, Challenge: r.Login.Challenge, Metadata: r.Login.Metadata},
			}
			if !reflect.DeepEqual(rs[i], want) {
				t.Errorf("round %d:\n got %+v\nwant %+v", i, rs[i], want)
			}
			res, err := s.RoundResults(ctx, ids[r])
			if err != nil || string(res) != string(r.Results) {
				t.Errorf("RoundResults(%d) = %s, %v", ids[r], res, err)
			}
		}
		if rs, _ := s.Rounds(ctx, e.ID, 1); len(rs) != 1 || rs[0].ID != ids[unsigned] {
			t.Errorf("Rounds(limit 1) = %+v", rs)
		}
		if _, err := s.RoundResults(ctx, 1<<40); !errors.Is(err, ErrNotFound) {
			t.Errorf("RoundResults(unknown) = %v, want ErrNotFound", err)
		}
		doc, err := s.Surface(ctx, full.Fingerprints.Surface)
		if err != nil || string(doc) != string(full.Surface) {
			t.Errorf("Surface = %s, %v", doc, err)
		}

		got, err := s.EntryByID(ctx, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !got.LastRoundAt.Equal(ms(unsigned.StartedAt)) || got.LastSurface != full.Fingerprints.Surface {
			t.Errorf("entry after rounds: last round %v, last surface %q", got.LastRoundAt, got.LastSurface)
		}
		ds, err := s.DueTimes(ctx, e.ID)
		if err != nil || len(ds) != 1 || ds[0] != (Due{e.ID, ReasonCadence, ms(t0.Add(3 * time.Hour))}) {
			t.Errorf("due times after rounds = %+v, %v", ds, err)
		}

		var envs []EnvelopeRecord
		err = s.Envelopes(ctx, EnvelopeFilter{}, func(r EnvelopeRecord) error { envs = append(envs, r); return nil })
		if err != nil || len(envs) != 2 {
			t.Fatalf("Envelopes = %d, %v", len(envs), err)
		}
		for i, r := range []*Round{full, auth} {
			want := EnvelopeRecord{Seq: int64(i + 1), Round: ids[r], EntrySlug: "acme", RoundID: r.RoundID,
				StartedAt: ms(r.StartedAt), KeyID: r.KeyID, Envelope: r.Envelope}
			if !reflect.DeepEqual(envs[i], want) {
				t.Errorf("envelope %d = %+v, want %+v", i, envs[i], want)
			}
		}
		st, err := s.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Entries != 1 || st.Rounds != 3 || st.Signed != 2 || st.Envelopes != 2 || st.Surfaces != 1 || st.Bytes <= 0 {
			t.Errorf("Stats = %+v", st)
		}
		checkSignedInvariant(t, s)
	})
}

func TestSaveRoundTwice(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		e := mustAddEntry(t, s, "acme")
		r := fullRound(e.ID, t0, t0, "echo")
		r.Due = []DueUpdate{{Reason: ReasonCadence, At: t0.Add(time.Hour)}}
		mustSave(t, s, r)
		before := takeSnapshot(t, s)

		for name, again := range map[string]*Round{
			"same":     r,
			"unsigned": unsignedRound(e.ID, t0, t0.Add(time.Hour)),
			"other surface and due": func() *Round {
				r := fullRound(e.ID, t0, t0.Add(2*time.Hour), "other")
				r.Due = []DueUpdate{{Reason: ReasonCadence}, {Reason: ReasonManual, At: t0}}
				return r
			}(),
		} {
			if _, err := s.SaveRound(ctx, again); !errors.Is(err, ErrRoundDone) {
				t.Errorf("%s: second SaveRound = %v, want ErrRoundDone", name, err)
			}
		}
		// Due times are compared at millisecond precision (t0 is at .123456789).
		sub := fullRound(e.ID, t0.Add(500*time.Microsecond), t0, "echo")
		if _, err := s.SaveRound(ctx, sub); !errors.Is(err, ErrRoundDone) {
			t.Errorf("due time within the same millisecond: %v, want ErrRoundDone", err)
		}
		checkUnchanged(t, s, before, "a second SaveRound")
		if _, err := s.StartAttempt(ctx, e.ID, t0, t0); !errors.Is(err, ErrRoundDone) {
			t.Errorf("StartAttempt after SaveRound = %v, want ErrRoundDone", err)
		}
	})
}

func TestSaveRoundRefusesBadInput(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		e := mustAddEntry(t, s, "acme")
		if err := s.SetDue(ctx, e.ID, DueUpdate{Reason: ReasonCadence, At: t0}); err != nil {
			t.Fatal(err)
		}
		mustSave(t, s, fullRound(e.ID, t0.Add(-time.Hour), t0.Add(-time.Hour), "echo"))
		before := takeSnapshot(t, s)
		otherDoc, _ := testSurface("other")

		cases := map[string]func(r *Round){
			"fingerprints without surface": func(r *Round) { r.Surface = nil },
			"surface without fingerprints": func(r *Round) { r.Fingerprints = nil; r.Coverage = "auth_required" },
			"surface not matching":         func(r *Round) { r.Surface = otherDoc },
			"fingerprint malformed":        func(r *Round) { r.Fingerprints.Toolset = "sha256:XYZ" },
			"envelope without key id":      func(r *Round) { r.KeyID = "" },
			"envelope without digest":      func(r *Round) { r.PayloadDigest = "" },
			"digest malformed":             func(r *Round) { r.PayloadDigest = "sha256:" + r.PayloadDigest },
			"empty envelope":               func(r *Round) { r.Envelope = []byte{} },
			"envelope without coverage":    func(r *Round) { r.Coverage = "" },
			"coverage unknown":             func(r *Round) { r.Coverage = "partial" },
			"coverage without envelope":    func(r *Round) { r.Envelope, r.KeyID, r.PayloadDigest = nil, "", "" },
			"full without fingerprints": func(r *Round) {
				r.Fingerprints, r.Surface = nil, nil
			},
			"auth_required with fingerprints": func(r *Round) { r.Coverage = "auth_required" },
			"signed with unsigned reason":     func(r *Round) { r.UnsignedReason = "blocked" },
			"no uptime":                       func(r *Round) { r.Uptime = "" },
			"uptime unknown":                  func(r *Round) { r.Uptime = "maybe" },
			"reason unknown":                  func(r *Round) { r.Reason = "weekly" },
			"zero due":                        func(r *Round) { r.DueAt = time.Time{} },
			"zero start":                      func(r *Round) { r.StartedAt = time.Time{} },
			"due reason unknown": func(r *Round) {
				r.Due = []DueUpdate{{Reason: ReasonCadence, At: t0.Add(time.Hour)}, {Reason: "weekly", At: t0}}
			},
			"negative retry after": func(r *Round) { r.RetryAfter = -time.Second },
		}
		for name, mutate := range cases {
			r := fullRound(e.ID, t0, t0, "echo")
			r.Due = []DueUpdate{{Reason: ReasonCadence, At: t0.Add(time.Hour)}}
			mutate(r)
			if _, err := s.SaveRound(ctx, r); err == nil || errors.Is(err, ErrRoundDone) {
				t.Errorf("%s: SaveRound = %v, want a refusal", name, err)
			}
		}
		if _, err := s.SaveRound(ctx, nil); err == nil {
			t.Error("SaveRound(nil) accepted")
		}
		if _, err := s.SaveRound(ctx, fullRound(1<<40, t0, t0, "echo")); !errors.Is(err, ErrNotFound) {
			t.Errorf("SaveRound of an unknown entry = %v, want ErrNotFound", err)
		}
		checkUnchanged(t, s, before, "a refused SaveRound")

		// The refusals were about the input: the round itself can be stored.
		mustSave(t, s, fullRound(e.ID, t0, t0, "echo"))
	})
}

func TestSurfacesStoredOnce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		a, b := mustAddEntry(t, s, "a"), mustAddEntry(t, s, "b")
		mustSave(t, s, fullRound(a.ID, t0, t0, "echo"))
		mustSave(t, s, fullRound(a.ID, t0.Add(time.Hour), t0.Add(time.Hour), "echo"))
		mustSave(t, s, fullRound(b.ID, t0, t0, "echo"))
		st, err := s.Stats(ctx)
		if err != nil || st.Surfaces != 1 || st.Rounds != 3 {
			t.Errorf("Stats = %+v, %v; want 1 surface, 3 rounds", st, err)
		}
		mustSave(t, s, fullRound(b.ID, t0.Add(time.Hour), t0.Add(time.Hour), "other"))
		if st, _ := s.Stats(ctx); st.Surfaces != 2 {
			t.Errorf("%d surfaces, want 2", st.Surfaces)
		}
		doc, fp := testSurface("echo")
		if got, err := s.Surface(ctx, fp.Surface); err != nil || string(got) != string(doc) {
			t.Errorf("Surface = %s, %v", got, err)
		}
		if _, err := s.Surface(ctx, attest.Digest([]byte("nothing"))); !errors.Is(err, ErrNotFound) {
			t.Errorf("Surface(unknown) = %v, want ErrNotFound", err)
		}
	})
}

func TestLastSurface(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		e := mustAddEntry(t, s, "acme")
		_, fpA := testSurface("a")
		_, fpB := testSurface("b")
		_, fpD := testSurface("d")
		step := func(r *Round, wantLast time.Time, wantSurface string) {
			t.Helper()
			mustSave(t, s, r)
			got, err := s.EntryByID(ctx, e.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !got.LastRoundAt.Equal(ms(wantLast)) || got.LastSurface != wantSurface {
				t.Errorf("after %s: last round %v, surface %q; want %v, %q",
					r.RoundID, got.LastRoundAt, got.LastSurface, ms(wantLast), wantSurface)
			}
		}
		at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
		step(fullRound(e.ID, at(10), at(10), "a"), at(10), fpA.Surface)
		step(unsignedRound(e.ID, at(20), at(20)), at(20), fpA.Surface)  // newer, no surface
		step(authRound(e.ID, at(30), at(30)), at(30), fpA.Surface)      // newer, no surface
		step(fullRound(e.ID, at(40), at(40), "b"), at(40), fpB.Surface) // newer surface
		step(fullRound(e.ID, at(5), at(5), "d"), at(40), fpB.Surface)   // older: changes nothing
		step(unsignedRound(e.ID, at(60), at(60)), at(60), fpB.Surface)  // newer, no surface
		step(fullRound(e.ID, at(50), at(50), "d"), at(60), fpD.Surface) // the newest round with a surface
		step(fullRound(e.ID, at(45), at(45), "a"), at(60), fpD.Surface) // older than d's round
	})
}

func TestEnvelopeImmutable(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		x, ok := s.(testExecer)
		if !ok {
			t.Fatalf("%s store does not implement testExecer", s.Backend())
		}
		e := mustAddEntry(t, s, "acme")
		mustSave(t, s, fullRound(e.ID, t0, t0, "echo"))
		before := takeSnapshot(t, s)
		for _, q := range []string{
			`UPDATE ledger SET key_id = 'forged'`,
			`UPDATE ledger SET envelope = envelope`,
			`UPDATE ledger SET payload_digest = payload_digest`,
			`UPDATE ledger SET seq = seq`,
			`UPDATE rounds SET ledger_id = NULL`,
			`DELETE FROM ledger`,
		} {
			if err := x.execForTest(t.Context(), q); err == nil {
				t.Errorf("%s: accepted", q)
			}
		}
		checkUnchanged(t, s, before, "a refused envelope update")
		// The backdoor works: a harmless statement succeeds.
		if err := x.execForTest(t.Context(), `UPDATE entries SET name = name`); err != nil {
			t.Errorf("execForTest: %v", err)
		}
	})
}

func TestDeleteEntry(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		gone, kept := mustAddEntry(t, s, "gone"), mustAddEntry(t, s, "kept")
		var goneObs []int64
		for i, r := range []*Round{
			fullRound(gone.ID, t0, t0, "echo"),
			authRound(gone.ID, t0.Add(time.Hour), t0.Add(time.Hour)),
			unsignedRound(gone.ID, t0.Add(48*time.Hour), t0.Add(48*time.Hour)),
		} {
			r.Due = []DueUpdate{{Reason: ReasonCadence, At: t0.Add(time.Duration(i+50) * time.Hour)}}
			goneObs = append(goneObs, mustSave(t, s, r))
		}
		if _, err := s.StartAttempt(ctx, gone.ID, t0.Add(100*time.Hour), t0); err != nil {
			t.Fatal(err)
		}
		if err := s.SetDue(ctx, gone.ID, DueUpdate{Reason: ReasonStatus, At: t0}); err != nil {
			t.Fatal(err)
		}
		keptR := fullRound(kept.ID, t0, t0, "echo")
		keptR.Due = []DueUpdate{{Reason: ReasonCadence, At: t0.Add(time.Hour)}}
		mustSave(t, s, keptR)
		keptBefore := takeSnapshot(t, s)

		if err := s.DeleteEntry(ctx, "gone", "removed by its operator"); err != nil {
			t.Fatalf("DeleteEntry: %v", err)
		}
		if _, err := s.Entry(ctx, "gone"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Entry after delete = %v", err)
		}
		if rs, err := s.Rounds(ctx, gone.ID, 0); err != nil || len(rs) != 0 {
			t.Errorf("Rounds after delete = %+v, %v", rs, err)
		}
		for _, id := range goneObs {
			if _, err := s.RoundResults(ctx, id); !errors.Is(err, ErrNotFound) {
				t.Errorf("RoundResults(%d) after delete = %v", id, err)
			}
		}
		if ds, err := s.DueTimes(ctx, gone.ID); err != nil || len(ds) != 0 {
			t.Errorf("DueTimes after delete = %+v, %v", ds, err)
		}
		if due, _ := s.DueBefore(ctx, t0.Add(1000*time.Hour), 0); len(due) != 1 || due[0].EntryID != kept.ID {
			t.Errorf("DueBefore after delete = %+v", due)
		}
		if ud, err := s.UptimeDays(ctx, gone.ID, "2000-01-01", "2999-12-31"); err != nil || len(ud) != 0 {
			t.Errorf("UptimeDays after delete = %+v, %v", ud, err)
		}
		if n, err := s.Attempts(ctx, gone.ID, t0.Add(100*time.Hour)); err != nil || n != 0 {
			t.Errorf("Attempts after delete = %d, %v", n, err)
		}
		err := s.Envelopes(ctx, EnvelopeFilter{EntrySlug: "gone"}, func(r EnvelopeRecord) error {
			return fmt.Errorf("envelope %d of a deleted entry", r.Round)
		})
		if err != nil {
			t.Error(err)
		}

		// What belongs to the other entry is untouched; the shared surface is kept.
		want := keptBefore
		want.Entries = []Entry{keptBefore.Entries[1]}
		delete(want.Due, gone.ID)
		delete(want.Rounds, gone.ID)
		delete(want.Uptime, gone.ID)
		want.Envs = want.Envs[2:]
		want.Stats = Stats{Entries: 1, Rounds: 1, Signed: 1, Envelopes: 1, Surfaces: 1}
		if got := takeSnapshot(t, s); !reflect.DeepEqual(got, want) {
			t.Errorf("after delete:\n got %+v\nwant %+v", got, want)
		}
		doc, fp := testSurface("echo")
		if got, err := s.Surface(ctx, fp.Surface); err != nil || string(got) != string(doc) {
			t.Errorf("shared surface after delete: %s, %v", got, err)
		}
		checkSignedInvariant(t, s)

		if err := s.DeleteEntry(ctx, "gone", "removed by its operator"); !errors.Is(err, ErrNotFound) {
			t.Errorf("second DeleteEntry = %v, want ErrNotFound", err)
		}
		again, created, err := s.AddEntry(ctx, newTestEntry("gone"))
		if err != nil || !created || again.Slug != "gone" || again.ID == gone.ID || !again.LastRoundAt.IsZero() || again.UptimeCountedDays != 0 {
			t.Errorf("re-added entry = %+v, created %v, %v", again, created, err)
		}
	})
}

func TestUptime(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		e := mustAddEntry(t, s, "acme")
		day1 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
		due := day1
		round := func(started time.Time, c UptimeClass) {
			t.Helper()
			due = due.Add(time.Minute)
			r := unsignedRound(e.ID, due, started)
			r.Uptime = c
			mustSave(t, s, r)
		}
		check := func(online, counted int, want ...UptimeDay) {
			t.Helper()
			got, err := s.EntryByID(ctx, e.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.UptimeOnlineDays != online || got.UptimeCountedDays != counted {
				t.Errorf("entry: %d online of %d counted days, want %d of %d",
					got.UptimeOnlineDays, got.UptimeCountedDays, online, counted)
			}
			days, err := s.UptimeDays(ctx, e.ID, "2026-03-01", "2026-03-31")
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 {
				want = nil
			}
			if !reflect.DeepEqual(days, want) {
				t.Errorf("days:\n got %+v\nwant %+v", days, want)
			}
		}
		check(0, 0)

		round(day1.Add(time.Hour), UptimeInconclusive)
		check(0, 0, UptimeDay{"2026-03-01", 0, 0, 1, DayNotCounted})
		round(day1.Add(2*time.Hour), UptimeAnswered)
		check(1, 1, UptimeDay{"2026-03-01", 1, 0, 1, DayOnline})
		round(day1.Add(3*time.Hour), UptimeAnswered)
		round(day1.Add(4*time.Hour), UptimeInconclusive)
		check(1, 1, UptimeDay{"2026-03-01", 2, 0, 2, DayOnline})
		// The last millisecond of the day still counts for it.
		round(day1.Add(24*time.Hour-time.Millisecond), UptimeNoAnswer)
		check(0, 1, UptimeDay{"2026-03-01", 2, 1, 2, DayOffline})
		round(day1.Add(5*time.Hour), UptimeAnswered) // a late answer cannot undo it
		check(0, 1, UptimeDay{"2026-03-01", 3, 1, 2, DayOffline})

		// Day 2 starts at midnight UTC, whatever the zone of the start time.
		tokyo := time.FixedZone("UTC+9", 9*3600)
		round(day1.Add(24*time.Hour).In(tokyo), UptimeInconclusive)
		check(0, 1, UptimeDay{"2026-03-01", 3, 1, 2, DayOffline}, UptimeDay{"2026-03-02", 0, 0, 1, DayNotCounted})
		round(day1.Add(30*time.Hour).In(tokyo), UptimeAnswered)
		day2 := UptimeDay{"2026-03-02", 1, 0, 1, DayOnline}
		check(1, 2, UptimeDay{"2026-03-01", 3, 1, 2, DayOffline}, day2)

		// A day with only a failure; then a gap; then an online day.
		round(day1.Add(3*24*time.Hour), UptimeNoAnswer)
		round(day1.Add(5*24*time.Hour), UptimeAnswered)
		day4 := UptimeDay{"2026-03-04", 0, 1, 0, DayOffline}
		day6 := UptimeDay{"2026-03-06", 1, 0, 0, DayOnline}
		check(2, 4, UptimeDay{"2026-03-01", 3, 1, 2, DayOffline}, day2, day4, day6)

		// Ranges are inclusive and ordered oldest first.
		for _, c := range []struct {
			from, to string
			want     []UptimeDay
		}{
			{"2026-03-02", "2026-03-04", []UptimeDay{day2, day4}},
			{"2026-03-04", "2026-03-04", []UptimeDay{day4}},
			{"2026-03-05", "2026-03-05", nil},
			{"2026-03-06", "2027-01-01", []UptimeDay{day6}},
		} {
			got, err := s.UptimeDays(ctx, e.ID, c.from, c.to)
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Errorf("UptimeDays(%s, %s) = %+v, %v; want %+v", c.from, c.to, got, err, c.want)
			}
		}
		for _, bad := range [][2]string{{"2026-3-1", "2026-03-31"}, {"2026-03-01", "tomorrow"}, {"", ""}} {
			if _, err := s.UptimeDays(ctx, e.ID, bad[0], bad[1]); err == nil {
				t.Errorf("UptimeDays(%q, %q) accepted", bad[0], bad[1])
			}
		}

		// Another entry's uptime is its own.
		other := mustAddEntry(t, s, "other")
		r := unsignedRound(other.ID, day1, day1)
		r.Uptime = UptimeAnswered
		mustSave(t, s, r)
		check(2, 4, UptimeDay{"2026-03-01", 3, 1, 2, DayOffline}, day2, day4, day6)
		if got, _ := s.EntryByID(ctx, other.ID); got.UptimeOnlineDays != 1 || got.UptimeCountedDays != 1 {
			t.Errorf("other entry: %d of %d days", got.UptimeOnlineDays, got.UptimeCountedDays)
		}
	})
}

func TestDue(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		a, b := mustAddEntry(t, s, "a"), mustAddEntry(t, s, "b")
		set := func(id int64, reason DueReason, at time.Time) {
			t.Helper()
			if err := s.SetDue(ctx, id, DueUpdate{Reason: reason, At: at}); err != nil {
				t.Fatalf("SetDue: %v", err)
			}
		}
		set(a.ID, ReasonCadence, t0.Add(3*time.Hour))
		set(a.ID, ReasonStatus, t0.Add(time.Hour))
		set(b.ID, ReasonCadence, t0.Add(2*time.Hour))
		set(b.ID, ReasonConfirm, t0.Add(10*time.Hour))
		set(a.ID, ReasonCadence, t0.Add(2*time.Hour)) // overwrite: same time as b's
		set(a.ID, ReasonManual, t0.Add(time.Minute))
		set(a.ID, ReasonManual, time.Time{}) // clear
		set(b.ID, ReasonManual, time.Time{}) // clearing nothing is fine
		set(b.ID, ReasonStatus, t0.Add(30*time.Minute))

		got, err := s.DueBefore(ctx, t0.Add(2*time.Hour), 10)
		want := []Due{
			{b.ID, ReasonStatus, ms(t0.Add(30 * time.Minute))},
			{a.ID, ReasonStatus, ms(t0.Add(time.Hour))},
			{a.ID, ReasonCadence, ms(t0.Add(2 * time.Hour))},
			{b.ID, ReasonCadence, ms(t0.Add(2 * time.Hour))},
		}
		if err != nil || len(got) != 4 || got[0] != want[0] || got[1] != want[1] || !sameDues(got[2:], want[2:]) {
			t.Errorf("DueBefore = %+v, %v; want %+v (the last two in either order)", got, err, want)
		}
		if got, _ := s.DueBefore(ctx, t0.Add(2*time.Hour), 1); len(got) != 1 || got[0] != want[0] {
			t.Errorf("DueBefore(limit 1) = %+v", got)
		}
		if got, _ := s.DueBefore(ctx, t0, 10); len(got) != 0 {
			t.Errorf("DueBefore(t0) = %+v, want none", got)
		}
		if got, _ := s.DueTimes(ctx, a.ID); !sameDues(got, want[1:3]) {
			t.Errorf("DueTimes(a) = %+v", got)
		}

		if err := s.SetDue(ctx, 1<<40, DueUpdate{Reason: ReasonCadence, At: t0}); !errors.Is(err, ErrNotFound) {
			t.Errorf("SetDue(unknown entry) = %v, want ErrNotFound", err)
		}
		if err := s.SetDue(ctx, a.ID, DueUpdate{Reason: "weekly", At: t0}); err == nil {
			t.Error("SetDue accepted an unknown reason")
		}

		// SaveRound applies its due updates: set, move, clear.
		r := unsignedRound(a.ID, t0.Add(time.Hour), t0.Add(time.Hour))
		r.Reason = ReasonStatus
		r.Due = []DueUpdate{{Reason: ReasonStatus, At: t0.Add(25 * time.Hour)}, {Reason: ReasonCadence}, {Reason: ReasonConfirm, At: t0.Add(time.Hour)}}
		mustSave(t, s, r)
		wantA := []Due{{a.ID, ReasonConfirm, ms(t0.Add(time.Hour))}, {a.ID, ReasonStatus, ms(t0.Add(25 * time.Hour))}}
		if got, _ := s.DueTimes(ctx, a.ID); !sameDues(got, wantA) {
			t.Errorf("DueTimes(a) after SaveRound = %+v, want %+v", got, wantA)
		}
	})
}

// sameDues reports whether a and b hold the same due times in any order.
func sameDues(a, b []Due) bool {
	if len(a) != len(b) {
		return false
	}
	left := map[Due]int{}
	for _, d := range a {
		if d.At.Location() != time.UTC {
			return false
		}
		left[d]++
	}
	for _, d := range b {
		left[d]--
	}
	for _, n := range left {
		if n != 0 {
			return false
		}
	}
	return true
}

func TestStartAttempt(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		e := mustAddEntry(t, s, "acme")
		for want := 1; want <= 3; want++ {
			n, err := s.StartAttempt(ctx, e.ID, t0, t0.Add(time.Duration(want)*time.Minute))
			if err != nil || n != want {
				t.Fatalf("StartAttempt #%d = %d, %v", want, n, err)
			}
		}
		if n, err := s.StartAttempt(ctx, e.ID, t0.Add(time.Hour), t0); err != nil || n != 1 {
			t.Errorf("StartAttempt(other due time) = %d, %v; want 1", n, err)
		}
		if n, err := s.Attempts(ctx, e.ID, t0); err != nil || n != 3 {
			t.Errorf("Attempts = %d, %v; want 3", n, err)
		}
		if n, err := s.Attempts(ctx, e.ID, t0.Add(2*time.Hour)); err != nil || n != 0 {
			t.Errorf("Attempts(no attempt) = %d, %v; want 0", n, err)
		}
		if _, err := s.StartAttempt(ctx, 1<<40, t0, t0); !errors.Is(err, ErrNotFound) {
			t.Errorf("StartAttempt(unknown entry) = %v, want ErrNotFound", err)
		}
		mustSave(t, s, fullRound(e.ID, t0, t0, "echo"))
		if _, err := s.StartAttempt(ctx, e.ID, t0, t0); !errors.Is(err, ErrRoundDone) {
			t.Errorf("StartAttempt(stored round) = %v, want ErrRoundDone", err)
		}
		if n, err := s.Attempts(ctx, e.ID, t0); err != nil || n != 3 {
			t.Errorf("Attempts after a refused StartAttempt = %d, %v; want 3", n, err)
		}
	})
}

func TestRuns(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		if _, err := s.UnfinishedRun(ctx); !errors.Is(err, ErrNotFound) {
			t.Fatalf("UnfinishedRun of a fresh store = %v, want ErrNotFound", err)
		}
		older := Run{ID: "run-1", DueAt: t0, StartedAt: t0.Add(time.Second)}
		newer := Run{ID: "run-2", DueAt: t0.Add(time.Hour), StartedAt: t0.Add(time.Hour + time.Second)}
		for _, r := range []Run{older, newer} {
			if err := s.StartRun(ctx, r); err != nil {
				t.Fatalf("StartRun(%s): %v", r.ID, err)
			}
		}
		if err := s.StartRun(ctx, older); err == nil {
			t.Error("StartRun accepted a run id twice")
		}
		utc := func(r Run) Run { return Run{r.ID, ms(r.DueAt), ms(r.StartedAt), time.Time{}} }
		if got, err := s.UnfinishedRun(ctx); err != nil || got != utc(newer) {
			t.Errorf("UnfinishedRun = %+v, %v; want %+v", got, err, utc(newer))
		}
		if err := s.FinishRun(ctx, "run-2", t0.Add(2*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if got, err := s.UnfinishedRun(ctx); err != nil || got != utc(older) {
			t.Errorf("UnfinishedRun after finishing run-2 = %+v, %v; want %+v", got, err, utc(older))
		}
		if err := s.FinishRun(ctx, "run-1", t0.Add(3*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.UnfinishedRun(ctx); !errors.Is(err, ErrNotFound) {
			t.Errorf("UnfinishedRun with every run finished = %v, want ErrNotFound", err)
		}
		if err := s.FinishRun(ctx, "run-9", t0); !errors.Is(err, ErrNotFound) {
			t.Errorf("FinishRun(unknown) = %v, want ErrNotFound", err)
		}
	})
}

func TestEnvelopesFilter(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		a, b := mustAddEntry(t, s, "a"), mustAddEntry(t, s, "b")
		type saved struct {
			id   int64
			slug string
			at   time.Time
		}
		var all []saved
		// Saved out of time order, so round order differs from time order.
		for _, x := range []struct {
			e Entry
			h int
		}{{a, 5}, {b, 1}, {a, 2}, {b, 7}, {a, 9}} {
			at := t0.Add(time.Duration(x.h) * time.Hour)
			all = append(all, saved{mustSave(t, s, fullRound(x.e.ID, at, at, "echo")), x.e.Slug, ms(at)})
		}
		mustSave(t, s, unsignedRound(a.ID, t0.Add(20*time.Hour), t0.Add(20*time.Hour)))

		walk := func(f EnvelopeFilter) []saved {
			t.Helper()
			var got []saved
			err := s.Envelopes(ctx, f, func(r EnvelopeRecord) error {
				if r.StartedAt.Location() != time.UTC || r.KeyID == "" || !strings.Contains(string(r.Envelope), r.RoundID) {
					t.Errorf("record %+v", r)
				}
				got = append(got, saved{r.Round, r.EntrySlug, r.StartedAt})
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		pick := func(keep func(saved) bool) []saved {
			var out []saved
			for _, x := range all {
				if keep(x) {
					out = append(out, x)
				}
			}
			return out
		}
		since := ms(t0.Add(5 * time.Hour))
		for name, c := range map[string]struct {
			f    EnvelopeFilter
			keep func(saved) bool
		}{
			"all":          {EnvelopeFilter{}, func(saved) bool { return true }},
			"since":        {EnvelopeFilter{Since: since}, func(x saved) bool { return !x.at.Before(since) }},
			"slug":         {EnvelopeFilter{EntrySlug: "b"}, func(x saved) bool { return x.slug == "b" }},
			"since + slug": {EnvelopeFilter{Since: since, EntrySlug: "a"}, func(x saved) bool { return x.slug == "a" && !x.at.Before(since) }},
			"unknown slug": {EnvelopeFilter{EntrySlug: "c"}, func(saved) bool { return false }},
		} {
			if got, want := walk(c.f), pick(c.keep); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: got %+v, want %+v", name, got, want)
			}
		}

		// fn may use the store, writes included, while the walk goes on.
		calls := 0
		err := s.Envelopes(ctx, EnvelopeFilter{}, func(r EnvelopeRecord) error {
			calls++
			if _, err := s.Entry(ctx, r.EntrySlug); err != nil {
				return err
			}
			return s.SetDue(ctx, a.ID, DueUpdate{Reason: ReasonManual, At: r.StartedAt})
		})
		if err != nil || calls != len(all) {
			t.Errorf("Envelopes with fn using the store: %v after %d calls", err, calls)
		}

		stop := errors.New("stop")
		calls = 0
		err = s.Envelopes(ctx, EnvelopeFilter{}, func(EnvelopeRecord) error { calls++; return stop })
		if !errors.Is(err, stop) || calls != 1 {
			t.Errorf("Envelopes with fn failing: %v after %d calls; want stop after 1", err, calls)
		}
	})
}

func TestConcurrentSaves(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		const workers, rounds = 8, 50
		entries := make([]Entry, workers)
		for i := range entries {
			entries[i] = mustAddEntry(t, s, fmt.Sprintf("w%d", i))
		}
		shared := mustAddEntry(t, s, "shared")
		const sharedDues = 10

		var (
			wg     sync.WaitGroup
			mu     sync.Mutex
			stored = map[time.Time]int{}
			errs   []error
		)
		for w := range workers {
			wg.Go(func() {
				for i := range rounds {
					due := t0.Add(time.Duration(i) * time.Minute)
					var r *Round
					switch i % 3 {
					case 0:
						r = fullRound(entries[w].ID, due, due, fmt.Sprintf("tool%d", i%5))
					case 1:
						r = authRound(entries[w].ID, due, due)
					default:
						r = unsignedRound(entries[w].ID, due, due)
					}
					r.Due = []DueUpdate{{Reason: ReasonCadence, At: due.Add(time.Hour)}}
					if _, err := s.SaveRound(ctx, r); err != nil {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
					}
					if i%5 == 0 {
						// Every worker races every other to store the shared entry's rounds.
						due := t0.Add(time.Duration(i/5%sharedDues) * time.Hour)
						_, err := s.SaveRound(ctx, fullRound(shared.ID, due, due.Add(time.Duration(w)*time.Second), "echo"))
						mu.Lock()
						switch {
						case err == nil:
							stored[due]++
						case !errors.Is(err, ErrRoundDone):
							errs = append(errs, err)
						}
						mu.Unlock()
					}
				}
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		if len(stored) != sharedDues {
			t.Errorf("%d shared rounds stored, want %d", len(stored), sharedDues)
		}
		for due, n := range stored {
			if n != 1 {
				t.Errorf("shared round due %v stored %d times", due, n)
			}
		}
		for _, e := range entries {
			rs, err := s.Rounds(ctx, e.ID, 0)
			if err != nil || len(rs) != rounds {
				t.Errorf("entry %s: %d rounds, %v", e.Slug, len(rs), err)
			}
			got, _ := s.EntryByID(ctx, e.ID)
			if !got.LastRoundAt.Equal(ms(t0.Add((rounds - 1) * time.Minute))) {
				t.Errorf("entry %s: last round %v", e.Slug, got.LastRoundAt)
			}
			days, _ := s.UptimeDays(ctx, e.ID, "2026-11-30", "2026-11-30")
			if len(days) != 1 || days[0].Answered+days[0].NoAnswer+days[0].Inconclusive != rounds {
				t.Errorf("entry %s: uptime %+v", e.Slug, days)
			}
		}
		if rs, _ := s.Rounds(ctx, shared.ID, 0); len(rs) != sharedDues {
			t.Errorf("shared entry: %d rounds, want %d", len(rs), sharedDues)
		}
		st, err := s.Stats(ctx)
		if err != nil || st.Rounds != workers*rounds+sharedDues {
			t.Errorf("Stats = %+v, %v; want %d rounds", st, err, workers*rounds+sharedDues)
		}
		checkSignedInvariant(t, s)
	})
}

func TestTimesUTC(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		zone := time.FixedZone("UTC-7", -7*3600)
		at := time.Date(2026, 7, 4, 23, 59, 59, 999_999_999, zone) // 06:59:59.999999999 UTC the next day
		want := time.Date(2026, 7, 5, 6, 59, 59, 999_000_000, time.UTC)
		isWant := func(what string, got time.Time, want time.Time) {
			t.Helper()
			if got != want { // == also compares the location
				t.Errorf("%s = %v (%v), want %v", what, got, got.Location(), want)
			}
		}

		ne := newTestEntry("acme")
		ne.Due = []Due{{Reason: ReasonCadence, At: at}}
		e, _, err := s.AddEntry(ctx, ne)
		if err != nil {
			t.Fatal(err)
		}
		if ds, err := s.DueTimes(ctx, e.ID); err != nil || len(ds) != 1 {
			t.Fatalf("DueTimes = %+v, %v", ds, err)
		} else {
			isWant("due time", ds[0].At, want)
		}
		if ds, err := s.DueBefore(ctx, want, 10); err != nil || len(ds) != 1 {
			t.Errorf("DueBefore(the due time itself) = %+v, %v", ds, err)
		}

		r := fullRound(e.ID, at, at, "echo")
		r.FinishedAt = at.Add(time.Millisecond)
		mustSave(t, s, r)
		rs, err := s.Rounds(ctx, e.ID, 1)
		if err != nil || len(rs) != 1 {
			t.Fatalf("Rounds = %+v, %v", rs, err)
		}
		isWant("DueAt", rs[0].DueAt, want)
		isWant("StartedAt", rs[0].StartedAt, want)
		isWant("FinishedAt", rs[0].FinishedAt, want.Add(time.Millisecond))
		got, _ := s.EntryByID(ctx, e.ID)
		isWant("LastRoundAt", got.LastRoundAt, want)
		if got.CreatedAt.Location() != time.UTC || got.CreatedAt != ms(got.CreatedAt) {
			t.Errorf("CreatedAt = %v, not UTC milliseconds", got.CreatedAt)
		}
		if _, err := s.SaveRound(ctx, fullRound(e.ID, want, want, "echo")); !errors.Is(err, ErrRoundDone) {
			t.Errorf("the same due time in UTC: %v, want ErrRoundDone", err)
		}
		if n, err := s.StartAttempt(ctx, e.ID, at.Add(time.Hour), at); err != nil || n != 1 {
			t.Fatal(n, err)
		}
		if n, _ := s.Attempts(ctx, e.ID, want.Add(time.Hour)); n != 1 {
			t.Errorf("Attempts by the UTC due time = %d, want 1", n)
		}
		if days, _ := s.UptimeDays(ctx, e.ID, "2026-07-05", "2026-07-05"); len(days) != 1 {
			t.Errorf("uptime day of a round at %v: %+v, want 2026-07-05", at, days)
		}
		err = s.Envelopes(ctx, EnvelopeFilter{Since: want}, func(r EnvelopeRecord) error {
			isWant("envelope StartedAt", r.StartedAt, want)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}

		if err := s.StartRun(ctx, Run{ID: "r", DueAt: at, StartedAt: at}); err != nil {
			t.Fatal(err)
		}
		run, err := s.UnfinishedRun(ctx)
		if err != nil {
			t.Fatal(err)
		}
		isWant("run DueAt", run.DueAt, want)
		isWant("run StartedAt", run.StartedAt, want)
		if !run.FinishedAt.IsZero() {
			t.Errorf("unfinished run's FinishedAt = %v", run.FinishedAt)
		}
	})
}

// testJobArgs is a job for TestQueue.
type testJobArgs struct {
	N int `json:"n"`
}

func (testJobArgs) Kind() string { return "store_test_job" }

type testJobWorker struct {
	river.WorkerDefaults[testJobArgs]
	done chan int
}

func (w *testJobWorker) Work(ctx context.Context, job *river.Job[testJobArgs]) error {
	w.done <- job.Args.N
	return nil
}

func TestQueue(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		workers := river.NewWorkers()
		done := make(chan int, 10)
		river.AddWorker(workers, &testJobWorker{done: done})
		q, err := s.NewQueue(&river.Config{
			Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}},
			Workers:           workers,
			FetchCooldown:     10 * time.Millisecond,
			FetchPollInterval: 20 * time.Millisecond,
			Logger:            slog.New(slog.DiscardHandler),
			TestOnly:          true,
		})
		if err != nil {
			t.Fatalf("NewQueue: %v", err)
		}
		if err := q.Start(ctx); err != nil {
			t.Fatalf("Start: %v", err)
		}
		stopped := false
		stop := func() {
			if stopped {
				return
			}
			stopped = true
			stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := q.Stop(stopCtx); err != nil {
				t.Errorf("Stop: %v", err)
			}
		}
		t.Cleanup(stop)

		unique := &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}}
		if skipped, err := q.Insert(ctx, testJobArgs{N: 7}, unique); err != nil || skipped {
			t.Fatalf("Insert = skipped %v, %v", skipped, err)
		}
		if skipped, err := q.Insert(ctx, testJobArgs{N: 7}, unique); err != nil || !skipped {
			t.Errorf("duplicate Insert = skipped %v, %v; want skipped", skipped, err)
		}
		select {
		case n := <-done:
			if n != 7 {
				t.Errorf("worker ran job %d, want 7", n)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("the job did not run")
		}
		if skipped, err := q.Insert(ctx, testJobArgs{N: 7}, unique); err != nil || !skipped {
			t.Errorf("duplicate Insert after the job ran = skipped %v, %v; want skipped", skipped, err)
		}
		if skipped, err := q.Insert(ctx, testJobArgs{N: 8}, unique); err != nil || skipped {
			t.Errorf("Insert of other args = skipped %v, %v", skipped, err)
		}
		select {
		case n := <-done:
			if n != 8 {
				t.Errorf("worker ran job %d, want 8", n)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("the second job did not run")
		}
		stop()
		select {
		case n := <-done:
			t.Errorf("job %d ran twice", n)
		default:
		}
	})
}

func TestInstructionsStoredContentAddressed(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		e := mustAddEntry(t, s, "ins")
		r := fullRound(e.ID, t0, t0, "echo")
		r.Instructions = []byte(`"Use search first."`)
		r.Fingerprints.Instructions = attest.Digest(r.Instructions)
		mustSave(t, s, r)
		if got, err := s.Surface(ctx, r.Fingerprints.Instructions); err != nil || string(got) != `"Use search first."` {
			t.Errorf("Surface(instructions fingerprint) = %s, %v", got, err)
		}
		// A document that does not match its fingerprint is refused, and nothing written.
		bad := fullRound(e.ID, t0.Add(time.Hour), t0.Add(time.Hour), "echo")
		bad.Instructions = []byte(`"something else"`)
		before := takeSnapshot(t, s)
		if _, err := s.SaveRound(ctx, bad); err == nil {
			t.Fatal("SaveRound accepted instructions that do not match their fingerprint")
		}
		checkUnchanged(t, s, before, "mismatched instructions")
	})
}

func TestPutSurface(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		doc := []byte(`[{"name":"from_manifest"}]`)
		fp := attest.Digest(doc)
		for range 2 { // storing twice is a no-op
			if err := s.PutSurface(ctx, fp, doc); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := s.Surface(ctx, fp); err != nil || string(got) != string(doc) {
			t.Errorf("Surface = %s, %v", got, err)
		}
		if err := s.PutSurface(ctx, fp, []byte(`[]`)); err == nil {
			t.Error("PutSurface accepted a document under another document's fingerprint")
		}
		if err := s.PutSurface(ctx, "sha256:nothex", doc); err == nil {
			t.Error("PutSurface accepted a malformed fingerprint")
		}
	})
}
