package accounts

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/probity-dev/probity/store"
)

// TestSessionFixation: a token from before the sign-in, whether one the site never
// issued or an attacker's own session planted in the browser, is never given the
// account that signs in: the sign-in makes a new session with a new token.
func TestSessionFixation(t *testing.T) {
	forEachStore(t, func(t *testing.T, st testStore) {
		f := newFixture(t, st, nil)
		ctx := t.Context()
		attacker := f.signIn(t, "attacker@example.org", "a")
		planted := []string{attacker.Token, randomToken()}

		victim := f.signIn(t, "victim@example.org", "v")
		for _, old := range planted {
			if victim.Token == old {
				t.Fatal("the sign-in kept a token from before it")
			}
		}
		va, err := f.svc.Session(ctx, victim.Token)
		if err != nil || va.Email != "victim@example.org" {
			t.Fatalf("victim's session = %+v, %v", va, err)
		}
		if a, err := f.svc.Session(ctx, planted[0]); err != nil || a.ID == va.ID || a.Email != "attacker@example.org" {
			t.Errorf("the attacker's planted session = %+v, %v; want still the attacker's", a, err)
		}
		if a, err := f.svc.Session(ctx, planted[1]); !errors.Is(err, ErrNoSession) {
			t.Errorf("a never-issued token = %+v, %v; want ErrNoSession", a, err)
		}
		// Every sign-in makes a new token, also for the same account.
		again := f.signIn(t, "victim@example.org", "v")
		if again.Token == victim.Token || again.AccountID != victim.AccountID {
			t.Errorf("second sign-in: same token %v, account %d want %d", again.Token == victim.Token, again.AccountID, victim.AccountID)
		}
	})
}

func TestSignOut(t *testing.T) {
	forEachStore(t, func(t *testing.T, st testStore) {
		f := newFixture(t, st, nil)
		ctx := t.Context()
		laptop := f.signIn(t, "me@example.org", "c")
		phone := f.signIn(t, "me@example.org", "c")
		other := f.signIn(t, "you@example.org", "c")

		if err := f.svc.SignOut(ctx, laptop.Token); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.Session(ctx, laptop.Token); !errors.Is(err, ErrNoSession) {
			t.Errorf("signed-out session: %v", err)
		}
		if _, err := f.svc.Session(ctx, phone.Token); err != nil {
			t.Errorf("the other session of the account ended: %v", err)
		}
		for _, tok := range []string{laptop.Token, "", "garbage", strings.Repeat("A", 43)} {
			if err := f.svc.SignOut(ctx, tok); err != nil {
				t.Errorf("SignOut(%q) = %v", tok, err)
			}
		}

		third := f.signIn(t, "me@example.org", "c")
		if err := f.svc.SignOutEverywhere(ctx, phone.AccountID); err != nil {
			t.Fatal(err)
		}
		for _, tok := range []string{phone.Token, third.Token} {
			if _, err := f.svc.Session(ctx, tok); !errors.Is(err, ErrNoSession) {
				t.Errorf("a session survived sign out everywhere: %v", err)
			}
		}
		if a, err := f.svc.Session(ctx, other.Token); err != nil || a.ID != other.AccountID {
			t.Errorf("another account's session: %+v, %v", a, err)
		}
	})
}

// renewCounter counts the store's session renewals.
type renewCounter struct {
	Store
	n atomic.Int64
}

func (r *renewCounter) RenewSession(ctx context.Context, idHash []byte, renewedAt, expiresAt time.Time) error {
	r.n.Add(1)
	return r.Store.RenewSession(ctx, idHash, renewedAt, expiresAt)
}

