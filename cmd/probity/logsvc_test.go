package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/probity-dev/probity/keys/signing"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/translog"
)

// TestFollowLogTakesOver: a process that is not the log's appender becomes it when the
// appender stops, and logs what is written afterwards (here a key rotation, logged as
// serve logs it).
func TestFollowLogTakesOver(t *testing.T) {
	defer func(d time.Duration) { logTakeover = d }(logTakeover)
	logTakeover = 50 * time.Millisecond
	ctx := t.Context()
	logger := slog.New(slog.DiscardHandler)
	ef := envFlags{dataDir: t.TempDir()}
	st, _, err := ef.openStore(ctx, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, _, err := ef.openSigner(io.Discard); err != nil {
		t.Fatal(err)
	}
	lf := logFlags{witnessTimeout: time.Second, checkpointInterval: translog.MinCheckpointInterval}
	first, err := ef.openLog(ctx, st, lf, logger)
	if err != nil || first == nil {
		t.Fatalf("the first process is not the appender: %v", err)
	}
	if _, err := first.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	second, err := ef.openLog(ctx, st, lf, logger)
	if err != nil || second != nil {
		t.Fatalf("a second appender: %v, %v", second, err)
	}
	followCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		ef.followLog(followCtx, nil, st, lf, logger)
	}()
	defer func() { cancel(); <-done }()

	if err := first.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := signing.RotateDir(ef.keyDirectory(), time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	if err := logKeyVersions(ctx, st, ef.keyDirectory()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		cp, err := st.LatestCheckpoint(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if cp != nil && cp.Size == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the rotation was not logged after the appender stopped: checkpoint %+v", cp)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestLogKeyVersions: the key directory's versions are logged once; looking again
// writes nothing, and a directory whose version 1 is not the logged one is refused.
func TestLogKeyVersions(t *testing.T) {
	ctx := t.Context()
	ef := envFlags{dataDir: t.TempDir()}
	st, _, err := ef.openStore(ctx, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, _, err := ef.openSigner(io.Discard); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := logKeyVersions(ctx, st, ef.keyDirectory()); err != nil {
			t.Fatal(err)
		}
	}
	vs, err := st.KeyDocumentVersions(ctx)
	if err != nil || len(vs) != 1 {
		t.Fatalf("logged versions: %d, %v", len(vs), err)
	}
	other := filepath.Join(t.TempDir(), "keys")
	if _, err := signing.GenerateDir(other, "https://probity.dev", time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	if err := logKeyVersions(ctx, st, other); !errors.Is(err, store.ErrKeyVersionConflict) {
		t.Fatalf("another directory's version 1: %v, want ErrKeyVersionConflict", err)
	}
}
