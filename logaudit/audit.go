package logaudit

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/verifier"
)

// Config says what to audit and what to trust.
type Config struct {
	// Source is a Probity site's URL (http or https; the log is read from SITE/log/ and
	// the key document from SITE/.well-known/probity-keys.json) or a log directory
	// (Tessera's POSIX layout; the key document from KeysFile, else
	// DIR/../keys/keys.json when it exists).
	Source string
	// KeysFile is a key document to use instead of the served one.
	KeysFile string
	// LogKey is the log's C2SP signed-note verifier key; empty takes the key
	// document's log member.
	LogKey string
	// WitnessKeys are the trusted witnesses' tlog-cosignature/v1 verifier keys, and
	// MinWitnesses how many of them must have cosigned the checkpoint.
	WitnessKeys  []string
	MinWitnesses int
	// StateFile keeps the last checkpoint that passed, per origin, to check the next
	// audit against; empty neither reads nor saves one.
	StateFile string
	// HTTPClient fetches from a URL source (nil: a client with Timeout); Timeout bounds
	// each request (default 30 s).
	HTTPClient *http.Client
	Timeout    time.Duration
	// Workers verify envelopes in parallel (default GOMAXPROCS).
	Workers int
	// MaxFailures bounds the failures listed in the report (default 1000); all are
	// counted.
	MaxFailures int
	// MaxBackdate is how much earlier than the saved checkpoint's latest trusted
	// cosignature a record it did not hold may be dated (default 1 h).
	MaxBackdate time.Duration
	// Progress, when set, is called now and then from another goroutine with the leaves
	// done out of the checkpoint's size.
	Progress func(done, total int64)
}

// ErrConfig is wrapped by the errors Run returns for an invalid Config.
var ErrConfig = errors.New("logaudit: invalid configuration")

// DefaultMaxBackdate is Config.MaxBackdate's default, the verifier's tolerance.
const DefaultMaxBackdate = verifier.DefaultMaxBackdate

// Run audits a log: it reads the checkpoint and checks the log's signature and the
// trusted witnesses' cosignatures; reads every entry bundle and hash tile the
// checkpoint covers and recomputes the tree (RFC 6962), comparing every served hash and
// the root; parses every leaf and holds leaf i to sequence number i+1; builds the key
// history from the keys records and verifies every envelope under the key document in
// force at its index; checks every tombstone against the leaves it names; checks the
// served key document is the latest logged version; and compares the log with the
// checkpoint saved last time. It saves the new checkpoint only when nothing failed.
//
// Findings about the log are in the Report (Report.OK); the error is for what kept the
// audit from running: a bad Config, an unreachable source, a missing checkpoint or key
// document, I/O.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	start := time.Now()
	a, err := newAuditor(cfg)
	if err != nil {
		return nil, err
	}
	rep, err := a.run(ctx)
	if rep != nil {
		rep.DurationMs = time.Since(start).Milliseconds()
	}
	return rep, err
}

type auditor struct {
	cfg   Config
	src   source
	found *findings
	rep   *Report

	served   *keys.Document
	history  *keyHistory
	cp       checkpoint
	saved    *savedState
	state    *stateFile
	earliest time.Time // earliest valid trusted cosignature on the checkpoint
	savedTop time.Time // latest valid trusted cosignature on the saved checkpoint
	savedLow time.Time // earliest valid trusted cosignature on the saved checkpoint

	done            atomic.Int64
	missing         atomic.Bool // an entry bundle was not served: read no further
	verified        atomic.Int64
	revokedUnproven atomic.Int64
	pending         pendingRevocations // records verified without a key document
	withdrawals     withdrawalRefs     // the supply runs withdrawal records name

	// Filled by the sequential stage, read after it.
	kinds       []uint8 // kind code per index
	kindNames   []string
	tombstones  []tombstoneAt
	removed     map[int64][]byte // index -> payload digest of a removed leaf
	rootAtSaved *tlog.Hash
	deferUntil  int64 // envelopes below this index wait for the first keys record
	// bundleDigests holds, per entry bundle read, the digest of its leaf hashes (zero
	// when it could not be read): a bundle read again must hold the same entries.
	bundleDigests [][sha256.Size]byte
}

type tombstoneAt struct {
	index int64
	doc   attest.TombstoneDocument
}

