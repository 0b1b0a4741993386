package supply

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// DefaultOSVURL is the OSV API.
const DefaultOSVURL = "https://api.osv.dev"

// OSVConfig configures the OSV source.
type OSVConfig struct {
	// BaseURL is the API; default DefaultOSVURL.
	BaseURL string
	// Client sends the requests; default a Client with default configuration.
	Client *Client
	// MaxBody caps a response; default the Client's.
	MaxBody int64
	// BatchSize is the most queries in one querybatch request; default and ceiling
	// 1,000 (the API's limit).
	BatchSize int
	// MaxVulns bounds the advisories whose details are read for one package version and
	// its dependencies; default 1,000.
	MaxVulns int
	// Concurrency bounds the detail requests in flight; default 8.
	Concurrency int
}

// OSV reads advisories from the OSV API: /v1/querybatch for package versions, then
// /v1/vulns/{id} for each advisory's details.
type OSV struct {
	base        string
	client      *Client
	maxBody     int64
	batch       int
	maxVulns    int
	concurrency int
}

// NewOSV returns the OSV source for cfg.
func NewOSV(cfg OSVConfig) *OSV {
	o := &OSV{base: cfg.BaseURL, client: cfg.Client, maxBody: cfg.MaxBody, batch: cfg.BatchSize, maxVulns: cfg.MaxVulns, concurrency: cfg.Concurrency}
	if o.base == "" {
		o.base = DefaultOSVURL
	}
	if o.client == nil {
		o.client = NewClient(ClientConfig{})
	}
	if o.batch <= 0 || o.batch > 1000 {
		o.batch = 1000
	}
	if o.maxVulns <= 0 {
		o.maxVulns = 1000
	}
	if o.concurrency <= 0 {
		o.concurrency = 8
	}
	return o
}

// osvEcosystem maps a system to its OSV ecosystem name.
func osvEcosystem(system string) string {
	switch strings.ToLower(system) {
	case "npm":
		return "npm"
	case "pypi":
		return "PyPI"
	}
	return ""
}

type osvQuery struct {
	Package struct {
		Name      string `json:"name"`
		Ecosystem string `json:"ecosystem"`
	} `json:"package"`
	Version   string `json:"version"`
	PageToken string `json:"page_token,omitempty"`
}

// maxPages bounds the extra pages read for one query's vulnerability list.
const maxPages = 10

// QueryBatch returns the advisory IDs affecting each package version (ids[i] for
// pkgs[i]), in batches of at most BatchSize queries, following next_page_token up to
// 10 times. Packages of an ecosystem OSV does not know get no IDs.
func (o *OSV) QueryBatch(ctx context.Context, pkgs []PackageVersion) (ids [][]string, src Source) {
	u := joinURL(o.base, "/v1/querybatch")
	src = Source{Outcome: SourceOK, URL: u, FetchedAt: o.client.now()}
	ids = make([][]string, len(pkgs))
	type pending struct {
		index int
		token string
	}
	var todo []pending
	for i, p := range pkgs {
		if osvEcosystem(p.System) != "" && p.Name != "" && p.Version != "" {
			todo = append(todo, pending{index: i})
		}
	}
	for page := 0; len(todo) > 0; page++ {
		if page > maxPages {
			return nil, Source{Outcome: SourceFailed, URL: u, FetchedAt: o.client.now(), Error: fmt.Sprintf("OSV: more than %d pages of advisories", maxPages)}
		}
		var next []pending
		for start := 0; start < len(todo); start += o.batch {
			chunk := todo[start:min(start+o.batch, len(todo))]
			var body struct {
				Queries []osvQuery `json:"queries"`
			}
			for _, p := range chunk {
				var q osvQuery
				q.Package.Name = pkgs[p.index].Name
				q.Package.Ecosystem = osvEcosystem(pkgs[p.index].System)
				q.Version = pkgs[p.index].Version
				q.PageToken = p.token
				body.Queries = append(body.Queries, q)
			}
			data, err := json.Marshal(body)
			if err != nil {
				return nil, Source{Outcome: SourceFailed, URL: u, FetchedAt: o.client.now(), Error: "OSV: " + err.Error()}
			}
			resp, err := o.client.do(ctx, request{service: "OSV", method: "POST", url: u, accept: "application/json", body: data, maxBody: o.maxBody})
			s := fetchSource("OSV", u, resp, err, o.client.now())
			if s.Outcome != SourceOK {
				s.Outcome = SourceFailed // a 404 from querybatch is no answer, not "no advisories"
				return nil, s
			}
			var res struct {
				Results []struct {
					Vulns []struct {
						ID string `json:"id"`
					} `json:"vulns"`
					NextPageToken string `json:"next_page_token"`
				} `json:"results"`
			}
			if err := decodeJSON(resp.body, '{', &res); err != nil {
				return nil, Source{Outcome: SourceFailed, URL: u, FetchedAt: o.client.now(), Error: "OSV querybatch: " + err.Error()}
			}
			if len(res.Results) != len(chunk) {
				return nil, Source{Outcome: SourceFailed, URL: u, FetchedAt: o.client.now(),
					Error: fmt.Sprintf("OSV querybatch: %d results for %d queries", len(res.Results), len(chunk))}
			}
			for k, r := range res.Results {
				i := chunk[k].index
				for _, v := range r.Vulns {
					if validAdvisoryID(v.ID) && !slices.Contains(ids[i], v.ID) {
						ids[i] = append(ids[i], v.ID)
					}
				}
				if r.NextPageToken != "" {
					next = append(next, pending{index: i, token: r.NextPageToken})
				}
			}
		}
		todo = next
	}
	return ids, src
}

