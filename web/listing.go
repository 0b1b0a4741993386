package web

import (
	"context"
	"errors"
	"fmt"
	"github.com/probity-dev/probity/listing"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/probity-dev/probity/store"
)

// A maintainer's listing and "Re-check now" (issue 18; package listing owns the rules):
//
//	GET  /s/{slug}/edit      the maintainer's listing form with the current values
//	POST /s/{slug}/edit      save it: one operator edit in the history per changed field
//	POST /s/{slug}/recheck   a round at once, at most once per entry per interval
//
// Only a maintainer of the entry passes (roles.go, maintainerOf); every POST passes the
// write paths' defences (the cross-origin check, the session's csrf field, the write
// rate limit, the body bound: maxListingBody for the edit form). The entry page, its
// JSON and its Markdown show the maintainer's listing next to the registry's, as the
// server's operator's text: escaped, never HTML; links only https, rel="nofollow ugc
// noopener".

// Listings is the maintainers' listing service (package listing). Edit's errors for
// what a person typed are *store.ListingFieldError; Recheck's refusal within the
// interval is a *store.RecheckRefused.
type Listings interface {
	MaintainerListing(ctx context.Context, entryID int64) (store.MaintainerListing, error)
	Edit(ctx context.Context, entryID int64, want store.MaintainerListing) ([]string, error)
	Recheck(ctx context.Context, entryID int64) error
}

const (
	// listingEditRoute is the edit form's route, whose POST body may be maxListingBody.
	listingEditRoute = "/s/:slug/edit"
	// maxListingBody bounds the edit form's body: its texts at their longest in
	// characters of four bytes, percent-encoded, and five links, fit.
	maxListingBody = 128 << 10
)

// listingEditPage is the edit form: the values shown (the stored ones, or the ones
// typed when they were refused, with Error and the field it is about).
type listingEditPage struct {
	V                        *viewer
	Slug, Name               string
	Description, SetupNotes  string
	Links                    []store.ListingLink // always store.MaxListingLinks rows
	Error, ErrorField        string
	MaxDescription, MaxNotes int
	Saved                    bool
}

func (h *handlers) listingPage(v *viewer, e store.Entry, l store.MaintainerListing) listingEditPage {
	p := listingEditPage{V: v, Slug: e.Slug, Name: displayName(e), Description: l.Description, SetupNotes: l.SetupNotes,
		MaxDescription: store.MaxListingDescription, MaxNotes: store.MaxListingSetupNotes}
	p.Links = append(p.Links, l.Links...)
	for len(p.Links) < store.MaxListingLinks {
		p.Links = append(p.Links, store.ListingLink{})
	}
	return p
}

