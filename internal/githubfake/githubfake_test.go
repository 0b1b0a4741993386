package githubfake

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestFlow walks the fake's three endpoints by hand, as GitHub's documentation
// describes them, and its refusals.
func TestFlow(t *testing.T) {
	s := New("cid", "csecret")
	defer s.Close()
	var clock sync.Mutex
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	s.SetClock(func() time.Time {
		clock.Lock()
		defer clock.Unlock()
		return now
	})
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
	sum := sha256.Sum256([]byte(verifier))
	challenge := base64.RawURLEncoding.EncodeToString(sum[:])

	authorize := func(q url.Values) *http.Response {
		t.Helper()
		resp, err := c.Get(s.AuthURL() + "?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	q := url.Values{"client_id": {"cid"}, "redirect_uri": {"http://127.0.0.1:1/cb?x=1"}, "state": {"st"},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}}
	if resp := authorize(q); resp.StatusCode != http.StatusForbidden {
		t.Errorf("nobody signed in: %s", resp.Status)
	}
	s.SignIn(User{ID: 1, Login: "one"})
	for name, mod := range map[string]func(url.Values){
		"unknown client": func(v url.Values) { v.Set("client_id", "other") },
		"no PKCE":        func(v url.Values) { v.Del("code_challenge") },
		"plain PKCE":     func(v url.Values) { v.Set("code_challenge_method", "plain") },
		"no redirect":    func(v url.Values) { v.Del("redirect_uri") },
	} {
		v := cloneValues(q)
		mod(v)
		if resp := authorize(v); resp.StatusCode == http.StatusFound {
			t.Errorf("%s: redirected", name)
		}
	}
	resp := authorize(q)
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || loc.Host != "127.0.0.1:1" || loc.Query().Get("state") != "st" ||
		loc.Query().Get("x") != "1" || loc.Query().Get("code") == "" {
		t.Fatalf("authorize: %s %s", resp.Status, loc)
	}
	code := loc.Query().Get("code")

	exchange := func(form url.Values, accept string) map[string]string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, s.TokenURL(), strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		out := map[string]string{}
		if accept != "" {
			if err := json.Unmarshal(body, &out); err != nil {
				t.Fatalf("%s: %v", body, err)
			}
			return out
		}
		v, err := url.ParseQuery(string(body))
		if err != nil {
			t.Fatal(err)
		}
		for k := range v {
			out[k] = v.Get(k)
		}
		return out
	}
	form := url.Values{"client_id": {"cid"}, "client_secret": {"csecret"}, "code": {code},
		"redirect_uri": {"http://127.0.0.1:1/cb?x=1"}, "code_verifier": {verifier}}
	for name, mod := range map[string]func(url.Values){
		"wrong secret":       func(v url.Values) { v.Set("client_secret", "x") },
		"wrong verifier":     func(v url.Values) { v.Set("code_verifier", verifier[1:]+"A") },
		"no verifier":        func(v url.Values) { v.Del("code_verifier") },
		"wrong redirect_uri": func(v url.Values) { v.Set("redirect_uri", "http://127.0.0.1:2/cb") },
		"unknown code":       func(v url.Values) { v.Set("code", "nope") },
	} {
		v := cloneValues(form)
		mod(v)
		if out := exchange(v, ""); out["error"] == "" || out["access_token"] != "" {
			t.Errorf("%s: %v", name, out)
		}
	}
	out := exchange(form, "application/json")
	if out["access_token"] == "" || out["token_type"] != "bearer" {
		t.Fatalf("exchange: %v", out)
	}
	if again := exchange(form, ""); again["error"] != "bad_verification_code" {
		t.Errorf("a code exchanged twice: %v", again)
	}

	user := func(token string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, s.APIURL()+"/user", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	if status, m := user(out["access_token"]); status != 200 || m["id"] != float64(1) || m["login"] != "one" {
		t.Errorf("GET /user = %d %v", status, m)
	}
	if status, m := user("gho_unknown"); status != 401 || m["message"] != "Bad credentials" {
		t.Errorf("GET /user with an unknown token = %d %v", status, m)
	}

	// Codes expire after 10 minutes.
	resp = authorize(q)
	loc, _ = url.Parse(resp.Header.Get("Location"))
	clock.Lock()
	now = now.Add(11 * time.Minute)
	clock.Unlock()
	form.Set("code", loc.Query().Get("code"))
	if out := exchange(form, ""); out["error"] != "bad_verification_code" {
		t.Errorf("an expired code: %v", out)
	}
	if n := len(s.TokenRequests()); n != 8 {
		t.Errorf("%d token requests recorded, want 8", n)
	}
}

// TestPermissionNeedsPush: as GitHub, the collaborator permission read answers only a
// caller with push access to the repository; 403 for the others, however the token.
func TestPermissionNeedsPush(t *testing.T) {
	s := New("client", "secret")
	defer s.Close()
	s.APIToken = "site-token"
	owner, reader := User{ID: 1, Login: "owner"}, User{ID: 2, Login: "reader"}
	s.SetRole("acme/tool", owner, "maintain")
	s.SetRole("acme/tool", reader, "read")
	get := func(token string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, s.APIURL()+"/repos/acme/tool/collaborators/reader/permission", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get("site-token"); code != http.StatusForbidden {
		t.Errorf("the site's token without a user: %d, want 403", code)
	}
	s.SetAPITokenUser(reader)
	if code := get("site-token"); code != http.StatusForbidden {
		t.Errorf("a reader's token: %d, want 403", code)
	}
	s.SetAPITokenUser(owner)
	if code := get("site-token"); code != http.StatusOK {
		t.Errorf("a maintainer's token: %d, want 200", code)
	}
	if code := get("wrong"); code != http.StatusUnauthorized {
		t.Errorf("an unknown token: %d, want 401", code)
	}
}
