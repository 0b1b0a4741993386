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
	for _, c := range []struct{ passed, signed, withdrawn, want bool }{
		{true, true, false, true}, {true, false, false, false}, {false, true, false, false}, {false, false, false, false},
		{true, true, true, false}, {true, false, true, false},
	} {
		if got := IsVerified(c.passed, c.signed, c.withdrawn); got != c.want {
			t.Errorf("IsVerified(passed %v, signed %v, withdrawn %v) = %v, want %v", c.passed, c.signed, c.withdrawn, got, c.want)
		}
	}
	forEachBackend(t, func(t *testing.T, s Store) {
		f := newDirectoryFixture(t, s)
		page, err := s.Directory(t.Context(), DirectoryQuery{Limit: 10, UptimeTo: fixtureOfflineTo})
		if err != nil {
			t.Fatal(err)
		}
		rows := map[string]DirectoryRow{}
		for _, r := range page.Rows {
			rows[r.Entry.Slug] = r
			if r.Verified != IsVerified(r.Supply.Passed, r.Supply.Signed, r.Supply.Withdrawn) {
				t.Errorf("%s: Verified %v, but IsVerified(%v, %v) = %v", r.Entry.Slug, r.Verified, r.Supply.Passed, r.Supply.Signed, !r.Verified)
			}
		}
		signed := func(r RoundState) RoundState {
			r.SignedRound, r.ToolCount, r.ProtocolVersion = true, 1, "2025-11-25"
			return r
		}
		want := map[string]DirectoryRow{
			"alpha":   {Entry: f.alpha, Round: signed(RoundState{Present: true, Signed: true, Coverage: "full", Uptime: UptimeAnswered}), Supply: SupplyState{true, 61, true, true, false}, Verified: true},
			"beta":    {Entry: f.beta, Supply: SupplyState{true, 61, true, false, false}},
			"gamma":   {Entry: f.gamma, Round: signed(RoundState{Present: true, Uptime: UptimeNoAnswer}), Supply: SupplyState{true, 61, false, true, false}},
			"delta":   {Entry: f.delta, Round: signed(RoundState{Present: true, Signed: true, Coverage: "full", Uptime: UptimeAnswered}), Supply: SupplyState{true, 61, true, false, false}},
			"epsilon": {Entry: f.epsilon, Round: RoundState{Present: true, Uptime: UptimeNoAnswer}},
			"zeta":    {Entry: f.zeta, Round: RoundState{Present: true, Uptime: UptimeInconclusive}},
		}
		// The directory's 30-day uptime (to 11-30) and last change, which only it reads.
		uptime30 := map[string][2]int{"alpha": {1, 1}, "gamma": {1, 2}, "delta": {1, 2}, "epsilon": {0, 1}, "zeta": {0, 1}}
		lastChange := map[string]time.Time{"epsilon": ms(t0.Add(-24 * time.Hour)), "zeta": ms(t0.Add(-10 * 24 * time.Hour))}
		for slug, w := range want {
			got := rows[slug]
			// The entries were read before their rounds: compare what rounds change apart.
			e, err := s.Entry(t.Context(), slug)
			if err != nil {
				t.Fatal(err)
			}
			w.Entry = e
			w.Entry.Uptime30OnlineDays, w.Entry.Uptime30CountedDays = uptime30[slug][0], uptime30[slug][1]
			w.Entry.LastChangeAt = lastChange[slug]
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
			{Limit: 1, Order: ByUptime + 1},
			{Limit: 1, Order: ByLastRound, AfterID: 3},
			{Limit: 1, Order: ByFindings, AfterID: 3},
			{Limit: 1, Protocol: strings.Repeat("2", MaxDirectoryProtocol+1)},
			{Limit: 1, UptimeTo: "today"},
			{Limit: 1, UptimeTo: "2026-11-31"},
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

// factsFixture feeds s the rounds, uptime days and changes whose derived facts the
// directory reads (findings, tool count, protocol version, offline, 30-day uptime, last
// change), with the store's methods only, so that it can be fed to a store of migration
// 0009 too (TestMigrateDirectoryFacts):
//
//	f1 remote "Zulu"   signed round 11-28: 1 FAILED, 2 OBSERVED_RISK, 3 tools, 2025-06-18;
//	                   then no answer 11-29 (offline); uptime 1 of 2 days; a baseline
//	                   11-20 and a tool change 11-28
//	f2 remote "Äpfel"  signed 11-28 with 1 risk, then signed 11-29 without findings;
//	                   uptime 2 of 2; a tool change 11-27
//	f3 remote "beta"   signed 11-28 with 2 FAILED; offline 10-25 (outside the window);
//	                   uptime 1 of 1
//	f4 npm    "Alpha"  nothing
func factsFixture(t *testing.T, s Store) (f1, f2, f3, f4 Entry) {
	t.Helper()
	ctx := t.Context()
	add := func(slug, kind, locator, name string) Entry {
		e, _, err := s.AddEntry(ctx, NewEntry{SlugBase: slug, Kind: kind, Locator: locator, Name: name, Source: "import"})
		if err != nil {
			t.Fatalf("AddEntry(%s): %v", slug, err)
		}
		return e
	}
	f1 = add("f1", KindRemote, "https://f1.example.com/mcp", "Zulu")
	f2 = add("f2", KindRemote, "https://f2.example.com/mcp", "Äpfel")
	f3 = add("f3", KindRemote, "https://f3.example.com/mcp", "beta")
	f4 = add("f4", KindNPM, "pkg:npm/f4", "Alpha")
	day := func(m, d int) time.Time { return time.Date(2026, time.Month(m), d, 9, 0, 0, 0, time.UTC) }
	results := func(statuses ...string) []byte {
		var parts []string
		for i, st := range statuses {
			parts = append(parts, fmt.Sprintf(`{"id":"c%d","status":%q,"evidence":[{"Note":"x"}]}`, i, st))
		}
		return []byte("[" + strings.Join(parts, ",") + "]")
	}
	r := fullRound(f1.ID, day(11, 28), day(11, 28), "f1")
	r.Results = results("VERIFIED", "FAILED", "OBSERVED_RISK", "UNVERIFIED", "OBSERVED_RISK")
	r.ToolCount, r.ProtocolVersion = 3, "2025-06-18"
	mustSave(t, s, r)
	mustSave(t, s, unsignedRound(f1.ID, day(11, 29), day(11, 29)))
	r = fullRound(f2.ID, day(11, 28), day(11, 28), "f2")
	r.Results = results("OBSERVED_RISK")
	mustSave(t, s, r)
	r = fullRound(f2.ID, day(11, 29), day(11, 29), "f2")
	r.Results = results("VERIFIED", "UNVERIFIED")
	mustSave(t, s, r)
	mustSave(t, s, unsignedRound(f3.ID, day(10, 25), day(10, 25)))
	r = fullRound(f3.ID, day(11, 28), day(11, 28), "f3")
	r.Results = results("FAILED", "FAILED")
	mustSave(t, s, r)

	baseline := testChange(f1.ID, 1, day(11, 20))
	baseline.Kind = "baseline"
	mustSaveHistory(t, s, HistoryUpdate{EntryID: f1.ID, State: []byte(`{}`),
		Changes: []ChangeRecord{baseline, testChange(f1.ID, 2, day(11, 28))}})
	mustSaveHistory(t, s, HistoryUpdate{EntryID: f2.ID, State: []byte(`{}`),
		Changes: []ChangeRecord{testChange(f2.ID, 1, day(11, 27))}})
	return f1, f2, f3, f4
}

// directoryRows runs q and returns its rows by slug, in order.
func directoryRows(t *testing.T, s Store, q DirectoryQuery) ([]string, map[string]DirectoryRow) {
	t.Helper()
	if q.Limit == 0 {
		q.Limit = MaxDirectoryLimit
	}
	page, err := s.Directory(t.Context(), q)
	if err != nil {
		t.Fatalf("Directory(%+v): %v", q, err)
	}
	slugs, rows := []string{}, map[string]DirectoryRow{}
	for _, r := range page.Rows {
		slugs = append(slugs, r.Entry.Slug)
		rows[r.Entry.Slug] = r
	}
	return slugs, rows
}

// checkFacts checks what Directory reads of factsFixture's entries: each row's facts,
// every order and filter of issue 16, the count of matches and the protocol versions.
// hidden says that f1's tool change was hidden since.
func checkFacts(t *testing.T, s Store, hidden bool) {
	t.Helper()
	day := func(m, d int) time.Time { return time.Date(2026, time.Month(m), d, 9, 0, 0, 0, time.UTC) }
	_, rows := directoryRows(t, s, DirectoryQuery{UptimeTo: "2026-11-30"})
	f1Change := day(11, 28)
	if hidden {
		f1Change = time.Time{} // the baseline is not a change
	}
	for slug, w := range map[string]struct {
		round           RoundState
		online, counted int
		lastChange      time.Time
		signedAt        time.Time // the newest signed round's start; zero: none
	}{
		"f1": {RoundState{Present: true, Uptime: UptimeNoAnswer, SignedRound: true, Failed: 1, ObservedRisk: 2, ToolCount: 3, ProtocolVersion: "2025-06-18"}, 1, 2, f1Change, day(11, 28)},
		"f2": {RoundState{Present: true, Signed: true, Coverage: "full", Uptime: UptimeAnswered, SignedRound: true, ToolCount: 1, ProtocolVersion: "2025-11-25"}, 2, 2, day(11, 27), day(11, 29)},
		"f3": {RoundState{Present: true, Signed: true, Coverage: "full", Uptime: UptimeAnswered, SignedRound: true, Failed: 2, ToolCount: 1, ProtocolVersion: "2025-11-25"}, 1, 1, time.Time{}, day(11, 28)},
		"f4": {RoundState{}, 0, 0, time.Time{}, time.Time{}},
	} {
		got := rows[slug]
		if got.Round != w.round || got.Entry.Uptime30OnlineDays != w.online || got.Entry.Uptime30CountedDays != w.counted ||
			!got.Entry.LastChangeAt.Equal(w.lastChange) {
			t.Errorf("%s: round %+v, uptime %d/%d, last change %v; want %+v, %d/%d, %v", slug, got.Round,
				got.Entry.Uptime30OnlineDays, got.Entry.Uptime30CountedDays, got.Entry.LastChangeAt, w.round, w.online, w.counted, w.lastChange)
		}
		if got.Round.Offline() != (slug == "f1") {
			t.Errorf("%s: Offline() = %v", slug, got.Round.Offline())
		}
		// EntryDigest reads the same facts the same way (its window ends today; the
		// fixture's days lie within both windows).
		d, err := s.EntryDigest(t.Context(), slug, EntryQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if d.Entry.Uptime30OnlineDays != w.online || d.Entry.Uptime30CountedDays != w.counted || !d.Entry.LastChangeAt.Equal(w.lastChange) {
			t.Errorf("%s: EntryDigest's uptime %d/%d, last change %v; want %d/%d, %v", slug,
				d.Entry.Uptime30OnlineDays, d.Entry.Uptime30CountedDays, d.Entry.LastChangeAt, w.online, w.counted, w.lastChange)
		}
		// … and its newest signed round is the round whose facts the row shows.
		checkSignedRound(t, d, w.signedAt, got.Round)
	}
	// The window ends where the query says: to 11-28, f1 was online on its one day,
	// and f3's offline 10-25 is 35 days before.
	if _, rows := directoryRows(t, s, DirectoryQuery{UptimeTo: "2026-11-28"}); rows["f1"].Entry.Uptime30OnlineDays != 1 ||
		rows["f1"].Entry.Uptime30CountedDays != 1 || rows["f3"].Entry.Uptime30CountedDays != 1 {
		t.Errorf("uptime to 11-28: f1 %d/%d, f3 %d/%d; want 1/1, 1/1", rows["f1"].Entry.Uptime30OnlineDays,
			rows["f1"].Entry.Uptime30CountedDays, rows["f3"].Entry.Uptime30OnlineDays, rows["f3"].Entry.Uptime30CountedDays)
	}
	// … and its first day is 29 days before its last: to 11-23, f3's 10-25 counts, to
	// 11-24 it does not.
	if _, rows := directoryRows(t, s, DirectoryQuery{UptimeTo: "2026-11-23"}); rows["f3"].Entry.Uptime30CountedDays != 1 ||
		rows["f3"].Entry.Uptime30OnlineDays != 0 {
		t.Errorf("uptime to 11-23: f3 %d/%d, want 0/1 (offline 10-25)", rows["f3"].Entry.Uptime30OnlineDays, rows["f3"].Entry.Uptime30CountedDays)
	}
	if _, rows := directoryRows(t, s, DirectoryQuery{UptimeTo: "2026-11-24"}); rows["f3"].Entry.Uptime30CountedDays != 0 {
		t.Errorf("uptime to 11-24: f3 %d counted days, want 0", rows["f3"].Entry.Uptime30CountedDays)
	}

	byChange := []string{"f1", "f2", "f3", "f4"}
	changed := []string{"f1", "f2"}
	if hidden {
		byChange, changed = []string{"f2", "f1", "f3", "f4"}, []string{"f2"}
	}
	for _, c := range []struct {
		name string
		q    DirectoryQuery
		want []string
	}{
		{"ByName", DirectoryQuery{Order: ByName}, []string{"f4", "f3", "f1", "f2"}},
		{"ByLastChange", DirectoryQuery{Order: ByLastChange}, byChange},
		{"ByFindings", DirectoryQuery{Order: ByFindings}, []string{"f3", "f1", "f2", "f4"}},
		{"ByUptime", DirectoryQuery{Order: ByUptime}, []string{"f2", "f3", "f1", "f4"}},
		{"HasFindings", DirectoryQuery{HasFindings: true}, []string{"f1", "f3"}},
		{"HasFindings ByFindings", DirectoryQuery{HasFindings: true, Order: ByFindings}, []string{"f3", "f1"}},
		{"Protocol 2025-06-18", DirectoryQuery{Protocol: "2025-06-18"}, []string{"f1"}},
		{"Protocol 2025-11-25", DirectoryQuery{Protocol: "2025-11-25"}, []string{"f2", "f3"}},
		{"Protocol unknown", DirectoryQuery{Protocol: "1999-01-01"}, []string{}},
		{"Offline", DirectoryQuery{Offline: true}, []string{"f1"}},
		{"ChangedSince 11-26", DirectoryQuery{ChangedSince: day(11, 26)}, changed},
		{"kind npm ByUptime", DirectoryQuery{Kind: KindNPM, Order: ByUptime}, []string{"f4"}},
	} {
		if got, _ := directoryRows(t, s, c.q); !slices.Equal(got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, got, c.want)
		}
		// Paged one row at a time, every order gives the same rows.
		var paged []string
		for offset := 0; offset < 5; offset++ {
			q := c.q
			q.Offset, q.Limit = offset, 1
			got, _ := directoryRows(t, s, q)
			paged = append(paged, got...)
		}
		if !slices.Equal(paged, c.want) {
			t.Errorf("%s by pages of 1 = %v, want %v", c.name, paged, c.want)
		}
	}
	page, err := s.Directory(t.Context(), DirectoryQuery{HasFindings: true, Limit: 1, CountMatches: true, CountEntries: true, ListProtocols: true})
	if err != nil || page.Matches != 2 || page.Entries != 4 || len(page.Rows) != 1 ||
		!slices.Equal(page.Protocols, []string{"2025-11-25", "2025-06-18"}) {
		t.Errorf("counts = %d matches, %d entries, %d rows, protocols %v, %v; want 2, 4, 1, [2025-11-25 2025-06-18]",
			page.Matches, page.Entries, len(page.Rows), page.Protocols, err)
	}
}

func TestDirectoryFacts(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		f1, _, f3, _ := factsFixture(t, s)
		// Each round's findings, as Rounds reads them.
		rs, err := s.Rounds(t.Context(), f1.ID, 0)
		if err != nil || len(rs) != 2 || rs[0].Failed != 0 || rs[0].ObservedRisk != 0 || rs[1].Failed != 1 || rs[1].ObservedRisk != 2 {
			t.Fatalf("f1's rounds = %+v, %v; want the older with 1 failed, 2 risks", rs, err)
		}
		checkFacts(t, s, false)
		// Hiding a change updates the last change; showing it again restores it.
		if err := s.HideChange(t.Context(), f1.ID, 2, true, "wrong fetch"); err != nil {
			t.Fatal(err)
		}
		checkFacts(t, s, true)
		if err := s.HideChange(t.Context(), f1.ID, 2, false, ""); err != nil {
			t.Fatal(err)
		}
		checkFacts(t, s, false)
		// A round stored late (older than the newest) changes neither the offline state
		// nor the newest signed round's facts.
		late := fullRound(f3.ID, time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC), time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC), "late")
		late.Results = []byte(`[{"id":"x","status":"OBSERVED_RISK"}]`)
		mustSave(t, s, late)
		_, rows := directoryRows(t, s, DirectoryQuery{UptimeTo: "2026-11-30"})
		if r := rows["f3"]; r.Round.Failed != 2 || r.Round.ObservedRisk != 0 || r.Entry.Uptime30CountedDays != 2 {
			t.Errorf("f3 after a late round: %+v, %d counted days; want 2 failed, 0 risks, 2 days", r.Round, r.Entry.Uptime30CountedDays)
		}
	})
}