// OSVVuln is what the source reads of an advisory's details.
type OSVVuln struct {
	Source    Source
	ID        string
	Summary   string
	Aliases   []string
	Withdrawn bool
	// Severity is database_specific.severity (GitHub's CRITICAL, HIGH, MODERATE, LOW),
	// upper case; "" when absent.
	Severity string
	// CVSS is the highest CVSS v3 base score computed from the CVSS_V3 vectors in
	// severity[] (top level and per affected package); 0 when none parses.
	CVSS float64
}

// Vuln reads one advisory (/v1/vulns/{id}). A 404 is SourceNoData.
func (o *OSV) Vuln(ctx context.Context, id string) OSVVuln {
	out := OSVVuln{ID: id}
	if !validAdvisoryID(id) {
		out.Source = Source{Outcome: SourceFailed, FetchedAt: o.client.now(), Error: "not an advisory identifier"}
		return out
	}
	u := joinURL(o.base, "/v1/vulns/"+url.PathEscape(id))
	resp, err := o.client.do(ctx, request{service: "OSV", url: u, accept: "application/json", maxBody: o.maxBody})
	out.Source = fetchSource("OSV", u, resp, err, o.client.now())
	if out.Source.Outcome != SourceOK {
		return out
	}
	type severity struct {
		Type  string `json:"type"`
		Score string `json:"score"`
	}
	var j struct {
		ID               string          `json:"id"`
		Summary          string          `json:"summary"`
		Aliases          []string        `json:"aliases"`
		Withdrawn        string          `json:"withdrawn"`
		Severity         []severity      `json:"severity"`
		DatabaseSpecific json.RawMessage `json:"database_specific"`
		Affected         []struct {
			Severity []severity `json:"severity"`
		} `json:"affected"`
	}
	if err := decodeJSON(resp.body, '{', &j); err != nil {
		out.Source.Outcome, out.Source.Error = SourceFailed, "OSV vulnerability: "+err.Error()
		return out
	}
	if j.ID != id && !slices.Contains(j.Aliases, id) {
		out.Source.Outcome, out.Source.Error = SourceFailed, fmt.Sprintf("OSV vulnerability: answered %q for %q", clip(j.ID, 100), id)
		return out
	}
	out.Summary = clip(j.Summary, 500)
	out.Withdrawn = j.Withdrawn != ""
	for i, a := range j.Aliases {
		if i == 100 {
			break
		}
		if validAdvisoryID(a) {
			out.Aliases = append(out.Aliases, a)
		}
	}
	var ds struct {
		Severity string `json:"severity"`
	}
	if json.Unmarshal(j.DatabaseSpecific, &ds) == nil {
		out.Severity = strings.ToUpper(clip(strings.TrimSpace(ds.Severity), 20))
	}
	sev := j.Severity
	for i, a := range j.Affected {
		if i == 1000 {
			break
		}
		sev = append(sev, a.Severity...)
	}
	for i, s := range sev {
		if i == 1000 {
			break
		}
		if s.Type != "CVSS_V3" {
			continue
		}
		if score, err := CVSS3BaseScore(s.Score); err == nil && score > out.CVSS {
			out.CVSS = score
		}
	}
	return out
}

// CVSSLookup returns deps.dev's cvss3Score for an advisory key (GetAdvisory), ok false
// when deps.dev has no score; src.Outcome SourceFailed when it could not be asked.
type CVSSLookup func(ctx context.Context, id string) (score float64, src Source)

