package main

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"text/tabwriter"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/checks"
	"github.com/probity-dev/probity/checks/probe"
	"github.com/probity-dev/probity/history/stats"
	"github.com/probity-dev/probity/locator"
)

// version is Probity's version, reported in the probe's User-Agent and statements.
const version = "0.1.0"

const probeUsage = `Usage:

	probity probe [--json] [--allow-loopback] [--ca-file FILE] URL

Probes one remote MCP endpoint once, politely and without credentials, and prints the
result of every check in the catalog: the MCP handshake (server/discover, falling back to
initialize), every page of tools/list, one call to a reserved nonexistent tool, and on a
401 the login challenge and its RFC 9728 metadata. Every connection goes through the
egress guard, which refuses private, loopback, link-local and cloud-metadata addresses.
Nothing is signed or stored.

Flags:

	--json            print a JSON document (url, coverage, protocolVersion, serverInfo,
	                  toolCount, pages, fingerprints, checks, timings) instead of a table
	--allow-loopback  allow 127.0.0.0/8 and ::1 (for local test servers only)
	--ca-file FILE    trust the PEM certificates in FILE instead of the system roots

URL is the endpoint's http:// or https:// address; anything else (another scheme, no
host, user information, an address that does not parse) is refused before the probe
starts. Flags may come before or after URL.

Exit status: 0 when the probe ran (whatever the checks found), 2 on usage errors.
`

// probeReport is the --json document.
type probeReport struct {
	URL             string               `json:"url"`
	Coverage        string               `json:"coverage"`
	ProtocolVersion string               `json:"protocolVersion,omitempty"`
	ServerInfo      *attest.ServerInfo   `json:"serverInfo,omitempty"`
	ToolCount       int                  `json:"toolCount"`
	Pages           int                  `json:"pages"`
	Fingerprints    *attest.Fingerprints `json:"fingerprints,omitempty"`
	Checks          []attest.CheckResult `json:"checks"`
	Timings         attest.Timings       `json:"timings"`
}

func runProbe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("probity probe", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "")
	allowLoopback := fs.Bool("allow-loopback", false, "")
	caFile := fs.String("ca-file", "", "")
	if err := parseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(stdout, probeUsage)
			return 0
		}
		fmt.Fprintf(stderr, "error: %v\n%s", err, probeUsage)
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "error: want one URL, got %s\nhint: probity probe https://mcp.example.com/mcp\n",
			stats.Plural(fs.NArg(), "argument", "arguments"))
		return 2
	}
	// A URL the probe would refuse is refused here, before "probing" is printed.
	if _, err := locator.NormalizeURL(fs.Arg(0)); err != nil {
		fmt.Fprintf(stderr, "error: %q: %v\nhint: give the endpoint's http:// or https:// address with its host, e.g. https://mcp.example.com/mcp\n", fs.Arg(0), err)
		return 2
	}
	cfg := probe.Config{Version: version, AllowLoopback: *allowLoopback}
	if *caFile != "" {
		pem, err := readInput(*caFile, 1<<20)
		if err != nil {
			fmt.Fprintf(stderr, "error: %v\n", err)
			return 2
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			fmt.Fprintf(stderr, "error: %s holds no PEM certificate\n", *caFile)
			return 2
		}
		cfg.RootCAs = pool
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	fmt.Fprintf(stderr, "probing %s …\n", fs.Arg(0))
	obs, err := probe.New(cfg).Probe(ctx, fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	if obs.Reach.Failure == checks.ReachBlocked && !*allowLoopback {
		fmt.Fprintln(stderr, "hint: the egress guard refuses private, loopback and metadata addresses; a local test server needs --allow-loopback")
	}
	rep, results := newProbeReport(obs)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
		return 0
	}
	fmt.Fprintf(stdout, "%s\ncoverage: %s", obs.URL, rep.Coverage)
	if rep.ProtocolVersion != "" {
		fmt.Fprintf(stdout, "   protocol: %s", rep.ProtocolVersion)
	}
	fmt.Fprintf(stdout, "   tools: %d in %s   time: %d ms\n\n", rep.ToolCount, stats.Plural(rep.Pages, "page", "pages"), obs.Timings.TotalMs)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tSTATUS\tREASON")
	for _, r := range results {
		// Describe renders only catalog text and signed parameters, never server text.
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.ID, r.Status, checks.Describe(r))
	}
	tw.Flush()
	return 0
}

// newProbeReport evaluates obs once: the fingerprints the checks computed are the ones
// reported. It returns the report and the results.
func newProbeReport(obs *checks.Observation) (probeReport, []checks.Result) {
	ev := checks.EvaluateProbe(obs)
	rep := probeReport{URL: obs.URL, Coverage: string(ev.Coverage), Timings: obs.Timings}
	if !ev.Signed {
		rep.Coverage = "unsigned"
	}
	if obs.Handshake.Completed() {
		rep.ProtocolVersion = obs.Handshake.ProtocolVersion
		rep.ServerInfo = &attest.ServerInfo{Name: obs.Handshake.ServerName, Version: obs.Handshake.ServerVersion}
	}
	rep.ToolCount, rep.Pages = len(obs.Tools.Tools), obs.Tools.Pages
	if fp, err := ev.Fingerprints(); err == nil {
		rep.Fingerprints = fp
	}
	for _, r := range ev.Results {
		rep.Checks = append(rep.Checks, r.Signed())
	}
	return rep, ev.Results
}
