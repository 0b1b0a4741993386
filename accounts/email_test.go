package accounts

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestParseAddress(t *testing.T) {
	for _, c := range []struct {
		in, addr, key string
	}{
		{"ada@example.org", "ada@example.org", "ada@example.org"},
		{"  Ada.Lovelace+probity@Example.ORG \n", "Ada.Lovelace+probity@Example.ORG", "ada.lovelace+probity@example.org"},
		{"o'brien@mail.example.co.uk", "o'brien@mail.example.co.uk", "o'brien@mail.example.co.uk"},
		{"x@a-b.io", "x@a-b.io", "x@a-b.io"},
	} {
		addr, key, err := parseAddress(c.in)
		if err != nil || addr != c.addr || key != c.key {
			t.Errorf("parseAddress(%q) = %q, %q, %v; want %q, %q", c.in, addr, key, err, c.addr, c.key)
		}
	}
	long := strings.Repeat("a", 64) + "@" + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 63) + ".org"
	for _, bad := range []string{
		"", "a", "@example.org", "ada@", "ada", "ada@example", "ada@@example.org", "a@b@example.org",
		"ada lovelace@example.org", "ada@exa mple.org", "Ada <ada@example.org>", "ada@example.org\r\nBcc: x@y.org",
		"ada\x00@example.org", ".ada@example.org", "ada.@example.org", "a..da@example.org", "ada@-example.org",
		"ada@example-.org", "ada@example..org", "ada@[127.0.0.1]", "ada@127.0.0.1", "\"ada\"@example.org",
		"adä@example.org", "ada@exämple.org", strings.Repeat("a", 65) + "@example.org", long,
		"ada@example.org,eve@example.org", "ada@example.org;", "a(b)@example.org",
	} {
		if _, _, err := parseAddress(bad); !errors.Is(err, ErrInvalidEmail) {
			t.Errorf("parseAddress(%q) = %v, want ErrInvalidEmail", bad, err)
		}
	}
}

func TestNormalizeCode(t *testing.T) {
	for in, want := range map[string]string{"12345678": "12345678", "1234 5678": "12345678", " 1234-5678 ": "12345678", "00000000": "00000000"} {
		if got, ok := NormalizeCode(in); !ok || got != want {
			t.Errorf("NormalizeCode(%q) = %q, %v", in, got, ok)
		}
	}
	for _, bad := range []string{"", "1234567", "123456789", "1234567a", "１２３４５６７８", strings.Repeat(" ", 30) + "12345678", "1234\x005678"} {
		if got, ok := NormalizeCode(bad); ok {
			t.Errorf("NormalizeCode(%q) = %q, accepted", bad, got)
		}
	}
}

// TestCodeSignIn signs in by code: the mail holds the code and nothing else of note,
// the first sign-in makes the account, a later one (in other letter case) finds it.
func TestCodeSignIn(t *testing.T) {
	forEachStore(t, func(t *testing.T, st testStore) {
		f := newFixture(t, st, nil)
		ctx := t.Context()
		if err := f.svc.RequestCode(ctx, " Ada@Example.org ", "client-1"); err != nil {
			t.Fatal(err)
		}
		m := f.mail.mails[0]
		code := f.mail.lastCode(t, "Ada@Example.org")
		if m.Subject != "Your sign-in code for Probity" || !strings.Contains(m.Text, "valid for 10 minutes and works once") {
			t.Errorf("mail = %+v", m)
		}
		if len(st.rows(t, "accounts")) != 0 {
			t.Error("asking for a code made an account")
		}
		s, err := f.svc.VerifyCode(ctx, "ada@example.org", " "+code[:4]+" "+code[4:], "client-1")
		if err != nil {
			t.Fatal(err)
		}
		a, err := f.svc.Session(ctx, s.Token)
		if err != nil || a.ID != s.AccountID || a.Email != "ada@example.org" || a.EmailKey != "ada@example.org" {
			t.Fatalf("Session = %+v, %v", a, err)
		}
		if !s.ExpiresAt.Equal(f.clock.Now().Add(SessionLifetime)) {
			t.Errorf("session ends %v, want %v", s.ExpiresAt, f.clock.Now().Add(SessionLifetime))
		}
		s2 := f.signIn(t, "ADA@EXAMPLE.ORG", "client-2")
		if s2.AccountID != s.AccountID || s2.Token == s.Token {
			t.Errorf("second sign-in: account %d token same %v; want account %d and a new token", s2.AccountID, s2.Token == s.Token, s.AccountID)
		}
	})
}

