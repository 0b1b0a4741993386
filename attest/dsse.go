package attest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
)

// MaxSignatures is the most signatures an envelope may carry.
const MaxSignatures = 4

// MaxPayloadSize bounds a statement's canonical bytes.
const MaxPayloadSize = 1 << 20

// ErrUnknownPredicateType is returned for a statement whose predicateType this version of
// Probity does not know.
var ErrUnknownPredicateType = errors.New("unknown predicateType")

// A StatementError reports a statement that is well-formed JSON and schema-valid but
// breaks a rule of the format, naming the offending member as a JSON Pointer.
type StatementError struct {
	Path string
	Msg  string
}

func (e *StatementError) Error() string { return fmt.Sprintf("statement %s: %s", e.Path, e.Msg) }

// Envelope is a DSSE envelope.
type Envelope = dsse.Envelope

// Signature is one DSSE signature.
type Signature = dsse.Signature

// Signer signs the PAE bytes of a payload and names its key id; keys/signing.Signer is the
// Ed25519 implementation.
type Signer = dsse.Signer

// DecodedStatement is a statement read back from canonical bytes and checked against the
// rules of its predicate type.
type DecodedStatement struct {
	Type          string
	Subject       []Subject
	PredicateType string
	// Predicate is the raw canonical predicate.
	Predicate json.RawMessage
	// Probe is set for ProbePredicateType.
	Probe *ProbePredicate
	// Change is set for ChangePredicateType.
	Change *ChangePredicate
	// Supply is set for SupplyPredicateType.
	Supply *SupplyPredicate
	// Keys is set for KeysPredicateType.
	Keys *KeysPredicate
	// Dispute is set for DisputePredicateType.
	Dispute *DisputePredicate
	// Outcome is set for OutcomePredicateType.
	Outcome *OutcomePredicate
	// Withdrawal is set for WithdrawalPredicateType.
	Withdrawal *WithdrawalPredicate
	// ObservedAt is the predicate's time, which must lie in the signing key's window: a
	// probe's observedAt, a change's recordedAt, a supply run's evaluatedAt, a
	// dispute's openedAt, an outcome's decidedAt, a withdrawal's at, a key document
	// version's issuedAt.
	// Baseline is set for BaselinePredicateType.
	Baseline *BaselinePredicate
	// ObservedAt is the predicate's time, which must lie in the signing key's window: a
	// probe's observedAt, a change's recordedAt, a supply run's evaluatedAt, a key
	// document version's issuedAt, a baseline's approvedAt.
	ObservedAt time.Time
}

// Sign encodes st canonically, checks it against every rule a verifier applies (Check),
// and signs the canonical bytes with each signer. It returns the envelope and the
// canonical payload. A statement checked already, as the constructors return it, is
// signed with Checked.Sign instead, without a second check.
func Sign(ctx context.Context, st *Statement, signers ...Signer) (*Envelope, []byte, error) {
	c, err := Check(st)
	if err != nil {
		return nil, nil, err
	}
	return c.Sign(ctx, signers...)
}

// SignPayload signs canonical payload bytes as they are. Use Sign unless the bytes were
// produced by Marshal and checked already.
func SignPayload(ctx context.Context, payload []byte, signers ...Signer) (*Envelope, error) {
	if len(signers) == 0 || len(signers) > MaxSignatures {
		return nil, fmt.Errorf("attest: %d signers; want 1 to %d", len(signers), MaxSignatures)
	}
	es, err := dsse.NewEnvelopeSigner(signers...)
	if err != nil {
		return nil, err
	}
	env, err := es.SignPayload(ctx, PayloadType, payload)
	if err != nil {
		return nil, fmt.Errorf("attest: sign: %w", err)
	}
	for _, s := range env.Signatures {
		if s.KeyID == "" {
			return nil, errors.New("attest: a signer has no key id")
		}
	}
	return env, nil
}

// PAE returns the DSSE pre-authentication encoding of payload, the bytes each signature
// covers.
func PAE(payload []byte) []byte { return dsse.PAE(PayloadType, payload) }

// EncodeEnvelope returns the envelope as one line of JSON with members in the order
// payloadType, payload, signatures, and each signature as keyid, sig. No newline.
func EncodeEnvelope(env *Envelope) ([]byte, error) {
	if env.Signatures == nil {
		e := *env
		e.Signatures = []Signature{}
		env = &e
	}
	return json.Marshal(env)
}

