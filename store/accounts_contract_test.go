package store

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The contract of the accounts tables (migration 0011, sql_accounts.go), on every
// backend.

// digest is a 32-byte test hash of s.
func digest(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// rawCount returns the result of a count(*) query on s's database.
func rawCount(t *testing.T, s Store, query string) string {
	t.Helper()
	rows, err := QueryForTest(t.Context(), s, query, 1)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return rows[0][0]
}

func TestAccountsFindOrCreate(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		a, created, err := s.EmailAccount(ctx, "Ada@Example.org", "ada@example.org", t0)
		if err != nil || !created || a.ID == 0 || a.Email != "Ada@Example.org" || a.EmailKey != "ada@example.org" ||
			!a.CreatedAt.Equal(ms(t0)) || a.GitHubID != 0 || a.GitHubLogin != "" {
			t.Fatalf("EmailAccount (new) = %+v, %v, %v", a, created, err)
		}
		// The same key finds the same account, as it was first confirmed.
		b, created, err := s.EmailAccount(ctx, "ADA@example.org", "ada@example.org", t0.Add(time.Hour))
		if err != nil || created || b != a {
			t.Fatalf("EmailAccount (again) = %+v, %v, %v; want %+v", b, created, err, a)
		}
		if got, err := s.AccountByID(ctx, a.ID); err != nil || got != a {
			t.Errorf("AccountByID = %+v, %v", got, err)
		}
		if _, err := s.AccountByID(ctx, a.ID+100); !errors.Is(err, ErrNotFound) {
			t.Errorf("AccountByID(missing) = %v, want ErrNotFound", err)
		}

		g, created, err := s.GitHubAccount(ctx, 583231, "octocat", t0)
		if err != nil || !created || g.ID == a.ID || g.GitHubID != 583231 || g.GitHubLogin != "octocat" || g.Email != "" {
			t.Fatalf("GitHubAccount (new) = %+v, %v, %v", g, created, err)
		}
		// A renamed user keeps the account; the login follows.
		r, created, err := s.GitHubAccount(ctx, 583231, "octo-renamed", t0.Add(time.Hour))
		if err != nil || created || r.ID != g.ID || r.GitHubLogin != "octo-renamed" || !r.CreatedAt.Equal(g.CreatedAt) {
			t.Fatalf("GitHubAccount (renamed) = %+v, %v, %v", r, created, err)
		}
		// Another user who took the old login is another account.
		o, created, err := s.GitHubAccount(ctx, 999, "octocat", t0.Add(2*time.Hour))
		if err != nil || !created || o.ID == g.ID {
			t.Fatalf("GitHubAccount (login reused) = %+v, %v, %v", o, created, err)
		}

		// A GitHub account adds an address; another account's is refused.
		if err := s.SetAccountEmail(ctx, g.ID, "Octo@Example.org", "octo@example.org"); err != nil {
			t.Fatal(err)
		}
		if got, err := s.AccountByID(ctx, g.ID); err != nil || got.Email != "Octo@Example.org" || got.EmailKey != "octo@example.org" || got.GitHubID != 583231 {
			t.Errorf("after SetAccountEmail: %+v, %v", got, err)
		}
		if err := s.SetAccountEmail(ctx, g.ID, "ada@example.org", "ada@example.org"); !errors.Is(err, ErrAddressTaken) {
			t.Errorf("SetAccountEmail(another account's) = %v, want ErrAddressTaken", err)
		}
		if err := s.SetAccountEmail(ctx, g.ID, "octo@example.org", "octo@example.org"); err != nil {
			t.Errorf("SetAccountEmail(its own, in other case) = %v", err)
		}
		if err := s.SetAccountEmail(ctx, a.ID+1000, "x@example.org", "x@example.org"); !errors.Is(err, ErrNotFound) {
			t.Errorf("SetAccountEmail(missing account) = %v, want ErrNotFound", err)
		}

		for _, bad := range []struct {
			id    int64
			login string
		}{{0, "x"}, {-1, "x"}, {1, ""}, {1, "a123456789012345678901234567890123456789"}} {
			if _, _, err := s.GitHubAccount(ctx, bad.id, bad.login, t0); err == nil {
				t.Errorf("GitHubAccount(%d, %q) succeeded", bad.id, bad.login)
			}
		}
		if _, _, err := s.EmailAccount(ctx, "a", "a", t0); err == nil {
			t.Error("EmailAccount of a 1-byte address succeeded")
		}
	})
}

