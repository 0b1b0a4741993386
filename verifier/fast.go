package verifier

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/probity-dev/probity/attest"
)

// The fast paths. Most of what the verifier reads is in one exact form: bundles and
// envelopes as Probity writes them (compact JSON, members in a fixed order, ASCII) and
// probe statements in canonical form. Reading those with attest's general parsers costs
// more than the Ed25519 signature check itself (a generic JSON tree, JSON Schema
// validation walking it, encoding/json for the bundle). So each is first read by a
// scanner that accepts only that exact form and nothing else; whatever it declines goes
// to the general parser, which then decides, and reports, as before.
//
// The fast paths only ever accept: each accepts a subset of what its general parser
// accepts, with the same result. That is their whole contract, and tests hold them to it
// (TestFastPathsAgree over every vector and each single-byte change of them,
// FuzzFastStatement, FuzzFastBundle, FuzzFastEnvelope, and TestFastProbeSchemaPinned,
// which fails when the probe schema changes under decodeProbeFast).

// generalOnly turns the fast paths off, for tests that compare whole verifications with
// and without them. Nothing else sets it.
var generalOnly bool

// scan reads one exact form from b; every method reports false, and moves nothing, for
// bytes that are not the form it reads.
type scan struct {
	b []byte
	i int
	// text, when set, is b as a string: sstr returns substrings of it, so that reading
	// a statement allocates its text once rather than once per field.
	text string
}

// lit reads exactly l.
func (s *scan) lit(l string) bool {
	if len(s.b)-s.i < len(l) || string(s.b[s.i:s.i+len(l)]) != l {
		return false
	}
	s.i += len(l)
	return true
}

// peek reports whether the next byte is c.
func (s *scan) peek(c byte) bool { return s.i < len(s.b) && s.b[s.i] == c }

// str reads a JSON string of printable ASCII without escapes (0x20 to 0x7e, neither '"'
// nor '\\') and returns its bytes, without quotes. Such a string is its own canonical
// (nfc-jcs/v1) form and decodes to its bytes.
func (s *scan) str() ([]byte, bool) {
	if !s.peek('"') {
		return nil, false
	}
	j := plainRun(s.b, s.i+1)
	if j >= len(s.b) || s.b[j] != '"' {
		return nil, false
	}
	v := s.b[s.i+1 : j]
	s.i = j + 1
	return v, true
}

// sstr is str returning a substring of s.text.
func (s *scan) sstr() (string, bool) {
	start := s.i + 1
	if _, ok := s.str(); !ok {
		return "", false
	}
	return s.text[start : s.i-1], true
}

// plainRun returns the index of the first byte at or after i that is not printable
// ASCII other than '"' and '\\' (0x20 to 0x7e), or len(d), eight bytes at a time.
func plainRun(d []byte, i int) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(d); i += 8 {
		x := binary.LittleEndian.Uint64(d[i:])
		q := x ^ (lo * '"')
		b := x ^ (lo * '\\')
		del := x ^ (lo * 0x7f)
		// A byte below 0x20; a zero byte in q, b or del (a quote, a backslash, DEL);
		// or a byte with its high bit set.
		if ((x-lo*0x20)&^x|(q-lo)&^q|(b-lo)&^b|(del-lo)&^del|x)&hi != 0 {
			break
		}
	}
	for ; i < len(d); i++ {
		if c := d[i]; c == '"' || c == '\\' || c < 0x20 || c > 0x7e {
			return i
		}
	}
	return i
}

// paePayload reads the envelope's base64 payload string and decodes it straight into
// the DSSE PAE the signatures cover (attest.PAE: for Probity's payloadType, whatever the
// envelope names, which is checked on its own) ("DSSEv1 <len(type)> <type> <len(payload)> " and
// the payload, as attest.PAE builds it), saving a copy of the payload: the decoded
// length is known from the text before decoding.
func (s *scan) paePayload(payloadType string) (pae, payload []byte, ok bool) {
	if !s.peek('"') {
		return nil, nil, false
	}
	j := bytes.IndexByte(s.b[s.i+1:], '"')
	if j < 0 {
		return nil, nil, false
	}
	src := s.b[s.i+1 : s.i+1+j]
	if len(src)%4 != 0 {
		return nil, nil, false
	}
	n := len(src) / 4 * 3
	if len(src) > 0 && src[len(src)-1] == '=' {
		n--
		if src[len(src)-2] == '=' {
			n--
		}
	}
	// The header takes at most 7+20+1+len(payloadType)+1+20+1 bytes; base64Std wants
	// room for the decoded length before padding, n+2 at most.
	hdr := make([]byte, 0, 64+len(payloadType)+n)
	hdr = append(hdr, "DSSEv1 "...)
	hdr = strconv.AppendInt(hdr, int64(len(payloadType)), 10)
	hdr = append(hdr, ' ')
	hdr = append(hdr, payloadType...)
	hdr = append(hdr, ' ')
	hdr = strconv.AppendInt(hdr, int64(n), 10)
	hdr = append(hdr, ' ')
	if cap(hdr)-len(hdr) < len(src)/4*3 {
		return nil, nil, false // cannot happen: the capacity above leaves room
	}
	payload, ok = base64Std(hdr[len(hdr):], src)
	if !ok || len(payload) != n {
		return nil, nil, false
	}
	s.i += j + 2
	return hdr[:len(hdr)+n], payload, true
}

