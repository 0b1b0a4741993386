package accounts

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/probity-dev/probity/internal/githubfake"
)

const callbackURL = "http://127.0.0.1:8080/signin/github/callback"

// githubFixture is a Service whose GitHub endpoints are a githubfake.
func githubFixture(t *testing.T, st testStore) (fixture, *githubfake.Server) {
	t.Helper()
	gh := githubfake.New("probity-client", "probity-secret")
	gh.RedirectURL = callbackURL
	t.Cleanup(gh.Close)
	f := newFixture(t, st, &GitHubConfig{
		ClientID: "probity-client", ClientSecret: "probity-secret", RedirectURL: callbackURL,
		AuthURL: gh.AuthURL(), TokenURL: gh.TokenURL(), APIURL: gh.APIURL(),
	})
	gh.SetClock(f.clock.Now)
	return f, gh
}

// browser follows GitHubStart's URL to the fake's authorize page, as a browser would,
// and returns the query of the redirect back to the callback.
func browser(t *testing.T, authURL string) url.Values {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("authorize answered %s", resp.Status)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	if back := loc.Scheme + "://" + loc.Host + loc.Path; back != callbackURL {
		t.Fatalf("redirected to %s, want the callback", back)
	}
	return loc.Query()
}

// TestGitHubSignIn runs the whole flow against the fake: the authorize URL carries
// the state and a PKCE S256 challenge, the token request the verifier; the account is
// found by GitHub's numeric id, so a renamed login keeps it and a reused login does
// not take it.
func TestGitHubSignIn(t *testing.T) {
	forEachStore(t, func(t *testing.T, st testStore) {
		f, gh := githubFixture(t, st)
		ctx := t.Context()
		gh.SignIn(githubfake.User{ID: 583231, Login: "octocat"})

		signIn := func(returnTo string) (Session, string) {
			t.Helper()
			authURL, cookie, err := f.svc.GitHubStart(returnTo)
			if err != nil {
				t.Fatal(err)
			}
			q := browser(t, authURL)
			s, ret, err := f.svc.GitHubFinish(ctx, q.Get("code"), q.Get("state"), cookie)
			if err != nil {
				t.Fatalf("GitHubFinish: %v", err)
			}
			return s, ret
		}
		s, ret := signIn("/s/some-server")
		if ret != "/s/some-server" {
			t.Errorf("return address %q", ret)
		}
		a, err := f.svc.Session(ctx, s.Token)
		if err != nil || a.GitHubID != 583231 || a.GitHubLogin != "octocat" || a.Email != "" {
			t.Fatalf("account = %+v, %v", a, err)
		}

		// PKCE: the authorize request carried the S256 challenge of the verifier the
		// token request sent.
		auth, tok := gh.AuthRequests(), gh.TokenRequests()
		if len(auth) != 1 || len(tok) != 1 {
			t.Fatalf("%d authorize and %d token requests", len(auth), len(tok))
		}
		if auth[0].Get("code_challenge_method") != "S256" || tok[0].Get("code_verifier") == "" ||
			oauth2.S256ChallengeFromVerifier(tok[0].Get("code_verifier")) != auth[0].Get("code_challenge") {
			t.Errorf("PKCE: authorize %v, token %v", auth[0], tok[0])
		}
		if auth[0].Get("state") == "" || auth[0].Get("redirect_uri") != callbackURL || auth[0].Get("scope") != "" {
			t.Errorf("authorize request %v", auth[0])
		}

		// The same user again: the same account, a new session.
		s2, _ := signIn("//evil.com")
		if s2.AccountID != s.AccountID || s2.Token == s.Token {
			t.Errorf("second sign-in: account %d (want %d), same token %v", s2.AccountID, s.AccountID, s2.Token == s.Token)
		}
		// A rename keeps the account; the login follows.
		gh.SignIn(githubfake.User{ID: 583231, Login: "octo-renamed"})
		s3, _ := signIn("/")
		if a, err := f.svc.Session(ctx, s3.Token); err != nil || a.ID != s.AccountID || a.GitHubLogin != "octo-renamed" {
			t.Errorf("after the rename: %+v, %v", a, err)
		}
		// Someone else who took the old login is someone else.
		gh.SignIn(githubfake.User{ID: 9000001, Login: "octocat"})
		s4, _ := signIn("/")
		if s4.AccountID == s.AccountID {
			t.Error("a reused login signed in to the old account")
		}
	})
}

