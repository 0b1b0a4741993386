package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/probity-dev/probity/checks/probe/egress"
)

// Defaults of a Config.
const (
	// DefaultBaseURL is the official MCP Registry.
	DefaultBaseURL = "https://registry.modelcontextprotocol.io"
	// DefaultUserAgent identifies Probity to the registry.
	DefaultUserAgent = "probity-registry/1 (+https://probity.dev)"
	// DefaultLimit is the page size asked for: the official registry's maximum.
	DefaultLimit = 100
	// DefaultMaxPageBytes caps a page's body: 4 MiB, several times a full page.
	DefaultMaxPageBytes = 4 << 20
	// DefaultMaxServers caps a page's items: 500, five times the official maximum.
	DefaultMaxServers = 500
	// DefaultMaxPages caps one walk: 2,000 pages, 200,000 servers at DefaultLimit.
	DefaultMaxPages = 2000
	// DefaultMaxRetries is how often one page is retried after 429.
	DefaultMaxRetries = 3
	// DefaultMaxRetryWait bounds the Retry-After waits of one page, in total.
	DefaultMaxRetryWait = 60 * time.Second
	// DefaultPageTimeout bounds one page, retries included.
	DefaultPageTimeout = 60 * time.Second
)

const (
	// defaultRetryAfter is the wait after a 429 without Retry-After.
	defaultRetryAfter = 5 * time.Second
	// maxExcerpt is the longest body excerpt an error carries.
	maxExcerpt = 200
	// serversPath is the list endpoint under the base URL.
	serversPath = "/v0.1/servers"
	// maxRetryAfterHeader bounds the Retry-After value parsed.
	maxRetryAfterHeader = 64
	// maxRetryAfter caps the wait a Retry-After header is read as, seconds or date.
	maxRetryAfter = 24 * time.Hour
	// maxErrorBodyReadBytes is how much of a non-200 body is read for the excerpt.
	maxErrorBodyReadBytes = 4 << 10
)

// Config configures a Client. The zero Config reads the official registry through the
// egress guard with the default bounds.
type Config struct {
	// BaseURL is the registry's base URL, without /v0.1; default DefaultBaseURL. It
	// may carry a path prefix; it must not carry a query or a fragment.
	BaseURL string
	// HTTPClient sends the requests. Pass one that goes through Probity's egress
	// guard (GuardedHTTPClient, as the CLI's --allow-loopback decides); default
	// GuardedHTTPClient(egress.Config{}). The client adds no credentials and no
	// cookies; an HTTPClient with a cookie jar or an authenticating transport would.
	HTTPClient *http.Client
	// UserAgent is sent with every request; default DefaultUserAgent.
	UserAgent string
	// Limit is the page size asked for (the limit parameter); default 100.
	Limit int
	// MaxPageBytes caps one page's body; default 4 MiB.
	MaxPageBytes int64
	// MaxServersPerPage caps one page's items; default 500. It must be at least Limit.
	MaxServersPerPage int
	// MaxPages caps the pages of one walk; default 2,000.
	MaxPages int
	// MaxRetries is how often one page is retried after 429 (or 503 with
	// Retry-After); default 3, negative for never.
	MaxRetries int
	// MaxRetryWait bounds the total Retry-After wait for one page; default 60 s. A
	// registry asking for more, or for a wait the page's timeout (or the context's
	// deadline) would cut, is refused with ErrRateLimited.
	MaxRetryWait time.Duration
	// PageTimeout bounds one page, retries and waits included; default 60 s.
	PageTimeout time.Duration
	// Logger receives one debug event per request (URL without secrets: the client
	// sends none); default discards.
	Logger *slog.Logger
	// Now is the clock a Retry-After date is read against; default time.Now.
	Now func() time.Time
}

// Client reads GET /v0.1/servers of one registry. It is safe for concurrent use.
type Client struct {
	base         *url.URL
	http         *http.Client
	userAgent    string
	limit        int
	maxPageBytes int64
	maxServers   int
	maxPages     int
	maxRetries   int
	maxRetryWait time.Duration
	pageTimeout  time.Duration
	log          *slog.Logger
	now          func() time.Time
	// sleep waits d or until ctx is done; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
}