// b64str reads a JSON string that must be standard base64 and returns it decoded: the
// closing quote is the first quote, and base64Std refuses any character between that is
// not base64 (an escape, a control character, non-ASCII).
func (s *scan) b64str(dst []byte) ([]byte, bool) {
	if !s.peek('"') {
		return nil, false
	}
	j := bytes.IndexByte(s.b[s.i+1:], '"')
	if j < 0 {
		return nil, false
	}
	v, ok := base64Std(dst, s.b[s.i+1:s.i+1+j])
	if !ok {
		return nil, false
	}
	s.i += j + 2
	return v, true
}

// member reads key, the next member's name and colon (`"name":`) in an object read in
// a fixed order, with the comma before it unless first.
func (s *scan) member(key string, first bool) bool {
	j := s.i
	if !first && !s.lit(",") {
		return false
	}
	if !s.lit(key) {
		s.i = j
		return false
	}
	return true
}

// optMember reads the optional member key (`"name":`, after a comma) when it comes next.
func (s *scan) optMember(key string) bool { return s.member(key, false) }

// uint reads a non-negative integer in canonical form ("0", or no leading zero) of at
// most 15 digits: exact as a JSON Schema integer and as a float64, below 2^53.
func (s *scan) uint() (int64, bool) {
	j := s.i
	for j < len(s.b) && s.b[j] >= '0' && s.b[j] <= '9' {
		j++
	}
	n := j - s.i
	if n == 0 || n > 15 || (n > 1 && s.b[s.i] == '0') {
		return 0, false
	}
	var v int64
	for _, c := range s.b[s.i:j] {
		v = v*10 + int64(c-'0')
	}
	s.i = j
	return v, true
}

// base64Std decodes standard padded base64. base64.StdEncoding.Strict() rejects every
// character outside the alphabet and padding, missing padding and non-zero trailing
// bits, but skips CR and LF; refusing those too leaves exactly the canonical spelling,
// so this agrees with attest.DecodeBase64 wherever it succeeds.
func base64Std(dst, src []byte) ([]byte, bool) {
	if len(src)%4 != 0 || bytes.IndexByte(src, '\n') >= 0 || bytes.IndexByte(src, '\r') >= 0 {
		return nil, false
	}
	n := base64.StdEncoding.DecodedLen(len(src))
	dst = slices.Grow(dst[:0], n)[:n]
	n, err := base64.StdEncoding.Strict().Decode(dst, src)
	if err != nil {
		return nil, false
	}
	return dst[:n], true
}

// parsedEnvelope is an envelope's members, decoded.
type parsedEnvelope struct {
	payloadType string
	payload     []byte
	sigs        []parsedSig
	pae         []byte // when set, the PAE of payload, which it ends with
}

type parsedSig struct {
	keyID string
	sig   []byte
}

// envelopeFast reads an envelope in the form attest.EncodeEnvelope writes it:
//
//	{"payloadType":"…","payload":"…","signatures":[{"keyid":"…","sig":"…"},…]}
//
// compact, in that order, with ASCII strings without escapes and 1 to MaxSignatures
// signatures. It reads from s and leaves s after the envelope.
func envelopeFast(s *scan) (*parsedEnvelope, bool) {
	var e parsedEnvelope
	if !s.lit(`{"payloadType":`) {
		return nil, false
	}
	pt, ok := s.str()
	if !ok || !s.lit(`,"payload":`) {
		return nil, false
	}
	if string(pt) == attest.PayloadType {
		e.payloadType = attest.PayloadType
	} else {
		e.payloadType = string(pt)
	}
	if e.pae, e.payload, ok = s.paePayload(attest.PayloadType); !ok || !s.lit(`,"signatures":[`) {
		return nil, false
	}
	for len(e.sigs) < attest.MaxSignatures {
		if len(e.sigs) > 0 && !s.lit(",") {
			return nil, false
		}
		if !s.lit(`{"keyid":`) {
			return nil, false
		}
		id, ok := s.str()
		if !ok || !s.lit(`,"sig":`) {
			return nil, false
		}
		sig, ok := s.b64str(nil)
		if !ok || !s.lit("}") {
			return nil, false
		}
		e.sigs = append(e.sigs, parsedSig{keyID: string(id), sig: sig})
		if s.peek(']') {
			break
		}
	}
	if len(e.sigs) == 0 || !s.lit("]}") {
		return nil, false
	}
	return &e, true
}

