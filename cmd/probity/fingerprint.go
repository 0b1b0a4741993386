package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/probity-dev/probity/attest"
)

// maxFingerprintInput bounds what "probity fingerprint" reads: the probe's cap of 100
// pages of 4 MiB each.
const maxFingerprintInput = 400 << 20

const fingerprintUsage = `Usage:

	probity fingerprint [--json] FILE
	probity fingerprint --canonical FILE

Prints the four fingerprints of a tools/list result, one per line:

	toolset sha256:<hex>
	schema sha256:<hex>
	surface sha256:<hex>
	instructions sha256:<hex>

FILE holds a JSON-RPC response to tools/list, its result object, or a bare tools array;
a top-level "instructions" string, if present, is fingerprinted as the server's
instructions (otherwise the empty string is). - reads standard input. The fingerprints are
defined in the attest package documentation; auditors use them to recompute what a signed
statement claims.

Flags (before or after FILE):

	--json        print the fingerprints as one JSON object
	--canonical   write the nfc-jcs/v1 canonical bytes of any JSON document to standard
	              output, nothing else
`

func runFingerprint(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("probity fingerprint", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "")
	canonical := fs.Bool("canonical", false, "")
	if err := parseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(stdout, fingerprintUsage)
			return 0
		}
		fmt.Fprintf(stderr, "error: %v\n%s", err, fingerprintUsage)
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "error: want exactly one FILE (or - for standard input)\n%s", fingerprintUsage)
		return 2
	}
	if *asJSON && *canonical {
		fmt.Fprintln(stderr, "error: --json and --canonical exclude each other")
		return 2
	}
	data, err := readInput(fs.Arg(0), maxFingerprintInput)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	if *canonical {
		out, err := attest.Canonicalize(data)
		if err != nil {
			fmt.Fprintf(stderr, "error: %s: %v\n", fs.Arg(0), err)
			return 2
		}
		stdout.Write(out)
		return 0
	}
	fp, err := attest.FingerprintDocument(data)
	if err != nil {
		fmt.Fprintf(stderr, "error: %s: %v\n", fs.Arg(0), err)
		return 2
	}
	if *asJSON {
		// The members in the order of the plain output.
		b, _ := json.Marshal(struct {
			Toolset      string `json:"toolset"`
			Schema       string `json:"schema"`
			Surface      string `json:"surface"`
			Instructions string `json:"instructions"`
		}{fp.Toolset, fp.Schema, fp.Surface, fp.Instructions})
		fmt.Fprintf(stdout, "%s\n", b)
		return 0
	}
	fmt.Fprintf(stdout, "toolset %s\nschema %s\nsurface %s\ninstructions %s\n", fp.Toolset, fp.Schema, fp.Surface, fp.Instructions)
	return 0
}

// readInput reads a file, or standard input for "-", refusing more than limit bytes.
func readInput(path string, limit int64) ([]byte, error) {
	var r io.Reader
	if path == "-" {
		r = os.Stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("couldn't read %q: %w", path, err)
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("couldn't read %q: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%q is larger than %d bytes", path, limit)
	}
	return data, nil
}
