package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/probity-dev/probity/checks/probe/egress"
	"github.com/probity-dev/probity/export"
	"github.com/probity-dev/probity/keys/signing"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/translog"
	"github.com/probity-dev/probity/web"

	"k8s.io/klog/v2"
)

// logHelp documents the transparency log's flags of serve, round and demo.
const logHelp = `Transparency log (DATA-DIR/log, C2SP tlog-tiles, served at /log/):

	--witness-policy FILE      the witnesses asked to cosign each checkpoint, as a
	                           witness policy ("witness NAME VKEY URL", "group …",
	                           "quorum …"; C2SP vkeys); none by default. Witnesses are
	                           reached through the egress guard; one that is down or
	                           slower than --witness-timeout delays only its own
	                           cosignature
	--witness-timeout D        (default 5s)
	--checkpoint-interval D    how often at most a checkpoint is published (default 5s;
	                           at least 100ms)
`

// logFlags are the transparency log's flags.
type logFlags struct {
	witnessPolicy      string
	witnessTimeout     time.Duration
	checkpointInterval time.Duration
	// policy, when set, is the witness policy itself (the demo's built-in witness),
	// instead of --witness-policy's file.
	policy []byte
}

func (f *logFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.witnessPolicy, "witness-policy", "", "")
	fs.DurationVar(&f.witnessTimeout, "witness-timeout", translog.DefaultWitnessTimeout, "")
	fs.DurationVar(&f.checkpointInterval, "checkpoint-interval", translog.DefaultCheckpointInterval, "")
}

// validate checks the flags before anything starts.
func (f *logFlags) validate() error {
	if f.witnessTimeout <= 0 || f.witnessTimeout > time.Minute {
		return fmt.Errorf("--witness-timeout %s: want more than 0 and at most 1m", f.witnessTimeout)
	}
	if f.checkpointInterval < translog.MinCheckpointInterval || f.checkpointInterval > time.Hour {
		return fmt.Errorf("--checkpoint-interval %s: want %s to 1h", f.checkpointInterval, translog.MinCheckpointInterval)
	}
	return nil
}

// maxWitnessPolicy bounds the policy file.
const maxWitnessPolicy = 64 << 10

// logDirectory is where the log lives: DATA-DIR/log.
func (f *envFlags) logDirectory() string { return filepath.Join(f.dataDir, "log") }

// logKeyVersions stores every version of the key document that the key directory holds
// and the ledger does not yet (store.SaveKeyDocumentVersion is idempotent per version),
// so each generation, rotation and revocation becomes a logged record of its own.
func logKeyVersions(ctx context.Context, st store.Store, keyDir string) error {
	versions, err := signing.Versions(keyDir)
	if err != nil {
		return fmt.Errorf("couldn't read the key document's versions: %w", err)
	}
	// The versions stored already are compared, not written again: serve looks every
	// minute, and a directory whose version differs from the logged one is refused.
	stored, err := st.KeyDocumentVersions(ctx)
	if err != nil {
		return fmt.Errorf("couldn't read the logged key document versions: %w", err)
	}
	logged := make(map[int][]byte, len(stored))
	for _, v := range stored {
		logged[v.Version] = v.Envelope
	}
	for _, v := range versions {
		if env, ok := logged[v.Version]; ok {
			if !bytes.Equal(env, v.Envelope) {
				return fmt.Errorf("version %d of the key document in %s is not the one logged: %w", v.Version, keyDir, store.ErrKeyVersionConflict)
			}
			continue
		}
		if _, err := st.SaveKeyDocumentVersion(ctx, store.KeyDocumentVersion{Version: v.Version, IssuedAt: v.IssuedAt,
			DocumentDigest: v.DocumentDigest, Envelope: v.Envelope, KeyID: v.KeyID, PayloadDigest: v.PayloadDigest}); err != nil {
			return fmt.Errorf("couldn't log version %d of the key document: %w", v.Version, err)
		}
	}
	return nil
}

