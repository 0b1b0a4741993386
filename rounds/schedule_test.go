package rounds

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/checks"
	hist "github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/store"
)

var t0 = time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)

func remote(id int64) store.Entry {
	return store.Entry{ID: id, Kind: store.KindRemote, Locator: fmt.Sprintf("https://mcp%d.example.com/mcp", id)}
}

func TestUptimeClass(t *testing.T) {
	cases := []struct {
		reach checks.ReachFailure
		stop  checks.StopReason
		want  store.UptimeClass
	}{
		{checks.ReachOK, checks.StopNone, store.UptimeAnswered},
		{checks.ReachOK, checks.StopTimeBudget, store.UptimeAnswered}, // it answered, then ran out of time
		{checks.ReachOK, checks.StopRateLimited, store.UptimeInconclusive},
		{checks.ReachDNS, checks.StopUnreachable, store.UptimeNoAnswer},
		{checks.ReachConnect, checks.StopUnreachable, store.UptimeNoAnswer},
		{checks.ReachTimeout, checks.StopTimeBudget, store.UptimeNoAnswer},
		{checks.ReachTLS, checks.StopUnreachable, store.UptimeNoAnswer},
		{checks.ReachHTTP5xx, checks.StopNone, store.UptimeNoAnswer},
		{checks.ReachRateLimited, checks.StopRateLimited, store.UptimeInconclusive},
		{checks.ReachBlocked, checks.StopUnreachable, store.UptimeInconclusive},
	}
	for _, c := range cases {
		obs := &checks.Observation{Reach: checks.Reach{Failure: c.reach}, Stop: c.stop}
		if got := UptimeClass(obs); got != c.want {
			t.Errorf("UptimeClass(reach %q, stop %q) = %s, want %s", c.reach, c.stop, got, c.want)
		}
	}
	// A 401 challenge is an answer.
	obs := &checks.Observation{Reach: checks.Reach{FirstStatus: 401}, Handshake: checks.Handshake{Unauthorized: true}}
	if got := UptimeClass(obs); got != store.UptimeAnswered {
		t.Errorf("401 challenge: %s, want answered", got)
	}
}

func TestRoundIDMatchesSchema(t *testing.T) {
	pattern := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)
	due := store.Due{EntryID: 1<<63 - 1, At: time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC)}
	for _, r := range []store.DueReason{store.ReasonCadence, store.ReasonConfirm, store.ReasonStatus, store.ReasonManual} {
		due.Reason = r
		id := RoundID(due, "r"+stamp(due.At))
		if !pattern.MatchString(id) {
			t.Errorf("RoundID(%s) = %q does not match the schema's pattern", r, id)
		}
	}
	got := RoundID(store.Due{EntryID: 42, Reason: store.ReasonCadence, At: time.Date(2026, 11, 30, 6, 45, 12, 345e6, time.UTC)}, "")
	if got != "c20261130T064512345Z-e42" {
		t.Errorf("RoundID = %q", got)
	}
}

func TestFirstDueSpreads(t *testing.T) {
	p := Schedule{}.withDefaults()
	seen := map[time.Time]bool{}
	for i := range 200 {
		e := remote(0) // no id yet: the spread comes from the locator
		e.Locator = fmt.Sprintf("https://mcp%d.example.com/mcp", i)
		ds := p.FirstDue(e, t0)
		if len(ds) != 3 || ds[0].Reason != store.ReasonCadence || ds[1].Reason != store.ReasonStatus || ds[2].Reason != store.ReasonSupply {
			t.Fatalf("FirstDue = %+v", ds)
		}
		if !ds[2].At.After(ds[0].At) {
			t.Errorf("the supply checks (%v) come before the first round (%v)", ds[2].At, ds[0].At)
		}
		if d := ds[0].At.Sub(t0); d < 0 || d >= p.FirstSpread {
			t.Errorf("first cadence round %v after creation, want within [0, %v)", d, p.FirstSpread)
		}
		if d := ds[1].At.Sub(t0); d < 12*time.Hour || d >= 24*time.Hour {
			t.Errorf("first status check %v after creation, want within [12h, 24h)", d)
		}
		seen[ds[0].At] = true
	}
	if len(seen) < 190 {
		t.Errorf("200 entries got only %d distinct first due times", len(seen))
	}
	// Packages and repositories: supply checks within the spread (their first read of
	// the version or manifest is the baseline), a daily status check, and the cheap
	// cadence read a cadence after the supply checks; no probe rounds.
	for _, kind := range []string{store.KindNPM, store.KindPyPI, store.KindGitHub} {
		ds := p.FirstDue(store.Entry{Kind: kind, Locator: "pkg:npm/x"}, t0)
		if len(ds) != 3 || ds[0].Reason != store.ReasonSupply || ds[1].Reason != store.ReasonStatus || ds[2].Reason != store.ReasonCadence ||
			ds[0].At.Sub(t0) >= p.FirstSpread {
			t.Fatalf("%s entry first due times: %+v", kind, ds)
		}
		if d := ds[2].At.Sub(ds[0].At); d < DefaultCadence*9/10 || d > DefaultCadence*11/10 {
			t.Errorf("%s entry: first cadence read %v after the supply checks, want 3h ± 10%%", kind, d)
		}
	}
}