// GuardedHTTPClient returns an *http.Client whose every connection and redirect hop
// goes through an egress guard built from cfg (at most 3 redirects, never from https
// to http), as the supply sources' client does. cfg.AllowLoopback is for tests and a
// registry on the same host (--allow-loopback); never set it for the public registry.
func GuardedHTTPClient(cfg egress.Config) *http.Client {
	g := egress.New(cfg)
	return &http.Client{Transport: g.Transport(), CheckRedirect: g.CheckRedirect}
}

// New returns a Client for cfg, or an error if the base URL or the bounds are unusable.
func New(cfg Config) (*Client, error) {
	raw := cfg.BaseURL
	if raw == "" {
		raw = DefaultBaseURL
	}
	base, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("couldn't parse the registry URL %s: %w", quote(raw), err)
	}
	if base.Scheme != "https" && base.Scheme != "http" || base.Host == "" {
		return nil, fmt.Errorf("registry URL %s: want http(s)://host[/prefix]", quote(raw))
	}
	if base.User != nil || base.RawQuery != "" || base.Fragment != "" || base.ForceQuery {
		return nil, fmt.Errorf("registry URL %s: no user info, query or fragment allowed", quote(raw))
	}
	base.Path = strings.TrimRight(base.Path, "/")
	base.RawPath = ""
	c := &Client{
		base:         base,
		http:         cfg.HTTPClient,
		userAgent:    cfg.UserAgent,
		limit:        cfg.Limit,
		maxPageBytes: cfg.MaxPageBytes,
		maxServers:   cfg.MaxServersPerPage,
		maxPages:     cfg.MaxPages,
		maxRetries:   cfg.MaxRetries,
		maxRetryWait: cfg.MaxRetryWait,
		pageTimeout:  cfg.PageTimeout,
		log:          cfg.Logger,
		now:          cfg.Now,
		sleep:        sleepCtx,
	}
	if c.http == nil {
		c.http = GuardedHTTPClient(egress.Config{})
	}
	if c.userAgent == "" {
		c.userAgent = DefaultUserAgent
	}
	if c.limit <= 0 {
		c.limit = DefaultLimit
	}
	if c.maxPageBytes <= 0 {
		c.maxPageBytes = DefaultMaxPageBytes
	}
	if c.maxServers <= 0 {
		c.maxServers = DefaultMaxServers
	}
	if c.maxPages <= 0 {
		c.maxPages = DefaultMaxPages
	}
	if c.maxRetries == 0 {
		c.maxRetries = DefaultMaxRetries
	}
	if c.maxRetries < 0 {
		c.maxRetries = 0
	}
	if c.maxRetryWait <= 0 {
		c.maxRetryWait = DefaultMaxRetryWait
	}
	if c.pageTimeout <= 0 {
		c.pageTimeout = DefaultPageTimeout
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.limit > c.maxServers {
		return nil, fmt.Errorf("registry client: limit %d is above MaxServersPerPage %d: every full page would be refused", c.limit, c.maxServers)
	}
	return c, nil
}

// BaseURL returns the registry's base URL as the client uses it (no trailing slash):
// the key under which a sync keeps its state.
func (c *Client) BaseURL() string { return c.base.String() }

// ListOptions select what a walk lists.
type ListOptions struct {
	// Cursor starts the walk at a page; "" starts at the first. A walk that ended in
	// a *PageError resumes from its Cursor.
	Cursor string
	// UpdatedSince, when not zero, lists only items updated since then (the
	// updated_since parameter, RFC 3339 in UTC). The registry then includes deleted
	// items as well.
	UpdatedSince time.Time
	// IncludeDeleted asks for deleted items too (include_deleted=true).
	IncludeDeleted bool
	// Progress, when set, is called after each page is decoded, before it is
	// yielded.
	Progress func(Progress)
}

// Progress is how far a walk has got.
type Progress struct {
	// Pages and Servers count the pages and items read so far, this page included.
	Pages, Servers int
	// NextCursor is the cursor after this page ("" at the end).
	NextCursor string
}

