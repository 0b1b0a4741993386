package accounts

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// GitHub's endpoints, the defaults of GitHubConfig.
const (
	GitHubAuthURL  = "https://github.com/login/oauth/authorize"
	GitHubTokenURL = "https://github.com/login/oauth/access_token"
	GitHubAPIURL   = "https://api.github.com"
)

// maxGitHubUserBody bounds the body of GET /user that is read.
const maxGitHubUserBody = 1 << 20

// maxGitHubCode bounds an authorization code from the callback (GitHub's are 20
// characters).
const maxGitHubCode = 256

// GitHubConfig configures sign-in with GitHub: an OAuth app's credentials and, for
// GitHub Enterprise or tests, its endpoints.
type GitHubConfig struct {
	// ClientID and ClientSecret are the OAuth app's (both required).
	ClientID     string
	ClientSecret string
	// RedirectURL is the callback the app is registered with: the site's
	// /signin/github/callback (required).
	RedirectURL string
	// AuthURL, TokenURL and APIURL are GitHub's authorize and token endpoints and REST
	// API base; GitHubAuthURL, GitHubTokenURL and GitHubAPIURL when empty. Each must be
	// https, or http to a loopback host (tests).
	AuthURL, TokenURL, APIURL string
	// HTTPClient makes the token and API requests; nil: a client with a 10 s timeout.
	HTTPClient *http.Client
}

// githubClient is a configured GitHub sign-in.
type githubClient struct {
	oauth  *oauth2.Config
	apiURL string
	http   *http.Client
}

func newGitHubClient(c GitHubConfig) (*githubClient, error) {
	if c.ClientID == "" || c.ClientSecret == "" {
		return nil, errors.New("accounts: GitHub sign-in needs the OAuth app's client id and secret")
	}
	if c.AuthURL == "" {
		c.AuthURL = GitHubAuthURL
	}
	if c.TokenURL == "" {
		c.TokenURL = GitHubTokenURL
	}
	if c.APIURL == "" {
		c.APIURL = GitHubAPIURL
	}
	for _, u := range []struct{ name, value string }{
		{"RedirectURL", c.RedirectURL}, {"AuthURL", c.AuthURL}, {"TokenURL", c.TokenURL}, {"APIURL", c.APIURL},
	} {
		if err := checkEndpoint(u.value); err != nil {
			return nil, fmt.Errorf("accounts: GitHubConfig.%s: %w", u.name, err)
		}
	}
	hc := c.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	return &githubClient{
		oauth: &oauth2.Config{
			ClientID:     c.ClientID,
			ClientSecret: c.ClientSecret,
			RedirectURL:  c.RedirectURL,
			// GitHub takes the credentials as form parameters; naming the style
			// spares the auto-detection's second request.
			Endpoint: oauth2.Endpoint{AuthURL: c.AuthURL, TokenURL: c.TokenURL, AuthStyle: oauth2.AuthStyleInParams},
			// No scope: the public profile (id and login) is all that is read.
		},
		apiURL: strings.TrimSuffix(c.APIURL, "/"),
		http:   hc,
	}, nil
}

// checkEndpoint refuses a URL that is not https, or http to a loopback host.
func checkEndpoint(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil {
		return fmt.Errorf("%q is not an absolute http(s) URL", s)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
			return nil
		}
		return fmt.Errorf("%q is plain http to a host that is not loopback: use https", s)
	default:
		return fmt.Errorf("%q is not an http(s) URL", s)
	}
}

// githubState is what the state cookie binds to the browser.
type githubState struct {
	state, verifier string
	issued          time.Time
	returnTo        string
}

// randomToken is 32 bytes from crypto/rand in base64url without padding.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// GitHubStart begins a sign-in with GitHub that returns to returnTo (through
// SafeReturn): it returns the URL of GitHub's authorize page, to redirect the browser
// to, and the value of the state cookie to set for the callback (HttpOnly, Max-Age
// GitHubStateLifetime, Path of the callback). ErrGitHubOff when GitHub sign-in is not
// configured.
func (s *Service) GitHubStart(returnTo string) (authURL, cookie string, err error) {
	if s.github == nil {
		return "", "", ErrGitHubOff
	}
	st := githubState{state: randomToken(), verifier: oauth2.GenerateVerifier(), issued: s.now(), returnTo: SafeReturn(returnTo)}
	authURL = s.github.oauth.AuthCodeURL(st.state, oauth2.S256ChallengeOption(st.verifier))
	return authURL, st.encode(), nil
}

// encode is the cookie value of st.
func (st githubState) encode() string {
	return "v1." + st.state + "." + st.verifier + "." + strconv.FormatInt(st.issued.UnixMilli(), 10) + "." +
		base64.RawURLEncoding.EncodeToString([]byte(st.returnTo))
}

