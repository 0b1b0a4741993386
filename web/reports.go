package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/probity-dev/probity/reports"
	"github.com/probity-dev/probity/store"
)

// Reports of harmful Verified servers (issue 18, seed 004: answered within 72 hours).
// Anyone may report an entry that is Verified now; operators answer in the console.
//
//	GET  /s/{slug}/report             the report form (anyone; only for a Verified entry)
//	POST /s/{slug}/report             send a report: thanks, with the text shown back
//	GET  /ops/reports                 the open reports, due first, with the 72-hour clock
//	GET  /ops/reports/{id}            one report: its text, withdraw or decline it
//	POST /ops/reports/{id}/withdraw   withdraw the entry's Verified (a signed record)
//	POST /ops/reports/{id}/decline    decline the report with a reason
//	POST /ops/reports/restore         restore an entry's withdrawn Verified (a signed record)
//
// Every POST passes the write paths' defences: the cross-origin check and the write
// routes' rate limit (middleware), the form's size bound; the report form, which the
// anonymous send too, carries the sign-in forms' double-submit token (csrf.go), the
// console's forms the session's csrf field. Report text, reasons and addresses are
// bounded by package reports and shown as plain text.

// Reports is the report service (package reports). Its errors are package reports'
// sentinels and *reports.InputError; store.ErrNotFound for no such entry or report.
type Reports interface {
	Reportable(ctx context.Context, slug string) (store.Entry, error)
	Submit(ctx context.Context, slug, text, contact, client string) (store.Report, error)
	Queue(ctx context.Context) ([]reports.QueueItem, error)
	Report(ctx context.Context, id int64) (store.Report, error)
	Withdraw(ctx context.Context, operatorID, reportID int64, reason string) (store.Withdrawal, error)
	Decline(ctx context.Context, operatorID, reportID int64, reason string) (store.Report, error)
	Restore(ctx context.Context, operatorID int64, slug, reason string) (store.Withdrawal, error)
}

// Bounds of the report forms' fields, in bytes, before the service's own (characters).
const (
	maxReportField  = 4 * store.MaxReportText
	maxReasonField  = 4 * store.MaxReportReason
	maxContactField = store.MaxReportContact
)

// reportPage is the report form, or (Sent) the thanks with the report shown back.
type reportPage struct {
	Slug, Name string
	CSRF       string
	Text       string
	Contact    string
	Error      string
	Sent       *store.Report
	Within     string
}

// reportEntry reads the path's entry when it can be reported, or answers.
func (h *handlers) reportEntry(c *gin.Context) (store.Entry, bool) {
	slug, ok := h.entrySlug(c)
	if !ok {
		return store.Entry{}, false
	}
	e, err := h.reports.Reportable(c.Request.Context(), slug)
	switch {
	case errors.Is(err, reports.ErrNotVerified):
		private(c)
		h.message(c, http.StatusConflict, "Not Verified",
			"This form is for reporting a server that Probity shows as Verified. "+displayName(e)+" is not Verified now, so there is nothing to withdraw.",
			link{Href: "/s/" + slug, Text: "Back to " + displayName(e)})
		return store.Entry{}, false
	case err != nil:
		h.fail(c, err)
		return store.Entry{}, false
	}
	return e, true
}

// reportForm serves GET /s/{slug}/report.
func (h *handlers) reportForm(c *gin.Context) {
	e, ok := h.reportEntry(c)
	if !ok {
		return
	}
	private(c)
	h.render(c, http.StatusOK, "report", reportPage{Slug: e.Slug, Name: displayName(e), CSRF: h.signInToken(c), Within: spellDuration(store.ReportAnswerWithin)})
}

