package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/store"
)

// The subregistry: Probity answers the read side of the MCP Registry API, in the
// registry's own shapes (registry/schema/openapi.yaml: ServerList, ServerResponse), so
// a registry client reads Probity as it reads the official registry:
//
//	GET /v0.1/servers?cursor=&limit=&search=&updated_since=&version=&include_deleted=
//	GET /v0.1/servers/{serverName}/versions?include_deleted=
//	GET /v0.1/servers/{serverName}/versions/{version}?include_deleted=   (version "latest" too)
//
// Each item is one server Probity lists: its server.json exactly as listed (the
// document the registry or the import gave, Listing.Document), and a _meta object
// holding the registry's own metadata of that version as Probity received it
// ("io.modelcontextprotocol.registry/official", when the listing came from a registry)
// and, beside it, Probity's results under its own reverse-DNS key,
// "dev.probity/results" (regMeta): coverage, the newest round's findings per status, the supply-chain score and
// Verified, the last round, the last confirmed change, and the links to the entry's
// envelopes and the key document that verify all of it offline.
//
// Probity keeps one version per server, the one the registry lists (isLatest), so
// /versions lists that one and /versions/{version} answers it for its version or
// "latest". Only entries with a server name and a listed document are published;
// deprecated and deleted servers only with include_deleted (implied by updated_since,
// as the registry does). updated_since selects by when Probity's listing changed
// (Listing.UpdatedAt), not by when its results did: a client that wants fresh results
// reads the whole list, which is a few pages.
//
// The parameters are the registry's: limit 1 to 100, default 30, as the official
// registry (a limit outside is refused, not clamped); cursor is the metadata.nextCursor
// of the previous page (a server name); search a substring of the name, case
// insensitive; updated_since an RFC 3339 time; version "latest" or an exact version;
// include_deleted a boolean, refused as false together with updated_since. A bad one is
// answered 400 with the registry's error shape, {"error": "…"}; an unknown server or
// version 404 with the same shape.
//
// Bounds: a page holds at most limit items and at most subregistryPageBytes of JSON
// (a registry client refuses pages over 4 MiB; the official registry's pages are well
// under one), a document over maxListedDocument is not republished, and an exact
// version filter reads at most subregistryScanRows listings per request, ending the
// page early with a nextCursor when it has not found enough. Server text is kept as
// listed (the same JSON values), but written so it cannot hide: encoding/json escapes
// <, > and &, and invisible characters inside strings are written as \u escapes.
//
// Cost: a page reads one batch of listings, then, per item, its EntryDigest and, when
// not remembered already, its newest round's results and supply verdict (both
// immutable, so remembered by id). As a page costs as much as a hundred entry pages,
// at most half the CPUs build pages at once; a page that waits 5 s for its turn is
// answered 503 with Retry-After.

// Bounds of the subregistry.
const (
	subregistryDefaultLimit = 30 // the official registry's default
	subregistryMaxLimit     = 100
	// subregistryPageBytes bounds one list answer's JSON: half what the registry
	// client accepts by default (registry.DefaultMaxPageBytes).
	subregistryPageBytes = 2 << 20
	// maxListedDocument is the largest server.json republished.
	maxListedDocument = 1 << 20
	// subregistryScanBatch and subregistryScanRows bound the listings one request
	// reads while filtering by an exact version.
	subregistryScanBatch = 200
	subregistryScanRows  = 2000
	// maxServerName, maxVersion are the schema's bounds (ServerDetail).
	maxServerName = 200
	maxVersion    = 255
)

// serverNamePattern is the registry schema's pattern of a server name.
var serverNamePattern = regexp.MustCompile(`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`)

// The registry's error messages, as the official registry words them where it has
// one.
const (
	regNotFound   = "Server not found"
	regListFailed = "Failed to get registry list"
	regGetFailed  = "Failed to get server details"
)

