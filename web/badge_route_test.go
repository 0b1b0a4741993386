package web_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/probity-dev/probity/checks"
	"github.com/probity-dev/probity/checks/fixtures"
	"github.com/probity-dev/probity/checks/probe"
	"github.com/probity-dev/probity/rounds"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/web"
	"github.com/probity-dev/probity/web/badge"
)

// badgeSite is a site over a fresh store with one entry that was never checked, at a
// clock that stands still (so that no rate-limit bucket refills during a test); cfg's
// Store, Keys, BaseURL, Now and Logger are filled in.
func badgeSite(t *testing.T, cfg web.Config) (http.Handler, string) {
	t.Helper()
	now := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	st, doc, _ := openStore(t, now)
	e, _, err := st.AddEntry(context.Background(), store.NewEntry{SlugBase: "fresh", Kind: store.KindRemote,
		Locator: "https://fresh.example/mcp", Name: "fresh", Source: "import"})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store, cfg.Keys, cfg.BaseURL = st, doc, "https://probity.test"
	cfg.Now, cfg.Logger = func() time.Time { return now }, slog.New(slog.DiscardHandler)
	h, err := web.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h, e.Slug
}

// request serves one request from the test's one client, with If-None-Match when
// inm is not empty.
func request(h http.Handler, method, path, inm string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, nil)
	if inm != "" {
		req.Header.Set("If-None-Match", inm)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// TestBadgeRateLimit: badges have their own, generous bucket. 300 quick badge requests
// from one client (today's site refused 16 of 60) get no 429, and leave the client's
// pages alone: the page limit still lets exactly its burst through. The badge bucket
// limits too, at its burst, and is configurable.
func TestBadgeRateLimit(t *testing.T) {
	h, slug := badgeSite(t, web.Config{})
	svg, js := "/badge/"+slug+".svg", "/badge/"+slug+".json"
	for i := range 300 {
		p := svg
		if i%2 == 1 {
			p = js
		}
		if rec := request(h, "GET", p, ""); rec.Code != http.StatusOK {
			t.Fatalf("badge request %d: %d", i+1, rec.Code)
		}
	}
	pages := 0
	for ; pages < 1000; pages++ {
		if rec := request(h, "GET", "/", ""); rec.Code != http.StatusOK {
			if rec.Code != http.StatusTooManyRequests {
				t.Fatalf("page %d: %d", pages+1, rec.Code)
			}
			break
		}
	}
	if pages != web.DefaultRateLimit.Burst {
		t.Errorf("after 300 badges the pages' bucket let %d pages through, want its burst %d", pages, web.DefaultRateLimit.Burst)
	}
	// Pages are refused now; badges are not.
	n := 300
	for ; n < 10_000; n++ {
		if rec := request(h, "GET", svg, ""); rec.Code != http.StatusOK {
			if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
				t.Fatalf("badge request %d: %d, Retry-After %q", n+1, rec.Code, rec.Header().Get("Retry-After"))
			}
			break
		}
	}
	if n != web.DefaultBadgeRateLimit.Burst {
		t.Errorf("the badges' bucket let %d badges through, want its burst %d", n, web.DefaultBadgeRateLimit.Burst)
	}

	// Configured: three badges, then 429; the pages keep their own bucket.
	h, slug = badgeSite(t, web.Config{BadgeRateLimit: web.RateLimit{PerSecond: 0.5, Burst: 3}})
	for i := range 3 {
		if rec := request(h, "GET", "/badge/"+slug+".svg", ""); rec.Code != http.StatusOK {
			t.Fatalf("configured: badge %d: %d", i+1, rec.Code)
		}
	}
	if rec := request(h, "GET", "/badge/"+slug+".json", ""); rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "2" {
		t.Fatalf("configured: fourth badge: %d, Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	if rec := request(h, "GET", "/s/"+slug, ""); rec.Code != http.StatusOK {
		t.Errorf("configured: a page after the badges were limited: %d", rec.Code)
	}
}

// TestBadgeCaching: a badge carries badge.CacheControl and a strong ETag of its bytes;
// If-None-Match with it (or W/ it, or *) gets a 304 without a body, for GET and HEAD;
// another tag gets the badge. The SVG and the JSON have different tags.
func TestBadgeCaching(t *testing.T) {
	h, slug := badgeSite(t, web.Config{})
	tags := map[string]string{}
	for _, p := range []string{"/badge/" + slug + ".svg", "/badge/" + slug + ".json"} {
		rec := request(h, "GET", p, "")
		etag := rec.Header().Get("ETag")
		if rec.Code != http.StatusOK || !regexp.MustCompile(`^"[0-9a-f]{32}"$`).MatchString(etag) {
			t.Fatalf("%s: %d, ETag %q", p, rec.Code, etag)
		}
		if cc := rec.Header().Get("Cache-Control"); cc != badge.CacheControl {
			t.Errorf("%s: Cache-Control %q, want %q", p, cc, badge.CacheControl)
		}
		if cl := rec.Header().Get("Content-Length"); cl != strconv.Itoa(rec.Body.Len()) {
			t.Errorf("%s: Content-Length %q for %d bytes", p, cl, rec.Body.Len())
		}
		checkHeaders(t, p, rec)
		tags[p] = etag
		again := request(h, "GET", p, "")
		if again.Header().Get("ETag") != etag || again.Body.String() != rec.Body.String() {
			t.Errorf("%s: the same badge twice has two tags or bodies", p)
		}
		for _, method := range []string{"GET", "HEAD"} {
			for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
				nm := request(h, method, p, inm)
				if nm.Code != http.StatusNotModified || nm.Body.Len() != 0 {
					t.Errorf("%s %s If-None-Match %s: %d with %d bytes, want 304 and none", method, p, inm, nm.Code, nm.Body.Len())
				}
				if nm.Header().Get("ETag") != etag || nm.Header().Get("Cache-Control") != badge.CacheControl {
					t.Errorf("%s %s 304: ETag %q, Cache-Control %q", method, p, nm.Header().Get("ETag"), nm.Header().Get("Cache-Control"))
				}
			}
			stale := request(h, method, p, `"00000000000000000000000000000000"`)
			if stale.Code != http.StatusOK || stale.Header().Get("ETag") != etag {
				t.Errorf("%s %s with another tag: %d, ETag %q", method, p, stale.Code, stale.Header().Get("ETag"))
			}
			if method == "HEAD" && stale.Body.Len() != 0 {
				t.Errorf("HEAD %s has a body", p)
			}
		}
	}
	if len(tags) != 2 || tags["/badge/"+slug+".svg"] == tags["/badge/"+slug+".json"] {
		t.Errorf("the SVG and the JSON share a tag: %v", tags)
	}
	// A missing entry is no badge and no tag.
	if rec := request(h, "GET", "/badge/nope.svg", ""); rec.Code != http.StatusNotFound || rec.Header().Get("ETag") != "" ||
		rec.Header().Get("Cache-Control") == badge.CacheControl {
		t.Errorf("missing badge: %d, ETag %q, Cache-Control %q", rec.Code, rec.Header().Get("ETag"), rec.Header().Get("Cache-Control"))
	}
}

