package claims

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"sync"
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
	if o.Yours, err = s.IsMaintainer(ctx, accountID, e.ID); err != nil {
		return Options{}, err
	}
	o.Options, err = s.options(ctx, e)
	return o, err
}

// IsMaintainer reports whether the account maintains the entry: it holds a live claim
// on the entry on a part that counts (countingParts) now. Every maintainer route asks
// this (web.Maintainers); it is one store query (store.MaintainsEntry, which keeps the
// same rule in SQL).
func (s *Service) IsMaintainer(ctx context.Context, accountID, entryID int64) (bool, error) {
	return s.st.MaintainsEntry(ctx, accountID, entryID)
}

// countingParts are the entry's parts a claim may be made and kept on (claims/doc.go,
// "Which parts count"): its own locator, and the remotes, npm packages and PyPI
// projects its listing names now. A repository counts only as the entry's locator.
func countingParts(e store.Entry, parts []store.Part) []store.Part {
	out := []store.Part{{Kind: e.Kind, Locator: e.Locator}}
	for _, p := range parts {
		if p.Kind == e.Kind && p.Locator == e.Locator {
			continue
		}
		switch p.Kind {
		case store.KindRemote, store.KindNPM, store.KindPyPI:
			out = append(out, p)
		}
	}
	return out
}

// partKind is the kind of part a method proves ("" for none).
func partKind(method string) string {
	switch method {
	case MethodWellKnown, MethodDNS:
		return store.KindRemote
	case MethodNPM:
		return store.KindNPM
	case MethodPyPI:
		return store.KindPyPI
	case MethodRepoFile:
		return store.KindGitHub
	}
	return ""
}

// counts reports whether a claim by method on target is on one of the parts.
func counts(parts []store.Part, method, target string) bool {
	k := partKind(method)
	for _, p := range parts {
		if k != "" && p.Kind == k && p.Locator == target {
			return true
		}
	}
	return false
}

// entryParts are the entry's counting parts as stored now.
func (s *Service) entryParts(ctx context.Context, e store.Entry) ([]store.Part, error) {
	_, parts, err := s.st.EntryListing(ctx, e.ID)
	if err != nil {
		return nil, err
	}
	return countingParts(e, parts), nil
}