// subregistry serves the MCP Registry API from the site's store.
type subregistry struct {
	s *site
	// supply remembers the summary of a supply run by its id: runs are immutable.
	supply *memo[int64, *regSupply]
	// pages admits the list pages being built: a page costs up to a hundred entry
	// digests (40 to 130 ms on SQLite for 100 servers, BenchmarkSubregistryPage), a
	// hundred times an entry page, while the rate limit counts it as one request.
	pages chan struct{}
}

// Admission of list pages: at most half the CPUs build pages at once (at least one);
// a request waits at most pageWait for its turn, then is answered 503 with Retry-After.
const (
	pageWait       = 5 * time.Second
	pageRetryAfter = "2"
)

// errBusy is a list request that waited pageWait for its turn.
var errBusy = errors.New("subregistry: too many pages being built")

// newSubregistry returns the subregistry of the site s.
func newSubregistry(s *site) *subregistry {
	return &subregistry{s: s, supply: newMemo[int64](4<<20, supplySummarySize), pages: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2))}
}

// admit waits for a turn to build a page; release ends it.
func (r *subregistry) admit(ctx context.Context) error {
	select {
	case r.pages <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(pageWait)
	defer t.Stop()
	select {
	case r.pages <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return errBusy
	}
}

func (r *subregistry) release() { <-r.pages }

// register adds the subregistry's routes to the site's router (New's), behind the
// same middleware: logging, recovery, security headers and the rate limit.
func (r *subregistry) register(site http.Handler) error {
	routes, ok := site.(gin.IRoutes)
	if !ok {
		return fmt.Errorf("web: the router is a %T, not a gin router", site)
	}
	routes.GET("/v0.1/servers", r.listHandler)
	routes.HEAD("/v0.1/servers", r.listHandler)
	// A server name holds a slash, sent as %2F; gin routes on the decoded path, so
	// the rest of the path is decoded here, from the escaped path.
	routes.GET("/v0.1/servers/*rest", r.serverHandler)
	routes.HEAD("/v0.1/servers/*rest", r.serverHandler)
	return nil
}

// --- The shapes (registry/schema/openapi.yaml) ---

// regList is a ServerList.
type regList struct {
	Servers  []json.RawMessage `json:"servers"`
	Metadata regListMeta       `json:"metadata"`
}

type regListMeta struct {
	// NextCursor continues the list; absent on its last page.
	NextCursor string `json:"nextCursor,omitempty"`
	Count      int    `json:"count"`
}

// regItem is a ServerResponse.
type regItem struct {
	Server json.RawMessage `json:"server"`
	Meta   regMeta         `json:"_meta"`
}

type regMeta struct {
	Official json.RawMessage `json:"io.modelcontextprotocol.registry/official,omitempty"`
	Results  *regResults     `json:"dev.probity/results"`
}

// regResults is Probity's results of one server, under "dev.probity/results".
type regResults struct {
	// Slug is the entry's slug on Probity; Status its listing status (active,
	// deprecated, deleted).
	Slug   string `json:"slug"`
	Status string `json:"status"`
	// State is the badge: Verified, signed or unsigned.
	State    string `json:"state"`
	Verified bool   `json:"verified"`
	// Score is the newest supply run's score, 0 to 100; null without one.
	Score *int `json:"score"`
	// Coverage is the newest round's coverage when it is signed (full,
	// auth_required); null otherwise.
	Coverage *string `json:"coverage"`
	// Findings counts the newest round's check results per status.
	Findings map[string]int `json:"findings"`
	// LastRound is the newest round; null when none ran.
	LastRound *regRound `json:"lastRound"`
	// Supply is the newest supply run; null when none ran.
	Supply *regSupply `json:"supply"`
	// LastConfirmedChange is the newest visible change of the history (changes are
	// recorded once confirmed; the baseline is not a change); null when none.
	LastConfirmedChange *regChange `json:"lastConfirmedChange"`
	Links               regLinks   `json:"links"`
}

type regRound struct {
	RoundID   string    `json:"roundId"`
	StartedAt time.Time `json:"startedAt"`
	Signed    bool      `json:"signed"`
	// Coverage is "full" or "auth_required" for a signed round; UnsignedReason says
	// why an unsigned one was not signed.
	Coverage       string `json:"coverage,omitempty"`
	UnsignedReason string `json:"unsignedReason,omitempty"`
	ToolCount      int    `json:"toolCount"`
	// Envelope is the address of the signed round's envelope.
	Envelope string `json:"envelope,omitempty"`
}

type regSupply struct {
	RanAt    time.Time `json:"ranAt"`
	Score    int       `json:"score"`
	Verified bool      `json:"verified"`
	Signed   bool      `json:"signed"`
	// NotVerified gives each reason Verified is withheld.
	NotVerified []string `json:"notVerified,omitempty"`
	// Findings counts the run's check results per status: passed, failed, partial
	// and skipped always, any other status (not_run) when it occurs.
	Findings map[string]int `json:"findings"`
}

type regChange struct {
	Number     int64     `json:"number"`
	RecordedAt time.Time `json:"recordedAt"`
	Kind       string    `json:"kind"`
	Summary    string    `json:"summary"`
	Link       string    `json:"link"`
}

type regLinks struct {
	Page      string `json:"page"`
	JSON      string `json:"json"`
	History   string `json:"history"`
	Envelopes string `json:"envelopes"`
	Keys      string `json:"keys"`
	Badge     string `json:"badge"`
}

// regError is the registry's error shape.
type regError struct {
	Error string `json:"error"`
}

// --- Requests ---

// regQuery is a decoded list request.
type regQuery struct {
	Limit          int
	Cursor         string // the server name after which the page starts
	Search         string
	UpdatedSince   time.Time
	Version        string // "", "latest" or an exact version
	IncludeDeleted bool
}

// badParam is a refused parameter, worded for the client.
type badParam string

func (e badParam) Error() string { return string(e) }

// parseRegQuery decodes and bounds the list parameters.
func parseRegQuery(v url.Values) (regQuery, error) {
	q := regQuery{Limit: subregistryDefaultLimit}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > subregistryMaxLimit {
			return q, badParam("limit must be an integer from 1 to 100")
		}
		q.Limit = n
	}
	if s := v.Get("cursor"); s != "" {
		if !validServerName(s) {
			return q, badParam("Invalid cursor parameter")
		}
		q.Cursor = s
	}
	q.Search = v.Get("search")
	if len(q.Search) > maxSearch || !utf8.ValidString(q.Search) {
		return q, badParam("search must be at most 200 bytes of UTF-8")
	}
	if s := v.Get("updated_since"); s != "" {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return q, badParam("Invalid updated_since format: expected RFC3339 timestamp (e.g., 2025-08-07T13:15:04.280Z)")
		}
		q.UpdatedSince = t
	}
	q.Version = v.Get("version")
	if len(q.Version) > maxVersion || !utf8.ValidString(q.Version) {
		return q, badParam("version must be at most 255 bytes of UTF-8")
	}
	include, set, err := boolParam(v, "include_deleted")
	if err != nil {
		return q, err
	}
	if !q.UpdatedSince.IsZero() {
		// An incremental sync must see what was deleted since.
		if set && !include {
			return q, badParam("Cannot set include_deleted=false when using updated_since (incremental sync requires deleted servers)")
		}
		include = true
	}
	q.IncludeDeleted = include
	return q, nil
}

