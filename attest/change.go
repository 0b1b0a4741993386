package attest

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// ChangePredicateType identifies the change predicate, major version 1.
const ChangePredicateType = "https://probity.dev/attestation/change/v1"

// Change kinds and origins.
const (
	ChangeBaseline     = "baseline"      // the first successful read: observation started
	ChangeTools        = "tools"         // the tool surface or the instructions changed
	ChangeVersion      = "version"       // the server-reported or published version changed
	ChangeOperatorEdit = "operator_edit" // the server's operator edited the entry

	OriginAutomatic = "automatic"
	OriginOperator  = "operator"
)

// ChangePredicate is the predicate of https://probity.dev/attestation/change/v1: one
// recorded change of an entry's history. It names the signed rounds it compares by their
// roundId and payload digest (the SHA-256 of the round envelope's payload), and holds
// digests and counts only: no server text. Members are declared in RFC 8785 order.
type ChangePredicate struct {
	After      ChangeState  `json:"after"`
	Badges     []string     `json:"badges"`
	Before     *ChangeState `json:"before,omitempty"`
	Entry      ChangeEntry  `json:"entry"`
	Kind       string       `json:"kind"`
	Number     int64        `json:"number"`
	Origin     string       `json:"origin"`
	RecordedAt string       `json:"recordedAt"`
	// Summary is one line of counts and version numbers, e.g. "2 tools added, 1 removed".
	Summary     string `json:"summary"`
	ToolVersion string `json:"toolVersion"`
}

// ChangeEntry names the entry a change belongs to.
type ChangeEntry struct {
	Kind    string `json:"kind"`
	Package string `json:"package,omitempty"`
	Slug    string `json:"slug"`
	URL     string `json:"url,omitempty"`
}

// ChangeState is one side of a change: the signed round it was read in and what it
// recorded.
type ChangeState struct {
	// Edit is the digest of an operator edit's canonical text.
	Edit          string `json:"edit,omitempty"`
	Instructions  string `json:"instructions,omitempty"`
	PayloadDigest string `json:"payloadDigest,omitempty"`
	RoundID       string `json:"roundId,omitempty"`
	Surface       string `json:"surface,omitempty"`
	ToolCount     *int   `json:"toolCount,omitempty"`
	Version       string `json:"version,omitempty"`
}

//go:embed schema/change-v1.schema.json
var changeSchemaJSON []byte

// ChangeSchemaJSON returns the JSON Schema of the change predicate.
func ChangeSchemaJSON() []byte { return bytes.Clone(changeSchemaJSON) }

var changeSchema = sync.OnceValues(func() (*Schema, error) { return CompileSchema(changeSchemaJSON) })

// ChangeSubjectDigest is the subject digest of a change statement: the hex SHA-256 of
// the canonical bytes of its predicate's "after" member, so the subject pins the state
// the change arrived at.
func ChangeSubjectDigest(after ChangeState) (string, error) {
	b, err := Marshal(after)
	if err != nil {
		return "", err
	}
	return Digest(b)[len("sha256:"):], nil
}

// NewChangeStatement builds the statement of a change. Its subject is the entry's URL
// (remote) or package reference, with ChangeSubjectDigest.
func NewChangeStatement(p *ChangePredicate) (*Statement, error) {
	name := p.Entry.URL
	if name == "" {
		name = p.Entry.Package
	}
	d, err := ChangeSubjectDigest(p.After)
	if err != nil {
		return nil, err
	}
	return &Statement{
		Type:          StatementType,
		Subject:       []Subject{{Name: name, Digest: DigestSet{"sha256": d}}},
		PredicateType: ChangePredicateType,
		Predicate:     p,
	}, nil
}

// checkChange applies the rules the change schema cannot express.
func checkChange(raw json.RawMessage, subjects []Subject) (*ChangePredicate, error) {
	var p ChangePredicate
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, &StatementError{Path: "/predicate", Msg: err.Error()}
	}
	round := func(s *ChangeState, path string) error {
		if (s.RoundID == "") != (s.PayloadDigest == "") {
			return &StatementError{Path: path, Msg: "roundId and payloadDigest come together"}
		}
		return nil
	}
	if err := round(&p.After, "/predicate/after"); err != nil {
		return nil, err
	}
	if p.Before != nil {
		if err := round(p.Before, "/predicate/before"); err != nil {
			return nil, err
		}
	}
	switch p.Kind {
	case ChangeBaseline:
		// A tool list's baseline names the round of its surface; a package's (npm or
		// PyPI entry) names the version its observation started at and nothing else.
		tools := p.After.RoundID != "" && p.After.Surface != ""
		a := p.After
		version := a.Version != "" && a == ChangeState{Version: a.Version} && (p.Entry.Kind == "npm" || p.Entry.Kind == "pypi")
		if p.Before != nil || !tools && !version {
			return nil, &StatementError{Path: "/predicate", Msg: "a baseline has no before and names the round of its surface, or only the version it started at"}
		}
	case ChangeTools:
		if p.Before == nil || p.Before.RoundID == "" || p.After.RoundID == "" || p.Before.Surface == "" || p.After.Surface == "" {
			return nil, &StatementError{Path: "/predicate", Msg: "a tools change names the two rounds and surfaces it compares"}
		}
	case ChangeVersion:
		if p.After.Version == "" {
			return nil, &StatementError{Path: "/predicate/after", Msg: "a version change names the new version"}
		}
	case ChangeOperatorEdit:
		if p.After.Edit == "" {
			return nil, &StatementError{Path: "/predicate/after", Msg: "an operator edit names the digest of the edit"}
		}
	}
	if (p.Kind == ChangeOperatorEdit) != (p.Origin == OriginOperator) {
		return nil, &StatementError{Path: "/predicate/origin", Msg: "operator edits, and only they, have origin operator"}
	}
	seen := map[string]bool{}
	for _, b := range p.Badges {
		if seen[b] {
			return nil, &StatementError{Path: "/predicate/badges", Msg: fmt.Sprintf("badge %s twice", b)}
		}
		seen[b] = true
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
	d, err := ChangeSubjectDigest(p.After)
	if err != nil {
		return nil, err
	}
	if len(subjects) != 1 || subjects[0].Name != name || len(subjects[0].Digest) != 1 || subjects[0].Digest["sha256"] != d {
		return nil, &StatementError{Path: "/subject", Msg: "want one subject: the entry's url or package, with the digest of the predicate's after state"}
	}
	return &p, nil
}

// EntryRef names an entry in a change or supply statement: a remote entry by its URL,
// a package by its reference (the locator, pkg:npm/… or pkg:pypi/…), and a GitHub
// repository (locator https://github.com/OWNER/REPO) as pkg:github/OWNER/REPO.
func EntryRef(kind, slug, locator string) ChangeEntry {
	ce := ChangeEntry{Kind: kind, Slug: slug}
	switch kind {
	case "remote":
		ce.URL = locator
	case "github":
		ce.Package = "pkg:github/" + strings.TrimPrefix(locator, "https://github.com/")
	default:
		ce.Package = locator
	}
	return ce
}