// ParseEnvelope decodes an envelope strictly: it must pass CheckJSON, hold exactly the
// members payloadType, payload and signatures (each signature exactly keyid and sig),
// and use standard padded base64 that re-encodes to the same text. It returns the
// envelope and the decoded payload; it checks neither signatures nor payload contents.
func ParseEnvelope(data []byte) (*Envelope, []byte, error) {
	if len(data) > 2*MaxPayloadSize {
		return nil, nil, fmt.Errorf("envelope of %d bytes exceeds %d", len(data), 2*MaxPayloadSize)
	}
	if err := CheckJSON(data); err != nil {
		return nil, nil, err
	}
	tree, _, err := parseTree(data)
	if err != nil {
		return nil, nil, err
	}
	root, ok := tree.(map[string]any)
	if !ok {
		return nil, nil, errors.New("envelope: not a JSON object")
	}
	for k := range root {
		if k != "payloadType" && k != "payload" && k != "signatures" {
			return nil, nil, fmt.Errorf("envelope: unknown member %s", quoteForError(k))
		}
	}
	env := &Envelope{}
	if env.PayloadType, ok = root["payloadType"].(string); !ok {
		return nil, nil, errors.New(`envelope: "payloadType" missing or not a string`)
	}
	if env.Payload, ok = root["payload"].(string); !ok {
		return nil, nil, errors.New(`envelope: "payload" missing or not a string`)
	}
	sigs, ok := root["signatures"].([]any)
	if !ok {
		return nil, nil, errors.New(`envelope: "signatures" missing or not an array`)
	}
	payload, err := decodeBase64(env.Payload)
	if err != nil {
		return nil, nil, fmt.Errorf("envelope payload: %w", err)
	}
	if len(sigs) > MaxSignatures*4 {
		return nil, nil, fmt.Errorf("envelope: %d signatures", len(sigs))
	}
	env.Signatures = make([]Signature, 0, len(sigs))
	for i, e := range sigs {
		m, ok := e.(map[string]any)
		keyID, ok1 := m["keyid"].(string)
		sig, ok2 := m["sig"].(string)
		if !ok || !ok1 || !ok2 || len(m) != 2 {
			return nil, nil, fmt.Errorf(`envelope: signatures[%d] must hold exactly the strings "keyid" and "sig"`, i)
		}
		if _, err := decodeBase64(sig); err != nil {
			return nil, nil, fmt.Errorf("envelope: signatures[%d].sig: %w", i, err)
		}
		env.Signatures = append(env.Signatures, Signature{KeyID: keyID, Sig: sig})
	}
	return env, payload, nil
}

// DecodeBase64 decodes standard padded base64 and rejects every other spelling: URL
// alphabet, missing padding, non-zero trailing bits, whitespace.
func DecodeBase64(s string) ([]byte, error) { return decodeBase64(s) }

func decodeBase64(s string) ([]byte, error) {
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, errors.New("not standard padded base64")
	}
	if base64.StdEncoding.EncodeToString(b) != s {
		return nil, errors.New("not standard padded base64")
	}
	return b, nil
}

var (
	hex64  = regexp.MustCompile(`^[0-9a-f]{64}$`)
	hex128 = regexp.MustCompile(`^[0-9a-f]{128}$`)
)

// AuthRequiredDigest is the subject digest (sha256, hex) of an auth_required statement,
// which has no tool surface to pin: SHA-256 over the canonical JSON string of the subject
// name.
func AuthRequiredDigest(name string) string {
	sum := sha256.Sum256(appendString(nil, normalize(name)))
	return hex.EncodeToString(sum[:])
}

// ErrNotCanonical is returned by DecodeStatement for a payload that is not exactly its own
// canonical form.
var ErrNotCanonical = errors.New("payload is not in nfc-jcs/v1 canonical form")

