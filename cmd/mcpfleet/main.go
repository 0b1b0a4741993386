// Command mcpfleet serves a fleet of simulated MCP servers on a loopback address, for
// load tests and demos of Probity.
//
// Every server is a real go-sdk MCP server with a deterministic pseudo-random tool
// surface drawn from the seed and its index; see package checks/fixtures. The fleet
// listens on loopback only and runs until interrupted (SIGINT or SIGTERM), then shuts
// down gracefully.
//
// Run "mcpfleet -h" for the flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/probity-dev/probity/checks/fixtures"
)

const usage = `Usage:

	mcpfleet [--n N] [--seed S] [--addr 127.0.0.1:0] [--tls --ca-out FILE]
	         [--drift P] [--latency D] [--paginate K] [--lite] [--urls-out FILE]
	mcpfleet --hostile [--n N] [--addr 127.0.0.1:0] [--urls-out FILE]

Serves N simulated MCP servers (go-sdk, Streamable HTTP) on one loopback listener, at
/s/0000, /s/0001, ..., each with a deterministic tool surface drawn from the seed. Prints
the listen address on standard error and one endpoint URL per line on standard output
(or to --urls-out), then runs until SIGINT or SIGTERM.

Flags:

	--n N            number of servers, 1 to 100000 (default 100)
	--seed S         seed of the surfaces; one seed always serves the same fleet (default 1)
	--addr HOST:PORT listen address; the host must be a loopback IP (default 127.0.0.1:0)
	--tls            serve HTTPS with a certificate from a CA generated at start
	--ca-out FILE    write that CA's PEM certificate to FILE (required with --tls)
	--drift P        probability from 0 to 1 that a tools/list read changes the surface
	                 first (default 0)
	--latency D      delay injected before every response, e.g. 200ms (default 0)
	--paginate K     tools/list page size; 0 serves every tool in one page (default 0)
	--lite           answer from pre-rendered JSON instead of go-sdk servers: the same
	                 surfaces, drift and pagination for a fraction of the CPU (for load
	                 tests that share the machine with the fleet)
	--urls-out FILE  write the URLs to FILE instead of standard output
	--hostile        serve the hostile corpus of checks/fixtures instead (plain http), at
	                 /h/0000/mcp, /h/0001/mcp, ..., cycling through its endpoints: gzip
	                 bombs behind a 401's resource_metadata, on the handshake and on a
	                 tools/list page; endless and redirected huge metadata bodies; nine
	                 3 MB tools/list pages; legacy SSE streams that flood or never end.
	                 For measuring a round's memory:
	                   mcpfleet --hostile --n 32 --urls-out hostile.txt &
	                   /usr/bin/time -v probity round --targets hostile.txt \
	                     --allow-loopback --concurrency 32

Probe a server with:

	probity probe --allow-loopback [--ca-file FILE] URL

Exit status: 0 after a clean shutdown, 1 when serving failed, 2 on usage errors.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second signal kills at once
	}()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run runs mcpfleet until ctx is done and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcpfleet", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	n := fs.Int("n", 100, "")
	seed := fs.Uint64("seed", 1, "")
	addr := fs.String("addr", fixtures.DefaultAddr, "")
	useTLS := fs.Bool("tls", false, "")
	caOut := fs.String("ca-out", "", "")
	drift := fs.Float64("drift", 0, "")
	latency := fs.Duration("latency", 0, "")
	paginate := fs.Int("paginate", 0, "")
	lite := fs.Bool("lite", false, "")
	urlsOut := fs.String("urls-out", "", "")
	hostile := fs.Bool("hostile", false, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(stdout, usage)
			return 0
		}
		return usageError(stderr, err.Error(), `run "mcpfleet -h" for the flags`)
	}
	switch {
	case fs.NArg() > 0:
		return usageError(stderr, fmt.Sprintf("unexpected argument %q", fs.Arg(0)), `mcpfleet takes flags only; run "mcpfleet -h" for the flags`)
	case *n < 1 || *n > fixtures.MaxServers:
		return usageError(stderr, fmt.Sprintf("--n %d is out of range", *n), fmt.Sprintf("serve 1 to %d servers", fixtures.MaxServers))
	case !(*drift >= 0 && *drift <= 1):
		return usageError(stderr, fmt.Sprintf("--drift %v is not a probability", *drift), "use a number from 0 (never) to 1 (every read)")
	case *latency < 0:
		return usageError(stderr, "--latency is negative", "use a duration such as 200ms")
	case *paginate < 0:
		return usageError(stderr, "--paginate is negative", "use 0 for one page, or a page size")
	case *useTLS && *caOut == "":
		return usageError(stderr, "--tls needs --ca-out FILE", "a probe must trust the fleet's CA: write it with --ca-out and pass it to probity probe --ca-file")
	case !*useTLS && *caOut != "":
		return usageError(stderr, "--ca-out without --tls", "add --tls to serve HTTPS")
	case *hostile && (*useTLS || *drift != 0 || *latency != 0 || *paginate != 0 || *lite):
		return usageError(stderr, "--hostile serves the fixed hostile corpus", "drop --tls, --drift, --latency, --paginate and --lite")
	}
	if err := fixtures.CheckLoopbackAddr(*addr); err != nil {
		if errors.Is(err, fixtures.ErrNotLoopback) {
			return usageError(stderr, fmt.Sprintf("--addr %s is not a loopback address", *addr), "the fleet listens on loopback only; use --addr 127.0.0.1:PORT or [::1]:PORT")
		}
		return usageError(stderr, fmt.Sprintf("--addr %s: want HOST:PORT", *addr), "use --addr 127.0.0.1:PORT (port 0 picks a free one)")
	}

	var f fleet
	var err error
	if *hostile {
		f, err = fixtures.StartHostileFleet(*n, *addr)
	} else {
		f, err = fixtures.StartFleet(fixtures.FleetConfig{N: *n, Seed: *seed, Drift: *drift, Latency: *latency, TLS: *useTLS, Paginate: *paginate, Addr: *addr, Lite: *lite})
	}
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	code := serve(ctx, f, *caOut, *urlsOut, stdout, stderr)
	fmt.Fprintln(stderr, "mcpfleet: shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second+*latency)
	defer cancel()
	if err := f.Shutdown(sctx); err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	return code
}

// fleet is what mcpfleet serves: a simulated fleet or the hostile corpus.
type fleet interface {
	Len() int
	Addr() string
	URLs() []string
	Shutdown(ctx context.Context) error
}

// caWriter is a fleet that serves HTTPS with its own CA.
type caWriter interface {
	WriteCA(path string) error
}

// serve publishes the CA and the URLs, then waits for ctx.
func serve(ctx context.Context, f fleet, caOut, urlsOut string, stdout, stderr io.Writer) int {
	if cw, ok := f.(caWriter); ok && caOut != "" {
		if err := cw.WriteCA(caOut); err != nil {
			fmt.Fprintf(stderr, "error: %v\n", err)
			return 1
		}
	}
	scheme := "http"
	if caOut != "" {
		scheme = "https"
	}
	fmt.Fprintf(stderr, "mcpfleet: %d servers listening on %s://%s\n", f.Len(), scheme, f.Addr())
	urls := strings.Join(f.URLs(), "\n") + "\n"
	if urlsOut != "" {
		if err := writeAtomic(urlsOut, []byte(urls)); err != nil {
			fmt.Fprintf(stderr, "error: %v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "mcpfleet: wrote %d URLs to %s\n", f.Len(), urlsOut)
	} else if _, err := io.WriteString(stdout, urls); err != nil {
		fmt.Fprintf(stderr, "error: writing the URLs: %v\n", err)
		return 1
	}
	<-ctx.Done()
	return 0
}

// writeAtomic writes data to path through a temporary file in the same directory, so a
// reader never sees a partial list.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".mcpfleet-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename, a no-op
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func usageError(stderr io.Writer, msg, hint string) int {
	fmt.Fprintf(stderr, "error: %s\nhint: %s\n", msg, hint)
	return 2
}