// boolParam decodes a boolean parameter (strconv.ParseBool's spellings); set says
// whether it was given.
func boolParam(v url.Values, name string) (value, set bool, err error) {
	s := v.Get(name)
	if s == "" {
		return false, false, nil
	}
	b, perr := strconv.ParseBool(s)
	if perr != nil {
		return false, true, badParam(name + " must be true or false")
	}
	return b, true, nil
}

func validServerName(s string) bool {
	return len(s) >= 3 && len(s) <= maxServerName && serverNamePattern.MatchString(s)
}

// serverPath is a decoded /v0.1/servers/{serverName}/versions[/{version}] path.
type serverPath struct {
	Name    string
	Version string // "" for /versions
	List    bool   // /versions
}

// parseServerPath decodes the path after /v0.1/servers/ from the escaped path: the
// server name as one segment with its slash escaped (%2F, as the registry's API
// says), or unescaped as two segments; then "versions", then at most one escaped
// version. ok is false for any other path.
func parseServerPath(escaped string) (p serverPath, ok bool) {
	rest, found := strings.CutPrefix(escaped, "/v0.1/servers/")
	if !found || len(rest) > 3*(maxServerName+maxVersion)+32 {
		return p, false
	}
	segs := strings.Split(rest, "/")
	dec := make([]string, len(segs))
	for i, s := range segs {
		d, err := url.PathUnescape(s)
		if err != nil {
			return p, false
		}
		dec[i] = d
	}
	if strings.Contains(dec[0], "/") {
		p.Name, dec = dec[0], dec[1:]
	} else if len(dec) >= 2 {
		p.Name, dec = dec[0]+"/"+dec[1], dec[2:]
	} else {
		return p, false
	}
	if !validServerName(p.Name) || len(dec) == 0 || dec[0] != "versions" {
		return p, false
	}
	switch len(dec) {
	case 1:
		p.List = true
	case 2:
		p.Version = dec[1]
		if p.Version == "" || len(p.Version) > maxVersion || !utf8.ValidString(p.Version) {
			return p, false
		}
	default:
		return p, false
	}
	return p, true
}