// openLog logs the key document's new versions and opens the transparency log's
// appender. It returns nil and no error when another process appends (that process
// logs this one's records too; this one only serves the log). Tessera's own log lines
// (klog) go to logger, warnings and errors only.
func (ef *envFlags) openLog(ctx context.Context, st store.Store, lf logFlags, logger *slog.Logger) (*translog.Log, error) {
	// klog is global, and Tessera's goroutines read it: set it once per process.
	klogOnce.Do(func() { klog.SetSlogLogger(slog.New(warnOnly{logger.Handler()}).With("component", "tessera")) })
	keyDir := ef.keyDirectory()
	if err := logKeyVersions(ctx, st, keyDir); err != nil {
		return nil, err
	}
	signer, _, err := signing.LoadLogSigner(keyDir)
	if err != nil {
		return nil, fmt.Errorf("couldn't load the log's key: %w", err)
	}
	cfg := translog.Config{Dir: ef.logDirectory(), Signer: signer, WitnessTimeout: lf.witnessTimeout,
		CheckpointInterval: lf.checkpointInterval, Logger: logger}
	cfg.WitnessPolicy = lf.policy
	if lf.witnessPolicy != "" {
		if cfg.WitnessPolicy, err = readInput(lf.witnessPolicy, maxWitnessPolicy); err != nil {
			return nil, fmt.Errorf("--witness-policy: %w", err)
		}
	}
	if len(cfg.WitnessPolicy) > 0 {
		g := egress.New(egress.Config{AllowLoopback: ef.allowLoopback})
		cfg.HTTPClient = &http.Client{Transport: g.Transport(), CheckRedirect: g.CheckRedirect, Timeout: lf.witnessTimeout}
	}
	l, err := translog.Open(ctx, cfg, st)
	if errors.Is(err, translog.ErrNotAppender) {
		logger.Info("another process appends to the transparency log; this one serves it", "dir", cfg.Dir)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("couldn't open the transparency log in %s: %w", cfg.Dir, err)
	}
	return l, nil
}

// keyVersionsEvery is how often serve looks for key document versions that "probity
// keys rotate" or "revoke" made while it runs, to log them.
const keyVersionsEvery = time.Minute

// watchKeyVersions logs the key document's new versions every keyVersionsEvery until
// ctx ends, so a rotation or revocation is in the log within a minute or so, not at the
// next start (its bundle would fail the backdating bound, its issuedAt being long
// before the checkpoint that first held it).
func watchKeyVersions(ctx context.Context, st store.Store, keyDir string, logger *slog.Logger) {
	t := time.NewTicker(keyVersionsEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := logKeyVersions(ctx, st, keyDir); err != nil && ctx.Err() == nil {
			logger.Error("couldn't log the key document's versions", "error", err.Error())
		}
	}
}

// startLog opens the log (openLog: tl is nil when another process appends) and
// follows the ledger in the background (followLog). Once ctx has ended, wait returns
// after the log's last append.
func (ef *envFlags) startLog(ctx context.Context, st store.Store, lf logFlags, logger *slog.Logger) (tl *translog.Log, wait func(), err error) {
	tl, err = ef.openLog(ctx, st, lf, logger)
	if err != nil {
		return nil, nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		ef.followLog(ctx, tl, st, lf, logger)
	}()
	return tl, func() { <-done }, nil
}

// logTakeover is how often a process that does not append tries to become the
// appender, so that the log goes on when the appending process stops.
var logTakeover = 30 * time.Second // a variable for the takeover test

// followLog appends to the log until ctx ends: with tl when this process is the
// appender, else trying every logTakeover to become it, and again after it stopped being
// it (its store lock lost, or the log refused). It closes a log it appended to (a last
// append) before it returns or tries again.
func (ef *envFlags) followLog(ctx context.Context, tl *translog.Log, st store.Store, lf logFlags, logger *slog.Logger) {
	for {
		for tl == nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(logTakeover):
			}
			var err error
			if tl, err = ef.openLog(ctx, st, lf, logger); err != nil && ctx.Err() == nil {
				logger.Error("couldn't open the transparency log", "error", err.Error())
			}
			if tl != nil {
				logger.Info("this process appends to the transparency log now", "dir", ef.logDirectory())
			}
		}
		runErr := tl.Run(ctx)
		if runErr != nil {
			logger.Error("the transparency log stopped appending", "error", runErr.Error())
		}
		closing, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		if err := tl.Close(closing); err != nil {
			logger.Error("couldn't close the transparency log", "error", err.Error())
		}
		cancel()
		if ctx.Err() != nil {
			return
		}
		tl = nil
	}
}

