package keys

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/probity-dev/probity/attest"
)

// Limits and fixed values of the key document format.
const (
	// FormatVersion is the format_version this package writes: version 2, which lists
	// the transparency log (member "log").
	FormatVersion = 2
	// FormatVersion1 is the first format, without the log member, which Parse still
	// reads so that old key documents and histories stay verifiable.
	FormatVersion1 = 1
	// FormatVersion3 is format 2 with the webhook member: the format of a document that
	// publishes a webhook signing key (the webhook_key_added version and every later
	// one). A document without a webhook key is written as format 2.
	FormatVersion3 = 3
	// AlgorithmEd25519 is the only algorithm a key may have.
	AlgorithmEd25519 = "Ed25519"
	// MaxDocumentSize is the largest key document Parse and Load accept, in bytes.
	MaxDocumentSize = 1 << 20
	// MaxKeys is the most keys a document may list.
	MaxKeys = 64
	// MaxIssuerLen is the longest issuer, in bytes.
	MaxIssuerLen = 256
	// MaxReasonLen is the longest revocation_reason, in bytes.
	MaxReasonLen = 200
	// KeyIDLen is the length of a key_id: hex digits of SHA-256 over the SPKI DER.
	KeyIDLen = 16
	// MaxOriginLen is the longest log origin, in bytes.
	MaxOriginLen = 256
	// ed25519SPKILen is the size of the DER SubjectPublicKeyInfo of an Ed25519 key.
	ed25519SPKILen = 44
)

// DocumentFile is the key document's file name in a key directory and beside an export;
// publish it at /.well-known/probity-keys.json.
const DocumentFile = "keys.json"

// Document is a key document: the public keys an issuer signs with, each with its
// validity window and revocation state. See the package documentation for the format.
type Document struct {
	FormatVersion int
	Issuer        string
	Keys          []Key
	// Log is the transparency log the issuer's records are appended to (format_version
	// 2 and 3); nil is JSON null in formats 2 and 3 and the absent member in format 1.
	Log *Log
	// Webhook is the key that signs the issuer's webhook deliveries: set exactly in
	// format_version 3, absent from the earlier formats.
	Webhook *Webhook
}

// Log names the issuer's transparency log: its origin (the first line of its
// checkpoints) and the C2SP signed-note verifier key its checkpoints are signed with.
type Log struct {
	Origin string `json:"origin"`
	Key    string `json:"key"` // "origin+hash+base64(0x01 || Ed25519 public key)"
}

// Key is one entry of a key document. Its JSON form always has all eight members in the
// documented order, with null for unset optional values. Times are written in
// attest.TimeLayout.
type Key struct {
	KeyID            string
	Algorithm        string
	SPKI             string // standard base64 of the DER SubjectPublicKeyInfo
	SPKISHA256       string // lower-case hex SHA-256 of the DER SubjectPublicKeyInfo
	ValidFrom        time.Time
	ValidUntil       *time.Time // nil: open-ended
	RevokedAt        *time.Time // nil: not revoked
	RevocationReason *string    // set iff RevokedAt is set

	pub ed25519.PublicKey // parsed from SPKI by NewKey and Validate
}

// DocumentError reports a key document that is malformed or breaks a rule of the format.
type DocumentError struct {
	// Path locates the offending value: "" for the document as a whole, a top-level
	// member ("format_version", "issuer", "keys"), a key ("keys[1]") or a member of a key
	// ("keys[1].valid_until").
	Path string
	// KeyID is the key_id of the key concerned, when Path is within a key and the
	// key_id is well-formed.
	KeyID string
	// Msg says what is wrong.
	Msg string
}

