// Package cli is the verify command shared by "probity verify" and the standalone
// auditor's binary probity-verify: flags, the key document or --pubkey, the reports, and
// the input side (VerifyPaths walks files and directories, reads single envelopes and
// JSONL exports from them or standard input in bounded memory, and hands each envelope
// to verifier.Verify on every core, emitting results in input order). Package verifier
// itself does no I/O.
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

Verifies Probity's DSSE envelopes offline. PATH is an envelope file, a JSONL export (one
envelope per line), a directory of them (walked for .json, .jsonl and .dsse files; files
named keys.json are skipped), or - for standard input. Input is streamed, never loaded
whole, and verified on every core.

An envelope verifies when it is strict JSON with the exact DSSE shape, payloadType
application/vnd.in-toto+json, 1 to 4 signatures each by a distinct listed key, unrevoked,
whose validity window contains the statement's observedAt, and a payload that is exactly
canonical (nfc-jcs/v1) and valid against its predicate's schema.

Flags:

	--keys FILE      the key document (e.g. a saved /.well-known/probity-keys.json)
	--pubkey SPKI    a single Ed25519 public key instead: base64 SPKI DER, or a file
	                 holding it as PEM ("PUBLIC KEY") or base64; no validity window
	--json           print a machine-readable report instead of the table
	--quiet, -q      print only failures and the summary
	--threshold N    distinct keys that must have signed (default 1)

Exit status: 0 when every envelope verifies, 1 when any fails, 2 on usage or I/O errors.
`

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
	usage := func() { fmt.Fprintf(stderr, usageText, name) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, usageText, name)
			return ExitOK
		}
		fmt.Fprintf(stderr, "error: %v\n", err)
		usage()
		return ExitUsage
	}
	paths := fs.Args()
	switch {
	case (*keysPath == "") == (*pubkey == ""):
		fmt.Fprintf(stderr, "error: give exactly one of --keys and --pubkey\nhint: %s --keys keys.json envelope.json\n", name)
		return ExitUsage
	case len(paths) == 0:
		fmt.Fprintf(stderr, "error: no PATH given\nhint: %s --keys keys.json envelopes.jsonl\n", name)
		return ExitUsage
	}
	var doc *keys.Document
	var err error
	if *keysPath != "" {
		doc, err = keys.Load(*keysPath)
	} else {
		doc, err = pubkeyDocument(*pubkey)
	}
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return ExitUsage
	}

	out := bufio.NewWriterSize(stdout, 64<<10)
	defer out.Flush()
	policy := verifier.DefaultPolicy()
	policy.Threshold = *threshold
	var rep reporter
	if *asJSON {
		rep = &jsonReporter{w: out}
	} else {
		rep = &tableReporter{w: out, quiet: *quiet}
	}
	rep.start()
	start := time.Now()
	lastProgress := start
	n := 0
	sum, err := VerifyPaths(context.Background(), paths, StreamConfig{
		Keys:    doc,
		Policy:  policy,
		Workers: *workers,
		Emit: func(it Item) {
			rep.item(it)
			n++
			if n%1024 == 0 {
				if now := time.Now(); now.Sub(lastProgress) >= progressGap {
					lastProgress = now
					fmt.Fprintf(stderr, "%s: %d envelopes checked (%.0f/s)\n", name, n, float64(n)/now.Sub(start).Seconds())
				}
			}
		},
	})
	rep.finish(sum, time.Since(start))
	if err != nil {
		out.Flush()
		fmt.Fprintf(stderr, "error: %v\n", err)
		if errors.Is(err, verifier.ErrPolicy) {
			return ExitUsage
		}
		return ExitUsage
	}
	if sum.Total == 0 {
		out.Flush()
		fmt.Fprintf(stderr, "error: no envelopes found in %s\n", strings.Join(paths, " "))
		return ExitUsage
	}
	if sum.Failed > 0 {
		return ExitFailed
	}
	return ExitOK
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
	item(Item)
	finish(Summary, time.Duration)
}

type tableReporter struct {
	w     *bufio.Writer
	quiet bool
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
			}
		}
		fmt.Fprintf(t.w, "OK    %s  key=%s %s observedAt=%s subject=%s\n", it.Source, strings.Join(ids, ","), what, attest.FormatTime(r.ObservedAt), strings.ToValidUTF8(fmt.Sprintf("%q", subject), "?"))
		return
	}
	fmt.Fprintf(t.w, "FAIL  %s  %s\n", it.Source, it.Err)
}

func (t *tableReporter) finish(s Summary, d time.Duration) {
	fmt.Fprintf(t.w, "%d envelopes: %d verified, %d failed (%.1fs)\n", s.Total, s.Verified, s.Failed, d.Seconds())
}

type jsonReporter struct {
	w *bufio.Writer
	n int
}

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
	fmt.Fprintf(j.w, `],"summary":%s,"seconds":%.3f}`+"\n", b, d.Seconds())
}