func TestGitHubRefusals(t *testing.T) {
	forEachStore(t, func(t *testing.T, st testStore) {
		f, gh := githubFixture(t, st)
		ctx := t.Context()
		gh.SignIn(githubfake.User{ID: 42, Login: "someone"})
		tokenRequests := func() int { return len(gh.TokenRequests()) }

		// State mismatch: a callback with another state, or another sign-in's cookie,
		// is refused before the code is exchanged.
		authURL, cookie, err := f.svc.GitHubStart("/followed")
		if err != nil {
			t.Fatal(err)
		}
		q := browser(t, authURL)
		_, otherCookie, _ := f.svc.GitHubStart("/followed")
		flipped := []byte(q.Get("state"))
		flipped[0] ^= 1 // another state
		for _, c := range []struct{ name, state, cookie string }{
			{"another state", string(flipped), cookie},
			{"no state", "", cookie},
			{"another sign-in's cookie", q.Get("state"), otherCookie},
			{"no cookie", q.Get("state"), ""},
			{"a malformed cookie", q.Get("state"), "v1." + q.Get("state")},
			{"a cookie of another version", q.Get("state"), "v2" + cookie[2:]},
		} {
			if _, _, err := f.svc.GitHubFinish(ctx, q.Get("code"), c.state, c.cookie); !errors.Is(err, ErrGitHubState) {
				t.Errorf("%s: %v, want ErrGitHubState", c.name, err)
			}
		}
		if n := tokenRequests(); n != 0 {
			t.Errorf("%d codes exchanged for refused callbacks", n)
		}
		// The right state and cookie work once; the code is then used.
		if _, _, err := f.svc.GitHubFinish(ctx, q.Get("code"), q.Get("state"), cookie); err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.svc.GitHubFinish(ctx, q.Get("code"), q.Get("state"), cookie); err == nil || errors.Is(err, ErrGitHubState) {
			t.Errorf("a code exchanged twice: %v", err)
		}

		// A verifier other than the challenged one: GitHub refuses the code.
		authURL, cookie, _ = f.svc.GitHubStart("/")
		q = browser(t, authURL)
		parts := strings.Split(cookie, ".")
		parts[2] = oauth2.GenerateVerifier()
		if _, _, err := f.svc.GitHubFinish(ctx, q.Get("code"), q.Get("state"), strings.Join(parts, ".")); err == nil ||
			!strings.Contains(err.Error(), "bad_verification_code") {
			t.Errorf("a wrong PKCE verifier: %v", err)
		}

		// A sign-in that took longer than GitHubStateLifetime.
		authURL, cookie, _ = f.svc.GitHubStart("/")
		q = browser(t, authURL)
		f.clock.Add(GitHubStateLifetime + time.Second)
		if _, _, err := f.svc.GitHubFinish(ctx, q.Get("code"), q.Get("state"), cookie); !errors.Is(err, ErrGitHubState) {
			t.Errorf("an expired state cookie: %v", err)
		}

		// Cancelled at GitHub: the callback has no code.
		gh.Deny(true)
		authURL, cookie, _ = f.svc.GitHubStart("/")
		q = browser(t, authURL)
		if q.Get("error") != "access_denied" {
			t.Fatalf("denied callback %v", q)
		}
		if _, _, err := f.svc.GitHubFinish(ctx, q.Get("code"), q.Get("state"), cookie); !errors.Is(err, ErrGitHubDenied) {
			t.Errorf("a cancelled sign-in: %v", err)
		}
		if rows := st.rows(t, "accounts"); len(rows) != 1 {
			t.Errorf("accounts: %v, want the one signed in", rows)
		}

		// A return address from the cookie goes through SafeReturn again.
		gh.Deny(false)
		authURL, cookie, _ = f.svc.GitHubStart("/ok")
		q = browser(t, authURL)
		parts = strings.Split(cookie, ".")
		parts[4] = "Ly9ldmlsLmNvbQ" // base64url of //evil.com
		if _, ret, err := f.svc.GitHubFinish(ctx, q.Get("code"), q.Get("state"), strings.Join(parts, ".")); err != nil || ret != DefaultReturn {
			t.Errorf("a tampered return address: %q, %v", ret, err)
		}
	})
}

func TestGitHubConfig(t *testing.T) {
	st := openSQLiteStore(t)
	off, err := New(Config{Store: st.Store})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := off.GitHubStart("/"); !errors.Is(err, ErrGitHubOff) {
		t.Errorf("GitHubStart without config: %v", err)
	}
	if _, _, err := off.GitHubFinish(t.Context(), "c", "s", "v"); !errors.Is(err, ErrGitHubOff) {
		t.Errorf("GitHubFinish without config: %v", err)
	}
	good := GitHubConfig{ClientID: "id", ClientSecret: "secret", RedirectURL: "https://probity.example/signin/github/callback"}
	if _, err := New(Config{Store: st.Store, GitHub: &good}); err != nil {
		t.Errorf("defaults: %v", err)
	}
	for name, mod := range map[string]func(*GitHubConfig){
		"no client id":          func(c *GitHubConfig) { c.ClientID = "" },
		"no secret":             func(c *GitHubConfig) { c.ClientSecret = "" },
		"no redirect":           func(c *GitHubConfig) { c.RedirectURL = "" },
		"relative redirect":     func(c *GitHubConfig) { c.RedirectURL = "/signin/github/callback" },
		"http token endpoint":   func(c *GitHubConfig) { c.TokenURL = "http://github.example/login/oauth/access_token" },
		"ftp api":               func(c *GitHubConfig) { c.APIURL = "ftp://api.github.example" },
		"credentials in a URL":  func(c *GitHubConfig) { c.AuthURL = "https://user:pw@github.example/authorize" },
		"http to a public host": func(c *GitHubConfig) { c.RedirectURL = "http://probity.example/signin/github/callback" },
	} {
		c := good
		mod(&c)
		if _, err := New(Config{Store: st.Store, GitHub: &c}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := New(Config{}); err == nil {
		t.Error("no store: accepted")
	}
	if _, err := New(Config{Store: st.Store, SiteName: "Probity\r\nBcc: x@example.org"}); err == nil {
		t.Error("a site name with a line break: accepted")
	}
}
