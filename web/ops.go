package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/probity-dev/probity/disputes"
	"github.com/probity-dev/probity/operators"
	"github.com/probity-dev/probity/store"
)

// The operator console (issue 18, "What an operator does"). Every route starts with
// h.operator (roles.go): sign in first for the anonymous, 403 for everyone but an
// operator; every answer is private (no-store). Every POST passes the write paths'
// defences (the cross-origin check, the write bucket, the form bound, the session's
// csrf field) and carries a reason; package operators does the action and appends
// its audit row.
//
//	GET  /ops                             the overview: the queues' counts and links
//	GET  /ops/disputes                    the open disputes
//	POST /ops/disputes/{id}/decide        uphold, reject, or corrected in suite version X
//	GET  /ops/changes?entry=SLUG          an entry's changes, hidden ones too
//	POST /ops/changes/hide, …/unhide      hide or show again one change
//	GET  /ops/entries/{slug}/delete       the deletion's confirmation page
//	POST /ops/entries/{slug}/delete       delete the entry (a tombstone in the ledger)
//	GET  /ops/claims[?all=1][&before=ID]  claims to review, live ones by default
//	POST /ops/claims/{id}/revoke          lapse a claim with a reason
//	GET  /ops/audit[?before=ID]           the audit log, newest first
//
// The report queue (/ops/reports) is another part's; the overview links to it. Text
// from people and servers (statements, entry names, reasons) is shown as plain text,
// visible and clipped. The console never shows on a public page who the operators are.

// Console is the operators' service (package operators): the actions of the console,
// each recorded in the audit log. Its errors: store.ErrNotFound for a missing entry,
// change or live claim; operators.ErrReason for a missing or malformed reason;
// operators.ErrNotOperator when the role was taken meanwhile.
type Console interface {
	Changes(ctx context.Context, slug string, beforeNumber int64) (store.Entry, []store.ChangeRecord, error)
	HideChange(ctx context.Context, by operators.Actor, slug string, number int64, hidden bool, reason string) error
	DeleteEntry(ctx context.Context, by operators.Actor, slug, reason string) error
	Claims(ctx context.Context, q store.ClaimReviewQuery) ([]store.ClaimReview, error)
	RevokeClaim(ctx context.Context, by operators.Actor, id int64, reason string) (store.Claim, error)
	DecidedDispute(ctx context.Context, by operators.Actor, slug string, disputeID int64, decision, suiteVersion, reason string) error
	Audit(ctx context.Context, beforeID int64, limit int) ([]store.OperatorAction, error)
}

// DisputeDesk is the dispute queue (package disputes): the open disputes, and an
// operator's decision of one, which makes the signed outcome record.
type DisputeDesk interface {
	Queue(ctx context.Context) ([]OpsDispute, error)
	Decide(ctx context.Context, operatorAccountID, disputeID int64, decision, suiteVersion, reason string) error
}

// OpsDispute is an open dispute as the console shows it.
type OpsDispute struct {
	ID                                   int64
	Slug                                 string
	Number                               int
	RoundID                              int64
	CheckID, Status, Statement, Evidence string
	OpenedAt                             time.Time
}

// The decisions of a dispute.
const (
	DecisionUphold    = "uphold"
	DecisionReject    = "reject"
	DecisionCorrected = "corrected"
)

// Bounds of the console.
const (
	// maxOpsList is how many disputes, claims or audit rows a page shows.
	maxOpsList = 100
	// maxSuiteVersion bounds a "corrected in suite version X".
	maxSuiteVersion = 64
	// maxOpsText is where a statement, a detail or a proof shown is clipped.
	maxOpsText = 1000
)

