package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/probity-dev/probity/web/badge"
	"github.com/probity-dev/probity/web/ratelimit"
	"github.com/probity-dev/probity/web/refusals"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static/style.css
var styleCSS []byte

// The logo and the favicon, SVG images with no script and no style element.
var (
	//go:embed static/logo.svg
	logoSVG []byte
	//go:embed static/favicon.svg
	faviconSVG []byte
)

// handlers are the gin side: decoding and bounding requests, calling site, writing
// responses, mapping errors.
type handlers struct {
	site    *site
	log     *slog.Logger
	pages   map[string]*template.Template
	metrics *metrics
	limiter *ratelimit.Limiter
	logLim  *ratelimit.Limiter // /log/'s own bucket per client
	// badgeLim is /badge/'s own bucket per client (Config.BadgeRateLimit).
	badgeLim *ratelimit.Limiter
	refused  *refusals.Log
	// dirPages keeps the directory's rendered pages for Config.DirectoryCacheTTL; nil
	// renders every request.
	dirPages *pageCache
	// postBody is the most of a POST body read: maxBody without write paths,
	// maxPostBody with them.
	postBody int64

	// The write paths (account_routes.go); acc nil: none.
	acc      Accounts
	follows  Follows     // nil: no Follow buttons, Followed or unsubscribe pages
	hooks    Webhooks    // nil: no webhook pages
	claims   Claims      // nil: no claim pages (claim.go)
	listings Listings    // nil: no maintainer's listing form (listing.go)
	reports  Reports     // nil: no report form or report console (reports.go)
	maint    Maintainers // nil: no maintainer routes (roles.go)
	ops      Operators   // nil: no operator console (roles.go)
	disputes Disputes    // nil: no contest form (dispute.go)
	console  Console     // nil: no operator console (ops.go)
	desk     DisputeDesk // nil: no dispute queue in the console (ops.go)
	jar      cookieJar
	cop      *http.CrossOriginProtection
	writeLim *ratelimit.Limiter // the write routes' own bucket per client
	// baselines nil: no baseline pages (baseline.go)
	baselines Baselines
}

// features are the write paths a site serves, which the layout links to.
type features struct{ Accounts, Follows, Webhooks, Claims, Listings, Disputes, Reports bool }

var funcs = template.FuncMap{
	"utc":  func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
	"date": func(t time.Time) string { return t.UTC().Format(time.DateOnly) },
	"add":  func(a, b int) int { return a + b },
	// inList reports whether s is one of list.
	"inList": func(s string, list []string) bool { return slices.Contains(list, s) },
	// limitations is "what the checks do not tell you", for every page showing a badge.
	"limitations": func() []string { return limitations },
	// marked is an evidence sample with the escapes of hidden characters marked.
	"marked": markInvisible,
	// disputesOf is the data of the "disputes" partial (dispute.go).
	"disputesOf": func(slug string, ds []disputeView) disputesSection { return disputesSection{Slug: slug, Disputes: ds} },
}

// partials are the templates every page is parsed with, besides the layout: the
// shared parts of an entry's tabs (the History tab is another helper's page).
var partials = []string{"templates/entry_common.html"}

// parseTemplates parses each page with the shared layout; feats are the write paths
// the layout links to (the template function "features").
func parseTemplates(feats features) (map[string]*template.Template, error) {
	layout, err := template.New("layout.html").Funcs(funcs).Funcs(template.FuncMap{
		"features": func() features { return feats },
	}).ParseFS(templateFS, append([]string{"templates/layout.html"}, partials...)...)
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	pages := make(map[string]*template.Template)
	for _, n := range names {
		base := strings.TrimPrefix(n, "templates/")
		if base == "layout.html" || slices.Contains(partials, n) {
			continue
		}
		t, err := template.Must(layout.Clone()).ParseFS(templateFS, n)
		if err != nil {
			return nil, err
		}
		pages[strings.TrimSuffix(base, ".html")] = t
	}
	return pages, nil
}