func (s *Service) options(ctx context.Context, e store.Entry) ([]Option, error) {
	parts, err := s.entryParts(ctx, e)
	if err != nil {
		return nil, err
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
			if u.Scheme == "https" {
				out = append(out, Option{MethodWellKnown, p.Locator, "Serve a file at " + u.Scheme + "://" + u.Host + WellKnownPath})
			}
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
// the part target. ErrMethod when the entry has no such option; ErrTooMany;
// store.ErrNotFound without such entry.
func (s *Service) Start(ctx context.Context, accountID int64, slug, method, target string) (Started, error) {
	e, err := s.st.Entry(ctx, slug)
	if err != nil {
		return Started{}, err
	}
	if err := s.notRevoked(ctx, accountID, e.ID); err != nil {
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
		where = strings.TrimSuffix(txtName(u.Hostname()), ".")
		return where, token, []string{
			"Add a TXT record named " + where + " whose value is the token.",
			"Wait until your DNS provider publishes it (often a minute, at most its TTL), then press Check. Keep the record: Probity checks it again every day.",
		}
	case MethodNPM:
		name, _ := npmName(target)
		return "the README of the newest version of " + name + " on npm", "probity-claim: " + token, []string{
			"Add the line to the README of " + name + " and publish a new version (npm publish). Probity reads the README npm shows for the package, the one of the version published last: publish a prerelease with the line too.",
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
// (the token stays valid: fix it and check again); a check past the throttle
// (CheckEvery per token, ChecksPerHour per account) a *TooSoon; ErrBadToken,
// ErrTokenUsed, ErrTokenExpired; ErrMethod when the token's part no longer counts;
// store.ErrNotFound without such entry.
func (s *Service) Check(ctx context.Context, accountID int64, slug, token string) (Result, error) {
	e, t, err := s.token(ctx, accountID, slug, token)
	if err != nil {
		return Result{}, err
	}
	if err := s.notRevoked(ctx, accountID, e.ID); err != nil {
		return Result{}, err
	}
	hash := t.TokenHash
	if ok, wait := s.checks.allow(hash, accountID, s.cfg.Now()); !ok {
		return Result{}, &TooSoon{RetryAfter: wait}
	}
	parts, err := s.entryParts(ctx, e)
	if err != nil {
		return Result{}, err
	}
	if !counts(parts, t.Method, t.Target) {
		return Result{}, ErrMethod // the part was removed since the token was made
	}
	// No transaction is held across the fetch: the proof is looked for first, then
	// stored (ProveClaim checks the token again, in its transaction).
	proof, err := s.prove(ctx, t.Method, t.Target, hash)
	s.log.Info("claim check", "entry", e.Slug, "method", t.Method, "proven", err == nil)
	if err != nil {
		return Result{}, err
	}
	now := s.cfg.Now().UTC()
	c, err := s.st.ProveClaim(ctx, store.ClaimProof{TokenHash: hash, AccountID: accountID, Proof: proof, At: now,
		NextCheckAt: s.nextCheck(now)})
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
		// The claim is made: a failure to move the due time is logged, not returned
		// (the entry's next read moves it; the person's claim stands).
		if err := s.reschedule(ctx, e.ID); err != nil {
			s.log.Warn("claim made, but its entry's due time could not be moved", "entry", e.Slug, "error", err)
		}
	}
	e.Claimed = true // the claim is live: the trigger set it
	if now, err := s.st.EntryByID(ctx, e.ID); err == nil {
		e = now
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

// RecheckReport is what one Recheck did. Skipped are due claims left for the next run
// (the run's context ended first).
type RecheckReport struct {
	Checked, Proven, Gone, Lapsed, Unanswered, Skipped int
}

// jitter is a random duration in [-d, d].
func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(2*d)+1)) - d
}

// nextCheck is when a claim proven at now is proven again: RecheckInterval ± 1/12 of
// it, so that claims made together spread out.
func (s *Service) nextCheck(now time.Time) time.Time {
	return now.Add(s.cfg.RecheckInterval + jitter(s.cfg.RecheckInterval/12))
}

// retryCheck is when a claim whose check got no answer at now is tried again: an
// eighth of RecheckInterval (3 h for a day), ± a tenth of that.
func (s *Service) retryCheck(now time.Time) time.Time {
	d := s.cfg.RecheckInterval / 8
	return now.Add(d + jitter(d/10))
}

// Recheck is one run of the re-check: it proves again at most RecheckBatch live
// claims due (the most overdue first), RecheckConcurrency at once, each within its own
// Config.Timeout, records each outcome and its next check, and lapses the claims whose
// proof is gone (claims/doc.go, "Re-checks"); then it prunes the tokens expired or used
// a day ago. A claim not started, or cut off, when ctx ends is left as it was (due):
// the run's own end never counts against a claim.
func (s *Service) Recheck(ctx context.Context) (RecheckReport, error) {
	var r RecheckReport
	now := s.cfg.Now().UTC()
	cs, err := s.st.ClaimsDue(ctx, now, RecheckBatch)
	if err != nil {
		return r, err
	}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		work = make(chan store.Claim)
	)
	for range min(RecheckConcurrency, len(cs)) {
		wg.Go(func() {
			for c := range work {
				var one RecheckReport
				if err := s.recheck(ctx, c, &one); err != nil {
					s.log.Warn("claim re-check failed", "claim", c.ID, "error", err)
				}
				mu.Lock()
				r.Checked += one.Checked
				r.Proven += one.Proven
				r.Gone += one.Gone
				r.Lapsed += one.Lapsed
				r.Unanswered += one.Unanswered
				r.Skipped += one.Skipped
				mu.Unlock()
			}
		})
	}
	for i, c := range cs {
		if ctx.Err() != nil || s.tooLate(ctx) {
			mu.Lock()
			r.Skipped += len(cs) - i
			mu.Unlock()
			break
		}
		work <- c
	}
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return r, err
	}
	if _, err := s.st.PruneClaimTokens(ctx, now.Add(-TokenKeep)); err != nil {
		return r, err
	}
	return r, nil
}

// tooLate reports whether ctx ends before one more check could finish.
func (s *Service) tooLate(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ok && time.Until(d) < s.cfg.Timeout+time.Second
}

// recheck proves one claim again and records the outcome:
//
//   - the claim's part no longer counts (removed from the entry), or its method is
//     withdrawn: it lapses ("part removed");
//   - proven: next check in a day or so; the runs of no answer and of gone end;
//   - throttled (the source asked to wait): tried again later, nothing else changes;
//   - no answer: tried again in a few hours; it lapses once the source has not
//     answered for MaxUnanswered since the first check without an answer;
//   - gone: the first such answer is remembered (GoneSince) and the claim checked
//     again a day later; it lapses when the proof is gone on a check GoneFor or more
//     after GoneSince, with no check in between finding it.
//
// When ctx (the run's) ends during the check, nothing is recorded.
func (s *Service) recheck(ctx context.Context, c store.Claim, r *RecheckReport) error {
	e, err := s.st.EntryByID(ctx, c.EntryID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // deleted meanwhile: its claims are gone with it
	}
	if err != nil {
		return err
	}
	parts, err := s.entryParts(ctx, e)
	if err != nil {
		return err
	}
	var proofErr error
	removed := !counts(parts, c.Method, c.Target)
	if !removed {
		_, proofErr = s.prove(ctx, c.Method, c.Target, c.TokenHash)
	}
	if ctx.Err() != nil {
		r.Skipped++
		return nil // the run ended, not the check: the claim stays due
	}
	r.Checked++
	now := s.cfg.Now().UTC()
	rc := store.ClaimRecheck{At: now, UnansweredSince: c.UnansweredSince, GoneSince: c.GoneSince}
	var np *NotProven
	switch {
	case removed && c.Method == MethodGitHubPermission:
		rc.Answered, rc.LapseReason = true, errWithdrawn.Error()
	case removed:
		rc.Answered, rc.LapseReason = true, "part removed: "+clip(c.Target)+" is no longer a part of this entry that a claim counts on"
	case proofErr == nil:
		r.Proven++
		rc.Answered, rc.UnansweredSince, rc.GoneSince, rc.NextCheckAt = true, time.Time{}, time.Time{}, s.nextCheck(now)
	case errors.As(proofErr, &np) && np.Throttled:
		r.Unanswered++
		rc.NextCheckAt = s.retryCheck(now)
	case errors.As(proofErr, &np) && np.Gone:
		r.Gone++
		rc.Answered, rc.UnansweredSince = true, time.Time{}
		if rc.GoneSince.IsZero() {
			rc.GoneSince = now
		}
		if now.Sub(rc.GoneSince) >= GoneFor {
			rc.LapseReason = "the proof was gone on checks a day apart: " + np.Reason
			break
		}
		rc.NextCheckAt = rc.GoneSince.Add(GoneFor + time.Duration(rand.Int64N(int64(s.cfg.RecheckInterval/12)+1)))
		if !rc.NextCheckAt.After(now) {
			rc.NextCheckAt = s.retryCheck(now)
		}
	case errors.As(proofErr, &np):
		// No answer, or an answer that says nothing about the proof (a refused
		// address, a redirect elsewhere, an odd status).
		r.Unanswered++
		if rc.UnansweredSince.IsZero() {
			rc.UnansweredSince = now
		}
		if now.Sub(rc.UnansweredSince) >= s.cfg.MaxUnanswered {
			rc.LapseReason = "the proof could not be read for " + s.cfg.MaxUnanswered.String() + ": " + np.Reason
			break
		}
		rc.NextCheckAt = s.retryCheck(now)
	default:
		return proofErr // the store failed: the claim stays due for the next run
	}
	if _, err := s.st.RecheckClaim(ctx, c.ID, rc); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil // deleted, lapsed or proven anew meanwhile
		}
		return err
	}
	if rc.LapseReason != "" {
		r.Lapsed++
		s.log.Info("claim lapsed", "claim", c.ID, "entry", c.EntryID, "method", c.Method)
		if err := s.reschedule(ctx, c.EntryID); err != nil {
			s.log.Warn("claim lapsed, but its entry's due time could not be moved", "entry", c.EntryID, "error", err)
		}
	}
	return nil
}

// notRevoked answers ErrRevoked when an operator revoked a claim of the account on the
// entry.
func (s *Service) notRevoked(ctx context.Context, accountID, entryID int64) error {
	cs, err := s.st.Claims(ctx, entryID)
	if err != nil {
		return err
	}
	for _, c := range cs {
		if c.AccountID == accountID && Revoked(c) {
			return ErrRevoked
		}
	}
	return nil
}
