package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/probity-dev/probity/accounts"
	"github.com/probity-dev/probity/baseline"
	"github.com/probity-dev/probity/checks/probe/egress"
	"github.com/probity-dev/probity/claims"
	"github.com/probity-dev/probity/disputes"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/keys/signing"
	"github.com/probity-dev/probity/listing"
	"github.com/probity-dev/probity/mail"
	"github.com/probity-dev/probity/notify"
	"github.com/probity-dev/probity/notify/webhook"
	"github.com/probity-dev/probity/operators"
	"github.com/probity-dev/probity/reports"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/web"
)

// accountsHelp is the part of serve's help about the site's write paths (issue 17).
const accountsHelp = `Accounts, following, e-mails and webhooks (off unless --accounts):
  --accounts                 sign-in (an e-mail code, GitHub), the Follow buttons, the
                             Followed page, change e-mails, unsubscribe pages, webhooks
  --smtp-host HOST           the SMTP server change e-mails and sign-in codes go through
                             (without it: no e-mail, no sign-in by code)
  --smtp-port N              its port (587 for starttls, 465 for tls, 25 for none)
  --smtp-security MODE       starttls (default), tls, or none (to a loopback host only)
  --smtp-user USER           AUTH user; the password comes from $PROBITY_SMTP_PASSWORD
                             or --smtp-password-file FILE
  --smtp-from ADDRESS        the From of every e-mail, e.g. "Probity <notify@example.org>"
  --dkim-domain, --dkim-selector, --dkim-key FILE
                             DKIM-sign every e-mail with the PEM key in FILE
  --github-client-id ID      sign-in with GitHub (an OAuth app whose callback is
                             BASE-URL/signin/github/callback); the secret comes from
                             $PROBITY_GITHUB_CLIENT_SECRET or --github-client-secret-file
  --github-auth-url, --github-token-url, --github-api-url URL
                             GitHub Enterprise's endpoints instead of github.com's
  --signin-codes-per-hour N  the most sign-in codes the site e-mails in any hour, to
                             all addresses together (default 256, at most 4096)
The unsubscribe links are signed with DATA-DIR/notify.key (made at first start, mode
0600), which also keys the stored hashes of sign-in codes (keep it: codes sent before
a restart work after it); the webhooks are signed with KEY-DIR/webhook-key.whsk, whose
public key the key document lists.
`

// accountFlags are serve's settings of the site's write paths.
type accountFlags struct {
	on               bool
	smtp             mail.Config
	smtpPasswordFile string
	dkim             mail.DKIMConfig
	github           accounts.GitHubConfig
	githubSecretFile string
	// siteCodes is accounts.Config.SiteCodesPerHour (0: its default).
	siteCodes int
	claims    claimFlags // claims.go
	// settle is notify.Config.Settle (0: its default); the demo, whose changes are
	// committed when its round returns, e-mails them after a few seconds.
	settle time.Duration
}

func (f *accountFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.on, "accounts", false, "")
	fs.StringVar(&f.smtp.Host, "smtp-host", "", "")
	fs.IntVar(&f.smtp.Port, "smtp-port", 0, "")
	fs.StringVar(&f.smtp.Security, "smtp-security", "starttls", "")
	fs.StringVar(&f.smtp.Username, "smtp-user", "", "")
	fs.StringVar(&f.smtpPasswordFile, "smtp-password-file", "", "")
	fs.StringVar(&f.smtp.From, "smtp-from", "", "")
	fs.StringVar(&f.dkim.Domain, "dkim-domain", "", "")
	fs.StringVar(&f.dkim.Selector, "dkim-selector", "", "")
	fs.StringVar(&f.dkim.KeyFile, "dkim-key", "", "")
	fs.StringVar(&f.github.ClientID, "github-client-id", "", "")
	fs.StringVar(&f.githubSecretFile, "github-client-secret-file", "", "")
	fs.StringVar(&f.github.AuthURL, "github-auth-url", "", "")
	fs.StringVar(&f.github.TokenURL, "github-token-url", "", "")
	fs.StringVar(&f.github.APIURL, "github-api-url", "", "")
	fs.IntVar(&f.siteCodes, "signin-codes-per-hour", accounts.DefaultSiteCodesPerHour, "")
	f.claims.register(fs)
}

