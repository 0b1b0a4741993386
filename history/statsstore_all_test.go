package history_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/history/stats"
	"github.com/probity-dev/probity/store"
)

// The known-answer test of the older tables of stats.Report (Scope, Summary, FirstDays,
// ChangesPerServer, ByToolCount, Intervals, Drift, Dataset, ProtocolVersions, Uptime)
// from the store: a small hand-designed dataset is stored with store.SaveRound the way
// the service writes rounds (real surfaces and fingerprints from attest.ComputeSurface,
// uptime days from the rounds' uptime classes), then history.LoadStats and
// stats.Compute read it back. Every expected value is counted by hand from the dataset
// below and the definitions in history/stats/doc.go.
//
// The cut-off is statsNow, 2026-11-30 12:00 UTC: the 30-day drift window starts
// (exclusive) 2026-10-31 12:00, the 7-day window and the dataset's 7 days 2026-11-23
// 12:00, and the uptime window is 2026-11-01 to 2026-11-29.
//
// Reads (signed full rounds) of the twelve remote entries, tools by name:
//
//	A  Oct 1 {a,b,c}; Oct 10 {a,b,c,d}; Oct 11 {a,b,c}; Oct 20 {a,b,c}; Nov 10 {b,c}; Nov 28 {b,c}
//	B  Oct 15 00:00 {x}; Oct 15 10:00 {x,y}; Oct 15 20:00 {y,z}; Nov 25 {y,z}
//	C  Nov 10 {p,q,r,s,t,u}; Nov 24 the same, p's description changed
//	D  Oct 25 {m(v: string)}; Nov 5 {m(v: integer)}; Nov 12 {n(id)}; Nov 26 {n(id required)}
//	E  claimed: Oct 28 00:00 {e1}; Oct 28 06:00 {e1,e2}; Nov 29 {e1,e2}
//	F  paginated (2 pages): Oct 10 {f1,f2}; Nov 24 {f1,f2,f3}
//	H  Oct 1 {h}; then its latest round Nov 27 is unsigned, no handshake
//	J  Nov 20 {j}, its latest round (outside the dataset's 7 days)
//
// and entries without reads: G (signed auth_required rounds, 401 at the handshake), I
// (unsigned, blocked), K (unsigned, no tools, handshake completed), L (unsigned,
// "not_probed", latest exactly at the dataset window's start). Reads are at 00:00 UTC
// unless a time is given; the daily status rounds that make up the uptime days are
// unsigned rounds at 06:00, all before their entry's latest round.

// plainTool is a tool object with an empty input schema.
func plainTool(name string) string {
	return fmt.Sprintf(`{"name":%q,"description":"Tool %s.","inputSchema":{"type":"object"}}`, name, name)
}

// storedRound is one round of the dataset.
type storedRound struct {
	at     time.Time
	reason store.DueReason
	// tools, when set, make a signed full round (a read) with that list.
	tools []string
	pages int
	// authRequired makes a signed auth_required round with a 401 at the handshake.
	authRequired bool
	// unsigned is the reason of an unsigned round.
	unsigned string
	uptime   store.UptimeClass
	version  string
	method   string
	proposed string
}

type allRig struct {
	t  *testing.T
	st store.Store
	n  int
}

func (r *allRig) entry(slug string, claimed bool) store.Entry {
	r.t.Helper()
	e, _, err := r.st.AddEntry(r.t.Context(), store.NewEntry{SlugBase: slug, Kind: store.KindRemote,
		Locator: "https://" + slug + ".example.com/mcp", Source: "import"})
	if err != nil {
		r.t.Fatal(err)
	}
	if claimed {
		if err := claimEntry(r.t.Context(), r.st, e); err != nil {
			r.t.Fatal(err)
		}
		e.Claimed = true
	}
	return e
}