// TestCadenceSettings: seed 000's 3 h for remotes, packages and bundle manifests alike,
// 15 min for claimed entries, an entry's own cadence over both, and the settings.
func TestCadenceSettings(t *testing.T) {
	p := Schedule{}
	claimed := remote(2)
	claimed.Claimed = true
	own := remote(3)
	own.Cadence, own.Claimed = 40*time.Minute, true
	cases := []struct {
		e    store.Entry
		want time.Duration
	}{
		{remote(1), 3 * time.Hour},
		{store.Entry{ID: 4, Kind: store.KindNPM, Locator: "pkg:npm/a"}, 3 * time.Hour},
		{store.Entry{ID: 5, Kind: store.KindPyPI, Locator: "pkg:pypi/a"}, 3 * time.Hour},
		{store.Entry{ID: 6, Kind: store.KindGitHub, Locator: "https://github.com/a/b"}, 3 * time.Hour},
		{claimed, 15 * time.Minute},
		{own, 40 * time.Minute},
	}
	for _, c := range cases {
		if got := p.CadenceOf(c.e); got != c.want {
			t.Errorf("%s entry %d (claimed %v): cadence %v, want %v", c.e.Kind, c.e.ID, c.e.Claimed, got, c.want)
		}
	}
	// A cadence shorter than the default claimed cadence is the claimed one too.
	if short := (Schedule{Cadence: 10 * time.Minute}); short.CadenceOf(claimed) != 10*time.Minute || short.Validate() != nil {
		t.Errorf("a 10 min cadence: claimed %v, %v", short.CadenceOf(claimed), short.Validate())
	}
	set := Schedule{Cadence: 6 * time.Hour, ClaimedCadence: 30 * time.Minute}
	if set.CadenceOf(remote(1)) != 6*time.Hour || set.CadenceOf(claimed) != 30*time.Minute {
		t.Errorf("settings not followed: %v, %v", set.CadenceOf(remote(1)), set.CadenceOf(claimed))
	}
	// The jitter of a claimed entry stays within ±10 % of its 15 min.
	for i := range 50 {
		from := t0.Add(time.Duration(i) * time.Second)
		if d := p.nextCadence(claimed, from, from).Sub(from); d < 13*time.Minute+30*time.Second || d > 16*time.Minute+30*time.Second {
			t.Errorf("claimed entry: next read %v later, want 15m ± 10%%", d)
		}
	}
}

func TestScheduleValidate(t *testing.T) {
	good := []Schedule{
		{},
		{Cadence: 3 * time.Hour, ClaimedCadence: 15 * time.Minute},
		{Cadence: MinCadence, ClaimedCadence: MinCadence},
		{Cadence: MaxCadence},
		{Cadence: 12 * time.Hour, ClaimedCadence: 12 * time.Hour, FirstSpread: MaxFirstSpread},
	}
	for _, s := range good {
		if err := s.Validate(); err != nil {
			t.Errorf("%+v: %v", s, err)
		}
	}
	bad := []struct {
		s    Schedule
		want string
	}{
		{Schedule{Cadence: 30 * time.Second}, "the cadence is 30s; it must be from 2m0s to 168h0m0s"},
		{Schedule{Cadence: 8 * 24 * time.Hour}, "the cadence is 192h0m0s; it must be from 2m0s to 168h0m0s"},
		{Schedule{ClaimedCadence: 10 * time.Second}, "the claimed cadence is 10s; it must be from 2m0s to 168h0m0s"},
		{Schedule{ClaimedCadence: 4 * time.Hour}, "the claimed cadence (4h0m0s) is longer than the cadence (3h0m0s); claimed entries are read at least as often"},
		{Schedule{Cadence: 10 * time.Minute, ClaimedCadence: 15 * time.Minute}, "the claimed cadence (15m0s) is longer than the cadence (10m0s)"},
		{Schedule{Cadence: -time.Hour}, "the cadence is -1h0m0s; it must not be negative"},
		{Schedule{FirstSpread: 25 * time.Hour}, "the first spread is 25h0m0s; it must be at most 24h0m0s"},
	}
	for _, c := range bad {
		err := c.s.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.s, err, c.want)
		}
	}
}