func (h *handlers) router(trusted []string) (http.Handler, error) {
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	if err := r.SetTrustedProxies(trusted); err != nil {
		return nil, err
	}
	if len(trusted) == 0 {
		r.ForwardedByClientIP = false
	}
	// The panic goes to the request's log line (recovered), not to gin's stderr writer.
	chain := []gin.HandlerFunc{h.observe, gin.CustomRecoveryWithWriter(io.Discard, h.recovered), h.securityHeaders, h.rateLimit}
	if h.cop != nil {
		chain = append(chain, h.crossOrigin)
	}
	r.Use(chain...)
	r.NoRoute(func(c *gin.Context) { h.fail(c, errNotFound) })
	r.NoMethod(func(c *gin.Context) {
		// gin has set Allow to the methods the path takes; without write paths that
		// is GET, HEAD everywhere.
		allow := c.Writer.Header().Get("Allow")
		if allow == "" || h.acc == nil {
			allow = "GET, HEAD"
			c.Header("Allow", allow)
		}
		msg := "Only GET and HEAD are served here."
		if allow != "GET, HEAD" {
			msg = "This address takes " + allow + " only."
		}
		h.problem(c, http.StatusMethodNotAllowed, msg)
	})

	get := func(path string, fn gin.HandlerFunc) {
		r.GET(path, fn)
		r.HEAD(path, fn)
	}
	get("/", h.directory)
	get("/static/style.css", h.style)
	get("/static/logo.svg", svgAsset(logoSVG))
	get("/static/favicon.svg", svgAsset(faviconSVG))
	get("/s/:slug", h.entry) // also /s/{slug}.json and /s/{slug}.md
	get("/s/:slug/history", h.history)
	// The entry's tabs (tabs.go), each also as JSON.
	for _, t := range []string{tabSetup, tabChecks, tabSupply, tabVerify, tabFAQ} {
		get("/s/:slug/"+t, h.entryTab(t, false))
		get("/s/:slug/"+t+".json", h.entryTab(t, true))
	}
	get("/s/:slug/envelopes.jsonl", h.envelopes)
	get("/s/:slug/r/:round", h.round)
	get("/s/:slug/history.xml", h.entryFeed)
	get("/changes", h.changes)
	get("/changes.xml", h.directoryFeed)
	get("/stats", h.statsPage)
	get("/stats.json", h.statsJSON)
	// The JSON API (api.go); openapi.json describes every route under /api/v1.
	get("/api/v1/servers", h.apiServers)
	get("/api/v1/servers/:slug", h.apiServer)
	get("/api/v1/servers/:slug/history", h.apiHistory)
	get("/api/v1/changes", h.apiChanges)
	get("/api/v1/stats", h.statsJSON)
	get("/api/v1/openapi.json", h.openAPI)
	get("/badge/:file", h.badge)
	get("/.well-known/probity-keys.json", h.keys)
	get("/log/*path", h.logFile)   // the transparency log, tlog-tiles (log.go)
	get("/bundle/:file", h.bundle) // a record's bundle: /bundle/SEQ.json
	get("/healthz", h.healthz)
	get("/metrics", h.metricsText)
	if h.acc != nil {
		h.writeRoutes(r, get) // account_routes.go
	}
	return r, nil
}

// problem writes an error response in the shape the address asks for: JSON for .json,
// .jsonl and the API (/api/), plain text for Markdown and metrics, an HTML page
// otherwise. msg is this package's own text, never an error's.
func (h *handlers) problem(c *gin.Context, status int, msg string) {
	p := c.Request.URL.Path
	switch {
	case strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".jsonl") || strings.HasPrefix(p, "/api/") ||
		strings.HasPrefix(p, "/v0.1/"): // the subregistry answers in the registry's error shape
		b, _ := marshalJSON(map[string]string{"error": msg})
		c.Data(status, "application/json; charset=utf-8", b)
	case strings.HasSuffix(p, ".md") || p == "/metrics" || p == "/healthz":
		c.Data(status, "text/plain; charset=utf-8", []byte(msg+"\n"))
	default:
		h.render(c, status, "error", map[string]any{"Title": http.StatusText(status), "Message": msg, "Status": status})
	}
}

// renderBuffers are the buffers pages are rendered into, reused: a page is tens of KB,
// and growing a new buffer for each would be most of what a request allocates.
var renderBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBuffer is the largest buffer put back into renderBuffers.
const maxPooledBuffer = 1 << 20