// Error renders e as, for example,
// "keys[1] (key_id 70222b3a2c05e79a): valid_until 2026-01-01T00:00:00.000Z is not after valid_from 2026-02-01T00:00:00.000Z".
func (e *DocumentError) Error() string {
	if strings.HasPrefix(e.Path, "keys[") {
		if i := strings.IndexByte(e.Path, ']'); i >= 0 {
			prefix := e.Path[:i+1]
			if e.KeyID != "" {
				prefix += " (key_id " + e.KeyID + ")"
			}
			if member := strings.TrimPrefix(e.Path[i+1:], "."); member != "" {
				return prefix + ": " + member + " " + e.Msg
			}
			return prefix + ": " + e.Msg
		}
	}
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + " " + e.Msg
}

func docErr(path, msg string, args ...any) *DocumentError {
	return &DocumentError{Path: path, Msg: fmt.Sprintf(msg, args...)}
}

// keyErr reports a problem with member (or, if member is "", the whole) of keys[i].
func keyErr(i int, keyID, member, msg string, args ...any) *DocumentError {
	path := fmt.Sprintf("keys[%d]", i)
	if member != "" {
		path += "." + member
	}
	if !isKeyID(keyID) {
		keyID = ""
	}
	return &DocumentError{Path: path, KeyID: keyID, Msg: fmt.Sprintf(msg, args...)}
}

// KeyID returns the key_id for a DER SubjectPublicKeyInfo: the first 16 lower-case hex
// digits of its SHA-256.
func KeyID(spkiDER []byte) string {
	sum := sha256.Sum256(spkiDER)
	return hex.EncodeToString(sum[:])[:KeyIDLen]
}

// NewKey returns the key document entry for pub, valid from validFrom (converted to UTC
// and truncated to the millisecond) with no end and not revoked.
func NewKey(pub ed25519.PublicKey, validFrom time.Time) (Key, error) {
	if len(pub) != ed25519.PublicKeySize {
		return Key{}, fmt.Errorf("ed25519 public key is %d bytes, want %d", len(pub), ed25519.PublicKeySize)
	}
	if validFrom.IsZero() {
		return Key{}, errors.New("valid_from is not set")
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return Key{}, fmt.Errorf("encoding public key: %w", err)
	}
	sum := sha256.Sum256(der)
	return Key{
		KeyID:      KeyID(der),
		Algorithm:  AlgorithmEd25519,
		SPKI:       base64.StdEncoding.EncodeToString(der),
		SPKISHA256: hex.EncodeToString(sum[:]),
		ValidFrom:  validFrom.UTC().Truncate(time.Millisecond),
		pub:        bytes.Clone(pub),
	}, nil
}

// PublicKey returns the key's Ed25519 public key, or nil if SPKI does not hold one.
func (k *Key) PublicKey() ed25519.PublicKey {
	if k.pub != nil {
		return bytes.Clone(k.pub)
	}
	pub, _, err := parseSPKI(k.SPKI)
	if err != nil {
		return nil
	}
	return pub
}

// ValidAt reports whether t lies in the key's validity window, valid_from <= t <=
// valid_until (no upper bound when ValidUntil is nil), comparing at millisecond precision.
// It ignores revocation; see Revoked.
func (k *Key) ValidAt(t time.Time) bool {
	t = t.Truncate(time.Millisecond)
	if t.Before(k.ValidFrom.Truncate(time.Millisecond)) {
		return false
	}
	return k.ValidUntil == nil || !t.After(k.ValidUntil.Truncate(time.Millisecond))
}

// Revoked reports whether the key has been revoked.
func (k *Key) Revoked() bool {
	return k.RevokedAt != nil
}

// Lookup returns the key with the given key_id.
func (d *Document) Lookup(keyID string) (*Key, bool) {
	for i := range d.Keys {
		if d.Keys[i].KeyID == keyID {
			return &d.Keys[i], true
		}
	}
	return nil, false
}

