package translog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/transparency-dev/tessera"
	"github.com/transparency-dev/tessera/api/layout"
	"github.com/transparency-dev/tessera/storage/posix"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/probity-dev/probity/store"
)

// LockFile is the appender's lock file in the log directory (not to be served).
const LockFile = ".probity-appender.lock"

// Defaults of Config.
const (
	DefaultWitnessTimeout     = 5 * time.Second
	DefaultCheckpointInterval = 5 * time.Second
	// DefaultBatchSize: a round costs a few fsyncs (bundle, tiles, tree state; the
	// store's update) whatever its size, so rounds of 1,024 append a backlog about 1.3×
	// as fast as 256 (BenchmarkAppend); a round is only as large as what is waiting.
	DefaultBatchSize = 1024
	// MinCheckpointInterval is Tessera's smallest checkpoint interval.
	MinCheckpointInterval = 100 * time.Millisecond
	// maxBatchSize bounds a round (Store.LogSources reads at most 10,000 numbers).
	maxBatchSize = 4096
	// batchMaxAge is how long Tessera holds a round smaller than BatchSize before it
	// integrates it. A round's Adds take microseconds each, far below it, so a round is
	// one batch (see "Order and exactly once").
	batchMaxAge = 50 * time.Millisecond
	// pollInterval is how often Run reads the ledger without a Notify.
	pollInterval = 500 * time.Millisecond
	// syncPoll is how often Sync reads the published checkpoint while it waits.
	syncPoll = 25 * time.Millisecond
)

// Config configures the log's appender.
type Config struct {
	// Dir is the log directory, the tlog-tiles layout (the service: DATA-DIR/log).
	Dir string
	// Signer signs checkpoints: an Ed25519 note signer whose name is the log's origin
	// (keys.LogOrigin).
	Signer note.Signer
	// WitnessPolicy is a witness policy file (see "Witnessing"); empty: no witnesses.
	WitnessPolicy []byte
	// WitnessTimeout bounds witnessing a checkpoint (0: DefaultWitnessTimeout).
	WitnessTimeout time.Duration
	// HTTPClient is the client witnesses are reached with (the egress-guarded one).
	// Nil: no request leaves the process (a policy naming witnesses is refused).
	HTTPClient *http.Client
	// CheckpointInterval is how often at most a checkpoint is published (0:
	// DefaultCheckpointInterval; at least MinCheckpointInterval).
	CheckpointInterval time.Duration
	// BatchSize is the largest round of leaves appended at once (0: DefaultBatchSize).
	BatchSize int
	// Logger receives the appender's events (nil: none). It never logs keys.
	Logger *slog.Logger
}

// Store is what the log needs of the store (store.Store implements it); see the store's
// package documentation, "The transparency log".
type Store interface {
	// LogSources returns what the leaves of the numbers after afterSeq are built from,
	// in order, ending before the first number not yet assigned.
	LogSources(ctx context.Context, afterSeq int64, limit int) ([]store.LogSource, error)
	// SetLogged stores log_index = seq-1 on every row through throughSeq not marked yet.
	SetLogged(ctx context.Context, throughSeq int64) error
	// SaveCheckpoint archives a published checkpoint (idempotent by note).
	SaveCheckpoint(ctx context.Context, c store.LogCheckpoint) error
	// LatestCheckpoint returns the largest archived checkpoint (nil when none): Open
	// checks that the directory holds its tree.
	LatestCheckpoint(ctx context.Context) (*store.LogCheckpoint, error)
	// TryLogLock takes the appender's lock of the database, if free.
	TryLogLock(ctx context.Context) (release func(), ok bool, err error)
	// LogLockHeld says whether that lock is still held (on PostgreSQL it dies with its
	// connection).
	LogLockHeld(ctx context.Context) error
}

// ErrNotAppender is wrapped by Open's error when another process holds the appender's
// lock: this process only reads the log.
var ErrNotAppender = errors.New("another process appends to the log")

// ErrClosed is returned by Sync after Close.
var ErrClosed = errors.New("the log is closed")

// MismatchError says the log and the ledger disagree: the leaf at Index is not the one
// the ledger's number Index+1 makes. The appender refuses to append to such a log.
type MismatchError struct {
	Index  int64
	Reason string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("the log does not match the ledger at index %d: %s", e.Index, e.Reason)
}

