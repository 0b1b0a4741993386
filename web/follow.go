package web

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
)

// Following entries: the Follow button of every entry page, the Followed page with its
// e-mail setting, and the unsubscribe pages of the e-mails (the write paths of
// Follows).

// followButton is the Follow or Unfollow button on top of an entry's pages, or the
// link to sign in to follow.
type followButton struct {
	SignedIn, Following bool
	// CSRF is the form's csrf field; Return the page to come back to.
	CSRF, Return string
}

// setFollow puts the Follow button into head for the request's viewer. The page then
// depends on the cookie (Vary), and a signed-in person's is private.
func (h *handlers) setFollow(c *gin.Context, head *entryHead) error {
	if h.follows == nil || head == nil {
		return nil
	}
	c.Header("Vary", "Cookie")
	b := &followButton{Return: c.Request.URL.Path}
	v, err := h.viewer(c)
	if err != nil {
		return err
	}
	if v != nil {
		if b.Following, err = h.follows.Following(c.Request.Context(), v.ID, head.entryID); err != nil {
			return err
		}
		b.SignedIn, b.CSRF = true, v.CSRF
		private(c)
	}
	head.Follow = b
	return nil
}

// followLimit answers a follow refused with ErrFollowLimit (the Follow button's, and
// an unsubscribe page's "follow again"): name, as the page shows it, was not added.
func (h *handlers) followLimit(c *gin.Context, name string, links ...link) {
	private(c)
	h.message(c, http.StatusConflict, "Follow limit reached",
		"You follow as many entries as an account may, so "+name+" was not added. Unfollow one on your Followed page first.",
		append([]link{{Href: "/followed", Text: "Your Followed page"}}, links...)...)
}

// follow serves POST /s/{slug}/follow and POST /s/{slug}/unfollow.
func (h *handlers) follow(on bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		slug := c.Param("slug")
		if !slugOK(slug) {
			h.fail(c, errNotFound)
			return
		}
		v, ok := h.postSignedIn(c, "/s/"+slug)
		if !ok {
			return
		}
		// The entry is read first: a missing one is this site's 404, and the limit's
		// message names it.
		ctx := c.Request.Context()
		e, err := h.site.st.Entry(ctx, slug)
		if err != nil {
			h.fail(c, err)
			return
		}
		if on {
			err = h.follows.Follow(ctx, v.ID, slug)
		} else {
			err = h.follows.Unfollow(ctx, v.ID, slug)
		}
		if errors.Is(err, ErrFollowLimit) {
			h.followLimit(c, displayName(e), link{Href: "/s/" + slug, Text: "Back to " + displayName(e)})
			return
		}
		if err != nil {
			h.fail(c, err)
			return
		}
		ret := "/s/" + slug
		if r := formValue(c, "return"); r != "" {
			ret = h.acc.SafeReturn(r)
		}
		h.redirect(c, ret)
	}
}

// mailModes are the e-mail settings the Followed page offers, in its order.
var mailModes = []struct{ Value, Label string }{
	{MailHourly, "As soon as something changes, at most one e-mail an hour (default)"},
	{MailDaily, "A daily summary"},
	{MailOff, "No e-mails"},
}

// Bounds of the Followed page's text, which is the store's (names and summaries) and
// the mail servers' (failures).
const (
	maxFollowedChanges = 5
	maxFailureText     = 300
	maxFailuresShown   = 20
)

// followedView is the Followed page.
type followedView struct {
	V        *viewer
	Mode     string
	Modes    []modeOption
	Limit    int
	HasEmail bool
	Entries  []followedEntryView
	Gone     []GoneEntry
	Failures []MailFailure
}

type modeOption struct {
	Value, Label string
	Current      bool
}

type followedEntryView struct {
	Slug, Name string
	Since      time.Time
	Changes    []followedChangeView
}

type followedChangeView struct {
	Number                 int64
	Anchor, Label, Summary string
	At                     time.Time
	Baseline               bool
}