// Advisories finds the advisories of pkgs (pkgs[0] the package itself, the rest its
// resolved dependencies): querybatch, plus extra IDs known to affect pkgs[0] (deps.dev
// advisoryKeys), then each advisory's details. Withdrawn advisories are skipped;
// aliases of one advisory for one package are merged. An advisory is critical when
// database_specific.severity is CRITICAL, a CVSS v3 vector scores ≥ 9.0, or lookup
// (deps.dev; may be nil) gives a cvss3Score ≥ 9.0. When an advisory's criticality is
// unknown (its details or the lookup failed) and none is critical, the Source is
// SourceFailed: a pass needs every advisory read.
func (o *OSV) Advisories(ctx context.Context, pkgs []PackageVersion, extra []string, lookup CVSSLookup) ([]Advisory, Source) {
	ids, src := o.QueryBatch(ctx, pkgs)
	if src.Outcome != SourceOK {
		return nil, src
	}
	if len(pkgs) > 0 {
		for _, id := range extra {
			if validAdvisoryID(id) && !slices.Contains(ids[0], id) {
				ids[0] = append(ids[0], id)
			}
		}
	}
	var unique []string
	seen := map[string]bool{}
	for _, l := range ids {
		for _, id := range l {
			if !seen[id] {
				seen[id] = true
				unique = append(unique, id)
			}
		}
	}
	slices.Sort(unique)
	if len(unique) > o.maxVulns {
		return nil, Source{Outcome: SourceFailed, URL: src.URL, FetchedAt: src.FetchedAt,
			Error: fmt.Sprintf("OSV: %d advisories, more than the %d read", len(unique), o.maxVulns)}
	}

	type detail struct {
		v          OSVVuln
		depsScore  float64
		depsFailed string
	}
	details := make(map[string]*detail, len(unique))
	for _, id := range unique {
		details[id] = &detail{}
	}
	sem := make(chan struct{}, o.concurrency)
	var wg sync.WaitGroup
	for _, id := range unique {
		d := details[id]
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				d.v = OSVVuln{ID: id, Source: Source{Outcome: SourceFailed, Error: ctx.Err().Error()}}
				return
			}
			defer func() { <-sem }()
			d.v = o.Vuln(ctx, id)
			if d.v.Source.Outcome != SourceOK || d.v.Withdrawn || lookup == nil || d.v.Severity == "CRITICAL" || d.v.CVSS >= CriticalCVSS {
				return
			}
			score, s := lookup(ctx, id)
			if s.Outcome == SourceFailed {
				d.depsFailed = s.Error
			}
			d.depsScore = score
		})
	}
	wg.Wait()

	var (
		out       []Advisory
		uncertain []string
		critical  bool
	)
	for i, p := range pkgs {
		if i >= len(ids) {
			break
		}
		for _, group := range aliasGroups(ids[i], func(id string) []string { return details[id].v.Aliases }) {
			a := Advisory{Package: p.Name, Version: p.Version}
			known := false
			for _, id := range group {
				d := details[id]
				switch {
				case d.v.Source.Outcome != SourceOK:
					uncertain = append(uncertain, id+": "+d.v.Source.Error)
					continue
				case d.v.Withdrawn:
					continue
				}
				known = true
				if a.ID == "" || strings.HasPrefix(id, "GHSA-") && !strings.HasPrefix(a.ID, "GHSA-") {
					a.ID = id
					if d.v.Summary != "" {
						a.Summary = d.v.Summary
					}
				}
				if a.Summary == "" {
					a.Summary = d.v.Summary
				}
				if a.Severity == "" || strings.HasPrefix(id, "GHSA-") && d.v.Severity != "" {
					a.Severity = d.v.Severity
				}
				a.CVSS = max(a.CVSS, d.v.CVSS, d.depsScore)
				if d.v.Severity == "CRITICAL" || d.v.CVSS >= CriticalCVSS || d.depsScore >= CriticalCVSS {
					a.Critical = true
				}
				if d.depsFailed != "" && !a.Critical {
					uncertain = append(uncertain, id+": deps.dev: "+d.depsFailed)
				}
			}
			if !known {
				continue
			}
			a.URL = "https://osv.dev/vulnerability/" + a.ID
			critical = critical || a.Critical
			out = append(out, a)
		}
	}
	if len(uncertain) > 0 {
		slices.Sort(uncertain)
		uncertain = slices.Compact(uncertain)
		msg := "advisories not read: " + strings.Join(uncertain[:min(len(uncertain), 5)], "; ")
		if len(uncertain) > 5 {
			msg += fmt.Sprintf("; and %d more", len(uncertain)-5)
		}
		src.Error = msg
		if !critical {
			src.Outcome = SourceFailed
		}
	}
	return out, src
}

// aliasGroups partitions ids into groups of advisories that name each other as
// aliases (in either direction), each group sorted, groups in order of their first ID.
func aliasGroups(ids []string, aliases func(string) []string) [][]string {
	parent := map[string]string{}
	for _, id := range ids {
		parent[id] = id
	}
	find := func(x string) string {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for _, id := range ids {
		for _, a := range aliases(id) {
			if _, ok := parent[a]; ok {
				ra, rb := find(id), find(a)
				if ra != rb {
					if ra < rb {
						parent[rb] = ra
					} else {
						parent[ra] = rb
					}
				}
			}
		}
	}
	byRoot := map[string][]string{}
	var roots []string
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	for _, id := range sorted {
		r := find(id)
		if _, ok := byRoot[r]; !ok {
			roots = append(roots, r)
		}
		byRoot[r] = append(byRoot[r], id)
	}
	groups := make([][]string, 0, len(roots))
	for _, r := range roots {
		groups = append(groups, byRoot[r])
	}
	return groups
}