// secret is the value of the environment variable env, or the first line of file;
// "" when neither is given.
func secret(env, file string) (string, error) {
	if v := os.Getenv(env); v != "" {
		return v, nil
	}
	if file == "" {
		return "", nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("couldn't read the secret: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(line), nil
}

// writePaths are the services behind the site's write paths and their jobs.
type writePaths struct {
	accounts *accounts.Service
	notify   *notify.Service
	webhooks *webhook.Service
	claims   *claims.Service  // claims.go (addClaims)
	listings *listing.Service // listing.go (addListings)
	sender   *mail.Sender     // nil without --smtp-host
	// disputes opens and decides disputes (addDisputes); nil until the claims service
	// says who maintains an entry.
	disputes *disputes.Service
	// operators is the operator role and console (operators.go, addOperators).
	operators *operators.Service
	reports   *reports.Service // reports.go (addReports)
	// baselines serves the baseline pages (baselines.go, addBaselines).
	baselines *baseline.Service
	// doc is the key document that lists the webhook key, which the site must publish
	// (EnsureWebhookKey adds the key, as a new version, at the first start).
	doc *keys.Document
}

// build makes the services of f on st. keyDir is the signing key's directory (the
// webhook key goes beside it), dataDir the data directory (notify.key), baseURL the
// site's public address; allowLoopback lets webhooks reach loopback (tests, the demo).
func (f *accountFlags) build(st store.Store, keyDir, dataDir, baseURL string, allowLoopback bool, logger *slog.Logger) (*writePaths, error) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("--accounts needs the site's public address (--base-url), not %q", baseURL)
	}
	w := &writePaths{}
	var mailer accounts.CodeMailer
	if f.smtp.Host != "" {
		cfg := f.smtp
		if cfg.Password, err = secret("PROBITY_SMTP_PASSWORD", f.smtpPasswordFile); err != nil {
			return nil, fmt.Errorf("--smtp-password-file: %w", err)
		}
		if f.dkim.KeyFile != "" || f.dkim.Domain != "" || f.dkim.Selector != "" {
			dk := f.dkim
			cfg.DKIM = &dk
		}
		if w.sender, err = mail.NewSender(cfg); err != nil {
			return nil, fmt.Errorf("--smtp-*: %w", err)
		}
		mailer = codeMailer{w.sender}
	}
	var gh *accounts.GitHubConfig
	if f.github.ClientID != "" {
		g := f.github
		if g.ClientSecret, err = secret("PROBITY_GITHUB_CLIENT_SECRET", f.githubSecretFile); err != nil {
			return nil, fmt.Errorf("--github-client-secret-file: %w", err)
		}
		g.RedirectURL = strings.TrimRight(baseURL, "/") + "/signin/github/callback"
		gh = &g
	}
	// notify.key is the server's secret: it signs the unsubscribe links, and the key
	// of the sign-in codes' stored hashes is derived from it.
	key, err := notify.LoadOrCreateKey(dataDir)
	if err != nil {
		return nil, err
	}
	if f.siteCodes < 0 || f.siteCodes > accounts.MaxSiteCodesPerHour { // 0: the default (the demo sets no flags)
		return nil, fmt.Errorf("--signin-codes-per-hour must be 1 to %d, not %d", accounts.MaxSiteCodesPerHour, f.siteCodes)
	}
	if w.accounts, err = accounts.New(accounts.Config{Store: st, Mailer: mailer, GitHub: gh, Secret: key,
		SiteCodesPerHour: f.siteCodes, SiteName: u.Host, Logger: logger}); err != nil {
		return nil, err
	}
	// A send may take mail.DefaultSendTimeout (RFC 5321 gives the end of DATA 10
	// minutes); the outbox's send bound adds composing it, and its lease outlasts that.
	ncfg := notify.Config{Store: st, BaseURL: baseURL, Key: key, Logger: logger, Settle: f.settle,
		SendTimeout: mail.DefaultSendTimeout + time.Minute, Lease: mail.DefaultSendTimeout + 2*time.Minute,
		IsPermanent: func(err error) bool { return errors.Is(err, mail.ErrPermanent) }}
	if w.sender != nil {
		ncfg.Sender = notify.SenderFunc(func(ctx context.Context, m notify.Message) error {
			return w.sender.Send(ctx, mail.Message(m))
		})
	}
	if w.notify, err = notify.New(ncfg); err != nil {
		return nil, err
	}
	if w.doc, err = signing.EnsureWebhookKey(keyDir, time.Now(), nil); err != nil {
		return nil, err
	}
	whKey, _, err := signing.LoadWebhookSigner(keyDir)
	if err != nil {
		return nil, err
	}
	// Webhooks reach loopback only for a site that is itself on loopback (the demo,
	// tests): --allow-loopback lets probes read a local mirror, and must not let any
	// signed-in person make the server POST to its own loopback services.
	hookLoopback := allowLoopback && loopbackHost(u.Hostname())
	if w.webhooks, err = webhook.New(webhook.Config{Store: st, Followers: st, Key: whKey, BaseURL: baseURL,
		Egress: egress.Config{AllowLoopback: hookLoopback}, Logger: logger}); err != nil {
		return nil, err
	}
	return w, nil
}