// PageError is why a walk stopped. Pages before Page were yielded in full; Cursor is
// the cursor Page was (or, for ErrTooManyPages and ErrCursorLoop, would have been)
// requested with, so ListOptions{Cursor: Cursor} resumes the walk there.
type PageError struct {
	// Page is the number of the page that was refused (counting from 1).
	Page int
	// Cursor is the refused page's cursor ("" for the first page).
	Cursor string
	// Err is the refusal: a sentinel of this package, a *StatusError, or the
	// context's error.
	Err error
}

func (e *PageError) Error() string {
	return fmt.Sprintf("registry page %d (cursor %s): %v", e.Page, quote(e.Cursor), e.Err)
}

func (e *PageError) Unwrap() error { return e.Err }

// StatusError is an HTTP answer other than 200, or a 200 that was not JSON.
type StatusError struct {
	// Status is the HTTP status code.
	Status int
	// ContentType is the answer's Content-Type header, clipped.
	ContentType string
	// Excerpt is the start of the body (at most 200 bytes), control characters
	// replaced, for the operator; never parse it.
	Excerpt string
	// RetryAfter is the wait the registry asked for, if it did.
	RetryAfter time.Duration
	// Err is ErrRateLimited for a 429 (or a 503 with Retry-After) past the bounds,
	// ErrMalformedPage for a 200 that is not JSON, nil otherwise.
	Err error
}

func (e *StatusError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP %d", e.Status)
	if e.ContentType != "" {
		fmt.Fprintf(&b, " (%s)", e.ContentType)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, ", Retry-After %s", e.RetryAfter)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	if e.Excerpt != "" {
		fmt.Fprintf(&b, ": %q", e.Excerpt)
	}
	return b.String()
}

func (e *StatusError) Unwrap() error { return e.Err }

// Pages walks GET /v0.1/servers from opts.Cursor to the last page and yields each
// page once it is read and decoded in full. On a refusal it yields (nil, *PageError)
// once and stops; stopping the loop early stops the walk.
func (c *Client) Pages(ctx context.Context, opts ListOptions) iter.Seq2[*Page, error] {
	return func(yield func(*Page, error) bool) {
		cursor := opts.Cursor
		seen := map[string]bool{cursor: true}
		servers := 0
		for n := 1; ; n++ {
			if n > c.maxPages {
				yield(nil, &PageError{Page: n, Cursor: cursor, Err: fmt.Errorf("%w: more than %d", ErrTooManyPages, c.maxPages)})
				return
			}
			entries, next, err := c.fetch(ctx, cursor, opts)
			if err != nil {
				yield(nil, &PageError{Page: n, Cursor: cursor, Err: err})
				return
			}
			page := &Page{Number: n, Cursor: cursor, Entries: entries, NextCursor: next}
			servers += len(entries)
			if opts.Progress != nil {
				opts.Progress(Progress{Pages: n, Servers: servers, NextCursor: next})
			}
			if next != "" && seen[next] {
				// The page is good; the walk cannot go on. Yield the page, then the loop.
				if !yield(page, nil) {
					return
				}
				yield(nil, &PageError{Page: n + 1, Cursor: next, Err: fmt.Errorf("%w: page %d answered cursor %s again", ErrCursorLoop, n, quote(next))})
				return
			}
			if !yield(page, nil) || next == "" {
				return
			}
			seen[next] = true
			cursor = next
		}
	}
}

