package attest

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// DisputePredicateType identifies the dispute predicate, major version 1.
const DisputePredicateType = "https://probity.dev/attestation/dispute/v1"

// OutcomePredicateType identifies the outcome predicate, major version 1.
const OutcomePredicateType = "https://probity.dev/attestation/outcome/v1"

// Bounds of the dispute and outcome texts (the schemas say the same).
const (
	// MaxDisputeText is the most characters (code points) of a dispute's statement or
	// an outcome's reason.
	MaxDisputeText = 2000
	// MaxEvidenceURL is the longest evidence URL, in bytes.
	MaxEvidenceURL = 2048
)

// The decisions of an outcome.
const (
	DecisionUpheld    = "upheld"    // the finding was wrong: the dispute is upheld
	DecisionRejected  = "rejected"  // the finding stands
	DecisionCorrected = "corrected" // the check suite version SuiteVersion corrects it
)

// RecordRef names a ledger record: its sequence number (its log index plus one) and the
// digest of its payload ("sha256:" + hex SHA-256 of the DSSE payload). Members in
// RFC 8785 order.
type RecordRef struct {
	PayloadDigest string `json:"payloadDigest"`
	Seq           int64  `json:"seq"`
}

// DisputePredicate is the predicate of https://probity.dev/attestation/dispute/v1: a
// maintainer's public dispute of one check result of a signed round. It holds the
// maintainer's statement and evidence URL (plain text, shown as such), never the
// maintainer's name or account. Members are declared in RFC 8785 order.
type DisputePredicate struct {
	Entry       ChangeEntry `json:"entry"`
	Evidence    string      `json:"evidence,omitempty"`
	Finding     Finding     `json:"finding"`
	Number      int64       `json:"number"`
	OpenedAt    string      `json:"openedAt"`
	Statement   string      `json:"statement"`
	ToolVersion string      `json:"toolVersion"`
}

// Finding is the contested check result: the round's probe record, the check's id and
// its status as the round recorded it.
type Finding struct {
	CheckID string      `json:"checkId"`
	Record  RecordRef   `json:"record"`
	Status  CheckStatus `json:"status"`
}

// OutcomePredicate is the predicate of https://probity.dev/attestation/outcome/v1: an
// operator's decision on one dispute, with a reason. Never the operator's name or
// account. Members are declared in RFC 8785 order.
type OutcomePredicate struct {
	DecidedAt    string         `json:"decidedAt"`
	Decision     string         `json:"decision"`
	Dispute      OutcomeDispute `json:"dispute"`
	Entry        ChangeEntry    `json:"entry"`
	Reason       string         `json:"reason"`
	SuiteVersion string         `json:"suiteVersion,omitempty"`
	ToolVersion  string         `json:"toolVersion"`
}

// OutcomeDispute names the dispute an outcome decides: its number and its record.
type OutcomeDispute struct {
	Number int64     `json:"number"`
	Record RecordRef `json:"record"`
}

//go:embed schema/dispute-v1.schema.json
var disputeSchemaJSON []byte

//go:embed schema/outcome-v1.schema.json
var outcomeSchemaJSON []byte

// DisputeSchemaJSON returns the JSON Schema of the dispute predicate.
func DisputeSchemaJSON() []byte { return bytes.Clone(disputeSchemaJSON) }

// OutcomeSchemaJSON returns the JSON Schema of the outcome predicate.
func OutcomeSchemaJSON() []byte { return bytes.Clone(outcomeSchemaJSON) }

var (
	disputeSchema = sync.OnceValues(func() (*Schema, error) { return CompileSchema(disputeSchemaJSON) })
	outcomeSchema = sync.OnceValues(func() (*Schema, error) { return CompileSchema(outcomeSchemaJSON) })
)

// CheckDisputeText reports why s is not a valid statement or reason: empty, longer
// than MaxDisputeText characters, invalid UTF-8, or holding a control character other
// than a newline. Callers bound people's input with it before building a predicate.
func CheckDisputeText(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("the text is empty")
	case !utf8.ValidString(s):
		return fmt.Errorf("the text is not valid UTF-8")
	case utf8.RuneCountInString(s) > MaxDisputeText:
		return fmt.Errorf("the text is %d characters long; at most %d are allowed", utf8.RuneCountInString(s), MaxDisputeText)
	}
	for _, r := range s {
		if r != '\n' && (r < 0x20 || r == 0x7f) {
			return fmt.Errorf("the text holds the control character U+%04X", r)
		}
	}
	return nil
}