// followedViewOf makes the service's Followed page visible and bounded.
func followedViewOf(v *viewer, f Followed) followedView {
	fv := followedView{V: v, Mode: f.Mode, Limit: f.Limit, HasEmail: f.HasEmail}
	for _, m := range mailModes {
		fv.Modes = append(fv.Modes, modeOption{Value: m.Value, Label: m.Label, Current: m.Value == f.Mode})
	}
	for _, e := range f.Entries {
		ev := followedEntryView{Slug: e.Slug, Name: cut(visibleLine(e.Name), maxListingLine), Since: e.Since}
		for i, ch := range e.Changes {
			if i == maxFollowedChanges {
				break
			}
			label := "Change " + strconv.FormatInt(ch.Number, 10)
			if ch.Baseline {
				label = "First read"
			}
			ev.Changes = append(ev.Changes, followedChangeView{Number: ch.Number, Anchor: fmt.Sprintf("ch-%d", ch.Number),
				Label: label, Summary: cut(visibleLine(ch.Summary), maxListingLine), At: ch.RecordedAt, Baseline: ch.Baseline})
		}
		fv.Entries = append(fv.Entries, ev)
	}
	for _, g := range f.Gone {
		fv.Gone = append(fv.Gone, GoneEntry{Slug: g.Slug, Name: cut(visibleLine(g.Name), maxListingLine), DeletedAt: g.DeletedAt})
	}
	for i, m := range f.Failures {
		if i == maxFailuresShown {
			break
		}
		m.Error = cut(visibleLine(m.Error), maxFailureText)
		fv.Failures = append(fv.Failures, m)
	}
	return fv
}

// followedJSON is the Followed page as JSON.
type followedJSON struct {
	Mode     string              `json:"mode"`
	Limit    int                 `json:"limit"`
	HasEmail bool                `json:"hasEmail"`
	Entries  []followedEntryJSON `json:"entries"`
	Gone     []goneJSON          `json:"gone"`
	Failures []failureJSON       `json:"failures"`
}

type followedEntryJSON struct {
	Slug    string               `json:"slug"`
	Name    string               `json:"name"`
	Since   time.Time            `json:"since"`
	URL     string               `json:"url"`
	Changes []followedChangeJSON `json:"changes"`
}

type followedChangeJSON struct {
	Number   int64     `json:"number"`
	At       time.Time `json:"at"`
	Summary  string    `json:"summary"`
	Baseline bool      `json:"baseline,omitempty"`
	URL      string    `json:"url"`
}

type goneJSON struct {
	Slug      string    `json:"slug"`
	Name      string    `json:"name"`
	DeletedAt time.Time `json:"deletedAt"`
}

type failureJSON struct {
	PlannedAt time.Time `json:"plannedAt"`
	Attempts  int       `json:"attempts"`
	Error     string    `json:"error"`
}

func (h *handlers) followedJSONOf(fv followedView) followedJSON {
	j := followedJSON{Mode: fv.Mode, Limit: fv.Limit, HasEmail: fv.HasEmail, Entries: []followedEntryJSON{}, Gone: []goneJSON{}, Failures: []failureJSON{}}
	for _, e := range fv.Entries {
		page := h.site.base + "/s/" + e.Slug
		ej := followedEntryJSON{Slug: e.Slug, Name: e.Name, Since: e.Since, URL: page, Changes: []followedChangeJSON{}}
		for _, ch := range e.Changes {
			ej.Changes = append(ej.Changes, followedChangeJSON{Number: ch.Number, At: ch.At, Summary: ch.Summary, Baseline: ch.Baseline, URL: page + "/history#" + ch.Anchor})
		}
		j.Entries = append(j.Entries, ej)
	}
	for _, g := range fv.Gone {
		j.Gone = append(j.Gone, goneJSON{Slug: g.Slug, Name: g.Name, DeletedAt: g.DeletedAt})
	}
	for _, f := range fv.Failures {
		j.Failures = append(j.Failures, failureJSON(f))
	}
	return j
}

// followed serves GET /followed and /followed.json.
func (h *handlers) followed(asJSON bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		if asJSON {
			v, err := h.viewer(c)
			if err != nil {
				h.fail(c, err)
				return
			}
			if v == nil {
				private(c)
				h.problem(c, http.StatusUnauthorized, "Sign in first: this is the list of the entries you follow.")
				return
			}
		}
		v, ok := h.signedIn(c, "/followed")
		if !ok {
			return
		}
		f, err := h.follows.Followed(c.Request.Context(), v.ID)
		if err != nil {
			h.fail(c, err)
			return
		}
		h.renewSession(c, v)
		fv := followedViewOf(v, f)
		if asJSON {
			b, err := marshalJSON(h.followedJSONOf(fv))
			if err != nil {
				h.fail(c, err)
				return
			}
			c.Data(http.StatusOK, "application/json; charset=utf-8", b)
			return
		}
		h.render(c, http.StatusOK, "followed", fv)
	}
}