// fetch reads and decodes one page, retrying on 429 (and 503 with Retry-After)
// within the bounds.
func (c *Client) fetch(ctx context.Context, cursor string, opts ListOptions) ([]Entry, string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.pageTimeout)
	defer cancel()
	u := c.pageURL(cursor, opts)
	var waited time.Duration
	for attempt := 0; ; attempt++ {
		body, err := c.get(ctx, u)
		var se *StatusError
		if err == nil {
			entries, next, err := DecodePage(body, c.maxServers)
			return entries, next, err
		}
		if !errors.As(err, &se) || !retryable(se) {
			return nil, "", err
		}
		wait := se.RetryAfter
		if wait <= 0 {
			wait = defaultRetryAfter
		}
		// A wait past the page's deadline (or the caller's) would only end in its
		// error: refuse it now, as the registry's answer it is.
		deadline, ok := ctx.Deadline()
		if attempt >= c.maxRetries || wait > c.maxRetryWait-waited || ok && time.Until(deadline) < wait {
			se.Err = ErrRateLimited
			return nil, "", se
		}
		c.log.DebugContext(ctx, "registry asked to wait", "status", se.Status, "wait", wait, "attempt", attempt+1)
		if err := c.sleep(ctx, wait); err != nil {
			return nil, "", err
		}
		waited += wait
	}
}

// retryable reports whether an answer asks to come back later: 429, or 503 with
// Retry-After.
func retryable(se *StatusError) bool {
	return se.Status == http.StatusTooManyRequests || se.Status == http.StatusServiceUnavailable && se.RetryAfter > 0
}

// pageURL is the request URL of one page.
func (c *Client) pageURL(cursor string, opts ListOptions) string {
	u := *c.base
	u.Path = c.base.Path + serversPath
	q := url.Values{}
	q.Set("limit", strconv.Itoa(c.limit))
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	if !opts.UpdatedSince.IsZero() {
		q.Set("updated_since", opts.UpdatedSince.UTC().Format(time.RFC3339Nano))
	}
	if opts.IncludeDeleted {
		q.Set("include_deleted", "true")
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// get sends one GET and returns the body of a 200 JSON answer, read up to the cap.
func (c *Client) get(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("couldn't build the request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err // it would name the method and the URL a second time
		}
		return nil, fmt.Errorf("couldn't read %s: %w", u, err)
	}
	defer resp.Body.Close()
	ctype := resp.Header.Get("Content-Type")
	if resp.StatusCode != http.StatusOK {
		head, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBodyReadBytes))
		c.log.DebugContext(ctx, "registry page", "url", u, "status", resp.StatusCode, "ms", time.Since(start).Milliseconds())
		return nil, &StatusError{Status: resp.StatusCode, ContentType: clip(ctype), Excerpt: excerpt(head),
			RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), c.now())}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.maxPageBytes+1))
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, fmt.Errorf("couldn't read the page body: %w", err)
	}
	c.log.DebugContext(ctx, "registry page", "url", u, "status", resp.StatusCode, "bytes", len(body), "ms", time.Since(start).Milliseconds())
	if int64(len(body)) > c.maxPageBytes {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrPageTooLarge, c.maxPageBytes)
	}
	if !isJSONType(ctype) {
		return nil, &StatusError{Status: resp.StatusCode, ContentType: clip(ctype), Excerpt: excerpt(body), Err: fmt.Errorf("%w: not JSON", ErrMalformedPage)}
	}
	return body, nil
}

// isJSONType reports whether a Content-Type is JSON: application/json or a +json
// type. A missing header is accepted (the decoder then decides).
func isJSONType(ctype string) bool {
	if ctype == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ctype)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")
}

// parseRetryAfter reads a Retry-After header: delay seconds or an HTTP date, capped
// at 24 hours either way. It returns 0 when absent or unreadable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" || len(v) > maxRetryAfterHeader {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0
		}
		return time.Duration(min(secs, int64(maxRetryAfter/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return min(d.Round(time.Second), maxRetryAfter)
		}
	}
	return 0
}

// excerpt makes a short, printable excerpt of a body for an error message.
func excerpt(b []byte) string {
	if len(b) > maxExcerpt {
		b = b[:maxExcerpt]
	}
	var s strings.Builder
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		switch {
		case r == utf8.RuneError && size <= 1:
			s.WriteRune('\uFFFD')
		case r == '\n' || r == '\r' || r == '\t':
			s.WriteByte(' ')
		case !unicode.IsPrint(r):
			s.WriteRune('\uFFFD')
		default:
			s.WriteRune(r)
		}
	}
	return strings.TrimSpace(s.String())
}

// clip bounds a header value quoted in an error.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64]
	}
	return s
}

// sleepCtx waits d, or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
