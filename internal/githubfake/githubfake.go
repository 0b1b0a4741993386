// Package githubfake is a local stand-in for GitHub's OAuth web flow, for tests: an
// httptest server on loopback that implements
//
//   - GET /login/oauth/authorize: as GitHub does for a user who is signed in there and
//     has authorized the app, it redirects at once to redirect_uri with ?code=…&state=…
//     (state echoed), or with ?error=access_denied&state=… when told to deny. It
//     requires the client id, a redirect_uri (equal to RedirectURL when one is set)
//     and a PKCE challenge with method S256.
//   - POST /login/oauth/access_token: exchanges a code, once and within 10 minutes,
//     for an access token, checking the client's id and secret (form parameters or
//     HTTP Basic), the redirect_uri and the PKCE code_verifier. As GitHub does, it
//     answers 200 with application/x-www-form-urlencoded (or JSON when the Accept
//     header asks for it), an error=… body for a refused code.
//   - GET /api/user: the user of a bearer token, as JSON with GitHub's id and login
//     (401 {"message":"Bad credentials"} for an unknown token).
//   - GET /api/repos/{owner}/{repo}/collaborators/{login}/permission: a collaborator's
//     permission and role as SetRole set them, as GitHub answers ("permission":
//     admin, write, read or none; "role_name": admin, maintain, write, triage, read;
//     "user" with id and login); 404 for a login that is no collaborator. As GitHub,
//     it answers only a caller with push access to the repository (the role write,
//     maintain or admin): the user of a bearer token the OAuth flow issued, or
//     SetAPITokenUser's for APIToken; 403 "Must have push access to view repository
//     collaborators." for anyone else.
//   - GET /api/repos/{owner}/{repo}/contents/{path}: a file of the default branch as
//     SetFile set it, raw (as with Accept: application/vnd.github.raw+json); 404 when
//     there is none, or for another branch (?ref=).
//
// The two repository reads require "Authorization: Bearer APIToken" when APIToken is
// set (401 otherwise), and count in APIRequests.
//
// The user who approves is set with SignIn; a rename is SignIn with the same ID and a
// new Login. Every token request is recorded (TokenRequests) so a test can see what a
// client sent.
package githubfake

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"
)

// User is a GitHub user: the numeric id never changes, the login can.
type User struct {
	ID    int64
	Login string
}

// codeLifetime is how long an authorization code can be exchanged (GitHub: 10 minutes).
const codeLifetime = 10 * time.Minute

// Server is a running fake. Its methods are safe for concurrent use.
type Server struct {
	ClientID, ClientSecret string
	// RedirectURL, when set, is the only redirect_uri the authorize endpoint accepts.
	RedirectURL string
	// APIToken, when set, is the token the repository reads require. Set it before
	// the first request.
	APIToken string

	srv *httptest.Server

	mu            sync.Mutex
	now           func() time.Time
	user          *User
	deny          bool
	grants        map[string]*grant
	tokens        map[string]User
	tokenRequests []url.Values
	authRequests  []url.Values
	roles         map[string]map[string]collaborator // repo "owner/name" → lower-case login
	files         map[string]map[string]string       // repo → path → content
	apiRequests   int
	apiTokenUser  User
}

// SetAPITokenUser sets the user APIToken belongs to, for the collaborator permission
// read, which needs push access (none set: a user without any).
func (s *Server) SetAPITokenUser(u User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apiTokenUser = u
}

type collaborator struct {
	user User
	role string
}

type grant struct {
	clientID, redirectURI, challenge string
	user                             User
	issued                           time.Time
	used                             bool
}