func TestSessions(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		a, _, err := s.EmailAccount(ctx, "s@example.org", "s@example.org", t0)
		if err != nil {
			t.Fatal(err)
		}
		h := digest("session 1")
		r := SessionRecord{IDHash: h, AccountID: a.ID, CreatedAt: t0, RenewedAt: t0, ExpiresAt: t0.Add(30 * 24 * time.Hour)}
		if err := s.CreateSession(ctx, r); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateSession(ctx, r); err == nil {
			t.Error("a second session with the same id hash was stored")
		}
		got, acct, err := s.SessionByHash(ctx, h, t0.Add(time.Minute))
		want := SessionRecord{IDHash: h, AccountID: a.ID, CreatedAt: ms(t0), RenewedAt: ms(t0), ExpiresAt: ms(r.ExpiresAt)}
		if err != nil || !sessionEqual(got, want) || acct != a {
			t.Fatalf("SessionByHash = %+v, %+v, %v; want %+v, %+v", got, acct, err, want, a)
		}
		if _, _, err := s.SessionByHash(ctx, digest("other"), t0); !errors.Is(err, ErrNotFound) {
			t.Errorf("SessionByHash(unknown) = %v, want ErrNotFound", err)
		}
		if _, _, err := s.SessionByHash(ctx, h, r.ExpiresAt); !errors.Is(err, ErrNotFound) {
			t.Errorf("SessionByHash(at its end) = %v, want ErrNotFound", err)
		}
		if _, _, err := s.SessionByHash(ctx, []byte("short"), t0); err == nil || errors.Is(err, ErrNotFound) {
			t.Errorf("SessionByHash(5 bytes) = %v, want a refusal", err)
		}

		// Renewal moves forward only.
		later := t0.Add(2 * time.Hour)
		if err := s.RenewSession(ctx, h, later, later.Add(30*24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := s.RenewSession(ctx, h, t0.Add(time.Hour), t0.Add(time.Hour+30*24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		got, _, err = s.SessionByHash(ctx, h, later)
		if err != nil || !got.RenewedAt.Equal(ms(later)) || !got.ExpiresAt.Equal(ms(later.Add(30*24*time.Hour))) {
			t.Errorf("after renewals: %+v, %v; want renewed at %v", got, err, ms(later))
		}
		// An expired session is not renewed back to life.
		if err := s.RenewSession(ctx, h, later.Add(31*24*time.Hour), later.Add(61*24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.SessionByHash(ctx, h, later.Add(31*24*time.Hour)); !errors.Is(err, ErrNotFound) {
			t.Errorf("an expired session came back: %v", err)
		}

		// Sign out, and sign out everywhere.
		for i := range 3 {
			if err := s.CreateSession(ctx, SessionRecord{IDHash: digest(fmt.Sprint("more ", i)), AccountID: a.ID,
				CreatedAt: t0, RenewedAt: t0, ExpiresAt: t0.Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.DeleteSession(ctx, h); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.SessionByHash(ctx, h, t0); !errors.Is(err, ErrNotFound) {
			t.Errorf("SessionByHash after DeleteSession = %v", err)
		}
		if err := s.DeleteSession(ctx, h); err != nil {
			t.Errorf("DeleteSession of a deleted session = %v", err)
		}
		if n, err := s.DeleteAccountSessions(ctx, a.ID); err != nil || n != 3 {
			t.Errorf("DeleteAccountSessions = %d, %v; want 3", n, err)
		}
		if n := rawCount(t, s, `SELECT count(*) FROM sessions`); n != "0" {
			t.Errorf("%s sessions left", n)
		}
	})
}

func sessionEqual(a, b SessionRecord) bool {
	return slices.Equal(a.IDHash, b.IDHash) && a.AccountID == b.AccountID && a.CreatedAt.Equal(b.CreatedAt) &&
		a.RenewedAt.Equal(b.RenewedAt) && a.ExpiresAt.Equal(b.ExpiresAt)
}

func TestSignInCodes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		addr, other := digest("address"), digest("other address")
		add := func(addrHash []byte, code string, at time.Time) int64 {
			t.Helper()
			id, err := s.AddSignInCode(ctx, SignInCode{AddressHash: addrHash, CodeHash: digest(code), CreatedAt: at, ExpiresAt: at.Add(10 * time.Minute)})
			if err != nil {
				t.Fatal(err)
			}
			return id
		}
		first := add(addr, "1", t0)
		second := add(addr, "2", t0.Add(time.Minute))
		add(other, "3", t0)

		// Each claim spends a try of every live code of the address; a code with no try
		// left is never handed out again.
		for try := 1; try <= MaxSignInCodeTries; try++ {
			cs, err := s.ClaimSignInCodeTry(ctx, addr, t0.Add(2*time.Minute))
			if err != nil || len(cs) != 2 {
				t.Fatalf("claim %d = %d codes, %v", try, len(cs), err)
			}
			for _, c := range cs {
				if c.Tries != try || !slices.Equal(c.AddressHash, addr) || (c.ID != first && c.ID != second) {
					t.Errorf("claim %d: %+v", try, c)
				}
			}
		}
		if cs, err := s.ClaimSignInCodeTry(ctx, addr, t0.Add(2*time.Minute)); err != nil || len(cs) != 0 {
			t.Errorf("claim 6 = %+v, %v; want none", cs, err)
		}
		// The schema refuses a sixth try all the same.
		if err := s.(testExecer).execForTest(ctx, `UPDATE signin_codes SET tries = 6`); err == nil {
			t.Error("the schema allowed a sixth try")
		}

		// Expiry: a code is live until its end.
		third := add(addr, "4", t0.Add(5*time.Minute))
		if cs, err := s.ClaimSignInCodeTry(ctx, addr, t0.Add(15*time.Minute-time.Millisecond)); err != nil || len(cs) != 1 || cs[0].ID != third {
			t.Errorf("claim before the end = %+v, %v", cs, err)
		}
		if cs, err := s.ClaimSignInCodeTry(ctx, addr, t0.Add(15*time.Minute)); err != nil || len(cs) != 0 {
			t.Errorf("claim at the end = %+v, %v; want none", cs, err)
		}

		// Single use: the first use wins and takes the address's other codes along;
		// the other address's code stays.
		if used, err := s.UseSignInCode(ctx, addr, third); err != nil || !used {
			t.Fatalf("UseSignInCode = %v, %v", used, err)
		}
		if used, err := s.UseSignInCode(ctx, addr, third); err != nil || used {
			t.Errorf("UseSignInCode again = %v, %v; want false", used, err)
		}
		if used, err := s.UseSignInCode(ctx, other, first); err != nil || used {
			t.Errorf("UseSignInCode under another address = %v, %v; want false", used, err)
		}
		if n := rawCount(t, s, `SELECT count(*) FROM signin_codes`); n != "1" {
			t.Errorf("%s codes left, want the other address's 1", n)
		}

		// ForgetAddress deletes the codes and the address throttle.
		add(addr, "5", t0)
		if ok, err := s.TakeThrottle(ctx, ThrottleTake{Scope: ThrottleAddress, KeyHash: addr, At: t0, Window: time.Hour, Limit: 5}); err != nil || !ok {
			t.Fatal(ok, err)
		}
		if ok, err := s.TakeThrottle(ctx, ThrottleTake{Scope: ThrottleClient, KeyHash: addr, At: t0, Window: time.Hour, Limit: 5}); err != nil || !ok {
			t.Fatal(ok, err)
		}
		if err := s.ForgetAddress(ctx, addr); err != nil {
			t.Fatal(err)
		}
		if n := rawCount(t, s, `SELECT count(*) FROM signin_codes`); n != "1" {
			t.Errorf("%s codes left after ForgetAddress, want 1", n)
		}
		if n := rawCount(t, s, `SELECT count(*) FROM signin_throttles WHERE scope = 'address'`); n != "0" {
			t.Errorf("%s address throttles left after ForgetAddress", n)
		}
		if n := rawCount(t, s, `SELECT count(*) FROM signin_throttles WHERE scope = 'client'`); n != "1" {
			t.Errorf("%s client throttles after ForgetAddress, want 1 (not the address's)", n)
		}

		if _, err := s.AddSignInCode(ctx, SignInCode{AddressHash: addr, CodeHash: []byte("12345678"), CreatedAt: t0, ExpiresAt: t0.Add(time.Minute)}); err == nil {
			t.Error("a code hash of 8 bytes was stored")
		}
	})
}

// TestSignInCodeTriesConcurrent claims tries of one code from many goroutines at once:
// the code is handed out exactly MaxSignInCodeTries times.
func TestSignInCodeTriesConcurrent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		addr := digest("concurrent")
		if _, err := s.AddSignInCode(ctx, SignInCode{AddressHash: addr, CodeHash: digest("c"), CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		var handed atomic.Int64
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				cs, err := s.ClaimSignInCodeTry(ctx, addr, t0)
				if err != nil {
					t.Error(err)
				}
				handed.Add(int64(len(cs)))
			})
		}
		wg.Wait()
		if n := handed.Load(); n != MaxSignInCodeTries {
			t.Errorf("the code was handed out %d times, want %d", n, MaxSignInCodeTries)
		}
	})
}

