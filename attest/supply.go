package attest

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"time"
)

// SupplyPredicateType identifies the supply predicate, major version 1.
const SupplyPredicateType = "https://probity.dev/attestation/supply/v1"

// The ids of the eleven supply-chain checks (seed 004). checks/supply runs them under
// these ids; this package, the auditable half, is their one home.
const (
	SupplySourceRepository  = "source_repository"
	SupplyPackageRepository = "package_repository"
	SupplyBuildProvenance   = "build_provenance"
	SupplyLicense           = "license"
	SupplyMaintenance       = "maintenance"
	SupplyScorecard         = "scorecard"
	SupplyPackageName       = "package_name"
	SupplyAdvisories        = "advisories"
	SupplyHidden            = "hidden_instructions"
	SupplyDestructive       = "destructive_tools"
	SupplyHandshake         = "mcp_handshake"
)

// SupplyCheckIDs are the eleven supply-chain checks (seed 004), in order, with their
// weights; a supply statement has exactly one result for each, in this order.
var SupplyCheckIDs = []string{
	SupplySourceRepository, SupplyPackageRepository, SupplyBuildProvenance, SupplyLicense,
	SupplyMaintenance, SupplyScorecard, SupplyPackageName, SupplyAdvisories,
	SupplyHidden, SupplyDestructive, SupplyHandshake,
}

// SupplyWeights are the checks' weights, in SupplyCheckIDs order; they sum to 100.
var SupplyWeights = []int{10, 5, 10, 5, 5, 15, 10, 15, 15, 5, 5}

// SupplyWeight returns the weight of the supply check id, 0 for an unknown id.
func SupplyWeight(id string) int {
	for i, c := range SupplyCheckIDs {
		if c == id {
			return SupplyWeights[i]
		}
	}
	return 0
}

// The thresholds of the Verified decision (seed 004), which the verifier recomputes from
// the signed checks and checks/supply applies to its verdict: their one home.
const (
	// SupplyVerifiedMinScore is the least score of a Verified entry.
	SupplyVerifiedMinScore = 80
	// SupplyVerifiedMinWeightRan is the least weight of the checks that ran (points
	// checked, of 100) for Verified.
	SupplyVerifiedMinWeightRan = 60
	// SupplyVerifiedNeeds is the check that must have passed for Verified: a public
	// source repository.
	SupplyVerifiedNeeds = SupplySourceRepository
)

// SupplyStatus is the outcome of one supply-chain check in one run. Its values are not
// a probe check's (CheckStatus): a supply check can earn part of its weight.
type SupplyStatus string

// The four supply check statuses.
const (
	SupplyPassed  SupplyStatus = "passed"
	SupplyFailed  SupplyStatus = "failed"
	SupplyPartial SupplyStatus = "partial" // a proportional share (Scorecard below 7)
	SupplySkipped SupplyStatus = "skipped" // no data: never counts against
)

// SupplyPredicate is the predicate of https://probity.dev/attestation/supply/v1: one
// run of the supply-chain checks of an entry. It holds statuses and points, never
// third-party text; the subject digest is the SHA-256 of the canonical facts the checks
// read, so a published facts document can be tied to its score. Members are declared
// in RFC 8785 order.
type SupplyPredicate struct {
	Checks          []SupplyCheck     `json:"checks"`
	Entry           ChangeEntry       `json:"entry"`
	EvaluatedAt     string            `json:"evaluatedAt"`
	PackageVersion  string            `json:"packageVersion,omitempty"`
	Provenance      *SupplyProvenance `json:"provenance,omitempty"`
	Score           int               `json:"score"`
	ScorecardCommit string            `json:"scorecardCommit,omitempty"`
	SuiteVersion    string            `json:"suiteVersion"`
	ToolVersion     string            `json:"toolVersion"`
	Verified        bool              `json:"verified"`
	WeightRan       int               `json:"weightRan"`
}

