package webhook

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/probity-dev/probity/checks/probe/egress"
	"github.com/probity-dev/probity/store"
)

// Store is what the service needs of the store (package store implements it).
type Store interface {
	AddWebhook(ctx context.Context, accountID int64, url string, now time.Time) (store.Webhook, error)
	Webhooks(ctx context.Context, accountID int64) ([]store.Webhook, error)
	Webhook(ctx context.Context, accountID, id int64) (store.Webhook, error)
	DeleteWebhook(ctx context.Context, accountID, id int64) error
	EnableWebhook(ctx context.Context, accountID, id int64) error
	EnabledWebhooks(ctx context.Context, afterID int64, limit int) ([]store.Webhook, error)
	ClaimWebhookDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]store.WebhookClaim, error)
	FinishWebhookAttempt(ctx context.Context, a store.WebhookAttempt) (store.Webhook, error)
	WebhookDeliveries(ctx context.Context, accountID, id int64) ([]store.WebhookDelivery, error)
	// LedgerNumbered, WebhookCursor, WebhookChanges and PlanWebhookDeliveries walk the
	// changes in commit order (ledger numbers) with the planner's cursor.
	LedgerNumbered(ctx context.Context) (int64, error)
	WebhookCursor(ctx context.Context) (seq int64, started bool, err error)
	WebhookChanges(ctx context.Context, afterSeq, throughSeq int64, limit int) ([]store.WebhookChange, error)
	PlanWebhookDeliveries(ctx context.Context, from, to int64, at time.Time, ds []store.WebhookDelivery) (int, error)
}

// Followers finds the accounts that follow an entry (package notify's follows; the
// service wires it). The list is bounded by the follow limit per account times the
// accounts, and Followers may return it in any order.
type Followers interface {
	Followers(ctx context.Context, entryID int64) ([]store.Follower, error)
}

// Defaults of Config.
const (
	// DefaultTimeout bounds one delivery attempt: connect, TLS, request and response.
	DefaultTimeout = 10 * time.Second
	// DefaultDisableAfter is how many failed attempts in a row disable a webhook.
	DefaultDisableAfter = 10
	// DefaultInterval is how often the River job plans and delivers.
	DefaultInterval = time.Minute
	// maxResponse is how much of a receiver's response body is read (and dropped).
	maxResponse = 4 << 10
	// claimBatch is how many deliveries one claim takes; parallel how many are sent
	// at once.
	claimBatch = 50
	parallel   = 4
	// maxErrorText is the longest error kept in the delivery log.
	maxErrorText = 200
)

// DefaultBackoff is the wait before each retry of a failed delivery: after the first
// attempt 1 minute, then 5 minutes, 30 minutes, 2 hours and 6 hours; after the sixth
// attempt the delivery has failed.
var DefaultBackoff = []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 6 * time.Hour}

// Config configures a Service.
type Config struct {
	// Store keeps the webhooks and deliveries; required.
	Store Store
	// Followers finds who follows an entry; required for planning (Plan).
	Followers Followers
	// Key is the webhook signing key (signing.LoadWebhookSigner), whose public key the
	// key document publishes; required for delivering.
	Key ed25519.PrivateKey
	// BaseURL is the site's base URL for the payload's links, e.g. https://probity.dev.
	BaseURL string
	// Egress configures the egress guard every delivery dials through. The zero value
	// is production: public addresses only. AllowLoopback (tests, the demo) also admits
	// http:// URLs to loopback hosts at registration.
	Egress egress.Config
	// Timeout bounds one attempt; 0 means DefaultTimeout.
	Timeout time.Duration
	// Backoff are the waits before the retries; nil means DefaultBackoff.
	Backoff []time.Duration
	// DisableAfter is how many failed attempts in a row disable a webhook; 0 means
	// DefaultDisableAfter.
	DisableAfter int
	// Interval is how often the River job runs; 0 means DefaultInterval.
	Interval time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives one event per attempt; nil discards.
	Logger *slog.Logger
}

