// Command probity-verify is the auditor's standalone verifier of Probity's DSSE
// envelopes and log bundles (inclusion proofs, signed checkpoints, witness
// cosignatures). It is "probity verify" built alone: it imports no storage, web, probe or
// MCP package, only the standard library, golang.org/x (of golang.org/x/mod only
// sumdb/note and sumdb/tlog), jcs and go-securesystemslib.
//
//	go install github.com/probity-dev/probity/cmd/probity-verify@latest
//	probity-verify --keys probity-keys.json envelopes.jsonl
//	probity-verify --keys probity-keys.json --witness-key WITNESS-VKEY record.bundle.json
//	probity-verify inspect [--keys probity-keys.json] FILE
//
// "probity-verify inspect" is "probity inspect": what a record or key document says,
// readably (a file named inspect is given as ./inspect).
package main

import (
	"fmt"
	"os"

	"github.com/probity-dev/probity/verifier/cli"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "inspect" {
		os.Exit(cli.Inspect("probity-verify inspect", os.Args[2:], os.Stdout, os.Stderr))
	}
	code := cli.Main("probity-verify", os.Args[1:], os.Stdout, os.Stderr)
	if len(os.Args) == 2 && (os.Args[1] == "-h" || os.Args[1] == "-help" || os.Args[1] == "--help") {
		fmt.Fprint(os.Stdout, "\nAlso:\n\n\tprobity-verify inspect [--keys keys.json] FILE...\n\nshows what an envelope, bundle, JSONL export or key document says, readably\n(probity-verify inspect -h).\n")
	}
	os.Exit(code)
}
