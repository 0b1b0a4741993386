// Package cli is the verify command shared by "probity verify" and the standalone
// auditor's binary probity-verify: flags, the key document or --pubkey, the log and
// witness keys, the reports, and the input side (VerifyPaths walks files and
// directories, reads single envelopes and bundles and JSONL exports of them from files or
// standard input in bounded memory, and hands each to verifier.Verify or
// verifier.VerifyBundle on every core, emitting results in input order; --checkpoint,
// --newer and --proof check a saved checkpoint against a newer one with
// verifier.CheckConsistency). Package verifier itself does no I/O. ParseFlags, which
// lets flags come before or after positional arguments, is the flag parser every command
// of both binaries uses (it lives here because probity-verify may import nothing else of
// the module).
package cli

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/verifier"
)

// Exit codes.
const (
	ExitOK      = 0 // every envelope verified
	ExitFailed  = 1 // at least one envelope failed
	ExitUsage   = 2 // usage or I/O error
	progressGap = 5 * time.Second
)

const usageText = `Usage:

	%[1]s --keys keys.json [flags] PATH...
	%[1]s --pubkey SPKI [flags] PATH...
	%[1]s [--keys keys.json | --log-key VKEY] --checkpoint SAVED --newer NEWER --proof FILE

Verifies Probity's DSSE envelopes and log bundles offline. PATH is an envelope or
bundle file (e.g. a .bundle.json), a JSONL export (one envelope or bundle per line), a
directory of them (walked for .json, .jsonl and .dsse files; files named keys.json are
skipped), or - for standard input. Input is streamed, never loaded whole, and verified
on every core. Flags may come before or after the PATHs ("--" ends them).

An envelope verifies when it is strict JSON with the exact DSSE shape, payloadType
application/vnd.in-toto+json, 1 to 4 signatures each by a distinct listed key, unrevoked,
whose validity window contains the statement's observedAt, and a payload that is exactly
canonical (nfc-jcs/v1) and valid against its predicate's schema.

A bundle (a JSON object with a "bundle" member) verifies when its envelope does and the
record is in the transparency log: the leaf rebuilt from the envelope is in the
checkpoint's tree (inclusion proof), the checkpoint is signed by the log key, every
cosignature by a trusted witness verifies and at least --min-witnesses of them cosigned,
the previous checkpoint (if any) is signed by the log and the checkpoint extends it
(consistency proof), and the record's own time is neither after the checkpoint was first
witnessed nor more than --max-backdate before the previous checkpoint was. A key revoked
at R still vouches for a record a trusted witness saw in the log before R.

Given a dispute and its outcome (dispute/v1, outcome/v1), it also checks that the
outcome decides that dispute: the same entry, the dispute's number and payload digest,
and, when the dispute is a bundle, its log index. An outcome whose dispute is not given
is noted, not checked; whether a dispute has an outcome at all only the log says.

Flags:

	--keys FILE          the key document (e.g. a saved /.well-known/probity-keys.json);
	                     a format 2 document names the log and its key
	--pubkey SPKI        a single Ed25519 public key instead: base64 SPKI DER, or a file
	                     holding it as PEM ("PUBLIC KEY") or base64; no validity window
	--json               print a machine-readable report instead of the table
	--quiet, -q          print only failures and the summary
	--threshold N        distinct keys that must have signed (default 1)
	--require-log        fail bare envelopes: only bundles, with their log proof, pass
	--log-key VKEY       the log's checkpoint key (C2SP signed-note verifier key,
	                     origin+hash+base64), or a file holding it; overrides the key
	                     document's
	--witness-key VKEY   a trusted witness's cosignature/v1 verifier key (type 0x04), or
	                     a file holding it; repeat for several witnesses (each public
	                     key once: a cosignature does not cover the witness's name)
	--min-witnesses N    trusted witnesses that must have cosigned a bundle's checkpoint
	                     (and, with --newer, the newer checkpoint; default 1 when
	                     --witness-key is given, else 0)
	--max-backdate D     how far a record's time may lie before the previous checkpoint
	                     was witnessed (default 1h; Go duration syntax, e.g. 90m)

Consistency between a checkpoint you saved and a newer one (both signed notes, as served
at /log/checkpoint), instead of or besides PATHs:

	--checkpoint FILE    the checkpoint saved earlier
	--newer FILE         the newer checkpoint
	--proof FILE         the RFC 6962 consistency proof between them: one standard
	                     base64 hash per line (empty for equal sizes)

Exit status: 0 when everything verifies, 1 when anything fails, 2 on usage or I/O
errors.
`

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// Main runs the verify command with args (without the command name) and returns the
// exit code. name is the command as the user typed it, for messages.
func Main(name string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	keysPath := fs.String("keys", "", "")
	pubkey := fs.String("pubkey", "", "")
	asJSON := fs.Bool("json", false, "")
	quiet := fs.Bool("quiet", false, "")
	fs.BoolVar(quiet, "q", false, "")
	threshold := fs.Int("threshold", 1, "")
	workers := fs.Int("workers", 0, "")
	requireLog := fs.Bool("require-log", false, "")
	logKey := fs.String("log-key", "", "")
	var witnessKeys stringList
	fs.Var(&witnessKeys, "witness-key", "")
	minWitnesses := fs.Int("min-witnesses", 0, "")
	maxBackdate := fs.Duration("max-backdate", verifier.DefaultMaxBackdate, "")
	savedPath := fs.String("checkpoint", "", "")
	newerPath := fs.String("newer", "", "")
	proofPath := fs.String("proof", "", "")
	usage := func() { fmt.Fprintf(stderr, usageText, name) }
	if err := ParseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, usageText, name)
			return ExitOK
		}
		fmt.Fprintf(stderr, "error: %v\n", err)
		usage()
		return ExitUsage
	}
	setFlags := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { setFlags[f.Name] = true })
	paths := fs.Args()
	consistency := *savedPath != "" || *newerPath != "" || *proofPath != ""
	switch {
	case consistency && (*savedPath == "" || *newerPath == "" || *proofPath == ""):
		fmt.Fprintf(stderr, "error: --checkpoint, --newer and --proof come together\nhint: %s --log-key VKEY --checkpoint saved.txt --newer checkpoint.txt --proof proof.txt\n", name)
		return ExitUsage
	case *keysPath != "" && *pubkey != "":
		fmt.Fprintf(stderr, "error: give exactly one of --keys and --pubkey\nhint: %s --keys keys.json envelope.json\n", name)
		return ExitUsage
	case len(paths) > 0 && *keysPath == "" && *pubkey == "":
		fmt.Fprintf(stderr, "error: give exactly one of --keys and --pubkey\nhint: %s --keys keys.json envelope.json\n", name)
		return ExitUsage
	case len(paths) == 0 && !consistency:
		if *keysPath == "" && *pubkey == "" {
			fmt.Fprintf(stderr, "error: give exactly one of --keys and --pubkey\nhint: %s --keys keys.json envelope.json\n", name)
		} else {
			fmt.Fprintf(stderr, "error: no PATH given\nhint: %s --keys keys.json envelopes.jsonl\n", name)
		}
		return ExitUsage
	}
	var doc *keys.Document
	var err error
	switch {
	case *keysPath != "":
		doc, err = keys.Load(*keysPath)
	case *pubkey != "":
		doc, err = pubkeyDocument(*pubkey)
	}
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return ExitUsage
	}

	policy := verifier.DefaultPolicy()
	policy.Threshold = *threshold
	policy.RequireLog = *requireLog
	policy.MaxBackdate = *maxBackdate
	if *maxBackdate == 0 {
		policy.MaxBackdate = time.Nanosecond // zero tolerance, as asked; 0 means the default to the package
	}
	if policy.LogKey, err = keyArg("--log-key", *logKey); err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return ExitUsage
	}
	if err := setWitnesses(&policy, witnessKeys, *minWitnesses, setFlags["min-witnesses"]); err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return ExitUsage
	}

	out := bufio.NewWriterSize(stdout, 64<<10)
	defer out.Flush()
	var rep reporter
	if *asJSON {
		rep = &jsonReporter{w: out}
	} else {
		rep = &tableReporter{w: out, quiet: *quiet}
	}
	rep.start()
	start := time.Now()
	code := ExitOK

	if consistency {
		c, err := checkConsistencyFiles(*savedPath, *newerPath, *proofPath, doc, policy)
		if err != nil && !isFailure(err) {
			out.Flush()
			fmt.Fprintf(stderr, "error: %v\n", err)
			if errors.Is(err, verifier.ErrPolicy) && policy.LogKey == "" {
				fmt.Fprintf(stderr, "hint: give the log's key with --log-key, or a key document that lists the log with --keys\n")
			}
			return ExitUsage
		}
		rep.consistency(c)
		if !c.OK {
			code = ExitFailed
		}
		if len(paths) == 0 {
			rep.finish(Summary{}, time.Since(start))
			return code
		}
	}

	lastProgress := start
	n := 0
	links := newLinker()
	policyErrs := 0
	var policyErr error
	sum, err := VerifyPaths(context.Background(), paths, StreamConfig{
		Keys:    doc,
		Policy:  policy,
		Workers: *workers,
		Emit: func(it Item) {
			if errors.Is(it.Err, verifier.ErrPolicy) {
				policyErrs++
				policyErr = it.Err
			}
			rep.item(it)
			links.add(it)
			n++
			if n%1024 == 0 {
				if now := time.Now(); now.Sub(lastProgress) >= progressGap {
					lastProgress = now
					fmt.Fprintf(stderr, "%s: %d envelopes checked (%.0f/s)\n", name, n, float64(n)/now.Sub(start).Seconds())
				}
			}
		},
	})
	if err == nil {
		for _, l := range links.reports() {
			rep.link(l)
			if l.Checked && !l.OK {
				code = ExitFailed
			}
		}
	}
	rep.finish(sum, time.Since(start))
	switch {
	case err != nil:
		out.Flush()
		fmt.Fprintf(stderr, "error: %v\n", err)
		return ExitUsage
	case policyErrs > 0:
		out.Flush()
		fmt.Fprintf(stderr, "error: %d bundles could not be checked: %v\n", policyErrs, policyErr)
		fmt.Fprintf(stderr, "hint: give the log's key with --log-key, or a key document that lists the log with --keys\n")
		return ExitUsage
	case sum.Total == 0:
		out.Flush()
		fmt.Fprintf(stderr, "error: no envelopes found in %s\n", strings.Join(paths, " "))
		return ExitUsage
	case sum.Failed > 0:
		return ExitFailed
	}
	return code
}