// SupplyCheck is one check's outcome: its status, weight and points in thousandths
// (so that a proportional share stays an integer), and whether a failure is serious.
type SupplyCheck struct {
	ID          string       `json:"id"`
	PointsMilli int          `json:"pointsMilli"`
	Serious     bool         `json:"serious"`
	Status      SupplyStatus `json:"status"`
	Weight      int          `json:"weight"`
}

// SupplyProvenance is the repository and commit a verified build provenance names.
type SupplyProvenance struct {
	Commit     string `json:"commit,omitempty"`
	Repository string `json:"repository"`
}

//go:embed schema/supply-v1.schema.json
var supplySchemaJSON []byte

// SupplySchemaJSON returns the JSON Schema of the supply predicate.
func SupplySchemaJSON() []byte { return bytes.Clone(supplySchemaJSON) }

var supplySchema = sync.OnceValues(func() (*Schema, error) { return CompileSchema(supplySchemaJSON) })

// SupplyScore is the score of a set of checks: the points passed over the weight of the
// checks that ran (skipped ones excluded), as a percentage rounded half up; 0 when
// nothing ran. It also returns the weight that ran.
func SupplyScore(checks []SupplyCheck) (score, weightRan int) {
	points := 0
	for _, c := range checks {
		if c.Status != SupplySkipped {
			weightRan += c.Weight
			points += c.PointsMilli
		}
	}
	if weightRan == 0 {
		return 0, 0
	}
	den := weightRan * 1000
	return (points*200 + den) / (2 * den), weightRan
}

// SupplyVerified is the Verified decision (seed 004): a score of at least
// SupplyVerifiedMinScore (80), no serious finding, at least SupplyVerifiedMinWeightRan
// (60) of the 100 points checked, and a source repository (SupplyVerifiedNeeds) that
// passed.
func SupplyVerified(checks []SupplyCheck) bool {
	score, ran := SupplyScore(checks)
	if score < SupplyVerifiedMinScore || ran < SupplyVerifiedMinWeightRan {
		return false
	}
	repo := false
	for _, c := range checks {
		if c.Serious {
			return false
		}
		if c.ID == SupplyVerifiedNeeds && c.Status == SupplyPassed {
			repo = true
		}
	}
	return repo
}

// SupplyOutcome is one check's outcome as the supply suite reports it: a status
// (SupplyPassed, …), the points earned, and whether a failure is serious.
type SupplyOutcome struct {
	Status  SupplyStatus
	Points  float64
	Serious bool
}

// NewSupplyPredicate builds the predicate of a supply run from the suite's outcomes by
// check id: one check per SupplyCheckIDs, in order, with its weight; a check without an
// outcome is skipped; a passed check earns its weight, a partial one its points in
// thousandths (kept strictly between 0 and the weight), any other none; only a failed
// check is serious. Score, weightRan and verified follow from the checks by SupplyScore
// and SupplyVerified, as the verifier recomputes them. The facts-derived members
// (packageVersion, provenance, scorecardCommit) are the caller's to set.
func NewSupplyPredicate(entry ChangeEntry, evaluatedAt time.Time, suiteVersion, toolVersion string, outcomes map[string]SupplyOutcome) *SupplyPredicate {
	p := &SupplyPredicate{
		Entry:        entry,
		EvaluatedAt:  FormatTime(evaluatedAt),
		SuiteVersion: suiteVersion,
		ToolVersion:  toolVersion,
		Checks:       NewSupplyChecks(outcomes),
	}
	p.Score, p.WeightRan = SupplyScore(p.Checks)
	p.Verified = SupplyVerified(p.Checks)
	return p
}

// NewSupplyChecks maps the suite's outcomes by check id onto the signed checks, as
// NewSupplyPredicate does: one per SupplyCheckIDs, in order, with its weight.
func NewSupplyChecks(outcomes map[string]SupplyOutcome) []SupplyCheck {
	checks := make([]SupplyCheck, 0, len(SupplyCheckIDs))
	for i, id := range SupplyCheckIDs {
		c := SupplyCheck{ID: id, Weight: SupplyWeights[i], Status: SupplySkipped}
		if o, ok := outcomes[id]; ok {
			c.Status = o.Status
			switch c.Status {
			case SupplyPassed:
				c.PointsMilli = c.Weight * 1000
			case SupplyPartial:
				c.PointsMilli = min(max(int(math.Round(o.Points*1000)), 1), c.Weight*1000-1)
			}
			c.Serious = o.Serious && c.Status == SupplyFailed
		}
		checks = append(checks, c)
	}
	return checks
}

