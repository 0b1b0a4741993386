package rounds

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/checks"
	"github.com/probity-dev/probity/checks/supply"
	"github.com/probity-dev/probity/store"
)

// Collector gathers the supply facts of a server (an entry with its linked parts,
// supply.Target); *supply.Collector is one.
type Collector interface {
	Collect(ctx context.Context, t supply.Target, tools []json.RawMessage, endpoint *supply.EndpointFacts) *supply.Facts
}

// SupplyHistory takes what a supply run read into the history: a package's newest
// version, and the tools of a repository's MCP bundle manifest; *history.Processor is
// one.
type SupplyHistory interface {
	RecordPackageVersion(ctx context.Context, entryID int64, version string, at time.Time) (bool, error)
	RecordManifest(ctx context.Context, entryID int64, tools []json.RawMessage, runID int64, payloadDigest string, at time.Time) (int, error)
}

// SupplyReport is what RunSupply reports of one supply run.
type SupplyReport struct {
	// Ran says the checks ran and were stored; false when a daily check found neither
	// the package version nor the README changed since the last run.
	Ran      bool
	Score    int
	Verified bool
	RunID    int64
	// Retry says a check was not run because a source could not be read (Probity's
	// trouble: quota, timeout, 5xx, network); the next run is due within hours
	// (supplyRetryDelay), not in a week.
	Retry bool
}

// supplyInterval is the time between forced supply runs (seed 004: weekly).
const supplyInterval = 7 * 24 * time.Hour

// The retry of a run with checks not run: after supplyRetryFirst (GitHub's
// unauthenticated quota resets hourly), doubling with each further such run in a row,
// at most supplyRetryMax, plus up to a tenth of the delay of spread.
const (
	supplyRetryFirst = time.Hour
	supplyRetryMax   = 24 * time.Hour
)

