package web

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/probity-dev/probity/store"
)

// Roles (issue 18). Every page and form of a maintainer or an operator asks here, once,
// who may use it:
//
//	anonymous                     → sign in first (303 to /signin?return=…)
//	signed in, no role            → 403
//	maintainer of another entry   → 403
//	maintainer of this entry      → the maintainer routes of this entry (/s/{slug}/…)
//	operator                      → the console (/ops/…); an operator maintains an entry
//	                                only by claiming it, like anyone
//
// A POST passes the write paths' defences first (postSignedIn: the form bound, the
// session's csrf field; crossOrigin and the write bucket run before every POST).

// Maintainers says whether an account maintains an entry: it holds a live claim on one
// of the entry's current parts (package claims owns the rule).
type Maintainers interface {
	IsMaintainer(ctx context.Context, accountID, entryID int64) (bool, error)
}

// Operators says whether an account holds the operator role (granted from the CLI).
type Operators interface {
	IsOperator(ctx context.Context, accountID int64) (bool, error)
}

// entrySlug reads the path's slug, or answers 404.
func (h *handlers) entrySlug(c *gin.Context) (string, bool) {
	slug := c.Param("slug")
	if !slugOK(slug) {
		h.fail(c, errNotFound)
		return "", false
	}
	return slug, true
}

// viewerFor is signedIn for a GET or HEAD and postSignedIn for a POST; ret is where
// sign-in returns to.
func (h *handlers) viewerFor(c *gin.Context, ret string) (*viewer, bool) {
	if c.Request.Method == http.MethodPost {
		return h.postSignedIn(c, ret)
	}
	return h.signedIn(c, ret)
}

// maintainerOf admits a maintainer of the path's entry to one of its maintainer routes
// (suffix is the route after /s/{slug}, where sign-in returns to). It answers the
// request itself and returns false otherwise: 404 for no such entry, sign-in for the
// anonymous, 403 for everyone else. The answer is private (never cached).
func (h *handlers) maintainerOf(c *gin.Context, suffix string) (*viewer, store.Entry, bool) {
	slug, ok := h.entrySlug(c)
	if !ok {
		return nil, store.Entry{}, false
	}
	v, ok := h.viewerFor(c, "/s/"+slug+suffix)
	if !ok {
		return nil, store.Entry{}, false
	}
	private(c)
	ctx := c.Request.Context()
	e, err := h.site.st.Entry(ctx, slug)
	if err != nil {
		h.fail(c, err)
		return nil, store.Entry{}, false
	}
	if h.maint == nil {
		h.fail(c, errNotFound)
		return nil, store.Entry{}, false
	}
	yes, err := h.maint.IsMaintainer(ctx, v.ID, e.ID)
	if err != nil {
		h.fail(c, err)
		return nil, store.Entry{}, false
	}
	if !yes {
		h.message(c, http.StatusForbidden, "Maintainers only",
			"Only a maintainer of "+displayName(e)+" can do this. A maintainer is someone who has claimed the entry by proving control of one of its parts.",
			link{Href: "/s/" + e.Slug + "/claim", Text: "Claim this entry"}, link{Href: "/s/" + e.Slug, Text: "Back to " + displayName(e)})
		return nil, store.Entry{}, false
	}
	return v, e, true
}

// operator admits an operator to a console route (ret is where sign-in returns to): sign
// in for the anonymous, 403 for everyone else. The answer is private.
func (h *handlers) operator(c *gin.Context, ret string) (*viewer, bool) {
	v, ok := h.viewerFor(c, ret)
	if !ok {
		return nil, false
	}
	private(c)
	if h.ops == nil {
		h.fail(c, errNotFound)
		return nil, false
	}
	yes, err := h.ops.IsOperator(c.Request.Context(), v.ID)
	if err != nil {
		h.fail(c, err)
		return nil, false
	}
	if !yes {
		h.message(c, http.StatusForbidden, "Operators only", "This page is for Probity's operators.", link{Href: "/", Text: "Back to the directory"})
		return nil, false
	}
	return v, true
}