// opsRoutes registers the console.
func (h *handlers) opsRoutes(r *gin.Engine, get func(string, gin.HandlerFunc)) {
	get("/ops", h.opsOverview)
	if h.desk != nil {
		get("/ops/disputes", h.opsDisputes)
		r.POST("/ops/disputes/:id/decide", h.opsDecide)
	}
	get("/ops/changes", h.opsChanges)
	r.POST("/ops/changes/hide", h.opsHide(true))
	r.POST("/ops/changes/unhide", h.opsHide(false))
	get("/ops/entries/:slug/delete", h.opsDeleteConfirm)
	r.POST("/ops/entries/:slug/delete", h.opsDelete)
	get("/ops/claims", h.opsClaims)
	r.POST("/ops/claims/:id/revoke", h.opsRevokeClaim)
	get("/ops/audit", h.opsAudit)
}

// opsFailed answers an action's error: the reason's rule (400), the role taken
// meanwhile (403), or fail's mapping.
func (h *handlers) opsFailed(c *gin.Context, err error, back link) {
	switch {
	case errors.Is(err, operators.ErrReason):
		h.message(c, http.StatusBadRequest, "A reason is needed", err.Error()+".", back)
	case errors.Is(err, operators.ErrNotOperator):
		h.message(c, http.StatusForbidden, "Operators only", "This page is for Probity's operators.", link{Href: "/", Text: "Back to the directory"})
	case errors.As(err, new(*disputes.InputError)):
		h.message(c, http.StatusBadRequest, "Not decided", err.Error(), back)
	case errors.Is(err, disputes.ErrDecided):
		h.message(c, http.StatusConflict, "Decided already", "This dispute has its outcome already.", back)
	case errors.Is(err, disputes.ErrOwnDispute):
		h.message(c, http.StatusForbidden, "Not yours to decide", "You opened this dispute as a maintainer of the entry; another operator decides it.", back)
	default:
		h.fail(c, err)
	}
}