func isFailure(err error) bool {
	var f *verifier.Failure
	return errors.As(err, &f)
}

// keyArg reads a verifier key given on the command line, or from the file it names.
func keyArg(flagName, arg string) (string, error) {
	if arg == "" {
		return "", nil
	}
	if fi, err := os.Stat(arg); err == nil && fi.Mode().IsRegular() {
		b, err := readSmallFile(arg)
		if err != nil {
			return "", fmt.Errorf("%s: %w", flagName, err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	return arg, nil
}

// readSmallFile reads a key, checkpoint or proof file of at most 64 KiB.
func readSmallFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("couldn't read %q: %w", path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64<<10+1))
	if err != nil {
		return nil, fmt.Errorf("couldn't read %q: %w", path, err)
	}
	if len(b) > 64<<10 {
		return nil, fmt.Errorf("%q is larger than 64 KiB", path)
	}
	return b, nil
}

// ConsistencyReport is the outcome of --checkpoint/--newer/--proof.
type ConsistencyReport struct {
	OK           bool                   `json:"ok"`
	SavedSize    int64                  `json:"savedSize,omitempty"`
	NewerSize    int64                  `json:"newerSize,omitempty"`
	Origin       string                 `json:"origin,omitempty"`
	Cosignatures []verifier.Cosignature `json:"cosignatures,omitempty"`
	Failure      *verifier.Failure      `json:"failure,omitempty"`
}

// checkConsistencyFiles reads the two checkpoints and the proof and checks them with
// verifier.CheckConsistency. A proof file holds one standard base64 hash per line.
func checkConsistencyFiles(savedPath, newerPath, proofPath string, doc *keys.Document, policy verifier.Policy) (*ConsistencyReport, error) {
	saved, err := readSmallFile(savedPath)
	if err != nil {
		return nil, err
	}
	newer, err := readSmallFile(newerPath)
	if err != nil {
		return nil, err
	}
	proofText, err := readSmallFile(proofPath)
	if err != nil {
		return nil, err
	}
	var proof [][]byte
	for i, line := range strings.Split(string(proofText), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		h, err := attest.DecodeBase64(line)
		if err != nil || len(h) != 32 {
			return nil, fmt.Errorf("%s:%d: not a base64 32-byte hash", proofPath, i+1)
		}
		proof = append(proof, h)
	}
	rep := &ConsistencyReport{}
	c, err := verifier.CheckConsistency(saved, newer, proof, doc, policy)
	if c != nil && c.Saved != nil {
		rep.SavedSize = c.Saved.Size
	}
	if c != nil && c.Newer != nil {
		rep.NewerSize, rep.Origin, rep.Cosignatures = c.Newer.Size, c.Newer.Origin, c.Newer.Cosignatures
	}
	var f *verifier.Failure
	switch {
	case errors.As(err, &f):
		rep.Failure = f
		return rep, nil
	case err != nil:
		return nil, err
	}
	rep.OK = true
	return rep, nil
}

// pubkeyDocument builds a one-key document from --pubkey: base64 SPKI DER, or a file
// holding PEM or base64. The key has no validity window (it is valid from the Unix epoch
// on) and cannot be revoked.
func pubkeyDocument(arg string) (*keys.Document, error) {
	text := arg
	if fi, err := os.Stat(arg); err == nil && fi.Mode().IsRegular() {
		f, err := os.Open(arg)
		if err != nil {
			return nil, fmt.Errorf("couldn't read public key file %q: %w", arg, err)
		}
		b, err := io.ReadAll(io.LimitReader(f, 64<<10+1))
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("couldn't read public key file %q: %w", arg, err)
		}
		if len(b) > 64<<10 {
			return nil, fmt.Errorf("public key file %q is too large", arg)
		}
		text = string(b)
	}
	var der []byte
	if blk, _ := pem.Decode([]byte(text)); blk != nil {
		if blk.Type != "PUBLIC KEY" {
			return nil, fmt.Errorf("--pubkey: PEM block is %q, want \"PUBLIC KEY\"", blk.Type)
		}
		der = blk.Bytes
	} else {
		var err error
		der, err = attest.DecodeBase64(strings.TrimSpace(text))
		if err != nil {
			return nil, fmt.Errorf("--pubkey: neither a readable file nor base64 SPKI DER")
		}
	}
	pub, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, fmt.Errorf("--pubkey: not an SPKI public key: %v", err)
	}
	edpub, ok := pub.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("--pubkey: key is %T, want Ed25519", pub)
	}
	// No window: valid from the Unix epoch, open-ended.
	k, err := keys.NewKey(edpub, time.Unix(0, 0))
	if err != nil {
		return nil, err
	}
	return &keys.Document{FormatVersion: 1, Issuer: "--pubkey", Keys: []keys.Key{k}}, nil
}