// parseEnvelopeFast reads a whole envelope (envelopeFast's form, with white space
// around it).
func parseEnvelopeFast(data []byte) (*parsedEnvelope, bool) {
	s := &scan{b: trimSpace(data)}
	e, ok := envelopeFast(s)
	if !ok || s.i != len(s.b) || len(data) > 2*attest.MaxPayloadSize {
		return nil, false
	}
	return e, true
}

// parseEnvelope reads an envelope, by the fast path when it can, and returns its
// members; the error is attest.ParseEnvelope's.
func parseEnvelope(data []byte) (*parsedEnvelope, error) {
	if e, ok := parseEnvelopeFast(data); ok && !generalOnly {
		return e, nil
	}
	env, payload, err := attest.ParseEnvelope(data)
	if err != nil {
		return nil, err
	}
	e := &parsedEnvelope{payloadType: env.PayloadType, payload: payload, sigs: make([]parsedSig, len(env.Signatures))}
	for i, s := range env.Signatures {
		sig, _ := attest.DecodeBase64(s.Sig) // ParseEnvelope checked the encoding
		e.sigs[i] = parsedSig{keyID: s.KeyID, sig: sig}
	}
	return e, nil
}

// parsedBundle is a bundle as VerifyBundle uses it.
type parsedBundle struct {
	logIndex int64
	kind     string
	envelope []byte          // compact, as the leaf holds it
	env      *parsedEnvelope // set by the fast path
	proof    []tlog.Hash
	// checkpoint and previous are the notes' text; checkpointRaw and previousRaw, set by
	// the fast path, the JSON string contents they were read from (memo keys).
	checkpoint, previous       []byte
	checkpointRaw, previousRaw []byte
	consistency                []tlog.Hash
}

// bundleFast reads a bundle in the form attest.Bundle.Marshal writes it: compact, members
// in the order bundle, logIndex, kind, envelope (envelopeFast's form), inclusionProof,
// checkpoint, then optionally previousCheckpoint and consistencyProof, with proof hashes
// in canonical base64 and the checkpoints' text of printable ASCII, "\n" escapes and
// the em dash of signature lines.
func bundleFast(data []byte) (*parsedBundle, bool) {
	if len(data) > attest.MaxBundleSize {
		return nil, false
	}
	s := &scan{b: trimSpace(data)}
	var b parsedBundle
	if !s.lit(`{"bundle":"` + attest.BundleFormat + `","logIndex":`) {
		return nil, false
	}
	var ok bool
	if b.logIndex, ok = s.uint(); !ok || !s.lit(`,"kind":`) {
		return nil, false
	}
	kind, ok := s.str()
	if !ok || !isRecordKind(kind) || !s.lit(`,"envelope":`) {
		return nil, false
	}
	b.kind = string(kind)
	start := s.i
	if b.env, ok = envelopeFast(s); !ok {
		return nil, false
	}
	b.envelope = s.b[start:s.i]
	// attest.ParseEnvelope's bound, which a bundle has room to exceed: decline, so the
	// general path reports it (malformed_envelope).
	if len(b.envelope) > 2*attest.MaxPayloadSize || !s.lit(`,"inclusionProof":`) {
		return nil, false
	}
	if b.proof, ok = proofFast(s); !ok || !s.lit(`,"checkpoint":`) {
		return nil, false
	}
	if b.checkpointRaw, ok = noteFast(s); !ok || len(b.checkpointRaw) == 0 {
		return nil, false
	}
	if s.lit(`,"previousCheckpoint":`) {
		if b.previousRaw, ok = noteFast(s); !ok || len(b.previousRaw) == 0 || !s.lit(`,"consistencyProof":`) {
			return nil, false
		}
		if b.consistency, ok = proofFast(s); !ok || b.consistency == nil {
			return nil, false
		}
	}
	if !s.lit("}") || s.i != len(s.b) {
		return nil, false
	}
	return &b, true
}

