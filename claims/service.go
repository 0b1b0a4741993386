package claims

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/probity-dev/probity/checks/supply"
	"github.com/probity-dev/probity/store"
)

// Option is a part of an entry and a way to prove control of it.
type Option struct {
	Method string
	// Target is the part's locator (store.Part.Locator); Label names the part and the
	// method in plain words.
	Target, Label string
}

// Options are what a claim page offers for an entry.
type Options struct {
	Entry store.Entry
	// Claimed is whether the entry has a maintainer (never who); Yours whether the
	// account is one.
	Claimed, Yours bool
	Options        []Option
}

// maxParts bounds the parts of an entry that are offered.
const maxParts = 20

// Options returns the entry with the slug, whether it is claimed (and by the account),
// and the ways to claim it. ErrNotFound (store's) without such entry.
func (s *Service) Options(ctx context.Context, accountID int64, slug string) (Options, error) {
	e, err := s.st.Entry(ctx, slug)
	if err != nil {
		return Options{}, err
	}
	o := Options{Entry: e, Claimed: e.Claimed}
	cs, err := s.st.AccountClaims(ctx, accountID)
	if err != nil {
		return Options{}, err
	}
	for _, c := range cs {
		o.Yours = o.Yours || c.EntryID == e.ID && c.Live()
	}
	o.Options, err = s.options(ctx, e)
	return o, err
}

func (s *Service) options(ctx context.Context, e store.Entry) ([]Option, error) {
	_, parts, err := s.st.EntryListing(ctx, e.ID)
	if err != nil {
		return nil, err
	}
	if len(parts) == 0 {
		parts = []store.Part{{Kind: e.Kind, Locator: e.Locator}}
	}
	var out []Option
	for i, p := range parts {
		if i == maxParts {
			break
		}
		switch p.Kind {
		case store.KindRemote:
			u, err := url.Parse(p.Locator)
			if err != nil || u.Host == "" {
				continue
			}
			out = append(out, Option{MethodWellKnown, p.Locator, "Serve a file at " + u.Scheme + "://" + u.Host + WellKnownPath})
			if hostName(u.Hostname()) {
				out = append(out, Option{MethodDNS, p.Locator, "Add a DNS TXT record at " + DNSPrefix + u.Hostname()})
			}
		case store.KindNPM:
			if name, ok := npmName(p.Locator); ok {
				out = append(out, Option{MethodNPM, p.Locator, "Publish a version of the npm package " + name + " whose README holds the token"})
			}
		case store.KindPyPI:
			if name, ok := pypiName(p.Locator); ok {
				out = append(out, Option{MethodPyPI, p.Locator, "Publish a version of the PyPI project " + name + " whose description holds the token"})
			}
		case store.KindGitHub:
			if owner, repo, ok := supply.ParseGitHubURL(p.Locator); ok {
				out = append(out, Option{MethodRepoFile, p.Locator, "Commit the file " + RepoFilePath + " to the default branch of " + owner + "/" + repo})
				if s.cfg.GitHubToken != "" {
					out = append(out, Option{MethodGitHubPermission, p.Locator, "Have the admin or maintain role on " + owner + "/" + repo + " (signed in with GitHub)"})
				}
			}
		}
	}
	return out, nil
}

// Started is a new token with what to do with it.
type Started struct {
	Option
	// Token is shown to the person once; the store keeps its hash only.
	Token     string
	ExpiresAt time.Time
	// Where is the place the token goes (a URL, a DNS name, a file path, a package),
	// and What the exact content to put there.
	Where, What string
	// Steps are the instructions, in order, in plain words.
	Steps []string
}

// Start makes a token for the account to claim the entry with the slug by method on
// the part target. ErrMethod when the entry has no such option; ErrNoGitHub;
// ErrTooMany; store.ErrNotFound without such entry.
func (s *Service) Start(ctx context.Context, accountID int64, slug, method, target string) (Started, error) {
	e, err := s.st.Entry(ctx, slug)
	if err != nil {
		return Started{}, err
	}
	opts, err := s.options(ctx, e)
	if err != nil {
		return Started{}, err
	}
	var opt *Option
	for i := range opts {
		if opts[i].Method == method && opts[i].Target == target {
			opt = &opts[i]
		}
	}
	if opt == nil {
		return Started{}, ErrMethod
	}
	if method == MethodGitHubPermission {
		a, err := s.st.AccountByID(ctx, accountID)
		if err != nil {
			return Started{}, err
		}
		if a.GitHubID == 0 {
			return Started{}, ErrNoGitHub
		}
	}
	now := s.cfg.Now().UTC()
	token, hash := newToken()
	st := Started{Option: *opt, Token: token, ExpiresAt: now.Add(s.cfg.TokenLifetime).Truncate(time.Millisecond)}
	_, err = s.st.AddClaimToken(ctx, store.ClaimToken{TokenHash: hash, AccountID: accountID, EntryID: e.ID, Method: method,
		Target: target, CreatedAt: now, ExpiresAt: st.ExpiresAt})
	if errors.Is(err, store.ErrClaimTokenLimit) {
		return Started{}, ErrTooMany
	}
	if err != nil {
		return Started{}, err
	}
	st.Where, st.What, st.Steps = instructions(method, target, token)
	return st, nil
}

