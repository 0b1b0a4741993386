package attest

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"strings"
	"sync"
	"time"
)

// BaselinePredicateType identifies the baseline predicate, major version 1.
const BaselinePredicateType = "https://probity.dev/attestation/baseline/v1"

// BaselinePredicate is the predicate of https://probity.dev/attestation/baseline/v1: a
// tool surface an entry's maintainer approved. It names the signed round it was taken
// from (basis) and carries that round's toolset, schema and surface fingerprints, which
// the *_unchanged_vs_approved checks of later rounds compare with. It never names who
// approved. Members are declared in RFC 8785 order.
type BaselinePredicate struct {
	ApprovedAt   string               `json:"approvedAt"`
	Basis        BaselineBasis        `json:"basis"`
	Entry        ChangeEntry          `json:"entry"`
	Fingerprints BaselineFingerprints `json:"fingerprints"`
	// Number is the entry's baseline number: 1, 2, … in the order they were approved.
	Number      int64  `json:"number"`
	ToolCount   int    `json:"toolCount"`
	ToolVersion string `json:"toolVersion"`
}

// BaselineBasis names the signed round a baseline was taken from: its roundId and the
// payload digest ("sha256:" + hex SHA-256) of its DSSE payload.
type BaselineBasis struct {
	PayloadDigest string `json:"payloadDigest"`
	RoundID       string `json:"roundId"`
}

// BaselineFingerprints are the approved fingerprints: those of the basis round (the
// instructions fingerprint is not part of a tool surface's approval).
type BaselineFingerprints struct {
	Schema  string `json:"schema"`
	Surface string `json:"surface"`
	Toolset string `json:"toolset"`
}

// Fingerprints returns the approved fingerprints in the form a round's checks compare
// (checks.Observation.Approved); Instructions is empty, so no check compares it.
func (f BaselineFingerprints) Fingerprints() *Fingerprints {
	return &Fingerprints{Toolset: f.Toolset, Schema: f.Schema, Surface: f.Surface}
}

//go:embed schema/baseline-v1.schema.json
var baselineSchemaJSON []byte

// BaselineSchemaJSON returns the JSON Schema of the baseline predicate.
func BaselineSchemaJSON() []byte { return bytes.Clone(baselineSchemaJSON) }

var baselineSchema = sync.OnceValues(func() (*Schema, error) { return CompileSchema(baselineSchemaJSON) })

// NewBaselinePredicate builds the predicate of an entry's baseline number n, approved
// at approvedAt, from the signed round it is taken from: its roundId, the payload
// digest of its envelope ("sha256:…"), its fingerprints and its tool count.
func NewBaselinePredicate(entry ChangeEntry, n int64, approvedAt time.Time, roundID, payloadDigest string, fp Fingerprints, toolCount int, toolVersion string) *BaselinePredicate {
	return &BaselinePredicate{
		ApprovedAt:   FormatTime(approvedAt),
		Basis:        BaselineBasis{PayloadDigest: payloadDigest, RoundID: roundID},
		Entry:        entry,
		Fingerprints: BaselineFingerprints{Schema: fp.Schema, Surface: fp.Surface, Toolset: fp.Toolset},
		Number:       n,
		ToolCount:    toolCount,
		ToolVersion:  toolVersion,
	}
}

// NewBaselineStatement builds the statement of a baseline. Its one subject is the
// entry's URL (remote) or package reference, with the digest sha256 = the hex of the
// approved surface fingerprint, as a full-coverage round's subject has.
func NewBaselineStatement(p *BaselinePredicate) *Statement {
	name := p.Entry.URL
	if name == "" {
		name = p.Entry.Package
	}
	return &Statement{
		Type:          StatementType,
		Subject:       []Subject{{Name: name, Digest: DigestSet{"sha256": strings.TrimPrefix(p.Fingerprints.Surface, "sha256:")}}},
		PredicateType: BaselinePredicateType,
		Predicate:     p,
	}
}

// checkBaseline applies the rules the baseline schema cannot express: the entry names
// its url or package by its kind, and the one subject is that name with the surface
// fingerprint's hex.
func checkBaseline(raw json.RawMessage, subjects []Subject) (*BaselinePredicate, error) {
	var p BaselinePredicate
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, &StatementError{Path: "/predicate", Msg: err.Error()}
	}
	name := p.Entry.URL
	if p.Entry.Kind == "remote" {
		if p.Entry.URL == "" || p.Entry.Package != "" {
			return nil, &StatementError{Path: "/predicate/entry", Msg: "a remote entry has a url and no package"}
		}
	} else {
		if p.Entry.Package == "" || p.Entry.URL != "" {
			return nil, &StatementError{Path: "/predicate/entry", Msg: "a package or repository entry has a package and no url"}
		}
		name = p.Entry.Package
	}
	d := strings.TrimPrefix(p.Fingerprints.Surface, "sha256:")
	if len(subjects) != 1 || subjects[0].Name != name || len(subjects[0].Digest) != 1 || subjects[0].Digest["sha256"] != d {
		return nil, &StatementError{Path: "/subject", Msg: "want one subject: the entry's url or package, with the approved surface fingerprint's hex"}
	}
	return &p, nil
}