// checkSignedRound checks d.SignedRound: the signed round that started at at (none when
// at is zero), with the findings, tool count and protocol version of row, the entry's
// directory row.
func checkSignedRound(t *testing.T, d EntryDigest, at time.Time, row RoundState) {
	t.Helper()
	r := d.SignedRound
	switch {
	case at.IsZero() && r == nil:
	case at.IsZero():
		t.Errorf("%s: SignedRound %+v, want none", d.Entry.Slug, *r)
	case r == nil:
		t.Errorf("%s: no SignedRound, want the round of %v", d.Entry.Slug, at)
	case !r.Signed || !r.StartedAt.Equal(at) || r.EntryID != d.Entry.ID || r.Failed != row.Failed || r.ObservedRisk != row.ObservedRisk ||
		r.ToolCount != row.ToolCount || r.ProtocolVersion != row.ProtocolVersion:
		t.Errorf("%s: SignedRound %+v; want the signed round of %v with the row's %+v", d.Entry.Slug, *r, at, row)
	}
}

// TestSaveRoundRefusesBadResults: results that are not a JSON array are refused (their
// findings could not be counted).
func TestSaveRoundRefusesBadResults(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		e, _, err := s.AddEntry(t.Context(), newTestEntry("bad"))
		if err != nil {
			t.Fatal(err)
		}
		for i, results := range []string{`{}`, `[`, `"x"`, `[1]`} {
			r := unsignedRound(e.ID, t0.Add(time.Duration(i)*time.Hour), t0)
			r.Results = []byte(results)
			if _, err := s.SaveRound(t.Context(), r); err == nil && results != `[1]` {
				t.Errorf("SaveRound with results %s succeeded", results)
			}
		}
	})
}