// Log is the appender of a transparency log. Its methods are safe for concurrent use.
type Log struct {
	cfg    Config
	st     Store
	log    *slog.Logger
	origin string

	app      *tessera.Appender
	shutdown func(context.Context) error
	reader   tessera.LogReader
	cancel   context.CancelFunc // Tessera's background work
	unlock   func()             // both locks
	notify   chan struct{}
	closed   chan struct{}
	close    sync.Once
	closeErr error

	mu        sync.Mutex // one round, or one archiving, at a time
	next      int64      // the next number to append: the log's size + 1
	lastNote  []byte     // the last checkpoint note archived
	published int64      // its size
	broken    error      // a *MismatchError: nothing more is appended
}

// Open opens (creating when needed) the log in cfg.Dir as its one appender, checks that
// its last leaf is the ledger's, and marks what it holds as logged. It fails with an
// error wrapping ErrNotAppender when another process appends, and with a
// *MismatchError when the log does not match the ledger.
func Open(ctx context.Context, cfg Config, st Store) (l *Log, err error) {
	if err := cfg.fill(); err != nil {
		return nil, fmt.Errorf("couldn't open the log: %w", err)
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("couldn't open the log: %w", err)
	}
	unlock, err := lock(ctx, cfg.Dir, st)
	if err != nil {
		return nil, err
	}
	// Before Tessera initialises an empty directory (and publishes a checkpoint of size
	// 0 in it): a store that archived a larger checkpoint is another directory's.
	archived, err := st.LatestCheckpoint(ctx)
	if err != nil {
		unlock()
		return nil, fmt.Errorf("couldn't read the archived checkpoints: %w", err)
	}
	if archived != nil && archived.Size > 0 {
		if _, err := os.Stat(filepath.Join(cfg.Dir, layout.CheckpointPath)); errors.Is(err, os.ErrNotExist) {
			unlock()
			return nil, &MismatchError{Index: 0, Reason: fmt.Sprintf(
				"the store archived a checkpoint of size %d, and %s holds no log: not this log's directory", archived.Size, cfg.Dir)}
		}
	}
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer func() {
		if err != nil {
			cancel()
			unlock()
		}
	}()
	opts := tessera.NewAppendOptions().
		WithCheckpointSigner(cfg.Signer).
		WithBatching(uint(cfg.BatchSize), batchMaxAge).
		WithCheckpointInterval(cfg.CheckpointInterval).
		WithPushback(uint(max(cfg.BatchSize, tessera.DefaultPushbackMaxOutstanding)))
	if len(cfg.WitnessPolicy) > 0 {
		wg, err := tessera.NewWitnessGroupFromPolicy(cfg.WitnessPolicy)
		if err != nil {
			return nil, fmt.Errorf("couldn't read the witness policy: %w", err)
		}
		opts = opts.WithWitnesses(wg, &tessera.WitnessOptions{FailOpen: true, Timeout: cfg.WitnessTimeout})
	}
	driver, err := posix.New(bg, posix.Config{Path: cfg.Dir, HTTPClient: witnessClient(cfg.HTTPClient)})
	if err != nil {
		return nil, fmt.Errorf("couldn't open the log's storage: %w", err)
	}
	app, shutdown, reader, err := tessera.NewAppender(bg, driver, opts)
	if err != nil {
		return nil, fmt.Errorf("couldn't open the log's appender: %w", err)
	}
	l = &Log{
		cfg: cfg, st: st, log: cfg.Logger, origin: cfg.Signer.Name(),
		app: app, shutdown: shutdown, reader: reader, cancel: cancel, unlock: unlock,
		notify: make(chan struct{}, 1), closed: make(chan struct{}),
	}
	size, err := reader.IntegratedSize(ctx)
	if err != nil {
		return nil, fmt.Errorf("couldn't read the log's size: %w", err)
	}
	if err := l.checkLast(ctx, int64(size)); err != nil {
		return nil, err
	}
	if err := l.checkArchived(archived, int64(size)); err != nil {
		return nil, err
	}
	if err := st.SetLogged(ctx, int64(size)); err != nil {
		return nil, fmt.Errorf("couldn't mark the logged records: %w", err)
	}
	l.next = int64(size) + 1
	l.archive(ctx)
	l.log.Info("transparency log open", slog.String("origin", l.origin), slog.Int64("size", int64(size)))
	return l, nil
}