// site sets the site's write paths in cfg.
func (w *writePaths) site(cfg *web.Config) {
	cfg.Accounts = w.accounts
	cfg.Follows = w.notify
	cfg.Webhooks = webhookPages{w.webhooks}
	if w.claims != nil {
		cfg.Claims = w.claims
		cfg.Maintainers = w.claims // claims.Service.IsMaintainer owns the rule
	}
	if w.listings != nil {
		cfg.Listings = w.listings
	}
	if w.disputes != nil {
		cfg.Disputes = w.disputes
	}
	if w.operators != nil {
		cfg.Operators, cfg.Console = w.operators, w.operators
		if w.disputes != nil {
			cfg.DisputeDesk = disputeDesk{w.disputes}
		}
	}
	if w.reports != nil {
		cfg.Reports = w.reports
	}
	if w.baselines != nil {
		cfg.Baselines = w.baselines
	}
}

// addJobs adds the jobs of the write paths: planning and sending change e-mails,
// planning and delivering webhooks, pruning expired sessions and sign-in codes.
func (w *writePaths) addJobs(ws *river.Workers) error {
	if err := w.notify.Workers(ws); err != nil {
		return err
	}
	if err := w.webhooks.AddWorkers(ws); err != nil {
		return err
	}
	if w.claims != nil {
		if err := w.claims.Workers(ws); err != nil {
			return err
		}
	}
	if w.reports != nil {
		if err := river.AddWorkerSafely(ws, &reportsPruneWorker{svc: w.reports}); err != nil {
			return err
		}
	}
	return river.AddWorkerSafely(ws, &signInPruneWorker{acc: w.accounts})
}

// periodicJobs are the write paths' periodic jobs.
func (w *writePaths) periodicJobs() []*river.PeriodicJob {
	const every = time.Hour
	prune := river.NewPeriodicJob(river.PeriodicInterval(every),
		func() (river.JobArgs, *river.InsertOpts) {
			return signInPruneArgs{}, &river.InsertOpts{MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByPeriod: every}}
		}, &river.PeriodicJobOpts{RunOnStart: true})
	jobs := append(append(w.notify.PeriodicJobs(), w.webhooks.PeriodicJobs()...), prune)
	if w.claims != nil {
		jobs = append(jobs, w.claims.PeriodicJobs()...)
	}
	if w.reports != nil {
		jobs = append(jobs, reportsPeriodic())
	}
	return jobs
}

