package store

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// The contract tests of the directory read model (Directory), on every backend: search
// (with %, _ and \ matched literally, case ignored beyond ASCII), each filter, both
// orders, paging by offset and by cursor, each row's state, and the Verified rule.

// directoryFixture is a store with six entries, each of which one filter or search
// singles out:
//
//	alpha   remote  "Alpha 100% pure"   signed full round (online 11-28); supply passed and signed: Verified
//	beta    npm     "beta_under"        no round; supply passed but unsigned: not Verified
//	gamma   pypi    `Gamma \ back`      online 11-28, offline 11-30: offline; supply failed, signed
//	delta   github  "ÜBER Delta"        offline 11-27, online 11-29: not offline; newest supply passed but
//	                                    unsigned, an older one signed: not Verified
//	epsilon remote  "Plain"             offline 11-20 (before the window); a visible change a day ago
//	zeta    remote  "Zeta"              offline 11-28, only inconclusive 11-29: offline; a hidden change
//	                                    a day ago and a visible one 10 days ago
type directoryFixture struct {
	alpha, beta, gamma, delta, epsilon, zeta Entry
}

// The offline window of the fixture and the time changes are asked since.
const (
	fixtureOfflineFrom = "2026-11-23"
	fixtureOfflineTo   = "2026-11-30"
)

var fixtureChangedSince = t0.Add(-7 * 24 * time.Hour)

func newDirectoryFixture(t *testing.T, s Store) directoryFixture {
	t.Helper()
	ctx := t.Context()
	add := func(slug, kind, locator, name string) Entry {
		e, _, err := s.AddEntry(ctx, NewEntry{SlugBase: slug, Kind: kind, Locator: locator, Name: name, Source: "import"})
		if err != nil {
			t.Fatalf("AddEntry(%s): %v", slug, err)
		}
		return e
	}
	var f directoryFixture
	f.alpha = add("alpha", KindRemote, "https://alpha.example.com/mcp", "Alpha 100% pure")
	f.beta = add("beta", KindNPM, "pkg:npm/beta", "beta_under")
	f.gamma = add("gamma", KindPyPI, "pkg:pypi/gamma", `Gamma \ back`)
	f.delta = add("delta", KindGitHub, "https://github.com/o/delta", "ÜBER Delta")
	f.epsilon = add("epsilon", KindRemote, "https://plain.example.com/mcp", "Plain")
	f.zeta = add("zeta", KindRemote, "https://zeta.example.com/mcp", "Zeta")

	day := func(d int) time.Time { return time.Date(2026, 11, d, 9, 0, 0, 0, time.UTC) }
	mustSave(t, s, fullRound(f.alpha.ID, day(28), day(28), "a"))
	mustSave(t, s, fullRound(f.gamma.ID, day(28), day(28), "g"))
	mustSave(t, s, unsignedRound(f.gamma.ID, day(30), day(30)))
	mustSave(t, s, unsignedRound(f.delta.ID, day(27), day(27)))
	mustSave(t, s, fullRound(f.delta.ID, day(29), day(29), "d"))
	mustSave(t, s, unsignedRound(f.epsilon.ID, day(20), day(20)))
	mustSave(t, s, unsignedRound(f.zeta.ID, day(28), day(28)))
	inconclusive := unsignedRound(f.zeta.ID, day(29), day(29))
	inconclusive.Uptime, inconclusive.Reach, inconclusive.UnsignedReason = UptimeInconclusive, "", "blocked"
	mustSave(t, s, inconclusive)

	supply := func(e Entry, ranAt time.Time, passed, signed bool) {
		r := testSupply(e.ID, ranAt, 1)
		r.Verified = passed
		if !signed {
			r.Envelope, r.KeyID = nil, ""
		}
		mustSaveSupply(t, s, r)
	}
	supply(f.alpha, day(28), true, true)
	supply(f.beta, day(28), true, false)
	supply(f.gamma, day(28), false, true)
	supply(f.delta, day(20), true, true)
	supply(f.delta, day(28), true, false)

	mustSaveHistory(t, s, HistoryUpdate{EntryID: f.epsilon.ID, State: []byte(`{}`),
		Changes: []ChangeRecord{testChange(f.epsilon.ID, 1, t0.Add(-24*time.Hour))}})
	mustSaveHistory(t, s, HistoryUpdate{EntryID: f.zeta.ID, State: []byte(`{}`),
		Changes: []ChangeRecord{testChange(f.zeta.ID, 1, t0.Add(-10*24*time.Hour)), testChange(f.zeta.ID, 2, t0.Add(-24*time.Hour))}})
	if err := s.HideChange(ctx, f.zeta.ID, 2, true, "wrong fetch"); err != nil {
		t.Fatalf("HideChange: %v", err)
	}
	return f
}

