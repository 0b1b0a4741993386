package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

const versionUsage = `Usage:

	probity version
	probity --version

Prints Probity's version (the one the probe's User-Agent and the signed statements
carry), then what Go recorded in the binary when it was built: the module and its
version (a release tag, a pseudo-version made from the commit, or "(devel)" when Go
could not tell), the commit, its time and whether the working tree had uncommitted
changes ("modified"), and the Go version that built it. "go build" and "go install"
record the commit when they run inside a git checkout ("go run" does not).
`

func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("probity version", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if err := parseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(stdout, versionUsage)
			return 0
		}
		fmt.Fprintf(stderr, "error: %v\n%s", err, versionUsage)
		return 2
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "error: unexpected argument %q\nhint: probity version\n", fs.Arg(0))
		return 2
	}
	bi, ok := debug.ReadBuildInfo()
	io.WriteString(stdout, versionText(bi, ok))
	return 0
}

// versionText is the text of "probity version" for the build information bi (ok false:
// the binary carries none).
func versionText(bi *debug.BuildInfo, ok bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "probity %s\n", version)
	if !ok || bi == nil {
		b.WriteString("build information: none recorded in this binary\n")
		return b.String()
	}
	if bi.Main.Path != "" {
		v := bi.Main.Version
		if v == "" {
			v = "(devel)"
		}
		fmt.Fprintf(&b, "module   %s %s\n", bi.Main.Path, v)
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		var notes []string
		if t := settings["vcs.time"]; t != "" {
			notes = append(notes, t)
		}
		if settings["vcs.modified"] == "true" {
			notes = append(notes, "modified")
		}
		fmt.Fprintf(&b, "commit   %s", rev)
		if len(notes) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(notes, ", "))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "go       %s\n", bi.GoVersion)
	return b.String()
}