// TestConfirmationFollowsHistoryRules: the schedule's confirmation delays are the
// history's (one owner): a minute, two hours for an emptied list, and whatever the
// rules are given.
func TestConfirmationFollowsHistoryRules(t *testing.T) {
	e := remote(3)
	ok := &checks.Observation{}
	prev := &store.RoundSummary{Fingerprints: fps("sha256:a", "sha256:i")}
	cadence := store.Due{EntryID: 3, Reason: store.ReasonCadence, At: t0}
	for _, c := range []struct {
		rules       hist.Rules
		fp          *attest.Fingerprints
		least, most time.Duration
	}{
		{hist.Rules{}, fps("sha256:b", "sha256:i"), time.Minute, time.Minute + 30*time.Second},
		{hist.Rules{}, fps(emptySurface, "sha256:i"), 2 * time.Hour, 2*time.Hour + 30*time.Second},
		{hist.Rules{ConfirmAfter: 5 * time.Minute}, fps("sha256:b", "sha256:i"), 5 * time.Minute, 5*time.Minute + 30*time.Second},
		{hist.Rules{ConfirmAfter: time.Second}, fps("sha256:b", "sha256:i"), time.Minute, time.Minute + 30*time.Second}, // never under a minute
		{hist.Rules{EmptyConfirmAfter: 3 * time.Hour}, fps(emptySurface, "sha256:i"), 3 * time.Hour, 3*time.Hour + 30*time.Second},
	} {
		p := Schedule{History: c.rules}
		var at time.Time
		for _, u := range p.dueUpdates(e, cadence, ok, c.fp, history{prev: prev}, t0) {
			if u.Reason == store.ReasonConfirm {
				at = u.At
			}
		}
		want, _ := c.rules.Confirmation()
		if d := at.Sub(t0); d < c.least || d > c.most {
			t.Errorf("rules %+v, surface %s: confirmation %v later, want %v to %v (rules' delay %v)", c.rules, c.fp.Surface, d, c.least, c.most, want)
		}
	}
}

func TestNextCadenceJitter(t *testing.T) {
	p := Schedule{}.withDefaults()
	claimed := remote(7)
	claimed.Claimed = true
	own := remote(8)
	own.Cadence = time.Hour
	for _, e := range []store.Entry{remote(1), claimed, own} {
		c := p.CadenceOf(e)
		for i := range 100 {
			from := t0.Add(time.Duration(i) * time.Minute)
			next := p.nextCadence(e, from, from)
			if d := next.Sub(from); d < c-c/10 || d > c+c/10 {
				t.Errorf("entry %d: next round %v after the due time, want %v ± 10%%", e.ID, d, c)
			}
			if again := p.nextCadence(e, from, from); !again.Equal(next) {
				t.Errorf("jitter is not deterministic: %v then %v", next, again)
			}
		}
	}
	// A round that ran late (the service was down) is rescheduled from now.
	e := remote(1)
	now := t0.Add(48 * time.Hour)
	if next := p.nextCadence(e, t0, now); next.Before(now.Add(p.Cadence * 9 / 10)) {
		t.Errorf("late round rescheduled to %v, before now + cadence", next)
	}
}

func fps(surface, instructions string) *attest.Fingerprints {
	return &attest.Fingerprints{Surface: surface, Instructions: instructions, Toolset: "sha256:t", Schema: "sha256:s"}
}