// trimSpace trims JSON white space from both ends.
func trimSpace(d []byte) []byte {
	i := attest.SkipJSONSpace(d, 0)
	j := len(d)
	for j > i && (d[j-1] == ' ' || d[j-1] == '\t' || d[j-1] == '\n' || d[j-1] == '\r') {
		j--
	}
	return d[i:j]
}

// isRecordKind is attest's leaf kind rule (1 to 32 of a-z, 0-9 and _, starting with a
// letter), less the tombstone kind, which is no record's.
func isRecordKind(k []byte) bool {
	if len(k) == 0 || len(k) > 32 || k[0] < 'a' || k[0] > 'z' || string(k) == attest.LeafKindTombstone {
		return false
	}
	for _, c := range k {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// proofFast reads an array of at most 126 base64 32-byte hashes (44 characters each).
// An empty array gives an empty, non-nil proof.
func proofFast(s *scan) ([]tlog.Hash, bool) {
	if !s.lit("[") {
		return nil, false
	}
	if s.lit("]") {
		return []tlog.Hash{}, true
	}
	// Each hash takes 47 bytes with its quotes and comma, but the last 46: so the
	// proof's length is known before reading it, and so is a malformed one.
	end := bytes.IndexByte(s.b[s.i:], ']')
	n := (end + 1) / 47
	if end < 0 || 47*n-1 != end || n > 126 {
		return nil, false
	}
	out := make([]tlog.Hash, 0, n)
	var buf [33]byte
	for len(out) < 126 {
		if len(out) > 0 && !s.lit(",") {
			return nil, false
		}
		h, ok := s.b64str(buf[:0])
		if !ok || len(h) != 32 {
			return nil, false
		}
		out = append(out, tlog.Hash(h))
		if s.lit("]") {
			return out, true
		}
	}
	return nil, false
}

// noteFast reads a JSON string holding a note, as encoding/json writes one: printable
// ASCII, "\n" escapes and raw em dashes (U+2014, the signature lines' prefix), nothing
// else. It returns the string's raw contents. A bundle stream names the same few hundred
// checkpoints over and over, so the contents found valid are remembered (validNotes):
// such contents hold no quote and do not end in a backslash, so when the text up to the
// next quote is one of them, that quote closes the string.
func noteFast(s *scan) ([]byte, bool) {
	if !s.peek('"') {
		return nil, false
	}
	j := bytes.IndexByte(s.b[s.i+1:], '"')
	if j < 0 {
		return nil, false
	}
	v := s.b[s.i+1 : s.i+1+j]
	if len(v) > maxCheckpointSize {
		return nil, false // no checkpoint is this long: the general path reports it, unremembered
	}
	if _, ok := getBytes(validNotes, v); !ok {
		if !noteText(v) {
			return nil, false
		}
		validNotes.put(string(v), struct{}{})
	}
	s.i += j + 2
	return v, true
}

// validNotes holds JSON string contents noteText accepted.
var validNotes = &memo[string, struct{}]{max: 1024}

// noteText reports whether v, the contents of a JSON string up to its first quote, is
// all of that string and of noteFast's form.
func noteText(v []byte) bool {
	for j := 0; j < len(v); j++ {
		switch c := v[j]; {
		case c == '\\':
			if j+1 >= len(v) || v[j+1] != 'n' {
				return false
			}
			j++
		case c == 0xe2:
			if j+2 >= len(v) || v[j+1] != 0x80 || v[j+2] != 0x94 {
				return false
			}
			j += 2
		case c < 0x20 || c > 0x7e:
			return false
		}
	}
	return true
}

// recordLeafHash is tlog.RecordHash(attest.RecordLeaf(seq, kind, envelope)), hashed
// from the leaf's parts rather than a copy of them all (a leaf is mostly its envelope).
// It writes the inline form's header as RecordLeaf does and leaves every other case
// (an envelope too large to be inline, bad arguments) to RecordLeaf itself;
// TestRecordLeafHash holds the two to the same bytes.
func recordLeafHash(seq int64, kind string, envelope []byte) (tlog.Hash, error) {
	var buf [128]byte
	h := append(buf[:0], 0x00) // RFC 6962's leaf prefix
	h = append(h, attest.LeafFormat+"\nseq "...)
	h = strconv.AppendInt(h, seq, 10)
	h = append(h, "\nkind "...)
	h = append(h, kind...)
	h = append(h, "\nenvelope "...)
	h = strconv.AppendInt(h, int64(len(envelope)), 10)
	h = append(h, '\n')
	if seq < 1 || !isRecordKind([]byte(kind)) || len(envelope) == 0 || len(h)-1+len(envelope) > attest.MaxLeafSize {
		leaf, err := attest.RecordLeaf(seq, kind, envelope)
		if err != nil {
			return tlog.Hash{}, err
		}
		return tlog.RecordHash(leaf), nil
	}
	d := sha256.New()
	d.Write(h)
	d.Write(envelope)
	var out tlog.Hash
	d.Sum(out[:0])
	return out, nil
}

// unescapeNote decodes noteFast's raw contents.
func unescapeNote(raw []byte) []byte {
	return bytes.ReplaceAll(raw, []byte(`\n`), []byte("\n"))
}

// parseBundle reads a bundle, by the fast path when it can; the error is
// attest.ParseBundle's.
func parseBundle(data []byte) (*parsedBundle, error) {
	if b, ok := bundleFast(data); ok && !generalOnly {
		return b, nil
	}
	ab, err := attest.ParseBundle(data)
	if err != nil {
		return nil, err
	}
	b := &parsedBundle{logIndex: ab.LogIndex, kind: ab.Kind, envelope: ab.Envelope, checkpoint: []byte(ab.Checkpoint)}
	b.proof = hashes(ab.InclusionProof) // ParseBundle checked the lengths
	if ab.PreviousCheckpoint != "" {
		b.previous = []byte(ab.PreviousCheckpoint)
		b.consistency = hashes(ab.ConsistencyProof)
	}
	return b, nil
}

// decodeStatement is attest.DecodeStatement, by decodeProbeFast when it can.
func decodeStatement(payload []byte) (*attest.DecodedStatement, error) {
	if st, ok := decodeProbeFast(payload); ok && !generalOnly {
		return st, nil
	}
	return attest.DecodeStatement(payload)
}

// decodeProbeFast reads a probe statement (probe/v1) in canonical form with only
// printable ASCII strings without escapes and integer numbers, applying the probe
// schema (attest/schema/probe-v1.schema.json) and the format's further rules by hand.
// It returns what attest.DecodeStatement returns for the same bytes, and declines
// whatever it is not sure of: any other form, any rule broken (the general path then
// reports it).
func decodeProbeFast(payload []byte) (*attest.DecodedStatement, bool) {
	if len(payload) > attest.MaxPayloadSize {
		return nil, false
	}
	s := &scan{b: payload, text: string(payload)}
	if !s.lit(`{"_type":"` + attest.StatementType + `","predicate":`) {
		return nil, false
	}
	start := s.i
	p, ok := probePredicateFast(s)
	if !ok {
		return nil, false
	}
	ds := &attest.DecodedStatement{Type: attest.StatementType, PredicateType: attest.ProbePredicateType, Predicate: json.RawMessage(payload[start:s.i]), Probe: p}
	if !s.lit(`,"predicateType":"` + attest.ProbePredicateType + `","subject":[{"digest":{`) {
		return nil, false
	}
	alg, ok := s.sstr()
	if !ok || !s.lit(`:`) {
		return nil, false
	}
	digest, ok := s.sstr()
	if !ok || !s.lit(`},"name":`) {
		return nil, false
	}
	switch {
	case alg == "sha256" && isLowerHex(digest, 64):
	case alg == "sha512" && isLowerHex(digest, 128):
	default:
		return nil, false
	}
	name, ok := s.sstr()
	if !ok || len(name) == 0 || len(name) > 2048 || !s.lit("}]}") || s.i != len(payload) {
		return nil, false
	}
	ds.Subject = []attest.Subject{{Name: name, Digest: attest.DigestSet{alg: digest}}}
	t, ok := parseTimeFast(p.ObservedAt)
	if !ok {
		return nil, false
	}
	ds.ObservedAt = t
	if !probeRulesHold(p, ds.Subject[0]) {
		return nil, false
	}
	return ds, true
}

// probePredicateFast reads the probe predicate object, members in canonical order:
// checks, coverage, fingerprints?, observedAt, pages, probe, protocolVersion?, roundId,
// serverInfo?, target, timings, toolCount.
func probePredicateFast(s *scan) (*attest.ProbePredicate, bool) {
	p := &attest.ProbePredicate{Checks: make([]attest.CheckResult, 0, 24)}
	if !s.lit("{") || !s.member(`"checks":`, true) || !s.lit("[") {
		return nil, false
	}
	for {
		if len(p.Checks) == 64 {
			return nil, false
		}
		c, ok := checkFast(s)
		if !ok {
			return nil, false
		}
		p.Checks = append(p.Checks, c)
		if s.lit("]") {
			break
		}
		if !s.lit(",") {
			return nil, false
		}
	}
	if !s.member(`"coverage":`, false) {
		return nil, false
	}
	cov, ok := s.sstr()
	switch {
	case !ok:
		return nil, false
	case cov == string(attest.CoverageFull):
		p.Coverage = attest.CoverageFull
	case cov == string(attest.CoverageAuthRequired):
		p.Coverage = attest.CoverageAuthRequired
	default:
		return nil, false
	}
	if s.optMember(`"fingerprints":`) {
		f := &attest.Fingerprints{}
		if !s.lit("{") {
			return nil, false
		}
		for i, field := range []*string{&f.Instructions, &f.Schema, &f.Surface, &f.Toolset} {
			if !s.member([]string{`"instructions":`, `"schema":`, `"surface":`, `"toolset":`}[i], i == 0) {
				return nil, false
			}
			v, ok := s.sstr()
			if !ok || !isDigest(v) {
				return nil, false
			}
			*field = v
		}
		if !s.lit("}") {
			return nil, false
		}
		p.Fingerprints = f
	}
	if !s.member(`"observedAt":`, false) {
		return nil, false
	}
	at, ok := s.sstr()
	if !ok || !isTimestamp(at) || !s.member(`"pages":`, false) {
		return nil, false
	}
	p.ObservedAt = at
	pages, ok := s.uint()
	if !ok || pages > 100 || !s.member(`"probe":`, false) || !s.lit("{") || !s.member(`"suiteDigest":`, true) {
		return nil, false
	}
	p.Pages = int(pages)
	sd, ok := s.sstr()
	if !ok || !isDigest(sd) || !s.member(`"suiteVersion":`, false) {
		return nil, false
	}
	sv, ok := s.sstr()
	if !ok || !isToken(sv) || !s.member(`"toolVersion":`, false) {
		return nil, false
	}
	tv, ok := s.sstr()
	if !ok || !isToken(tv) || !s.lit("}") {
		return nil, false
	}
	p.Probe = attest.ProbeInfo{SuiteDigest: sd, SuiteVersion: sv, ToolVersion: tv}
	if s.optMember(`"protocolVersion":`) {
		pv, ok := s.sstr()
		if !ok || !isDate(pv) {
			return nil, false
		}
		p.ProtocolVersion = pv
	}
	if !s.member(`"roundId":`, false) {
		return nil, false
	}
	rid, ok := s.sstr()
	if !ok || !isRoundID(rid) {
		return nil, false
	}
	p.RoundID = rid
	if s.optMember(`"serverInfo":`) {
		if !s.lit("{") || !s.member(`"name":`, true) {
			return nil, false
		}
		n, ok := s.sstr()
		if !ok || len(n) > 256 {
			return nil, false
		}
		p.ServerInfo = &attest.ServerInfo{Name: n}
		if s.optMember(`"version":`) {
			v, ok := s.sstr()
			if !ok || len(v) > 256 {
				return nil, false
			}
			p.ServerInfo.Version = v
		}
		if !s.lit("}") {
			return nil, false
		}
	}
	if !s.member(`"target":`, false) || !s.lit("{") || !s.member(`"kind":`, true) {
		return nil, false
	}
	kind, ok := s.sstr()
	if !ok || !slices.Contains(attest.TargetKinds, kind) {
		return nil, false
	}
	p.Target.Kind = kind
	if s.optMember(`"package":`) {
		v, ok := s.sstr()
		if !ok || !isPackage(v) {
			return nil, false
		}
		p.Target.Package = v
	}
	if s.optMember(`"url":`) {
		v, ok := s.sstr()
		if !ok || !isURL(v) {
			return nil, false
		}
		p.Target.URL = v
	}
	if s.optMember(`"version":`) {
		v, ok := s.sstr()
		if !ok || !isToken(v) {
			return nil, false
		}
		p.Target.Version = v
	}
	if !s.lit("}") || !s.member(`"timings":`, false) || !s.lit("{") {
		return nil, false
	}
	for i, field := range []*int64{&p.Timings.HandshakeMs, &p.Timings.ToolsListMs, &p.Timings.TotalMs} {
		if !s.member([]string{`"handshakeMs":`, `"toolsListMs":`, `"totalMs":`}[i], i == 0) {
			return nil, false
		}
		v, ok := s.uint()
		if !ok || v > 600000 {
			return nil, false
		}
		*field = v
	}
	if !s.lit("}") || !s.member(`"toolCount":`, false) {
		return nil, false
	}
	tc, ok := s.uint()
	if !ok || tc > 10000 || !s.lit("}") {
		return nil, false
	}
	p.ToolCount = int(tc)
	return p, true
}

// checkFast reads one check: {"id":…,"reason":{"key":…,"params":{…}}?,"status":…}.
func checkFast(s *scan) (attest.CheckResult, bool) {
	var c attest.CheckResult
	if !s.lit("{") || !s.member(`"id":`, true) {
		return c, false
	}
	id, ok := s.sstr()
	if !ok || !isIdent(id, 64) {
		return c, false
	}
	c.ID = id
	if s.optMember(`"reason":`) {
		if !s.lit("{") || !s.member(`"key":`, true) {
			return c, false
		}
		key, ok := s.sstr()
		if !ok || !isIdent(key, 64) {
			return c, false
		}
		c.Reason = &attest.CheckReason{Key: key}
		if s.optMember(`"params":`) {
			if c.Reason.Params, ok = paramsFast(s); !ok {
				return c, false
			}
		}
		if !s.lit("}") {
			return c, false
		}
	}
	if !s.member(`"status":`, false) {
		return c, false
	}
	st, ok := s.sstr()
	if !ok {
		return c, false
	}
	i := slices.IndexFunc(attest.Statuses, func(v attest.CheckStatus) bool { return string(v) == st })
	if i < 0 || !s.lit("}") {
		return c, false
	}
	c.Status = attest.Statuses[i]
	return c, true
}

// paramsFast reads a reason's params: at most 8 members with names in canonical
// (ascending) order, each an integer within ±2^53, a boolean or a short token string,
// decoded as attest's tree parser does (json.Number, bool, string).
func paramsFast(s *scan) (map[string]any, bool) {
	if !s.lit("{") {
		return nil, false
	}
	m := map[string]any{}
	if s.lit("}") {
		return m, true
	}
	last := ""
	for {
		if len(m) == 8 {
			return nil, false
		}
		name, ok := s.sstr()
		if !ok || !isParamName(name) || (last != "" && last >= name) || !s.lit(":") {
			return nil, false
		}
		last = name
		switch {
		case s.peek('"'):
			v, ok := s.sstr()
			if !ok || !isParamString(v) {
				return nil, false
			}
			m[name] = v
		case s.lit("true"):
			m[name] = true
		case s.lit("false"):
			m[name] = false
		default:
			j := s.i
			neg := s.lit("-")
			n, ok := s.uint()
			if !ok || (neg && n == 0) {
				return nil, false
			}
			m[name] = json.Number(s.text[j:s.i])
		}
		if s.lit("}") {
			return m, true
		}
		if !s.lit(",") {
			return nil, false
		}
	}
}

// probeRulesHold applies the rules of the probe format beyond its schema (attest's
// checkSubjects and checkProbe), to a statement the fast path read: true when they all
// hold.
func probeRulesHold(p *attest.ProbePredicate, sub attest.Subject) bool {
	switch p.Target.Kind {
	case "remote":
		if p.Target.URL == "" || p.Target.URL != sub.Name || p.Target.Package != "" || p.Target.Version != "" {
			return false
		}
	default:
		if p.Target.Package == "" {
			return false
		}
	}
	for i, c := range p.Checks {
		for _, d := range p.Checks[:i] {
			if d.ID == c.ID {
				return false
			}
		}
		if c.Status == attest.StatusUnverified && c.Reason == nil {
			return false
		}
	}
	switch p.Coverage {
	case attest.CoverageFull:
		if p.Fingerprints == nil || p.ProtocolVersion == "" {
			return false
		}
		if p.Target.Kind == "remote" && "sha256:"+sub.Digest["sha256"] != p.Fingerprints.Surface {
			return false
		}
	case attest.CoverageAuthRequired:
		if p.Fingerprints != nil || p.ToolCount != 0 || p.Pages != 0 {
			return false
		}
		if p.Target.Kind == "remote" && sub.Digest["sha256"] != attest.AuthRequiredDigest(sub.Name) {
			return false
		}
		for _, c := range p.Checks {
			if slices.Contains(attest.AuthRequiredChecks, c.ID) {
				continue
			}
			if c.Status != attest.StatusUnverified || c.Reason.Key != attest.ReasonCredentialRequired {
				return false
			}
		}
	default:
		return false
	}
	return true
}

// The schema's patterns, by hand, for the ASCII strings the fast path reads.

func isAlnum(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
}
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// lowerHex marks the bytes 0-9 and a-f.
var lowerHex = func() (t [256]bool) {
	for _, c := range []byte("0123456789abcdef") {
		t[c] = true
	}
	return t
}()

func isLowerHex(v string, n int) bool {
	if len(v) != n {
		return false
	}
	for i := 0; i < len(v); i++ {
		if !lowerHex[v[i]] {
			return false
		}
	}
	return true
}

// isDigest: ^sha256:[0-9a-f]{64}$
func isDigest(v string) bool {
	return len(v) == 71 && v[:7] == "sha256:" && isLowerHex(v[7:], 64)
}

// isToken: ^[A-Za-z0-9][A-Za-z0-9_.+-]*$, 1 to 64 characters.
func isToken(v string) bool {
	if len(v) == 0 || len(v) > 64 || !isAlnum(v[0]) {
		return false
	}
	for i := 1; i < len(v); i++ {
		c := v[i]
		if !isAlnum(c) && c != '_' && c != '.' && c != '+' && c != '-' {
			return false
		}
	}
	return true
}

// isRoundID: ^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$
func isRoundID(v string) bool {
	if len(v) == 0 || len(v) > 64 || !isAlnum(v[0]) {
		return false
	}
	for i := 1; i < len(v); i++ {
		c := v[i]
		if !isAlnum(c) && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// isIdent: ^[a-z][a-z0-9_]{0,max-1}$ (check ids and reason keys).
func isIdent(v string, max int) bool {
	if len(v) == 0 || len(v) > max || v[0] < 'a' || v[0] > 'z' {
		return false
	}
	for i := 1; i < len(v); i++ {
		c := v[i]
		if (c < 'a' || c > 'z') && !isDigit(c) && c != '_' {
			return false
		}
	}
	return true
}

// isParamName: ^[a-z][A-Za-z0-9_]{0,31}$
func isParamName(v string) bool {
	if len(v) == 0 || len(v) > 32 || v[0] < 'a' || v[0] > 'z' {
		return false
	}
	for i := 1; i < len(v); i++ {
		c := v[i]
		if !isAlnum(c) && c != '_' {
			return false
		}
	}
	return true
}

// isParamString: ^[A-Za-z0-9_.:+/-]*$, at most 64 characters.
func isParamString(v string) bool {
	if len(v) > 64 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !isAlnum(c) && strings.IndexByte("_.:+/-", c) < 0 {
			return false
		}
	}
	return true
}

// isDate: ^[0-9]{4}-[0-9]{2}-[0-9]{2}$
func isDate(v string) bool {
	return len(v) == 10 && digits(v[0:4]) && v[4] == '-' && digits(v[5:7]) && v[7] == '-' && digits(v[8:10])
}

// isTimestamp: ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$
func isTimestamp(v string) bool {
	return len(v) == 24 && isDate(v[:10]) && v[10] == 'T' && digits(v[11:13]) && v[13] == ':' && digits(v[14:16]) &&
		v[16] == ':' && digits(v[17:19]) && v[19] == '.' && digits(v[20:23]) && v[23] == 'Z'
}

// parseTimeFast is attest.ParseTime for a string isTimestamp accepted, with years 1000
// to 9999: the fields, read directly, must each be in range (time.Parse's rule), so
// that the time formats back to the same string.
func parseTimeFast(v string) (time.Time, bool) {
	num := func(i, n int) int {
		x := 0
		for _, c := range []byte(v[i : i+n]) {
			x = x*10 + int(c-'0')
		}
		return x
	}
	y, mo, d, h, mi, sec, ms := num(0, 4), num(5, 2), num(8, 2), num(11, 2), num(14, 2), num(17, 2), num(20, 3)
	if y < 1000 || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || sec > 59 {
		return time.Time{}, false
	}
	if d > time.Date(y, time.Month(mo)+1, 0, 0, 0, 0, 0, time.UTC).Day() {
		return time.Time{}, false
	}
	return time.Date(y, time.Month(mo), d, h, mi, sec, ms*int(time.Millisecond), time.UTC), true
}

func digits(v string) bool {
	for i := 0; i < len(v); i++ {
		if !isDigit(v[i]) {
			return false
		}
	}
	return true
}

// isURL: ^https?://[^\s]+$, 1 to 2048 characters (the fast path's strings hold no
// white space but the space itself).
func isURL(v string) bool {
	rest, ok := strings.CutPrefix(v, "https://")
	if !ok {
		rest, ok = strings.CutPrefix(v, "http://")
	}
	return ok && len(v) <= 2048 && len(rest) > 0 && strings.IndexByte(rest, ' ') < 0
}

// isPackage: ^pkg:[a-z]+/[^\s]+$, 1 to 512 characters.
func isPackage(v string) bool {
	rest, ok := strings.CutPrefix(v, "pkg:")
	if !ok || len(v) > 512 {
		return false
	}
	i := 0
	for i < len(rest) && rest[i] >= 'a' && rest[i] <= 'z' {
		i++
	}
	if i == 0 || i >= len(rest) || rest[i] != '/' {
		return false
	}
	rest = rest[i+1:]
	return len(rest) > 0 && strings.IndexByte(rest, ' ') < 0
}