// TestSessionExpiryAndRenewal: a session ends SessionLifetime after its last renewal;
// a use renews it at most once per SessionRenewEvery, so most uses write nothing.
func TestSessionExpiryAndRenewal(t *testing.T) {
	forEachStore(t, func(t *testing.T, st testStore) {
		f := newFixture(t, st, nil)
		counter := &renewCounter{Store: st.Store}
		svc, err := New(Config{Store: counter, Mailer: f.mail, Secret: testSecret, Now: f.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		f.svc = svc
		ctx := t.Context()
		s := f.signIn(t, "slide@example.org", "c")
		use := func() error {
			_, err := f.svc.Session(ctx, s.Token)
			return err
		}
		// Uses within the hour write nothing.
		for range 10 {
			f.clock.Add(5 * time.Minute)
			if err := use(); err != nil {
				t.Fatal(err)
			}
		}
		if n := counter.n.Load(); n != 0 {
			t.Errorf("%d renewals within the first hour", n)
		}
		f.clock.Add(10 * time.Minute) // an hour after the sign-in
		if err := use(); err != nil {
			t.Fatal(err)
		}
		if err := use(); err != nil {
			t.Fatal(err)
		}
		if n := counter.n.Load(); n != 1 {
			t.Errorf("%d renewals after an hour, want 1", n)
		}
		// The session now ends SessionLifetime after the renewal, not after the sign-in.
		f.clock.Add(SessionLifetime - time.Millisecond)
		if err := use(); err != nil {
			t.Errorf("just before the renewed end: %v", err)
		}
		// That use renewed it again; unused for a whole lifetime, it ends.
		f.clock.Add(SessionLifetime)
		if err := use(); !errors.Is(err, ErrNoSession) {
			t.Errorf("a lifetime after the last use: %v, want ErrNoSession", err)
		}

		// Without renewals, a session ends SessionLifetime after the sign-in.
		s2 := f.signIn(t, "idle@example.org", "c")
		f.clock.Add(SessionLifetime - time.Millisecond)
		if _, err := f.svc.Session(ctx, s2.Token); err != nil {
			t.Errorf("just before the end: %v", err)
		}
		s3 := f.signIn(t, "idle2@example.org", "c")
		f.clock.Add(SessionLifetime)
		if _, err := f.svc.Session(ctx, s3.Token); !errors.Is(err, ErrNoSession) {
			t.Errorf("at the end: %v, want ErrNoSession", err)
		}
		// Prune removes what has ended.
		if n, err := f.svc.Prune(ctx); err != nil || n == 0 {
			t.Errorf("Prune = %d, %v", n, err)
		}
	})
}

func TestSessionTokenShape(t *testing.T) {
	forEachStore(t, func(t *testing.T, st testStore) {
		f := newFixture(t, st, nil)
		s := f.signIn(t, "shape@example.org", "c")
		if len(s.Token) != tokenLen || strings.ContainsAny(s.Token, "+/=") {
			t.Errorf("token %q is not 43 base64url characters", s.Token)
		}
		for _, bad := range []string{"", s.Token[:42], s.Token + "A", s.Token[:42] + "!", strings.ToUpper(s.Token[:1]) + "\x00" + s.Token[2:]} {
			if _, err := f.svc.Session(t.Context(), bad); !errors.Is(err, ErrNoSession) {
				t.Errorf("Session(%q) = %v", bad, err)
			}
		}
	})
}

func TestCSRF(t *testing.T) {
	a, b := randomToken(), randomToken()
	ta, tb := CSRFToken(a), CSRFToken(b)
	if len(ta) != 43 || ta == tb || ta == a || CSRFToken(a) != ta {
		t.Fatalf("CSRFToken: %q, %q", ta, tb)
	}
	if !CheckCSRF(a, ta) {
		t.Error("a session's own token was refused")
	}
	for _, c := range []struct{ session, got string }{
		{a, tb}, {b, ta}, {a, ""}, {a, a}, {a, ta[:42]}, {a, ta + "A"}, {"", ""}, {"garbage", CSRFToken("garbage")},
	} {
		if CheckCSRF(c.session, c.got) {
			t.Errorf("CheckCSRF(%q, %q) accepted", c.session, c.got)
		}
	}
	if CSRFToken("not a token") != "" {
		t.Error("a CSRF token for a malformed session token")
	}
}

func TestSafeReturn(t *testing.T) {
	for _, ok := range []string{"/", "/followed", "/s/my-server", "/s/my-server?tab=history#ch-3", "/search?q=a%20b",
		"/s/a.b/c..d", "/s/x?next=//not-a-path", strings.Repeat("/a", MaxReturnLength/2)} {
		if got := SafeReturn(ok); got != ok {
			t.Errorf("SafeReturn(%q) = %q, want it unchanged", ok, got)
		}
	}
	for _, bad := range []string{
		"", "//evil.com", "//evil.com/path", "/\\evil.com", "\\\\evil.com", "\\/evil.com", "/\\/evil.com",
		"https://evil.com", "http://evil.com/", "HTTPS://evil.com", "javascript:alert(1)", "JaVaScRiPt:alert(1)",
		"data:text/html,x", "evil.com", "followed", "%2F%2Fevil.com", "/%2F%2Fevil.com", "/%2f%2fevil.com",
		"/%5Cevil.com", "/%5cevil.com", "/\t/evil.com", "/\n/evil.com", "/\r/evil.com", "/x\x00", "/x\x7f",
		"/ /evil.com", "/é", "///evil.com", "/x\\y", "/%", "/%zz",
		strings.Repeat("/a", MaxReturnLength/2) + "/", "/" + strings.Repeat("a", 10000),
		"https:/evil.com", "/@evil.com" + "\x1b", "/.//evil.com", "/a//evil.com", "/a/../b", "/%2e%2e/x", "/./x", "/x/..",
	} {
		if got := SafeReturn(bad); got != DefaultReturn {
			t.Errorf("SafeReturn(%q) = %q, want %q", bad, got, DefaultReturn)
		}
	}
}

// TestDeleteAccount: deleting an account deletes its sessions, its address's codes
// and limit and, through ON DELETE CASCADE, every row that references it (a table
// made here stands for follows, webhooks and the outbox).
func TestDeleteAccount(t *testing.T) {
	forEachStore(t, func(t *testing.T, st testStore) {
		f := newFixture(t, st, nil)
		ctx := t.Context()
		s1 := f.signIn(t, "leaving@example.org", "c")
		s2 := f.signIn(t, "leaving@example.org", "c")
		stay := f.signIn(t, "staying@example.org", "c")
		if err := f.svc.RequestCode(ctx, "leaving@example.org", "c"); err != nil {
			t.Fatal(err)
		}
		st.exec(t, `CREATE TABLE test_belongings (account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE, what text NOT NULL)`)
		st.exec(t, fmt.Sprintf(`INSERT INTO test_belongings (account_id, what) VALUES (%d, 'a follow'), (%d, 'a webhook'), (%d, 'kept')`,
			s1.AccountID, s1.AccountID, stay.AccountID))

		if err := f.svc.DeleteAccount(ctx, s1.AccountID); err != nil {
			t.Fatal(err)
		}
		for _, tok := range []string{s1.Token, s2.Token} {
			if _, err := f.svc.Session(ctx, tok); !errors.Is(err, ErrNoSession) {
				t.Errorf("a session of the deleted account: %v", err)
			}
		}
		if _, err := f.svc.Account(ctx, s1.AccountID); !errors.Is(err, ErrNoAccount) {
			t.Errorf("Account(deleted) = %v", err)
		}
		if err := f.svc.DeleteAccount(ctx, s1.AccountID); !errors.Is(err, ErrNoAccount) {
			t.Errorf("DeleteAccount again = %v", err)
		}
		dump := st.dump(t)
		if strings.Contains(dump, "leaving@example.org") || strings.Contains(dump, fmt.Sprintf("%x", addressHash("leaving@example.org"))) {
			t.Errorf("the deleted account's address is still stored:\n%s", dump)
		}
		if rows := st.rows(t, "sessions"); len(rows) != 1 {
			t.Errorf("sessions left: %v, want the other account's one", rows)
		}
		if rows := st.rows(t, "test_belongings"); len(rows) != 1 || !strings.Contains(rows[0], "kept") {
			t.Errorf("rows referencing accounts: %v, want only the other account's", rows)
		}
		if _, err := f.svc.Session(ctx, stay.Token); err != nil {
			t.Errorf("the other account's session: %v", err)
		}
	})
}

// TestConstantTimeComparisons holds the package to comparing secrets with
// hmac.Equal or subtle.ConstantTimeCompare: the functions that compare a secret call
// one of them, and no file of the package uses bytes.Equal or bytes.Compare.
func TestConstantTimeComparisons(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]map[string]bool{} // function → "pkg.Name" it refers to
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range file.Imports {
			if imp.Path.Value == `"bytes"` {
				t.Errorf("%s imports bytes: compare secrets with hmac.Equal or crypto/subtle", name)
			}
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			seen := map[string]bool{}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok {
						seen[id.Name+"."+sel.Sel.Name] = true
					}
				}
				return true
			})
			// A method and a function may share a name (the Service's CheckCSRF calls
			// the function CheckCSRF): their calls are counted together.
			if calls[fn.Name.Name] == nil {
				calls[fn.Name.Name] = seen
			} else {
				maps.Copy(calls[fn.Name.Name], seen)
			}
		}
	}
	for fn, want := range map[string]string{
		"useCode":      "hmac.Equal",
		"CheckCSRF":    "hmac.Equal",
		"GitHubFinish": "subtle.ConstantTimeCompare",
	} {
		if !calls[fn][want] {
			t.Errorf("%s does not call %s", fn, want)
		}
	}
}

// The store satisfies the package's Store.
var _ Store = store.Store(nil)