// Current returns the key to sign with at now: among the unrevoked keys valid at now,
// the one with the latest valid_from (the later-listed one if two are equal).
func (d *Document) Current(now time.Time) (*Key, bool) {
	var best *Key
	for i := range d.Keys {
		k := &d.Keys[i]
		if k.Revoked() || !k.ValidAt(now) {
			continue
		}
		if best == nil || !k.ValidFrom.Before(best.ValidFrom) {
			best = k
		}
	}
	return best, best != nil
}

// Validate checks every rule of the key document format that does not concern JSON
// syntax, and records each key's parsed public key. It returns a *DocumentError for the
// first violation found.
func (d *Document) Validate() error {
	if d.FormatVersion != FormatVersion && d.FormatVersion != FormatVersion1 && d.FormatVersion != FormatVersion3 {
		return docErr("format_version", "%d is not supported (want %d, %d or %d)", d.FormatVersion, FormatVersion1, FormatVersion, FormatVersion3)
	}
	switch {
	case d.FormatVersion == FormatVersion3 && d.Webhook == nil:
		return docErr("webhook", "is required in format_version 3 (a document without a webhook key is format_version 2)")
	case d.FormatVersion != FormatVersion3 && d.Webhook != nil:
		return docErr("webhook", "is not a member of format_version %d (a document with a webhook key is format_version 3)", d.FormatVersion)
	}
	if d.Log != nil {
		if d.FormatVersion == FormatVersion1 {
			return docErr("log", "is not a member of format_version 1")
		}
		if err := d.Log.validate(); err != nil {
			return err
		}
	}
	if err := checkText(d.Issuer, MaxIssuerLen); err != "" {
		return docErr("issuer", "%s", err)
	}
	if n := len(d.Keys); n < 1 || n > MaxKeys {
		return docErr("keys", "has %d entries; want 1 to %d", n, MaxKeys)
	}
	byID := make(map[string]int, len(d.Keys))
	bySPKI := make(map[string]int, len(d.Keys))
	for i := range d.Keys {
		k := &d.Keys[i]
		if err := k.validate(i); err != nil {
			return err
		}
		if j, dup := bySPKI[k.SPKI]; dup {
			return keyErr(i, k.KeyID, "spki", "is the same key as keys[%d]", j)
		}
		if j, dup := byID[k.KeyID]; dup {
			return keyErr(i, k.KeyID, "key_id", "is also the key_id of keys[%d]", j)
		}
		bySPKI[k.SPKI], byID[k.KeyID] = i, i
	}
	if d.Webhook != nil {
		if err := d.Webhook.validate(d); err != nil {
			return err
		}
	}
	return nil
}

// validate checks k as keys[i] and sets k.pub.
func (k *Key) validate(i int) error {
	id := k.KeyID
	if k.Algorithm != AlgorithmEd25519 {
		return keyErr(i, id, "algorithm", "%q is not supported (want %q)", k.Algorithm, AlgorithmEd25519)
	}
	pub, der, err := parseSPKI(k.SPKI)
	if err != nil {
		return keyErr(i, id, "spki", "%v", err)
	}
	sum := sha256.Sum256(der)
	if want := hex.EncodeToString(sum[:]); k.SPKISHA256 != want {
		return keyErr(i, id, "spki_sha256", "%q does not match the SHA-256 of spki (%s)", k.SPKISHA256, want)
	}
	if want := KeyID(der); k.KeyID != want {
		return keyErr(i, id, "key_id", "%q does not match the key_id derived from spki (%s)", k.KeyID, want)
	}
	if k.ValidFrom.IsZero() {
		return keyErr(i, id, "valid_from", "is not set")
	}
	for _, m := range []struct {
		name string
		t    *time.Time
	}{{"valid_from", &k.ValidFrom}, {"valid_until", k.ValidUntil}, {"revoked_at", k.RevokedAt}} {
		if m.t == nil {
			continue
		}
		if back, err := attest.ParseTime(attest.FormatTime(*m.t)); err != nil || !back.Equal(*m.t) {
			return keyErr(i, id, m.name, "%s cannot be written exactly as a UTC timestamp with milliseconds", m.t.String())
		}
	}
	if k.ValidUntil != nil && !k.ValidUntil.After(k.ValidFrom) {
		return keyErr(i, id, "valid_until", "%s is not after valid_from %s", attest.FormatTime(*k.ValidUntil), attest.FormatTime(k.ValidFrom))
	}
	switch {
	case k.RevokedAt != nil && k.RevocationReason == nil:
		return keyErr(i, id, "revocation_reason", "is null but revoked_at is set; both must be set or both null")
	case k.RevokedAt == nil && k.RevocationReason != nil:
		return keyErr(i, id, "revoked_at", "is null but revocation_reason is set; both must be set or both null")
	case k.RevocationReason != nil:
		if err := checkText(*k.RevocationReason, MaxReasonLen); err != "" {
			return keyErr(i, id, "revocation_reason", "%s", err)
		}
	}
	k.pub = pub
	return nil
}