type reporter interface {
	start()
	consistency(*ConsistencyReport)
	item(Item)
	link(LinkReport)
	finish(Summary, time.Duration)
}

type tableReporter struct {
	w     *bufio.Writer
	quiet bool
	cons  bool // a consistency check was reported
}

func (t *tableReporter) start() {}

func (t *tableReporter) item(it Item) {
	if it.Err == nil {
		if t.quiet {
			return
		}
		r := it.Result
		ids := make([]string, len(r.Signatures))
		for i, s := range r.Signatures {
			ids[i] = s.KeyID
		}
		subject := ""
		if r.Subject != nil {
			subject = r.Subject.Name
		}
		// What the statement says, per predicate type: a round's coverage, a change's
		// number and kind, a supply run's score and Verified decision.
		what := "coverage=" + string(r.Coverage)
		if st := r.Statement; st != nil {
			switch {
			case st.Change != nil:
				what = fmt.Sprintf("change=ch-%d kind=%s", st.Change.Number, st.Change.Kind)
			case st.Supply != nil:
				what = fmt.Sprintf("supply score=%d verified=%t", st.Supply.Score, st.Supply.Verified)
			case st.Dispute != nil:
				what = fmt.Sprintf("dispute=%d check=%s record=%d", st.Dispute.Number, st.Dispute.Finding.CheckID, st.Dispute.Finding.Record.Seq)
			case st.Outcome != nil:
				what = fmt.Sprintf("outcome=%s dispute=%d record=%d", st.Outcome.Decision, st.Outcome.Dispute.Number, st.Outcome.Dispute.Record.Seq)
			case st.Baseline != nil:
				what = fmt.Sprintf("baseline=%d tools=%d", st.Baseline.Number, st.Baseline.ToolCount)
			}
		}
		logged := ""
		if l := r.Log; l != nil {
			logged = fmt.Sprintf(" log=%d/%d", l.LogIndex, l.CheckpointSize)
			if len(l.Cosignatures) > 0 {
				ws := make([]string, len(l.Cosignatures))
				for i, c := range l.Cosignatures {
					ws[i] = c.Witness
				}
				logged += fmt.Sprintf(" witnessedAt=%s witnesses=%s", attest.FormatTime(l.WitnessedAt), strings.Join(ws, ","))
			}
		}
		fmt.Fprintf(t.w, "OK    %s  key=%s %s observedAt=%s%s subject=%s\n", it.Source, strings.Join(ids, ","), what, attest.FormatTime(r.ObservedAt), logged, strings.ToValidUTF8(fmt.Sprintf("%q", subject), "?"))
		return
	}
	fmt.Fprintf(t.w, "FAIL  %s  %s\n", it.Source, it.Err)
}