// RunSupply runs the supply-chain checks of an entry (seed 004) over the whole server:
// it reads the entry's listing and parts (supplyTarget: the repository it lists, its
// first package, its remote), collects the facts (for a remote entry with its last tool
// surface and handshake), evaluates the eleven checks, signs the result as a supply/v1
// statement and stores it with the next due time: weekly, or within hours when a check
// was not run because a source could not be read (SupplyReport.Retry,
// supplyRetryDelay). It records a package entry's new version in the history. With
// onlyIfChanged (the daily check) it stores nothing when the package version and README
// are the same as in the last run. Like a round, no transaction is open and the key is
// not in use during the network work.
func (r *Runner) RunSupply(ctx context.Context, e store.Entry, onlyIfChanged bool) (SupplyReport, error) {
	var out SupplyReport
	if r.cfg.Collector == nil {
		return out, errors.New("rounds: no supply collector configured")
	}
	now := r.cfg.Now().UTC().Truncate(time.Millisecond)
	if e.Parent != 0 {
		// A server's second remote: its server's run reads the whole server.
		return out, r.cfg.Store.SetDue(ctx, e.ID, store.DueUpdate{Reason: store.ReasonSupply})
	}
	listing, parts, err := r.cfg.Store.EntryListing(ctx, e.ID)
	if err != nil {
		return out, fmt.Errorf("couldn't read the parts of %s: %w", e.Slug, err)
	}
	target := supplyTarget(e, listing, parts)
	var tools []json.RawMessage
	var endpoint *supply.EndpointFacts
	if e.Kind == store.KindRemote {
		var err error
		if tools, endpoint, err = r.remoteFacts(ctx, e, now); err != nil {
			return out, err
		}
	}
	facts := r.cfg.Collector.Collect(ctx, target, tools, endpoint)
	if ctx.Err() != nil {
		return out, ctx.Err()
	}
	if onlyIfChanged {
		prev, err := r.cfg.Store.SupplyRuns(ctx, e.ID, 1)
		if err != nil {
			return out, err
		}
		if len(prev) == 1 && !supplyChanged(prev[0].Facts, facts) {
			err := r.cfg.Store.SetDue(ctx, e.ID, store.DueUpdate{Reason: store.ReasonStatus, At: now.Add(r.cfg.Schedule.StatusInterval)})
			return out, err
		}
	}
	verdict := supply.Evaluate(facts, supply.Options{Now: now})
	factsJSON, err := json.Marshal(facts)
	if err != nil {
		return out, err
	}
	canonFacts, err := attest.Canonicalize(factsJSON)
	if err != nil {
		return out, fmt.Errorf("couldn't canonicalize the facts of %s: %w", e.Slug, err)
	}
	verdictJSON, err := supply.EncodeVerdict(verdict)
	if err != nil {
		return out, err
	}
	pred := supplyPredicate(e, facts, verdict, now, r.cfg.ToolVersion)
	st := attest.NewSupplyStatement(pred, attest.Digest(canonFacts)[len("sha256:"):])
	env, payload, err := attest.Sign(ctx, st, r.cfg.Signer)
	if err != nil {
		return out, fmt.Errorf("couldn't sign the supply run of %s: %w", e.Slug, err)
	}
	envJSON, err := attest.EncodeEnvelope(env)
	if err != nil {
		return out, err
	}
	rec := store.SupplyRecord{EntryID: e.ID, RanAt: now, Score: pred.Score, Verified: pred.Verified,
		LatestVersion: pred.PackageVersion, Facts: canonFacts, Verdict: verdictJSON, Envelope: envJSON, KeyID: r.keyID}
	next := now.Add(supplyInterval + spread(e, now, "supply", time.Hour))
	if verdict.Retry() {
		delay, err := r.supplyRetryDelay(ctx, e)
		if err != nil {
			return out, err
		}
		next = now.Add(delay + spread(e, now, "supply-retry", delay/10))
	}
	due := []store.DueUpdate{{Reason: store.ReasonSupply, At: next}}
	if e.Kind != store.KindRemote {
		due = append(due, store.DueUpdate{Reason: store.ReasonStatus, At: now.Add(r.cfg.Schedule.StatusInterval)})
	}
	saveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.cfg.SaveTimeout)
	defer cancel()
	id, err := r.cfg.Store.SaveSupply(saveCtx, rec, due)
	if err != nil {
		return out, fmt.Errorf("couldn't store the supply run of %s: %w", e.Slug, err)
	}
	if h := r.cfg.SupplyHistory; h != nil {
		// A package entry's version; a server whose primary part is a remote keeps the
		// history of its tools.
		if (e.Kind == store.KindNPM || e.Kind == store.KindPyPI) && facts.Package != nil && facts.Package.Source.Outcome == supply.SourceOK && facts.Package.Latest != "" {
			if _, err := h.RecordPackageVersion(saveCtx, e.ID, facts.Package.Latest, now); err != nil {
				r.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "package version not recorded", slog.String("entry", e.Slug), slog.String("error", err.Error()))
			}
		}
		// A bundle manifest's tools: only a complete list is a read (tools_generated
		// marks it partial, which is no data).
		if m := facts.Manifest; e.Kind == store.KindGitHub && m != nil && m.Source.Outcome == supply.SourceOK && !facts.ToolsIncomplete && len(facts.Tools) > 0 {
			if _, err := h.RecordManifest(saveCtx, e.ID, facts.Tools, id, attest.Digest(payload), now); err != nil {
				r.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "manifest tools not recorded", slog.String("entry", e.Slug), slog.String("error", err.Error()))
			}
		}
	}
	attrs := []slog.Attr{slog.String("entry", e.Slug), slog.Int("score", pred.Score),
		slog.Bool("verified", pred.Verified), slog.Int("weight_ran", pred.WeightRan), slog.Time("next", next)}
	if verdict.Retry() {
		attrs = append(attrs, slog.String("not_run", strings.Join(verdict.NotRun(), ",")))
	}
	r.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "supply", attrs...)
	return SupplyReport{Ran: true, Score: pred.Score, Verified: pred.Verified, RunID: id, Retry: verdict.Retry()}, nil
}

// supplyRetryDelay is how long after a run with checks not run the next one is due:
// supplyRetryFirst after the first such run, doubled for each earlier run in a row that
// also had checks not run (read from the stored verdicts), at most supplyRetryMax.
func (r *Runner) supplyRetryDelay(ctx context.Context, e store.Entry) (time.Duration, error) {
	prev, err := r.cfg.Store.SupplyRuns(ctx, e.ID, 5)
	if err != nil {
		return 0, err
	}
	delay := supplyRetryFirst
	for _, run := range prev {
		v, err := supply.DecodeVerdict(run.Verdict)
		if err != nil || !v.Retry() || delay >= supplyRetryMax {
			break
		}
		delay *= 2
	}
	return min(delay, supplyRetryMax), nil
}

