package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/probity-dev/probity/internal/demowitness"
	"github.com/probity-dev/probity/keys/signing"
)

// Files of the demo's built-in test witness in the data directory: its private key (so
// its verifier key stays the same from one demo to the next) and that verifier key,
// which "probity verify --witness-key" takes.
const (
	demoWitnessKeyFile  = "demo-witness.key"
	demoWitnessVKeyFile = "demo-witness.vkey"
	demoWitnessName     = "localhost/probity-demo-witness"
)

// startDemoWitness starts the built-in test witness (internal/demowitness) on a
// loopback port of its own, adds the log to it, and returns the witness policy that
// names it, its verifier key and a function that stops it. It stands in for the
// independent witnesses a real deployment configures (--witness-policy); the demo says
// so wherever it names it.
func startDemoWitness(dataDir, keyDir string) (policy []byte, vkey string, stop func(), err error) {
	key, err := demoWitnessKey(filepath.Join(dataDir, demoWitnessKeyFile))
	if err != nil {
		return nil, "", nil, err
	}
	w, err := demowitness.New(demoWitnessName, key)
	if err != nil {
		return nil, "", nil, err
	}
	_, logVKey, err := signing.LoadLogSigner(keyDir)
	if err != nil {
		return nil, "", nil, fmt.Errorf("couldn't load the log's key: %w", err)
	}
	if err := w.AddLog(logVKey); err != nil {
		return nil, "", nil, err
	}
	if err := os.WriteFile(filepath.Join(dataDir, demoWitnessVKeyFile), []byte(w.VerifierKey()+"\n"), 0o644); err != nil {
		return nil, "", nil, fmt.Errorf("couldn't write the demo witness's key: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", nil, fmt.Errorf("couldn't start the demo witness: %w", err)
	}
	srv := &http.Server{Handler: w, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second}
	go srv.Serve(ln)
	policy = fmt.Appendf(nil, "# %s\nwitness demo %s http://%s\nquorum demo\n", demowitness.Label, w.VerifierKey(), ln.Addr())
	return policy, w.VerifierKey(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}, nil
}

// demoWitnessKey reads the demo witness's Ed25519 key, creating it on first use.
func demoWitnessKey(path string) (ed25519.PrivateKey, error) {
	key, err := signing.LoadPrivateKey(path)
	if err == nil {
		return key, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("couldn't read the demo witness's key: %w", err)
	}
	_, key, err = ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	if err := signing.WritePrivateKey(path, key); err != nil {
		return nil, fmt.Errorf("couldn't write the demo witness's key: %w", err)
	}
	return key, nil
}