// DecodeStatement reads a statement's payload bytes and applies every rule of the format:
// the bytes are exactly canonical, the statement has exactly the in-toto v1 shape, the
// predicate type is known, the predicate is valid against its JSON Schema, and the rules
// the schema cannot express hold (coverage and subject digest agree, check ids are
// unique, UNVERIFIED carries a reason, auth_required covers only what it can). The
// payload is scanned once; errors are *JSONError, ErrNotCanonical (wrapped),
// ErrUnknownPredicateType (wrapped), *SchemaError or *StatementError.
func DecodeStatement(payload []byte) (*DecodedStatement, error) {
	if len(payload) > MaxPayloadSize {
		return nil, &StatementError{Path: "/", Msg: fmt.Sprintf("%d bytes exceed %d", len(payload), MaxPayloadSize)}
	}
	canon, err := Canonicalize(payload)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(canon, payload) {
		return nil, ErrNotCanonical
	}
	return decodeCanonical(payload)
}

// decodeCanonical is DecodeStatement for payload bytes known to be their own canonical
// form (Marshal's): every rule of the format but the canonical comparison. It is the one
// definition of those rules, for the verifier and for Check.
func decodeCanonical(payload []byte) (*DecodedStatement, error) {
	if len(payload) > MaxPayloadSize {
		return nil, &StatementError{Path: "/", Msg: fmt.Sprintf("%d bytes exceed %d", len(payload), MaxPayloadSize)}
	}
	tree, spans, err := parseTree(payload)
	if err != nil {
		return nil, err
	}
	root, ok := tree.(map[string]any)
	if !ok {
		return nil, &StatementError{Path: "/", Msg: "not a JSON object"}
	}
	for k := range root {
		switch k {
		case "_type", "subject", "predicateType", "predicate":
		default:
			return nil, &StatementError{Path: "/" + pointerEscape(k), Msg: "member is not allowed"}
		}
	}
	ds := &DecodedStatement{}
	if ds.Type, ok = root["_type"].(string); !ok {
		return nil, &StatementError{Path: "/_type", Msg: "missing or not a string"}
	}
	if ds.Type != StatementType {
		return nil, &StatementError{Path: "/_type", Msg: fmt.Sprintf("want %s", StatementType)}
	}
	if ds.Subject, err = subjectsFromTree(root["subject"]); err != nil {
		return nil, err
	}
	if ds.PredicateType, ok = root["predicateType"].(string); !ok {
		return nil, &StatementError{Path: "/predicateType", Msg: "missing or not a string"}
	}
	pred, present := root["predicate"]
	if !present {
		return nil, &StatementError{Path: "/predicate", Msg: "missing"}
	}
	schema, ok := PredicateSchema(ds.PredicateType)
	if !ok {
		return ds, fmt.Errorf("%w %s", ErrUnknownPredicateType, quoteForError(ds.PredicateType))
	}
	if err := schema.validate(pred, newJSONPath("/predicate")); err != nil {
		return ds, err
	}
	if err := checkSubjects(ds.Subject); err != nil {
		return ds, err
	}
	ds.Predicate = spans["predicate"]
	switch ds.PredicateType {
	case ProbePredicateType:
		p := probeFromTree(pred.(map[string]any))
		ds.Probe = p
		t, err := ParseTime(p.ObservedAt)
		if err != nil {
			return ds, &StatementError{Path: "/predicate/observedAt", Msg: err.Error()}
		}
		ds.ObservedAt = t
		if err := checkProbe(p, ds.Subject); err != nil {
			return ds, err
		}
	case ChangePredicateType:
		c, err := checkChange(ds.Predicate, ds.Subject)
		if err != nil {
			return ds, err
		}
		ds.Change = c
		t, err := ParseTime(c.RecordedAt)
		if err != nil {
			return ds, &StatementError{Path: "/predicate/recordedAt", Msg: err.Error()}
		}
		ds.ObservedAt = t
	case SupplyPredicateType:
		sp, err := checkSupply(ds.Predicate, ds.Subject)
		if err != nil {
			return ds, err
		}
		ds.Supply = sp
		t, err := ParseTime(sp.EvaluatedAt)
		if err != nil {
			return ds, &StatementError{Path: "/predicate/evaluatedAt", Msg: err.Error()}
		}
		ds.ObservedAt = t
	case KeysPredicateType:
		kp, err := checkKeys(ds.Predicate, ds.Subject)
		if err != nil {
			return ds, err
		}
		ds.Keys = kp
		t, err := ParseTime(kp.IssuedAt)
		if err != nil {
			return ds, &StatementError{Path: "/predicate/issuedAt", Msg: err.Error()}
		}
		ds.ObservedAt = t
	case DisputePredicateType:
		dp, err := checkDispute(ds.Predicate, ds.Subject)
		if err != nil {
			return ds, err
		}
		ds.Dispute = dp
		t, err := ParseTime(dp.OpenedAt)
		if err != nil {
			return ds, &StatementError{Path: "/predicate/openedAt", Msg: err.Error()}
		}
		ds.ObservedAt = t
	case OutcomePredicateType:
		op, err := checkOutcome(ds.Predicate, ds.Subject)
		if err != nil {
			return ds, err
		}
		ds.Outcome = op
		t, err := ParseTime(op.DecidedAt)
		if err != nil {
			return ds, &StatementError{Path: "/predicate/decidedAt", Msg: err.Error()}
		}
		ds.ObservedAt = t
	case WithdrawalPredicateType:
		wp, err := checkWithdrawal(ds.Predicate, ds.Subject)
		if err != nil {
			return ds, err
		}
		ds.Withdrawal = wp
		t, err := ParseTime(wp.At)
		if err != nil {
			return ds, &StatementError{Path: "/predicate/at", Msg: err.Error()}
		}
		ds.ObservedAt = t
	case BaselinePredicateType:
		bp, err := checkBaseline(ds.Predicate, ds.Subject)
		if err != nil {
			return ds, err
		}
		ds.Baseline = bp
		t, err := ParseTime(bp.ApprovedAt)
		if err != nil {
			return ds, &StatementError{Path: "/predicate/approvedAt", Msg: err.Error()}
		}
		ds.ObservedAt = t
	}
	return ds, nil
}