// listingEdit serves GET /s/{slug}/edit.
func (h *handlers) listingEdit(c *gin.Context) {
	v, e, ok := h.maintainerOf(c, "/edit")
	if !ok {
		return
	}
	l, err := h.listings.MaintainerListing(c.Request.Context(), e.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	h.render(c, http.StatusOK, "listing_edit", h.listingPage(v, e, l))
}

// listingSave serves POST /s/{slug}/edit.
func (h *handlers) listingSave(c *gin.Context) {
	v, e, ok := h.maintainerOf(c, "/edit")
	if !ok {
		return
	}
	want, fieldErr := listingForm(c)
	p := h.listingPage(v, e, want)
	if fieldErr != nil {
		p.Error, p.ErrorField = fieldErr.Message, fieldErr.Field
		h.render(c, http.StatusBadRequest, "listing_edit", p)
		return
	}
	fields, err := h.listings.Edit(c.Request.Context(), e.ID, want)
	var fe *store.ListingFieldError
	switch {
	case errors.As(err, &fe):
		p.Error, p.ErrorField = capitalize(fe.Message)+".", fe.Field
		h.render(c, http.StatusBadRequest, "listing_edit", p)
		return
	case errors.As(err, new(*listing.TooManyEdits)):
		var tm *listing.TooManyEdits
		errors.As(err, &tm)
		c.Header("Retry-After", strconv.Itoa(int((tm.RetryAfter+time.Second-1)/time.Second)))
		p.Error = capitalize(err.Error()) + ". What you typed is kept below."
		h.render(c, http.StatusTooManyRequests, "listing_edit", p)
		return
	case errors.Is(err, store.ErrConflict):
		p.Error = "Another maintainer saved this listing at the same moment. Check the values and save again."
		h.render(c, http.StatusConflict, "listing_edit", p)
		return
	case err != nil:
		h.fail(c, err)
		return
	}
	msg := "Nothing changed: the listing was already as sent."
	if len(fields) > 0 {
		msg = "Saved. The entry's history shows the edit as a change by the server's operator, with the text before and after (the setup notes: only that they changed), never who made it, and followers are told."
	}
	h.message(c, http.StatusOK, "Listing saved", msg,
		link{Href: "/s/" + e.Slug, Text: "Back to " + displayName(e)}, link{Href: "/s/" + e.Slug + "/history", Text: "The history"})
}

// listingForm reads the edit form, bounding every field before it is kept; a field
// far over its bound, or a link with only a label or only an address, is refused
// here (the rest by store.CheckMaintainerListing) with the typed values kept.
func listingForm(c *gin.Context) (store.MaintainerListing, *store.ListingFieldError) {
	var l store.MaintainerListing
	var fe *store.ListingFieldError
	field := func(name, what string, chars int) string {
		s := formValue(c, name)
		if len(s) > 4*chars+chars { // a character is at most 4 bytes; CRLF line ends add one
			if fe == nil {
				fe = &store.ListingFieldError{Field: name, Message: fmt.Sprintf("%s longer than %d characters.", what, chars)}
			}
			return cut(s, 4*chars)
		}
		return s
	}
	l.Description = field("description", "The description is", store.MaxListingDescription)
	l.SetupNotes = field("setup_notes", "The setup notes are", store.MaxListingSetupNotes)
	for i := 1; i <= store.MaxListingLinks; i++ {
		n := strconv.Itoa(i)
		k := store.ListingLink{Label: field("link_label_"+n, "Link "+n+"'s label is", store.MaxListingLinkLabel),
			URL: field("link_url_"+n, "Link "+n+"'s address is", store.MaxListingLinkURL/4)}
		switch {
		case k.Label == "" && k.URL == "":
			continue
		case (k.Label == "" || k.URL == "") && fe == nil:
			fe = &store.ListingFieldError{Field: "links", Message: "Link " + n + " needs both a label and an https address."}
		}
		l.Links = append(l.Links, k)
	}
	return l, fe
}

// recheck serves POST /s/{slug}/recheck: a round at once, or 429 with Retry-After and
// when the next is allowed.
func (h *handlers) recheck(c *gin.Context) {
	_, e, ok := h.maintainerOf(c, "/edit")
	if !ok {
		return
	}
	err := h.listings.Recheck(c.Request.Context(), e.ID)
	var refused *store.RecheckRefused
	switch {
	case errors.As(err, &refused):
		wait := max(refused.Next.Sub(h.site.now()), time.Second)
		c.Header("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
		h.message(c, http.StatusTooManyRequests, "Re-checked recently",
			"This entry was re-checked a short while ago. The next re-check can be asked for at "+utc(refused.Next)+".",
			link{Href: "/s/" + e.Slug, Text: "Back to " + displayName(e)})
		return
	case err != nil:
		h.fail(c, err)
		return
	}
	h.message(c, http.StatusAccepted, "Re-check asked for",
		"Probity reads "+displayName(e)+" again now, politely as always (one request at a time per host). The result is on the entry's page within a minute or two.",
		link{Href: "/s/" + e.Slug, Text: "Back to " + displayName(e)})
}

// capitalize upper-cases the first letter of an ASCII message.
func capitalize(s string) string {
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		return string(s[0]-'a'+'A') + s[1:]
	}
	return s
}

// operatorListingView is a maintainer's listing as the pages show it: the texts with
// hidden characters shown as escapes (visible), only the links whose address is an
// https URL.
type operatorListingView struct {
	Description, SetupNotes string
	Links                   []operatorLinkView
}

type operatorLinkView struct {
	Label, URL, Host string
}

// operatorListingOf is the view of l, nil when it says nothing.
func operatorListingOf(l store.MaintainerListing) *operatorListingView {
	v := &operatorListingView{Description: visible(l.Description), SetupNotes: visible(l.SetupNotes)}
	for _, k := range l.Links {
		u, err := url.Parse(k.URL)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || len(v.Links) == store.MaxListingLinks {
			continue
		}
		v.Links = append(v.Links, operatorLinkView{Label: visibleLine(k.Label), URL: u.String(), Host: visibleLine(u.Hostname())})
	}
	if v.Description == "" && v.SetupNotes == "" && len(v.Links) == 0 {
		return nil
	}
	return v
}
