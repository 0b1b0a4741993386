package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/disputes"
	"github.com/probity-dev/probity/store"
)

// Contesting a finding (issue 18): a maintainer of an entry contests one check result
// of one of its signed rounds in public (package disputes signs the dispute into the
// ledger and the log); an operator's outcome follows (the console). The entry page and
// its Checks tab list the entry's disputes with their outcomes: the maintainer's
// statement, evidence URL and the operator's reason are text from people, shown as
// plain text (escaped, invisible characters marked, the URL never a live link), never
// who wrote them.
//
//	GET  /s/{slug}/contest?round=ID&check=CHECK   the form (maintainers of the entry)
//	POST /s/{slug}/contest                        open the dispute
//
// Both start with maintainerOf (roles.go): 404 for no entry, sign-in for the anonymous,
// 403 for anyone who does not maintain this entry; the POST passes the write paths'
// defences (csrf.go), with a body bound of its own (maxContestBody) for a statement of
// 2,000 characters of any script.
//
// The entry's pages read the store on every request (only the directory is kept,
// pagecache.go), so a dispute or an outcome is on them at the next request; the Checks
// tab's cached fragment (checksHTML, by round) holds only what never changes.

// Disputes opens disputes (package disputes). Its errors are package disputes'
// sentinels and *disputes.InputError; store.ErrNotFound for an unknown entry.
type Disputes interface {
	Contest(ctx context.Context, accountID int64, slug string, roundID int64, checkID, statement, evidence string) (disputes.Dispute, error)
}

// maxContestBody bounds the contest form's body: a statement of 2,000 characters of
// up to 4 bytes each, percent-encoded (×3), an evidence URL, and the other fields.
const maxContestBody = 32 << 10

// contestPath reports whether a POST goes to the contest route, whose body bound is
// maxContestBody.
func contestPath(p string) bool {
	return strings.HasPrefix(p, "/s/") && strings.HasSuffix(p, "/contest") && strings.Count(p, "/") == 3
}

var checkIDPattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// contestTarget reads the round (a store id) and the check id of the contest form, from
// the query (GET) or the form (POST); ok false when either is malformed.
func contestTarget(c *gin.Context) (int64, string, bool) {
	get := c.Query
	if c.Request.Method == http.MethodPost {
		get = func(k string) string { return formValue(c, k) }
	}
	text, check := get("round"), get("check")
	round, err := strconv.ParseInt(text, 10, 64)
	if err != nil || round < 1 || strconv.FormatInt(round, 10) != text || !checkIDPattern.MatchString(check) {
		return 0, "", false
	}
	return round, check, true
}

// contestPage is the contest form, with an error of the last try.
type contestPage struct {
	V                   *viewer
	Slug, Name          string
	Round               int64
	Check               string
	Statement, Evidence string
	MaxText, MaxURL     int
	Error               string
}

// contestForm serves GET /s/{slug}/contest.
func (h *handlers) contestForm(c *gin.Context) {
	round, check, ok := contestTarget(c)
	if !ok {
		h.fail(c, errNotFound)
		return
	}
	v, e, ok := h.maintainerOf(c, "/contest?"+url.Values{"round": {strconv.FormatInt(round, 10)}, "check": {check}}.Encode())
	if !ok {
		return
	}
	h.render(c, http.StatusOK, "contest", contestPage{V: v, Slug: e.Slug, Name: displayName(e), Round: round, Check: check,
		MaxText: attest.MaxDisputeText, MaxURL: attest.MaxEvidenceURL})
}

// contest serves POST /s/{slug}/contest: the dispute is opened, signed and public.
func (h *handlers) contest(c *gin.Context) {
	v, e, ok := h.maintainerOf(c, "/checks")
	if !ok {
		return
	}
	round, check, ok := contestTarget(c)
	if !ok {
		h.problem(c, http.StatusBadRequest, "The form names no round and check. Open it again from the Checks tab.")
		return
	}
	statement, evidence := formValue(c, "statement"), formValue(c, "evidence")
	p := contestPage{V: v, Slug: e.Slug, Name: displayName(e), Round: round, Check: check, Statement: statement, Evidence: evidence,
		MaxText: attest.MaxDisputeText, MaxURL: attest.MaxEvidenceURL}
	d, err := h.disputes.Contest(c.Request.Context(), v.ID, e.Slug, round, check, statement, evidence)
	var in *disputes.InputError
	switch {
	case err == nil:
		h.message(c, http.StatusOK, "Dispute opened",
			fmt.Sprintf("Dispute %d of %s is public now: it is signed into Probity's log, shown on the entry's page and sent to its followers. "+
				"An operator will decide it; the outcome is signed and shown beside it. The finding itself stays as it was recorded.", d.Number, displayName(e)),
			link{Href: "/s/" + e.Slug + "/checks#dispute-" + strconv.FormatInt(d.Number, 10), Text: "See it on the Checks tab"})
	case errors.As(err, &in):
		p.Error = in.Msg
		h.render(c, http.StatusBadRequest, "contest", p)
	case errors.Is(err, disputes.ErrNotMaintainer):
		h.message(c, http.StatusForbidden, "Maintainers only", "Only a maintainer of "+displayName(e)+" can contest its findings.",
			link{Href: "/s/" + e.Slug, Text: "Back to " + displayName(e)})
	case errors.Is(err, disputes.ErrNoFinding):
		h.message(c, http.StatusNotFound, "No such finding", "That round is not a signed round of this entry, or it has no result of that check.",
			link{Href: "/s/" + e.Slug + "/checks", Text: "Back to the checks"})
	case errors.Is(err, disputes.ErrOpen):
		h.message(c, http.StatusConflict, "Already contested", "This finding has an open dispute: it waits for an operator's outcome.",
			link{Href: "/s/" + e.Slug + "/checks#disputes", Text: "See the disputes"})
	case errors.Is(err, disputes.ErrRateLimited):
		p.Error = disputes.ErrRateLimited.Error() + "."
		h.render(c, http.StatusTooManyRequests, "contest", p)
	case errors.Is(err, disputes.ErrPending):
		c.Header("Retry-After", "10")
		p.Error = disputes.ErrPending.Error() + "."
		h.render(c, http.StatusServiceUnavailable, "contest", p)
	default:
		h.fail(c, err)
	}
}

