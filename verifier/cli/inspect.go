package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/verifier"
)

// Inspect's bounds: how many records it shows by default and at most.
const (
	DefaultInspectLimit = 20
	MaxInspectLimit     = 10000
)

const inspectUsageText = `Usage:

	%[1]s [--keys keys.json] [--json] [--limit N] FILE...

Shows what a signed record says, readably: a DSSE envelope, a bundle (.bundle.json), a
JSONL export of them (the first --limit records, default 20), a key document
(keys.json, /.well-known/probity-keys.json) or a tombstone document. - reads standard
input.

For a record: the statement and predicate types, the subject with its digests, the
entry, the round, coverage and times, every check with its status and reason, the
fingerprints, the key ids that signed, and for a bundle what it says about the log (log
index, checkpoint origin and size, the names on the checkpoint's signatures). With
--keys, each record is also verified as "verify" does, and the result says what was
established or why it failed.

For a key document: each key's key_id and spki_sha256 computed from its SPKI (not
copied from the document), its validity window and revocation, whether it may sign
now, and the log's origin and verifier key. Compare the spki_sha256 of the key valid now
with the one the operator announced through another channel to pin the key.

Server-supplied text is printed with control and invisible characters escaped.

Flags:

	--keys FILE          verify each record against this key document
	--witness-key VKEY   a trusted witness's verifier key, or a file holding it (repeat)
	--min-witnesses N    trusted witnesses that must have cosigned a bundle's checkpoint
	                     (default 1 when --witness-key is given, else 0)
	--json               one JSON object instead of text
	--limit N            show at most N records (1 to 10000, default 20)

Exit status: 0 when every record was read (and, with --keys, verified), 1 when a record
failed to verify, 2 when input is not a record or on usage or I/O errors.
`

// inspected is one record's outcome, in input order.
type inspected struct {
	Source      string                `json:"source"`
	Description *verifier.Description `json:"description,omitempty"`
	Error       string                `json:"error,omitempty"`
}

// Inspect runs the inspect command with args (without the command name) and returns the
// exit code. name is the command as the user typed it, for messages.
func Inspect(name string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	keysPath := fs.String("keys", "", "")
	var witnessKeys stringList
	fs.Var(&witnessKeys, "witness-key", "")
	minWitnesses := fs.Int("min-witnesses", 0, "")
	asJSON := fs.Bool("json", false, "")
	limit := fs.Int("limit", DefaultInspectLimit, "")
	usage := func() { fmt.Fprintf(stderr, inspectUsageText, name) }
	if err := ParseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, inspectUsageText, name)
			return ExitOK
		}
		fmt.Fprintf(stderr, "error: %v\n", err)
		usage()
		return ExitUsage
	}
	paths := fs.Args()
	switch {
	case len(paths) == 0:
		fmt.Fprintf(stderr, "error: no FILE given\nhint: %s envelope.json\n", name)
		return ExitUsage
	case *limit < 1 || *limit > MaxInspectLimit:
		fmt.Fprintf(stderr, "error: --limit %d is not between 1 and %d\n", *limit, MaxInspectLimit)
		return ExitUsage
	}
	setFlags := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { setFlags[f.Name] = true })
	var doc *keys.Document
	policy := verifier.DefaultPolicy()
	if *keysPath != "" {
		var err error
		if doc, err = keys.Load(*keysPath); err != nil {
			fmt.Fprintf(stderr, "error: %v\n", err)
			return ExitUsage
		}
		if err := setWitnesses(&policy, witnessKeys, *minWitnesses, setFlags["min-witnesses"]); err != nil {
			fmt.Fprintf(stderr, "error: %v\n", err)
			return ExitUsage
		}
	} else if len(witnessKeys) > 0 || setFlags["min-witnesses"] {
		fmt.Fprintf(stderr, "error: --witness-key and --min-witnesses need --keys\n")
		return ExitUsage
	}

	now := time.Now()
	var records []inspected
	code := ExitOK
	truncated := false
	err := walkEnvelopes(context.Background(), paths, func(source string, data []byte, readErr error) bool {
		if len(records) == *limit {
			truncated = true
			return false
		}
		rec := inspected{Source: source}
		var d *verifier.Description
		err := readErr
		if err == nil {
			d, err = verifier.Describe(data, now)
		}
		if err == nil && doc != nil {
			err = verifier.VerifyDescribed(d, data, doc, policy)
		}
		switch {
		case err != nil:
			rec.Error = err.Error()
			code = ExitUsage
		case d.Verification != nil && !d.Verification.Verified && code == ExitOK:
			code = ExitFailed
		}
		rec.Description = d
		records = append(records, rec)
		return true
	})
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return ExitUsage
	}
	if len(records) == 0 {
		fmt.Fprintf(stderr, "error: nothing to inspect in %s\n", strings.Join(paths, " "))
		return ExitUsage
	}
	out := bufio.NewWriterSize(stdout, 64<<10)
	defer out.Flush()
	if *asJSON {
		b, err := json.MarshalIndent(struct {
			Records   []inspected `json:"records"`
			Truncated bool        `json:"truncated,omitempty"`
		}{records, truncated}, "", "  ")
		if err != nil {
			fmt.Fprintf(stderr, "error: %v\n", err)
			return ExitUsage
		}
		out.Write(b)
		out.WriteByte('\n')
	} else {
		for i, r := range records {
			if i > 0 {
				out.WriteByte('\n')
			}
			writeInspected(out, r, doc != nil)
		}
		if truncated {
			fmt.Fprintf(out, "\n(stopped after %d records; --limit N shows more)\n", *limit)
		}
	}
	for _, r := range records {
		if r.Error != "" {
			out.Flush()
			fmt.Fprintf(stderr, "error: %s: %s\n", Printable(r.Source), Printable(r.Error))
		}
	}
	return code
}