// NewSupplyStatement builds the statement of a supply run; factsDigest is the hex
// SHA-256 of the canonical facts document.
func NewSupplyStatement(p *SupplyPredicate, factsDigest string) *Statement {
	name := p.Entry.URL
	if name == "" {
		name = p.Entry.Package
	}
	return &Statement{
		Type:          StatementType,
		Subject:       []Subject{{Name: name, Digest: DigestSet{"sha256": factsDigest}}},
		PredicateType: SupplyPredicateType,
		Predicate:     p,
	}
}

// checkSupply applies the rules the supply schema cannot express: the checks in order
// with their weights, points consistent with statuses, seriousness only on failures,
// and weightRan, score and verified as SupplyScore and SupplyVerified compute them.
func checkSupply(raw json.RawMessage, subjects []Subject) (*SupplyPredicate, error) {
	var p SupplyPredicate
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, &StatementError{Path: "/predicate", Msg: err.Error()}
	}
	for i, c := range p.Checks {
		path := fmt.Sprintf("/predicate/checks/%d", i)
		switch {
		case c.ID != SupplyCheckIDs[i]:
			return nil, &StatementError{Path: path + "/id", Msg: "want " + SupplyCheckIDs[i]}
		case c.Weight != SupplyWeights[i]:
			return nil, &StatementError{Path: path + "/weight", Msg: fmt.Sprintf("want %d", SupplyWeights[i])}
		case c.Serious && c.Status != SupplyFailed:
			return nil, &StatementError{Path: path + "/serious", Msg: "only a failed check can be serious"}
		}
		full := c.Weight * 1000
		ok := false
		switch c.Status {
		case SupplyPassed:
			ok = c.PointsMilli == full
		case SupplyFailed, SupplySkipped:
			ok = c.PointsMilli == 0
		case SupplyPartial:
			ok = c.PointsMilli > 0 && c.PointsMilli < full
		}
		if !ok {
			return nil, &StatementError{Path: path + "/pointsMilli", Msg: "points do not match the status and weight"}
		}
	}
	score, ran := SupplyScore(p.Checks)
	switch {
	case p.WeightRan != ran:
		return nil, &StatementError{Path: "/predicate/weightRan", Msg: fmt.Sprintf("the checks that ran weigh %d", ran)}
	case p.Score != score:
		return nil, &StatementError{Path: "/predicate/score", Msg: fmt.Sprintf("the checks score %d", score)}
	case p.Verified != SupplyVerified(p.Checks):
		return nil, &StatementError{Path: "/predicate/verified", Msg: "does not follow from the checks"}
	}
	name := p.Entry.URL
	if p.Entry.Kind == "remote" {
		if p.Entry.URL == "" || p.Entry.Package != "" {
			return nil, &StatementError{Path: "/predicate/entry", Msg: "a remote entry has a url and no package"}
		}
	} else {
		if p.Entry.Package == "" {
			return nil, &StatementError{Path: "/predicate/entry", Msg: "a package or repository entry has a package"}
		}
		name = p.Entry.Package
	}
	if len(subjects) != 1 || subjects[0].Name != name || len(subjects[0].Digest) != 1 || !isHex64(subjects[0].Digest["sha256"]) {
		return nil, &StatementError{Path: "/subject", Msg: "want one subject: the entry's url or package, with the sha256 of the facts"}
	}
	return &p, nil
}

func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// IsToken reports whether s fits the schemas' token pattern (a version or tool name:
// 1–64 characters of [A-Za-z0-9_.+-], starting with a letter or digit).
func IsToken(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i, c := range s {
		alnum := '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !alnum && (i == 0 || (c != '_' && c != '.' && c != '+' && c != '-')) {
			return false
		}
	}
	return true
}
