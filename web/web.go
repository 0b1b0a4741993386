// Package web publishes what Probity knows over HTTP, with gin: the directory, entry
// and history pages (html/template, one embedded stylesheet, no scripts), each entry as
// JSON and Markdown, its signed envelopes as JSONL for `probity verify`, single round
// envelopes, the key document at /.well-known/probity-keys.json, the recent changes,
// the Atom feeds (package feed), the badges (package badge), /healthz and Prometheus
// /metrics (prometheus/client_golang, with the Go runtime's and the process's metrics).
//
//	GET /                               directory (?q= ?kind= ?verified=1 ?changed=7d ?offline=1 ?findings=1
//	                                    ?protocol= ?sort=name|change|findings|uptime ?page=)
//	GET /s/{slug}                       entry page, the Overview tab (?tools=N: the page of its tools)
//	GET /s/{slug}/{tab}, /{tab}.json    the entry's other tabs: setup, checks, supply, verify, faq (tabs.go)
//	GET /s/{slug}/history               history (?page=), each change at #ch-N
//	GET /s/{slug}.json, /s/{slug}.md    entry as JSON (with "history", "toolsPage") and Markdown (last 5 changes), ?tools=N
//	GET /s/{slug}/history.xml           entry's Atom feed
//	GET /s/{slug}/envelopes.jsonl       entry's round, visible change and supply envelopes
//	GET /s/{slug}/r/{roundId}.json      one round's envelope
//	GET /badge/{slug}.svg, .json        badge, shields.io endpoint JSON; ETag, 304, own rate limit
//	GET /changes, /changes.xml          the 50 newest changes, page and Atom feed
//	GET /.well-known/probity-keys.json  key document
//	GET /stats, /stats.json             statistics (tables and SVG charts), cached 10 min
//	GET /api/v1/…                       JSON API; /api/v1/openapi.json describes it
//	GET /v0.1/servers…                  the MCP Registry API as a subregistry (subregistry.go)
//	/mcp (any method)                   Probity's own MCP server, when Config.MCP is set
//	GET /healthz, /metrics              store reachable; Prometheus text format
//
// With Config.Accounts set the site has write paths (account*.go, follow.go, csrf.go):
//
//	GET  /signin                        sign in: the e-mail form and the GitHub link (?return=)
//	POST /signin/code                   e-mail a sign-in code
//	GET, POST /signin/verify            enter the code
//	GET  /signin/github, …/callback     sign in with GitHub (when configured)
//	POST /signout, /signout/everywhere  sign out in this browser; everywhere
//	GET  /account                       the account: sign out, delete it
//	POST /account/delete                (confirmed by typing DELETE)
//	POST /account/email, …/verify       the address e-mails go to: a code to it, then the code
//	GET  /privacy                       what is stored, for how long, who receives what
//
// and, with Config.Follows, Config.Webhooks:
//
//	POST /s/{slug}/follow, …/unfollow   the Follow button on every page of an entry
//	GET  /followed, /followed.json      the entries followed, their changes, e-mail setting, failures
//	POST /followed/mode                 the e-mail setting: hourly, daily, off
//	GET, POST /unsubscribe/{token}      an e-mail's link: GET shows buttons, POST does it and offers Undo
//	POST /unsubscribe/{token}/one-click RFC 8058 one-click: change e-mails off, follows kept
//	GET, POST /account/webhooks         the account's webhooks; add one
//	GET  /account/webhooks/{id}         a webhook's delivery log
//	POST /account/webhooks/{id}/delete  remove it; …/enable: enable a disabled one again
//
// and, with Config.Claims (claim.go):
//
//	GET  /s/{slug}/claim                the ways to claim an entry (signed in)
//	POST /s/{slug}/claim                a token for one way, and the steps
//	POST /s/{slug}/claim/check          look for the token: claimed, or why not
//
// and, with Config.Maintainers and Config.Listings, for a maintainer of the entry only
// (listing.go):
//
//	GET, POST /s/{slug}/edit            the maintainer's listing: the form; save it
//	POST /s/{slug}/recheck              a round at once (429 within the interval)
//
// and, with Config.Baselines (baseline.go; maintainers of the entry only):
//
//	GET  /s/{slug}/baseline             the approved baseline beside the newest round
//	POST /s/{slug}/baseline             approve the newest round's tool surface
//
// Every piece of server-supplied text (tool names, titles, descriptions, instructions,
// server names, evidence samples) is shown as plain text: html/template escapes it in
// pages, encoding/json escapes <, > and & in JSON, and Markdown output escapes every
// punctuation character; invisible characters are first written as \u escapes
// (visible). Hidden changes appear nowhere: not on pages, not in JSON or Markdown, not
// in the envelopes JSONL.
//
// Without Accounts only GET and HEAD are served; other methods get 405. The write
// routes take POST (at most 8 KiB of form; other bodies stay at 1 KiB), pass Go's
// http.CrossOriginProtection (all but the one-click route), carry a csrf token, and
// have a stricter bucket of their own (Config.WriteRateLimit); csrf.go says how. Every response carries a strict
// Content-Security-Policy (no scripts at all, styles from the site only), nosniff, a
// Referrer-Policy and frame-ancestors 'none'. Each client (remote IP, or the address
// trusted proxies forward) has a token bucket (web/ratelimit); an empty bucket gets 429
// with Retry-After. /log/ and /badge/ have buckets of their own, larger ones: the log
// is read file by file, and badges are fetched through shared proxies. Every request
// gets one log line, except refused ones: those are counted on /metrics
// (probity_http_rate_limited_total, and probity_mcp_refused_total by reason for /mcp)
// and logged at most once per client per minute (web/refusals), so a flood of 429s
// writes a line a minute, not a line a request. Errors are mapped to a
// status in one place (fail): store.ErrNotFound becomes 404, a request whose client left first is logged as 499, anything else 500
// with a generic message, its detail logged.
//
// Every request reads the store, but for the directory's pages: each is rendered again
// once it is a second old (Config.DirectoryCacheTTL; pagecache.go), in the background
// while the old one is still served, so the directory lags the store by about that long. What is remembered besides is derived from immutable data only (memo.go), bounded by bytes and reported on /metrics: the
// entry's checks, supply and tools sections, rendered once per stored round, supply
// run and page of a tool surface, and the views the summary card on top of every tab
// reads (a round's checks, a supply run's verdict) (about 65 MB for 6,000 entries), and the last directory
// feed, served again while its changes are still the newest.
//
// Every answer is bounded whatever a listed server publishes. An entry's tools come a
// page at a time (toolpages.go: at most 100 tools and 256 KiB of escaped text a page,
// the same pages in HTML, JSON and Markdown), so the page of an entry with 7,000 tools
// of 3 KB is about 200 KB; a stored surface is read in one pass (scanSurface), by one
// request per surface and page and at most two at once. The history shows at most
// maxNames tools per change. An entry page reads its store
// data in one call (store.EntryDigest), on PostgreSQL in one round trip.
//
// gin stays inside this package: handlers decode and bound the request, call one
// method of site, and map its error; *gin.Context goes no further.
package web

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/web/feed"
	"github.com/probity-dev/probity/web/ratelimit"
	"github.com/probity-dev/probity/web/refusals"
)

