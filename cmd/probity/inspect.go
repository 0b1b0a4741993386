package main

import (
	"io"

	"github.com/probity-dev/probity/verifier/cli"
)

// runInspect shows what an envelope, a bundle, a JSONL export or a key document says
// (verifier/cli.Inspect, which probity-verify runs as "probity-verify inspect").
func runInspect(args []string, stdout, stderr io.Writer) int {
	return cli.Inspect("probity inspect", args, stdout, stderr)
}