// --- Handlers ---

func (r *subregistry) listHandler(c *gin.Context) {
	q, err := parseRegQuery(c.Request.URL.Query())
	if err != nil {
		r.fail(c, err, regListFailed)
		return
	}
	if err := r.admit(c.Request.Context()); err != nil {
		r.fail(c, err, regListFailed)
		return
	}
	b, err := func() ([]byte, error) {
		defer r.release() // a panic, recovered by the router, gives the turn back too
		return r.list(c.Request.Context(), q)
	}()
	if err != nil {
		r.fail(c, err, regListFailed)
		return
	}
	c.Data(http.StatusOK, "application/json; charset=utf-8", b)
}

func (r *subregistry) serverHandler(c *gin.Context) {
	p, ok := parseServerPath(c.Request.URL.EscapedPath())
	if !ok {
		r.fail(c, store.ErrNotFound, regGetFailed)
		return
	}
	include, _, err := boolParam(c.Request.URL.Query(), "include_deleted")
	if err != nil {
		r.fail(c, err, regGetFailed)
		return
	}
	var b []byte
	if p.List {
		b, err = r.versions(c.Request.Context(), p.Name, include)
	} else {
		b, err = r.version(c.Request.Context(), p.Name, p.Version, include)
	}
	if err != nil {
		r.fail(c, err, regGetFailed)
		return
	}
	c.Data(http.StatusOK, "application/json; charset=utf-8", b)
}

// fail maps err to the registry's error shape: a refused parameter is 400, not found
// 404, a page that found no turn 503 with Retry-After (which the registry client
// waits for), a client that left is logged as 499 (as fail does), anything else 500
// with internal, the detail going to the request's log line only.
func (r *subregistry) fail(c *gin.Context, err error, internal string) {
	var bad badParam
	switch {
	case errors.As(err, &bad):
		r.writeError(c, http.StatusBadRequest, string(bad))
	case errors.Is(err, store.ErrNotFound) || errors.Is(err, errNotFound):
		r.writeError(c, http.StatusNotFound, regNotFound)
	case errors.Is(err, errBusy):
		c.Header("Retry-After", pageRetryAfter)
		r.writeError(c, http.StatusServiceUnavailable, "Too many requests. Please try again shortly.")
	case c.Request.Context().Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		c.Status(statusClientGone)
		c.Abort()
	default:
		_ = c.Error(err)
		r.writeError(c, http.StatusInternalServerError, internal)
	}
}