// Config configures New.
type Config struct {
	// Store is read, never written.
	Store Store
	// Keys is the key document served at /.well-known/probity-keys.json and named in
	// the "verify it yourself" commands. It is encoded once, by New.
	Keys *keys.Document
	// BaseURL is the public address of the site without a trailing slash, e.g.
	// "https://probity.dev"; it prefixes the links in JSON, Markdown and the commands.
	BaseURL string
	// Logger receives one line per request and the detail of internal errors; nil
	// discards them.
	Logger *slog.Logger
	// Now is the clock (the "last 7 days" of filters and overviews); nil means time.Now.
	Now func() time.Time
	// RateLimit is the per-client token bucket; the zero value means
	// DefaultRateLimit.
	RateLimit RateLimit
	// TrustedProxies are the addresses or CIDR ranges of reverse proxies whose
	// X-Forwarded-For names the client; empty means the connection's remote address is
	// the client, and forwarded headers are ignored.
	TrustedProxies []string
	// MCP, when set, serves /mcp (every method): Probity's own MCP server
	// (web/mcpserver), which applies its own rate and body limits, so the site's do not
	// count its requests twice. The site's security headers are set on it too.
	MCP http.Handler
	// Log, when set, serves the transparency log read-only at /log/ (C2SP tlog-tiles)
	// and each signed record's bundle at /bundle/SEQ.json, linked from the pages.
	Log Log
	// LogRateLimit is the per-client token bucket of /log/, apart from the site's: an
	// auditor reads a tile or an entry bundle per 256 records. The zero value means
	// DefaultLogRateLimit.
	LogRateLimit RateLimit
	// BadgeRateLimit is the per-client token bucket of /badge/, apart from the site's.
	// The zero value means DefaultBadgeRateLimit.
	BadgeRateLimit RateLimit
	// DirectoryCacheTTL is how long a rendered directory page is served again
	// (pagecache.go): zero means DefaultDirectoryCacheTTL, a negative value renders
	// every request.
	DirectoryCacheTTL time.Duration

	// Accounts, when set, gives the site its write paths: sign-in (e-mail code and
	// GitHub), sessions, the account page and the privacy page (account.go). Nil
	// leaves the site read-only: only GET and HEAD, no cookies, no forms.
	Accounts Accounts
	// Follows, when set (with Accounts), serves the Follow buttons, the Followed page
	// and the unsubscribe pages of the e-mails.
	Follows Follows
	// Webhooks, when set (with Accounts), serves an account's webhooks and their
	// delivery logs.
	Webhooks Webhooks
	// Claims, when set (with Accounts), serves the claim pages (claim.go) and the
	// "Claim this entry" link on every entry page.
	Claims Claims
	// Maintainers and Operators, when set (with Accounts), say who may use an entry's
	// maintainer routes and the operator console (roles.go).
	Maintainers Maintainers
	Operators   Operators
	// Listings, when set (with Accounts and Maintainers), serves a maintainer's listing
	// form and "Re-check now" (listing.go); the entry pages show the maintainer's
	// listing whether or not it is set.
	Listings Listings
	// Disputes, when set (with Accounts and Maintainers), serves the contest form of a
	// finding (dispute.go) and its links on the Checks tab.
	Disputes Disputes
	// Console, when set with Operators, serves the operator console at /ops (ops.go);
	// DisputeDesk, when set too, its dispute queue.
	Console     Console
	DisputeDesk DisputeDesk
	// Reports, when set (with Accounts), serves the report form of Verified entries and,
	// with Operators, the report console (reports.go).
	Reports Reports
	// Baselines, when set (with Accounts and Maintainers), serves an entry's baseline
	// page and its approval (baseline.go).
	Baselines Baselines
	// WriteRateLimit is the per-client token bucket of the write routes (every POST
	// but the one-click unsubscribe, and the GitHub sign-in), apart from the site's
	// and stricter. The zero value means DefaultWriteRateLimit.
	WriteRateLimit RateLimit
}