// directorySlugs runs q and returns the rows' slugs.
func directorySlugs(t *testing.T, s Store, q DirectoryQuery) []string {
	t.Helper()
	if q.Limit == 0 {
		q.Limit = MaxDirectoryLimit
	}
	page, err := s.Directory(t.Context(), q)
	if err != nil {
		t.Fatalf("Directory(%+v): %v", q, err)
	}
	slugs := []string{}
	for _, r := range page.Rows {
		slugs = append(slugs, r.Entry.Slug)
	}
	return slugs
}

func TestDirectorySearch(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		newDirectoryFixture(t, s)
		for _, c := range []struct {
			search string
			want   []string
		}{
			{"", []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta"}},
			{"%", []string{"alpha"}},       // a wildcard would match every entry
			{"100% P", []string{"alpha"}},  // case ignored
			{"_", []string{"beta"}},        // a wildcard would match every entry
			{`\`, []string{"gamma"}},       // an escape character would match nothing or fail
			{`a \ b`, []string{"gamma"}},   // the backslash literally, in the middle
			{`\%`, []string{}},             // not "a literal %": a backslash then a percent sign
			{"über", []string{"delta"}},    // case ignored beyond ASCII
			{"ÜBER", []string{"delta"}},    // … both ways
			{"ber d", []string{"delta"}},   // ASCII in a name that is not all ASCII
			{"üBeR dE", []string{"delta"}}, // mixed
			{"npm/BETA", []string{"beta"}}, // the locator
			{"epsil", []string{"epsilon"}}, // the slug
			{"example.com", []string{"alpha", "epsilon", "zeta"}},
			{"nothing like it", []string{}},
		} {
			if got := directorySlugs(t, s, DirectoryQuery{Search: c.search}); !slices.Equal(got, c.want) {
				t.Errorf("search %q = %v, want %v", c.search, got, c.want)
			}
		}
	})
}

func TestDirectoryFilters(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		newDirectoryFixture(t, s)
		for _, c := range []struct {
			name string
			q    DirectoryQuery
			want []string
		}{
			{"kind remote", DirectoryQuery{Kind: KindRemote}, []string{"alpha", "epsilon", "zeta"}},
			{"kind npm", DirectoryQuery{Kind: KindNPM}, []string{"beta"}},
			{"kind pypi", DirectoryQuery{Kind: KindPyPI}, []string{"gamma"}},
			{"kind github", DirectoryQuery{Kind: KindGitHub}, []string{"delta"}},
			{"verified", DirectoryQuery{Verified: OnlyVerified}, []string{"alpha"}},
			{"not verified", DirectoryQuery{Verified: NotVerified}, []string{"beta", "gamma", "delta", "epsilon", "zeta"}},
			{"changed", DirectoryQuery{ChangedSince: fixtureChangedSince}, []string{"epsilon"}},
			{"offline", DirectoryQuery{OfflineFrom: fixtureOfflineFrom, OfflineTo: fixtureOfflineTo}, []string{"gamma", "zeta"}},
			{"offline to 11-29", DirectoryQuery{OfflineFrom: fixtureOfflineFrom, OfflineTo: "2026-11-29"}, []string{"zeta"}},
			{"offline from 11-20", DirectoryQuery{OfflineFrom: "2026-11-20", OfflineTo: fixtureOfflineTo}, []string{"gamma", "epsilon", "zeta"}},
			{"kind and search", DirectoryQuery{Kind: KindRemote, Search: "a"}, []string{"alpha", "epsilon", "zeta"}},
			{"kind and offline", DirectoryQuery{Kind: KindPyPI, OfflineFrom: fixtureOfflineFrom, OfflineTo: fixtureOfflineTo}, []string{"gamma"}},
			{"all filters", DirectoryQuery{Search: "e", Kind: KindRemote, Verified: NotVerified, ChangedSince: fixtureChangedSince,
				OfflineFrom: "2026-11-20", OfflineTo: fixtureOfflineTo}, []string{"epsilon"}},
		} {
			if got := directorySlugs(t, s, c.q); !slices.Equal(got, c.want) {
				t.Errorf("%s = %v, want %v", c.name, got, c.want)
			}
		}
		// The hidden change of zeta (a day ago) does not count, its visible one counts
		// from 10 days back.
		if got := directorySlugs(t, s, DirectoryQuery{ChangedSince: t0.Add(-11 * 24 * time.Hour)}); !slices.Equal(got, []string{"epsilon", "zeta"}) {
			t.Errorf("changed in 11 days = %v, want [epsilon zeta]", got)
		}
	})
}

func TestDirectoryOrderAndPaging(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		newDirectoryFixture(t, s)
		all := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta"}
		// By the newest round, newest first (gamma 11-30, delta and zeta 11-29 by id,
		// alpha 11-28, epsilon 11-20), then the entry never probed.
		byRound := []string{"gamma", "delta", "zeta", "alpha", "epsilon", "beta"}
		if got := directorySlugs(t, s, DirectoryQuery{Order: ByLastRound}); !slices.Equal(got, byRound) {
			t.Errorf("ByLastRound = %v, want %v", got, byRound)
		}
		for _, c := range []struct {
			order DirectoryOrder
			want  []string
		}{{ByID, all}, {ByLastRound, byRound}} {
			for limit := 1; limit <= 4; limit++ {
				var got []string
				for offset := 0; offset < 8; offset += limit {
					got = append(got, directorySlugs(t, s, DirectoryQuery{Order: c.order, Offset: offset, Limit: limit})...)
				}
				if !slices.Equal(got, c.want) {
					t.Errorf("order %d in pages of %d by offset = %v, want %v", c.order, limit, got, c.want)
				}
			}
		}
		// By cursor, filtered: the remote entries two at a time.
		page, err := s.Directory(t.Context(), DirectoryQuery{Kind: KindRemote, Limit: 2})
		if err != nil || len(page.Rows) != 2 || page.Rows[1].Entry.Slug != "epsilon" {
			t.Fatalf("first page of remote entries = %+v, %v", page.Rows, err)
		}
		if got := directorySlugs(t, s, DirectoryQuery{Kind: KindRemote, AfterID: page.Rows[1].Entry.ID, Limit: 2}); !slices.Equal(got, []string{"zeta"}) {
			t.Errorf("after epsilon = %v, want [zeta]", got)
		}
		if page.Entries != 0 {
			t.Errorf("Entries = %d without CountEntries, want 0", page.Entries)
		}
		page, err = s.Directory(t.Context(), DirectoryQuery{Search: "nothing like it", Limit: 1, CountEntries: true})
		if err != nil || page.Entries != 6 || len(page.Rows) != 0 {
			t.Errorf("CountEntries = %d entries, %d rows, %v; want 6, 0", page.Entries, len(page.Rows), err)
		}
	})
}

// TestDirectoryVerifiedRule shows that each row's Verified is IsVerified of its newest
// supply run, and that an unsigned run that passed is not Verified.
func TestDirectoryVerifiedRule(t *testing.T) {
	for _, c := range []struct{ passed, signed, want bool }{
		{true, true, true}, {true, false, false}, {false, true, false}, {false, false, false},
	} {
		if got := IsVerified(c.passed, c.signed); got != c.want {
			t.Errorf("IsVerified(passed %v, signed %v) = %v, want %v", c.passed, c.signed, got, c.want)
		}
	}
	forEachBackend(t, func(t *testing.T, s Store) {
		f := newDirectoryFixture(t, s)
		page, err := s.Directory(t.Context(), DirectoryQuery{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		rows := map[string]DirectoryRow{}
		for _, r := range page.Rows {
			rows[r.Entry.Slug] = r
			if r.Verified != IsVerified(r.Supply.Passed, r.Supply.Signed) {
				t.Errorf("%s: Verified %v, but IsVerified(%v, %v) = %v", r.Entry.Slug, r.Verified, r.Supply.Passed, r.Supply.Signed, !r.Verified)
			}
		}
		want := map[string]DirectoryRow{
			"alpha":   {Entry: f.alpha, Round: RoundState{Present: true, Signed: true, Coverage: "full"}, Supply: SupplyState{true, 61, true, true}, Verified: true},
			"beta":    {Entry: f.beta, Supply: SupplyState{true, 61, true, false}},
			"gamma":   {Entry: f.gamma, Round: RoundState{Present: true}, Supply: SupplyState{true, 61, false, true}},
			"delta":   {Entry: f.delta, Round: RoundState{Present: true, Signed: true, Coverage: "full"}, Supply: SupplyState{true, 61, true, false}},
			"epsilon": {Entry: f.epsilon, Round: RoundState{Present: true}},
			"zeta":    {Entry: f.zeta, Round: RoundState{Present: true}},
		}
		for slug, w := range want {
			got := rows[slug]
			// The entries were read before their rounds: compare what rounds change apart.
			e, err := s.Entry(t.Context(), slug)
			if err != nil {
				t.Fatal(err)
			}
			w.Entry = e
			if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", w) {
				t.Errorf("%s:\n got %+v\nwant %+v", slug, got, w)
			}
		}
	})
}

func TestDirectoryRefusesBadQueries(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		for _, q := range []DirectoryQuery{
			{Limit: 0},
			{Limit: MaxDirectoryLimit + 1},
			{Limit: 1, Offset: -1},
			{Limit: 1, Offset: MaxDirectoryOffset + 1},
			{Limit: 1, Search: strings.Repeat("a", MaxDirectorySearch+1)},
			{Limit: 1, Kind: "cargo"},
			{Limit: 1, Verified: NotVerified + 1},
			{Limit: 1, OfflineFrom: "2026-11-01"},
			{Limit: 1, OfflineFrom: "2026-11-01", OfflineTo: "yesterday"},
			{Limit: 1, Order: ByLastRound + 1},
			{Limit: 1, Order: ByLastRound, AfterID: 3},
			{Limit: 1, AfterID: -1},
		} {
			if _, err := s.Directory(t.Context(), q); err == nil {
				t.Errorf("Directory(%+v) succeeded, want an error", q)
			}
		}
	})
}

func TestLikeEscape(t *testing.T) {
	for in, want := range map[string]string{
		"":         "%%",
		"abc":      "%abc%",
		"100%":     `%100\%%`,
		"a_b":      `%a\_b%`,
		`c:\dir`:   `%c:\\dir%`,
		`\%_`:      `%\\\%\_%`,
		"ü%":       `%ü\%%`,
		"no-specs": "%no-specs%",
	} {
		if got := likeEscape(in); got != want {
			t.Errorf("likeEscape(%q) = %q, want %q", in, got, want)
		}
	}
}