func TestThrottle(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		take := func(scope ThrottleScope, key string, at time.Time) bool {
			t.Helper()
			ok, err := s.TakeThrottle(ctx, ThrottleTake{Scope: scope, KeyHash: digest(key), At: at, Window: time.Hour, Limit: 3})
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		// Three in the window, at 0, 10 and 20 minutes; the fourth is refused and not
		// counted.
		for i, want := range []bool{true, true, true, false, false} {
			if got := take(ThrottleClient, "a", t0.Add(time.Duration(i)*10*time.Minute)); got != want {
				t.Errorf("take %d = %v, want %v", i, got, want)
			}
		}
		// Other keys and scopes count apart.
		if !take(ThrottleClient, "b", t0) || !take(ThrottleVerify, "a", t0) || !take(ThrottleAddress, "a", t0) {
			t.Error("another key or scope was refused")
		}
		// The window slides: at 60 minutes the request of 0 has left it (one more), at
		// 60 minutes and a bit still only that one.
		if !take(ThrottleClient, "a", t0.Add(time.Hour)) {
			t.Error("refused once the first request left the window")
		}
		if take(ThrottleClient, "a", t0.Add(time.Hour+time.Second)) {
			t.Error("allowed a fourth request within an hour")
		}
		if !take(ThrottleClient, "a", t0.Add(time.Hour+10*time.Minute)) {
			t.Error("refused once the second request left the window")
		}

		for _, bad := range []ThrottleTake{
			{Scope: "other", KeyHash: digest("a"), At: t0, Window: time.Hour, Limit: 1},
			{Scope: ThrottleClient, KeyHash: digest("a"), At: t0, Window: time.Hour, Limit: 0},
			{Scope: ThrottleClient, KeyHash: digest("a"), At: t0, Window: time.Hour, Limit: MaxThrottleLimit + 1},
			{Scope: ThrottleClient, KeyHash: digest("a"), At: t0, Window: 0, Limit: 1},
			{Scope: ThrottleClient, KeyHash: []byte("a"), At: t0, Window: time.Hour, Limit: 1},
		} {
			if _, err := s.TakeThrottle(ctx, bad); err == nil {
				t.Errorf("TakeThrottle(%+v) succeeded", bad)
			}
		}

		// Concurrent requests of one key never exceed the limit.
		var allowed atomic.Int64
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Go(func() {
				ok, err := s.TakeThrottle(ctx, ThrottleTake{Scope: ThrottleClient, KeyHash: digest("concurrent"),
					At: t0.Add(time.Duration(i) * time.Millisecond), Window: time.Hour, Limit: 5})
				if err != nil {
					t.Error(err)
				}
				if ok {
					allowed.Add(1)
				}
			})
		}
		wg.Wait()
		if n := allowed.Load(); n < 1 || n > 5 {
			t.Errorf("%d of 16 concurrent requests allowed, want 1 to 5", n)
		}
	})
}