// reportSubmit serves POST /s/{slug}/report.
func (h *handlers) reportSubmit(c *gin.Context) {
	if !h.form(c) || !h.checkDoubleSubmit(c, "This form is out of date or did not come from this site (or your browser refused its cookie). Open the report form again.") {
		return
	}
	e, ok := h.reportEntry(c)
	if !ok {
		return
	}
	private(c)
	text, contact := formValue(c, "text"), formValue(c, "contact")
	p := reportPage{Slug: e.Slug, Name: displayName(e), CSRF: h.signInToken(c), Within: spellDuration(store.ReportAnswerWithin)}
	if len(text) > maxReportField || len(contact) > maxContactField {
		p.Error = fmt.Sprintf("The report is too long: at most %d characters, and an address of at most %d.", store.MaxReportText, store.MaxReportContact)
		h.render(c, http.StatusBadRequest, "report", p)
		return
	}
	p.Text, p.Contact = text, contact
	r, err := h.reports.Submit(c.Request.Context(), e.Slug, text, contact, c.ClientIP())
	var in *reports.InputError
	switch {
	case errors.As(err, &in):
		p.Error = in.Msg
		h.render(c, http.StatusBadRequest, "report", p)
	case errors.Is(err, reports.ErrTooMany):
		p.Error = err.Error()
		h.render(c, http.StatusTooManyRequests, "report", p)
	case err != nil:
		h.fail(c, err)
	default:
		r.Text = plainLines(r.Text)
		p.Sent, p.Text, p.Contact = &r, "", ""
		h.render(c, http.StatusOK, "report", p)
	}
}

// queueRow is one open report of the console's queue.
type queueRow struct {
	ID        int64
	Slug      string
	Excerpt   string
	Received  time.Time
	Due       time.Time
	Clock     string // "12 hours left" or "overdue by 3 hours"
	Overdue   bool
	HasSender bool
}

// opsReportsPage is the console's report queue.
type opsReportsPage struct {
	V      *viewer
	Rows   []queueRow
	Error  string
	Notice string
}

// spellLeft says a report's time left, or how long it is overdue, in whole hours
// (minutes under an hour).
func spellLeft(left time.Duration) (string, bool) {
	over := left < 0
	if over {
		left = -left
	}
	var t string
	switch {
	case left >= time.Hour:
		h := int64(left / time.Hour)
		t = strconv.FormatInt(h, 10) + " hour"
		if h != 1 {
			t += "s"
		}
	default:
		m := int64(left / time.Minute)
		t = strconv.FormatInt(m, 10) + " minute"
		if m != 1 {
			t += "s"
		}
	}
	if over {
		return "overdue by " + t, true
	}
	return t + " left", false
}

func (h *handlers) renderQueue(c *gin.Context, v *viewer, status int, p opsReportsPage) {
	q, err := h.reports.Queue(c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	p.V = v
	for _, r := range q {
		clock, over := spellLeft(r.Left)
		p.Rows = append(p.Rows, queueRow{ID: r.ID, Slug: r.EntrySlug, Excerpt: cut(visibleLine(r.Text), 120), Received: r.ReceivedAt,
			Due: r.DueAt, Clock: clock, Overdue: over, HasSender: r.Contact != ""})
	}
	h.render(c, status, "ops_reports", p)
}

// opsReports serves GET /ops/reports.
func (h *handlers) opsReports(c *gin.Context) {
	v, ok := h.operator(c, "/ops/reports")
	if !ok {
		return
	}
	h.renderQueue(c, v, http.StatusOK, opsReportsPage{})
}

// opsReportPage is one report in the console.
type opsReportPage struct {
	V      *viewer
	Report store.Report
	Text   string
	Clock  string
	Error  string
	Reason string
}

// reportID reads the path's report id, or answers 404.
func (h *handlers) reportID(c *gin.Context) (int64, bool) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id < 1 || len(c.Param("id")) > 19 {
		h.fail(c, errNotFound)
		return 0, false
	}
	return id, true
}

func (h *handlers) renderReport(c *gin.Context, v *viewer, id int64, status int, errMsg, reason string) {
	r, err := h.reports.Report(c.Request.Context(), id)
	if err != nil {
		h.fail(c, err)
		return
	}
	p := opsReportPage{V: v, Report: r, Text: plainLines(r.Text), Error: errMsg, Reason: reason}
	p.Report.Reason = plainLines(r.Reason)
	if r.Status == store.ReportOpen {
		p.Clock, _ = spellLeft(r.DueAt.Sub(h.site.now()))
	}
	h.render(c, status, "ops_report", p)
}