func subjectsFromTree(v any) ([]Subject, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, &StatementError{Path: "/subject", Msg: "missing or not an array"}
	}
	if len(list) > 16 {
		return nil, &StatementError{Path: "/subject", Msg: "more than 16 subjects"}
	}
	out := make([]Subject, len(list))
	for i, e := range list {
		path := "/subject/" + strconv.Itoa(i)
		m, ok := e.(map[string]any)
		if !ok || len(m) != 2 {
			return nil, &StatementError{Path: path, Msg: "want an object with exactly name and digest"}
		}
		name, ok1 := m["name"].(string)
		digest, ok2 := m["digest"].(map[string]any)
		if !ok1 || !ok2 {
			return nil, &StatementError{Path: path, Msg: "want a string name and an object digest"}
		}
		out[i] = Subject{Name: name, Digest: DigestSet{}}
		for alg, d := range digest {
			ds, ok := d.(string)
			if !ok {
				return nil, &StatementError{Path: path + "/digest", Msg: "digest values must be strings"}
			}
			out[i].Digest[alg] = ds
		}
	}
	return out, nil
}

// probeFromTree maps a schema-valid probe predicate tree onto the Go type. The schema has
// fixed every member's presence and type; the accessors below still never panic.
func probeFromTree(m map[string]any) *ProbePredicate {
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	num := func(m map[string]any, k string) int64 {
		n, _ := m[k].(json.Number)
		i, _ := n.Int64()
		return i
	}
	obj := func(m map[string]any, k string) map[string]any { o, _ := m[k].(map[string]any); return o }
	p := &ProbePredicate{
		ObservedAt:      str(m, "observedAt"),
		RoundID:         str(m, "roundId"),
		Coverage:        Coverage(str(m, "coverage")),
		ProtocolVersion: str(m, "protocolVersion"),
		ToolCount:       int(num(m, "toolCount")),
		Pages:           int(num(m, "pages")),
	}
	pr := obj(m, "probe")
	p.Probe = ProbeInfo{ToolVersion: str(pr, "toolVersion"), SuiteVersion: str(pr, "suiteVersion"), SuiteDigest: str(pr, "suiteDigest")}
	t := obj(m, "target")
	p.Target = Target{Kind: str(t, "kind"), URL: str(t, "url"), Package: str(t, "package"), Version: str(t, "version")}
	if si := obj(m, "serverInfo"); si != nil {
		p.ServerInfo = &ServerInfo{Name: str(si, "name"), Version: str(si, "version")}
	}
	if fp := obj(m, "fingerprints"); fp != nil {
		p.Fingerprints = &Fingerprints{Toolset: str(fp, "toolset"), Schema: str(fp, "schema"), Surface: str(fp, "surface"), Instructions: str(fp, "instructions")}
	}
	tm := obj(m, "timings")
	p.Timings = Timings{HandshakeMs: num(tm, "handshakeMs"), ToolsListMs: num(tm, "toolsListMs"), TotalMs: num(tm, "totalMs")}
	checks, _ := m["checks"].([]any)
	p.Checks = make([]CheckResult, 0, len(checks))
	for _, c := range checks {
		cm, _ := c.(map[string]any)
		cr := CheckResult{ID: str(cm, "id"), Status: CheckStatus(str(cm, "status"))}
		if r := obj(cm, "reason"); r != nil {
			cr.Reason = &CheckReason{Key: str(r, "key"), Params: obj(r, "params")}
		}
		p.Checks = append(p.Checks, cr)
	}
	return p
}

