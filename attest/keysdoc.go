package attest

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// KeysPredicateType identifies the keys predicate, major version 1: one signed version
// of an issuer's key document.
const KeysPredicateType = "https://probity.dev/attestation/keys/v1"

// The events a key document version records. Version 1 is always generated; every later
// version is exactly one of the others (package keys holds each to the change it makes).
const (
	KeysEventGenerated   = "generated"     // version 1: the history starts
	KeysEventRotated     = "rotated"       // a new signing key is added (the old one's window ends)
	KeysEventRevoked     = "revoked"       // one or more keys are revoked
	KeysEventLogKeyAdded = "log_key_added" // the log member is set for the first time
	// KeysEventWebhookKeyAdded: the webhook member (format_version 3) is set for the
	// first time.
	KeysEventWebhookKeyAdded = "webhook_key_added"
)

// KeysEvents lists the events in schema order.
var KeysEvents = []string{KeysEventGenerated, KeysEventRotated, KeysEventRevoked, KeysEventLogKeyAdded, KeysEventWebhookKeyAdded}

// MaxKeysVersion is the highest version number the schema allows.
const MaxKeysVersion = 1000000

// KeysPredicate is the predicate of https://probity.dev/attestation/keys/v1. Document is
// the key document (package keys, format_version 2, or 3 once it lists a webhook key) as a JSON object; in a signed
// statement it is in canonical form, and the subject digest is its SHA-256. Members are
// declared in RFC 8785 order.
type KeysPredicate struct {
	Document json.RawMessage `json:"document"`
	Event    string          `json:"event"`
	IssuedAt string          `json:"issuedAt"`
	Previous string          `json:"previous,omitempty"`
	Version  int             `json:"version"`
}

//go:embed schema/keys-v1.schema.json
var keysSchemaJSON []byte

// KeysSchemaJSON returns the JSON Schema of the keys predicate.
func KeysSchemaJSON() []byte { return bytes.Clone(keysSchemaJSON) }

var keysSchema = sync.OnceValues(func() (*Schema, error) { return CompileSchema(keysSchemaJSON) })

// KeysDocumentDigest returns the lower-case hex SHA-256 of a key document's canonical
// bytes, the subject digest of its version. document must already be canonical
// (keys.CanonicalDocument); NewKeysStatement canonicalizes it in any case.
func KeysDocumentDigest(canonicalDocument []byte) string {
	sum := sha256.Sum256(canonicalDocument)
	return hex.EncodeToString(sum[:])
}

// NewKeysStatement builds the statement of key document version number version for
// issuer: document is the key document's JSON (any spacing and member order; it is
// put in canonical form), previous the "sha256:"+hex digest of the previous version's
// canonical document ("" for version 1). Check or Sign applies the format's rules.
func NewKeysStatement(issuer string, version int, event string, issuedAt time.Time, document []byte, previous string) (*Statement, error) {
	canon, err := Canonicalize(document)
	if err != nil {
		return nil, fmt.Errorf("attest: key document: %w", err)
	}
	return &Statement{
		Type:          StatementType,
		Subject:       []Subject{{Name: issuer, Digest: DigestSet{"sha256": KeysDocumentDigest(canon)}}},
		PredicateType: KeysPredicateType,
		Predicate: &KeysPredicate{
			Document: canon,
			Event:    event,
			IssuedAt: FormatTime(issuedAt),
			Previous: previous,
			Version:  version,
		},
	}, nil
}

// checkKeys applies the rules the keys schema cannot express: previous is present
// exactly after version 1, version 1 (and only it) is generated, and the one subject is
// the document's issuer with the SHA-256 of the canonical document. The payload being
// canonical, the document's bytes within it are canonical too.
func checkKeys(raw json.RawMessage, subjects []Subject) (*KeysPredicate, error) {
	var p KeysPredicate
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, &StatementError{Path: "/predicate", Msg: err.Error()}
	}
	switch {
	case p.Version == 1 && p.Previous != "":
		return nil, &StatementError{Path: "/predicate/previous", Msg: "version 1 has no previous version"}
	case p.Version > 1 && p.Previous == "":
		return nil, &StatementError{Path: "/predicate/previous", Msg: fmt.Sprintf("version %d must name the previous version's digest", p.Version)}
	case (p.Version == 1) != (p.Event == KeysEventGenerated):
		return nil, &StatementError{Path: "/predicate/event", Msg: "version 1, and only version 1, is generated"}
	}
	var doc struct {
		Issuer string `json:"issuer"`
	}
	if err := json.Unmarshal(p.Document, &doc); err != nil {
		return nil, &StatementError{Path: "/predicate/document", Msg: err.Error()}
	}
	if len(subjects) != 1 || subjects[0].Name != doc.Issuer || len(subjects[0].Digest) != 1 ||
		subjects[0].Digest["sha256"] != KeysDocumentDigest(p.Document) {
		return nil, &StatementError{Path: "/subject", Msg: "want one subject: the document's issuer, with the sha256 of the canonical document"}
	}
	return &p, nil
}