func TestDeleteAccountCascades(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		a, _, err := s.EmailAccount(ctx, "gone@example.org", "gone@example.org", t0)
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := s.GitHubAccount(ctx, 7, "stays", t0)
		if err != nil {
			t.Fatal(err)
		}
		for i, id := range []int64{a.ID, a.ID, b.ID} {
			if err := s.CreateSession(ctx, SessionRecord{IDHash: digest(fmt.Sprint(i)), AccountID: id,
				CreatedAt: t0, RenewedAt: t0, ExpiresAt: t0.Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.DeleteAccount(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteAccount(ctx, a.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("DeleteAccount again = %v, want ErrNotFound", err)
		}
		if _, err := s.AccountByID(ctx, a.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("AccountByID(deleted) = %v", err)
		}
		if n := rawCount(t, s, fmt.Sprintf(`SELECT count(*) FROM sessions WHERE account_id = %d`, a.ID)); n != "0" {
			t.Errorf("%s sessions of the deleted account left", n)
		}
		if n := rawCount(t, s, fmt.Sprintf(`SELECT count(*) FROM sessions WHERE account_id = %d`, b.ID)); n != "1" {
			t.Errorf("%s sessions of the other account, want 1", n)
		}
		// A new account with the same address is a new account.
		c, created, err := s.EmailAccount(ctx, "gone@example.org", "gone@example.org", t0)
		if err != nil || !created || c.ID == a.ID {
			t.Errorf("EmailAccount after deletion = %+v, %v, %v", c, created, err)
		}
	})
}

func TestPruneSignIn(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		a, _, err := s.EmailAccount(ctx, "p@example.org", "p@example.org", t0)
		if err != nil {
			t.Fatal(err)
		}
		for i, end := range []time.Duration{time.Minute, time.Hour} {
			if err := s.CreateSession(ctx, SessionRecord{IDHash: digest(fmt.Sprint("s", i)), AccountID: a.ID,
				CreatedAt: t0, RenewedAt: t0, ExpiresAt: t0.Add(end)}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.AddSignInCode(ctx, SignInCode{AddressHash: digest("p"), CodeHash: digest(fmt.Sprint("c", i)),
				CreatedAt: t0, ExpiresAt: t0.Add(end)}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.TakeThrottle(ctx, ThrottleTake{Scope: ThrottleClient, KeyHash: digest("p"), At: t0, Window: time.Minute, Limit: 1}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.TakeThrottle(ctx, ThrottleTake{Scope: ThrottleVerify, KeyHash: digest("p"), At: t0, Window: time.Hour, Limit: 1}); err != nil {
			t.Fatal(err)
		}
		n, err := s.PruneSignIn(ctx, t0.Add(time.Minute))
		if err != nil || n != 3 {
			t.Errorf("PruneSignIn = %d, %v; want 3 (a session, a code, a throttle)", n, err)
		}
		for _, table := range []string{"sessions", "signin_codes", "signin_throttles"} {
			if n := rawCount(t, s, `SELECT count(*) FROM `+table); n != "1" {
				t.Errorf("%s: %s rows left, want 1", table, n)
			}
		}
	})
}

// TestMigrateAccounts builds a store of migration 0010 holding an entry, then migrates
// it: the entry is as it was, the accounts tables are there and empty, and work.
func TestMigrateAccounts(t *testing.T) {
	for _, b := range testBackends {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			s := b.openEmpty(t)
			if err := s.(testMigrator).migrateForTest(ctx, 10); err != nil {
				t.Fatalf("migrating through 0010: %v", err)
			}
			if _, err := InsertEntryForTest(ctx, s, newTestEntry("kept")); err != nil {
				t.Fatal(err)
			}
			read := func() [][]string {
				rows, err := QueryForTest(ctx, s, `SELECT id, slug, kind, locator, name FROM entries ORDER BY id`, 5)
				if err != nil {
					t.Fatal(err)
				}
				return rows
			}
			before := read()
			if err := s.Migrate(ctx); err != nil {
				t.Fatalf("migrating to the newest: %v", err)
			}
			if after := read(); !slices.EqualFunc(after, before, slices.Equal) {
				t.Errorf("entries: %v, were %v", after, before)
			}
			for _, table := range []string{"accounts", "sessions", "signin_codes", "signin_throttles"} {
				if n := rawCount(t, s, `SELECT count(*) FROM `+table); n != "0" {
					t.Errorf("%s holds %s rows", table, n)
				}
			}
			a, created, err := s.EmailAccount(ctx, "m@example.org", "m@example.org", t0)
			if err != nil || !created {
				t.Fatal(err)
			}
			if err := s.CreateSession(ctx, SessionRecord{IDHash: digest("m"), AccountID: a.ID, CreatedAt: t0, RenewedAt: t0, ExpiresAt: t0.Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
		})
	}
}
