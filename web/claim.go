package web

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/probity-dev/probity/claims"
)

// Claiming an entry (issue 18): a signed-in person proves control of one of the
// entry's parts (package claims) and becomes one of its maintainers. The pages never
// show who maintains an entry (seed 000: "Wer das ist, zeigen wir nie"): an entry says
// "claimed", and a person is told only whether they are a maintainer themselves.
//
//	GET  /s/{slug}/claim        the ways to claim the entry (signed in; else sign in first)
//	POST /s/{slug}/claim        make a token for one way: the token and what to do with it
//	POST /s/{slug}/claim/check  look for the token: claimed, or why not (the token stays good)
//
// Every POST passes the write paths' defences (csrf.go): the cross-origin check, the
// session's csrf field, the write routes' rate limit and the form's size bound.

// Claims is claiming entries (package claims). Its errors are package claims' own
// sentinels and *claims.NotProven; store.ErrNotFound for an entry that does not exist.
type Claims interface {
	// Options are the ways the account can claim the entry, and whether it is claimed.
	Options(ctx context.Context, accountID int64, slug string) (ClaimOptions, error)
	// Start makes a token for one way and says what to do with it.
	Start(ctx context.Context, accountID int64, slug, method, target string) (ClaimStarted, error)
	// Pending says again what to do with the account's live token.
	Pending(ctx context.Context, accountID int64, slug, token string) (ClaimStarted, error)
	// Check looks for the token's proof and claims the entry when it is there; it is
	// throttled per token and per account (*claims.TooSoon: nothing was fetched).
	Check(ctx context.Context, accountID int64, slug, token string) (ClaimResult, error)
}

// The claims' own types, which the pages show.
type (
	ClaimOptions   = claims.Options
	ClaimStarted   = claims.Started
	ClaimResult    = claims.Result
	ClaimNotProven = claims.NotProven
	ClaimTooSoon   = claims.TooSoon
)

// Bounds of the claim forms' fields.
const (
	maxClaimMethod = 32
	maxClaimTarget = 2048
)

// claimPage is the claim page: the ways to claim, or a started claim's token and
// instructions (Started set), with an error of the last action.
type claimPage struct {
	V       *viewer
	Slug    string
	Name    string
	Claimed bool
	Yours   bool
	Options []claims.Option
	Started *ClaimStarted
	Error   string
	// Baselines: the site serves the baseline page (baseline.go), which a maintainer
	// is pointed to.
	Baselines bool
}

func (h *handlers) claimOptionsPage(c *gin.Context, v *viewer, slug string) (claimPage, bool) {
	o, err := h.claims.Options(c.Request.Context(), v.ID, slug)
	if err != nil {
		h.fail(c, err)
		return claimPage{}, false
	}
	p := claimPage{V: v, Slug: o.Entry.Slug, Name: displayName(o.Entry), Claimed: o.Claimed, Yours: o.Yours, Baselines: h.baselines != nil}
	for _, opt := range o.Options {
		opt.Label = cut(visibleLine(opt.Label), maxClaimTarget)
		p.Options = append(p.Options, opt)
	}
	return p, true
}

// claim serves GET /s/{slug}/claim.
func (h *handlers) claim(c *gin.Context) {
	slug, ok := h.entrySlug(c)
	if !ok {
		return
	}
	v, ok := h.signedIn(c, "/s/"+slug+"/claim")
	if !ok {
		return
	}
	private(c)
	p, ok := h.claimOptionsPage(c, v, slug)
	if !ok {
		return
	}
	h.render(c, http.StatusOK, "claim", p)
}

// claimStart serves POST /s/{slug}/claim: a token for the chosen way.
func (h *handlers) claimStart(c *gin.Context) {
	slug, ok := h.entrySlug(c)
	if !ok {
		return
	}
	v, ok := h.postSignedIn(c, "/s/"+slug+"/claim")
	if !ok {
		return
	}
	private(c)
	p, ok := h.claimOptionsPage(c, v, slug)
	if !ok {
		return
	}
	method, target := formValue(c, "method"), formValue(c, "target")
	if method == "" || len(method) > maxClaimMethod || target == "" || len(target) > maxClaimTarget {
		p.Error = "Choose one of the ways below."
		h.render(c, http.StatusBadRequest, "claim", p)
		return
	}
	st, err := h.claims.Start(c.Request.Context(), v.ID, slug, method, target)
	switch {
	case errors.Is(err, claims.ErrMethod):
		p.Error = err.Error()
		h.render(c, http.StatusBadRequest, "claim", p)
		return
	case errors.Is(err, claims.ErrTooMany):
		p.Error = err.Error()
		h.render(c, http.StatusTooManyRequests, "claim", p)
		return
	case errors.Is(err, claims.ErrRevoked):
		p.Error = err.Error() + "."
		h.render(c, http.StatusForbidden, "claim", p)
		return
	case err != nil:
		h.fail(c, err)
		return
	}
	p.Started = &st
	h.render(c, http.StatusOK, "claim", p)
}