// CheckRevocationReason reports what is wrong with reason as a revocation_reason: empty,
// longer than MaxReasonLen bytes, invalid UTF-8 or holding a control character.
func CheckRevocationReason(reason string) error {
	if msg := checkText(reason, MaxReasonLen); msg != "" {
		return fmt.Errorf("revocation reason %s", msg)
	}
	return nil
}

// checkText returns what is wrong with a human-readable string member, or "".
func checkText(s string, maxLen int) string {
	switch {
	case s == "":
		return "is empty"
	case len(s) > maxLen:
		return fmt.Sprintf("is %d bytes long; at most %d are allowed", len(s), maxLen)
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	case strings.ContainsFunc(s, unicode.IsControl):
		return "contains a control character"
	}
	return ""
}

// parseSPKI decodes the spki member: strict standard base64 of the 44-byte DER
// SubjectPublicKeyInfo of an Ed25519 key, in the one encoding x509 produces.
func parseSPKI(s string) (ed25519.PublicKey, []byte, error) {
	der, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil || base64.StdEncoding.EncodeToString(der) != s {
		return nil, nil, errors.New("is not canonical standard base64")
	}
	if len(der) != ed25519SPKILen {
		return nil, nil, fmt.Errorf("decodes to %d bytes; an Ed25519 SubjectPublicKeyInfo is %d", len(der), ed25519SPKILen)
	}
	pk, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, nil, fmt.Errorf("is not a DER SubjectPublicKeyInfo: %v", err)
	}
	pub, ok := pk.(ed25519.PublicKey)
	if !ok || len(pub) != ed25519.PublicKeySize {
		return nil, nil, fmt.Errorf("holds a %T, not an Ed25519 public key", pk)
	}
	again, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil || !bytes.Equal(again, der) {
		return nil, nil, errors.New("is not the canonical DER encoding of its Ed25519 key")
	}
	return pub, der, nil
}

