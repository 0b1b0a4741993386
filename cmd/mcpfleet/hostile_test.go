package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/checks"
	"github.com/probity-dev/probity/checks/probe"
)

func TestHostileUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--hostile", "--tls", "--ca-out", "x.pem"},
		{"--hostile", "--drift", "0.5"},
		{"--hostile", "--latency", "10ms"},
		{"--hostile", "--paginate", "3"},
		{"--hostile", "--lite"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "--hostile serves the fixed hostile corpus") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr.String())
		}
	}
}

// mcpfleet --hostile serves the hostile corpus at /h/NNNN/mcp: the first endpoint is a
// login whose metadata is a gzip bomb, which a probe reads no further than its cap.
func TestServeHostile(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"--hostile", "--n", "9"}, &stdout, &stderr) }()
	waitFor(t, "the URLs", func() bool { return strings.Count(stdout.String(), "\n") == 9 })
	urls := strings.Fields(stdout.String())
	if !strings.HasSuffix(urls[0], "/h/0000/mcp") || !strings.HasSuffix(urls[8], "/h/0008/mcp") {
		t.Fatalf("URLs %q", urls)
	}
	obs, err := probe.New(probe.Config{AllowLoopback: true}).Probe(ctx, urls[8]) // the corpus again from the start
	if err != nil || !obs.Auth.Challenged || obs.Auth.MetadataFetched || obs.Auth.MetadataError == "" {
		t.Fatalf("probe: %v, auth %+v", err, obs.Auth)
	}
	for _, ex := range obs.Exchanges {
		if ex.Method == "GET" && (!ex.Truncated || len(ex.Body) > 4<<20) {
			t.Errorf("the metadata bomb: truncated %v, %d bytes kept", ex.Truncated, len(ex.Body))
		}
	}
	if obs.Stop != checks.StopNone {
		t.Errorf("stop %q", obs.Stop)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d, stderr %q", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("mcpfleet --hostile did not shut down")
	}
}