func (r *subregistry) writeError(c *gin.Context, status int, msg string) {
	b, _ := json.Marshal(regError{Error: msg})
	c.Data(status, "application/json; charset=utf-8", append(b, '\n'))
}

// --- Answers ---

// list answers GET /v0.1/servers.
func (r *subregistry) list(ctx context.Context, q regQuery) ([]byte, error) {
	ls, next, err := r.candidates(ctx, q)
	if err != nil {
		return nil, err
	}
	out := regList{Servers: []json.RawMessage{}}
	size := 64
	for i := range ls {
		b, err := r.item(ctx, &ls[i])
		if errors.Is(err, store.ErrNotFound) {
			continue // removed since the listings were read
		}
		if err != nil {
			return nil, err
		}
		if size+len(b)+1 > subregistryPageBytes && len(out.Servers) > 0 {
			next = ls[i-1].Listing.ServerName
			break
		}
		size += len(b) + 1
		out.Servers = append(out.Servers, b)
	}
	out.Metadata = regListMeta{NextCursor: next, Count: len(out.Servers)}
	return marshalCompact(out)
}

// candidates reads the listings of one page: at most q.Limit publishable ones after
// q.Cursor, in name order, and the cursor of the next page ("" at the end of the
// list). An exact version filter reads at most subregistryScanRows listings; when
// they are spent, the page ends early and next is the last name read.
func (r *subregistry) candidates(ctx context.Context, q regQuery) ([]store.ServerListing, string, error) {
	sq := store.ListingQuery{AfterName: q.Cursor, UpdatedSince: q.UpdatedSince, IncludeUnlisted: q.IncludeDeleted, Search: q.Search}
	var out []store.ServerListing
	read := 0
	for {
		sq.Limit = q.Limit + 1
		if q.Version != "" && q.Version != "latest" {
			sq.Limit = subregistryScanBatch
		}
		rows, err := r.s.st.Listings(ctx, sq)
		if err != nil {
			return nil, "", err
		}
		for i := range rows {
			l := &rows[i]
			read++
			sq.AfterName = l.Listing.ServerName
			if !publishable(l, q.IncludeDeleted, q.Version) {
				continue
			}
			if len(out) == q.Limit {
				return out, out[len(out)-1].Listing.ServerName, nil
			}
			out = append(out, *l)
		}
		if len(rows) < sq.Limit {
			return out, "", nil
		}
		if read >= subregistryScanRows {
			return out, sq.AfterName, nil
		}
	}
}

// listedDoc is what the subregistry reads of a listed server.json.
type listedDoc struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// publishable reports whether a listing is published: it has a server name and a
// listed document (an object, at most maxListedDocument, naming the same server, with
// a version), it is listed or deleted ones are asked for, and its version matches
// (version "" and "latest" match the one version Probity keeps).
func publishable(l *store.ServerListing, includeDeleted bool, version string) bool {
	li := &l.Listing
	if li.ServerName == "" || len(li.Document) == 0 || len(li.Document) > maxListedDocument {
		return false
	}
	if !includeDeleted && !li.Listed() {
		return false
	}
	if t := bytes.TrimSpace(li.Document); len(t) == 0 || t[0] != '{' {
		return false
	}
	var d listedDoc
	if err := json.Unmarshal(li.Document, &d); err != nil || d.Name != li.ServerName || d.Version == "" {
		return false
	}
	return version == "" || version == "latest" || version == d.Version
}

// versions answers GET /v0.1/servers/{name}/versions: the one version Probity lists.
func (r *subregistry) versions(ctx context.Context, name string, includeDeleted bool) ([]byte, error) {
	l, err := r.listing(ctx, name, includeDeleted, "")
	if err != nil {
		return nil, err
	}
	b, err := r.item(ctx, l)
	if err != nil {
		return nil, err
	}
	return marshalCompact(regList{Servers: []json.RawMessage{b}, Metadata: regListMeta{Count: 1}})
}

