package web

import (
	"context"
	_ "embed"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/probity-dev/probity/store"
)

// The JSON API under /api/v1/, described by openapi.json (OpenAPI 3.1), which
// /api/v1/openapi.json serves as it is:
//
//	GET /api/v1/servers?q=&kind=&verified=&limit=&cursor=  entries, in id order, a page at a time
//	GET /api/v1/servers/{slug}?tools=                      an entry, as /s/{slug}.json
//	GET /api/v1/servers/{slug}/history?before=&limit=      its visible changes, newest first
//	GET /api/v1/changes?limit=                             the newest visible changes
//	GET /api/v1/stats                                      the statistics, as /stats.json
//
// Every answer is JSON; errors are {"error": "…"} (problem answers JSON for every
// address under /api/). A limit outside 1 to apiMaxLimit is refused with 400, not
// clamped: a client that asks for 500 learns that it gets at most 100.

//go:embed openapi.json
var openAPIDoc []byte

const (
	apiMaxLimit       = 100
	apiServersLimit   = 50 // default ?limit= of /servers
	apiHistoryLimit   = 30 // … of /servers/{slug}/history
	apiChangesLimit   = 50 // … of /changes
	apiMaxCursorDigit = 19 // an int64 in decimal
)

type apiServer struct {
	Slug        string     `json:"slug"`
	Name        string     `json:"name"`
	Kind        string     `json:"kind"`
	Locator     string     `json:"locator"`
	State       string     `json:"state"`    // Verified, signed or unsigned
	Coverage    string     `json:"coverage"` // full, auth_required, or "" without a signed round
	Verified    bool       `json:"verified"`
	SupplyScore *int       `json:"supplyScore"`
	LastRoundAt *time.Time `json:"lastRoundAt"`
	// Findings, ToolCount and ProtocolVersion are the newest signed round's (nil and
	// "" without one); Uptime30 the last 30 UTC days', today included.
	Findings        *apiFindings `json:"findings"`
	ToolCount       *int         `json:"toolCount"`
	ProtocolVersion string       `json:"protocolVersion"`
	Uptime30        apiUptime    `json:"uptime30"`
	LastChangeAt    *time.Time   `json:"lastChangeAt"`
	Offline         bool         `json:"offline"`
	Links           apiLinks     `json:"links"`
}

// apiFindings counts a round's check results by status.
type apiFindings struct {
	Failed       int `json:"failed"`
	ObservedRisk int `json:"observedRisk"`
}

// apiUptime is a span's online and counted (online or offline) days.
type apiUptime struct {
	OnlineDays  int `json:"onlineDays"`
	CountedDays int `json:"countedDays"`
}

type apiLinks struct {
	Page    string `json:"page"`
	JSON    string `json:"json"`
	API     string `json:"api"`
	History string `json:"history"`
	Feed    string `json:"feed"`
	Badge   string `json:"badge"`
}

type apiServerList struct {
	Servers []apiServer `json:"servers"`
	// NextCursor continues the list; absent at its end.
	NextCursor string `json:"nextCursor,omitempty"`
}

type apiHistory struct {
	Slug    string       `json:"slug"`
	Page    string       `json:"page"`
	Changes []changeJSON `json:"changes"`
	// NextBefore is the ?before= of the next page; absent at the first change.
	NextBefore int64 `json:"nextBefore,omitempty"`
}

type apiChange struct {
	Slug string `json:"slug"`
	changeJSON
}

type apiChanges struct {
	Changes []apiChange `json:"changes"`
}

// serverQuery is a decoded /api/v1/servers request.
type serverQuery struct {
	Q, Kind  string
	Verified string // "", "true" or "false"
	Limit    int
	After    int64 // the cursor: entries with a larger id
}

