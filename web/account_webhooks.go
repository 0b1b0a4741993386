package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

// An account's webhooks: the list with the form to add one, removing one, and a
// webhook's delivery log (the write paths of Webhooks).

// maxWebhookURL is the longest webhook address (the service refuses longer ones too).
const maxWebhookURL = 2048

// webhooksPage is the data of the webhooks page.
type webhooksPage struct {
	V        *viewer
	Webhooks []webhookView
	// URL is the address entered when it was refused, shown back (escaped).
	URL   string
	Error string
}

type webhookView struct {
	ID             int64
	URL            string
	CreatedAt      time.Time
	Disabled       bool
	DisabledReason string
	Failures       int
	// Href is the delivery log; DeleteAction and EnableAction the forms' addresses.
	Href, DeleteAction, EnableAction string
}

func webhookViewOf(w Webhook) webhookView {
	id := strconv.FormatInt(w.ID, 10)
	return webhookView{ID: w.ID, URL: visibleLine(w.URL), CreatedAt: w.CreatedAt, Disabled: !w.DisabledAt.IsZero(),
		DisabledReason: cut(visibleLine(w.DisabledReason), maxFailureText), Failures: w.ConsecutiveFailures,
		Href: "/account/webhooks/" + id, DeleteAction: "/account/webhooks/" + id + "/delete", EnableAction: "/account/webhooks/" + id + "/enable"}
}

// webhooks serves GET /account/webhooks.
func (h *handlers) webhooks(c *gin.Context) {
	v, ok := h.signedIn(c, "/account/webhooks")
	if !ok {
		return
	}
	h.renewSession(c, v)
	h.renderWebhooks(c, http.StatusOK, webhooksPage{V: v})
}

func (h *handlers) renderWebhooks(c *gin.Context, status int, p webhooksPage) {
	ws, err := h.hooks.Webhooks(c.Request.Context(), p.V.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	for _, w := range ws {
		p.Webhooks = append(p.Webhooks, webhookViewOf(w))
	}
	h.render(c, status, "webhooks", p)
}

// addWebhook serves POST /account/webhooks.
func (h *handlers) addWebhook(c *gin.Context) {
	v, ok := h.postSignedIn(c, "/account/webhooks")
	if !ok {
		return
	}
	private(c)
	u := strings.TrimSpace(formValue(c, "url"))
	refuse := func(msg string) {
		h.renderWebhooks(c, http.StatusBadRequest, webhooksPage{V: v, URL: visibleLine(cut(u, maxWebhookURL)), Error: msg})
	}
	switch {
	case u == "":
		refuse("Enter the https address that should receive the deliveries.")
		return
	case len(u) > maxWebhookURL:
		refuse("That address is longer than 2048 bytes.")
		return
	}
	_, err := h.hooks.AddWebhook(c.Request.Context(), v.ID, u)
	var r *Refusal
	if errors.As(err, &r) {
		refuse(r.Reason)
		return
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	h.redirect(c, "/account/webhooks")
}

// webhookID reads the path's webhook id, or answers 404.
func (h *handlers) webhookID(c *gin.Context) (int64, bool) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 || len(c.Param("id")) > 19 {
		h.fail(c, errNotFound)
		return 0, false
	}
	return id, true
}

// changeWebhook serves POST /account/webhooks/{id}/delete (remove it) and
// /account/webhooks/{id}/enable (enable a disabled one again).
func (h *handlers) changeWebhook(remove bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, ok := h.webhookID(c)
		if !ok {
			return
		}
		v, ok := h.postSignedIn(c, "/account/webhooks")
		if !ok {
			return
		}
		var err error
		if remove {
			err = h.hooks.RemoveWebhook(c.Request.Context(), v.ID, id)
		} else {
			err = h.hooks.EnableWebhook(c.Request.Context(), v.ID, id)
		}
		if err != nil {
			h.fail(c, err)
			return
		}
		h.redirect(c, "/account/webhooks")
	}
}

// deliveryView is a line of the delivery log.
type deliveryView struct {
	MessageID     string
	Entry         string
	Change        int64
	CreatedAt     time.Time
	State         string
	Attempts      int
	LastAttemptAt time.Time
	Status        int
	Error         string
}

// webhookLog serves GET /account/webhooks/{id}: a webhook's delivery log, to its
// owner only (another account's is 404, as one that does not exist).
func (h *handlers) webhookLog(c *gin.Context) {
	id, ok := h.webhookID(c)
	if !ok {
		return
	}
	v, ok := h.signedIn(c, "")
	if !ok {
		return
	}
	w, ds, err := h.hooks.Deliveries(c.Request.Context(), v.ID, id)
	if err != nil {
		h.fail(c, err)
		return
	}
	h.renewSession(c, v)
	p := struct {
		V          *viewer
		W          webhookView
		Deliveries []deliveryView
	}{V: v, W: webhookViewOf(w)}
	for i, d := range ds {
		if i == maxDeliveriesShown {
			break
		}
		dv := deliveryView{MessageID: cut(visibleLine(d.MessageID), 100), Change: d.ChangeNumber, CreatedAt: d.CreatedAt,
			State: d.State, Attempts: d.Attempts, LastAttemptAt: d.LastAttemptAt, Status: d.LastStatus,
			Error: cut(visibleLine(d.LastError), maxFailureText)}
		if slugOK(d.EntrySlug) {
			dv.Entry = d.EntrySlug
		}
		p.Deliveries = append(p.Deliveries, dv)
	}
	h.render(c, http.StatusOK, "webhook", p)
}

// maxDeliveriesShown is the delivery log's length (the service keeps as many).
const maxDeliveriesShown = 100
