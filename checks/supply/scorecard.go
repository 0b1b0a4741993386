package supply

import (
	"context"
	"fmt"
	"strings"
)

// DefaultScorecardURL is the OpenSSF Scorecard REST API.
const DefaultScorecardURL = "https://api.securityscorecards.dev"

// ScorecardAPIConfig configures the Scorecard REST API source.
type ScorecardAPIConfig struct {
	// BaseURL is the API; default DefaultScorecardURL.
	BaseURL string
	// Client sends the requests; default a Client with default configuration.
	Client *Client
	// MaxBody caps a response; default the Client's.
	MaxBody int64
}

// ScorecardAPI reads OpenSSF Scorecard results from the Scorecard REST API, the
// fallback when deps.dev has none.
type ScorecardAPI struct {
	base    string
	client  *Client
	maxBody int64
}

// NewScorecardAPI returns the Scorecard REST API source for cfg.
func NewScorecardAPI(cfg ScorecardAPIConfig) *ScorecardAPI {
	s := &ScorecardAPI{base: cfg.BaseURL, client: cfg.Client, maxBody: cfg.MaxBody}
	if s.base == "" {
		s.base = DefaultScorecardURL
	}
	if s.client == nil {
		s.client = NewClient(ClientConfig{})
	}
	return s
}

// Get reads the Scorecard of a GitHub repository
// (/projects/github.com/{owner}/{repo}): score, date and the analysed commit. A 404
// (never scanned) is SourceNoData, not a score of 0.
func (s *ScorecardAPI) Get(ctx context.Context, owner, repo string) ScorecardFacts {
	out := ScorecardFacts{From: "scorecard-api"}
	if !githubOwnerOK(owner) || !githubRepoOK(repo) {
		out.Source = Source{Outcome: SourceFailed, FetchedAt: s.client.now(), Error: "not a GitHub OWNER/REPO"}
		return out
	}
	u := joinURL(s.base, "/projects/github.com/"+owner+"/"+repo)
	resp, err := s.client.do(ctx, request{service: "Scorecard", url: u, accept: "application/json", maxBody: s.maxBody})
	out.Source = fetchSource("Scorecard", u, resp, err, s.client.now())
	if out.Source.Outcome == SourceNoData {
		out.Source.Error = "Scorecard: the repository was never scanned"
	}
	if out.Source.Outcome != SourceOK {
		return out
	}
	var j struct {
		Date string `json:"date"`
		Repo struct {
			Commit string `json:"commit"`
		} `json:"repo"`
		Score *float64 `json:"score"`
	}
	if err := decodeJSON(resp.body, '{', &j); err != nil {
		out.Source.Outcome, out.Source.Error = SourceFailed, "Scorecard: "+err.Error()
		return out
	}
	if j.Score == nil {
		out.Source.Outcome, out.Source.Error = SourceNoData, "Scorecard: the result has no score"
		return out
	}
	if *j.Score < 0 || *j.Score > 10 {
		out.Source.Outcome, out.Source.Error = SourceFailed, fmt.Sprintf("Scorecard: score %g is outside 0–10", *j.Score)
		return out
	}
	out.Score = *j.Score
	out.Date = parseTime(j.Date)
	if isCommitSHA(j.Repo.Commit) {
		out.Commit = strings.ToLower(j.Repo.Commit)
	}
	return out
}