// render executes a page into a buffer first, so a template error becomes a clean 500.
func (h *handlers) render(c *gin.Context, status int, page string, data any) {
	if err := h.renderTo(page, data, func(b []byte) { c.Data(status, "text/html; charset=utf-8", b) }); err != nil {
		_ = c.Error(err)
		c.Data(http.StatusInternalServerError, "text/plain; charset=utf-8", []byte("Something went wrong on our side.\n"))
	}
}

// renderTo renders page with data into a pooled buffer and hands its bytes to use,
// which must not keep them.
func (h *handlers) renderTo(page string, data any, use func([]byte)) error {
	buf := renderBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledBuffer {
			buf.Reset()
			renderBuffers.Put(buf)
		}
	}()
	if err := h.pages[page].ExecuteTemplate(buf, "layout.html", data); err != nil {
		return err
	}
	use(buf.Bytes())
	return nil
}

func (h *handlers) style(c *gin.Context) {
	c.Header("Cache-Control", "public, max-age=3600")
	c.Data(http.StatusOK, "text/css; charset=utf-8", styleCSS)
}

// svgAsset serves an embedded SVG image, cached for a week and revalidated by its ETag.
func svgAsset(b []byte) gin.HandlerFunc {
	etag := fmt.Sprintf(`"%x"`, sha256.Sum256(b))
	return func(c *gin.Context) {
		c.Header("Content-Type", "image/svg+xml")
		c.Header("Cache-Control", "public, max-age=604800")
		c.Header("ETag", etag)
		http.ServeContent(c.Writer, c.Request, "", time.Time{}, bytes.NewReader(b))
	}
}

func (h *handlers) directory(c *gin.Context) {
	q, msg := parseDirQuery(c.Request.URL.Query())
	if msg != "" {
		h.problem(c, http.StatusBadRequest, msg)
		return
	}
	if h.dirPages == nil {
		v, err := h.site.directory(c.Request.Context(), q)
		if err != nil {
			h.fail(c, err)
			return
		}
		h.render(c, http.StatusOK, "directory", v)
		return
	}
	body, err := h.dirPages.get(c.Request.Context(), q.values(q.Page).Encode(), func(ctx context.Context) ([]byte, error) {
		v, err := h.site.directory(ctx, q)
		if err != nil {
			return nil, err
		}
		var body []byte
		err = h.renderTo("directory", v, func(b []byte) { body = bytes.Clone(b) })
		return body, err
	})
	if err != nil {
		h.fail(c, err)
		return
	}
	c.Data(http.StatusOK, "text/html; charset=utf-8", body)
}