// signInPruneArgs is the hourly job that deletes expired sessions, sign-in codes and
// sign-in limits (the privacy page's "30 days", "10 minutes" and "an hour").
type signInPruneArgs struct{}

func (signInPruneArgs) Kind() string { return "probity_signin_prune" }

type signInPruneWorker struct {
	river.WorkerDefaults[signInPruneArgs]
	acc *accounts.Service
}

func (w *signInPruneWorker) Work(ctx context.Context, _ *river.Job[signInPruneArgs]) error {
	_, err := w.acc.Prune(ctx)
	return err
}

// loopbackHost reports whether host is localhost or a loopback address.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// close closes the SMTP connections.
func (w *writePaths) close() {
	if w.sender != nil {
		w.sender.Close()
	}
}

// codeMailer sends sign-in codes right away, through the same SMTP sender as the
// change e-mails (never through the outbox: a code is useless an hour later, and the
// outbox must not keep one in clear), within codeSendTimeout: a person waits for the
// page meanwhile, and may ask again.
type codeMailer struct{ s *mail.Sender }

// codeSendTimeout bounds sending a sign-in code, below the site's write timeout.
const codeSendTimeout = 45 * time.Second

func (m codeMailer) SendCode(ctx context.Context, c accounts.CodeMail) error {
	ctx, cancel := context.WithTimeout(ctx, codeSendTimeout)
	defer cancel()
	return m.s.Send(ctx, mail.Message{To: c.To, Subject: c.Subject, Text: c.Text})
}

// webhookPages is the webhook service as the site's webhook pages call it.
type webhookPages struct{ s *webhook.Service }

func (p webhookPages) Webhooks(ctx context.Context, accountID int64) ([]web.Webhook, error) {
	return p.s.Webhooks(ctx, accountID)
}

func (p webhookPages) AddWebhook(ctx context.Context, accountID int64, raw string) (web.Webhook, error) {
	h, err := p.s.Register(ctx, accountID, raw)
	if errors.Is(err, webhook.ErrInvalidURL) || errors.Is(err, webhook.ErrTooMany) || errors.Is(err, webhook.ErrExists) {
		return h, &web.Refusal{Reason: err.Error()}
	}
	return h, err
}

func (p webhookPages) RemoveWebhook(ctx context.Context, accountID, id int64) error {
	return p.s.Delete(ctx, accountID, id)
}

func (p webhookPages) EnableWebhook(ctx context.Context, accountID, id int64) error {
	return p.s.Enable(ctx, accountID, id)
}

func (p webhookPages) Deliveries(ctx context.Context, accountID, id int64) (web.Webhook, []web.WebhookDelivery, error) {
	hooks, err := p.s.Webhooks(ctx, accountID)
	if err != nil {
		return web.Webhook{}, nil, err
	}
	var h web.Webhook
	for _, x := range hooks {
		if x.ID == id {
			h = x
		}
	}
	if h.ID == 0 {
		return web.Webhook{}, nil, store.ErrNotFound
	}
	log, err := p.s.Log(ctx, accountID, id)
	if err != nil {
		return web.Webhook{}, nil, err
	}
	ds := make([]web.WebhookDelivery, 0, len(log))
	for _, d := range log {
		ds = append(ds, web.WebhookDelivery{MessageID: d.MessageID, EntrySlug: webhook.PayloadSlug(d.Payload),
			ChangeNumber: d.ChangeNumber, CreatedAt: d.CreatedAt, State: d.State, Attempts: d.Attempts,
			LastAttemptAt: d.LastAttemptAt, LastStatus: d.LastStatus, LastError: d.LastError})
	}
	return h, ds, nil
}