// Printable returns s with every character that is not graphic (control characters,
// format and invisible characters such as U+200B or U+202E, invalid UTF-8) escaped as
// \xNN, \uNNNN or \UNNNNNNNN, so that what a server or a file supplied cannot move the
// cursor, hide text or reorder a line on a terminal. A backslash is doubled.
func Printable(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || r == '\\' || !unicode.IsGraphic(r) || unicode.Is(unicode.Cf, r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case r == ' ' || (unicode.IsGraphic(r) && !unicode.Is(unicode.Cf, r)):
			b.WriteRune(r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
		i += n
	}
	return b.String()
}

// textWriter writes "label  value" lines, every value made Printable.
type textWriter struct {
	w      *bufio.Writer
	indent string
}

func (t textWriter) line(label string, format string, args ...any) {
	fmt.Fprintf(t.w, "%s", strings.TrimRight(fmt.Sprintf("%s%-18s %s", t.indent, label, Printable(fmt.Sprintf(format, args...))), " "))
	t.w.WriteByte('\n')
}

func (t textWriter) sub() textWriter { return textWriter{t.w, t.indent + "  "} }

var predicateNames = map[string]string{
	attest.ProbePredicateType:      "a probe round: what one round of checks observed",
	attest.ChangePredicateType:     "a change: one numbered change of an entry's history",
	attest.SupplyPredicateType:     "a supply run: the eleven supply-chain checks, score and Verified",
	attest.KeysPredicateType:       "a key document version",
	attest.DisputePredicateType:    "a dispute: a maintainer contests one check result of a signed round",
	attest.OutcomePredicateType:    "an outcome: an operator's decision on a dispute",
	attest.WithdrawalPredicateType: "a withdrawal: an operator withdrew an entry's Verified, or restored it",
	attest.BaselinePredicateType:   "an approved baseline: the tool surface a maintainer approved",
}

func writeInspected(w *bufio.Writer, r inspected, verifying bool) {
	d := r.Description
	if d == nil {
		fmt.Fprintf(w, "%s: not a record: %s\n", Printable(r.Source), Printable(r.Error))
		return
	}
	t := textWriter{w: w}
	form := strings.ReplaceAll(d.Form, "_", " ")
	fmt.Fprintf(w, "%s: %s\n", Printable(r.Source), form)
	t = t.sub()
	if d.PredicateType != "" {
		t.line("statement", "%s", d.StatementType)
		t.line("predicate type", "%s (%s)", d.PredicateType, predicateNames[d.PredicateType])
		t.line("payload type", "%s", d.PayloadType)
		for _, s := range d.Subject {
			t.line("subject", "%s", s.Name)
			for _, alg := range slices.Sorted(maps.Keys(s.Digest)) {
				t.sub().line(alg, "%s", s.Digest[alg])
			}
		}
	}
	switch {
	case d.Probe != nil:
		writeProbe(t, d.Probe)
	case d.Change != nil:
		writeChange(t, d.Change)
	case d.Supply != nil:
		writeSupply(t, d.Supply)
	case d.Dispute != nil:
		writeDispute(t, d.Dispute)
	case d.Outcome != nil:
		writeOutcome(t, d.Outcome)
	case d.Withdrawal != nil:
		w := d.Withdrawal
		t.line("withdrawal", "%d, %s, %s", w.Number, w.Action, w.At)
		t.line("entry", "%s", Printable(w.Entry.Slug))
		t.line("supply run", "seq %d, payload %s", w.Supply.Seq, w.Supply.PayloadDigest)
		t.line("reason", "%s", Printable(w.Reason))
	case d.Baseline != nil:
		b := d.Baseline
		t.line("baseline", "%d of %s (%d tools)", b.Number, b.Entry.Slug, b.ToolCount)
		t.line("approvedAt", "%s", b.ApprovedAt)
		t.line("basis", "round %s (%s)", b.Basis.RoundID, b.Basis.PayloadDigest)
		t.line("toolset", "%s", b.Fingerprints.Toolset)
		t.line("schema", "%s", b.Fingerprints.Schema)
		t.line("surface", "%s", b.Fingerprints.Surface)
	case d.Keys != nil:
		t.line("version", "%d (%s)", d.Keys.Version, d.Keys.Event)
		t.line("issuedAt", "%s", d.Keys.IssuedAt)
		if d.Keys.Previous != "" {
			t.line("previous", "%s", d.Keys.Previous)
		}
	}
	if len(d.KeyIDs) > 0 {
		t.line("signed by", "%s", strings.Join(d.KeyIDs, ", "))
	}
	if l := d.Log; l != nil {
		t.line("log (as claimed)", "index %d, kind %s", l.LogIndex, l.Kind)
		s := t.sub()
		s.line("checkpoint", "origin %s, size %d, root %s", l.CheckpointOrigin, l.CheckpointSize, l.CheckpointRoot)
		s.line("signature lines", "%s", orNone(strings.Join(l.CheckpointSigners, ", ")))
		s.line("inclusion proof", "%s", plural(l.InclusionProofHashes, "hash", "hashes"))
		if l.PreviousSize != nil {
			s.line("previous", "checkpoint of size %d, consistency proof of %s", *l.PreviousSize, plural(l.ConsistencyHashes, "hash", "hashes"))
		}
	}
	if kd := d.KeyDocument; kd != nil {
		writeKeyDocument(t, kd)
	}
	if tb := d.Tombstone; tb != nil {
		t.line("entry", "%s (deleted)", tb.Entry)
		t.line("deletedAt", "%s", tb.DeletedAt)
		t.line("reason", "%s", tb.Reason)
		t.line("removed", "%s", plural(len(tb.Removed), "record", "records"))
		for _, rm := range tb.Removed {
			t.sub().line("seq "+strconv.FormatInt(rm.Seq, 10), "%s %s", rm.Kind, rm.PayloadDigest)
		}
	}
	switch {
	case d.Verification != nil:
		writeVerification(t, d.Verification)
	case d.Form == "envelope" || d.Form == "bundle":
		if verifying {
			break
		}
		t.line("verification", "not checked: give --keys keys.json to verify the signature%s", map[bool]string{true: " and the log proof", false: ""}[d.Form == "bundle"])
	}
}

// plural writes n with its noun, singular for 1.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func writeProbe(t textWriter, p *attest.ProbePredicate) {
	target := p.Target.Kind + " " + p.Target.URL + p.Target.Package
	if p.Target.Version != "" {
		target += " version " + p.Target.Version
	}
	t.line("entry", "%s", target)
	t.line("round", "%s", p.RoundID)
	t.line("coverage", "%s", p.Coverage)
	t.line("observedAt", "%s", p.ObservedAt)
	if p.ServerInfo != nil {
		t.line("server", "%s %s", p.ServerInfo.Name, p.ServerInfo.Version)
	}
	if p.ProtocolVersion != "" {
		t.line("protocol", "%s", p.ProtocolVersion)
	}
	t.line("tools", "%d (%s)", p.ToolCount, plural(p.Pages, "page", "pages"))
	t.line("timings", "handshake %d ms, tools/list %d ms, total %d ms", p.Timings.HandshakeMs, p.Timings.ToolsListMs, p.Timings.TotalMs)
	t.line("probe", "Probity %s, suite %s (%s)", p.Probe.ToolVersion, p.Probe.SuiteVersion, p.Probe.SuiteDigest)
	counts := map[attest.CheckStatus]int{}
	for _, c := range p.Checks {
		counts[c.Status]++
	}
	var parts []string
	for _, s := range attest.Statuses {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	t.line("checks", "%d: %s", len(p.Checks), strings.Join(parts, ", "))
	// Findings first (FAILED, OBSERVED_RISK), then the rest, each in signed order.
	s := t.sub()
	for _, pass := range [][]attest.CheckStatus{{attest.StatusFailed, attest.StatusObservedRisk}, {attest.StatusVerified, attest.StatusUnverified}} {
		for _, c := range p.Checks {
			if slices.Contains(pass, c.Status) {
				s.line(c.ID, "%s%s", c.Status, reasonText(c.Reason))
			}
		}
	}
	if f := p.Fingerprints; f != nil {
		t.line("fingerprints", "")
		s.line("toolset", "%s", f.Toolset)
		s.line("schema", "%s", f.Schema)
		s.line("surface", "%s", f.Surface)
		s.line("instructions", "%s", f.Instructions)
	} else {
		t.line("fingerprints", "none (coverage %s)", p.Coverage)
	}
}

// reasonText renders a check's reason: its key and its bounded parameters by name.
func reasonText(r *attest.CheckReason) string {
	if r == nil {
		return ""
	}
	s := "  reason " + r.Key
	if len(r.Params) > 0 {
		var ps []string
		for _, k := range slices.Sorted(maps.Keys(r.Params)) {
			ps = append(ps, fmt.Sprintf("%s=%v", k, r.Params[k]))
		}
		s += " (" + strings.Join(ps, ", ") + ")"
	}
	return s
}

func entryText(e attest.ChangeEntry) string {
	return strings.TrimSpace(e.Kind + " " + e.Slug + " " + e.URL + e.Package)
}

func writeChange(t textWriter, c *attest.ChangePredicate) {
	t.line("entry", "%s", entryText(c.Entry))
	t.line("change", "ch-%d, %s, %s", c.Number, c.Kind, c.Origin)
	t.line("recordedAt", "%s", c.RecordedAt)
	t.line("summary", "%s", c.Summary)
	if len(c.Badges) > 0 {
		t.line("badges", "%s", strings.Join(c.Badges, ", "))
	}
	if c.Before != nil {
		writeState(t, "before", *c.Before)
	}
	writeState(t, "after", c.After)
	t.line("tool version", "%s", c.ToolVersion)
}

func writeState(t textWriter, label string, s attest.ChangeState) {
	t.line(label, "")
	u := t.sub()
	for _, kv := range [][2]string{{"round", s.RoundID}, {"payload digest", s.PayloadDigest}, {"surface", s.Surface}, {"instructions", s.Instructions}, {"version", s.Version}, {"edit", s.Edit}} {
		if kv[1] != "" {
			u.line(kv[0], "%s", kv[1])
		}
	}
	if s.ToolCount != nil {
		u.line("tools", "%d", *s.ToolCount)
	}
}

func writeSupply(t textWriter, s *attest.SupplyPredicate) {
	t.line("entry", "%s", entryText(s.Entry))
	t.line("evaluatedAt", "%s", s.EvaluatedAt)
	verdict := "not Verified"
	if s.Verified {
		verdict = "Verified"
	}
	t.line("score", "%d of the %d points that ran; %s", s.Score, s.WeightRan, verdict)
	if s.PackageVersion != "" {
		t.line("package version", "%s", s.PackageVersion)
	}
	if p := s.Provenance; p != nil {
		t.line("provenance", "%s %s", p.Repository, p.Commit)
	}
	if s.ScorecardCommit != "" {
		t.line("scorecard commit", "%s", s.ScorecardCommit)
	}
	t.line("checks", "%d", len(s.Checks))
	u := t.sub()
	for _, c := range s.Checks {
		serious := ""
		if c.Serious {
			serious = ", serious"
		}
		u.line(c.ID, "%s, %s of %d points%s", c.Status, strconv.FormatFloat(float64(c.PointsMilli)/1000, 'f', -1, 64), c.Weight, serious)
	}
	t.line("suite", "%s (Probity %s)", s.SuiteVersion, s.ToolVersion)
}

func writeKeyDocument(t textWriter, kd *verifier.KeyDocumentDescription) {
	t.line("issuer", "%s", kd.Issuer)
	t.line("format version", "%d", kd.FormatVersion)
	for _, k := range kd.Keys {
		state := "valid now"
		switch {
		case k.RevokedAt != "":
			state = "revoked at " + k.RevokedAt + ": " + k.RevocationReason
		case !k.ValidNow:
			state = "not valid now"
		}
		t.line("key "+k.KeyID, "%s", state)
		u := t.sub()
		u.line("spki_sha256", "%s", k.SPKISHA256)
		u.line("valid from", "%s", k.ValidFrom)
		u.line("valid until", "%s", orOpen(k.ValidUntil))
	}
	if kd.LogKey != "" {
		t.line("log", "%s", kd.LogOrigin)
		t.sub().line("key", "%s", kd.LogKey)
	} else {
		t.line("log", "none listed")
	}
	if kd.WebhookKey != "" {
		t.line("webhook key", "%s (signs webhook deliveries, Standard Webhooks v1a)", kd.WebhookKey)
	}
	t.line("computed", "key_id and spki_sha256 above are computed from each key's spki")
}

func orOpen(s string) string {
	if s == "" {
		return "open-ended"
	}
	return s
}

func writeVerification(t textWriter, v *verifier.Verification) {
	r := v.Result
	if !v.Verified {
		reason := "failed"
		if r != nil && r.Failure != nil {
			reason = r.Failure.Error()
		}
		t.line("verification", "FAILED: %s", reason)
		if r != nil {
			for _, s := range r.Signatures {
				t.sub().line("signature", "key %s: %s", s.KeyID, s.Outcome)
			}
		}
		return
	}
	var ids []string
	for _, s := range r.Signatures {
		ids = append(ids, s.KeyID)
	}
	t.line("verification", "VERIFIED: signed by %s, each key listed, unrevoked and valid at %s; the payload is canonical and valid against its schema", strings.Join(ids, ", "), attest.FormatTime(r.ObservedAt))
	if l := r.Log; l != nil {
		u := t.sub()
		u.line("in the log", "index %d, proven against the checkpoint of size %d signed by the log key of %s", l.LogIndex, l.CheckpointSize, l.Origin)
		if len(l.Cosignatures) == 0 {
			u.line("witnesses", "none trusted (give --witness-key)")
		}
		for _, c := range l.Cosignatures {
			u.line("witness", "%s saw it at %s", c.Witness, attest.FormatTime(c.Time))
		}
		if l.PreviousSize != nil {
			u.line("previous", "the checkpoint of size %d is consistent with it", *l.PreviousSize)
		}
	}
}

// writeDispute writes a dispute; its statement is the maintainer's text, printed line by
// line through Printable like every other value.
func writeDispute(t textWriter, p *attest.DisputePredicate) {
	t.line("entry", "%s", entryText(p.Entry))
	t.line("dispute", "%d", p.Number)
	t.line("openedAt", "%s", p.OpenedAt)
	t.line("finding", "%s %s in record %d (%s)", p.Finding.CheckID, p.Finding.Status, p.Finding.Record.Seq, p.Finding.Record.PayloadDigest)
	t.line("statement", "")
	s := t.sub()
	for _, l := range strings.Split(p.Statement, "\n") {
		s.line("|", "%s", l)
	}
	if p.Evidence != "" {
		t.line("evidence", "%s", p.Evidence)
	}
	t.line("tool version", "%s", p.ToolVersion)
}

// writeOutcome writes an outcome; its reason is the operator's text.
func writeOutcome(t textWriter, p *attest.OutcomePredicate) {
	t.line("entry", "%s", entryText(p.Entry))
	t.line("dispute", "%d, record %d (%s)", p.Dispute.Number, p.Dispute.Record.Seq, p.Dispute.Record.PayloadDigest)
	decision := p.Decision
	if p.SuiteVersion != "" {
		decision += " in suite version " + p.SuiteVersion
	}
	t.line("decision", "%s", decision)
	t.line("decidedAt", "%s", p.DecidedAt)
	t.line("reason", "")
	s := t.sub()
	for _, l := range strings.Split(p.Reason, "\n") {
		s.line("|", "%s", l)
	}
	t.line("tool version", "%s", p.ToolVersion)
}