// maxStateCookie bounds the cookie value decodeGitHubState reads.
const maxStateCookie = 1024

// decodeGitHubState parses a state cookie value.
func decodeGitHubState(v string) (githubState, bool) {
	if len(v) > maxStateCookie {
		return githubState{}, false
	}
	parts := strings.Split(v, ".")
	if len(parts) != 5 || parts[0] != "v1" || len(parts[1]) != 43 || len(parts[2]) != 43 {
		return githubState{}, false
	}
	for _, p := range parts[1:3] {
		if _, err := base64.RawURLEncoding.Strict().DecodeString(p); err != nil {
			return githubState{}, false
		}
	}
	ms, err := strconv.ParseInt(parts[3], 10, 64)
	if err != nil {
		return githubState{}, false
	}
	ret, err := base64.RawURLEncoding.Strict().DecodeString(parts[4])
	if err != nil {
		return githubState{}, false
	}
	return githubState{state: parts[1], verifier: parts[2], issued: time.UnixMilli(ms), returnTo: SafeReturn(string(ret))}, true
}

// GitHubFinish completes a sign-in with GitHub from its callback: code and state are
// the callback's query parameters, cookie the state cookie's value. It returns a new
// session of the GitHub user's account (made now on the first sign-in) and where to
// return to. ErrGitHubState when the state does not match the cookie's, the cookie is
// missing, malformed or older than GitHubStateLifetime; ErrGitHubDenied when there is
// no code (the person cancelled; GitHub's callback then carries error=access_denied);
// ErrGitHubDenied also when GitHub refused the code; another error when GitHub could not
// be reached or answered wrongly.
func (s *Service) GitHubFinish(ctx context.Context, code, state, cookie string) (Session, string, error) {
	if s.github == nil {
		return Session{}, "", ErrGitHubOff
	}
	st, ok := decodeGitHubState(cookie)
	if !ok || subtle.ConstantTimeCompare([]byte(state), []byte(st.state)) != 1 {
		return Session{}, "", ErrGitHubState
	}
	now := s.now()
	if age := now.Sub(st.issued); age < -time.Minute || age > GitHubStateLifetime {
		return Session{}, "", ErrGitHubState
	}
	if code == "" {
		return Session{}, "", ErrGitHubDenied
	}
	if len(code) > maxGitHubCode || !printableASCII(code, false) {
		return Session{}, "", fmt.Errorf("%w (a malformed code)", ErrGitHubState)
	}
	id, login, err := s.github.user(ctx, code, st.verifier)
	if err != nil {
		return Session{}, "", err
	}
	a, created, err := s.st.GitHubAccount(ctx, id, login, now)
	if err != nil {
		return Session{}, "", err
	}
	sess, err := s.newSession(ctx, a.ID)
	if err != nil {
		return Session{}, "", err
	}
	s.log.Info("signed in with GitHub", "account", a.ID, "new_account", created)
	return sess, st.returnTo, nil
}

// user exchanges the code (with the PKCE verifier) for a token and reads the user's
// numeric id and login with it. The token is used for this one request and dropped.
func (g *githubClient) user(ctx context.Context, code, verifier string) (int64, string, error) {
	tok, err := g.oauth.Exchange(context.WithValue(ctx, oauth2.HTTPClient, g.http), code, oauth2.VerifierOption(verifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode != "" {
			// Only the error code: the rest of the body is GitHub's text.
			return 0, "", fmt.Errorf("%w (GitHub refused the code: %s)", ErrGitHubDenied, safeCode(re.ErrorCode))
		}
		return 0, "", fmt.Errorf("couldn't complete the sign-in with GitHub: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.apiURL+"/user", nil)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	tok.SetAuthHeader(req)
	resp, err := g.http.Do(req)
	if err != nil {
		return 0, "", fmt.Errorf("couldn't read the GitHub user: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, "", fmt.Errorf("couldn't read the GitHub user: GitHub answered %s", resp.Status)
	}
	var u struct {
		ID    int64  `json:"id"`
		Login string `json:"login"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxGitHubUserBody)).Decode(&u); err != nil {
		return 0, "", fmt.Errorf("couldn't read the GitHub user: %w", err)
	}
	if u.ID <= 0 || !validLogin(u.Login) {
		return 0, "", errors.New("couldn't read the GitHub user: the answer has no valid id and login")
	}
	return u.ID, u.Login, nil
}

// validLogin reports whether s is a GitHub login: 1 to 39 letters, digits and hyphens.
func validLogin(s string) bool {
	if len(s) == 0 || len(s) > 39 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// safeCode is an OAuth error code as it may be shown: at most 64 of its letters,
// digits and underscores.
func safeCode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < 64; i++ {
		if c := s[i]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' {
			b.WriteByte(c)
		}
	}
	return b.String()
}