func (r *allRig) save(e store.Entry, s storedRound) {
	r.t.Helper()
	r.n++
	rd := &store.Round{EntryID: e.ID, DueAt: s.at, Reason: s.reason, RoundID: fmt.Sprintf("r%d-%d", e.ID, r.n),
		StartedAt: s.at, FinishedAt: s.at.Add(time.Second), Uptime: s.uptime,
		ProtocolVersion: s.version, HandshakeMethod: s.method, ProposedVersion: s.proposed,
		Pages: s.pages, Results: []byte(`[]`), Timings: []byte(`{}`)}
	if rd.Reason == "" {
		rd.Reason = store.ReasonCadence
	}
	if rd.Uptime == "" {
		rd.Uptime = store.UptimeAnswered
	}
	signed := s.tools != nil || s.authRequired
	switch {
	case s.tools != nil:
		raw := make([]json.RawMessage, len(s.tools))
		for i, t := range s.tools {
			raw[i] = json.RawMessage(t)
		}
		fp, doc, err := attest.ComputeSurface(raw, nil)
		if err != nil {
			r.t.Fatal(err)
		}
		rd.Coverage, rd.Fingerprints, rd.Surface, rd.ToolCount = string(attest.CoverageFull), &fp, doc, len(raw)
		if rd.Pages == 0 {
			rd.Pages = 1
		}
	case s.authRequired:
		rd.Coverage = string(attest.CoverageAuthRequired)
		rd.Login = store.Login{Unauthorized: store.LoginAtHandshake, Challenge: store.ChallengeNone}
	default:
		rd.UnsignedReason = s.unsigned
	}
	if signed {
		rd.Envelope = []byte(`{"payload":"","payloadType":"application/vnd.in-toto+json","signatures":[]}`)
		rd.KeyID, rd.PayloadDigest = "0000000000000000", fmt.Sprintf("%064x", r.n)
	}
	if _, err := r.st.SaveRound(r.t.Context(), rd); err != nil {
		r.t.Fatalf("round %d of entry %d at %s: %v", r.n, e.ID, s.at, err)
	}
}

// status stores the daily status rounds of e at 06:00 on November's days from to to:
// answered (online) unless the day is in offline.
func (r *allRig) status(e store.Entry, from, to int, offline ...int) {
	r.t.Helper()
	for d := from; d <= to; d++ {
		s := storedRound{at: nov(d, 6), reason: store.ReasonStatus, unsigned: stats.NoTools, uptime: store.UptimeAnswered}
		for _, o := range offline {
			if d == o {
				s.unsigned, s.uptime = stats.NoHandshake, store.UptimeNoAnswer
			}
		}
		r.save(e, s)
	}
}

func oct(day, hour int) time.Time { return time.Date(2026, 10, day, hour, 0, 0, 0, time.UTC) }