// CheckEvidenceURL reports why s is not a valid evidence URL: an https URL with a host
// and no user name, of at most MaxEvidenceURL bytes, without white space, control
// characters or the characters a URL holds only escaped (" < > \ ^ ` { | }) ("" is no
// evidence, and valid).
func CheckEvidenceURL(s string) error {
	if s == "" {
		return nil
	}
	if len(s) > MaxEvidenceURL {
		return fmt.Errorf("the evidence URL is %d bytes long; at most %d are allowed", len(s), MaxEvidenceURL)
	}
	if !strings.HasPrefix(s, "https://") || len(s) == len("https://") {
		return fmt.Errorf("the evidence URL must start with https://")
	}
	for _, r := range s {
		if r <= 0x20 || r == 0x7f || r == 0x85 || r == 0xa0 || r == 0x1680 || (r >= 0x2000 && r <= 0x200a) ||
			r == 0x2028 || r == 0x2029 || r == 0x202f || r == 0x205f || r == 0x3000 {
			return fmt.Errorf("the evidence URL holds white space or a control character")
		}
	}
	if strings.ContainsAny(s, "\"<>\\^`{|}") {
		return fmt.Errorf("the evidence URL holds a character a URL cannot hold unescaped")
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil {
		return fmt.Errorf("the evidence URL is not an https URL with a host (and no user name)")
	}
	return nil
}

// NewDisputeStatement builds the statement of a dispute. Its subject is the entry's
// URL (remote) or package reference, with the hex SHA-256 of the contested round's
// payload, so the subject pins the signed finding.
func NewDisputeStatement(p *DisputePredicate) *Statement {
	return &Statement{
		Type:          StatementType,
		Subject:       []Subject{{Name: entryName(p.Entry), Digest: DigestSet{"sha256": strings.TrimPrefix(p.Finding.Record.PayloadDigest, "sha256:")}}},
		PredicateType: DisputePredicateType,
		Predicate:     p,
	}
}

// NewDisputePredicate builds a dispute's predicate; openedAt is formatted by
// FormatTime.
func NewDisputePredicate(entry ChangeEntry, number int64, openedAt time.Time, finding Finding, statement, evidence, toolVersion string) *DisputePredicate {
	return &DisputePredicate{
		Entry: entry, Number: number, OpenedAt: FormatTime(openedAt), Finding: finding,
		Statement: statement, Evidence: evidence, ToolVersion: toolVersion,
	}
}

// NewOutcomePredicate builds an outcome's predicate; decidedAt is formatted by
// FormatTime.
func NewOutcomePredicate(entry ChangeEntry, dispute OutcomeDispute, decision, suiteVersion, reason string, decidedAt time.Time, toolVersion string) *OutcomePredicate {
	return &OutcomePredicate{
		Entry: entry, Dispute: dispute, Decision: decision, SuiteVersion: suiteVersion,
		Reason: reason, DecidedAt: FormatTime(decidedAt), ToolVersion: toolVersion,
	}
}

// NewOutcomeStatement builds the statement of an outcome. Its subject is the entry's
// URL or package reference, with the hex SHA-256 of the dispute's payload.
func NewOutcomeStatement(p *OutcomePredicate) *Statement {
	return &Statement{
		Type:          StatementType,
		Subject:       []Subject{{Name: entryName(p.Entry), Digest: DigestSet{"sha256": strings.TrimPrefix(p.Dispute.Record.PayloadDigest, "sha256:")}}},
		PredicateType: OutcomePredicateType,
		Predicate:     p,
	}
}

// entryName is the subject name of an entry: its URL (remote) or package reference.
func entryName(e ChangeEntry) string {
	if e.URL != "" {
		return e.URL
	}
	return e.Package
}

// checkEntryRef applies the entry rule of the change, supply, dispute and outcome
// predicates and returns the subject name: a remote entry has a url and no package,
// any other a package.
func checkEntryRef(e ChangeEntry) (string, error) {
	if e.Kind == "remote" {
		if e.URL == "" || e.Package != "" {
			return "", &StatementError{Path: "/predicate/entry", Msg: "a remote entry has a url and no package"}
		}
		return e.URL, nil
	}
	if e.Package == "" || e.URL != "" {
		return "", &StatementError{Path: "/predicate/entry", Msg: "a package or repository entry has a package and no url"}
	}
	return e.Package, nil
}

// checkRecordSubject checks the one subject of a dispute or outcome: the entry's name
// with the hex digest of the record it names.
func checkRecordSubject(subjects []Subject, name string, ref RecordRef, what string) error {
	want := strings.TrimPrefix(ref.PayloadDigest, "sha256:")
	if len(subjects) != 1 || subjects[0].Name != name || len(subjects[0].Digest) != 1 || subjects[0].Digest["sha256"] != want {
		return &StatementError{Path: "/subject", Msg: "want one subject: the entry's url or package, with the digest of the " + what + "'s payload"}
	}
	return nil
}

// checkDispute applies the rules the dispute schema cannot express.
func checkDispute(raw json.RawMessage, subjects []Subject) (*DisputePredicate, error) {
	var p DisputePredicate
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, &StatementError{Path: "/predicate", Msg: err.Error()}
	}
	if err := CheckDisputeText(p.Statement); err != nil {
		return nil, &StatementError{Path: "/predicate/statement", Msg: err.Error()}
	}
	if err := CheckEvidenceURL(p.Evidence); err != nil {
		return nil, &StatementError{Path: "/predicate/evidence", Msg: err.Error()}
	}
	name, err := checkEntryRef(p.Entry)
	if err != nil {
		return nil, err
	}
	if err := checkRecordSubject(subjects, name, p.Finding.Record, "contested round"); err != nil {
		return nil, err
	}
	return &p, nil
}