// version answers GET /v0.1/servers/{name}/versions/{version}.
func (r *subregistry) version(ctx context.Context, name, version string, includeDeleted bool) ([]byte, error) {
	l, err := r.listing(ctx, name, includeDeleted, version)
	if err != nil {
		return nil, err
	}
	b, err := r.item(ctx, l)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// listing reads the publishable listing of one server, or store.ErrNotFound.
func (r *subregistry) listing(ctx context.Context, name string, includeDeleted bool, version string) (*store.ServerListing, error) {
	ls, err := r.s.st.Listings(ctx, store.ListingQuery{Name: name, IncludeUnlisted: includeDeleted, Limit: 2})
	if err != nil {
		return nil, err
	}
	for i := range ls {
		if ls[i].Listing.ServerName == name && publishable(&ls[i], includeDeleted, version) {
			return &ls[i], nil
		}
	}
	return nil, store.ErrNotFound
}

// item encodes one ServerResponse: the listed document, the registry's metadata as
// received, and Probity's results.
func (r *subregistry) item(ctx context.Context, l *store.ServerListing) ([]byte, error) {
	res, err := r.results(ctx, l)
	if err != nil {
		return nil, err
	}
	it := regItem{Server: unhide(l.Listing.Document), Meta: regMeta{Results: res}}
	if m := bytes.TrimSpace(l.Listing.RegistryMeta); len(m) > 0 && m[0] == '{' && json.Valid(m) {
		it.Meta.Official = unhide(m)
	}
	return json.Marshal(it)
}

// results builds Probity's results of a listed server from its entry's digest.
func (r *subregistry) results(ctx context.Context, l *store.ServerListing) (*regResults, error) {
	s := r.s
	d, err := s.st.EntryDigest(ctx, l.Entry.Slug, store.EntryQuery{Changes: 1})
	if err != nil {
		return nil, err
	}
	e := d.Entry
	round, run := digestState(&d)
	sum := stateOf(e, round, run)
	lk := s.links(e.Slug)
	status := l.Listing.Status
	if status == "" {
		status = store.StatusActive
	}
	res := &regResults{
		Slug: e.Slug, Status: status, State: sum.State, Verified: sum.State == stateVerified,
		Findings: map[string]int{string(attest.StatusVerified): 0, string(attest.StatusFailed): 0, string(attest.StatusObservedRisk): 0, string(attest.StatusUnverified): 0},
		Links:    regLinks{Page: lk.Page, JSON: lk.JSON, History: lk.History, Envelopes: lk.Envelopes, Keys: lk.Keys, Badge: lk.Badge},
	}
	if sum.Score >= 0 {
		score := sum.Score
		res.Score = &score
	}
	if sum.Coverage != "" {
		cov := sum.Coverage
		res.Coverage = &cov
	}
	if rd := d.Round; rd != nil {
		res.LastRound = &regRound{RoundID: rd.RoundID, StartedAt: rd.StartedAt.UTC(), Signed: rd.Signed, Coverage: rd.Coverage,
			UnsignedReason: rd.UnsignedReason, ToolCount: rd.ToolCount}
		if rd.Signed {
			res.LastRound.Envelope = lk.Page + "/r/" + rd.RoundID + ".json"
		}
		cs, err := s.checks.get(rd.ID, func() ([]checkView, error) {
			raw, err := s.st.RoundResults(ctx, rd.ID)
			if err != nil {
				return nil, err
			}
			cv, err := checkViews(raw)
			if err != nil {
				return nil, fmt.Errorf("results of round %s of %s: %w", rd.RoundID, e.Slug, err)
			}
			return cv, nil
		})
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			res.Findings[c.Status]++
		}
	}
	if sr := d.Supply; sr != nil {
		res.Supply, err = r.supply.get(sr.ID, func() (*regSupply, error) {
			full, err := s.supplyRun(ctx, e.ID, sr.ID)
			if err != nil {
				return nil, fmt.Errorf("supply run %d of %s: %w", sr.ID, e.Slug, err)
			}
			sv, err := supplyViewOf(full)
			if err != nil {
				return nil, fmt.Errorf("supply run %d of %s: %w", sr.ID, e.Slug, err)
			}
			rs := &regSupply{RanAt: sv.RanAt.UTC(), Score: sv.Score, Verified: sv.Verified, Signed: sv.Signed, NotVerified: sv.NotVerified,
				Findings: map[string]int{string(attest.SupplyPassed): 0, string(attest.SupplyFailed): 0, string(attest.SupplyPartial): 0,
					string(attest.SupplySkipped): 0}}
			for _, x := range sv.Results {
				rs.Findings[x.Status]++
			}
			return rs, nil
		})
		if err != nil {
			return nil, err
		}
		if e.VerifiedWithdrawn && res.Supply.Verified {
			c := *res.Supply // shared by the memo: copied
			c.Verified = false
			res.Supply = &c
		}
	}
	for i := range d.Changes {
		c := &d.Changes[i]
		if c.Hidden {
			continue // EntryDigest leaves them out; this is belt and braces
		}
		if c.Kind == attest.ChangeBaseline {
			break // the newest visible change is the baseline: nothing changed since
		}
		c.EntrySlug = e.Slug
		cv := s.changeView(c, false)
		res.LastConfirmedChange = &regChange{Number: cv.Number, RecordedAt: cv.At, Kind: cv.Kind, Summary: cv.Summary, Link: cv.Link}
		break
	}
	return res, nil
}