// routed is a Prober that probes, for an entry's URL, the URL the test routes it to
// (the URL itself when none), and records the observation under the entry's URL: an
// endpoint that changes its behaviour between rounds.
type routed struct {
	p  *probe.Prober
	mu sync.Mutex
	to map[string]string
}

func (r *routed) Probe(ctx context.Context, url string) (*checks.Observation, error) {
	r.mu.Lock()
	target, ok := r.to[url]
	r.mu.Unlock()
	if !ok {
		target = url
	}
	obs, err := r.p.Probe(ctx, target)
	if obs != nil {
		obs.URL = url
	}
	return obs, err
}

func (r *routed) route(from, to string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.to[from] = to
}

// badgeRig probes the demo's fixtures for real, signs and stores the rounds, and
// serves the badges of the store.
type badgeRig struct {
	st     store.Store
	h      http.Handler
	runner *rounds.Runner
	prober *routed
	demo   *fixtures.Demo
	now    time.Time
}

func newBadgeRig(t *testing.T) *badgeRig {
	t.Helper()
	r := &badgeRig{now: time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)}
	st, doc, signer := openStore(t, r.now)
	// The demo serves TLS on the port after its own, which another process may hold:
	// a few tries.
	var demo *fixtures.Demo
	var err error
	for range 5 {
		if demo, err = fixtures.StartDemo("127.0.0.1:0"); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(demo.Close)
	r.st, r.demo = st, demo
	// The demo's endpoints over TLS (a plain http endpoint is a finding), with the
	// fixture CA's certificate.
	caPEM, err := fixtures.CAPEM()
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatal("the fixture CA's PEM holds no certificate")
	}
	r.prober = &routed{p: probe.New(probe.Config{Version: "test", AllowLoopback: true, RootCAs: roots}), to: map[string]string{}}
	r.runner, err = rounds.NewRunner(rounds.Config{Store: st, Prober: r.prober, Signer: signer, ToolVersion: "test",
		Now: func() time.Time { return r.now }})
	if err != nil {
		t.Fatal(err)
	}
	r.h, err = web.New(web.Config{Store: st, Keys: doc, BaseURL: "https://probity.test", Now: func() time.Time { return r.now },
		Logger: slog.New(slog.DiscardHandler), RateLimit: generous})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *badgeRig) add(t *testing.T, slug, locator string) store.Entry {
	t.Helper()
	e, _, err := r.st.AddEntry(context.Background(), store.NewEntry{SlugBase: slug, Kind: store.KindRemote, Locator: locator, Name: slug, Source: "import"})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// round probes e a minute after the last round and wants outcome.
func (r *badgeRig) round(t *testing.T, e store.Entry, want rounds.RoundOutcome) {
	t.Helper()
	r.now = r.now.Add(time.Minute)
	o, err := r.runner.RunEntry(context.Background(), e, store.Due{EntryID: e.ID, Reason: store.ReasonCadence, At: r.now}, "")
	if err != nil {
		t.Fatal(err)
	}
	if o.Outcome != want {
		t.Fatalf("round of %s: %s, want %s", e.Slug, o.Outcome, want)
	}
}

// shown is what a badge says, read from both of its forms.
type shown struct{ Message, Color string }

// badgeOf fetches slug's badge as JSON and as SVG, checks that they say the same, and
// returns it.
func (r *badgeRig) badgeOf(t *testing.T, slug string) shown {
	t.Helper()
	var b shown
	if err := json.Unmarshal([]byte(fetch(t, r.h, "/badge/"+slug+".json")), &b); err != nil {
		t.Fatal(err)
	}
	svg := fetch(t, r.h, "/badge/"+slug+".svg")
	if !strings.Contains(svg, `aria-label="probity: `+b.Message+`"`) || !strings.Contains(svg, `fill="`+b.Color+`"`) {
		t.Errorf("%s: the SVG does not say %q in %s:\n%s", slug, b.Message, b.Color, svg)
	}
	return b
}

// closedURL is the URL of a loopback port nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + l.Addr().String() + "/mcp"
	l.Close()
	return u
}