// RateLimit is a token bucket per client: Burst requests at once, refilled at
// PerSecond requests a second.
type RateLimit struct {
	PerSecond float64
	Burst     int
	// MaxClients bounds the number of buckets kept; when full, idle buckets are
	// evicted first. 0 means 10,000.
	MaxClients int
}

// DefaultRateLimit is the rate limit of a zero Config.RateLimit.
var DefaultRateLimit = RateLimit{PerSecond: 10, Burst: 40, MaxClients: 10000}

// DefaultLogRateLimit is the rate limit of a zero Config.LogRateLimit: a 200,000-record
// log is about 1,600 files, read in under 10 s.
var DefaultLogRateLimit = RateLimit{PerSecond: 200, Burst: 400, MaxClients: 10000}

// DefaultBadgeRateLimit is the rate limit of a zero Config.BadgeRateLimit: 1,200 badges a
// minute with bursts of 600. Badges are embedded in READMEs, and the images of a README
// are fetched through a shared proxy (GitHub's camo, a company's proxy), so one client
// address stands for many readers and a page with a dozen badges is a dozen requests
// at once; a 429 there is a broken image in someone's README. A badge is small and
// cached (badge.CacheControl, ETag), so this costs little.
var DefaultBadgeRateLimit = RateLimit{PerSecond: 20, Burst: 600, MaxClients: 10000}