func TestDueUpdates(t *testing.T) {
	p := Schedule{}.withDefaults()
	e := remote(3)
	ok := &checks.Observation{Handshake: checks.Handshake{ServerVersion: "1.0.0"}}
	prev := &store.RoundSummary{Fingerprints: fps("sha256:a", "sha256:i"), ServerVersion: "1.0.0"}
	find := func(ups []store.DueUpdate, r store.DueReason) (store.DueUpdate, bool) {
		for _, u := range ups {
			if u.Reason == r {
				return u, true
			}
		}
		return store.DueUpdate{}, false
	}
	cadence := store.Due{EntryID: 3, Reason: store.ReasonCadence, At: t0}

	// Same surface: the next cadence round only.
	ups := p.dueUpdates(e, cadence, ok, fps("sha256:a", "sha256:i"), history{prev: prev}, t0)
	if len(ups) != 1 || ups[0].Reason != store.ReasonCadence {
		t.Fatalf("unchanged round: %+v", ups)
	}
	// Changed surface, instructions or version: a confirmation at least a minute later.
	for name, c := range map[string]struct {
		obs *checks.Observation
		fp  *attest.Fingerprints
	}{
		"surface":      {ok, fps("sha256:b", "sha256:i")},
		"instructions": {ok, fps("sha256:a", "sha256:j")},
		"version":      {&checks.Observation{Handshake: checks.Handshake{ServerVersion: "1.1.0"}}, fps("sha256:a", "sha256:i")},
	} {
		ups := p.dueUpdates(e, cadence, c.obs, c.fp, history{prev: prev}, t0)
		u, found := find(ups, store.ReasonConfirm)
		if !found {
			t.Errorf("%s changed: no confirmation in %+v", name, ups)
			continue
		}
		if d := u.At.Sub(t0); d < time.Minute || d > 2*time.Minute {
			t.Errorf("%s changed: confirmation %v later, want 1–2 min", name, d)
		}
	}
	// An emptied list: confirmation two hours later.
	ups = p.dueUpdates(e, cadence, ok, fps(emptySurface, "sha256:i"), history{prev: prev}, t0)
	if u, _ := find(ups, store.ReasonConfirm); u.At.Sub(t0) < 2*time.Hour {
		t.Errorf("emptied list: confirmation %v later, want ≥ 2h", u.At.Sub(t0))
	}
	// A confirmation round clears its due time and schedules no other confirmation.
	confirm := store.Due{EntryID: 3, Reason: store.ReasonConfirm, At: t0}
	ups = p.dueUpdates(e, confirm, ok, fps("sha256:c", "sha256:i"), history{prev: prev}, t0)
	if len(ups) != 1 || ups[0].Reason != store.ReasonConfirm || !ups[0].At.IsZero() {
		t.Errorf("confirmation round: %+v, want only the confirmation cleared", ups)
	}
	// No baseline yet: nothing to confirm.
	ups = p.dueUpdates(e, cadence, ok, fps("sha256:b", "sha256:i"), history{}, t0)
	if _, found := find(ups, store.ReasonConfirm); found {
		t.Errorf("first round scheduled a confirmation: %+v", ups)
	}
	// Rate limited: exponential backoff, at least Retry-After, at most MaxBackoff.
	limited := &checks.Observation{Reach: checks.Reach{Failure: checks.ReachRateLimited}, Stop: checks.StopRateLimited, RetryAfter: 3 * time.Hour}
	var last time.Duration
	for n := range 8 {
		ups := p.dueUpdates(e, cadence, limited, nil, history{rateLimited: n}, t0)
		u, _ := find(ups, store.ReasonCadence)
		d := u.At.Sub(t0)
		if d < 3*time.Hour || d > p.MaxBackoff+p.MaxBackoff/10 || d < last {
			t.Errorf("rate limited after %d: next round %v later (previous %v)", n, d, last)
		}
		last = d
	}
	if last < p.MaxBackoff {
		t.Errorf("backoff never reached the cap: %v", last)
	}
	// Status checks move on by a day.
	status := store.Due{EntryID: 3, Reason: store.ReasonStatus, At: t0}
	ups = p.dueUpdates(e, status, ok, nil, history{}, t0.Add(time.Minute))
	if u, _ := find(ups, store.ReasonStatus); !u.At.Equal(t0.Add(24 * time.Hour)) {
		t.Errorf("status: next %v, want a day later", u.At)
	}
}
