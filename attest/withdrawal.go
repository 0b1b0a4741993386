package attest

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"strings"
	"sync"
	"time"
)

// WithdrawalPredicateType identifies the withdrawal predicate, major version 1: an
// operator withdrew an entry's Verified, or restored it (see the package documentation,
// "Withdrawal predicate").
const WithdrawalPredicateType = "https://probity.dev/attestation/withdrawal/v1"

// The actions of a withdrawal record.
const (
	WithdrawalWithdrawn = "withdrawn" // Verified is withdrawn from the entry
	WithdrawalRestored  = "restored"  // a withdrawal is undone
)

// Bounds of the withdrawal predicate (its schema says the same).
const (
	MaxWithdrawalReason = 2000    // characters of the reason
	MaxWithdrawalNumber = 1000000 // the highest per-entry number
)

// WithdrawalPredicate is the predicate of https://probity.dev/attestation/withdrawal/v1.
// Members are declared in RFC 8785 order.
type WithdrawalPredicate struct {
	Action string `json:"action"`
	// At is when the operator decided: the time held to the signing key's window.
	At    string      `json:"at"`
	Entry ChangeEntry `json:"entry"`
	// Number is the record's per-entry number: 1, 2, … over the entry's withdrawals and
	// restorations.
	Number int64 `json:"number"`
	// Reason is the operator's reason, plain text, shown as such.
	Reason      string           `json:"reason"`
	Supply      WithdrawalSupply `json:"supply"`
	ToolVersion string           `json:"toolVersion"`
}

// WithdrawalSupply names the signed supply run whose Verified a withdrawal withdraws
// (the entry's newest Verified run): its ledger sequence number and "sha256:" + hex
// SHA-256 of its DSSE payload.
type WithdrawalSupply struct {
	PayloadDigest string `json:"payloadDigest"`
	Seq           int64  `json:"seq"`
}

//go:embed schema/withdrawal-v1.schema.json
var withdrawalSchemaJSON []byte

// WithdrawalSchemaJSON returns the JSON Schema of the withdrawal predicate.
func WithdrawalSchemaJSON() []byte { return bytes.Clone(withdrawalSchemaJSON) }

var withdrawalSchema = sync.OnceValues(func() (*Schema, error) { return CompileSchema(withdrawalSchemaJSON) })

// NewWithdrawalStatement builds the statement of a withdrawal or restoration of the
// entry's Verified. Its subject is the entry's url or package reference with the digest
// of the supply run's payload. Check or Sign applies the format's rules.
func NewWithdrawalStatement(entry ChangeEntry, number int64, action, reason string, at time.Time, supply WithdrawalSupply, toolVersion string) *Statement {
	name := entry.URL
	if name == "" {
		name = entry.Package
	}
	return &Statement{
		Type:          StatementType,
		Subject:       []Subject{{Name: name, Digest: DigestSet{"sha256": strings.TrimPrefix(supply.PayloadDigest, "sha256:")}}},
		PredicateType: WithdrawalPredicateType,
		Predicate: &WithdrawalPredicate{
			Action:      action,
			At:          FormatTime(at),
			Entry:       entry,
			Number:      number,
			Reason:      reason,
			Supply:      supply,
			ToolVersion: toolVersion,
		},
	}
}

// checkWithdrawal applies the rules the withdrawal schema cannot express: the entry
// names its url (remote) or package (any other kind), the reason is not blank, and the
// one subject is that name with the digest of the supply run's payload.
func checkWithdrawal(raw json.RawMessage, subjects []Subject) (*WithdrawalPredicate, error) {
	var p WithdrawalPredicate
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
	if strings.TrimSpace(p.Reason) == "" {
		return nil, &StatementError{Path: "/predicate/reason", Msg: "blank"}
	}
	d := strings.TrimPrefix(p.Supply.PayloadDigest, "sha256:")
	if len(subjects) != 1 || subjects[0].Name != name || len(subjects[0].Digest) != 1 || subjects[0].Digest["sha256"] != d {
		return nil, &StatementError{Path: "/subject", Msg: "want one subject: the entry's url or package, with the digest of the supply run's payload"}
	}
	return &p, nil
}
