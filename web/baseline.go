package web

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/probity-dev/probity/baseline"
	"github.com/probity-dev/probity/store"
)

// Approving a baseline (issue 18): a maintainer of an entry takes the tool surface of
// its newest signed round as the approved one (package baseline); from the
// next round the three *_unchanged_vs_approved checks compare with it.
//
//	GET  /s/{slug}/baseline   the approved baseline beside the newest round (maintainers)
//	POST /s/{slug}/baseline   approve the newest round's tool surface (maintainers)
//
// Both start with maintainerOf (roles.go): sign in for the anonymous, 403 for anyone
// but a maintainer of this entry; the POST passes the write paths' defences (csrf.go).
// The page never says who approved.

// Baselines is approving baselines (package baseline). Its errors are package
// baseline's sentinels; store.ErrNotFound for an entry that does not exist.
type Baselines interface {
	// Status is the entry's approved baseline and newest signed round, for a maintainer.
	Status(ctx context.Context, accountID int64, slug string) (BaselineStatus, error)
	// ApproveSeen takes the newest signed round's tool surface as the approved
	// baseline when it is the surface the page showed (seen), else ErrChanged.
	ApproveSeen(ctx context.Context, accountID int64, slug, seen string) (store.Baseline, error)
}

// BaselineStatus is what the baseline page shows (package baseline's type).
type BaselineStatus = baseline.Status

// baselinePage is the baseline page: the current baseline and the newest round, and the
// outcome of the last action (Done or Error).
type baselinePage struct {
	V       *viewer
	Slug    string
	Name    string
	Current *store.Baseline
	Newest  *store.RoundSummary
	Differs bool
	// Why says why the newest round cannot be approved; "" when it can.
	Why   string
	Done  string
	Error string
}

func (h *handlers) baselineStatusPage(c *gin.Context, v *viewer, e store.Entry) (baselinePage, bool) {
	st, err := h.baselines.Status(c.Request.Context(), v.ID, e.Slug)
	if err != nil {
		h.baselineFail(c, e, err)
		return baselinePage{}, false
	}
	p := baselinePage{V: v, Slug: e.Slug, Name: displayName(e), Current: st.Current, Newest: st.Newest, Differs: st.Differs}
	if st.Approval != nil {
		p.Why = st.Approval.Error() + "."
	}
	return p, true
}

// baselineFail answers an error of the baseline service: 403 for a maintainer no more
// (a claim lapsed meanwhile), else as h.fail.
func (h *handlers) baselineFail(c *gin.Context, e store.Entry, err error) {
	if errors.Is(err, baseline.ErrNotMaintainer) {
		h.message(c, http.StatusForbidden, "Maintainers only", "Only a maintainer of "+displayName(e)+" can do this.",
			link{Href: "/s/" + e.Slug, Text: "Back to " + displayName(e)})
		return
	}
	h.fail(c, err)
}

// baselineShow serves GET /s/{slug}/baseline.
func (h *handlers) baselineShow(c *gin.Context) {
	v, e, ok := h.maintainerOf(c, "/baseline")
	if !ok {
		return
	}
	p, ok := h.baselineStatusPage(c, v, e)
	if !ok {
		return
	}
	h.render(c, http.StatusOK, "baseline", p)
}

// baselineApprove serves POST /s/{slug}/baseline: the newest round's tool surface
// becomes the approved baseline, or the page says why not (409).
func (h *handlers) baselineApprove(c *gin.Context) {
	v, e, ok := h.maintainerOf(c, "/baseline")
	if !ok {
		return
	}
	// The surface the page showed; a form without one approves nothing (ErrChanged,
	// or why there is nothing to approve).
	seen := formValue(c, "surface")
	if seen == "" || len(seen) > 128 {
		seen = "-"
	}
	b, err := h.baselines.ApproveSeen(c.Request.Context(), v.ID, e.Slug, seen)
	status := http.StatusOK
	var done, msg string
	switch {
	case err == nil:
		done = "Baseline " + strconv.FormatInt(b.Number, 10) + " approved: from the next round, the checks compare the tools with it."
	case errors.Is(err, baseline.ErrNoRound), errors.Is(err, baseline.ErrNoTools), errors.Is(err, baseline.ErrAlreadyApproved), errors.Is(err, baseline.ErrChanged):
		status, msg = http.StatusConflict, err.Error()+"."
	default:
		h.baselineFail(c, e, err)
		return
	}
	p, ok := h.baselineStatusPage(c, v, e)
	if !ok {
		return
	}
	p.Done, p.Error = done, msg
	h.render(c, status, "baseline", p)
}