func checkSubjects(subjects []Subject) error {
	if len(subjects) != 1 {
		return &StatementError{Path: "/subject", Msg: fmt.Sprintf("%d subjects; want exactly 1", len(subjects))}
	}
	s := subjects[0]
	if s.Name == "" || len(s.Name) > 2048 {
		return &StatementError{Path: "/subject/0/name", Msg: "empty or longer than 2048 bytes"}
	}
	if len(s.Digest) != 1 {
		return &StatementError{Path: "/subject/0/digest", Msg: "want exactly one of sha256, sha512"}
	}
	for alg, v := range s.Digest {
		switch {
		case alg == "sha256" && hex64.MatchString(v):
		case alg == "sha512" && hex128.MatchString(v):
		default:
			return &StatementError{Path: "/subject/0/digest", Msg: "want sha256 (64 hex) or sha512 (128 hex), lowercase"}
		}
	}
	return nil
}

func checkProbe(p *ProbePredicate, subjects []Subject) error {
	fail := func(path, format string, args ...any) error {
		return &StatementError{Path: "/predicate" + path, Msg: fmt.Sprintf(format, args...)}
	}
	sub := subjects[0]
	switch p.Target.Kind {
	case "remote":
		if p.Target.URL == "" {
			return fail("/target/url", "required for a remote target")
		}
		if p.Target.URL != sub.Name {
			return fail("/target/url", "differs from the subject name")
		}
		if p.Target.Package != "" || p.Target.Version != "" {
			return fail("/target", "a remote target has no package or version")
		}
	default:
		if p.Target.Package == "" {
			return fail("/target/package", "required for a %s target", p.Target.Kind)
		}
	}
	seen := make(map[string]bool, len(p.Checks))
	for i, c := range p.Checks {
		if seen[c.ID] {
			return fail(fmt.Sprintf("/checks/%d/id", i), "duplicate check id %q", c.ID)
		}
		seen[c.ID] = true
		if c.Status == StatusUnverified && c.Reason == nil {
			return fail(fmt.Sprintf("/checks/%d", i), "UNVERIFIED needs a reason")
		}
	}
	switch p.Coverage {
	case CoverageFull:
		if p.Fingerprints == nil {
			return fail("/fingerprints", "required for coverage full")
		}
		if p.ProtocolVersion == "" {
			return fail("/protocolVersion", "required for coverage full")
		}
		if p.Target.Kind == "remote" && "sha256:"+sub.Digest["sha256"] != p.Fingerprints.Surface {
			return &StatementError{Path: "/subject/0/digest/sha256", Msg: "does not equal the surface fingerprint"}
		}
	case CoverageAuthRequired:
		if p.Fingerprints != nil {
			return fail("/fingerprints", "must be absent for coverage auth_required")
		}
		if p.ToolCount != 0 || p.Pages != 0 {
			return fail("/toolCount", "must be 0 for coverage auth_required")
		}
		if p.Target.Kind == "remote" && sub.Digest["sha256"] != AuthRequiredDigest(sub.Name) {
			return &StatementError{Path: "/subject/0/digest/sha256", Msg: "does not equal the auth_required digest of the subject name"}
		}
		for i, c := range p.Checks {
			if slices.Contains(AuthRequiredChecks, c.ID) {
				continue
			}
			if c.Status != StatusUnverified || c.Reason.Key != ReasonCredentialRequired {
				return fail(fmt.Sprintf("/checks/%d", i), "check %q is outside auth_required coverage and must be UNVERIFIED %s", c.ID, ReasonCredentialRequired)
			}
		}
	}
	return nil
}