// queryID is a positive id of the query parameter name (0 when absent); ok false,
// answered 400, for a malformed one.
func (h *handlers) queryID(c *gin.Context, name string) (int64, bool) {
	s := c.Query(name)
	if s == "" {
		return 0, true
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 || len(s) > 19 {
		h.problem(c, http.StatusBadRequest, "The "+name+" parameter must be a positive number.")
		return 0, false
	}
	return n, true
}

// pathID is the path's positive :id, or 404.
func (h *handlers) pathID(c *gin.Context) (int64, bool) {
	n, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || n < 1 {
		h.fail(c, errNotFound)
		return 0, false
	}
	return n, true
}

type opsOverviewPage struct {
	V            *viewer
	Disputes     bool
	OpenDisputes int
	LiveClaims   int
	MoreClaims   bool
	Recent       []opsAction
}

// opsOverview serves GET /ops.
func (h *handlers) opsOverview(c *gin.Context) {
	v, ok := h.operator(c, "/ops")
	if !ok {
		return
	}
	ctx := c.Request.Context()
	p := opsOverviewPage{V: v, Disputes: h.desk != nil}
	if h.desk != nil {
		q, err := h.desk.Queue(ctx)
		if err != nil {
			h.fail(c, err)
			return
		}
		p.OpenDisputes = len(q)
	}
	cs, err := h.console.Claims(ctx, store.ClaimReviewQuery{LiveOnly: true, Limit: maxOpsList + 1})
	if err != nil {
		h.fail(c, err)
		return
	}
	p.LiveClaims, p.MoreClaims = min(len(cs), maxOpsList), len(cs) > maxOpsList
	rows, err := h.console.Audit(ctx, 0, 10)
	if err != nil {
		h.fail(c, err)
		return
	}
	p.Recent = opsActions(rows)
	h.render(c, http.StatusOK, "ops", p)
}

// opsDisputeRow is a dispute as the queue shows it.
type opsDisputeRow struct {
	OpsDispute
	Action string
}

type opsDisputesPage struct {
	V        *viewer
	Disputes []opsDisputeRow
}

// opsDisputes serves GET /ops/disputes.
func (h *handlers) opsDisputes(c *gin.Context) {
	v, ok := h.operator(c, "/ops/disputes")
	if !ok {
		return
	}
	q, err := h.desk.Queue(c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	p := opsDisputesPage{V: v}
	for i, d := range q {
		if i == maxOpsList {
			break
		}
		d.Statement = cut(visible(d.Statement), maxOpsText)
		d.Evidence = cut(visible(d.Evidence), maxOpsText)
		d.CheckID, d.Status = cut(visibleLine(d.CheckID), 200), cut(visibleLine(d.Status), 64)
		p.Disputes = append(p.Disputes, opsDisputeRow{OpsDispute: d, Action: "/ops/disputes/" + strconv.FormatInt(d.ID, 10) + "/decide"})
	}
	h.render(c, http.StatusOK, "ops_disputes", p)
}

// suiteVersionOK reports whether s reads as a suite version: 1 to maxSuiteVersion
// letters, digits, dots, hyphens and pluses.
func suiteVersionOK(s string) bool {
	if s == "" || len(s) > maxSuiteVersion {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+') {
			return false
		}
	}
	return true
}

// opsDecide serves POST /ops/disputes/{id}/decide: the decision goes to the dispute
// desk, which signs the outcome, and is recorded in the audit log right after.
func (h *handlers) opsDecide(c *gin.Context) {
	id, ok := h.pathID(c)
	if !ok {
		return
	}
	v, ok := h.operator(c, "/ops/disputes")
	if !ok {
		return
	}
	back := link{Href: "/ops/disputes", Text: "Back to the disputes"}
	decision, version := formValue(c, "decision"), strings.TrimSpace(formValue(c, "suite_version"))
	switch decision {
	case DecisionUphold, DecisionReject:
		version = ""
	case DecisionCorrected:
		if !suiteVersionOK(version) {
			h.message(c, http.StatusBadRequest, "Which suite version?",
				"\"Corrected\" needs the suite version that corrects the check: letters, digits, dots, hyphens and pluses, at most 64.", back)
			return
		}
	default:
		h.message(c, http.StatusBadRequest, "Choose a decision", "Uphold, reject, or corrected in a suite version.", back)
		return
	}
	reason, err := operators.CheckReason(formValue(c, "reason"))
	if err != nil {
		h.opsFailed(c, err, back)
		return
	}
	ctx := c.Request.Context()
	q, err := h.desk.Queue(ctx)
	if err != nil {
		h.fail(c, err)
		return
	}
	slug := ""
	for _, d := range q {
		if d.ID == id {
			slug = d.Slug
		}
	}
	if slug == "" {
		h.message(c, http.StatusNotFound, "No such open dispute", "This dispute is not open: it was decided already, or never existed.", back)
		return
	}
	if err := h.desk.Decide(ctx, v.ID, id, decision, version, reason); err != nil {
		h.opsFailed(c, err, back)
		return
	}
	if err := h.console.DecidedDispute(ctx, operators.By(v.ID), slug, id, decision, version, reason); err != nil {
		h.opsFailed(c, err, back)
		return
	}
	h.redirect(c, "/ops/disputes")
}

// opsChange is a change as the console lists it, with its forms.
type opsChange struct {
	Number       int64
	RecordedAt   time.Time
	Kind         string
	Summary      string
	Hidden       bool
	HiddenReason string
}

type opsChangesPage struct {
	V       *viewer
	Slug    string
	Name    string
	Changes []opsChange
	// Older pages on: the changes below the last one shown.
	Older string
}

// opsChanges serves GET /ops/changes?entry=SLUG[&before=N]: the entry's changes with
// hide and unhide forms; without an entry, the form that asks for one.
func (h *handlers) opsChanges(c *gin.Context) {
	v, ok := h.operator(c, "/ops/changes")
	if !ok {
		return
	}
	p := opsChangesPage{V: v}
	slug := c.Query("entry")
	if slug == "" {
		h.render(c, http.StatusOK, "ops_changes", p)
		return
	}
	if !slugOK(slug) {
		h.fail(c, errNotFound)
		return
	}
	before, ok := h.queryID(c, "before")
	if !ok {
		return
	}
	e, cs, err := h.console.Changes(c.Request.Context(), slug, before)
	if err != nil {
		h.fail(c, err)
		return
	}
	p.Slug, p.Name = e.Slug, displayName(e)
	for _, ch := range cs {
		p.Changes = append(p.Changes, opsChange{Number: ch.Number, RecordedAt: ch.RecordedAt, Kind: visibleLine(ch.Kind),
			Summary: cut(visibleLine(ch.Summary), maxOpsText), Hidden: ch.Hidden, HiddenReason: cut(visibleLine(ch.HiddenReason), maxOpsText)})
	}
	if n := len(cs); n == operators.MaxChangesShown && cs[n-1].Number > 1 {
		p.Older = "/ops/changes?entry=" + url.QueryEscape(e.Slug) + "&before=" + strconv.FormatInt(cs[n-1].Number, 10)
	}
	h.render(c, http.StatusOK, "ops_changes", p)
}

// opsHide serves POST /ops/changes/hide and /ops/changes/unhide (fields entry,
// number, reason).
func (h *handlers) opsHide(hidden bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		v, ok := h.operator(c, "/ops/changes")
		if !ok {
			return
		}
		slug := formValue(c, "entry")
		number, err := strconv.ParseInt(formValue(c, "number"), 10, 64)
		if !slugOK(slug) || err != nil || number < 1 {
			h.message(c, http.StatusBadRequest, "Which change?", "The form names no entry or change.", link{Href: "/ops/changes", Text: "Back to the changes"})
			return
		}
		back := "/ops/changes?entry=" + url.QueryEscape(slug)
		if err := h.console.HideChange(c.Request.Context(), operators.By(v.ID), slug, number, hidden, formValue(c, "reason")); err != nil {
			h.opsFailed(c, err, link{Href: back, Text: "Back to the changes"})
			return
		}
		h.redirect(c, back)
	}
}