// fill checks a configuration and fills in its defaults.
func (c *Config) fill() error {
	switch {
	case c.Dir == "":
		return errors.New("no log directory")
	case c.Signer == nil:
		return errors.New("no checkpoint signer")
	case c.CheckpointInterval != 0 && c.CheckpointInterval < MinCheckpointInterval:
		return fmt.Errorf("checkpoint interval %v is below %v", c.CheckpointInterval, MinCheckpointInterval)
	case c.BatchSize < 0 || c.BatchSize > maxBatchSize:
		return fmt.Errorf("batch size %d is not 1 to %d", c.BatchSize, maxBatchSize)
	case c.WitnessTimeout < 0:
		return fmt.Errorf("negative witness timeout %v", c.WitnessTimeout)
	case len(c.WitnessPolicy) > 0 && c.HTTPClient == nil:
		return errors.New("a witness policy needs an HTTP client")
	}
	if !validOrigin(c.Signer.Name()) {
		return fmt.Errorf("signer name %q is not a log origin", c.Signer.Name())
	}
	if c.WitnessTimeout == 0 {
		c.WitnessTimeout = DefaultWitnessTimeout
	}
	if c.CheckpointInterval == 0 {
		c.CheckpointInterval = DefaultCheckpointInterval
	}
	if c.BatchSize == 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return nil
}

// lock takes the lock file's flock, then the store's lock; it returns what releases
// both.
func lock(ctx context.Context, dir string, st Store) (func(), error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("couldn't open the log's lock file: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if errors.Is(err, syscall.EWOULDBLOCK) {
		f.Close()
		return nil, fmt.Errorf("couldn't open the log: %w (%s is locked)", ErrNotAppender, path)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("couldn't lock %s: %w", path, err)
	}
	release, ok, err := st.TryLogLock(ctx)
	if err != nil || !ok {
		f.Close() // releases the flock
		if err != nil {
			return nil, fmt.Errorf("couldn't take the store's log lock: %w", err)
		}
		return nil, fmt.Errorf("couldn't open the log: %w (the store's log lock is held)", ErrNotAppender)
	}
	return func() {
		release()
		f.Close()
	}, nil
}

// maxWitnessResponse bounds what is read of a witness's answer: a cosignature line, or
// a tree size. Tessera reads the whole body (io.ReadAll) and quotes it in its errors.
const maxWitnessResponse = 16 << 10

// witnessClient is the client Tessera reaches witnesses with: c (nil: one that sends
// nothing), each response body cut at maxWitnessResponse.
func witnessClient(c *http.Client) *http.Client {
	if c == nil {
		return &http.Client{Transport: noEgress{}}
	}
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	limited := *c
	limited.Transport = limitedBodies{rt}
	return &limited
}

// limitedBodies cuts every response body at maxWitnessResponse bytes: reading past it
// fails.
type limitedBodies struct{ rt http.RoundTripper }

func (l limitedBodies) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.rt.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = &limitedBody{ReadCloser: resp.Body, left: maxWitnessResponse}
	return resp, nil
}