// setMode serves POST /followed/mode: the e-mail setting.
func (h *handlers) setMode(c *gin.Context) {
	v, ok := h.postSignedIn(c, "/followed")
	if !ok {
		return
	}
	mode := formValue(c, "mode")
	switch mode {
	case MailHourly, MailDaily, MailOff:
	default:
		h.problem(c, http.StatusBadRequest, "The e-mail setting is not one of the page's choices.")
		return
	}
	if err := h.follows.SetMode(c.Request.Context(), v.ID, mode); err != nil {
		h.fail(c, err)
		return
	}
	h.redirect(c, "/followed")
}

// unsubscribeAction is a button of the unsubscribe page, in the page's words.
type unsubscribeAction struct {
	UnsubscribeAction
	// Button is the button's text; Done says it was done.
	Button, Done string
}

func unsubscribeActionOf(a UnsubscribeAction) unsubscribeAction {
	name := cut(visibleLine(a.EntryName), maxListingLine)
	u := unsubscribeAction{UnsubscribeAction: a}
	switch a.Kind {
	case ActionUnfollow:
		u.Button, u.Done = "Unfollow "+name, "You no longer follow "+name+"."
		if a.Unchanged {
			u.Done = "You did not follow " + name + "; nothing changed."
		}
	case ActionMailOff:
		u.Button, u.Done = "Turn off change e-mails", "Change e-mails are off. You still follow your entries: their changes are on your Followed page."
		if a.Unchanged {
			u.Done = "Change e-mails were already off. You still follow your entries: their changes are on your Followed page."
		}
	case ActionFollow:
		u.Button, u.Done = "Follow "+name+" again", "You follow "+name+" again."
		if a.Unchanged {
			u.Done = "You follow " + name + " already; nothing changed."
		}
	case ActionMailOnHourly:
		u.Button, u.Done = "Turn change e-mails back on (at most one an hour)", "Change e-mails are on again: at most one an hour."
	case ActionMailOnDaily:
		u.Button, u.Done = "Turn change e-mails back on (a daily summary)", "Change e-mails are on again: a daily summary."
	default:
		u.Button, u.Done = cut(visibleLine(a.Label), maxListingLine), "Done."
	}
	return u
}

// unsubscribePage is the unsubscribe page: the offered buttons (GET), or what was
// done and its Undo (POST).
type unsubscribePage struct {
	Offer []unsubscribeAction
	Done  *unsubscribeAction
	Undo  *unsubscribeAction
}

// unsubscribeToken reads the path's token, or answers 400.
func (h *handlers) unsubscribeToken(c *gin.Context) (string, bool) {
	private(c)
	t := c.Param("token")
	if !tokenOK(t) {
		h.badUnsubscribe(c)
		return "", false
	}
	return t, true
}

// unsubscribeFailed answers the error of an unsubscribe page's GET or POST:
// ErrBadToken's page, ErrEntryGone's (the link's entry was deleted since the e-mail,
// 410), ErrFollowLimit's (an undo of unfollow at the limit); any other is h.fail's.
func (h *handlers) unsubscribeFailed(c *gin.Context, err error) {
	switch {
	case errors.Is(err, ErrBadToken):
		h.badUnsubscribe(c)
	case errors.Is(err, ErrEntryGone):
		h.message(c, http.StatusGone, "Entry gone",
			"The entry of this link has been deleted from the directory since the e-mail, so there is nothing to follow or unfollow. Sign in to change your e-mails or the entries you follow on your Followed page.",
			link{Href: "/signin?return=%2Ffollowed", Text: "Sign in"})
	case errors.Is(err, ErrFollowLimit):
		h.followLimit(c, "the entry")
	default:
		h.fail(c, err)
	}
}