// instructions says where the token goes and how, for a method and part.
func instructions(method, target, token string) (where, what string, steps []string) {
	switch method {
	case MethodWellKnown:
		u, _ := url.Parse(target)
		where = u.Scheme + "://" + u.Host + WellKnownPath
		return where, token, []string{
			"Serve the token as the body of " + where + " (status 200, any text type; the token may stand on a line of its own among other text).",
			"Press Check. Keep the file: Probity checks it again every day, and the claim lapses when it is gone.",
		}
	case MethodDNS:
		u, _ := url.Parse(target)
		where = DNSPrefix + u.Hostname()
		return where, token, []string{
			"Add a TXT record named " + where + " whose value is the token.",
			"Wait until your DNS provider publishes it (often a minute, at most its TTL), then press Check. Keep the record: Probity checks it again every day.",
		}
	case MethodNPM:
		name, _ := npmName(target)
		return "the README of the newest version of " + name + " on npm", "probity-claim: " + token, []string{
			"Add the line to the README of " + name + " and publish a new version (npm publish); the version npm tags latest is the one read.",
			"Press Check. Keep the line in later versions: Probity checks the newest version again every day.",
		}
	case MethodPyPI:
		name, _ := pypiName(target)
		return "the description of the newest version of " + name + " on PyPI", "probity-claim: " + token, []string{
			"Add the line to the description (the README your build uses as long_description) of " + name + " and publish a new version.",
			"Press Check. Keep the line in later versions: Probity checks the newest version again every day.",
		}
	case MethodRepoFile:
		owner, repo, _ := supply.ParseGitHubURL(target)
		return RepoFilePath + " on the default branch of " + owner + "/" + repo, token, []string{
			"Commit a file " + RepoFilePath + " holding the token to the default branch of " + owner + "/" + repo + ".",
			"Press Check. Keep the file: Probity checks it again every day.",
		}
	case MethodGitHubPermission:
		owner, repo, _ := supply.ParseGitHubURL(target)
		return owner + "/" + repo + " on GitHub", "", []string{
			"Nothing to publish: Probity asks GitHub whether the GitHub account you signed in with has the admin or maintain role on " + owner + "/" + repo + ".",
			"Press Check. Probity asks again every day; the claim lapses when the role is gone.",
		}
	}
	return "", "", nil
}

// Pending returns the instructions of the account's unused, unexpired token for the
// entry with the slug again (the page that shows why a check failed).
// ErrBadToken, ErrTokenUsed, ErrTokenExpired, as Check.
func (s *Service) Pending(ctx context.Context, accountID int64, slug, token string) (Started, error) {
	_, t, err := s.token(ctx, accountID, slug, token)
	if err != nil {
		return Started{}, err
	}
	opt := Option{Method: t.Method, Target: t.Target}
	st := Started{Option: opt, Token: token, ExpiresAt: t.ExpiresAt}
	st.Where, st.What, st.Steps = instructions(t.Method, t.Target, token)
	return st, nil
}

// token returns the entry with the slug and the account's live token for it.
func (s *Service) token(ctx context.Context, accountID int64, slug, token string) (store.Entry, store.ClaimToken, error) {
	if !TokenOK(token) {
		return store.Entry{}, store.ClaimToken{}, ErrBadToken
	}
	e, err := s.st.Entry(ctx, slug)
	if err != nil {
		return store.Entry{}, store.ClaimToken{}, err
	}
	t, err := s.st.ClaimToken(ctx, hashToken(token))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return e, t, ErrBadToken
	case err != nil:
		return e, t, err
	case t.AccountID != accountID || t.EntryID != e.ID:
		return e, t, ErrBadToken
	case !t.UsedAt.IsZero():
		return e, t, ErrTokenUsed
	case !s.cfg.Now().Before(t.ExpiresAt):
		return e, t, ErrTokenExpired
	}
	return e, t, nil
}

// Result is a successful check.
type Result struct {
	Entry store.Entry // as it is now: Claimed true
	Claim store.Claim
}