type opsDeletePage struct {
	V    *viewer
	Slug string
	Name string
}

// opsDeleteConfirm serves GET /ops/entries/{slug}/delete: what deleting does, and the
// form.
func (h *handlers) opsDeleteConfirm(c *gin.Context) {
	slug, ok := h.entrySlug(c)
	if !ok {
		return
	}
	v, ok := h.operator(c, "/ops/entries/"+slug+"/delete")
	if !ok {
		return
	}
	e, err := h.site.st.Entry(c.Request.Context(), slug)
	if err != nil {
		h.fail(c, err)
		return
	}
	h.render(c, http.StatusOK, "ops_delete", opsDeletePage{V: v, Slug: e.Slug, Name: displayName(e)})
}

// opsDelete serves POST /ops/entries/{slug}/delete (fields confirm, the slug typed
// again, and reason).
func (h *handlers) opsDelete(c *gin.Context) {
	slug, ok := h.entrySlug(c)
	if !ok {
		return
	}
	v, ok := h.operator(c, "/ops/entries/"+slug+"/delete")
	if !ok {
		return
	}
	back := link{Href: "/ops/entries/" + slug + "/delete", Text: "Back"}
	if formValue(c, "confirm") != slug {
		h.message(c, http.StatusBadRequest, "Not deleted", "Type the entry's slug to confirm the deletion.", back)
		return
	}
	if err := h.console.DeleteEntry(c.Request.Context(), operators.By(v.ID), slug, formValue(c, "reason")); err != nil {
		h.opsFailed(c, err, back)
		return
	}
	h.message(c, http.StatusOK, "Deleted", "The entry "+slug+" and its whole history are deleted; a tombstone in the ledger records the deletion and the reason.",
		link{Href: "/ops", Text: "Back to the console"})
}

// opsClaim is a claim as the review lists it.
type opsClaim struct {
	ID            int64
	Slug, Name    string
	AccountID     int64
	Method        string
	Target        string
	Proof         string
	VerifiedAt    time.Time
	LastCheckedAt time.Time
	LapsedAt      time.Time
	LapseReason   string
	Live          bool
	Action        string
}

type opsClaimsPage struct {
	V      *viewer
	All    bool
	Claims []opsClaim
	Older  string
}

