package main

import (
	"bytes"
	"context"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/probity-dev/probity/checks/probe"
)

// syncBuffer is a bytes.Buffer safe for the concurrent writes of run and reads of the
// test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--addr", "0.0.0.0:8080"}, "not a loopback address"},
		{[]string{"--addr", "localhost:0"}, "not a loopback address"},
		{[]string{"--addr", "10.0.0.1:0"}, "not a loopback address"},
		{[]string{"--addr", "127.0.0.1"}, "want HOST:PORT"},
		{[]string{"--tls"}, "--tls needs --ca-out"},
		{[]string{"--ca-out", "x.pem"}, "--ca-out without --tls"},
		{[]string{"--drift", "1.5"}, "not a probability"},
		{[]string{"--n", "0"}, "out of range"},
		{[]string{"--latency", "-1s"}, "negative"},
		{[]string{"--paginate", "-1"}, "negative"},
		{[]string{"--bogus"}, "not defined"},
		{[]string{"extra"}, "unexpected argument"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tc.args, &stdout, &stderr)
		if code != 2 || !strings.HasPrefix(stderr.String(), "error: ") || !strings.Contains(stderr.String(), tc.want) || !strings.Contains(stderr.String(), "\nhint: ") || stdout.Len() != 0 {
			t.Errorf("%v: exit %d, stderr %q", tc.args, code, stderr.String())
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-h"}, &stdout, &stderr); code != 0 || !strings.HasPrefix(stdout.String(), "Usage:") || stderr.Len() != 0 {
		t.Errorf("-h: exit %d, stdout %q", code, stdout.String())
	}
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestServeTLSUntilCancelled(t *testing.T) {
	dir := t.TempDir()
	caFile, urlsFile := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "urls.txt")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--n", "3", "--seed", "7", "--tls", "--ca-out", caFile, "--urls-out", urlsFile, "--paginate", "4"}, &stdout, &stderr)
	}()
	var urls []string
	waitFor(t, "the URL list", func() bool {
		data, err := os.ReadFile(urlsFile)
		urls = strings.Fields(string(data))
		return err == nil
	})
	if len(urls) != 3 || !strings.HasPrefix(urls[0], "https://127.0.0.1:") || !strings.HasSuffix(urls[2], "/s/0002") || stdout.String() != "" {
		t.Fatalf("URLs %q, stdout %q", urls, stdout.String())
	}
	if !strings.Contains(stderr.String(), "3 servers listening on https://127.0.0.1:") {
		t.Errorf("stderr %q", stderr.String())
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("the CA file holds no certificate")
	}
	obs, err := probe.New(probe.Config{AllowLoopback: true, RootCAs: pool}).Probe(ctx, urls[1])
	if err != nil || !obs.Tools.Complete || obs.TLS == nil || !obs.TLS.ChainVerified {
		t.Fatalf("probe: %v, complete %v (%q), TLS %+v", err, obs.Tools.Complete, obs.Tools.Partial, obs.TLS)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 || !strings.Contains(stderr.String(), "shutting down") {
			t.Errorf("exit %d, stderr %q", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("mcpfleet did not shut down")
	}
}

func TestServeURLsOnStdout(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--n", "2", "--latency", "10ms", "--drift", "0.5"}, &stdout, &stderr)
	}()
	waitFor(t, "the URLs", func() bool { return strings.Count(stdout.String(), "\n") == 2 })
	urls := strings.Fields(stdout.String())
	if len(urls) != 2 || !strings.HasPrefix(urls[0], "http://127.0.0.1:") || !strings.HasSuffix(urls[0], "/s/0000") {
		t.Fatalf("stdout %q", stdout.String())
	}
	obs, err := probe.New(probe.Config{AllowLoopback: true}).Probe(ctx, urls[0])
	if err != nil || !obs.Tools.Complete {
		t.Fatalf("probe: %v, %+v", err, obs.Tools)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}