// New starts a fake for the OAuth app with the id and secret; Close stops it.
func New(clientID, clientSecret string) *Server {
	s := &Server{ClientID: clientID, ClientSecret: clientSecret, now: time.Now,
		grants: map[string]*grant{}, tokens: map[string]User{},
		roles: map[string]map[string]collaborator{}, files: map[string]map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login/oauth/authorize", s.authorize)
	mux.HandleFunc("POST /login/oauth/access_token", s.token)
	mux.HandleFunc("GET /api/user", s.apiUser)
	mux.HandleFunc("GET /api/repos/{owner}/{repo}/collaborators/{login}/permission", s.permission)
	mux.HandleFunc("GET /api/repos/{owner}/{repo}/contents/{path...}", s.contents)
	s.srv = httptest.NewServer(mux)
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// URL is the server's base URL.
func (s *Server) URL() string { return s.srv.URL }

// AuthURL is the authorize endpoint.
func (s *Server) AuthURL() string { return s.srv.URL + "/login/oauth/authorize" }

// TokenURL is the token endpoint.
func (s *Server) TokenURL() string { return s.srv.URL + "/login/oauth/access_token" }

// APIURL is the REST API's base (GET APIURL/user).
func (s *Server) APIURL() string { return s.srv.URL + "/api" }

// SignIn sets the user who is signed in at the fake GitHub and approves every
// authorization from now on.
func (s *Server) SignIn(u User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.user = &u
}

// Deny makes the authorize endpoint redirect back with error=access_denied, as GitHub
// does when the user cancels (deny false: approve again).
func (s *Server) Deny(deny bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deny = deny
}

// SetClock sets the fake's clock (time.Now by default), for code expiry.
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// TokenRequests returns the form of every token request received, oldest first.
func (s *Server) TokenRequests() []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]url.Values, len(s.tokenRequests))
	for i, v := range s.tokenRequests {
		out[i] = cloneValues(v)
	}
	return out
}

// AuthRequests returns the query of every authorize request received, oldest first.
func (s *Server) AuthRequests() []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]url.Values, len(s.authRequests))
	for i, v := range s.authRequests {
		out[i] = cloneValues(v)
	}
	return out
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.authRequests = append(s.authRequests, cloneValues(q))
	redirect := q.Get("redirect_uri")
	switch {
	case q.Get("client_id") != s.ClientID:
		http.Error(w, "unknown client_id", http.StatusNotFound)
		return
	case redirect == "" || (s.RedirectURL != "" && redirect != s.RedirectURL):
		http.Error(w, "the redirect_uri is not associated with this application", http.StatusBadRequest)
		return
	case q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256":
		http.Error(w, "this fake requires PKCE with S256", http.StatusBadRequest)
		return
	case s.user == nil:
		http.Error(w, "nobody is signed in at the fake GitHub (call SignIn)", http.StatusForbidden)
		return
	}
	back, err := url.Parse(redirect)
	if err != nil {
		http.Error(w, "malformed redirect_uri", http.StatusBadRequest)
		return
	}
	v := back.Query()
	if s.deny {
		v.Set("error", "access_denied")
		v.Set("error_description", "The user has denied your application access.")
	} else {
		code := randomHex(10)
		s.grants[code] = &grant{clientID: s.ClientID, redirectURI: redirect, challenge: q.Get("code_challenge"),
			user: *s.user, issued: s.now()}
		v.Set("code", code)
	}
	if st := q.Get("state"); st != "" {
		v.Set("state", st)
	}
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "malformed form", http.StatusBadRequest)
		return
	}
	form := cloneValues(r.PostForm)
	id, secret := form.Get("client_id"), form.Get("client_secret")
	if u, p, ok := r.BasicAuth(); ok {
		id, secret = u, p
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokenRequests = append(s.tokenRequests, form)
	fail := func(code, description string) {
		writeToken(w, r, url.Values{"error": {code}, "error_description": {description}})
	}
	if id != s.ClientID || secret != s.ClientSecret {
		fail("incorrect_client_credentials", "The client_id and/or client_secret passed are incorrect.")
		return
	}
	g, ok := s.grants[form.Get("code")]
	switch {
	case !ok || g.used || s.now().Sub(g.issued) > codeLifetime || g.clientID != id:
		fail("bad_verification_code", "The code passed is incorrect or expired.")
		return
	case form.Get("redirect_uri") != "" && form.Get("redirect_uri") != g.redirectURI:
		fail("redirect_uri_mismatch", "The redirect_uri MUST match the registered callback URL for this application.")
		return
	}
	sum := sha256.Sum256([]byte(form.Get("code_verifier")))
	if form.Get("code_verifier") == "" || base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
		fail("bad_verification_code", "The code_verifier does not match the code_challenge.")
		return
	}
	g.used = true
	token := "gho_" + randomHex(18)
	s.tokens[token] = g.user
	writeToken(w, r, url.Values{"access_token": {token}, "scope": {""}, "token_type": {"bearer"}})
}