func isKeyID(s string) bool {
	if len(s) != KeyIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Parse decodes and validates a key document. It applies attest.CheckJSON, then decodes
// strictly (exact member names, all members present, no unknown members, right JSON
// types, nothing after the document), then runs Validate.
func Parse(data []byte) (*Document, error) {
	if len(data) > MaxDocumentSize {
		return nil, docErr("", "key document is larger than %d bytes", MaxDocumentSize)
	}
	if err := attest.CheckJSON(data); err != nil {
		return nil, err
	}
	// format_version first: it decides which members the document has.
	var top map[string]json.RawMessage
	if err := decodeStrict(data, &top, "an object"); err != nil {
		return nil, docErr("", "key document %v", err)
	}
	d := new(Document)
	if raw, ok := top["format_version"]; ok {
		if err := decodeInt(raw, &d.FormatVersion); err != nil {
			return nil, docErr("format_version", "%v", err)
		}
	}
	names := documentMembers
	switch d.FormatVersion {
	case FormatVersion:
	case FormatVersion1:
		names = documentMembers1
	case FormatVersion3:
		names = documentMembers3
	default:
		if _, ok := top["format_version"]; ok { // before anything whose shape a later version may change
			return nil, docErr("format_version", "%d is not supported (want %d, %d or %d)", d.FormatVersion, FormatVersion1, FormatVersion, FormatVersion3)
		}
	}
	members, err := checkMembers(top, names)
	if err != nil {
		return nil, docErr("", "key document %v", err)
	}
	if err := decodeString(members["issuer"], &d.Issuer); err != nil {
		return nil, docErr("issuer", "%v", err)
	}
	var raws []json.RawMessage
	if err := decodeStrict(members["keys"], &raws, "an array"); err != nil {
		return nil, docErr("keys", "%v", err)
	}
	if n := len(raws); n < 1 || n > MaxKeys {
		return nil, docErr("keys", "has %d entries; want 1 to %d", n, MaxKeys)
	}
	if d.FormatVersion == FormatVersion || d.FormatVersion == FormatVersion3 {
		if d.Log, err = decodeLog(members["log"]); err != nil {
			return nil, err
		}
	}
	if d.FormatVersion == FormatVersion3 {
		if d.Webhook, err = decodeWebhook(members["webhook"]); err != nil {
			return nil, err
		}
	}
	d.Keys = make([]Key, len(raws))
	for i, raw := range raws {
		if err := d.Keys[i].decode(raw); err != nil {
			var fe *fieldError
			if errors.As(err, &fe) {
				return nil, keyErr(i, d.Keys[i].KeyID, fe.member, "%s", fe.msg)
			}
			return nil, keyErr(i, d.Keys[i].KeyID, "", "%v", err)
		}
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return d, nil
}

// Load reads and parses the key document at path.
func Load(path string) (*Document, error) {
	data, err := readFileLimited(path, MaxDocumentSize)
	if err != nil {
		return nil, fmt.Errorf("couldn't load key document %q: %w", path, err)
	}
	d, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("couldn't load key document %q: %w", path, err)
	}
	return d, nil
}

// readFileLimited reads at most limit bytes of the file at path and fails if it is larger.
func readFileLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(f, limit)
}

// readLimited reads r to the end and fails if it holds more than limit bytes.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("file is larger than %d bytes", limit)
	}
	return data, nil
}

// MarshalDocument validates d and encodes it as JSON indented by two spaces, with a
// trailing newline. Equal documents always encode to identical bytes.
func MarshalDocument(d *Document) ([]byte, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return encodeJSON(d.wire(), "  ")
}

// CanonicalDocument validates d and returns its canonical bytes (attest.Marshal:
// nfc-jcs/v1), the form a signed key document version holds and its digests cover.
func CanonicalDocument(d *Document) ([]byte, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return attest.Marshal(d.wire())
}

// DocumentDigest returns the lower-case hex SHA-256 of d's canonical bytes
// (CanonicalDocument): the subject digest of its signed version.
func DocumentDigest(d *Document) (string, error) {
	c, err := CanonicalDocument(d)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]), nil
}

// SameDocument reports whether a and b have the same canonical bytes, that is whether
// they publish exactly the same keys, windows, revocations and log. Invalid documents
// are never the same.
func SameDocument(a, b *Document) bool {
	ca, err1 := CanonicalDocument(a)
	cb, err2 := CanonicalDocument(b)
	return err1 == nil && err2 == nil && bytes.Equal(ca, cb)
}

// The member order of each format, which the wire structs below follow.
var (
	documentMembers1 = []string{"format_version", "issuer", "keys"}
	documentMembers  = []string{"format_version", "issuer", "keys", "log"}
	documentMembers3 = []string{"format_version", "issuer", "keys", "log", "webhook"}
)

type docWire1 struct {
	FormatVersion int    `json:"format_version"`
	Issuer        string `json:"issuer"`
	Keys          []Key  `json:"keys"`
}

