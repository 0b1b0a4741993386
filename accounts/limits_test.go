package accounts

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/store"
)

// TestCodesSurviveARestart: a code sent by one Service is checked by another with the
// same secret (the process restarted), and by none with another secret: the stored
// hash needs the secret, which is not in the store.
func TestCodesSurviveARestart(t *testing.T) {
	forEachStore(t, func(t *testing.T, st testStore) {
		f := newFixture(t, st, nil)
		ctx := t.Context()
		if err := f.svc.RequestCode(ctx, "restart@example.org", "c"); err != nil {
			t.Fatal(err)
		}
		code := f.mail.lastCode(t, "restart@example.org")
		other, err := New(Config{Store: st.Store, Mailer: f.mail, Secret: []byte(strings.Repeat("x", MinSecretSize)), Now: f.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := other.VerifyCode(ctx, "restart@example.org", code, "c"); !errors.Is(err, ErrBadCode) {
			t.Errorf("another secret checked the code: %v, want ErrBadCode", err)
		}
		restarted, err := New(Config{Store: st.Store, Mailer: f.mail, Secret: append([]byte(nil), testSecret...), Now: f.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := restarted.VerifyCode(ctx, "restart@example.org", code, "c"); err != nil {
			t.Errorf("the same secret after a restart: %v", err)
		}
	})
}

func TestClientKey(t *testing.T) {
	for in, want := range map[string]string{
		"198.51.100.7":               "198.51.100.7",
		"::ffff:198.51.100.7":        "198.51.100.7",
		"2001:db8:1:2:3:4:5:6":       "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff::1":       "2001:db8:1:2::/64",
		"2001:0db8:0001:0002::abcd":  "2001:db8:1:2::/64",
		"fe80::1%eth0":               "fe80::/64",
		"::1":                        "::/64",
		"not-an-ip":                  "not-an-ip",
		"":                           "",
		"2001:db8:1:3:3:4:5:6":       "2001:db8:1:3::/64",
		"198.51.100.8":               "198.51.100.8",
		"client-key-198.51.100.7":    "client-key-198.51.100.7",
		"2001:db8::1/64 (not an IP)": "2001:db8::1/64 (not an IP)",
	} {
		if got := ClientKey(in); got != want {
			t.Errorf("ClientKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestIPv6ClientsLimitedPerSlash64: a client that takes a new IPv6 address in its /64
// for every request still meets the per-client limits; another /64 and an IPv4
// client have their own.
func TestIPv6ClientsLimitedPerSlash64(t *testing.T) {
	forEachStore(t, func(t *testing.T, st testStore) {
		f := newFixture(t, st, nil)
		ctx := t.Context()
		for i := range ClientRequestsPerHour {
			if err := f.svc.RequestCode(ctx, fmt.Sprintf("r%d@example.org", i), fmt.Sprintf("2001:db8:7:7::%x", i+1)); err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
		}
		if err := f.svc.RequestCode(ctx, "one-more@example.org", "2001:db8:7:7:abcd::99"); !errors.Is(err, ErrTooMany) {
			t.Errorf("a new address in the same /64: %v, want ErrTooMany", err)
		}
		for _, client := range []string{"2001:db8:7:8::1", "198.51.100.7"} {
			if err := f.svc.RequestCode(ctx, "elsewhere@example.org", client); err != nil {
				t.Errorf("client %s: %v", client, err)
			}
		}
		for i := range ClientChecksPerHour {
			if _, err := f.svc.VerifyCode(ctx, "r0@example.org", "00000000", fmt.Sprintf("2001:db8:9:9:%x::1", i+1)); !errors.Is(err, ErrBadCode) {
				t.Fatalf("check %d: %v", i, err)
			}
		}
		if _, err := f.svc.VerifyCode(ctx, "r0@example.org", "00000000", "2001:db8:9:9:ffff::1"); !errors.Is(err, ErrTooMany) {
			t.Errorf("a check from a new address in the same /64: %v, want ErrTooMany", err)
		}
	})
}

// TestSiteCap: the site sends at most SiteCodesPerHour codes in any hour, to all
// addresses and from all clients together; past it every request gets ErrSiteBusy,
// whether or not its address has an account, and nothing is sent; an hour later
// codes go again. The cap counts only requests the other limits let through.
func TestSiteCap(t *testing.T) {
	forEachStore(t, func(t *testing.T, st testStore) {
		const capacity = 70 // two throttles of the store
		f := newFixture(t, st, nil)
		svc, err := New(Config{Store: st.Store, Mailer: f.mail, Secret: testSecret, SiteCodesPerHour: capacity, Now: f.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		// The known account's sign-in is the site's first code of the hour: it counts.
		// (Through the capped service itself: services with other caps file their
		// counts in other shards.)
		f.svc = svc
		f.signIn(t, "known@example.org", "setup")
		ctx := t.Context()
		// Refused by another limit: not counted against the site's cap.
		for i := range CodesPerAddressPerHour + 3 {
			err := svc.RequestCode(ctx, "popular@example.org", fmt.Sprintf("203.0.113.%d", i+1))
			if (i < CodesPerAddressPerHour) != (err == nil) {
				t.Fatalf("request %d for one address: %v", i, err)
			}
		}
		for i := range capacity - CodesPerAddressPerHour - 1 {
			if err := svc.RequestCode(ctx, fmt.Sprintf("s%d@example.org", i), fmt.Sprintf("198.51.100.%d", i%200+1)); err != nil {
				t.Fatalf("code %d: %v", i+CodesPerAddressPerHour+1, err)
			}
		}
		sent := f.mail.count()
		for _, addr := range []string{"known@example.org", "unknown@example.org"} {
			err := svc.RequestCode(ctx, addr, "192.0.2.1")
			if !errors.Is(err, ErrSiteBusy) || !strings.Contains(err.Error(), "try again later") {
				t.Errorf("RequestCode(%s) over the cap = %v, want ErrSiteBusy", addr, err)
			}
		}
		if n := f.mail.count(); n != sent {
			t.Errorf("%d codes sent over the site's cap", n-sent)
		}
		f.clock.Add(time.Hour + time.Second)
		if err := svc.RequestCode(ctx, "unknown@example.org", "192.0.2.1"); err != nil {
			t.Errorf("an hour later: %v", err)
		}
	})
}

func TestConfigSecretAndCap(t *testing.T) {
	st := openSQLiteStore(t)
	m := &mailbox{}
	for name, cfg := range map[string]Config{
		"a mailer without a secret": {Store: st.Store, Mailer: m},
		"a short secret":            {Store: st.Store, Mailer: m, Secret: make([]byte, MinSecretSize-1)},
		"a negative cap":            {Store: st.Store, Secret: testSecret, SiteCodesPerHour: -1},
		"a cap too high":            {Store: st.Store, Secret: testSecret, SiteCodesPerHour: MaxSiteCodesPerHour + 1},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	for _, n := range []int{1, store.MaxThrottleLimit, store.MaxThrottleLimit + 1, MaxSiteCodesPerHour} {
		if _, err := New(Config{Store: st.Store, Mailer: m, Secret: testSecret, SiteCodesPerHour: n}); err != nil {
			t.Errorf("a cap of %d: %v", n, err)
		}
		total := 0
		for i := range siteShards(n) {
			l := siteShardLimit(n, i)
			if l < 1 || l > store.MaxThrottleLimit {
				t.Errorf("a cap of %d: shard %d of limit %d", n, i, l)
			}
			total += l
		}
		if total != n {
			t.Errorf("a cap of %d is spread as %d", n, total)
		}
	}
}