func (t *tableReporter) link(l LinkReport) {
	switch {
	case l.Checked && !l.OK:
		fmt.Fprintf(t.w, "FAIL  %s  %s (dispute %s)\n", l.Outcome, l.Failure, l.Dispute)
	case l.Checked && !t.quiet:
		fmt.Fprintf(t.w, "OK    %s  %s (%s)\n", l.Outcome, l.Detail, l.Dispute)
	case !l.Checked && !t.quiet:
		fmt.Fprintf(t.w, "NOTE  %s  %s\n", l.Outcome, l.Detail)
	}
}

func (t *tableReporter) consistency(c *ConsistencyReport) {
	t.cons = true
	if !c.OK {
		fmt.Fprintf(t.w, "FAIL  consistency  %s\n", c.Failure)
		return
	}
	ws := make([]string, len(c.Cosignatures))
	for i, cs := range c.Cosignatures {
		ws[i] = cs.Witness + "@" + attest.FormatTime(cs.Time)
	}
	if len(ws) == 0 {
		ws = []string{"none trusted"}
	}
	fmt.Fprintf(t.w, "OK    consistency  %s: the checkpoint of size %d extends the saved one of size %d; witnesses=%s\n", c.Origin, c.NewerSize, c.SavedSize, strings.Join(ws, ","))
}