// claimCheck serves POST /s/{slug}/claim/check: claimed, or why not.
func (h *handlers) claimCheck(c *gin.Context) {
	slug, ok := h.entrySlug(c)
	if !ok {
		return
	}
	v, ok := h.postSignedIn(c, "/s/"+slug+"/claim")
	if !ok {
		return
	}
	private(c)
	ctx := c.Request.Context()
	token := formValue(c, "token")
	res, err := h.claims.Check(ctx, v.ID, slug, token)
	var np *ClaimNotProven
	var soon *ClaimTooSoon
	switch {
	case errors.As(err, &soon):
		secs := int64(max(soon.RetryAfter.Round(time.Second), time.Second) / time.Second)
		c.Header("Retry-After", strconv.FormatInt(secs, 10))
		h.message(c, http.StatusTooManyRequests, "Too many checks",
			"Probity reads your proof from a server it does not run, so checks are spaced out: one per token every few seconds, and a few dozen an hour per account. Try again in "+
				strconv.FormatInt(secs, 10)+" seconds.",
			link{Href: "/s/" + slug + "/claim", Text: "Back to the claim page"})
	case errors.Is(err, claims.ErrMethod):
		h.message(c, http.StatusBadRequest, "Part no longer listed",
			"The part this token is for is no longer one of the entry's parts a claim can be made on. Start again with one of its current parts.",
			link{Href: "/s/" + slug + "/claim", Text: "Start again"})
	case err == nil:
		name := displayName(res.Entry)
		h.message(c, http.StatusOK, "Claimed",
			"You are a maintainer of "+name+" now. The entry says it is claimed, never by whom, and is read every few minutes from now on. "+
				"Keep the proof in place: Probity checks it again every day, and the claim lapses when it is gone.",
			link{Href: "/s/" + slug + "/claim", Text: "What a maintainer can do"}, link{Href: "/s/" + slug, Text: "Back to " + name})
	case errors.As(err, &np):
		p, ok := h.claimOptionsPage(c, v, slug)
		if !ok {
			return
		}
		st, perr := h.claims.Pending(ctx, v.ID, slug, token)
		if perr != nil {
			h.claimTokenGone(c, slug, perr)
			return
		}
		p.Started = &st
		p.Error = "Not claimed yet: " + cut(visibleLine(np.Reason), 600) + ". Your token stays valid until it expires; fix it and check again."
		h.render(c, http.StatusUnprocessableEntity, "claim", p)
	case errors.Is(err, claims.ErrRevoked):
		h.message(c, http.StatusForbidden, "Not claimed", claims.ErrRevoked.Error()+".", link{Href: "/s/" + slug, Text: "Back to the entry"})
	case errors.Is(err, claims.ErrBadToken), errors.Is(err, claims.ErrTokenUsed), errors.Is(err, claims.ErrTokenExpired):
		h.claimTokenGone(c, slug, err)
	default:
		h.fail(c, err)
	}
}

// claimTokenGone answers a check of a token that cannot be checked (any more).
func (h *handlers) claimTokenGone(c *gin.Context, slug string, err error) {
	status, msg := http.StatusBadRequest, claims.ErrBadToken.Error()+"."
	switch {
	case errors.Is(err, claims.ErrTokenUsed):
		status, msg = http.StatusGone, claims.ErrTokenUsed.Error()+"."
	case errors.Is(err, claims.ErrTokenExpired):
		status, msg = http.StatusGone, claims.ErrTokenExpired.Error()+"."
	case !errors.Is(err, claims.ErrBadToken):
		h.fail(c, err)
		return
	}
	h.message(c, status, "Token not valid", msg, link{Href: "/s/" + slug + "/claim", Text: "Start again"})
}