type docWire2 struct {
	FormatVersion int    `json:"format_version"`
	Issuer        string `json:"issuer"`
	Keys          []Key  `json:"keys"`
	Log           *Log   `json:"log"`
}

type docWire3 struct {
	FormatVersion int      `json:"format_version"`
	Issuer        string   `json:"issuer"`
	Keys          []Key    `json:"keys"`
	Log           *Log     `json:"log"`
	Webhook       *Webhook `json:"webhook"`
}

// wire returns the JSON form of d for its format_version.
func (d *Document) wire() any {
	switch d.FormatVersion {
	case FormatVersion1:
		return docWire1{d.FormatVersion, d.Issuer, d.Keys}
	case FormatVersion3:
		return docWire3{d.FormatVersion, d.Issuer, d.Keys, d.Log, d.Webhook}
	}
	return docWire2{d.FormatVersion, d.Issuer, d.Keys, d.Log}
}

// MarshalJSON encodes d compactly in its format's member order, without validating it
// (MarshalDocument validates).
func (d Document) MarshalJSON() ([]byte, error) { return encodeJSON(d.wire(), "") }

// UnmarshalJSON decodes a document with encoding/json's rules, without the strict checks
// or the validation of Parse, which is what reading a published document should use.
func (d *Document) UnmarshalJSON(data []byte) error {
	var w docWire3
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*d = Document(w)
	return nil
}

// encodeJSON encodes v without HTML escaping, indented by indent if it is not empty, and
// with a trailing newline only when indented.
func encodeJSON(v any, indent string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	if indent == "" {
		return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
	}
	return buf.Bytes(), nil
}

// keyWire is the JSON form of Key; field order is the member order.
type keyWire struct {
	KeyID            string  `json:"key_id"`
	Algorithm        string  `json:"algorithm"`
	SPKI             string  `json:"spki"`
	SPKISHA256       string  `json:"spki_sha256"`
	ValidFrom        string  `json:"valid_from"`
	ValidUntil       *string `json:"valid_until"`
	RevokedAt        *string `json:"revoked_at"`
	RevocationReason *string `json:"revocation_reason"`
}

var keyMembers = []string{"key_id", "algorithm", "spki", "spki_sha256", "valid_from", "valid_until", "revoked_at", "revocation_reason"}

// MarshalJSON encodes k with all eight members in the documented order, times in
// attest.TimeLayout and null for unset values.
func (k Key) MarshalJSON() ([]byte, error) {
	optTime := func(t *time.Time) *string {
		if t == nil {
			return nil
		}
		s := attest.FormatTime(*t)
		return &s
	}
	return encodeJSON(keyWire{
		KeyID:            k.KeyID,
		Algorithm:        k.Algorithm,
		SPKI:             k.SPKI,
		SPKISHA256:       k.SPKISHA256,
		ValidFrom:        attest.FormatTime(k.ValidFrom),
		ValidUntil:       optTime(k.ValidUntil),
		RevokedAt:        optTime(k.RevokedAt),
		RevocationReason: k.RevocationReason,
	}, "")
}

// UnmarshalJSON decodes one key object strictly: exactly the eight members, each of the
// right type, timestamps in attest.TimeLayout. It does not check the rules Validate
// checks (SPKI, digests, windows).
func (k *Key) UnmarshalJSON(data []byte) error {
	if err := k.decode(data); err != nil {
		var fe *fieldError
		if errors.As(err, &fe) {
			return fmt.Errorf("key %s %s", fe.member, fe.msg)
		}
		return fmt.Errorf("key %w", err)
	}
	return nil
}

// fieldError is a decoding problem with one member of a key object.
type fieldError struct{ member, msg string }

func (e *fieldError) Error() string { return e.member + " " + e.msg }