// DefaultWriteRateLimit is the rate limit of a zero Config.WriteRateLimit: bursts of
// 30 forms, then one every 3 seconds (20 a minute). Clicking Follow on a list of
// entries fits; a script trying codes or addresses does not (the accounts service
// limits codes per address and per client besides).
var DefaultWriteRateLimit = RateLimit{PerSecond: 1.0 / 3, Burst: 30, MaxClients: 10000}

// Limits on requests.
const (
	// maxBody is the most of a request body read but for a POST of the write paths
	// (maxPostBody): GET and HEAD need none.
	maxBody = 1 << 10
	// maxQuery bounds a request's raw query string.
	maxQuery = 1 << 10
	// maxSearch bounds the directory's ?q=.
	maxSearch = 200
	// maxPage bounds ?page= of the directory and the history.
	maxPage = 100
)

// New returns the site's handler. It fails when Store or Keys is missing or the key
// document does not encode.
func New(cfg Config) (http.Handler, error) {
	if cfg.Store == nil {
		return nil, errors.New("web: Config needs a Store")
	}
	if cfg.Keys == nil {
		return nil, errors.New("web: Config needs a key document")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.RateLimit.PerSecond <= 0 || cfg.RateLimit.Burst <= 0 {
		cfg.RateLimit = DefaultRateLimit
	}
	if cfg.RateLimit.MaxClients <= 0 {
		cfg.RateLimit.MaxClients = DefaultRateLimit.MaxClients
	}
	if cfg.LogRateLimit.PerSecond <= 0 || cfg.LogRateLimit.Burst <= 0 {
		cfg.LogRateLimit = DefaultLogRateLimit
	}
	if cfg.LogRateLimit.MaxClients <= 0 {
		cfg.LogRateLimit.MaxClients = DefaultLogRateLimit.MaxClients
	}
	if cfg.BadgeRateLimit.PerSecond <= 0 || cfg.BadgeRateLimit.Burst <= 0 {
		cfg.BadgeRateLimit = DefaultBadgeRateLimit
	}
	if cfg.BadgeRateLimit.MaxClients <= 0 {
		cfg.BadgeRateLimit.MaxClients = DefaultBadgeRateLimit.MaxClients
	}
	if cfg.WriteRateLimit.PerSecond <= 0 || cfg.WriteRateLimit.Burst <= 0 {
		cfg.WriteRateLimit = DefaultWriteRateLimit
	}
	if cfg.WriteRateLimit.MaxClients <= 0 {
		cfg.WriteRateLimit.MaxClients = DefaultWriteRateLimit.MaxClients
	}
	if cfg.Accounts == nil && (cfg.Follows != nil || cfg.Webhooks != nil) {
		return nil, errors.New("web: Follows and Webhooks need Accounts (sign-in)")
	}
	// gin's mode is process-wide; release mode keeps it from printing routes and
	// warnings to stdout.
	gin.SetMode(gin.ReleaseMode)
	keysJSON, err := keys.MarshalDocument(cfg.Keys)
	if err != nil {
		return nil, err
	}
	base := strings.TrimRight(cfg.BaseURL, "/")
	feedCfg := feed.Config{BaseURL: base}
	// The feeds check the base URL; an empty directory feed checks it once, here.
	if _, err := feed.DirectoryFeed(feedCfg, nil, cfg.Now()); err != nil {
		return nil, fmt.Errorf("web: BaseURL must be the site's absolute http or https address: %w", err)
	}
	feats := features{Accounts: cfg.Accounts != nil, Follows: cfg.Follows != nil, Webhooks: cfg.Webhooks != nil,
		Claims: cfg.Accounts != nil && cfg.Claims != nil, Listings: cfg.Accounts != nil && cfg.Maintainers != nil && cfg.Listings != nil,
		Disputes: cfg.Accounts != nil && cfg.Maintainers != nil && cfg.Disputes != nil, Reports: cfg.Accounts != nil && cfg.Reports != nil}
	pages, err := parseTemplates(feats)
	if err != nil {
		return nil, err
	}
	s := newSite(cfg.Store, pages["entry"])
	s.keysJSON, s.base, s.feed, s.now, s.log = keysJSON, base, feedCfg, cfg.Now, cfg.Log
	s.keyDoc = cfg.Keys
	lim, err := newLimiter(cfg.RateLimit, cfg.Now)
	if err != nil {
		return nil, err
	}
	logLim, err := newLimiter(cfg.LogRateLimit, cfg.Now)
	if err != nil {
		return nil, err
	}
	badgeLim, err := newLimiter(cfg.BadgeRateLimit, cfg.Now)
	if err != nil {
		return nil, err
	}
	refused := refusals.New(cfg.Logger, cfg.Now)
	var dirPages *pageCache
	if cfg.DirectoryCacheTTL == 0 {
		cfg.DirectoryCacheTTL = DefaultDirectoryCacheTTL
	}
	if cfg.DirectoryCacheTTL > 0 {
		dirPages = newPageCache(cfg.DirectoryCacheTTL, dirCacheBytes, cfg.Now)
	}
	src := metricsSources{memos: func() map[string]memoStats {
		m := s.memoStats()
		if dirPages != nil {
			m["directory_pages"] = dirPages.stats()
		}
		return m
	}, refused: refused.Counts}
	if rc, ok := cfg.MCP.(refusalCounter); ok {
		src.mcp = rc.Refusals
	}
	h := &handlers{
		site:     s,
		log:      cfg.Logger,
		pages:    pages,
		metrics:  newMetrics(src, cfg.Logger),
		limiter:  lim,
		logLim:   logLim,
		badgeLim: badgeLim,
		refused:  refused,
		dirPages: dirPages,
		postBody: maxBody,
	}
	if cfg.Accounts != nil {
		if err := h.writePaths(cfg, base); err != nil {
			return nil, err
		}
	}
	site, err := h.router(cfg.TrustedProxies)
	if err == nil {
		err = newSubregistry(s).register(site) // GET /v0.1/servers…: subregistry.go
	}
	if err != nil || cfg.MCP == nil {
		return site, err
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/mcp" {
			setSecurityHeaders(w.Header())
			cfg.MCP.ServeHTTP(w, r)
			return
		}
		site.ServeHTTP(w, r)
	}), nil
}

func newLimiter(l RateLimit, now func() time.Time) (*ratelimit.Limiter, error) {
	lim, err := ratelimit.New(ratelimit.Config{PerSecond: l.PerSecond, Burst: l.Burst, MaxClients: l.MaxClients, Now: now})
	if err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	return lim, nil
}

// Server returns an http.Server for h on addr with the timeouts the site is built for:
// 5 s to read the headers, 10 s for the whole request, 60 s to write the response (an
// entry's envelopes JSONL is the largest), 120 s idle keep-alive, and 16 KiB of
// headers. The caller starts it (ListenAndServe) and shuts it down (Shutdown).
func Server(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}
}