func (h *handlers) badUnsubscribe(c *gin.Context) {
	h.message(c, http.StatusBadRequest, "Link not valid",
		"This unsubscribe link is not valid, or it is older than 60 days. Sign in to change your e-mails or the entries you follow on your Followed page.",
		link{Href: "/signin?return=%2Ffollowed", Text: "Sign in"})
}

// unsubscribeOffer serves GET /unsubscribe/{token} (and GET of its one-click
// address, which some mail apps open): the buttons. A GET changes nothing, so a mail
// filter that opens every link unsubscribes no one.
func (h *handlers) unsubscribeOffer(c *gin.Context) {
	t, ok := h.unsubscribeToken(c)
	if !ok {
		return
	}
	acts, err := h.follows.UnsubscribePage(c.Request.Context(), t)
	if err != nil {
		h.unsubscribeFailed(c, err)
		return
	}
	p := unsubscribePage{}
	for _, a := range acts {
		if tokenOK(a.Token) {
			p.Offer = append(p.Offer, unsubscribeActionOf(a))
		}
	}
	h.render(c, http.StatusOK, "unsubscribe", p)
}

// unsubscribe serves POST /unsubscribe/{token}: it does the token's action and offers
// its undo. A one-click post (List-Unsubscribe=One-Click) to this address, from a
// mail app that names it in List-Unsubscribe, is a one-click unsubscribe.
func (h *handlers) unsubscribe(c *gin.Context) {
	t, ok := h.unsubscribeToken(c)
	if !ok || !h.oneClickForm(c) {
		return
	}
	if c.Request.PostForm.Get("List-Unsubscribe") == "One-Click" {
		h.doOneClick(c, t)
		return
	}
	done, undo, err := h.follows.Unsubscribe(c.Request.Context(), t)
	if err != nil {
		h.unsubscribeFailed(c, err)
		return
	}
	d := unsubscribeActionOf(done)
	p := unsubscribePage{Done: &d}
	if tokenOK(undo.Token) {
		u := unsubscribeActionOf(undo)
		p.Undo = &u
	}
	h.render(c, http.StatusOK, "unsubscribe", p)
}

// oneClick serves POST /unsubscribe/{token}/one-click, RFC 8058's one-click
// unsubscribe that a mail app posts (List-Unsubscribe-Post:
// List-Unsubscribe=One-Click): change e-mails go off and the account keeps
// following. It is the one route that takes cross-origin posts: a mail provider
// sends it from its servers or its web app, and the signed token is what
// authenticates it.
func (h *handlers) oneClick(c *gin.Context) {
	t, ok := h.unsubscribeToken(c)
	if !ok || !h.oneClickForm(c) {
		return
	}
	if c.Request.PostForm.Get("List-Unsubscribe") != "One-Click" {
		h.problem(c, http.StatusBadRequest, "This address takes a one-click unsubscribe (RFC 8058: a POST of List-Unsubscribe=One-Click). To unsubscribe yourself, open the link in the e-mail.")
		return
	}
	h.doOneClick(c, t)
}

// oneClickForm parses the form of an unsubscribe POST, url-encoded or multipart (RFC
// 8058 allows both), bounded by maxPostBody; on failure it has answered.
func (h *handlers) oneClickForm(c *gin.Context) bool {
	var err error
	if ct, _, _ := mime.ParseMediaType(c.Request.Header.Get("Content-Type")); ct == "multipart/form-data" {
		err = c.Request.ParseMultipartForm(maxPostBody)
		if c.Request.MultipartForm != nil {
			_ = c.Request.MultipartForm.RemoveAll()
		}
	} else {
		err = c.Request.ParseForm()
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		h.problem(c, http.StatusRequestEntityTooLarge, fmt.Sprintf("The form is larger than %d KiB.", maxPostBody>>10))
		return false
	case err != nil:
		h.problem(c, http.StatusBadRequest, "The form could not be read.")
		return false
	}
	return true
}

func (h *handlers) doOneClick(c *gin.Context, t string) {
	if err := h.follows.OneClick(c.Request.Context(), t); errors.Is(err, ErrBadToken) {
		h.badUnsubscribe(c)
		return
	} else if err != nil {
		h.fail(c, err)
		return
	}
	done := unsubscribeActionOf(UnsubscribeAction{Kind: ActionMailOff})
	h.render(c, http.StatusOK, "unsubscribe", unsubscribePage{Done: &done})
}