// decode fills k from a key object. On error, k.KeyID holds the key_id if it decoded.
func (k *Key) decode(data []byte) error {
	*k = Key{}
	members, err := decodeObject(data, keyMembers)
	if err != nil {
		if members != nil { // name the key in the error if possible
			var id string
			if decodeString(members["key_id"], &id) == nil {
				k.KeyID = id
			}
		}
		return err
	}
	// key_id first, so later errors can name the key.
	strs := []struct {
		name string
		dst  *string
	}{{"key_id", &k.KeyID}, {"algorithm", &k.Algorithm}, {"spki", &k.SPKI}, {"spki_sha256", &k.SPKISHA256}}
	for _, s := range strs {
		if err := decodeString(members[s.name], s.dst); err != nil {
			return &fieldError{s.name, err.Error()}
		}
	}
	var from string
	if err := decodeString(members["valid_from"], &from); err != nil {
		return &fieldError{"valid_from", err.Error()}
	}
	t, err := attest.ParseTime(from)
	if err != nil {
		return &fieldError{"valid_from", err.Error()}
	}
	k.ValidFrom = t
	for _, m := range []struct {
		name string
		dst  **time.Time
	}{{"valid_until", &k.ValidUntil}, {"revoked_at", &k.RevokedAt}} {
		s, err := decodeNullableString(members[m.name])
		if err != nil {
			return &fieldError{m.name, err.Error()}
		}
		if s == nil {
			continue
		}
		t, err := attest.ParseTime(*s)
		if err != nil {
			return &fieldError{m.name, err.Error()}
		}
		*m.dst = &t
	}
	k.RevocationReason, err = decodeNullableString(members["revocation_reason"])
	if err != nil {
		return &fieldError{"revocation_reason", err.Error()}
	}
	return nil
}

// decodeObject decodes a JSON object whose member names must be exactly names (compared
// case-sensitively, unlike encoding/json's field matching). If the object decodes but its
// member names are wrong, it returns the members along with the error.
func decodeObject(data []byte, names []string) (map[string]json.RawMessage, error) {
	var members map[string]json.RawMessage
	if err := decodeStrict(data, &members, "an object"); err != nil {
		return nil, err
	}
	return checkMembers(members, names)
}

// checkMembers checks that the member names of a decoded object are exactly names.
func checkMembers(members map[string]json.RawMessage, names []string) (map[string]json.RawMessage, error) {
	var unknown []string
	for name := range members {
		if !slices.Contains(names, name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown) // deterministic error
		return members, fmt.Errorf("has unknown member %q", unknown[0])
	}
	for _, name := range names {
		if _, ok := members[name]; !ok {
			return members, fmt.Errorf("is missing member %q (all members are required; use null for unset values)", name)
		}
	}
	return members, nil
}

// decodeStrict decodes one JSON value of the kind described by want ("an object",
// "an array", "a string", "an integer") into v, rejecting null, unknown fields and
// trailing data.
func decodeStrict(data []byte, v any, want string) error {
	if got := jsonKind(data); got != want && !(want == "an integer" && got == "a number") {
		return fmt.Errorf("must be %s, not %s", want, got)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("must be %s: %v", want, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("has trailing data")
	}
	return nil
}

func decodeInt(data []byte, v *int) error { return decodeStrict(data, v, "an integer") }

func decodeString(data []byte, v *string) error { return decodeStrict(data, v, "a string") }

func decodeNullableString(data []byte) (*string, error) {
	if jsonKind(data) == "null" {
		return nil, nil
	}
	var s string
	if err := decodeStrict(data, &s, "a string"); err != nil {
		return nil, fmt.Errorf("must be a string or null, not %s", jsonKind(data))
	}
	return &s, nil
}

// jsonKind names the kind of JSON value data starts with.
func jsonKind(data []byte) string {
	data = bytes.TrimLeft(data, " \t\r\n")
	if len(data) == 0 {
		return "empty"
	}
	switch data[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}