// klogOnce sets klog's logger (openLog).
var klogOnce sync.Once

// warnOnly passes on warnings and errors only.
type warnOnly struct{ slog.Handler }

func (w warnOnly) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && w.Handler.Enabled(ctx, l)
}

// syncLog appends every record stored so far to the log and waits for a checkpoint
// holding them, telling stderr what it does (probity round, the demo).
func syncLog(ctx context.Context, l *translog.Log, stderr io.Writer) error {
	if l == nil {
		fmt.Fprintln(stderr, "transparency log: another process appends; it logs these records")
		return nil
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	size, err := l.Sync(ctx)
	if err != nil {
		return fmt.Errorf("couldn't append to the transparency log: %w", err)
	}
	fmt.Fprintf(stderr, "transparency log: %d records, checkpoint published (%s)\n", size, time.Since(start).Round(time.Millisecond))
	return nil
}

// siteLog is the log as the site serves it (web.Log): the log directory, read through
// an os.Root so no name can leave it, and bundles built from the tiles and the store.
type siteLog struct {
	dir  string
	root *os.Root
	st   store.Store
}

// newSiteLog opens the log directory for serving, creating it when the appender has not
// yet (a publishing replica may start first).
func newSiteLog(dir string, st store.Store) (*siteLog, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("couldn't create the log directory: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("couldn't open the log directory: %w", err)
	}
	return &siteLog{dir: dir, root: root, st: st}, nil
}

func (s *siteLog) Open(name string) (fs.File, error) { return s.root.Open(name) }

func (s *siteLog) Bundle(ctx context.Context, seq int64) ([]byte, error) {
	rec, err := ledgerRecord(ctx, s.st, seq)
	if err != nil {
		return nil, err
	}
	b, err := bundleOf(ctx, s.dir, s.st, rec)
	if errors.Is(err, translog.ErrNotLogged) {
		return nil, fmt.Errorf("record %d: %w", seq, web.ErrNotLoggedYet)
	}
	return b, err
}

// exportBundles gives probity export the records' bundles (export.Bundles).
type exportBundles struct {
	dir string
	st  translog.BundleStore
}

func (e exportBundles) Bundle(ctx context.Context, rec store.LedgerRecord) ([]byte, error) {
	b, err := bundleOf(ctx, e.dir, e.st, rec)
	if errors.Is(err, translog.ErrNotLogged) {
		return nil, fmt.Errorf("record %d: %w", rec.Seq, export.ErrNotLogged)
	}
	return b, err
}

// bundleOf is a record's bundle, encoded.
func bundleOf(ctx context.Context, dir string, st translog.BundleStore, rec store.LedgerRecord) ([]byte, error) {
	b, err := translog.Bundle(ctx, dir, st, rec)
	if err != nil {
		return nil, err
	}
	return b.Marshal()
}

// ledgerRecord reads the ledger record with this sequence number (store.ErrNotFound
// when none: a tombstone's number, a deleted record's, or one not yet numbered).
func ledgerRecord(ctx context.Context, st store.Store, seq int64) (store.LedgerRecord, error) {
	var rec *store.LedgerRecord
	errStop := errors.New("stop")
	err := st.Ledger(ctx, store.LedgerFilter{AfterSeq: seq - 1, Through: seq}, func(r store.LedgerRecord) error {
		if r.Seq == seq {
			rec = &r
		}
		return errStop
	})
	if err != nil && !errors.Is(err, errStop) {
		return store.LedgerRecord{}, err
	}
	if rec == nil {
		return store.LedgerRecord{}, fmt.Errorf("record %d: %w", seq, store.ErrNotFound)
	}
	return *rec, nil
}