// maxShownDisputes bounds the disputes an entry's page lists.
const maxShownDisputes = 100

// disputeView is one dispute as the pages and the API show it: what the signed records
// say, never who opened or decided it. Statement and Evidence are people's text made
// visible (invisible characters escaped); StatementLines the statement by line.
type disputeView struct {
	Number    int64     `json:"number"`
	Anchor    string    `json:"-"`
	CheckID   string    `json:"checkId"`
	Status    string    `json:"status"`
	Round     string    `json:"roundId"`
	OpenedAt  time.Time `json:"openedAt"`
	Statement string    `json:"statement"`
	// StatementLines is the statement split at its line breaks, for the HTML.
	StatementLines []string     `json:"-"`
	Evidence       string       `json:"evidence,omitempty"`
	Seq            int64        `json:"seq,omitempty"`
	Bundle         string       `json:"bundle,omitempty"`
	Outcome        *outcomeView `json:"outcome"`
}

// outcomeView is an outcome as the pages and the API show it.
type outcomeView struct {
	Decision     string    `json:"decision"`
	Text         string    `json:"-"`
	SuiteVersion string    `json:"suiteVersion,omitempty"`
	Reason       string    `json:"reason"`
	ReasonLines  []string  `json:"-"`
	DecidedAt    time.Time `json:"decidedAt"`
	Seq          int64     `json:"seq,omitempty"`
	Bundle       string    `json:"bundle,omitempty"`
}

// decisionText says a decision in words.
func decisionText(decision, suite string) string {
	switch decision {
	case attest.DecisionUpheld:
		return "upheld: the finding was wrong"
	case attest.DecisionRejected:
		return "rejected: the finding stands"
	case attest.DecisionCorrected:
		return "corrected in check suite version " + suite
	}
	return visibleLine(decision)
}

// disputesOf returns the views of the entry's disputes, newest first, at most
// maxShownDisputes.
func (s *site) disputesOf(ctx context.Context, entryID int64) ([]disputeView, error) {
	recs, err := s.st.Disputes(ctx, store.DisputeFilter{EntryID: entryID, Limit: maxShownDisputes})
	if err != nil {
		return nil, err
	}
	out := make([]disputeView, 0, len(recs))
	for _, r := range recs {
		statement := visible(r.Statement)
		d := disputeView{Number: r.Number, Anchor: "dispute-" + strconv.FormatInt(r.Number, 10), CheckID: r.CheckID,
			Status: string(r.Status), Round: visibleLine(r.RoundPublicID), OpenedAt: r.OpenedAt, Statement: statement,
			StatementLines: strings.Split(statement, "\n"), Evidence: visibleLine(r.Evidence), Seq: r.Seq, Bundle: s.bundleURL(r.Seq)}
		if o := r.Outcome; o != nil {
			reason := visible(o.Reason)
			d.Outcome = &outcomeView{Decision: o.Decision, Text: decisionText(o.Decision, visibleLine(o.SuiteVersion)),
				SuiteVersion: visibleLine(o.SuiteVersion), Reason: reason, ReasonLines: strings.Split(reason, "\n"),
				DecidedAt: o.DecidedAt, Seq: o.Seq, Bundle: s.bundleURL(o.Seq)}
		}
		out = append(out, d)
	}
	return out, nil
}

// bundleURL is the address of a record's bundle, "" when no log is served or the record
// has no number yet.
func (s *site) bundleURL(seq int64) string {
	if s.log == nil || seq < 1 {
		return ""
	}
	return "/bundle/" + strconv.FormatInt(seq, 10) + ".json"
}

// disputesSection is the data of the "disputes" partial: the entry's disputes, and
// whether the viewer may be offered the contest links (the route decides who may).
type disputesSection struct {
	Slug     string
	Disputes []disputeView
}