// Service registers webhooks, plans deliveries from changes and delivers them.
type Service struct {
	cfg      Config
	guard    *egress.Guard
	resolver egress.Resolver
	client   *http.Client
	now      func() time.Time
	log      *slog.Logger
}

// New returns a Service for cfg.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil {
		return nil, errors.New("webhook: Config needs a Store")
	}
	if cfg.Key != nil && len(cfg.Key) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("webhook: Config.Key is %d bytes, want %d", len(cfg.Key), ed25519.PrivateKeySize)
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Backoff == nil {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.DisableAfter <= 0 {
		cfg.DisableAfter = DefaultDisableAfter
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	s := &Service{cfg: cfg, guard: egress.New(cfg.Egress), resolver: cfg.Egress.Resolver, now: cfg.Now, log: cfg.Logger}
	if s.resolver == nil {
		s.resolver = net.DefaultResolver
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	tr := s.guard.Transport()
	tr.MaxIdleConnsPerHost = 2
	s.client = &http.Client{
		Transport: tr,
		Timeout:   cfg.Timeout,
		// Standard Webhooks: a redirect is a failure (update the URL instead), and a
		// redirect could point anywhere: none is followed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return s, nil
}

// Register checks raw (CheckURL) and registers it for the account. Errors: wrapping
// ErrInvalidURL (the text says why), ErrTooMany, ErrExists, or the store's.
func (s *Service) Register(ctx context.Context, accountID int64, raw string) (store.Webhook, error) {
	u, err := s.CheckURL(ctx, raw)
	if err != nil {
		return store.Webhook{}, err
	}
	w, err := s.cfg.Store.AddWebhook(ctx, accountID, u, s.now())
	switch {
	case errors.Is(err, store.ErrWebhookLimit):
		return store.Webhook{}, ErrTooMany
	case errors.Is(err, store.ErrWebhookExists):
		return store.Webhook{}, ErrExists
	}
	return w, err
}

// Webhooks returns the account's webhooks, oldest first.
func (s *Service) Webhooks(ctx context.Context, accountID int64) ([]store.Webhook, error) {
	return s.cfg.Store.Webhooks(ctx, accountID)
}

// Delete deletes the account's webhook id and its delivery log; store.ErrNotFound if
// the account has none such.
func (s *Service) Delete(ctx context.Context, accountID, id int64) error {
	return s.cfg.Store.DeleteWebhook(ctx, accountID, id)
}

// Enable enables the account's disabled webhook id again; store.ErrNotFound.
func (s *Service) Enable(ctx context.Context, accountID, id int64) error {
	return s.cfg.Store.EnableWebhook(ctx, accountID, id)
}

// Log returns the delivery log of the account's webhook id, newest first (at most
// store.MaxWebhookLog deliveries); store.ErrNotFound if the account has none such.
func (s *Service) Log(ctx context.Context, accountID, id int64) ([]store.WebhookDelivery, error) {
	return s.cfg.Store.WebhookDeliveries(ctx, accountID, id)
}

// planPage is how many changes one planning transaction covers (a variable for
// tests).
var planPage = 200

// Plan walks the changes committed since its last run in commit order (by ledger
// number, from the planner's cursor to the highest number given now; the first run
// starts at that number, so no old history is sent) and adds a pending delivery for
// every visible change that is not a baseline, to every enabled webhook of every
// account following its entry that was registered by the time the change was
// recorded. It goes a page of changes at a time; each page's deliveries are stored in
// the transaction that moves the cursor past the page, so a change committed late is
// planned by the next run, and none is planned twice, whatever the delivery log has
// pruned. A planner that finds the cursor moved by another stops. It returns how many
// deliveries it added.
func (s *Service) Plan(ctx context.Context) (int, error) {
	if s.cfg.Followers == nil {
		return 0, errors.New("webhook: Config needs Followers to plan deliveries")
	}
	now := s.now().UTC()
	through, err := s.cfg.Store.LedgerNumbered(ctx)
	if err != nil {
		return 0, err
	}
	cursor, started, err := s.cfg.Store.WebhookCursor(ctx)
	if err != nil {
		return 0, err
	}
	if !started {
		_, err := s.cfg.Store.PlanWebhookDeliveries(ctx, 0, through, now, nil)
		return 0, s.moved(ctx, err)
	}
	var byAccount map[int64][]store.Webhook
	followers := make(map[int64][]store.Follower) // per entry, read once per run
	added := 0
	for cursor < through {
		page, err := s.cfg.Store.WebhookChanges(ctx, cursor, through, planPage)
		if err != nil {
			return added, err
		}
		next := through
		if len(page) == planPage {
			next = page[len(page)-1].Seq
		}
		changes := make([]store.ChangeRecord, 0, len(page))
		for _, c := range page {
			if !c.Hidden && c.Kind != "baseline" {
				changes = append(changes, c.ChangeRecord)
			}
		}
		var ds []store.WebhookDelivery
		if len(changes) > 0 {
			if byAccount == nil {
				if byAccount, err = s.enabledByAccount(ctx); err != nil {
					return added, err
				}
			}
			if ds, err = s.plan(ctx, changes, byAccount, followers, now); err != nil {
				return added, err
			}
		}
		n, err := s.cfg.Store.PlanWebhookDeliveries(ctx, cursor, next, now, ds)
		if err != nil {
			return added, s.moved(ctx, err)
		}
		added += n
		cursor = next
	}
	return added, nil
}

// moved makes ErrWebhookCursorMoved, another planner's run at the same time, no error:
// that planner plans the changes.
func (s *Service) moved(ctx context.Context, err error) error {
	if errors.Is(err, store.ErrWebhookCursorMoved) {
		s.log.InfoContext(ctx, "webhook planning left to another planner")
		return nil
	}
	return err
}

// enabledByAccount reads every enabled webhook, by account.
func (s *Service) enabledByAccount(ctx context.Context) (map[int64][]store.Webhook, error) {
	out := make(map[int64][]store.Webhook)
	var after int64
	for {
		page, err := s.cfg.Store.EnabledWebhooks(ctx, after, 1000)
		if err != nil {
			return nil, err
		}
		for _, w := range page {
			out[w.AccountID] = append(out[w.AccountID], w)
			after = w.ID
		}
		if len(page) < 1000 {
			return out, nil
		}
	}
}

// plan returns the deliveries of changes (by ledger number) to the webhooks in
// byAccount; followers caches each entry's followers.
func (s *Service) plan(ctx context.Context, changes []store.ChangeRecord, byAccount map[int64][]store.Webhook,
	followers map[int64][]store.Follower, now time.Time) ([]store.WebhookDelivery, error) {
	var ds []store.WebhookDelivery
	for _, c := range changes {
		accounts, ok := followers[c.EntryID]
		if !ok {
			var err error
			if accounts, err = s.cfg.Followers.Followers(ctx, c.EntryID); err != nil {
				return nil, err
			}
			followers[c.EntryID] = accounts
		}
		var body []byte
		for _, a := range accounts {
			// As the e-mails: only changes recorded after the follow began (and after
			// the webhook was registered).
			if !a.Since.Before(c.RecordedAt) {
				continue
			}
			for _, w := range byAccount[a.AccountID] {
				if w.CreatedAt.After(c.RecordedAt) {
					continue
				}
				if body == nil {
					var err error
					if body, err = NewPayload(s.cfg.BaseURL, c.EntrySlug, c).Marshal(); err != nil {
						return nil, err
					}
				}
				ds = append(ds, store.WebhookDelivery{WebhookID: w.ID, MessageID: messageID(w.ID, c.EntryID, c.Number),
					EntryID: c.EntryID, ChangeNumber: c.Number, Payload: body, CreatedAt: now, NextAttemptAt: now})
			}
		}
	}
	return ds, nil
}

// Deliver sends the deliveries due now until none is due, ctx ends or budget has passed,
// and returns how many attempts it made. A webhook has one attempt under way at a time
// and parallel attempts run at once, so a slow receiver delays its own deliveries
// only, never another webhook's (see dispatch.go). Each claimed delivery is held
// (leased) for the attempt's timeout and a margin, and its attempt starts only while
// the lease will outlast it; a worker killed mid-attempt leaves it to be sent again
// after the lease, with the same webhook-id (receivers deduplicate on it, as Standard
// Webhooks asks). Deliver returns at most Timeout after the budget.
func (s *Service) Deliver(ctx context.Context, budget time.Duration) (int, error) {
	if len(s.cfg.Key) != ed25519.PrivateKeySize {
		return 0, errors.New("webhook: Config needs the webhook signing Key to deliver")
	}
	lease := s.cfg.Timeout + 30*time.Second
	d := newDispatch(ctx, s, s.now().Add(budget))
	var wg sync.WaitGroup
	for range parallel {
		wg.Go(d.work)
	}
	for d.wantClaims() {
		now := s.now()
		claims, err := s.cfg.Store.ClaimWebhookDeliveries(ctx, now, lease, claimBatch)
		if err != nil {
			d.fail(err)
			break
		}
		if len(claims) == 0 {
			break // none due but those queued
		}
		d.add(claims, now.Add(lease))
	}
	d.close()
	wg.Wait()
	return d.attempts, d.err
}

// attempt makes one attempt of a claimed delivery and records it.
func (s *Service) attempt(ctx context.Context, c store.WebhookClaim) error {
	d := c.Delivery
	at := s.now()
	status, failure, cause := s.post(ctx, c.URL, d.MessageID, d.Payload, at)
	rec := store.WebhookAttempt{DeliveryID: d.ID, At: at, Status: status, Delivered: failure == "", Error: failure,
		DisableAfter: s.cfg.DisableAfter}
	if failure != "" {
		if n := d.Attempts + 1; n <= len(s.cfg.Backoff) {
			rec.NextAttemptAt = at.Add(s.cfg.Backoff[n-1])
		}
		rec.DisableReason = fmt.Sprintf("disabled after %d failed delivery attempts in a row; the last: %s", s.cfg.DisableAfter, failure)
		if status == http.StatusGone {
			rec.Disable = true
			rec.DisableReason = "disabled because the receiver answered 410 Gone (it asked not to be sent more)"
		}
	}
	w, err := s.cfg.Store.FinishWebhookAttempt(context.WithoutCancel(ctx), rec)
	if errors.Is(err, store.ErrNotFound) {
		// Finished meanwhile: its webhook was deleted, or disabled by a parallel
		// attempt of another of its deliveries (which fails its pending ones).
		s.log.InfoContext(ctx, "webhook delivery finished during its attempt", "webhook", d.WebhookID, "message_id", d.MessageID,
			"status", status, "delivered", failure == "")
		return nil
	}
	if err != nil {
		return fmt.Errorf("couldn't record webhook delivery %s: %w", d.MessageID, err)
	}
	attrs := []any{"webhook", d.WebhookID, "message_id", d.MessageID, "attempt", d.Attempts + 1, "status", status,
		"delivered", failure == "", "error", failure, "disabled", !w.Enabled(), "ms", s.now().Sub(at).Milliseconds()}
	if cause != "" {
		attrs = append(attrs, "cause", cause)
	}
	s.log.InfoContext(ctx, "webhook delivery attempt", attrs...)
	return nil
}

// post makes one signed POST and returns the response status (0: none) and, for a
// failure, what went wrong in words for the owner's delivery log ("" for a 2xx), and
// for the server's log the cause of a failure of no known kind (describeFailure).
func (s *Service) post(ctx context.Context, target, msgID string, body []byte, at time.Time) (status int, failure, cause string) {
	// The whole attempt (the guard's lookups, connecting, the request and the response)
	// ends within Timeout, whatever the receiver does.
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	h, err := Sign(s.cfg.Key, msgID, at, body)
	if err != nil {
		return 0, "not sent: " + err.Error(), ""
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return 0, "not sent: the URL is not valid", ""
	}
	// The URL was checked at registration; the guard checks it again here, and every
	// address dialed.
	if err := s.guard.CheckURL(req.URL); err != nil {
		return 0, "not sent: " + refusal(err), ""
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Probity-Webhooks/1 (+"+s.cfg.BaseURL+")")
	h.Set(req.Header)
	resp, err := s.client.Do(req)
	if err != nil {
		failure, cause = describeFailure(err, req.URL, s.cfg.Timeout)
		return 0, failure, cause
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponse))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode <= 299:
		return resp.StatusCode, "", ""
	case resp.StatusCode >= 300 && resp.StatusCode <= 399:
		return resp.StatusCode, fmt.Sprintf("HTTP %d: a redirect, which is not followed; register the URL it points to", resp.StatusCode), ""
	}
	return resp.StatusCode, fmt.Sprintf("HTTP %d", resp.StatusCode), ""
}

// describeFailure says in fixed words why a request got no response, for the owner's
// delivery log and the server's log. It never gives the URL (a webhook URL may carry
// its secret in the path or query, as Slack's and Discord's do, and the *url.Error
// that http.Client returns quotes the whole URL) nor the receiver's text. For a
// failure of no known kind it says so, and returns as cause, for the server's log
// only, the transport's error without the *url.Error around it, with u's path and
// query cut out should they appear anyway, cleaned and bounded.
func describeFailure(err error, u *url.URL, timeout time.Duration) (failure, cause string) {
	var (
		be      *egress.BlockedError
		ne      net.Error
		dnsErr  *net.DNSError
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
		invalid x509.CertificateInvalidError
		verify  *tls.CertificateVerificationError
		record  tls.RecordHeaderError
		alert   tls.AlertError
	)
	switch {
	case errors.As(err, &be):
		return "refused: the URL's host resolves to " + refusal(err) + "; webhooks go to public addresses only", ""
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("no answer within %s", timeout), ""
	case errors.Is(err, context.Canceled):
		return "not finished: the attempt was cancelled (Probity was stopping)", ""
	case errors.As(err, &dnsErr):
		return "the host name could not be looked up", ""
	case errors.Is(err, syscall.ECONNREFUSED):
		return "could not connect: the connection was refused", ""
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "could not connect: the host is unreachable", ""
	case errors.As(err, &unknown):
		return "TLS: the certificate is not signed by a trusted authority", ""
	case errors.As(err, &host):
		return "TLS: the certificate is not valid for the URL's host", ""
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return "TLS: the certificate has expired or is not valid yet", ""
	case errors.As(err, &invalid), errors.As(err, &verify):
		return "TLS: the certificate could not be verified", ""
	case errors.As(err, &record):
		return "TLS: the receiver did not answer in TLS (is it plain http?)", ""
	case errors.As(err, &alert):
		return "TLS: the receiver refused the handshake", ""
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED):
		return "the connection was reset by the receiver", ""
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection was closed before a response", ""
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		err = ue.Err
	}
	if err.Error() == errHTTPToHTTPS {
		return "TLS: the receiver did not answer in TLS (is it plain http?)", ""
	}
	return "no response: the connection failed, or the answer was not HTTP", clean(redact(err.Error(), u))
}

// errHTTPToHTTPS is the text of the error net/http returns (unexported, a plain
// errors.New) when an https URL is answered in plain HTTP.
const errHTTPToHTTPS = "http: server gave HTTP response to HTTPS client"

// redact cuts u's path and query out of text, in every form they may be written in.
func redact(text string, u *url.URL) string {
	if u == nil {
		return text
	}
	for _, s := range []string{u.RawQuery, u.EscapedPath(), u.Path, u.RawPath, u.Query().Encode()} {
		if len(s) > 1 {
			text = strings.ReplaceAll(text, s, "…")
		}
	}
	return text
}

// clean keeps an error text to printable characters and maxErrorText bytes.
func clean(s string) string {
	s = strings.Map(func(r rune) rune {
		if !unicode.IsPrint(r) || r == utf8.RuneError {
			return '?'
		}
		return r
	}, s)
	if len(s) > maxErrorText {
		s = s[:maxErrorText]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		s += "…"
	}
	return s
}