func TestCodeSingleUse(t *testing.T) {
	forEachStore(t, func(t *testing.T, st testStore) {
		f := newFixture(t, st, nil)
		ctx := t.Context()
		if err := f.svc.RequestCode(ctx, "once@example.org", "c"); err != nil {
			t.Fatal(err)
		}
		code := f.mail.lastCode(t, "once@example.org")
		if _, err := f.svc.VerifyCode(ctx, "once@example.org", code, "c"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.VerifyCode(ctx, "once@example.org", code, "c"); !errors.Is(err, ErrBadCode) {
			t.Errorf("the code worked twice: %v", err)
		}
		// A sign-in uses up the address's other codes too.
		if err := f.svc.RequestCode(ctx, "once@example.org", "c"); err != nil {
			t.Fatal(err)
		}
		older := f.mail.lastCode(t, "once@example.org")
		f.signIn(t, "once@example.org", "c")
		if _, err := f.svc.VerifyCode(ctx, "once@example.org", older, "c"); !errors.Is(err, ErrBadCode) {
			t.Errorf("an older code worked after a sign-in: %v", err)
		}
		if rows := st.rows(t, "signin_codes"); len(rows) != 0 {
			t.Errorf("codes left after sign-in: %v", rows)
		}
	})
}

func TestCodeExpiry(t *testing.T) {
	forEachStore(t, func(t *testing.T, st testStore) {
		f := newFixture(t, st, nil)
		ctx := t.Context()
		for _, c := range []struct {
			after time.Duration
			ok    bool
		}{{CodeLifetime - time.Millisecond, true}, {CodeLifetime, false}, {time.Hour, false}} {
			addr := fmt.Sprintf("expiry-%d@example.org", c.after.Milliseconds())
			if err := f.svc.RequestCode(ctx, addr, addr); err != nil {
				t.Fatal(err)
			}
			code := f.mail.lastCode(t, addr)
			f.clock.Add(c.after)
			_, err := f.svc.VerifyCode(ctx, addr, code, addr)
			if c.ok && err != nil || !c.ok && !errors.Is(err, ErrBadCode) {
				t.Errorf("code entered %v after it was sent: %v, want ok %v", c.after, err, c.ok)
			}
		}
	})
}

// TestCodeTries: five wrong tries kill a code; four leave it working.
func TestCodeTries(t *testing.T) {
	forEachStore(t, func(t *testing.T, st testStore) {
		f := newFixture(t, st, nil)
		ctx := t.Context()
		for _, wrong := range []int{MaxCodeTries - 1, MaxCodeTries} {
			addr := fmt.Sprintf("tries-%d@example.org", wrong)
			if err := f.svc.RequestCode(ctx, addr, "c"); err != nil {
				t.Fatal(err)
			}
			code := f.mail.lastCode(t, addr)
			for i := range wrong {
				if _, err := f.svc.VerifyCode(ctx, addr, wrongCode(code, i), fmt.Sprint("client ", i)); !errors.Is(err, ErrBadCode) {
					t.Fatalf("wrong code %d: %v", i, err)
				}
			}
			_, err := f.svc.VerifyCode(ctx, addr, code, "right")
			if wrong < MaxCodeTries && err != nil {
				t.Errorf("after %d wrong tries the right code failed: %v", wrong, err)
			}
			if wrong >= MaxCodeTries && !errors.Is(err, ErrBadCode) {
				t.Errorf("after %d wrong tries the right code worked: %v", wrong, err)
			}
		}
	})
}

// wrongCode is a code other than code, the i-th of them.
func wrongCode(code string, i int) string {
	for n := i; ; n++ {
		if c := fmt.Sprintf("%08d", (n*7919+13)%100_000_000); c != code {
			return c
		}
	}
}

// TestBruteForceBounded: guessing is bounded per address (codes an hour, tries per
// code), per client (requests and checks an hour), whichever clients ask.
func TestBruteForceBounded(t *testing.T) {
	forEachStore(t, func(t *testing.T, st testStore) {
		f := newFixture(t, st, nil)
		ctx := t.Context()
		const victim = "victim@example.org"

		// Per address: CodesPerAddressPerHour codes an hour, whoever asks.
		for i := range CodesPerAddressPerHour {
			if err := f.svc.RequestCode(ctx, victim, fmt.Sprint("client ", i)); err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			f.clock.Add(time.Minute)
		}
		if err := f.svc.RequestCode(ctx, victim, "yet another client"); !errors.Is(err, ErrTooMany) {
			t.Errorf("request %d for one address: %v, want ErrTooMany", CodesPerAddressPerHour+1, err)
		}
		if n := f.mail.count(); n != CodesPerAddressPerHour {
			t.Errorf("%d mails sent, want %d", n, CodesPerAddressPerHour)
		}
		// Every live code of the address is spent by each check: after MaxCodeTries
		// wrong checks (from as many clients) none of the five codes works, so an
		// address admits at most CodesPerAddressPerHour × MaxCodeTries guesses an hour.
		codes := map[string]bool{}
		for _, m := range f.mail.mails {
			codes[codePattern.FindStringSubmatch(m.Text)[1]] = true
		}
		guesses := 0
		for i := 0; guesses < MaxCodeTries; i++ {
			g := fmt.Sprintf("%08d", i)
			if codes[g] {
				continue
			}
			if _, err := f.svc.VerifyCode(ctx, victim, g, fmt.Sprint("guesser ", i)); !errors.Is(err, ErrBadCode) {
				t.Fatalf("guess %s: %v", g, err)
			}
			guesses++
		}
		for c := range codes {
			if _, err := f.svc.VerifyCode(ctx, victim, c, "owner"); !errors.Is(err, ErrBadCode) {
				t.Errorf("a code worked after %d wrong checks: %v", MaxCodeTries, err)
			}
		}
		// The window slides: an hour after the first code, one more may be sent.
		f.clock.Add(time.Hour - CodesPerAddressPerHour*time.Minute)
		if err := f.svc.RequestCode(ctx, victim, "owner"); err != nil {
			t.Errorf("an hour later: %v", err)
		}
		if err := f.svc.RequestCode(ctx, victim, "owner"); !errors.Is(err, ErrTooMany) {
			t.Errorf("an hour later, the second: %v, want ErrTooMany", err)
		}

		// Per client: ClientRequestsPerHour requests an hour, whatever the address.
		for i := range ClientRequestsPerHour {
			if err := f.svc.RequestCode(ctx, fmt.Sprintf("a%d@example.org", i), "greedy"); err != nil {
				t.Fatalf("client request %d: %v", i, err)
			}
		}
		if err := f.svc.RequestCode(ctx, "fresh@example.org", "greedy"); !errors.Is(err, ErrTooMany) {
			t.Errorf("client request %d: %v, want ErrTooMany", ClientRequestsPerHour+1, err)
		}
		// Per client: ClientChecksPerHour checks an hour, whatever the address.
		for i := range ClientChecksPerHour {
			if _, err := f.svc.VerifyCode(ctx, fmt.Sprintf("b%d@example.org", i), "12345678", "checker"); !errors.Is(err, ErrBadCode) {
				t.Fatalf("client check %d: %v", i, err)
			}
		}
		if _, err := f.svc.VerifyCode(ctx, "b0@example.org", "12345678", "checker"); !errors.Is(err, ErrTooMany) {
			t.Errorf("client check %d: %v, want ErrTooMany", ClientChecksPerHour+1, err)
		}
		// A limited client's right code is refused too: the limit is checked first.
		if err := f.svc.RequestCode(ctx, "late@example.org", "other"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.VerifyCode(ctx, "late@example.org", f.mail.lastCode(t, "late@example.org"), "checker"); !errors.Is(err, ErrTooMany) {
			t.Errorf("a limited client's right code: %v, want ErrTooMany", err)
		}
	})
}

// TestNoAccountEnumeration: asking for a code for an address with an account and for
// one without gives the same answer, the same mail (but for the code) and writes the
// same kinds of rows; a wrong code is the same error for both.
func TestNoAccountEnumeration(t *testing.T) {
	forEachStore(t, func(t *testing.T, st testStore) {
		f := newFixture(t, st, nil)
		ctx := t.Context()
		f.signIn(t, "known@example.org", "setup")
		accountsBefore := len(st.rows(t, "accounts"))

		var mails []CodeMail
		var codeRows []int
		for _, addr := range []string{"known@example.org", "unknown@example.org"} {
			before := len(st.rows(t, "signin_codes"))
			if err := f.svc.RequestCode(ctx, addr, "prober"); err != nil {
				t.Fatalf("RequestCode(%s) = %v, want nil", addr, err)
			}
			codeRows = append(codeRows, len(st.rows(t, "signin_codes"))-before)
			m := f.mail.mails[len(f.mail.mails)-1]
			m.Text = strings.Replace(m.Text, f.mail.lastCode(t, addr), "CODE", 1)
			m.To = ""
			mails = append(mails, m)
			if _, err := f.svc.VerifyCode(ctx, addr, "00000000", "prober"); !errors.Is(err, ErrBadCode) {
				t.Errorf("VerifyCode(%s, wrong) = %v, want ErrBadCode", addr, err)
			}
		}
		if mails[0] != mails[1] {
			t.Errorf("the mails differ:\n%+v\n%+v", mails[0], mails[1])
		}
		if codeRows[0] != 1 || codeRows[1] != 1 {
			t.Errorf("code rows written: %v, want one each", codeRows)
		}
		if n := len(st.rows(t, "accounts")); n != accountsBefore {
			t.Errorf("%d accounts after asking for codes, were %d", n, accountsBefore)
		}
		// An invalid address is the only error a request shows, whoever asks.
		if err := f.svc.RequestCode(ctx, "not an address", "prober"); !errors.Is(err, ErrInvalidEmail) {
			t.Errorf("RequestCode(invalid) = %v", err)
		}
	})
}

// TestHashedAtRest: no table holds a code, a session token (in any encoding), a
// client key or an address that has no account; the stored hashes are the documented
// ones.
func TestHashedAtRest(t *testing.T) {
	forEachStore(t, func(t *testing.T, st testStore) {
		f := newFixture(t, st, nil)
		ctx := t.Context()
		const client = "client-key-198.51.100.7"
		if err := f.svc.RequestCode(ctx, "Stranger@Example.org", client); err != nil {
			t.Fatal(err)
		}
		pending := f.mail.lastCode(t, "Stranger@Example.org")
		s := f.signIn(t, "member@example.org", client)
		if err := f.svc.RequestCode(ctx, "member@example.org", client); err != nil {
			t.Fatal(err)
		}
		another := f.mail.lastCode(t, "member@example.org")
		raw, err := base64.RawURLEncoding.DecodeString(s.Token)
		if err != nil {
			t.Fatal(err)
		}
		dump := f.st.dump(t)
		for what, secret := range map[string]string{
			"a pending code":                              pending,
			"another pending code":                        another,
			"the session token":                           s.Token,
			"the token's bytes":                           string(raw),
			"the token's bytes, hex":                      hex.EncodeToString(raw),
			"the client key":                              client,
			"the address without an account, as typed":    "Stranger@Example.org",
			"the address without an account, lower-cased": "stranger@example.org",
			"the CSRF token":                              CSRFToken(s.Token),
		} {
			if strings.Contains(strings.ToLower(dump), strings.ToLower(secret)) {
				t.Errorf("the store holds %s in clear:\n%s", what, dump)
			}
		}
		// The hashes are the ones the package documentation specifies.
		idHash := sha256.Sum256(raw)
		if !strings.Contains(dump, hex.EncodeToString(idHash[:])) {
			t.Errorf("no session is stored as SHA-256 of the token's bytes:\n%s", dump)
		}
		k := hmac.New(sha256.New, testSecret)
		k.Write([]byte("probity sign-in code key v1"))
		m := hmac.New(sha256.New, k.Sum(nil))
		m.Write([]byte("stranger@example.org\x00" + pending))
		if !strings.Contains(dump, hex.EncodeToString(m.Sum(nil))) {
			t.Errorf("the pending code is not stored as HMAC-SHA256 keyed by the code key of its email key and code:\n%s", dump)
		}
		// Nothing in the store alone tests a guess: no row holds a hash of the code
		// keyed by what the store knows (the address), as the first version did.
		leaked := hmac.New(sha256.New, []byte("stranger@example.org"))
		leaked.Write([]byte(pending))
		if strings.Contains(dump, hex.EncodeToString(leaked.Sum(nil))) {
			t.Errorf("the pending code is stored as an HMAC keyed by its address alone: a copy of the store tests guesses offline:\n%s", dump)
		}
		if !strings.Contains(dump, hex.EncodeToString(addressHash("stranger@example.org"))) ||
			!strings.Contains(dump, hex.EncodeToString(clientHash(client))) {
			t.Errorf("the address or the client is not filed under its hash:\n%s", dump)
		}
	})
}

func TestRequestCodeErrors(t *testing.T) {
	forEachStore(t, func(t *testing.T, st testStore) {
		f := newFixture(t, st, nil)
		ctx := t.Context()
		f.mail.fail = errors.New("smtp: 451 try later")
		if err := f.svc.RequestCode(ctx, "x@example.org", "c"); err == nil || !strings.Contains(err.Error(), "couldn't send the sign-in code") {
			t.Errorf("a failed send: %v", err)
		}
		off, err := New(Config{Store: st.Store})
		if err != nil {
			t.Fatal(err)
		}
		if err := off.RequestCode(ctx, "x@example.org", "c"); !errors.Is(err, ErrEmailOff) {
			t.Errorf("without a mailer: %v", err)
		}
		if off.EmailEnabled() || off.GitHubEnabled() || !f.svc.EmailEnabled() {
			t.Error("EmailEnabled/GitHubEnabled wrong")
		}
		if _, err := f.svc.VerifyCode(ctx, "x@example.org", "not a code", "c"); !errors.Is(err, ErrBadCode) {
			t.Errorf("a malformed code: %v", err)
		}
		if _, err := f.svc.VerifyCode(ctx, "x@", "12345678", "c"); !errors.Is(err, ErrInvalidEmail) {
			t.Errorf("an invalid address: %v", err)
		}
	})
}

// TestAddEmail: a GitHub account adds an address with a code sent to it; an address
// another account has is refused; a wrong code adds nothing.
func TestAddEmail(t *testing.T) {
	forEachStore(t, func(t *testing.T, st testStore) {
		f := newFixture(t, st, nil)
		ctx := t.Context()
		gh, _, err := st.GitHubAccount(ctx, 77, "gh-user", f.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		taken := f.signIn(t, "taken@example.org", "c")

		if err := f.svc.RequestCode(ctx, "Mine@Example.org", "c"); err != nil {
			t.Fatal(err)
		}
		code := f.mail.lastCode(t, "Mine@Example.org")
		if err := f.svc.AddEmail(ctx, gh.ID, "mine@example.org", wrongCode(code, 0), "c"); !errors.Is(err, ErrBadCode) {
			t.Errorf("a wrong code: %v", err)
		}
		if err := f.svc.AddEmail(ctx, gh.ID, "mine@example.org", code, "c"); err != nil {
			t.Fatal(err)
		}
		a, err := f.svc.Account(ctx, gh.ID)
		if err != nil || a.Email != "mine@example.org" || a.EmailKey != "mine@example.org" || a.GitHubID != 77 {
			t.Errorf("account = %+v, %v", a, err)
		}
		// Signing in by code with that address now reaches the GitHub account.
		if s := f.signIn(t, "mine@example.org", "c"); s.AccountID != gh.ID {
			t.Errorf("code sign-in reached account %d, want %d", s.AccountID, gh.ID)
		}

		if err := f.svc.RequestCode(ctx, "taken@example.org", "c"); err != nil {
			t.Fatal(err)
		}
		if err := f.svc.AddEmail(ctx, gh.ID, "taken@example.org", f.mail.lastCode(t, "taken@example.org"), "c"); !errors.Is(err, ErrAddressTaken) {
			t.Errorf("another account's address: %v, want ErrAddressTaken", err)
		}
		if a, _ := f.svc.Account(ctx, taken.AccountID); a.Email != "taken@example.org" {
			t.Errorf("the other account's address changed: %+v", a)
		}
		if err := f.svc.RequestCode(ctx, "new@example.org", "c"); err != nil {
			t.Fatal(err)
		}
		if err := f.svc.AddEmail(ctx, 999999, "new@example.org", f.mail.lastCode(t, "new@example.org"), "c"); !errors.Is(err, ErrNoAccount) {
			t.Errorf("no such account: %v", err)
		}
	})
}