// allScenario stores the dataset described at the top of the file.
func allScenario(t *testing.T, st store.Store) {
	r := &allRig{t: t, st: st}
	read := func(at time.Time, version string, tools ...string) storedRound {
		return storedRound{at: at, tools: tools, version: version, method: stats.MethodInitialize, proposed: "2025-11-25"}
	}
	abc := []string{plainTool("a"), plainTool("b"), plainTool("c")}

	a := r.entry("a", false)
	r.save(a, read(oct(1, 0), "2025-11-25", abc...))
	r.save(a, read(oct(10, 0), "2025-11-25", append(abc[:3:3], plainTool("d"))...))
	r.save(a, read(oct(11, 0), "2025-11-25", abc...))
	r.save(a, read(oct(20, 0), "2025-11-25", abc...))
	r.save(a, read(nov(10, 0), "2025-11-25", plainTool("b"), plainTool("c")))
	r.status(a, 11, 27)
	r.save(a, read(nov(28, 0), "2025-11-25", plainTool("b"), plainTool("c")))

	b := r.entry("b", false)
	r.save(b, read(oct(15, 0), "2025-11-25", plainTool("x")))
	r.save(b, read(oct(15, 10), "2025-11-25", plainTool("x"), plainTool("y")))
	r.save(b, read(oct(15, 20), "2025-11-25", plainTool("y"), plainTool("z")))
	r.status(b, 1, 24, 21, 22, 23, 24)
	r.save(b, read(nov(25, 0), "2025-11-25", plainTool("y"), plainTool("z")))

	c := r.entry("c", false)
	cTools := func(pDesc string) []string {
		ts := []string{`{"name":"p","description":"` + pDesc + `","inputSchema":{"type":"object"}}`}
		for _, n := range []string{"q", "r", "s", "t", "u"} {
			ts = append(ts, plainTool(n))
		}
		return ts
	}
	r.status(c, 1, 23, 5)
	r.save(c, read(nov(10, 0), "2025-06-18", cTools("Reads p.")...))
	r.save(c, read(nov(24, 0), "2025-06-18", cTools("Reads p in full.")...))

	d := r.entry("d", false)
	m := func(typ string) string {
		return `{"name":"m","description":"M.","inputSchema":{"type":"object","properties":{"v":{"type":"` + typ + `"}}}}`
	}
	const n = `{"name":"n","description":"N.","inputSchema":{"type":"object","properties":{"id":{"type":"string"}}}}`
	const nRequired = `{"name":"n","description":"N.","inputSchema":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}}`
	discover := func(s storedRound) storedRound {
		s.method, s.proposed = stats.MethodDiscover, "2026-07-28"
		return s
	}
	r.save(d, discover(read(oct(25, 0), "2026-07-28", m("string"))))
	r.save(d, discover(read(nov(5, 0), "2026-07-28", m("integer"))))
	r.save(d, discover(read(nov(12, 0), "2026-07-28", n)))
	r.status(d, 9, 25, 15)
	r.save(d, discover(read(nov(26, 0), "2026-07-28", nRequired)))

	e := r.entry("e", true)
	r.save(e, read(oct(28, 0), "2025-11-25", plainTool("e1")))
	r.save(e, read(oct(28, 6), "2025-11-25", plainTool("e1"), plainTool("e2")))
	r.status(e, 22, 28, 22, 23, 24, 25)
	r.save(e, read(nov(29, 0), "2025-11-25", plainTool("e1"), plainTool("e2")))

	f := r.entry("f", false)
	paged := func(s storedRound) storedRound { s.pages = 2; return s }
	r.save(f, paged(read(oct(10, 0), "2099-01-01", plainTool("f1"), plainTool("f2"))))
	r.save(f, paged(read(nov(24, 0), "2099-01-01", plainTool("f1"), plainTool("f2"), plainTool("f3"))))

	g := r.entry("g", false)
	for day := 20; day <= 28; day++ {
		r.save(g, storedRound{at: nov(day, 6), reason: store.ReasonStatus, authRequired: true, proposed: "2025-11-25"})
	}
	r.save(g, storedRound{at: nov(29, 0), authRequired: true, proposed: "2025-11-25"})

	h := r.entry("h", false)
	r.save(h, read(oct(1, 0), "2025-11-25", plainTool("h")))
	r.status(h, 20, 26, 20, 21, 22, 23, 24, 25, 26)
	r.save(h, storedRound{at: nov(27, 0), unsigned: stats.NoHandshake, uptime: store.UptimeNoAnswer, proposed: "2025-11-25"})

	i := r.entry("i", false)
	for day := 25; day <= 27; day++ {
		r.save(i, storedRound{at: nov(day, 6), reason: store.ReasonStatus, unsigned: stats.Blocked, uptime: store.UptimeInconclusive})
	}
	r.save(i, storedRound{at: nov(28, 0), unsigned: stats.Blocked, uptime: store.UptimeInconclusive})

	j := r.entry("j", false)
	r.status(j, 12, 19)
	r.save(j, read(nov(20, 0), "2025-11-25", plainTool("j")))

	k := r.entry("k", false)
	r.status(k, 27, 28)
	r.save(k, storedRound{at: nov(29, 0), unsigned: stats.NoTools, version: "2025-06-18", method: stats.MethodInitialize, proposed: "2025-11-25"})

	l := r.entry("l", false)
	r.save(l, storedRound{at: nov(23, 12), unsigned: "not_probed", uptime: store.UptimeInconclusive})
}