// apiServers lists the entries after q.After that match q, at most q.Limit, in id
// order: one store.Directory query, with one more row to know whether NextCursor is
// needed.
func (s *site) apiServers(ctx context.Context, q serverQuery) (*apiServerList, error) {
	dq := store.DirectoryQuery{Search: q.Q, Kind: q.Kind, AfterID: q.After, Limit: q.Limit + 1,
		UptimeTo: s.now().UTC().Format(time.DateOnly)}
	switch q.Verified {
	case "true":
		dq.Verified = store.OnlyVerified
	case "false":
		dq.Verified = store.NotVerified
	}
	res, err := s.st.Directory(ctx, dq)
	if err != nil {
		return nil, err
	}
	out := &apiServerList{Servers: []apiServer{}}
	rows := res.Rows
	if len(rows) > q.Limit {
		rows = rows[:q.Limit]
		out.NextCursor = strconv.FormatInt(rows[len(rows)-1].Entry.ID, 10)
	}
	for _, r := range rows {
		e, sum := r.Entry, stateOf(r.Entry, r.Round, r.Supply)
		l := s.links(e.Slug)
		v := apiServer{
			Slug: e.Slug, Name: visibleLine(e.Name), Kind: e.Kind, Locator: visibleLine(e.Locator),
			State: sum.State, Coverage: sum.Coverage, Verified: sum.State == stateVerified,
			ProtocolVersion: r.Round.ProtocolVersion, Offline: r.Round.Offline(),
			Uptime30: apiUptime{OnlineDays: e.Uptime30OnlineDays, CountedDays: e.Uptime30CountedDays},
			Links:    apiLinks{Page: l.Page, JSON: l.JSON, API: s.base + "/api/v1/servers/" + e.Slug, History: l.History, Feed: l.Feed, Badge: l.Badge},
		}
		if sum.Score >= 0 {
			score := sum.Score
			v.SupplyScore = &score
		}
		if !e.LastRoundAt.IsZero() {
			t := e.LastRoundAt.UTC()
			v.LastRoundAt = &t
		}
		if r.Round.SignedRound {
			tools := r.Round.ToolCount
			v.Findings, v.ToolCount = &apiFindings{Failed: r.Round.Failed, ObservedRisk: r.Round.ObservedRisk}, &tools
		}
		if !e.LastChangeAt.IsZero() {
			t := e.LastChangeAt.UTC()
			v.LastChangeAt = &t
		}
		out.Servers = append(out.Servers, v)
	}
	return out, nil
}

// apiHistory returns at most limit visible changes of slug numbered below before (0:
// the newest), newest first.
func (s *site) apiHistory(ctx context.Context, slug string, before int64, limit int) (*apiHistory, error) {
	e, err := s.st.Entry(ctx, slug)
	if err != nil {
		return nil, err
	}
	cs, err := s.st.Changes(ctx, store.ChangeFilter{EntryID: e.ID, BeforeNumber: before, Limit: limit + 1, WithoutEnvelopes: true})
	if err != nil {
		return nil, err
	}
	out := &apiHistory{Slug: e.Slug, Page: s.links(e.Slug).History, Changes: []changeJSON{}}
	if len(cs) > limit {
		cs = cs[:limit]
		out.NextBefore = cs[limit-1].Number
	}
	for i := range cs {
		if cs[i].Hidden {
			continue // Changes leaves them out; this is belt and braces
		}
		cs[i].EntrySlug = e.Slug
		out.Changes = append(out.Changes, changeJSONOf(s.changeView(&cs[i], false)))
	}
	return out, nil
}

// apiChanges returns the newest limit visible changes across the directory.
func (s *site) apiChanges(ctx context.Context, limit int) (*apiChanges, error) {
	cs, err := s.st.Changes(ctx, store.ChangeFilter{Limit: limit, WithoutEnvelopes: true})
	if err != nil {
		return nil, err
	}
	out := &apiChanges{Changes: []apiChange{}}
	for i := range cs {
		if !cs[i].Hidden {
			out.Changes = append(out.Changes, apiChange{Slug: cs[i].EntrySlug, changeJSON: changeJSONOf(s.changeView(&cs[i], false))})
		}
	}
	return out, nil
}

