package main

import (
	"io"

	"github.com/probity-dev/probity/verifier/cli"
)

func runVerify(args []string, stdout, stderr io.Writer) int {
	return cli.Main("probity verify", args, stdout, stderr)
}