// TestStatsStoreAllTables: the older tables of the report, from the stored dataset,
// have the answers counted by hand.
func TestStatsStoreAllTables(t *testing.T) {
	statsBackends(t, func(t *testing.T, st store.Store) {
		allScenario(t, st)
		opt := stats.Options{Now: statsNow}
		servers, err := history.LoadStats(t.Context(), st, opt)
		if err != nil {
			t.Fatal(err)
		}
		rep := stats.Compute(servers, opt)
		part := func(n, of int) stats.Part {
			if of == 0 {
				return stats.Part{Count: n}
			}
			return stats.Part{Count: n, Share: float64(n) / float64(of)}
		}
		check := func(name string, got, want any) {
			t.Helper()
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s\n got %+v\nwant %+v", name, got, want)
			}
		}

		// Scope: A, B, C, D, E, F, H and J have reads (8); E is claimed, F paginated; the
		// other 6 are eligible, of which A, B, C and D were read twice or more (H and J
		// once).
		check("Scope", rep.Scope, stats.Scope{WithReads: 8, ExcludedClaimed: 1, ExcludedPaginated: 1, Eligible: 6, ReadTwice: 4})

		// Summary over A, B, C, D. Toolset changes: A Oct 10 (+d), Oct 11 (−d), Nov 10 (−a);
		// B Oct 15 10:00 (+y), 20:00 (−x +z); D Nov 12 (−m +n). C's and D's other reads
		// keep their names. 6 changes on 3 servers of 4.
		check("Summary", rep.Summary, stats.Summary{
			ReadTwice: 4, Changed: part(3, 4), Changes: 6,
			NamesAdded:   4, // d, y, z, n
			NamesRemoved: 4, // d, a, x, m
			// A's three and B's first touch one name; B's second and D's touch two.
			SingleNameChanges: 4,
			// Names touched: 1, 1, 1, 1, 2, 2 → the median is (1+1)/2.
			MedianNamesPerChange: 1,
			EndedMore:            1, // B: 1 tool first, 2 last
			EndedFewer:           1, // A: 3 first, 2 last
			EndedSame:            1, // D: 1 and 1
			// A's Oct 11 list {a,b,c} is its Oct 1 list, not the one just before.
			ReturnsToEarlier: 1,
			// Observation windows: A Oct 1 → Nov 28 = 58 days, B Oct 15 → Nov 25 = 41,
			// C Nov 10 → Nov 24 = 14, D Oct 25 → Nov 26 = 32; sorted 14, 32, 41, 58: the
			// median is (32+41)/2, the largest 58.
			MedianObservedDays: 36.5, MaxObservedDays: 58,
		})

		// FirstDays: the first change lies 9 days after the first read for A, 10 hours
		// for B, 18 days for D; C has none.
		check("FirstDays", rep.FirstDays, []stats.FirstDays{
			{Days: 7, Servers: 4, Changed: part(1, 4)},  // every window ≥ 7 days; B only
			{Days: 14, Servers: 4, Changed: part(2, 4)}, // C's 14 days are at least 14; A and B
			{Days: 21, Servers: 3, Changed: part(3, 3)}, // C out; A, B and D
		})

		// ChangesPerServer: C 0, D 1, B 2, A 3 changes. A (3 or more) has 3 of the 6
		// changes. Windows: 58 + 41 + 14 + 32 = 145 days, over 6 changes.
		check("ChangesPerServer", rep.ChangesPerServer, stats.ChangesPerServer{
			Servers: 4, Zero: 1, One: 1, Two: 1, ThreeToFive: 1,
			Frequent: part(1, 4), FrequentChanges: part(3, 6), MaxChanges: 3,
			ObservedDays: 145, DaysPerChange: 145.0 / 6,
		})

		// ByToolCount: A, B, C, D are observed at least 14 days (C exactly 14). First reads:
		// A 3 tools, B 1, D 1 (0–5); C 6 (6–10). Changed within 14 days: A (9 days), B
		// (10 hours); D's first change came after 18 days, C has none.
		check("ByToolCount", rep.ByToolCount, []stats.ToolCountRow{
			{MinTools: 0, MaxTools: 5, Servers: 3, Changed: part(2, 3)},
			{MinTools: 6, MaxTools: 10, Servers: 1, Changed: part(0, 1)},
			{MinTools: 11, MaxTools: 20},
			{MinTools: 21, MaxTools: 50},
			{MinTools: 51, MaxTools: 0},
		})

		// Intervals: A (3 changes) Oct 10 → Oct 11 = 24 h and Oct 11 → Nov 10 = 30 days
		// = 720 h; B (2 changes) 10 h. Sorted 10, 24, 720; type 7: median at rank 1 =
		// 24, lower quartile at rank 0.5 = 10 + 0.5×14 = 17, upper at rank 1.5 =
		// 24 + 0.5×696 = 372. Only the 10 h interval is at most 12 h.
		check("Intervals", rep.Intervals, stats.Intervals{
			Servers: 2, Intervals: 3, MedianHours: 24, LowerQuartileHours: 17, UpperQuartileHours: 372,
			Within12h: part(1, 3),
		})

		// Drift, 7 days (from Nov 23 12:00): A (Nov 28), B (Nov 25), C (Nov 24) and D
		// (Nov 26) have reads before and inside; J (Nov 20) has none inside, H none
		// inside. Changes inside: C's description of p (description only), D's newly
		// required id (schema with the same names; breaking).
		// Drift, 30 days (from Oct 31 12:00): A, B and D have reads before and inside; C's
		// first read (Nov 10) and J's (Nov 20) lie inside, H has none inside. A: Nov 10
		// removed a (tools removed; breaking). D: Nov 5 v string → integer (schema,
		// breaking), Nov 12 m → n (tools added and removed, breaking), Nov 26 (schema):
		// added or removed comes first. B has no change inside.
		check("Drift", rep.Drift, []stats.DriftWindow{
			{Days: 7, From: nov(23, 12), To: statsNow, Servers: 4, AnyChange: part(2, 4),
				ToolsAddedOrRemoved: part(0, 4), SchemaChangedNamesSame: part(1, 4), DescriptionOnly: part(1, 4), Breaking: part(1, 4)},
			{Days: 30, From: oct(31, 12), To: statsNow, Servers: 3, AnyChange: part(2, 3),
				ToolsAddedOrRemoved: part(2, 3), SchemaChangedNamesSame: part(0, 3), DescriptionOnly: part(0, 3), Breaking: part(2, 3)},
		})

		// Dataset: 12 entries; latest rounds from Nov 23 12:00 (L, exactly at the start,
		// included) to Nov 30 12:00: all but J (Nov 20) = 11. Signed full: A, B, C, D, E,
		// F; signed auth_required: G; unsigned: H (no handshake), I (blocked), K (no
		// tools), L (not_probed: another reason).
		check("Dataset", rep.Dataset, stats.Dataset{
			Endpoints: 12, WithRecentRound: 11,
			SignedFull: part(6, 11), SignedAuthRequired: part(1, 11), Unsigned: part(4, 11), OtherCategory: part(0, 11),
			NoHandshake: 1, NoTools: 1, Blocked: 1, OtherReason: 1,
		})

		// ProtocolVersions over the 11: 2025-11-25 A, B, E; 2025-06-18 C, K; 2026-07-28 D;
		// 2099-01-01 F (not a known version: other, listed last) = 7 with a version.
		// Without: I blocked, G authentication required (401 at the handshake), H no
		// handshake, L another cause.
		check("ProtocolVersions", rep.ProtocolVersions, stats.ProtocolVersions{
			Known: stats.DefaultKnownVersions, Servers: 7,
			Versions: []stats.VersionCount{
				{Version: "2025-11-25", Part: part(3, 7)},
				{Version: "2025-06-18", Part: part(2, 7)},
				{Version: "2026-07-28", Part: part(1, 7)},
				{Version: stats.OtherVersion, Part: part(1, 7)},
			},
			NoVersion: 4, Blocked: 1, AuthRequired: 1, NoHandshake: 1, Other: 1,
		})

		// Uptime, Nov 1 to Nov 29, at least 7 counted days (J is not in the dataset):
		//   A  Nov 10 read, status Nov 11–27, Nov 28 read: 19 online of 19 → 100
		//   B  status Nov 1–20 online, 21–24 offline, Nov 25 read: 21 of 25 = 84 → 80–94
		//   C  status Nov 1–23 (Nov 5 offline), reads Nov 10, 24: 23 of 24 = 95.8 → 96 → 95–99
		//   D  reads Nov 5, 12, 26, status Nov 9–25 (Nov 15 offline): 18 of 19 = 94.7,
		//      rounded half up 95 → 95–99 (not 80–94)
		//   E  status Nov 22–25 offline, 26–28 online, Nov 29 read: 4 of 8 = 50 → 50–79
		//   G  auth_required rounds Nov 20–29, a 401 is an answer: 10 of 10 → 100
		//   H  status Nov 20–26 offline, Nov 27 no answer: 0 of 8 → below 50
		//   F  1 counted day (Nov 24), I 0 (inconclusive only), K 3, L 0: too few
		check("Uptime", rep.Uptime, stats.Uptime{From: "2026-11-01", To: "2026-11-29", MinDays: 7, TooFewDays: 4,
			Groups: []stats.UptimeRow{
				{Group: stats.SignedFull, Servers: 5, Pct100: part(1, 5), Pct95To99: 2, Pct80To94: 1, Pct50To79: 1}, // A; C, D; B; E
				{Group: stats.SignedAuthRequired, Servers: 1, Pct100: part(1, 1)},                                   // G
				{Group: stats.Unsigned, Servers: 1, Pct100: part(0, 1), Below50: 1},                                 // H
				{Group: stats.GroupAll, Servers: 7, Pct100: part(2, 7), Pct95To99: 2, Pct80To94: 1, Pct50To79: 1, Below50: 1},
			}})
	})
}