// opsClaims serves GET /ops/claims[?all=1][&before=ID].
func (h *handlers) opsClaims(c *gin.Context) {
	v, ok := h.operator(c, "/ops/claims")
	if !ok {
		return
	}
	before, ok := h.queryID(c, "before")
	if !ok {
		return
	}
	all := c.Query("all") == "1"
	cs, err := h.console.Claims(c.Request.Context(), store.ClaimReviewQuery{BeforeID: before, LiveOnly: !all, Limit: maxOpsList + 1})
	if err != nil {
		h.fail(c, err)
		return
	}
	p := opsClaimsPage{V: v, All: all}
	for i, cl := range cs {
		if i == maxOpsList {
			q := url.Values{"before": {strconv.FormatInt(cs[i-1].ID, 10)}}
			if all {
				q.Set("all", "1")
			}
			p.Older = "/ops/claims?" + q.Encode()
			break
		}
		p.Claims = append(p.Claims, opsClaim{ID: cl.ID, Slug: cl.EntrySlug, Name: cut(visibleLine(cl.EntryName), 200), AccountID: cl.AccountID,
			Method: cl.Method, Target: cut(visibleLine(cl.Target), 300), Proof: cut(visibleLine(cl.Proof), maxOpsText),
			VerifiedAt: cl.VerifiedAt, LastCheckedAt: cl.LastCheckedAt, LapsedAt: cl.LapsedAt, LapseReason: cut(visibleLine(cl.LapseReason), maxOpsText),
			Live: cl.Live(), Action: "/ops/claims/" + strconv.FormatInt(cl.ID, 10) + "/revoke"})
	}
	h.render(c, http.StatusOK, "ops_claims", p)
}

// opsRevokeClaim serves POST /ops/claims/{id}/revoke (field reason).
func (h *handlers) opsRevokeClaim(c *gin.Context) {
	id, ok := h.pathID(c)
	if !ok {
		return
	}
	v, ok := h.operator(c, "/ops/claims")
	if !ok {
		return
	}
	if _, err := h.console.RevokeClaim(c.Request.Context(), operators.By(v.ID), id, formValue(c, "reason")); err != nil {
		h.opsFailed(c, err, link{Href: "/ops/claims", Text: "Back to the claims"})
		return
	}
	h.redirect(c, "/ops/claims")
}

// opsAction is an audit row as the console shows it.
type opsAction struct {
	ID        int64
	At        time.Time
	Actor     string
	ActorID   int64
	Action    string
	EntrySlug string
	Target    string
	Detail    string
}

func opsActions(rows []store.OperatorAction) []opsAction {
	out := make([]opsAction, 0, len(rows))
	for _, r := range rows {
		out = append(out, opsAction{ID: r.ID, At: r.At, Actor: visibleLine(r.Actor), ActorID: r.ActorID, Action: visibleLine(r.Action),
			EntrySlug: visibleLine(r.EntrySlug), Target: cut(visibleLine(r.Target), 300), Detail: cut(visibleLine(r.Detail), maxOpsText)})
	}
	return out
}

type opsAuditPage struct {
	V       *viewer
	Actions []opsAction
	Older   string
}

// opsAudit serves GET /ops/audit[?before=ID].
func (h *handlers) opsAudit(c *gin.Context) {
	v, ok := h.operator(c, "/ops/audit")
	if !ok {
		return
	}
	before, ok := h.queryID(c, "before")
	if !ok {
		return
	}
	rows, err := h.console.Audit(c.Request.Context(), before, maxOpsList+1)
	if err != nil {
		h.fail(c, err)
		return
	}
	p := opsAuditPage{V: v}
	if len(rows) > maxOpsList {
		rows = rows[:maxOpsList]
		p.Older = "/ops/audit?before=" + strconv.FormatInt(rows[maxOpsList-1].ID, 10)
	}
	p.Actions = opsActions(rows)
	h.render(c, http.StatusOK, "ops_audit", p)
}