// protocolPattern is what a protocol version filter may be: a date, as MCP's versions
// are, or another short version string.
var protocolPattern = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z.-]{0,63}$`)

// parseDirQuery decodes the directory's parameters, or says in plain words which one is
// wrong. Every parameter is optional; each takes the values the page's own links and
// form send, and nothing else.
func parseDirQuery(v url.Values) (dirQuery, string) {
	for k, vs := range v {
		if len(vs) > 1 {
			return dirQuery{}, fmt.Sprintf("The parameter %q is given %d times; give it once.", k, len(vs))
		}
	}
	q := dirQuery{Q: strings.TrimSpace(v.Get("q")), Kind: v.Get("kind"), Protocol: v.Get("protocol"), Sort: v.Get("sort")}
	flag := func(name, on string, dst *bool) string {
		switch v.Get(name) {
		case "":
		case on:
			*dst = true
		default:
			return fmt.Sprintf("The filter %q takes the value %q or nothing.", name, on)
		}
		return ""
	}
	for _, msg := range []string{
		flag("verified", "1", &q.Verified), flag("changed", "7d", &q.Changed),
		flag("offline", "1", &q.Offline), flag("findings", "1", &q.Findings),
	} {
		if msg != "" {
			return dirQuery{}, msg
		}
	}
	var ok bool
	switch {
	case len(q.Q) > maxSearch:
		return dirQuery{}, fmt.Sprintf("The search is longer than %d bytes.", maxSearch)
	case !utf8.ValidString(q.Q) || strings.ContainsRune(q.Q, 0):
		return dirQuery{}, "The search is not valid UTF-8 text."
	case !validKind(q.Kind):
		return dirQuery{}, "The kind is not one of remote, npm, pypi or github."
	case q.Protocol != "" && !protocolPattern.MatchString(q.Protocol):
		return dirQuery{}, "The protocol version is not one (e.g. 2025-11-25)."
	}
	if _, ok = dirSorts[q.Sort]; !ok {
		return dirQuery{}, "The order is not one of name, change, findings or uptime."
	}
	if q.Page, ok = parsePage(v.Get("page")); !ok {
		return dirQuery{}, fmt.Sprintf("The page is not a number from 1 to %d.", maxPage)
	}
	return q, ""
}

func validKind(k string) bool {
	switch k {
	case "", "remote", "npm", "pypi", "github":
		return true
	}
	return false
}

// slugOK bounds a slug before it reaches the store: [a-z0-9][a-z0-9-]*, 1 to 128 bytes.
func slugOK(s string) bool {
	if s == "" || len(s) > 128 || s[0] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// entry serves /s/{slug}, /s/{slug}.json and /s/{slug}.md, each with ?tools=N, the
// page of the tools (toolpages.go): gin cannot route on a suffix within a segment, so
// the suffix is decoded here.
func (h *handlers) entry(c *gin.Context) {
	slug := c.Param("slug")
	format := "html"
	if s, ok := strings.CutSuffix(slug, ".json"); ok {
		slug, format = s, "json"
	} else if s, ok := strings.CutSuffix(slug, ".md"); ok {
		slug, format = s, "md"
	}
	if !slugOK(slug) {
		h.fail(c, errNotFound)
		return
	}
	tools, ok := parseToolsPage(c.Query("tools"))
	if !ok {
		h.problem(c, http.StatusBadRequest, "tools= must be a page number from 1 to 100000.")
		return
	}
	ctx := c.Request.Context()
	switch format {
	case "json":
		b, err := h.site.entryJSON(ctx, slug, tools)
		if err != nil {
			h.fail(c, err)
			return
		}
		c.Data(http.StatusOK, "application/json; charset=utf-8", b)
	case "md":
		b, err := h.site.entryMarkdown(ctx, slug, tools)
		if err != nil {
			h.fail(c, err)
			return
		}
		c.Data(http.StatusOK, "text/markdown; charset=utf-8", b)
	default:
		v, err := h.site.entryPage(ctx, slug, tools)
		if err == nil {
			err = h.setFollow(c, v.Head)
		}
		if err != nil {
			h.fail(c, err)
			return
		}
		h.render(c, http.StatusOK, "entry", map[string]any{"E": v, "Head": v.Head, "Limits": limitations, "Commands": verifyCommands(v.Links)})
	}
}

// entryTab serves one tab of an entry (/s/{slug}/{tab}), or its JSON.
func (h *handlers) entryTab(tab string, asJSON bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		slug := c.Param("slug")
		if !slugOK(slug) {
			h.fail(c, errNotFound)
			return
		}
		p, err := h.site.entryTab(c.Request.Context(), slug, tab, asJSON)
		if err != nil {
			h.fail(c, err)
			return
		}
		if asJSON {
			b, err := marshalJSON(tabJSONOf(p))
			if err != nil {
				h.fail(c, err)
				return
			}
			c.Data(http.StatusOK, "application/json; charset=utf-8", b)
			return
		}
		if err := h.setFollow(c, p.Head); err != nil {
			h.fail(c, err)
			return
		}
		h.render(c, http.StatusOK, "entry_"+tab, p)
	}
}

func (h *handlers) history(c *gin.Context) {
	slug := c.Param("slug")
	page, ok := parsePage(c.Query("page"))
	if !slugOK(slug) || !ok {
		h.fail(c, errNotFound)
		return
	}
	v, err := h.site.history(c.Request.Context(), slug, page)
	if err != nil {
		h.fail(c, err)
		return
	}
	head, err := h.site.tabHead(c.Request.Context(), slug, tabHistory)
	if err == nil {
		err = h.setFollow(c, head)
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	// The page's own view, with the top every tab of an entry has (Head).
	h.render(c, http.StatusOK, "history", struct {
		*historyView
		Head *entryHead
	}{v, head})
}

func (h *handlers) envelopes(c *gin.Context) {
	slug := c.Param("slug")
	if !slugOK(slug) {
		h.fail(c, errNotFound)
		return
	}
	write, err := h.site.envelopes(c.Request.Context(), slug)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.Header("Content-Type", "application/jsonl; charset=utf-8")
	c.Header("Content-Disposition", `attachment; filename="envelopes.jsonl"`)
	c.Status(http.StatusOK)
	if err := write(c.Writer); err != nil {
		// The status is sent: the error can only be logged, and the body is cut short,
		// which the verifier reports as a malformed last line.
		_ = c.Error(err)
	}
}

func (h *handlers) round(c *gin.Context) {
	slug := c.Param("slug")
	id, ok := strings.CutSuffix(c.Param("round"), ".json")
	if !slugOK(slug) || !ok {
		h.fail(c, errNotFound)
		return
	}
	id, bundle := strings.CutSuffix(id, ".bundle") // /s/SLUG/r/ROUND.bundle.json
	if bundle && h.site.log == nil {
		h.fail(c, errNotFound)
		return
	}
	rec, err := h.site.roundEnvelope(c.Request.Context(), slug, id)
	if err != nil {
		h.fail(c, err)
		return
	}
	if bundle {
		h.serveBundle(c, rec.Seq)
		return
	}
	c.Header("Cache-Control", "public, max-age=86400, immutable")
	c.Data(http.StatusOK, "application/json; charset=utf-8", rec.Envelope)
}

func (h *handlers) changes(c *gin.Context) {
	cs, err := h.site.recent(c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	h.render(c, http.StatusOK, "changes", cs)
}

func (h *handlers) keys(c *gin.Context) {
	c.Header("Cache-Control", "public, max-age=300")
	c.Data(http.StatusOK, "application/json; charset=utf-8", h.site.keysJSON)
}

func (h *handlers) healthz(c *gin.Context) {
	if err := h.site.health(c.Request.Context()); err != nil {
		_ = c.Error(err)
		c.Data(http.StatusServiceUnavailable, "text/plain; charset=utf-8", []byte("store unreachable\n"))
		return
	}
	c.Data(http.StatusOK, "text/plain; charset=utf-8", []byte("ok\n"))
}

func (h *handlers) metricsText(c *gin.Context) {
	h.metrics.ServeHTTP(c.Writer, c.Request)
}

func (h *handlers) entryFeed(c *gin.Context) {
	slug := c.Param("slug")
	if !slugOK(slug) {
		h.fail(c, errNotFound)
		return
	}
	b, err := h.site.entryFeed(c.Request.Context(), slug)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.Header("Cache-Control", "public, max-age=300")
	c.Data(http.StatusOK, "application/atom+xml; charset=utf-8", b)
}

func (h *handlers) directoryFeed(c *gin.Context) {
	b, err := h.site.directoryFeed(c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	c.Header("Cache-Control", "public, max-age=300")
	c.Data(http.StatusOK, "application/atom+xml; charset=utf-8", b)
}

// badge serves /badge/{slug}.svg and /badge/{slug}.json (shields.io's endpoint JSON),
// with badge.CacheControl and a strong ETag of its bytes: a cache revalidating with
// If-None-Match gets a 304 while the badge says the same (GET and HEAD alike, by
// http.ServeContent). The answer depends on the path alone, so it needs no Vary.
func (h *handlers) badge(c *gin.Context) {
	file := c.Param("file")
	slug, svg := strings.CutSuffix(file, ".svg")
	if !svg {
		var ok bool
		if slug, ok = strings.CutSuffix(file, ".json"); !ok {
			h.fail(c, errNotFound)
			return
		}
	}
	if !slugOK(slug) {
		h.fail(c, errNotFound)
		return
	}
	b, err := h.site.badgeOf(c.Request.Context(), slug)
	if err != nil {
		h.fail(c, err)
		return
	}
	body, contentType := badge.ShieldsJSON(b), "application/json; charset=utf-8"
	if svg {
		body, contentType = badge.SVG(b), "image/svg+xml"
	}
	c.Header("Cache-Control", badge.CacheControl)
	c.Header("Content-Type", contentType)
	c.Header("ETag", badgeETag(body))
	http.ServeContent(c.Writer, c.Request, "", time.Time{}, bytes.NewReader(body))
}

// badgeETag is the strong entity tag of a badge's bytes: the first 128 bits of their
// SHA-256, in hex.
func badgeETag(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}