func (t *tableReporter) finish(s Summary, d time.Duration) {
	if t.cons && s.Total == 0 {
		return // a consistency check alone: its line says it all
	}
	fmt.Fprintf(t.w, "%d envelopes: %d verified, %d failed (%.1fs)\n", s.Total, s.Verified, s.Failed, d.Seconds())
}

type jsonReporter struct {
	w     *bufio.Writer
	n     int
	cons  *ConsistencyReport
	links []LinkReport
}

func (j *jsonReporter) link(l LinkReport) { j.links = append(j.links, l) }

func (j *jsonReporter) consistency(c *ConsistencyReport) { j.cons = c }

func (j *jsonReporter) start() { j.w.WriteString("{\"results\":[\n") }

type jsonItem struct {
	Source string           `json:"source"`
	OK     bool             `json:"ok"`
	Result *verifier.Result `json:"result,omitempty"`
	Error  string           `json:"error,omitempty"`
}

func (j *jsonReporter) item(it Item) {
	if j.n > 0 {
		j.w.WriteString(",\n")
	}
	j.n++
	ji := jsonItem{Source: it.Source, OK: it.Err == nil, Result: it.Result}
	if it.Err != nil {
		ji.Error = it.Err.Error()
		if ji.Result == nil {
			var f *verifier.Failure
			if errors.As(it.Err, &f) {
				ji.Result = &verifier.Result{Failure: f}
			}
		}
	}
	b, _ := json.Marshal(ji)
	j.w.Write(b)
}

func (j *jsonReporter) finish(s Summary, d time.Duration) {
	b, _ := json.Marshal(s)
	if j.n > 0 {
		j.w.WriteByte('\n')
	}
	cons := ""
	if j.cons != nil {
		c, _ := json.Marshal(j.cons)
		cons = `,"consistency":` + string(c)
	}
	if len(j.links) > 0 {
		l, _ := json.Marshal(j.links)
		cons += `,"links":` + string(l)
	}
	fmt.Fprintf(j.w, `],"summary":%s%s,"seconds":%.3f}`+"\n", b, cons, d.Seconds())
}

// setWitnesses puts the --witness-key values and --min-witnesses (minSet: given on the
// command line) into policy and validates it: with witness keys and no
// --min-witnesses, one cosignature is required. verify and inspect share it.
func setWitnesses(policy *verifier.Policy, witnessKeys []string, min int, minSet bool) error {
	for _, w := range witnessKeys {
		k, err := keyArg("--witness-key", w)
		if err != nil {
			return err
		}
		policy.WitnessKeys = append(policy.WitnessKeys, k)
	}
	policy.MinWitnesses = min
	if !minSet && len(policy.WitnessKeys) > 0 {
		policy.MinWitnesses = 1
	}
	return policy.Validate()
}