func newAuditor(cfg Config) (*auditor, error) {
	if cfg.Source == "" {
		return nil, fmt.Errorf("%w: no source", ErrConfig)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	if cfg.MaxFailures <= 0 {
		cfg.MaxFailures = 1000
	}
	if cfg.MaxBackdate <= 0 {
		cfg.MaxBackdate = DefaultMaxBackdate
	}
	a := &auditor{cfg: cfg, found: &findings{max: cfg.MaxFailures, counts: map[Reason]int64{}}, removed: map[int64][]byte{}}
	if err := checkWitnessKeys(cfg.WitnessKeys); err != nil {
		return nil, err
	}
	if cfg.MinWitnesses < 0 || cfg.MinWitnesses > len(cfg.WitnessKeys) {
		return nil, fmt.Errorf("%w: --min-witnesses %d with %d witness keys", ErrConfig, cfg.MinWitnesses, len(cfg.WitnessKeys))
	}
	var err error
	if strings.HasPrefix(cfg.Source, "http://") || strings.HasPrefix(cfg.Source, "https://") {
		a.src, err = newHTTPSource(cfg.Source, cfg.HTTPClient, cfg.Timeout, cfg.KeysFile)
	} else {
		a.src, err = newDirSource(cfg.Source, cfg.KeysFile)
	}
	if err != nil {
		return nil, err
	}
	return a, nil
}

func (a *auditor) run(ctx context.Context) (*Report, error) {
	a.rep = &Report{Source: a.src.String(), Counts: map[string]int64{}, Witnesses: []Cosignature{}}
	if err := a.loadKeys(ctx); err != nil {
		return nil, err
	}
	logKey, err := a.logKey()
	if err != nil {
		return nil, err
	}
	a.rep.LogKey = logKey
	text, err := a.src.read(ctx, "checkpoint", maxCheckpointSize)
	if err != nil {
		return nil, fmt.Errorf("couldn't read the checkpoint: %w", err)
	}
	a.rep.Checkpoint = string(text)
	cp, cos, fls, fatal := checkNote(text, logKey, a.cfg.WitnessKeys)
	for _, fl := range fls {
		a.found.addFailure(fl)
	}
	if fatal {
		// Without a checkpoint signed by the log there is no tree to audit.
		a.found.fill(a.rep)
		return a.rep, nil
	}
	a.rep.Origin = cp.Origin
	a.cp = cp
	a.rep.Size, a.rep.Root = cp.Size, base64.StdEncoding.EncodeToString(cp.Root[:])
	a.checkWitnesses(cos)
	if err := a.loadState(); err != nil {
		return nil, err
	}

	if err := a.stream(ctx); err != nil {
		return nil, err
	}
	if err := a.checkTombstones(ctx); err != nil {
		return nil, err
	}
	a.checkPendingRevocations()
	a.checkWithdrawals()
	if a.served != nil {
		if err := a.history.checkServed(a.served, a.cp.Size == 0); err != nil {
			reason, detail := historyFailure(err)
			a.found.add(-1, reason, "%s: %s", a.rep.KeysSource, detail)
		}
	}
	a.checkLogKey()
	a.rep.KeyVersions = a.history.versions()
	a.rep.Verified = a.verified.Load()
	a.rep.RevokedUnproven = a.revokedUnproven.Load()
	a.compareSaved()
	a.found.fill(a.rep)
	if a.state != nil && a.rep.OK() {
		a.state.Logs[cp.Origin] = &savedState{Checkpoint: string(cp.Note), Size: cp.Size, Root: a.rep.Root, LogKey: a.rep.LogKey, Source: a.rep.Source, SavedAt: time.Now().UTC()}
		if err := a.state.save(a.cfg.StateFile); err != nil {
			return a.rep, err
		}
		a.rep.StateSaved = true
	}
	return a.rep, nil
}

// loadKeys reads the key document (served or --keys) and starts the key history.
func (a *auditor) loadKeys(ctx context.Context) error {
	b, where, err := a.src.keys(ctx)
	switch {
	case errors.Is(err, errNotFound) && a.cfg.LogKey != "":
		// The log key was given: audit the log's structure and key history alone.
	case err != nil:
		return fmt.Errorf("couldn't load the key document (give --keys FILE): %w", err)
	default:
		doc, err := keys.Parse(b)
		if err != nil {
			return fmt.Errorf("key document from %s: %w", where, err)
		}
		a.served, a.rep.KeysSource = doc, where
	}
	a.history = newKeyHistory(a.served)
	return nil
}

// logKey is the verifier key of the log's checkpoints: --log-key, else the key
// document's log member.
func (a *auditor) logKey() (string, error) {
	vk := a.logKeyText()
	if vk == "" {
		return "", fmt.Errorf("%w: no log key: the key document lists no log; give --log-key", ErrConfig)
	}
	if _, err := note.NewVerifier(vk); err != nil {
		return "", fmt.Errorf("%w: log key %q: %v", ErrConfig, clip(vk), err)
	}
	return vk, nil
}

// checkLogKey holds the log key the checkpoint verified with (--log-key, else the key
// document's) to the key document's and to the latest logged version's: the log's own
// history names the key its checkpoints are signed with.
func (a *auditor) checkLogKey() {
	if a.served != nil && a.served.Log != nil && a.served.Log.Key != a.rep.LogKey {
		a.found.add(-1, ReasonLogKeyMismatch, "the checkpoint is verified with the log key %q, the key document lists %q", clip(a.rep.LogKey), clip(a.served.Log.Key))
		return
	}
	if a.history.versions() == 0 {
		return
	}
	if l := a.history.history.Latest().Log; l != nil && l.Key != a.rep.LogKey {
		a.found.add(-1, ReasonLogKeyMismatch, "the checkpoint is verified with the log key %q, the latest logged key document version lists %q", clip(a.rep.LogKey), clip(l.Key))
	}
}

func (a *auditor) logKeyText() string {
	if a.cfg.LogKey != "" {
		return a.cfg.LogKey
	}
	if a.served != nil && a.served.Log != nil {
		return a.served.Log.Key
	}
	return ""
}

func (a *auditor) checkWitnesses(cos []Cosignature) {
	// One cosignature per trusted key (signed-note keeps the first by each name and
	// key hash), counted as the verifier counts them: two keys of one name are two.
	for _, c := range cos {
		a.rep.Witnesses = append(a.rep.Witnesses, c)
		if a.earliest.IsZero() || c.Time.Before(a.earliest) {
			a.earliest = c.Time
		}
	}
	if len(cos) < a.cfg.MinWitnesses {
		a.found.add(-1, ReasonTooFewWitnesses, "%d valid cosignatures of trusted witnesses, %d required", len(cos), a.cfg.MinWitnesses)
	}
	if a.served != nil && a.served.Log != nil && a.served.Log.Origin != a.cp.Origin {
		a.found.add(-1, ReasonCheckpointOrigin, "checkpoint origin %q is not the key document's log origin %q", clip(a.cp.Origin), a.served.Log.Origin)
	}
}

func (a *auditor) loadState() error {
	if a.cfg.StateFile == "" {
		return nil
	}
	st, err := loadState(a.cfg.StateFile)
	if err != nil {
		return err
	}
	a.state = st
	s := st.Logs[a.cp.Origin]
	if s == nil {
		// A source that served another log last time (another origin: a history of its
		// own, nothing linking it to the saved checkpoint) is not a first audit.
		for origin, o := range st.Logs {
			if o.Source == a.rep.Source {
				a.found.add(-1, ReasonLogKeyChanged, "the source served the log %q (log key %q) last time, and now %q (log key %q)", clip(origin), clip(o.LogKey), clip(a.cp.Origin), clip(a.rep.LogKey))
				break
			}
		}
		return nil
	}
	a.saved = s
	a.rep.SavedSize = s.Size
	if s.LogKey != a.rep.LogKey {
		a.found.add(-1, ReasonLogKeyChanged, "the log key is %q, the saved checkpoint was checked with %q", clip(a.rep.LogKey), clip(s.LogKey))
	}
	// The saved checkpoint's cosignatures bound how early the records it did not
	// hold may be dated.
	if s.LogKey == a.rep.LogKey {
		if _, cos, fls, _ := checkNote([]byte(s.Checkpoint), s.LogKey, a.cfg.WitnessKeys); len(fls) == 0 {
			for _, c := range cos {
				if c.Time.After(a.savedTop) {
					a.savedTop = c.Time
				}
				if a.savedLow.IsZero() || c.Time.Before(a.savedLow) {
					a.savedLow = c.Time
				}
			}
		}
	}
	return nil
}

// compareSaved checks the log against the checkpoint saved last time.
func (a *auditor) compareSaved() {
	s := a.saved
	if s == nil {
		return
	}
	ok := true
	switch root := base64.StdEncoding.EncodeToString(a.cp.Root[:]); {
	case a.cp.Size < s.Size:
		a.found.add(-1, ReasonShrunk, "size %d, smaller than the saved checkpoint's %d", a.cp.Size, s.Size)
		ok = false
	case a.cp.Size == s.Size && root != s.Root:
		a.found.add(-1, ReasonSplitView, "size %d with root %s, the saved checkpoint of that size has root %s", a.cp.Size, root, s.Root)
		ok = false
	case a.cp.Size > s.Size && a.rootAtSaved != nil && base64.StdEncoding.EncodeToString(a.rootAtSaved[:]) != s.Root:
		a.found.add(-1, ReasonRewritten, "the first %d leaves have root %s, the saved checkpoint of that size has root %s", s.Size, base64.StdEncoding.EncodeToString(a.rootAtSaved[:]), s.Root)
		ok = false
	case a.cp.Size > s.Size && a.rootAtSaved == nil:
		ok = false // the entries could not be read; that failure is reported already
	}
	a.rep.ConsistentWithSaved = &ok
}

// bundleData is one entry bundle read, hashed and compared with its level-0 tile.
type bundleData struct {
	n       int64
	held    int64    // bytes of the in-flight budget it holds (maxInFlight)
	entries [][]byte // nil when the bundle could not be read
	hashes  []tlog.Hash
	digest  [sha256.Size]byte // leafHashesDigest(hashes)
}

// leafHashesDigest is the digest of a bundle's leaf hashes, to recognise its entries
// when they are read again.
func leafHashesDigest(hashes []tlog.Hash) [sha256.Size]byte {
	d := sha256.New()
	for _, h := range hashes {
		d.Write(h[:])
	}
	var out [sha256.Size]byte
	d.Sum(out[:0])
	return out
}

// stream reads every bundle in order (fetched and hashed ahead, in parallel), runs the
// sequential checks, and hands envelopes to the verification workers.
func (a *auditor) stream(ctx context.Context) error {
	size := a.cp.Size
	nBundles := (size + TileWidth - 1) / TileWidth
	// kinds grows with the leaves read, not with the size the checkpoint claims.
	a.kinds = make([]uint8, 0, min(size, 1<<20))
	a.deferUntil = -1

	parent := ctx
	g, ctx := errgroup.WithContext(ctx)
	progressDone := make(chan struct{})
	if a.cfg.Progress != nil {
		go func() {
			t := time.NewTicker(200 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-progressDone:
					return
				case <-ctx.Done():
					return
				case <-t.C:
					a.cfg.Progress(a.done.Load(), size)
				}
			}
		}()
	}
	defer close(progressDone)

	// Stage 1: fetch and hash bundles ahead, delivered in order through futures.
	fetchers := max(2, a.cfg.Workers)
	if _, ok := a.src.(*httpSource); ok {
		fetchers = 8
	}
	futures := make(chan chan bundleData, 2*fetchers)
	sem := make(chan struct{}, fetchers)
	// The bytes of the bundles read and not yet verified are bounded: a bundle takes
	// the largest a bundle can be before it is read, gives back what it did not need
	// once read, and the rest when its envelopes are verified. Taken in bundle order,
	// so the bundle stage 2 waits for always has its share.
	budget := semaphore.NewWeighted(maxInFlight)
	g.Go(func() error {
		defer close(futures)
		for n := int64(0); n < nBundles; n++ {
			if a.missing.Load() {
				// A log that does not serve a bundle its checkpoint covers is not read
				// further: its checkpoint may claim any size.
				a.found.add(n*TileWidth, ReasonIncomplete, "stopped at entry bundle %d of %d: an entry bundle is missing", n, nBundles)
				return nil
			}
			f := make(chan bundleData, 1)
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return ctx.Err()
			}
			if err := budget.Acquire(ctx, maxBundleSize); err != nil {
				return err
			}
			select {
			case futures <- f:
			case <-ctx.Done():
				return ctx.Err()
			}
			g.Go(func() error {
				defer func() { <-sem }()
				bd, err := a.fetchBundle(ctx, n, size)
				if err != nil {
					return err
				}
				for _, e := range bd.entries {
					bd.held += int64(len(e))
				}
				budget.Release(maxBundleSize - bd.held)
				f <- bd
				return nil
			})
		}
		return nil
	})

	// Stage 3: verify envelopes on every core.
	type batchOf struct {
		jobs []job
		held int64 // budget bytes its bundle holds
	}
	jobs := make(chan batchOf, 2*a.cfg.Workers)
	var wg sync.WaitGroup
	for range a.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for batch := range jobs {
				for _, j := range batch.jobs {
					a.verifyEnvelope(j)
				}
				a.done.Add(int64(len(batch.jobs)))
				budget.Release(batch.held)
			}
		}()
	}

	// Stage 2: in order.
	g.Go(func() error {
		defer close(jobs)
		var rh rangeHasher
		broken := false
		var level8 []tlog.Hash
		for f := range futures {
			var bd bundleData
			select {
			case bd = <-f:
			case <-ctx.Done():
				return ctx.Err()
			}
			a.bundleDigests = append(a.bundleDigests, bd.digest)
			if bd.entries == nil {
				broken = true
				a.kinds = append(a.kinds, make([]uint8, min(TileWidth, size-bd.n*TileWidth))...)
				a.done.Add(min(TileWidth, size-bd.n*TileWidth))
				continue
			}
			if !broken {
				for _, h := range bd.hashes {
					rh.add(h)
					if a.saved != nil && rh.n == a.saved.Size {
						r := rh.root()
						a.rootAtSaved = &r
					}
				}
			}
			if len(bd.hashes) == TileWidth {
				level8 = append(level8, perfectRoot(bd.hashes))
			}
			batch := a.leaves(bd)
			if len(batch) == 0 {
				budget.Release(bd.held)
				continue
			}
			select {
			case jobs <- batchOf{jobs: batch, held: bd.held}:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if broken {
			a.found.add(-1, ReasonRootMismatch, "the root cannot be recomputed: entries are missing or malformed")
		} else if r := rh.root(); r != a.cp.Root {
			a.found.add(-1, ReasonRootMismatch, "the entries' tree has root %s, the checkpoint says %s", base64.StdEncoding.EncodeToString(r[:]), base64.StdEncoding.EncodeToString(a.cp.Root[:]))
		}
		if a.saved != nil && a.saved.Size == 0 {
			r := emptyRoot
			a.rootAtSaved = &r
		}
		if !broken {
			return a.checkUpperTiles(ctx, level8)
		}
		return nil
	})
	err := g.Wait()
	wg.Wait()
	if err != nil {
		return err
	}
	// Envelopes before the first keys record are verified once the history knows
	// version 1.
	if a.deferUntil > 0 {
		return a.verifyDeferred(parent) // ctx ended with g.Wait
	}
	return nil
}

// fetchBundle reads entry bundle n and its level-0 tile, and compares the served leaf
// hashes with the entries'. An error stops the audit; a finding is recorded and the
// bundle returned without entries.
func (a *auditor) fetchBundle(ctx context.Context, n, size int64) (bundleData, error) {
	bd := bundleData{n: n}
	w := int(min(TileWidth, size-n*TileWidth))
	first := n * TileWidth
	raw, err := readTile(ctx, a.src, func(w int) string { return entriesPath(n, w) }, w, maxBundleSize)
	if err != nil {
		if errors.Is(err, errNotFound) {
			a.found.add(first, ReasonEntriesMissing, "entry bundle %s: %v", entriesPath(n, w), err)
			a.missing.Store(true)
			return bd, nil
		}
		return bd, err
	}
	entries, err := splitBundle(raw, w)
	if err != nil && w < TileWidth {
		// The partial bundle is gone and the full one served: take its first w.
		if all, err2 := splitBundle(raw, TileWidth); err2 == nil {
			entries, err = all[:w], nil
		}
	}
	if err != nil {
		a.found.add(first, ReasonEntriesMalformed, "entry bundle %s: %v", entriesPath(n, w), err)
		return bd, nil
	}
	hashes := make([]tlog.Hash, w)
	for i, e := range entries {
		hashes[i] = tlog.RecordHash(e)
	}
	bd.entries, bd.hashes, bd.digest = entries, hashes, leafHashesDigest(hashes)
	if err := a.checkTile(ctx, 0, n, hashes); err != nil {
		return bd, err
	}
	return bd, nil
}

// checkTile compares the served hash tile at level l, index n with the hashes
// recomputed for it.
func (a *auditor) checkTile(ctx context.Context, l int, n int64, want []tlog.Hash) error {
	w := len(want)
	// The index of the first leaf under the tile, for the report.
	first := n * TileWidth << (8 * l)
	raw, err := readTile(ctx, a.src, func(w int) string { return tilePath(l, n, w) }, w, maxTileSize)
	if err != nil {
		if errors.Is(err, errNotFound) {
			a.found.add(first, ReasonTileMissing, "hash tile %s: %v", tilePath(l, n, w), err)
			return nil
		}
		return err
	}
	got, err := tileHashes(raw, w)
	if err != nil && w < TileWidth {
		if all, err2 := tileHashes(raw, TileWidth); err2 == nil {
			got, err = all[:w], nil
		}
	}
	if err != nil {
		a.found.add(first, ReasonTileMalformed, "hash tile %s: %v", tilePath(l, n, w), err)
		return nil
	}
	for i := range want {
		if got[i] != want[i] {
			a.found.add(first+int64(i)<<(8*l), ReasonTileMismatch, "hash tile %s: hash %d is %s, the entries give %s", tilePath(l, n, w), i, got[i], want[i])
			return nil
		}
	}
	return nil
}

// checkUpperTiles compares the hash tiles of levels 1 and up with the nodes recomputed
// from the entries: level8 holds the roots of the full level-0 tiles.
func (a *auditor) checkUpperTiles(ctx context.Context, nodes []tlog.Hash) error {
	for l := 1; len(nodes) > 0; l++ {
		var next []tlog.Hash
		for n := int64(0); n*TileWidth < int64(len(nodes)); n++ {
			end := min(int64(len(nodes)), (n+1)*TileWidth)
			part := nodes[n*TileWidth : end]
			if err := a.checkTile(ctx, l, n, part); err != nil {
				return err
			}
			if len(part) == TileWidth {
				next = append(next, perfectRoot(part))
			}
		}
		nodes = next
	}
	return nil
}

// job is one envelope to verify.
type job struct {
	index int64
	kind  string
	env   []byte
	doc   *keys.Document
}

// kindPredicates maps the record kinds to their statements' predicate types.
var kindPredicates = map[string]string{
	"probe":   attest.ProbePredicateType,
	"change":  attest.ChangePredicateType,
	"supply":  attest.SupplyPredicateType,
	"keys":    attest.KeysPredicateType,
	"dispute": attest.DisputePredicateType,
	"outcome": attest.OutcomePredicateType,
	// withdrawal: an operator's withdrawal or restoration of an entry's Verified.
	"withdrawal": attest.WithdrawalPredicateType,
	"baseline":   attest.BaselinePredicateType,
}

// leaves runs the in-order checks on one bundle's leaves and returns the envelopes to
// verify.
func (a *auditor) leaves(bd bundleData) []job {
	var batch []job
	var other int64
	for i, e := range bd.entries {
		idx := bd.n*TileWidth + int64(i)
		a.kinds = append(a.kinds, 0) // a.kinds[idx]
		l, err := attest.ParseLeaf(e)
		if err != nil {
			a.found.add(idx, ReasonLeafMalformed, "%v", err)
			other++
			continue
		}
		if want := idx + 1; l.Seq != want {
			what := "dropped or reordered: the records between are not here"
			if l.Seq < want {
				what = "an earlier record again: duplicated or reordered"
			}
			a.found.add(idx, ReasonSequence, "leaf carries seq %d, want %d (%s)", l.Seq, want, what)
		}
		kind := l.Kind
		if l.Body == attest.LeafRemoved {
			kind = "removed"
		}
		a.rep.Counts[kind]++
		a.kinds[idx] = a.kindCode(l.Kind)
		switch l.Body {
		case attest.LeafTombstone:
			other++
			doc, err := attest.ParseTombstoneDocument(l.Data)
			if err != nil {
				a.found.add(idx, ReasonTombstone, "%v", err)
				continue
			}
			a.tombstones = append(a.tombstones, tombstoneAt{index: idx, doc: doc})
		case attest.LeafTombstoneDigest:
			// A deletion too large for a leaf: the log holds its document's digest, so
			// the records it removed cannot be checked against it here.
			other++
			a.rep.DigestOnly++
		case attest.LeafRemoved:
			other++
			a.removed[idx] = l.Digest
		case attest.LeafEnvelopeDigest:
			other++
			a.rep.DigestOnly++
			if l.Kind == "keys" {
				// A key document version always fits a leaf (64 keys at most): one
				// logged by digest is a version the monitor cannot check.
				a.found.add(idx, ReasonKeyHistory, "a keys record logged by digest only: its key document version cannot be checked")
			}
		case attest.LeafEnvelope:
			if _, ok := kindPredicates[l.Kind]; !ok {
				a.found.add(idx, ReasonUnknownKind, "kind %q", l.Kind)
				other++
				continue
			}
			if l.Kind == "keys" {
				other++
				if err := a.history.add(idx, l.Data); err != nil {
					reason, detail := historyFailure(err)
					a.found.add(idx, reason, "%s", detail)
					continue
				}
				// issuedAt plays observedAt's role: a version is not issued after a
				// witness saw it. (Not held to the backdate bound: a version made while
				// the service runs is logged when it next starts.)
				v, _, _ := a.history.history.Version(a.history.versions())
				if fl := a.checkTime(idx, "keys", v.IssuedAt); fl != nil {
					a.found.addFailure(fl)
					continue
				}
				a.verified.Add(1)
				continue
			}
			if a.history.versions() == 0 && a.history.needsVersion1() {
				// Records before the first keys record are verified under version 1,
				// which the log has not shown yet (verifyDeferred counts them done).
				a.deferUntil = idx + 1
				continue
			}
			batch = append(batch, job{index: idx, kind: l.Kind, env: l.Data, doc: a.history.inForce(idx)})
		}
	}
	a.done.Add(other)
	return batch
}

func (a *auditor) kindCode(kind string) uint8 {
	if i := slices.Index(a.kindNames, kind); i >= 0 {
		return uint8(i + 1)
	}
	if len(a.kindNames) >= 250 {
		return 255
	}
	a.kindNames = append(a.kindNames, kind)
	return uint8(len(a.kindNames))
}

func (a *auditor) kindName(code uint8) string {
	if code == 0 || int(code) > len(a.kindNames) {
		return ""
	}
	return a.kindNames[code-1]
}

var policy = verifier.DefaultPolicy()

// verifyEnvelope verifies one envelope under the key document in force at its index,
// its kind against its predicate type, and its time against the cosignatures.
func (a *auditor) verifyEnvelope(j job) {
	if j.doc == nil {
		a.found.add(j.index, verifierReason(verifier.ReasonUnknownKey), "no key document in force at this index")
		return
	}
	r, err := verifier.Verify(j.env, j.doc, policy)
	if err != nil {
		var f *verifier.Failure
		if errors.As(err, &f) {
			a.found.add(j.index, verifierReason(f.Reason), "%s", f.Detail)
		} else {
			a.found.add(j.index, verifierReason(verifier.ReasonMalformedEnvelope), "%v", err)
		}
		return
	}
	if want := kindPredicates[j.kind]; r.PredicateType != want {
		a.found.add(j.index, ReasonKindMismatch, "kind %s, predicate type %s", j.kind, r.PredicateType)
		return
	}
	if a.served != nil {
		if fl := a.checkRevoked(a.served, j.index, signerIDs(r)); fl != nil {
			a.found.addFailure(fl)
			return
		}
	}
	if fl := a.checkTime(j.index, j.kind, r.ObservedAt); fl != nil {
		a.found.addFailure(fl)
		return
	}
	a.withdrawals.note(j, r)
	if a.served == nil {
		// Without a key document the revocations are the latest logged version's, known
		// only once the whole log is read (checkPendingRevocations).
		a.pending.add(j.index, signerIDs(r))
	}
	a.verified.Add(1)
}

func signerIDs(r *verifier.Result) []string {
	ids := make([]string, len(r.Signatures))
	for i, s := range r.Signatures {
		ids[i] = s.KeyID
	}
	return ids
}

// checkTime holds a record's time (a keys record's: its issuedAt) to the cosignatures
// with verifier.CheckTimeBounds: the current checkpoint's earliest trusted cosignature
// from above, the saved checkpoint's latest from below when it did not hold the record.
func (a *auditor) checkTime(index int64, kind string, t time.Time) *Failure {
	// The checkpoint saved last time, when it did not hold the record, bounds its
	// time from below; the rule is the verifier's.
	var notBefore time.Time
	if a.saved != nil && index >= a.saved.Size {
		notBefore = a.savedTop
	}
	if f := verifier.CheckTimeBounds(kind, t, a.earliest, notBefore, a.cfg.MaxBackdate); f != nil {
		return &Failure{Index: index, Reason: Reason(f.Reason), Detail: f.Detail}
	}
	return nil
}

// pendingRevocations are the signers of the records verified without a key document,
// for the revocation rule once the latest logged version is known. Key ids are interned:
// a log has a few keys and many records.
type pendingRevocations struct {
	mu      sync.Mutex
	ids     []string
	byID    map[string]uint16
	records []pendingRecord
}

type pendingRecord struct {
	index int64
	keys  []uint16
}

func (p *pendingRevocations) add(index int64, keyIDs []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byID == nil {
		p.byID = map[string]uint16{}
	}
	rec := pendingRecord{index: index, keys: make([]uint16, 0, len(keyIDs))}
	for _, id := range keyIDs {
		n, ok := p.byID[id]
		if !ok {
			if len(p.ids) >= 1<<16-1 {
				continue // not a key any document lists (64 keys at most): Verify refused it
			}
			n = uint16(len(p.ids))
			p.ids = append(p.ids, id)
			p.byID[id] = n
		}
		rec.keys = append(rec.keys, n)
	}
	p.records = append(p.records, rec)
}

// checkPendingRevocations applies the revocation rule, with the latest logged key
// document version, to the records verified without a key document.
func (a *auditor) checkPendingRevocations() {
	if a.served != nil || a.history.versions() == 0 {
		return
	}
	latest := a.history.history.Latest()
	revoked := false
	for i := range latest.Keys {
		revoked = revoked || latest.Keys[i].Revoked()
	}
	p := &a.pending
	if revoked {
		for _, rec := range p.records {
			ids := make([]string, len(rec.keys))
			for i, n := range rec.keys {
				ids[i] = p.ids[n]
			}
			if fl := a.checkRevoked(latest, rec.index, ids); fl != nil {
				a.found.addFailure(fl)
				a.verified.Add(-1)
			}
		}
	}
	p.records, p.ids, p.byID = nil, nil, nil
}

// checkRevoked applies the revocation rule with the latest key document (the served
// one, which must be the latest logged version; without one, the latest logged version,
// once the log is read): a key revoked at R vouches for a record
// only if a trusted witness cosigned a checkpoint holding it before R. The audit knows
// two checkpoints: the current one, and the saved one for the records it held. A record
// neither shows witnessed before R, and that the saved checkpoint, cosigned at or after
// R, did not hold, was witnessed only after the revocation (logged_after_revocation). One it cannot place either way
// (a first audit, the current checkpoint cosigned after R) is counted as unproven:
// its bundle, which names the earliest checkpoint holding it, decides.
func (a *auditor) checkRevoked(doc *keys.Document, index int64, keyIDs []string) *Failure {
	for _, id := range keyIDs {
		k, ok := doc.Lookup(id)
		if !ok || !k.Revoked() {
			continue
		}
		at := *k.RevokedAt
		switch {
		case !a.earliest.IsZero() && a.earliest.Before(at):
		case a.saved != nil && index < a.saved.Size && !a.savedLow.IsZero() && a.savedLow.Before(at):
		case a.saved != nil && index >= a.saved.Size && !a.savedLow.IsZero() && !a.savedLow.Before(at):
			return &Failure{Index: index, Reason: Reason(verifier.ReasonLoggedAfterRevocation),
				Detail: fmt.Sprintf("key %s revoked at %s; the saved checkpoint of size %d, cosigned at %s, did not hold the record", k.KeyID, attest.FormatTime(at), a.saved.Size, attest.FormatTime(a.savedLow))}
		default:
			a.revokedUnproven.Add(1)
			return nil
		}
	}
	return nil
}

// verifyDeferred re-reads the bundles of the envelopes that came before the first keys
// record and verifies them under the document in force, now that the history has it.
func (a *auditor) verifyDeferred(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(a.cfg.Workers)
	for n := int64(0); n*TileWidth < a.deferUntil; n++ {
		g.Go(func() error {
			entries, err := a.rereadBundle(ctx, n)
			if err != nil || entries == nil {
				return err
			}
			var count int64
			for i, e := range entries {
				idx := n*TileWidth + int64(i)
				if idx >= a.deferUntil {
					break
				}
				l, err := attest.ParseLeaf(e)
				if err != nil || l.Body != attest.LeafEnvelope || l.Kind == "keys" {
					continue
				}
				if _, ok := kindPredicates[l.Kind]; !ok {
					continue
				}
				a.verifyEnvelope(job{index: idx, kind: l.Kind, env: l.Data, doc: a.history.inForce(idx)})
				count++
			}
			a.done.Add(count)
			return nil
		})
	}
	return g.Wait()
}

// rereadBundle reads bundle n again (it was read and checked once): nil entries when it
// could not be read the first time either, or when it now holds other entries than the
// ones the tree was recomputed from (entries_changed: a site may serve other bytes the
// second time).
func (a *auditor) rereadBundle(ctx context.Context, n int64) ([][]byte, error) {
	if n >= int64(len(a.bundleDigests)) || a.bundleDigests[n] == ([sha256.Size]byte{}) {
		return nil, nil
	}
	w := int(min(TileWidth, a.cp.Size-n*TileWidth))
	raw, err := readTile(ctx, a.src, func(w int) string { return entriesPath(n, w) }, w, maxBundleSize)
	if errors.Is(err, errNotFound) {
		a.found.add(n*TileWidth, ReasonEntriesChanged, "entry bundle %s is gone when read again", entriesPath(n, w))
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	entries, err := splitBundle(raw, w)
	if err != nil && w < TileWidth {
		if all, err2 := splitBundle(raw, TileWidth); err2 == nil {
			entries, err = all[:w], nil
		}
	}
	if err != nil {
		a.found.add(n*TileWidth, ReasonEntriesChanged, "entry bundle %s: %v when read again", entriesPath(n, w), err)
		return nil, nil
	}
	hashes := make([]tlog.Hash, len(entries))
	for i, e := range entries {
		hashes[i] = tlog.RecordHash(e)
	}
	if leafHashesDigest(hashes) != a.bundleDigests[n] {
		a.found.add(n*TileWidth, ReasonEntriesChanged, "entry bundle %s holds other entries when read again than the ones the tree was recomputed from", entriesPath(n, w))
		return nil, nil
	}
	return entries, nil
}

// checkTombstones holds every tombstone's removed list to the earlier leaves it names:
// same kind, and the payload digest of the logged envelope (or of the removed leaf).
func (a *auditor) checkTombstones(ctx context.Context) error {
	type want struct {
		tomb   int64
		digest string
	}
	needEnvelope := map[int64][]want{} // index -> tombstones naming a logged envelope
	named := map[int64]bool{}
	for _, t := range a.tombstones {
		for _, r := range t.doc.Removed {
			idx := r.Seq - 1
			switch {
			case idx < 0 || idx >= t.index:
				a.found.add(t.index, ReasonTombstoneMismatch, "names seq %d, not an earlier record", r.Seq)
				continue
			case a.kindName(a.kinds[idx]) != r.Kind:
				a.found.add(t.index, ReasonTombstoneMismatch, "names seq %d as kind %q, the leaf is %q", r.Seq, clip(r.Kind), a.kindName(a.kinds[idx]))
				continue
			}
			named[idx] = true
			hexText := r.PayloadDigestHex
			if d, ok := a.removed[idx]; ok {
				if hex.EncodeToString(d) != hexText {
					a.found.add(t.index, ReasonTombstoneMismatch, "names seq %d with payload digest %s, the removed leaf has %x", r.Seq, clip(hexText), d)
				}
				continue
			}
			needEnvelope[idx] = append(needEnvelope[idx], want{t.index, hexText})
		}
	}
	for idx := range a.removed {
		if !named[idx] {
			a.rep.RemovedAwaitingTombstone = append(a.rep.RemovedAwaitingTombstone, idx)
		}
	}
	slices.Sort(a.rep.RemovedAwaitingTombstone)
	// The envelopes named: read their bundles again (tombstones are rare).
	byBundle := map[int64][]int64{}
	for idx := range needEnvelope {
		byBundle[idx/TileWidth] = append(byBundle[idx/TileWidth], idx)
	}
	for n, idxs := range byBundle {
		entries, err := a.rereadBundle(ctx, n)
		if err != nil {
			return err
		}
		for _, idx := range idxs {
			if entries == nil {
				continue
			}
			l, err := attest.ParseLeaf(entries[idx-n*TileWidth])
			if err != nil {
				continue
			}
			got := ""
			if l.Body == attest.LeafEnvelope {
				if _, payload, err := attest.ParseEnvelope(l.Data); err == nil {
					sum := sha256.Sum256(payload)
					got = hex.EncodeToString(sum[:])
				}
			}
			for _, w := range needEnvelope[idx] {
				switch {
				case l.Body == attest.LeafEnvelopeDigest:
					// The envelope is not in the log: its payload digest cannot be checked.
				case got != w.digest:
					a.found.add(w.tomb, ReasonTombstoneMismatch, "names seq %d with payload digest %s, the logged envelope's payload has %s", idx+1, clip(w.digest), got)
				}
			}
		}
	}
	return nil
}