var risksMessage = regexp.MustCompile(`^(1 risk|[2-9][0-9]* risks)$`)

// TestBadgeFixtureStates: the demo's healthy, hidden-instructions and login-required
// servers (over TLS), a server that does not answer and an entry never checked get five badges
// with five different messages and five different colors, the same in SVG and JSON.
func TestBadgeFixtureStates(t *testing.T) {
	r := newBadgeRig(t)
	healthy := r.add(t, "healthy", r.demo.TLSURL(fixtures.DemoHealthy))
	risky := r.add(t, "hidden", r.demo.TLSURL(fixtures.DemoHidden))
	offline := r.add(t, "offline", closedURL(t))
	login := r.add(t, "login", r.demo.TLSURL(fixtures.DemoAuth))
	never := r.add(t, "never", "https://never.example/mcp")
	r.round(t, healthy, rounds.SignedFull)
	r.round(t, risky, rounds.SignedFull)
	r.round(t, offline, rounds.Unsigned)
	r.round(t, login, rounds.SignedAuth)

	got := map[string]shown{}
	for _, e := range []store.Entry{healthy, risky, offline, login, never} {
		got[e.Slug] = r.badgeOf(t, e.Slug)
	}
	for slug, want := range map[string]shown{
		healthy.Slug: {"no risks found", badge.ColorHealthy},
		offline.Slug: {"offline", badge.ColorOffline},
		login.Slug:   {"login required", badge.ColorLoginNeeded},
		never.Slug:   {"not yet checked", badge.ColorNotYetChecked},
	} {
		if got[slug] != want {
			t.Errorf("%s: badge %+v, want %+v", slug, got[slug], want)
		}
	}
	if b := got[risky.Slug]; !risksMessage.MatchString(b.Message) || b.Color != badge.ColorRisks {
		t.Errorf("%s: badge %+v, want N risks in %s", risky.Slug, b, badge.ColorRisks)
	}
	messages, colors := map[string]bool{}, map[string]bool{}
	for _, b := range got {
		messages[b.Message], colors[b.Color] = true, true
	}
	if len(messages) != 5 || len(colors) != 5 {
		t.Errorf("five states, %d messages and %d colors: %+v", len(messages), len(colors), got)
	}
}

