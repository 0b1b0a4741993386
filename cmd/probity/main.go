// Command probity is the Probity service binary: it watches public MCP servers, signs what
// it observes as DSSE envelopes, and verifies such envelopes offline.
//
// Run "probity help" for the list of commands.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/probity-dev/probity/verifier/cli"
)

// A command runs with its arguments (without the command name) and returns the process
// exit code: 0 on success, 1 when the command ran and found a failure (e.g. an envelope
// that does not verify), 2 on usage or I/O errors.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

// commandTable lists every command. It is a function rather than a package variable so
// that the "help" path, which reads the table, does not form an initialization cycle.
func commandTable() map[string]command {
	return map[string]command{
		"keys":        {"create, rotate, revoke and show signing keys", runKeys},
		"verify":      {"verify DSSE envelopes and log bundles offline against a key document", runVerify},
		"fingerprint": {"print the fingerprints or canonical bytes of a JSON document", runFingerprint},
		"probe":       {"probe one remote MCP endpoint and print every check", runProbe},
		"round":       {"run one round over every entry now: probe, check, sign, store", runRound},
		"serve":       {"run the scheduler and workers (several processes may share one PostgreSQL)", runServe},
		"migrate":     {"apply the store's migrations", runMigrate},
		"export":      {"export stored envelopes and the key document for offline verification", runExport},
		"targets":     {"import, list and remove the entries Probity watches", runTargets},
		"registry":    {"sync the servers of an MCP registry into the entries (one per server)", runRegistry},
		"history":     {"print, show, hide and unhide an entry's recorded changes", runHistory},
		"operators":   {"grant, take back and list the operator role (the console at /ops)", runOperators},
		"stats":       {"drift and uptime statistics of the whole store (Markdown or JSON)", runStats},
		"supply":      {"the newest supply-chain checks, score and Verified decision of an entry", runSupply},
		"demo":        {"start demo servers, probe them twice and publish the directory on loopback", runDemo},
		"log":         {"audit a transparency log (a Probity site or a log directory) as a monitor", runLog},
		"version":     {"print the version, the commit it was built from and the Go version", runVersion},
		"inspect":     {"show what an envelope, bundle, JSONL export or key document says, readably", runInspect},
	}
}

// parseFlags parses a command's arguments into fs, flags before or after its positional
// arguments (cli.ParseFlags, shared with probity-verify).
func parseFlags(fs *flag.FlagSet, args []string) error { return cli.ParseFlags(fs, args) }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	commands := commandTable()
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				return c.run([]string{"-h"}, stdout, stderr)
			}
		}
		usage(stdout, commands)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" {
		return runVersion(args[1:], stdout, stderr)
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "error: unknown command %q\nhint: run \"probity help\" for the list of commands\n", args[0])
		return 2
	}
	return c.run(args[1:], stdout, stderr)
}

func usage(w io.Writer, commands map[string]command) {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("Probity watches public MCP servers and signs what it sees.\n\nUsage:\n\n\tprobity <command> [arguments]\n\nCommands:\n\n")
	for _, n := range names {
		fmt.Fprintf(&b, "\t%-12s %s\n", n, commands[n].summary)
	}
	b.WriteString("\nRun \"probity help <command>\" or \"probity <command> -h\" for a command's flags.\n")
	io.WriteString(w, b.String())
}
