package checks

import (
	"maps"
	"regexp"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/probity-dev/probity/attest"
)

// Result is one check's outcome in one round. Reason is always set by Evaluate, for
// VERIFIED too. Evidence is for people and storage only: it never enters the signed
// statement (Signed drops it). Its JSON form is the stored one (EncodeResults).
type Result struct {
	ID       string              `json:"id"`
	Status   attest.CheckStatus  `json:"status"`
	Reason   *attest.CheckReason `json:"reason,omitempty"`
	Evidence []Evidence          `json:"evidence,omitempty"`
}

// Evidence points at what a result is based on. Every string in it may derive from
// server-supplied text and is therefore escaped; none of it is ever signed. It is
// stored with its Go field names as JSON member names ("Tool", "Field", ...), as it
// always has been.
type Evidence struct {
	// Tool is the name of the tool concerned, escaped ("" for server-level evidence such
	// as the instructions, "tools[i]" for a tool without a string name).
	Tool string
	// Field is where in the tool (or the round) the evidence was found, e.g.
	// "description", "inputSchema.properties.path.description", "instructions".
	Field string
	// Offset is the byte offset of the finding within the field's decoded text.
	Offset int
	// Sample is an excerpt of at most MaxSampleLen ASCII characters, escaped in the manner
	// of strconv.QuoteToASCII (without the quotes) so invisible characters show as \u
	// escapes; "..." marks a cut.
	Sample string
	// Note says in plain words what was found.
	Note string
}

// MaxSampleLen bounds Evidence.Sample.
const MaxSampleLen = 80

// Signed returns the part of r that is signed: id, status and reason, without evidence.
// The reason's parameters are copied.
func (r Result) Signed() attest.CheckResult {
	cr := attest.CheckResult{ID: r.ID, Status: r.Status}
	if r.Reason != nil {
		cr.Reason = &attest.CheckReason{Key: r.Reason.Key}
		if len(r.Reason.Params) > 0 {
			cr.Reason.Params = maps.Clone(r.Reason.Params)
		}
	}
	return cr
}

// Evaluate runs every check of the catalog over obs and returns exactly one result per
// check, in catalog order, with the round's coverage:
//
//   - attest.CoverageAuthRequired, signed, when the endpoint answered and a 401 stopped
//     the handshake or tools/list (obs.Handshake.Unauthorized or obs.Tools.Unauthorized);
//     every check outside attest.AuthRequiredChecks is then UNVERIFIED
//     credential_required;
//   - attest.CoverageFull, signed, when the handshake completed with a protocol version
//     of the form YYYY-MM-DD, the tool list is Complete, within the schema's bounds
//     (≤ 100 pages, ≤ 10,000 tools) and fingerprintable;
//   - otherwise "" and signed false: the round is stored unsigned, its results computed
//     all the same.
//
// A nil obs is treated as an empty Observation.
func Evaluate(obs *Observation) (results []Result, coverage attest.Coverage, signed bool) {
	return evaluate(newInput(obs))
}

func evaluate(in *input) (results []Result, coverage attest.Coverage, signed bool) {
	coverage = in.coverage()
	results = make([]Result, len(catalog))
	for i, c := range catalog {
		var r Result
		if coverage == attest.CoverageAuthRequired && !slices.Contains(attest.AuthRequiredChecks, c.ID) {
			r = unverified(attest.ReasonCredentialRequired, nil)
		} else {
			r = c.run(in)
		}
		r.ID = c.ID
		results[i] = r
	}
	return results, coverage, coverage != ""
}

// input is an Observation with values several checks need, computed once.
type input struct {
	obs *Observation

	// withSurface also builds the surface document when the fingerprints are computed
	// (EvaluateRound), from the same canonical form of the tools.
	withSurface bool
	fpDone      bool
	fp          *attest.Fingerprints
	fpErr       error
	surface     []byte
}

func newInput(obs *Observation) *input {
	if obs == nil {
		obs = &Observation{}
	}
	return &input{obs: obs}
}

// fingerprints is Fingerprints(in.obs), computed once.
func (in *input) fingerprints() (*attest.Fingerprints, error) {
	if !in.fpDone {
		in.fp, in.surface, in.fpErr = fingerprintsOf(in.obs, in.withSurface)
		in.fpDone = true
	}
	return in.fp, in.fpErr
}

var datePattern = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)

// The bounds the predicate schema puts on a full statement.
const (
	maxSignedPages = 100
	maxSignedTools = attest.MaxTools
)

func (in *input) coverage() attest.Coverage {
	o := in.obs
	if o.Reach.Failure != ReachOK {
		return ""
	}
	if o.Handshake.Unauthorized || o.Tools.Unauthorized {
		return attest.CoverageAuthRequired
	}
	if !o.Handshake.Completed() || !o.Tools.Complete || !datePattern.MatchString(o.Handshake.ProtocolVersion) {
		return ""
	}
	if o.Handshake.DuplicateMember != "" {
		// The protocol version, server name and instructions a statement would carry
		// depend on the parser.
		return ""
	}
	if o.Tools.Pages < 0 || o.Tools.Pages > maxSignedPages || len(o.Tools.Tools) > maxSignedTools {
		return ""
	}
	if fp, err := in.fingerprints(); err != nil || fp == nil {
		return ""
	}
	return attest.CoverageFull
}

// maxSafeInt is 2^53, the bound of signed numbers.
const maxSafeInt = 1 << 53

func clampInt(v int64) int64 {
	return max(-maxSafeInt, min(v, maxSafeInt))
}

// params builds reason parameters from name/value pairs; ints are clamped to ±2^53.
func params(kv ...any) map[string]any {
	if len(kv) == 0 {
		return nil
	}
	m := make(map[string]any, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		name := kv[i].(string)
		switch v := kv[i+1].(type) {
		case int:
			m[name] = clampInt(int64(v))
		case int64:
			m[name] = clampInt(v)
		default:
			m[name] = v
		}
	}
	return m
}

func result(st attest.CheckStatus, key string, p map[string]any, ev ...Evidence) Result {
	return Result{Status: st, Reason: &attest.CheckReason{Key: key, Params: p}, Evidence: ev}
}

func verified(key string, p map[string]any, ev ...Evidence) Result {
	return result(attest.StatusVerified, key, p, ev...)
}

func failed(key string, p map[string]any, ev ...Evidence) Result {
	return result(attest.StatusFailed, key, p, ev...)
}

func observedRisk(key string, p map[string]any, ev ...Evidence) Result {
	return result(attest.StatusObservedRisk, key, p, ev...)
}

func unverified(key string, p map[string]any, ev ...Evidence) Result {
	return result(attest.StatusUnverified, key, p, ev...)
}

// escape renders s as printable ASCII in the manner of strconv.QuoteToASCII (without the
// surrounding quotes), cut to at most n bytes at a character boundary with "..." marking
// the cut.
func escape(s string, n int) string {
	out := make([]byte, 0, min(len(s), n)+12)
	fit := 0 // the longest prefix, at a character boundary, that leaves room for "..."
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		var e string
		if r == utf8.RuneError && size == 1 {
			e = `\x` + strconv.FormatUint(uint64(s[i])|0x100, 16)[1:]
		} else {
			q := strconv.QuoteToASCII(s[i : i+size])
			e = q[1 : len(q)-1]
		}
		out = append(out, e...)
		if len(out) <= n-3 {
			fit = len(out)
		}
		if len(out) > n {
			return string(out[:fit]) + "..."
		}
		i += size
	}
	return string(out)
}