// TestBadgeKeepsRisksOfSignedRound: the risks come from the newest signed round. A
// newer round that could not be signed (the endpoint answers, but no MCP handshake)
// observed nothing that clears them, so the badge keeps them; a round that got no
// answer makes the entry offline; its ETag follows what the badge says.
func TestBadgeKeepsRisksOfSignedRound(t *testing.T) {
	r := newBadgeRig(t)
	e := r.add(t, "hidden", r.demo.TLSURL(fixtures.DemoHidden))
	r.round(t, e, rounds.SignedFull)
	risky := r.badgeOf(t, e.Slug)
	if !risksMessage.MatchString(risky.Message) || risky.Color != badge.ColorRisks {
		t.Fatalf("after a signed round: badge %+v, want N risks", risky)
	}
	tag := request(r.h, "GET", "/badge/"+e.Slug+".svg", "").Header().Get("ETag")

	notMCP := httptest.NewServer(http.NotFoundHandler())
	defer notMCP.Close()
	r.prober.route(e.Locator, notMCP.URL+"/mcp")
	r.round(t, e, rounds.Unsigned)
	rs, err := r.st.Rounds(context.Background(), e.ID, 1)
	if err != nil || len(rs) != 1 || rs[0].Signed || rs[0].Uptime == store.UptimeNoAnswer {
		t.Fatalf("the second round: %+v, %v; want an unsigned round with an answer", rs, err)
	}
	if b := r.badgeOf(t, e.Slug); b != risky {
		t.Errorf("after an unsigned round with an answer: badge %+v, want %+v still", b, risky)
	}
	if rec := request(r.h, "GET", "/badge/"+e.Slug+".svg", tag); rec.Code != http.StatusNotModified {
		t.Errorf("the same badge after the unsigned round: %d, want 304", rec.Code)
	}
	// The Checks tab shows the round the card and the badge count: the signed one.
	all, err := r.st.Rounds(context.Background(), e.ID, 2)
	if err != nil || len(all) != 2 || !all[1].Signed {
		t.Fatalf("rounds %+v, %v; want the signed one second", all, err)
	}
	if page := request(r.h, "GET", "/s/"+e.Slug+"/checks", "").Body.String(); !strings.Contains(page, all[1].RoundID) || strings.Contains(page, rs[0].RoundID) {
		t.Errorf("the Checks tab does not show the newest signed round %s (newest %s)", all[1].RoundID, rs[0].RoundID)
	}

	r.prober.route(e.Locator, closedURL(t))
	r.round(t, e, rounds.Unsigned)
	if b := r.badgeOf(t, e.Slug); b != (shown{"offline", badge.ColorOffline}) {
		t.Errorf("after a round without an answer: badge %+v, want offline", b)
	}
	if rec := request(r.h, "GET", "/badge/"+e.Slug+".svg", tag); rec.Code != http.StatusOK || rec.Header().Get("ETag") == tag {
		t.Errorf("a changed badge with the old tag: %d, ETag %q", rec.Code, rec.Header().Get("ETag"))
	}
}