// remoteFacts returns a remote entry's last tool surface and what its newest round
// showed of the endpoint.
func (r *Runner) remoteFacts(ctx context.Context, e store.Entry, now time.Time) ([]json.RawMessage, *supply.EndpointFacts, error) {
	ep := &supply.EndpointFacts{URL: e.Locator, PlainHTTP: strings.HasPrefix(e.Locator, "http://")}
	rs, err := r.cfg.Store.Rounds(ctx, e.ID, 1)
	if err != nil {
		return nil, nil, err
	}
	if len(rs) == 0 {
		ep.Source = supply.Source{Outcome: supply.SourceNoData, URL: e.Locator, FetchedAt: now, Error: "no round yet"}
	} else {
		ep.Source = supply.Source{Outcome: supply.SourceOK, URL: e.Locator, FetchedAt: rs[0].StartedAt}
		ep.Answered = rs[0].Uptime == store.UptimeAnswered && (rs[0].ProtocolVersion != "" || rs[0].Coverage == string(attest.CoverageAuthRequired))
	}
	var tools []json.RawMessage
	if e.LastSurface != "" {
		doc, err := r.cfg.Store.Surface(ctx, e.LastSurface)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, nil, err
		}
		if err == nil {
			if err := json.Unmarshal(doc, &tools); err != nil {
				return nil, nil, fmt.Errorf("stored surface %s: %w", e.LastSurface, err)
			}
		}
	}
	return tools, ep, nil
}

// supplyChanged reports whether the package version or a README differs from the facts
// of the last run.
func supplyChanged(prevJSON []byte, f *supply.Facts) bool {
	var prev supply.Facts
	if err := json.Unmarshal(prevJSON, &prev); err != nil {
		return true
	}
	pkg := func(f *supply.Facts) (string, string) {
		if f.Package == nil {
			return "", ""
		}
		return f.Package.Latest, attest.Digest([]byte(f.Package.README))
	}
	readme := func(f *supply.Facts) string {
		if f.Repo == nil {
			return ""
		}
		return attest.Digest([]byte(f.Repo.README))
	}
	pv, pr := pkg(&prev)
	cv, cr := pkg(f)
	// What Probity could not read this time (its own trouble) is no change: a failed
	// package read is not a new version, a README not read not a new README.
	pkgChanged := (pv != cv || pr != cr) && (f.Package == nil || f.Package.Source.Outcome == supply.SourceOK)
	readmeRead := f.Repo == nil || f.Repo.Source.Outcome == supply.SourceOK && !f.Repo.READMEFailed
	return pkgChanged || readmeRead && readme(&prev) != readme(f)
}

// supplyPredicate maps a verdict onto the signed predicate (attest.NewSupplyPredicate:
// checks, points, score, weight ran and the Verified decision by attest's rules, which
// the verifier applies) and adds what the facts show of the version, provenance and
// Scorecard commit.
func supplyPredicate(e store.Entry, f *supply.Facts, v supply.Verdict, now time.Time, toolVersion string) *attest.SupplyPredicate {
	suite := v.SuiteVersion
	if suite == "" {
		suite = checks.SuiteVersion
	}
	p := attest.NewSupplyPredicate(attest.EntryRef(e.Kind, e.Slug, e.Locator), now, suite, toolVersion, v.Outcomes())
	if f.Package != nil && attest.IsToken(f.Package.Latest) {
		p.PackageVersion = f.Package.Latest
	}
	if pv := f.Provenance; pv != nil && pv.Verified && strings.HasPrefix(pv.Repository, "https://") {
		p.Provenance = &attest.SupplyProvenance{Repository: pv.Repository}
		if isCommit(pv.Commit) {
			p.Provenance.Commit = pv.Commit
		}
	}
	if sc := f.Scorecard; sc != nil && len(sc.Commit) == 40 && isCommit(sc.Commit) {
		p.ScorecardCommit = sc.Commit
	}
	return p
}

func isCommit(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// supplyAfterRound runs the supply checks of a remote entry after its round in a manual
// run (RunAll) when the server has a package or a source repository linked
// (hasSupplyParts): the round read the tools and the handshake the checks use. A round
// stored by an earlier, interrupted invocation (AlreadyDone) runs them only when no
// supply run is stored since the run's due time. Remote-only servers keep their weekly
// supply runs under serve.
func (r *Runner) supplyAfterRound(ctx context.Context, e store.Entry, o RoundReport, runDue time.Time) error {
	if e.Kind != store.KindRemote || o.Outcome == EntryGone {
		return nil
	}
	listing, parts, err := r.cfg.Store.EntryListing(ctx, e.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // deleted meanwhile
	}
	if err != nil {
		return fmt.Errorf("couldn't read the parts of %s: %w", e.Slug, err)
	}
	if !hasSupplyParts(supplyTarget(e, listing, parts)) {
		return nil
	}
	if o.Outcome == AlreadyDone {
		prev, err := r.cfg.Store.SupplyRuns(ctx, e.ID, 1)
		if err != nil {
			return err
		}
		if len(prev) == 1 && !prev[0].RanAt.Before(runDue) {
			return nil
		}
	}
	_, err = r.RunSupply(ctx, e, false)
	return err
}