// TestMigrateDirectoryFacts feeds factsFixture to a store of migration 0009, migrates
// it: the rounds' findings and the entries' facts are backfilled, and read as a new
// store's (checkFacts); the migrated store then keeps them as a new one does.
func TestMigrateDirectoryFacts(t *testing.T) {
	for _, b := range testBackends {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			s := b.openEmpty(t)
			if err := s.(testMigrator).migrateForTest(ctx, 9); err != nil {
				t.Fatalf("migrating through 0009: %v", err)
			}
			f1, _, _, _ := factsFixture(t, s)
			if err := s.Migrate(ctx); err != nil {
				t.Fatalf("migrating to the newest: %v", err)
			}
			rs, err := s.Rounds(ctx, f1.ID, 0)
			if err != nil || len(rs) != 2 || rs[1].Failed != 1 || rs[1].ObservedRisk != 2 {
				t.Fatalf("f1's rounds after 0010 = %+v, %v", rs, err)
			}
			checkFacts(t, s, false)
			if err := s.HideChange(ctx, f1.ID, 2, true, "wrong fetch"); err != nil {
				t.Fatal(err)
			}
			checkFacts(t, s, true)
		})
	}
}

// TestMigrateSignedRound feeds factsFixture to a store of migration 0010 (which keeps
// the newest signed round's facts on the entry, not the round) and migrates: each
// entry's newest signed round is backfilled (checkFacts), and kept as rounds come: 60
// unsigned rounds that got an answer after f1's signed one leave it f1's, and a new
// signed round of f3 becomes f3's.
func TestMigrateSignedRound(t *testing.T) {
	for _, b := range testBackends {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			s := b.openEmpty(t)
			if err := s.(testMigrator).migrateForTest(ctx, 10); err != nil {
				t.Fatalf("migrating through 0010: %v", err)
			}
			f1, _, f3, _ := factsFixture(t, s)
			if err := s.Migrate(ctx); err != nil {
				t.Fatalf("migrating to the newest: %v", err)
			}
			checkFacts(t, s, false)

			digest := func(slug string) (EntryDigest, DirectoryRow) {
				t.Helper()
				d, err := s.EntryDigest(ctx, slug, EntryQuery{})
				if err != nil {
					t.Fatal(err)
				}
				_, rows := directoryRows(t, s, DirectoryQuery{UptimeTo: "2026-11-30"})
				return d, rows[slug]
			}
			signedAt := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
			for i := range 60 {
				at := time.Date(2026, 11, 29, 10, i, 0, 0, time.UTC)
				r := unsignedRound(f1.ID, at, at)
				r.Reach, r.Uptime, r.RetryAfter = "", UptimeAnswered, 0
				mustSave(t, s, r)
			}
			d, row := digest("f1")
			if d.Round == nil || d.Round.Signed || d.Round.Uptime != UptimeAnswered {
				t.Fatalf("f1's newest round %+v, want an unsigned one with an answer", d.Round)
			}
			if d.SignedRound == nil || d.SignedRound.Failed != 1 || d.SignedRound.ObservedRisk != 2 {
				t.Fatalf("f1's newest signed round after 60 unsigned ones: %+v, want the one with 1 failed, 2 risks", d.SignedRound)
			}
			checkSignedRound(t, d, signedAt, row.Round)

			at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
			r := fullRound(f3.ID, at, at, "f3")
			r.Results = []byte(`[{"id":"c0","status":"OBSERVED_RISK"}]`)
			id := mustSave(t, s, r)
			d, row = digest("f3")
			if d.SignedRound == nil || d.SignedRound.ID != id || d.Round == nil || d.Round.ID != id {
				t.Fatalf("f3 after a new signed round %d: newest %+v, newest signed %+v", id, d.Round, d.SignedRound)
			}
			checkSignedRound(t, d, at, row.Round)
			if row.Round.Failed != 0 || row.Round.ObservedRisk != 1 {
				t.Errorf("f3's row after a new signed round: %+v, want 1 risk", row.Round)
			}
		})
	}
}
