package claims

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/miekg/dns"

	"github.com/probity-dev/probity/checks/probe/egress"
	"github.com/probity-dev/probity/internal/githubfake"
	"github.com/probity-dev/probity/rounds"
	"github.com/probity-dev/probity/store"
)

// The test harness: real stores (SQLite, and PostgreSQL when PROBITY_TEST_DATABASE_URL
// is set or under CI), and local stand-ins for everything a proof is read from: an
// HTTP origin for the well-known file, a DNS server (miekg/dns) for TXT records, an npm
// registry and a PyPI index, and the GitHub API fake.

// forEachStore runs fn on a fresh store of each backend.
func forEachStore(t *testing.T, fn func(t *testing.T, st store.Store)) {
	t.Run("sqlite", func(t *testing.T) {
		st, err := store.Open(t.Context(), store.Config{SQLitePath: filepath.Join(t.TempDir(), "probity.db")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		if err := st.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		fn(t, st)
	})
	t.Run("postgres", func(t *testing.T) { fn(t, openPostgres(t)) })
}

func openPostgres(t *testing.T) store.Store {
	t.Helper()
	admin := os.Getenv("PROBITY_TEST_DATABASE_URL")
	if admin == "" && os.Getenv("CI") == "true" {
		admin = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	if admin == "" {
		t.Skip("set PROBITY_TEST_DATABASE_URL to run against PostgreSQL")
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	name := "probity_t_" + hex.EncodeToString(b[:])
	adminExec := func(ctx context.Context, q string) {
		t.Helper()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	adminExec(t.Context(), "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		adminExec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	})
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	st, err := store.Open(t.Context(), store.Config{DatabaseURL: u.String()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return st
}

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// texts is a set of texts by key that a fixture serves, safe for concurrent use.
type texts struct {
	mu sync.Mutex
	m  map[string]string
}

func (x *texts) set(k, v string) { x.mu.Lock(); defer x.mu.Unlock(); x.m[k] = v }
func (x *texts) del(k string)    { x.mu.Lock(); defer x.mu.Unlock(); delete(x.m, k) }
func (x *texts) get(k string) (string, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	v, ok := x.m[k]
	return v, ok
}

type env struct {
	st    store.Store
	svc   *Service
	clock *clock
	// origin (https) serves WellKnownPath from wellKnown["body"] (404 without it;
	// status 503 when wellKnown["down"] is set; wellKnown["status"] answers that status
	// with the headers in wellKnown["header"], "Name: value" lines; wellKnown["redirect"]
	// redirects to that URL).
	origin    *httptest.Server
	wellKnown *texts
	// txt are the TXT records by lower-case name (with the final dot); dnsDown drops
	// every query; questions are the names asked, in order.
	txt       *texts
	dnsDown   *texts
	questions *names
	// readme is the README of the newest version by package name, for the npm and
	// PyPI fixtures.
	readme *texts
	gh     *githubfake.Server
	cfg    Config
}

const ghToken = "gh-server-token"

func newEnv(t *testing.T, st store.Store) *env {
	t.Helper()
	e := &env{st: st, clock: &clock{now: time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)},
		wellKnown: &texts{m: map[string]string{}}, txt: &texts{m: map[string]string{}},
		dnsDown: &texts{m: map[string]string{}}, readme: &texts{m: map[string]string{}}, questions: &names{}}

	e.origin = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, down := e.wellKnown.get("down"); down {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if to, ok := e.wellKnown.get("redirect"); ok && r.URL.Path == WellKnownPath {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		if st, ok := e.wellKnown.get("status"); ok {
			h, _ := e.wellKnown.get("header")
			for _, line := range strings.Split(h, "\n") {
				if k, v, ok := strings.Cut(line, ": "); ok {
					w.Header().Set(k, v)
				}
			}
			code, _ := strconv.Atoi(st)
			w.WriteHeader(code)
			return
		}
		body, ok := e.wellKnown.get("body")
		if r.URL.Path != WellKnownPath && r.URL.Path != "/token.txt" || !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(e.origin.Close)

	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ds := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		if _, down := e.dnsDown.get("down"); down || len(r.Question) != 1 {
			return // no answer: the resolver times out
		}
		m := new(dns.Msg)
		m.SetReply(r)
		q := r.Question[0]
		e.questions.add(q.Name)
		v, ok := e.txt.get(strings.ToLower(q.Name))
		switch {
		case !ok:
			m.Rcode = dns.RcodeNameError
		case q.Qtype == dns.TypeTXT:
			for _, s := range strings.Split(v, "\n") {
				m.Answer = append(m.Answer, &dns.TXT{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeTXT, Class: dns.ClassINET}, Txt: []string{s}})
			}
		}
		_ = w.WriteMsg(m)
	})}
	go func() { _ = ds.ActivateAndServe() }()
	t.Cleanup(func() { _ = ds.Shutdown() })

	registry := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if name, ok := strings.CutPrefix(r.URL.Path, "/pypi/"); ok {
			name = strings.TrimSuffix(name, "/json")
			readme, ok := e.readme.get("pypi:" + name)
			if !ok {
				http.NotFound(w, r)
				return
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"info": map[string]any{"name": name, "version": "1.2.0", "description": readme}})
			return
		}
		name, _ := url.PathUnescape(strings.TrimPrefix(r.URL.EscapedPath(), "/"))
		readme, ok := e.readme.get("npm:" + name)
		if !ok {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"name": name, "dist-tags": map[string]string{"latest": "2.0.0"},
			"versions": map[string]any{"1.0.0": map[string]any{"version": "1.0.0"}, "2.0.0": map[string]any{"version": "2.0.0"}},
			"readme":   readme})
	}))
	t.Cleanup(registry.Close)

	e.gh = githubfake.New("client", "secret")
	e.gh.APIToken = ghToken
	t.Cleanup(e.gh.Close)

	e.cfg = Config{Store: st, Schedule: rounds.Schedule{}, Egress: egress.Config{AllowLoopback: true},
		RootCAs: e.roots(), DNSServer: pc.LocalAddr().String(), NPMURL: registry.URL, PyPIURL: registry.URL,
		GitHubAPIURL: e.gh.APIURL(), GitHubToken: ghToken, Timeout: 2 * time.Second, Now: e.clock.Now}
	e.svc, err = New(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// roots trust the test origins (every httptest TLS server has the same certificate).
func (e *env) roots() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(e.origin.Certificate())
	return pool
}

// check is Service.Check past the throttle: the clock moves CheckEvery on first.
func (e *env) check(t *testing.T, account int64, slug, token string) (Result, error) {
	t.Helper()
	e.clock.Add(CheckEvery)
	return e.svc.Check(t.Context(), account, slug, token)
}

// names is a list of names, safe for concurrent use.
type names struct {
	mu sync.Mutex
	l  []string
}

func (n *names) add(s string) { n.mu.Lock(); defer n.mu.Unlock(); n.l = append(n.l, s) }
func (n *names) all() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.l...)
}

// entry adds an entry with its first due times, as the service does.
func (e *env) entry(t *testing.T, slug, kind, locator string) store.Entry {
	t.Helper()
	var s rounds.Schedule
	ne := store.NewEntry{SlugBase: slug, Kind: kind, Locator: locator, Name: slug, Source: "import"}
	ne.Due = s.FirstDue(store.Entry{Kind: kind, Locator: locator}, e.clock.Now())
	en, _, err := e.st.AddEntry(t.Context(), ne)
	if err != nil {
		t.Fatal(err)
	}
	return en
}

func (e *env) account(t *testing.T, email string) int64 {
	t.Helper()
	a, _, err := e.st.EmailAccount(t.Context(), email, strings.ToLower(email), e.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}
