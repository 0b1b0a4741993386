package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/probity-dev/probity/store"
)

// contentSecurityPolicy allows no scripts, no frames, no plugins, styles and images
// from the site only (and data: images), and forms only back to the site.
const contentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// setSecurityHeaders sets the headers every response carries.
func setSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}

// securityHeaders sets the headers every response carries, and bounds the request:
// its body to maxBody, or to postBody for a POST (the write paths' forms; the
// maintainer's listing form, maxListingBody).
func (h *handlers) securityHeaders(c *gin.Context) {
	setSecurityHeaders(c.Writer.Header())
	limit := int64(maxBody)
	if c.Request.Method == http.MethodPost {
		limit = h.postLimit(c)
	}
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, limit)
	if c.Request.ContentLength > limit {
		c.AbortWithStatus(http.StatusRequestEntityTooLarge)
		return
	}
	if len(c.Request.URL.RawQuery) > maxQuery {
		c.AbortWithStatus(http.StatusRequestURITooLong)
		return
	}
	c.Next()
}

// route is the gin route of a request for logs and metrics: its pattern, never the
// client's path, so the label set stays bounded.
func route(c *gin.Context) string {
	if r := c.FullPath(); r != "" {
		return r
	}
	return "unmatched"
}

// ctxRefused marks a request the rate limit refused: observe leaves its line to
// refusals.Log.
const ctxRefused = "probity.refused"

// observe logs one line per request and counts it in the metrics. A request the rate
// limit refused is counted but not logged here: rateLimit logged it, at most once per
// client per minute.
func (h *handlers) observe(c *gin.Context) {
	start := time.Now()
	c.Next()
	d := time.Since(start)
	status := c.Writer.Status()
	r := route(c)
	h.metrics.observe(r, status, d)
	if c.GetBool(ctxRefused) {
		return
	}
	attrs := []slog.Attr{
		slog.String("method", c.Request.Method),
		slog.String("route", r),
		slog.Int("status", status),
		slog.Float64("duration_ms", float64(d.Microseconds())/1000),
	}
	level := slog.LevelInfo
	if len(c.Errors) > 0 {
		level = slog.LevelError
		attrs = append(attrs, slog.String("error", c.Errors.Last().Err.Error()))
	}
	h.log.LogAttrs(c.Request.Context(), level, "request", attrs...)
}

// rateLimit answers 429 with Retry-After when the client's bucket is empty. /healthz
// and /metrics are exempt: monitors poll them. /log/ and /badge/ have buckets of their
// own (Config.LogRateLimit, Config.BadgeRateLimit): an auditor reading the log and the
// READMEs showing badges do not use up a client's pages, nor the other way round. The
// write routes (every POST but the one-click unsubscribe, and the GitHub sign-in)
// share a stricter bucket (Config.WriteRateLimit).
// Every refusal is counted (probity_http_rate_limited_total) and logged at most once
// per client per minute (refusals.Log), so a flood of 429s cannot flood the log.
func (h *handlers) rateLimit(c *gin.Context) {
	switch c.FullPath() {
	case "/healthz", "/metrics":
		c.Next()
		return
	}
	client := c.ClientIP()
	lim := h.limiter
	switch c.FullPath() {
	case "/log/*path":
		lim = h.logLim
	case "/badge/:file":
		lim = h.badgeLim
	case "/unsubscribe/:token/one-click":
		// The site's bucket: mail providers post one-clicks for many people from a
		// few addresses, and the signed token is the gate.
	case "/signin/github", "/signin/github/callback":
		lim = h.writeLim
	default:
		if c.Request.Method == http.MethodPost && h.writeLim != nil {
			lim = h.writeLim
		}
	}
	ok, wait := lim.Allow(client)
	if !ok {
		c.Set(ctxRefused, true)
		h.refused.Refused(c.Request.Context(), client, reasonRateLimited, slog.String("method", c.Request.Method), slog.String("route", route(c)))
		c.Header("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
		h.problem(c, http.StatusTooManyRequests, "Too many requests. Please slow down.")
		c.Abort()
		return
	}
	c.Next()
}

// reasonRateLimited is the reason of the rate limit's refusals.
const reasonRateLimited = "rate_limited"

// recovered answers a panic as an internal error.
func (h *handlers) recovered(c *gin.Context, v any) {
	h.fail(c, fmt.Errorf("panic: %v", v))
	c.Abort()
}

// statusClientGone is the status logged for a request whose client left first.
const statusClientGone = 499

// errNotFound is a handler's own "no such page" (an invalid round id, a page past the
// end), answered like store.ErrNotFound.
var errNotFound = errors.New("no such page")

// fail maps err to a response: the one place errors become statuses. Not found is 404;
// anything else is 500 with a generic message, the detail going to the request's log
// line only.
func (h *handlers) fail(c *gin.Context, err error) {
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, errNotFound) {
		h.problem(c, http.StatusNotFound, "There is nothing at this address.")
		return
	}
	if c.Request.Context().Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		// The client went away before the answer was ready: not our error, and no one
		// reads a body. Logged and counted as 499, nginx's "client closed request".
		c.Status(statusClientGone)
		c.Abort()
		return
	}
	_ = c.Error(err)
	h.problem(c, http.StatusInternalServerError, "Something went wrong on our side. Please try again later.")
}