// checkOutcome applies the rules the outcome schema cannot express: a corrected
// decision, and only it, names the suite version that corrects the finding.
func checkOutcome(raw json.RawMessage, subjects []Subject) (*OutcomePredicate, error) {
	var p OutcomePredicate
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, &StatementError{Path: "/predicate", Msg: err.Error()}
	}
	if (p.Decision == DecisionCorrected) != (p.SuiteVersion != "") {
		return nil, &StatementError{Path: "/predicate/suiteVersion", Msg: "a corrected decision, and only it, names the suite version"}
	}
	if err := CheckDisputeText(p.Reason); err != nil {
		return nil, &StatementError{Path: "/predicate/reason", Msg: err.Error()}
	}
	name, err := checkEntryRef(p.Entry)
	if err != nil {
		return nil, err
	}
	if err := checkRecordSubject(subjects, name, p.Dispute.Record, "dispute"); err != nil {
		return nil, err
	}
	return &p, nil
}

// OutcomeLinkError reports an outcome that does not decide the dispute it is checked
// against (CheckOutcomeLink).
type OutcomeLinkError struct{ Msg string }

func (e *OutcomeLinkError) Error() string { return "outcome does not link to the dispute: " + e.Msg }

// CheckOutcomeLink checks that outcome decides dispute: the same entry (kind, slug and
// locator), the dispute's number, and the dispute record's sequence number and payload
// digest (disputeDigest, "sha256:" + hex, of the dispute's DSSE payload; disputeSeq its
// ledger sequence number, 0 when unknown offline, e.g. a bare envelope).
func CheckOutcomeLink(outcome *OutcomePredicate, dispute *DisputePredicate, disputeDigest string, disputeSeq int64) error {
	switch {
	case outcome == nil || dispute == nil:
		return &OutcomeLinkError{Msg: "missing outcome or dispute"}
	case outcome.Entry != dispute.Entry:
		return &OutcomeLinkError{Msg: fmt.Sprintf("outcome of entry %s, dispute of entry %s", outcome.Entry.Slug, dispute.Entry.Slug)}
	case outcome.Dispute.Number != dispute.Number:
		return &OutcomeLinkError{Msg: fmt.Sprintf("outcome of dispute %d, dispute number %d", outcome.Dispute.Number, dispute.Number)}
	case outcome.Dispute.Record.PayloadDigest != disputeDigest:
		return &OutcomeLinkError{Msg: "the dispute's payload digest differs"}
	case disputeSeq != 0 && outcome.Dispute.Record.Seq != disputeSeq:
		return &OutcomeLinkError{Msg: fmt.Sprintf("outcome names record %d, the dispute is record %d", outcome.Dispute.Record.Seq, disputeSeq)}
	}
	return nil
}