func supplySummarySize(s *regSupply) int {
	n := 160
	for _, r := range s.NotVerified {
		n += 16 + len(r)
	}
	return n
}

// marshalCompact encodes v compactly, with <, > and & escaped, and a final newline:
// a page is measured against its bound exactly as it is sent.
func marshalCompact(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// unhide returns a JSON value with every character inside its strings that could
// hide text (hides) written as a \u escape, and invalid UTF-8 as \ufffd: the same JSON
// value (for valid UTF-8), written so a reader of the raw text sees what is there.
// encoding/json then escapes <, > and & when the value is embedded.
func unhide(doc []byte) json.RawMessage {
	clean := true
	for i := 0; i < len(doc); i++ {
		if doc[i] >= utf8.RuneSelf {
			clean = false
			break
		}
	}
	if clean {
		return doc // ASCII: JSON strings hold no raw controls
	}
	out := make([]byte, 0, len(doc)+32)
	inString := false
	for i := 0; i < len(doc); {
		c := doc[i]
		switch {
		case !inString:
			inString = c == '"'
			out = append(out, c)
			i++
		case c == '\\' && i+1 < len(doc):
			out = append(out, c, doc[i+1])
			i += 2
		case c == '"':
			inString = false
			out = append(out, c)
			i++
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(doc[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				out = append(out, `\ufffd`...)
			case hides(r):
				out = appendJSONEscape(out, r)
			default:
				out = append(out, doc[i:i+size]...)
			}
			i += size
		}
	}
	return out
}

// appendJSONEscape appends r as a JSON \u escape, a surrogate pair beyond the BMP.
func appendJSONEscape(b []byte, r rune) []byte {
	const hex = "0123456789abcdef"
	u := func(b []byte, v rune) []byte {
		return append(b, '\\', 'u', hex[v>>12&0xF], hex[v>>8&0xF], hex[v>>4&0xF], hex[v&0xF])
	}
	if r <= 0xFFFF {
		return u(b, r)
	}
	r -= 0x10000
	return u(u(b, 0xD800+(r>>10)), 0xDC00+(r&0x3FF))
}