// TestSignedRoundPastUnsignedRounds: 60 unsigned rounds that got an answer after the
// signed round of the hidden-instructions server (more than the 50 newest rounds the
// pages once looked back through) leave that round's findings on the badge, the card
// and the Checks tab; none of them says "not yet checked".
func TestSignedRoundPastUnsignedRounds(t *testing.T) {
	ctx := context.Background()
	r := newBadgeRig(t)
	e := r.add(t, "hidden", r.demo.TLSURL(fixtures.DemoHidden))
	r.round(t, e, rounds.SignedFull)
	risky := r.badgeOf(t, e.Slug)
	signed, err := r.st.Rounds(ctx, e.ID, 1)
	if err != nil || len(signed) != 1 || !signed[0].Signed || signed[0].Failed+signed[0].ObservedRisk == 0 {
		t.Fatalf("the signed round: %+v, %v; want one with findings", signed, err)
	}
	// The probe starts its rounds by the wall clock: the unsigned ones start after it.
	for i := range 60 {
		r.now = r.now.Add(time.Minute)
		at := signed[0].StartedAt.Add(time.Duration(i+1) * time.Minute)
		if _, err := r.st.SaveRound(ctx, &store.Round{EntryID: e.ID, DueAt: r.now, Reason: store.ReasonCadence, RoundID: "u-" + strconv.Itoa(i),
			StartedAt: at, FinishedAt: at.Add(time.Second), UnsignedReason: "no_tools", HTTPStatus: 200, Uptime: store.UptimeAnswered,
			ProtocolVersion: "2025-11-25", HandshakeMethod: "initialize", ProposedVersion: "2025-11-25", Results: []byte(`[]`)}); err != nil {
			t.Fatal(err)
		}
	}
	if rs, err := r.st.Rounds(ctx, e.ID, 61); err != nil || len(rs) != 61 || rs[0].Signed || rs[60].ID != signed[0].ID {
		t.Fatalf("rounds: %d, %v; want 60 unsigned ones after the signed one: newest %+v, oldest %+v, signed %+v", len(rs), err, rs[0], rs[len(rs)-1], signed[0])
	}

	if b := r.badgeOf(t, e.Slug); b != risky {
		t.Errorf("badge after 60 unsigned rounds: %+v, want %+v still", b, risky)
	}
	var tab struct {
		Card struct {
			Status       string   `json:"status"`
			Failed       int      `json:"failed"`
			ObservedRisk int      `json:"observedRisk"`
			Findings     []string `json:"findings"`
			SignedRound  *struct {
				RoundID string `json:"roundId"`
			} `json:"signedRound"`
		} `json:"card"`
		Round *struct {
			RoundID string `json:"roundId"`
		} `json:"round"`
	}
	if err := json.Unmarshal([]byte(fetch(t, r.h, "/s/"+e.Slug+"/checks.json")), &tab); err != nil {
		t.Fatal(err)
	}
	c := tab.Card
	if c.SignedRound == nil || c.SignedRound.RoundID != signed[0].RoundID || c.Failed != signed[0].Failed || c.ObservedRisk != signed[0].ObservedRisk ||
		len(c.Findings) != c.Failed+c.ObservedRisk || (c.Status != "risk" && c.Status != "failed") {
		t.Errorf("card after 60 unsigned rounds: %+v (signed round %+v); want the findings of %s", c, c.SignedRound, signed[0].RoundID)
	}
	if tab.Round == nil || tab.Round.RoundID != signed[0].RoundID {
		t.Errorf("the Checks tab shows round %+v, want the signed %s", tab.Round, signed[0].RoundID)
	}
	page := fetch(t, r.h, "/s/"+e.Slug)
	if strings.Contains(strings.ToLower(page), "not yet checked") || !strings.Contains(page, signed[0].RoundID) {
		t.Errorf("the entry page after 60 unsigned rounds does not name the signed round %s, or says not yet checked", signed[0].RoundID)
	}
}