// Check looks for the proof of the account's token for the entry with the slug. On
// success the token is used and the entry claimed. A proof not found is a *NotProven
// (the token stays valid: fix it and check again); ErrBadToken, ErrTokenUsed,
// ErrTokenExpired; store.ErrNotFound without such entry.
func (s *Service) Check(ctx context.Context, accountID int64, slug, token string) (Result, error) {
	e, t, err := s.token(ctx, accountID, slug, token)
	if err != nil {
		return Result{}, err
	}
	hash := t.TokenHash
	// No transaction is held across the fetch: the proof is looked for first, then
	// stored (ProveClaim checks the token again, in its transaction).
	proof, err := s.prove(ctx, accountID, t.Method, t.Target, hash)
	s.log.Info("claim check", "entry", e.Slug, "method", t.Method, "proven", err == nil)
	if err != nil {
		return Result{}, err
	}
	c, err := s.st.ProveClaim(ctx, store.ClaimProof{TokenHash: hash, AccountID: accountID, Proof: proof, At: s.cfg.Now().UTC()})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Result{}, ErrBadToken
	case errors.Is(err, store.ErrClaimTokenUsed):
		return Result{}, ErrTokenUsed
	case errors.Is(err, store.ErrClaimTokenExpired):
		return Result{}, ErrTokenExpired
	case err != nil:
		return Result{}, err
	}
	if !e.Claimed {
		if err := s.reschedule(ctx, e.ID); err != nil {
			return Result{}, err
		}
	}
	if e, err = s.st.EntryByID(ctx, e.ID); err != nil {
		return Result{}, err
	}
	return Result{Entry: e, Claim: c}, nil
}

// reschedule moves the entry's cadence due time after its claimed state flipped.
func (s *Service) reschedule(ctx context.Context, entryID int64) error {
	if s.cfg.Schedule == nil {
		return nil
	}
	e, err := s.st.EntryByID(ctx, entryID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // deleted meanwhile
	}
	if err != nil {
		return err
	}
	due, err := s.st.DueTimes(ctx, entryID)
	if err != nil {
		return err
	}
	for _, u := range s.cfg.Schedule.ClaimedDue(e, due, s.cfg.Now()) {
		if err := s.st.SetDue(ctx, entryID, u); err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("couldn't move the due time of entry %s: %w", e.Slug, err)
		}
	}
	return nil
}

// RecheckReport is what one Recheck did.
type RecheckReport struct {
	Checked, Proven, Lapsed, Unanswered int
}

// recheckBatch is how many claims Recheck reads at once.
const recheckBatch = 100

// Recheck proves every live claim last checked RecheckInterval ago or earlier again,
// and lapses those whose proof is gone, or unreadable for MaxUnanswered; then it
// prunes the tokens expired or used a day ago. A claim whose re-check fails
// otherwise is logged and left for the next run.
func (s *Service) Recheck(ctx context.Context) (RecheckReport, error) {
	var r RecheckReport
	now := s.cfg.Now().UTC()
	var after int64
	for {
		cs, err := s.st.ClaimsToCheck(ctx, now.Add(-s.cfg.RecheckInterval+time.Minute), after, recheckBatch)
		if err != nil {
			return r, err
		}
		for _, c := range cs {
			after = c.ID
			if err := ctx.Err(); err != nil {
				return r, err
			}
			r.Checked++
			if err := s.recheck(ctx, c, &r); err != nil {
				s.log.Warn("claim re-check failed", "claim", c.ID, "error", err)
			}
		}
		if len(cs) < recheckBatch {
			break
		}
	}
	if _, err := s.st.PruneClaimTokens(ctx, now.Add(-24*time.Hour)); err != nil {
		return r, err
	}
	return r, nil
}

func (s *Service) recheck(ctx context.Context, c store.Claim, r *RecheckReport) error {
	_, err := s.prove(ctx, c.AccountID, c.Method, c.Target, c.TokenHash)
	now := s.cfg.Now().UTC()
	var np *NotProven
	lapse := ""
	switch {
	case err == nil:
		r.Proven++
	case errors.As(err, &np) && np.Unanswered && now.Sub(c.LastCheckedAt) < s.cfg.MaxUnanswered:
		r.Unanswered++
		return nil // no answer: the claim stays, its last check stays as it was
	case errors.As(err, &np) && np.Unanswered:
		lapse = "the proof could not be read for " + s.cfg.MaxUnanswered.String() + ": " + np.Reason
	case errors.As(err, &np):
		lapse = np.Reason
	case errors.Is(err, ErrNoGitHub):
		lapse = err.Error()
	default:
		return err
	}
	if _, err := s.st.RecheckClaim(ctx, c.ID, now, lapse); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil // deleted or lapsed meanwhile
		}
		return err
	}
	if lapse != "" {
		r.Lapsed++
		s.log.Info("claim lapsed", "claim", c.ID, "entry", c.EntryID, "method", c.Method)
		return s.reschedule(ctx, c.EntryID)
	}
	return nil
}