type limitedBody struct {
	io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("a witness's response is longer than %d bytes", maxWitnessResponse)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// noEgress is the transport of the client used when Config has none: no request leaves.
type noEgress struct{}

func (noEgress) RoundTrip(r *http.Request) (*http.Response, error) {
	return nil, fmt.Errorf("translog: no HTTP client configured (request to %s refused)", r.URL.Redacted())
}

// checkLast checks that the leaf at index size-1 is the one the ledger makes for number
// size.
func (l *Log) checkLast(ctx context.Context, size int64) error {
	if size == 0 {
		return nil
	}
	leaf, err := readLeaf(l.cfg.Dir, size-1, size)
	if err != nil {
		return fmt.Errorf("couldn't read the log's last leaf: %w", err)
	}
	srcs, err := l.st.LogSources(ctx, size-1, 1)
	if err != nil {
		return fmt.Errorf("couldn't read the ledger: %w", err)
	}
	if len(srcs) == 0 || srcs[0].Seq != size {
		return &MismatchError{Index: size - 1, Reason: fmt.Sprintf("the ledger has no number %d", size)}
	}
	return leafMatches(srcs[0], leaf)
}

// checkArchived checks that the log of this size holds the tree of cp, the largest
// checkpoint the store archived (nil: none). A directory that does not (another
// machine's, or a copy restored from before cp) would have the appender publish a
// second tree under the log's origin and key: a fork, to a witness or an auditor.
func (l *Log) checkArchived(cp *store.LogCheckpoint, size int64) error {
	if cp == nil || cp.Size == 0 {
		return nil
	}
	if cp.Size > size {
		return &MismatchError{Index: size, Reason: fmt.Sprintf(
			"the store archived a checkpoint of size %d, and the log in %s holds %d leaves", cp.Size, l.cfg.Dir, size)}
	}
	var root tlog.Hash
	if len(cp.RootHash) != len(root) {
		return fmt.Errorf("the archived checkpoint of size %d has a root hash of %d bytes", cp.Size, len(cp.RootHash))
	}
	copy(root[:], cp.RootHash)
	// TileHashReader checks every tile it reads against root.
	if _, err := tlog.TreeHash(cp.Size, tlog.TileHashReader(tlog.Tree{N: cp.Size, Hash: root}, tileReader{l.cfg.Dir})); err != nil {
		return &MismatchError{Index: cp.Size - 1, Reason: fmt.Sprintf(
			"the log in %s does not hold the tree of the archived checkpoint of size %d: %v", l.cfg.Dir, cp.Size, err)}
	}
	return nil
}

// Notify tells the appender a writer committed a record: Run appends soon.
func (l *Log) Notify() {
	select {
	case l.notify <- struct{}{}:
	default:
	}
}

// lockCheckInterval is how often Run asks the store whether its log lock is still held.
var lockCheckInterval = 10 * time.Second

// Run follows the ledger, appending every number as it is assigned, until ctx ends (it
// then returns nil) or the log is closed; it reads the ledger on Notify and every
// 500 ms, and archives each checkpoint Tessera publishes. A store or storage error is
// logged and tried again; a *MismatchError stops it and is returned, and so does the
// loss of the store's log lock (an error wrapping ErrNotAppender): close the log then,
// and try Open again later.
func (l *Log) Run(ctx context.Context) error {
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	// Checkpoints are read twice per interval, so that none Tessera publishes is missed.
	cpTick := time.NewTicker(min(pollInterval, l.cfg.CheckpointInterval/2))
	defer cpTick.Stop()
	lockTick := time.NewTicker(lockCheckInterval)
	defer lockTick.Stop()
	for {
		l.mu.Lock()
		_, err := l.appendAvailable(ctx, false)
		l.archive(ctx)
		l.mu.Unlock()
		if me := (*MismatchError)(nil); errors.As(err, &me) {
			return err
		}
		if err != nil && ctx.Err() == nil {
			l.log.Warn("couldn't append to the transparency log; trying again", slog.Any("err", err))
		}
	wait:
		select {
		case <-ctx.Done():
			return nil
		case <-l.closed:
			return nil
		case <-l.notify:
		case <-tick.C:
		case <-cpTick.C:
			l.mu.Lock()
			l.archive(ctx)
			l.mu.Unlock()
			goto wait
		case <-lockTick.C:
			// Another process may append once the store's lock is gone: stop first.
			if err := l.st.LogLockHeld(ctx); err != nil && ctx.Err() == nil {
				return fmt.Errorf("%w: this process lost the store's log lock: %v", ErrNotAppender, err)
			}
			goto wait
		}
	}
}

// Sync appends every number assigned when it is called (and any assigned meanwhile),
// waits until they are integrated, their rows marked logged, and a checkpoint covering
// them is published and archived, and returns the log's size.
func (l *Log) Sync(ctx context.Context) (int64, error) {
	select {
	case <-l.closed:
		return 0, ErrClosed
	default:
	}
	l.mu.Lock()
	size, err := l.appendAvailable(ctx, true)
	l.mu.Unlock()
	if err != nil {
		return 0, err
	}
	for {
		l.mu.Lock()
		l.archive(ctx)
		published := l.published
		l.mu.Unlock()
		if published >= size {
			return size, nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("couldn't wait for a checkpoint of size %d (published: %d): %w", size, published, ctx.Err())
		case <-l.closed:
			return 0, ErrClosed
		case <-time.After(syncPoll):
		}
	}
}

// appendAvailable appends rounds of numbers until the ledger has no more (all: until a
// round finds none; else one pass of at most a few rounds), and returns the log's size.
// The caller holds l.mu.
func (l *Log) appendAvailable(ctx context.Context, all bool) (int64, error) {
	if l.broken != nil {
		return 0, l.broken
	}
	for rounds := 0; all || rounds < 16; rounds++ {
		n, err := l.appendRound(ctx)
		if err != nil {
			return l.next - 1, err
		}
		if n < l.cfg.BatchSize {
			break
		}
	}
	return l.next - 1, nil
}

// appendRound appends the sources of the next numbers, at most BatchSize, waits for
// their integration and marks them logged; it returns how many it appended.
func (l *Log) appendRound(ctx context.Context) (int, error) {
	srcs, err := l.st.LogSources(ctx, l.next-1, l.cfg.BatchSize)
	if err != nil {
		return 0, fmt.Errorf("couldn't read the ledger: %w", err)
	}
	if len(srcs) == 0 {
		return 0, nil
	}
	leaves := make([][]byte, len(srcs))
	for i, src := range srcs {
		if src.Seq != l.next+int64(i) {
			return 0, fmt.Errorf("the ledger's sources skip from %d to %d", l.next+int64(i)-1, src.Seq)
		}
		leaves[i], err = LeafOf(src)
		if err != nil {
			// The ledger holds what no leaf can say (the schema should have refused
			// it): nothing after it can be appended either.
			l.broken = &MismatchError{Index: src.Seq - 1, Reason: err.Error()}
			return 0, l.broken
		}
	}
	// The leaves are built first, so that the Adds follow each other closely: the round
	// stays one Tessera batch (see "Order and exactly once").
	futures := make([]tessera.IndexFuture, len(srcs))
	for i, leaf := range leaves {
		futures[i] = l.app.Add(ctx, tessera.NewEntry(leaf))
	}
	var failed error
	for i, f := range futures {
		idx, err := f()
		switch {
		case err != nil:
			failed = errors.Join(failed, err)
		case idx.Index != uint64(srcs[i].Seq-1):
			l.broken = &MismatchError{Index: int64(idx.Index),
				Reason: fmt.Sprintf("Tessera gave number %d index %d, want %d", srcs[i].Seq, idx.Index, srcs[i].Seq-1)}
		}
	}
	if l.broken != nil {
		return 0, l.broken
	}
	if failed != nil {
		// Part of the round may be integrated: start again from what the tree holds,
		// after checking its last leaf.
		if err := l.resync(ctx); err != nil {
			return 0, errors.Join(failed, err)
		}
		return 0, fmt.Errorf("couldn't integrate numbers %d to %d: %w", srcs[0].Seq, srcs[len(srcs)-1].Seq, failed)
	}
	last := srcs[len(srcs)-1].Seq
	l.next = last + 1
	if err := l.st.SetLogged(ctx, last); err != nil {
		return len(srcs), fmt.Errorf("couldn't mark numbers through %d logged: %w", last, err)
	}
	return len(srcs), nil
}

// resync sets the next number from the integrated size, checking the last leaf.
func (l *Log) resync(ctx context.Context) error {
	size, err := l.reader.IntegratedSize(ctx)
	if err != nil {
		return fmt.Errorf("couldn't read the log's size: %w", err)
	}
	if err := l.checkLast(ctx, int64(size)); err != nil {
		if me := (*MismatchError)(nil); errors.As(err, &me) {
			l.broken = err
		}
		return err
	}
	l.next = int64(size) + 1
	return l.st.SetLogged(ctx, int64(size))
}

// archive stores the published checkpoint when it is new. Errors are logged: the next
// call tries again. The caller holds l.mu.
func (l *Log) archive(ctx context.Context) {
	raw, err := os.ReadFile(filepath.Join(l.cfg.Dir, layout.CheckpointPath))
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err != nil {
		l.log.Warn("couldn't read the published checkpoint", slog.Any("err", err))
		return
	}
	if bytes.Equal(raw, l.lastNote) {
		return
	}
	cp, err := parseCheckpoint(raw)
	if err != nil || cp.origin != l.origin {
		l.log.Warn("the published checkpoint is not the log's", slog.String("origin", cp.origin), slog.Any("err", err))
		return
	}
	if err := l.st.SaveCheckpoint(ctx, store.LogCheckpoint{Size: cp.size, RootHash: cp.root[:], Note: raw,
		SeenAt: time.Now(), Cosigned: cp.cosignedBesides(l.cfg.Signer)}); err != nil {
		l.log.Warn("couldn't archive the checkpoint", slog.Int64("size", cp.size), slog.Any("err", err))
		return
	}
	l.lastNote, l.published = raw, cp.size
}

// Close stops appending: it waits (within ctx) for a checkpoint covering every leaf
// added, stops Tessera's background work, archives the last checkpoint and releases the
// appender's locks. Cancel Run's context first. Calls after the first return its result.
func (l *Log) Close(ctx context.Context) error {
	l.close.Do(func() {
		close(l.closed)
		l.mu.Lock()
		defer l.mu.Unlock()
		l.closeErr = l.shutdown(ctx)
		l.archive(ctx)
		l.cancel()
		l.unlock()
	})
	return l.closeErr
}