// writeToken answers a token request as GitHub does: 200, form-encoded unless JSON is
// asked for.
func writeToken(w http.ResponseWriter, r *http.Request, v url.Values) {
	if strings.Contains(r.Header.Get("Accept"), "application/json") {
		m := map[string]string{}
		for k := range v {
			m[k] = v.Get(k)
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_ = json.NewEncoder(w).Encode(m)
		return
	}
	w.Header().Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	_, _ = w.Write([]byte(v.Encode()))
}

func (s *Server) apiUser(w http.ResponseWriter, r *http.Request) {
	auth := r.Header.Get("Authorization")
	token, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok {
		token, ok = strings.CutPrefix(auth, "token ")
	}
	s.mu.Lock()
	u, known := s.tokens[token]
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if !ok || !known {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest","status":"401"}`))
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{
		"login": u.Login, "id": u.ID, "node_id": "U_fake" + randomHex(4), "type": "User",
		"site_admin": false, "name": nil, "email": nil,
	})
}

// SetRole makes u a collaborator of the repository "owner/name" with the role (admin,
// maintain, write, triage or read); an empty role removes the collaborator.
func (s *Server) SetRole(repo string, u User, role string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := strings.ToLower(repo)
	if s.roles[key] == nil {
		s.roles[key] = map[string]collaborator{}
	}
	if role == "" {
		delete(s.roles[key], strings.ToLower(u.Login))
		return
	}
	s.roles[key][strings.ToLower(u.Login)] = collaborator{user: u, role: role}
}

// SetFile sets a file of the repository's default branch; delete true removes it.
func (s *Server) SetFile(repo, path, content string, remove bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := strings.ToLower(repo)
	if s.files[key] == nil {
		s.files[key] = map[string]string{}
	}
	if remove {
		delete(s.files[key], path)
		return
	}
	s.files[key][path] = content
}

// APIRequests counts the repository reads received.
func (s *Server) APIRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.apiRequests
}

// apiAuthorized counts a repository read and answers 401 unless it carries APIToken.
func (s *Server) apiAuthorized(w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	s.apiRequests++
	s.mu.Unlock()
	if s.APIToken == "" || r.Header.Get("Authorization") == "Bearer "+s.APIToken {
		return true
	}
	writeAPIError(w, http.StatusUnauthorized, "Bad credentials")
	return false
}

func writeAPIError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": msg, "documentation_url": "https://docs.github.com/rest"})
}

// permissionOf is GitHub's legacy permission of a role.
var permissionOf = map[string]string{"admin": "admin", "maintain": "write", "write": "write", "triage": "read", "read": "read"}

// pushRoles are the roles with push access.
var pushRoles = map[string]bool{"admin": true, "maintain": true, "write": true}

func (s *Server) permission(w http.ResponseWriter, r *http.Request) {
	repo := strings.ToLower(r.PathValue("owner") + "/" + r.PathValue("repo"))
	bearer := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	caller, known := s.tokens[bearer]
	if !known && s.APIToken != "" && bearer == s.APIToken {
		caller, known = s.apiTokenUser, true
	}
	s.mu.Unlock()
	if known && caller.ID != 0 {
		s.mu.Lock()
		s.apiRequests++
		s.mu.Unlock()
	} else if !s.apiAuthorized(w, r) {
		return
	}
	s.mu.Lock()
	push := false
	for _, c := range s.roles[repo] {
		push = push || known && c.user.ID == caller.ID && caller.ID != 0 && pushRoles[c.role]
	}
	c, ok := s.roles[repo][strings.ToLower(r.PathValue("login"))]
	s.mu.Unlock()
	if !push {
		writeAPIError(w, http.StatusForbidden, "Must have push access to view repository collaborators.")
		return
	}
	if !ok {
		writeAPIError(w, http.StatusNotFound, "Not Found")
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"permission": permissionOf[c.role], "role_name": c.role,
		"user": map[string]any{"login": c.user.Login, "id": c.user.ID, "type": "User"},
	})
}

func (s *Server) contents(w http.ResponseWriter, r *http.Request) {
	if !s.apiAuthorized(w, r) {
		return
	}
	repo := strings.ToLower(r.PathValue("owner") + "/" + r.PathValue("repo"))
	s.mu.Lock()
	content, ok := s.files[repo][r.PathValue("path")]
	s.mu.Unlock()
	if !ok || r.URL.Query().Get("ref") != "" {
		writeAPIError(w, http.StatusNotFound, "Not Found")
		return
	}
	w.Header().Set("Content-Type", "application/vnd.github.raw+json; charset=utf-8")
	_, _ = w.Write([]byte(content))
}