// --- Handlers ---

// apiLimit decodes ?limit=: def when absent, 1 to apiMaxLimit, anything else invalid.
func apiLimit(v string, def int) (int, bool) {
	if v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > apiMaxLimit {
		return 0, false
	}
	return n, true
}

// apiNumber decodes a positive int64 parameter (a cursor, a change number): 0 when
// absent.
func apiNumber(v string) (int64, bool) {
	if v == "" {
		return 0, true
	}
	if len(v) > apiMaxCursorDigit {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}

const badLimit = "limit must be an integer from 1 to 100."

// writeJSON encodes v as the response.
func (h *handlers) writeJSON(c *gin.Context, v any) {
	b, err := marshalJSON(v)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.Data(http.StatusOK, "application/json; charset=utf-8", b)
}

func (h *handlers) apiServers(c *gin.Context) {
	q := serverQuery{Q: strings.TrimSpace(c.Query("q")), Kind: c.Query("kind")}
	switch v := c.Query("verified"); v {
	case "", "true", "false":
		q.Verified = v
	case "1":
		q.Verified = "true"
	case "0":
		q.Verified = "false"
	default:
		h.problem(c, http.StatusBadRequest, "verified must be true or false.")
		return
	}
	var ok bool
	if q.Limit, ok = apiLimit(c.Query("limit"), apiServersLimit); !ok {
		h.problem(c, http.StatusBadRequest, badLimit)
		return
	}
	if q.After, ok = apiNumber(c.Query("cursor")); !ok {
		h.problem(c, http.StatusBadRequest, "cursor must be a nextCursor this API returned.")
		return
	}
	if len(q.Q) > maxSearch || !validKind(q.Kind) {
		h.problem(c, http.StatusBadRequest, "q must be at most 200 bytes, and kind one of remote, npm, pypi, github.")
		return
	}
	v, err := h.site.apiServers(c.Request.Context(), q)
	if err != nil {
		h.fail(c, err)
		return
	}
	h.writeJSON(c, v)
}

func (h *handlers) apiServer(c *gin.Context) {
	slug := c.Param("slug")
	if !slugOK(slug) {
		h.fail(c, errNotFound)
		return
	}
	tools, ok := parseToolsPage(c.Query("tools"))
	if !ok {
		h.problem(c, http.StatusBadRequest, "tools must be a page number from 1 to 100000.")
		return
	}
	b, err := h.site.entryJSON(c.Request.Context(), slug, tools)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.Data(http.StatusOK, "application/json; charset=utf-8", b)
}

func (h *handlers) apiHistory(c *gin.Context) {
	slug := c.Param("slug")
	if !slugOK(slug) {
		h.fail(c, errNotFound)
		return
	}
	limit, ok := apiLimit(c.Query("limit"), apiHistoryLimit)
	if !ok {
		h.problem(c, http.StatusBadRequest, badLimit)
		return
	}
	before, ok := apiNumber(c.Query("before"))
	if !ok {
		h.problem(c, http.StatusBadRequest, "before must be a change number.")
		return
	}
	v, err := h.site.apiHistory(c.Request.Context(), slug, before, limit)
	if err != nil {
		h.fail(c, err)
		return
	}
	h.writeJSON(c, v)
}

func (h *handlers) apiChanges(c *gin.Context) {
	limit, ok := apiLimit(c.Query("limit"), apiChangesLimit)
	if !ok {
		h.problem(c, http.StatusBadRequest, badLimit)
		return
	}
	v, err := h.site.apiChanges(c.Request.Context(), limit)
	if err != nil {
		h.fail(c, err)
		return
	}
	h.writeJSON(c, v)
}

func (h *handlers) openAPI(c *gin.Context) {
	c.Header("Cache-Control", "public, max-age=3600")
	c.Data(http.StatusOK, "application/json; charset=utf-8", openAPIDoc)
}