// opsReport serves GET /ops/reports/{id}.
func (h *handlers) opsReport(c *gin.Context) {
	v, ok := h.operator(c, c.Request.URL.Path)
	if !ok {
		return
	}
	id, ok := h.reportID(c)
	if !ok {
		return
	}
	h.renderReport(c, v, id, http.StatusOK, "", "")
}

// opsReportDecide serves POST /ops/reports/{id}/withdraw and …/decline.
func (h *handlers) opsReportDecide(withdraw bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, ok := h.reportID(c)
		if !ok {
			return
		}
		v, ok := h.operator(c, "/ops/reports/"+strconv.FormatInt(id, 10))
		if !ok {
			return
		}
		reason := formValue(c, "reason")
		if len(reason) > maxReasonField {
			h.renderReport(c, v, id, http.StatusBadRequest, fmt.Sprintf("The reason is too long: at most %d characters.", store.MaxReportReason), "")
			return
		}
		ctx := c.Request.Context()
		var err error
		var notice string
		if withdraw {
			var w store.Withdrawal
			if w, err = h.reports.Withdraw(ctx, v.ID, id, reason); err == nil {
				notice = fmt.Sprintf("Report %d answered: Verified withdrawn (withdrawal record %d of the entry).", id, w.Number)
			}
		} else {
			var r store.Report
			if r, err = h.reports.Decline(ctx, v.ID, id, reason); err == nil {
				notice = fmt.Sprintf("Report %d about %s declined.", r.ID, r.EntrySlug)
			}
		}
		h.decided(c, v, id, err, notice, reason)
	}
}

// decided answers a console action: the queue with a notice, or the report's page with
// the error.
func (h *handlers) decided(c *gin.Context, v *viewer, id int64, err error, notice, reason string) {
	var in *reports.InputError
	switch {
	case err == nil:
		h.renderQueue(c, v, http.StatusOK, opsReportsPage{Notice: notice})
	case errors.As(err, &in):
		h.renderReport(c, v, id, http.StatusBadRequest, in.Msg, reason)
	case errors.Is(err, reports.ErrNotVerified):
		h.renderReport(c, v, id, http.StatusConflict, "The entry is not Verified now, so there is nothing to withdraw: decline the report, with the reason.", reason)
	case errors.Is(err, reports.ErrClosed), errors.Is(err, store.ErrWithdrawalConflict):
		h.renderReport(c, v, id, http.StatusConflict, "This report, or its entry's Verified, was answered a moment ago by another operator: reload the queue.", "")
	default:
		h.fail(c, err)
	}
}

// opsRestore serves POST /ops/reports/restore: an entry's withdrawn Verified restored.
func (h *handlers) opsRestore(c *gin.Context) {
	v, ok := h.operator(c, "/ops/reports")
	if !ok {
		return
	}
	slug, reason := formValue(c, "slug"), formValue(c, "reason")
	if !slugOK(slug) {
		h.renderQueue(c, v, http.StatusBadRequest, opsReportsPage{Error: "Name the entry by its slug (the part after /s/ in its address)."})
		return
	}
	if len(reason) > maxReasonField {
		h.renderQueue(c, v, http.StatusBadRequest, opsReportsPage{Error: fmt.Sprintf("The reason is too long: at most %d characters.", store.MaxReportReason)})
		return
	}
	w, err := h.reports.Restore(c.Request.Context(), v.ID, slug, reason)
	var in *reports.InputError
	switch {
	case err == nil:
		h.renderQueue(c, v, http.StatusOK, opsReportsPage{Notice: fmt.Sprintf("Verified restored on %s: withdrawal record %d.", slug, w.Number)})
	case errors.As(err, &in):
		h.renderQueue(c, v, http.StatusBadRequest, opsReportsPage{Error: in.Msg})
	case errors.Is(err, reports.ErrNotWithdrawn), errors.Is(err, store.ErrWithdrawalConflict):
		h.renderQueue(c, v, http.StatusConflict, opsReportsPage{Error: "The Verified of " + slug + " is not withdrawn."})
	case errors.Is(err, store.ErrNotFound):
		h.renderQueue(c, v, http.StatusNotFound, opsReportsPage{Error: "There is no entry " + slug + "."})
	default:
		h.fail(c, err)
	}
}
