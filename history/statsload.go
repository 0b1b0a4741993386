package history

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/history/diff"
	"github.com/probity-dev/probity/history/stats"
	"github.com/probity-dev/probity/store"
)

// StatsStore is what LoadStats reads.
type StatsStore interface {
	Entries(ctx context.Context, afterID int64, limit int) ([]store.Entry, error)
	WalkRounds(ctx context.Context, since time.Time, fn func(store.RoundSummary) error) error
	WalkUptime(ctx context.Context, from, to string, fn func(entryID int64, d store.UptimeDay) error) error
	Surface(ctx context.Context, fingerprint string) ([]byte, error)
	Changes(ctx context.Context, f store.ChangeFilter) ([]store.ChangeRecord, error)
}

// LoadStats builds the statistics' input from the store: every remote entry with its
// successful reads (signed full rounds), each read that changed the seeds' digest of its
// surface (each tool's name, description and input schema; statsdigest.go) classified
// by the diff of the reduced surfaces, its newest round, and its uptime days in opt's
// window. Reads are the
// rounds themselves, as in the seed studies: the confirmation rules decide what the
// history records, not what the statistics count. A hidden tools change appears in no
// statistic: from the read that brought its new surface on, until the surface changes
// again, reads count as if they still showed the old one. For the series (stats.Series)
// it also reads the days each entry had a round, the recorded changes that are visible
// and not baselines, and the uptime days up to the cut-off's day.
func LoadStats(ctx context.Context, st StatsStore, opt stats.Options) ([]stats.Server, error) {
	byID := map[int64]*stats.Server{}
	var order []int64
	var after int64
	for {
		es, err := st.Entries(ctx, after, 5000)
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			after = e.ID
			if e.Kind != store.KindRemote {
				continue
			}
			byID[e.ID] = &stats.Server{ID: e.ID, Claimed: e.Claimed}
			order = append(order, e.ID)
		}
		if len(es) < 5000 {
			break
		}
	}
	// Hidden tools changes: the rounds whose surfaces they compare.
	hidden, err := st.Changes(ctx, store.ChangeFilter{IncludeHidden: true, WithoutEnvelopes: true})
	if err != nil {
		return nil, fmt.Errorf("couldn't read changes: %w", err)
	}
	// The series count the confirmed changes: visible, not baselines.
	seriesStart, now := stats.SeriesStart(opt.Now), opt.Now.UTC()
	for _, c := range hidden {
		if s := byID[c.EntryID]; s != nil && !c.Hidden && c.Kind != attest.ChangeBaseline &&
			!c.RecordedAt.Before(seriesStart) && !c.RecordedAt.After(now) {
			s.Changes = append(s.Changes, c.RecordedAt)
		}
	}
	type pair struct{ before, after int64 }
	var hiddenPairs []pair
	wantRounds := map[int64]string{}
	for _, c := range hidden {
		if c.Hidden && c.Kind == attest.ChangeTools && c.BeforeRound != 0 && c.AfterRound != 0 {
			hiddenPairs = append(hiddenPairs, pair{c.BeforeRound, c.AfterRound})
			wantRounds[c.BeforeRound], wantRounds[c.AfterRound] = "", ""
		}
	}
	roundEntry := map[int64]int64{}
	err = st.WalkRounds(ctx, time.Time{}, func(r store.RoundSummary) error {
		if _, ok := wantRounds[r.ID]; ok && r.Fingerprints != nil {
			wantRounds[r.ID], roundEntry[r.ID] = r.Fingerprints.Surface, r.EntryID
		}
		s := byID[r.EntryID]
		if s == nil {
			return nil
		}
		if r.Pages > 1 {
			s.Paginated = true
		}
		s.Latest = latestOf(&r, s.Latest)
		if !r.StartedAt.Before(seriesStart) && !r.StartedAt.After(now) {
			s.Probes = stats.AddProbe(s.Probes, r.StartedAt, r.ProtocolVersion)
		}
		if r.Signed && r.Coverage == string(attest.CoverageFull) && r.Fingerprints != nil {
			s.Reads = append(s.Reads, stats.Read{At: r.StartedAt, Toolset: r.Fingerprints.Toolset, Surface: r.Fingerprints.Surface})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("couldn't read rounds: %w", err)
	}
	// entry → hidden after-surface → its before-surface
	hide := map[int64]map[string]string{}
	for _, p := range hiddenPairs {
		b, a := wantRounds[p.before], wantRounds[p.after]
		if b == "" || a == "" || b == a {
			continue
		}
		id := roundEntry[p.after]
		if hide[id] == nil {
			hide[id] = map[string]string{}
		}
		hide[id][a] = b
	}
	o := opt
	if o.UptimeFrom == "" || o.UptimeTo == "" {
		end := o.Now.UTC().Truncate(24 * time.Hour)
		o.UptimeFrom, o.UptimeTo = end.AddDate(0, 0, -29).Format(time.DateOnly), end.AddDate(0, 0, -1).Format(time.DateOnly)
	}
	// The uptime table's days and the series' (Compute keeps each to its window).
	from, to := min(o.UptimeFrom, seriesStart.Format(time.DateOnly)), max(o.UptimeTo, now.Format(time.DateOnly))
	err = st.WalkUptime(ctx, from, to, func(id int64, d store.UptimeDay) error {
		if s := byID[id]; s != nil {
			s.Days = append(s.Days, stats.Day{Day: d.Day, Status: d.Status})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("couldn't read uptime: %w", err)
	}

	// Names and change kinds need the surfaces: load each distinct one once, and diff
	// only adjacent reads whose surfaces differ, on every core.
	cache := &surfaceCache{st: st, docs: map[string]*surfaceInfo{}}
	servers := make([]stats.Server, len(order))
	work := make(chan int)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) * 2 {
		wg.Go(func() {
			for i := range work {
				s := byID[order[i]]
				if err := fill(ctx, cache, s, hide[s.ID]); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
				servers[i] = *s
			}
		})
	}
	for i := range order {
		work <- i
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return nil, err
	default:
	}
	return servers, nil
}

// latestOf keeps the newer of a round and the latest so far, with its handshake path and
// login facts. AuthRequired is read from the login facts (the handshake or tools/list
// answered 401); for a round stored before they were recorded, from its auth_required
// coverage.
func latestOf(r *store.RoundSummary, cur *stats.Latest) *stats.Latest {
	if cur != nil && cur.At.After(r.StartedAt) {
		return cur
	}
	l := &stats.Latest{At: r.StartedAt, ProtocolVersion: r.ProtocolVersion, HandshakeMethod: r.HandshakeMethod,
		ProposedVersion: r.ProposedVersion, AuthRequired: r.Coverage == string(attest.CoverageAuthRequired)}
	if f := r.Login; f != nil {
		l.Login = &stats.LoginFacts{Unauthorized: f.Unauthorized, Challenge: f.Challenge, Metadata: f.Metadata}
		// The handshake or tools/list answered 401, whatever the round's coverage became.
		l.AuthRequired = f.Unauthorized == store.LoginAtHandshake || f.Unauthorized == store.LoginAtToolsList
	}
	switch {
	case r.Coverage == string(attest.CoverageFull):
		l.Category = stats.SignedFull
	case r.Coverage == string(attest.CoverageAuthRequired):
		l.Category = stats.SignedAuthRequired
	default:
		l.Category, l.UnsignedReason = stats.Unsigned, r.UnsignedReason
	}
	return l
}

type surfaceInfo struct {
	once    sync.Once
	surface diff.Surface
	names   []string
	// seed and digest are the seeds' view of the surface (statsdigest.go).
	seed   diff.Surface
	digest string
	err    error
}

type surfaceCache struct {
	st   StatsStore
	mu   sync.Mutex
	docs map[string]*surfaceInfo
}

func (c *surfaceCache) get(ctx context.Context, fp string) (*surfaceInfo, error) {
	c.mu.Lock()
	si := c.docs[fp]
	if si == nil {
		si = &surfaceInfo{}
		c.docs[fp] = si
	}
	c.mu.Unlock()
	si.once.Do(func() {
		doc, err := c.st.Surface(ctx, fp)
		if err != nil {
			si.err = fmt.Errorf("couldn't load surface %s: %w", fp, err)
			return
		}
		if si.surface, si.err = diff.Parse(doc, nil, ""); si.err != nil {
			return
		}
		if si.seed, si.digest, si.err = seedSurface(si.surface.Tools); si.err != nil {
			si.err = fmt.Errorf("couldn't reduce surface %s to the seeds' digest: %w", fp, si.err)
			return
		}
		var tools []struct {
			Name string `json:"name"`
		}
		if si.err = json.Unmarshal(doc, &tools); si.err != nil {
			return
		}
		for _, t := range tools {
			si.names = append(si.names, t.Name)
		}
		slices.Sort(si.names)
	})
	return si, si.err
}

// fill sets the names of every read and the change kinds of reads whose surface differs
// from the previous one, in three passes over the entry's reads:
//
//  1. a read that differs from the one before only in masked dates takes its surface
//     fingerprint, so no table counts it as a change;
//  2. a read that shows the new surface of a hidden change (hide maps it to the old
//     one) keeps the old one, and so do the reads after it that show the same;
//  3. every read takes the seeds' digest of its surface (statsdigest.go), and every
//     difference between adjacent digests is classified by the diff of the seeds'
//     views; one that differs only in masked dates is no change either.
func fill(ctx context.Context, cache *surfaceCache, s *stats.Server, hide map[string]string) error {
	reads := s.Reads
	compare := func(a, b string, at time.Time) (*diff.Change, error) {
		sa, err := cache.get(ctx, a)
		if err != nil {
			return nil, err
		}
		sb, err := cache.get(ctx, b)
		if err != nil {
			return nil, err
		}
		return diff.Compare(sa.surface, sb.surface, diff.Options{Now: at})
	}
	for i := 1; i < len(reads); i++ {
		if reads[i].Surface == reads[i-1].Surface {
			continue
		}
		c, err := compare(reads[i-1].Surface, reads[i].Surface, reads[i].At)
		if err != nil {
			return err
		}
		if c.Empty() {
			reads[i].Surface = reads[i-1].Surface
		}
	}
	if len(hide) > 0 && len(reads) > 0 {
		prevOrig := reads[0].Surface
		for i := 1; i < len(reads); i++ {
			orig := reads[i].Surface
			if orig == prevOrig || hide[orig] == prevOrig {
				reads[i].Surface, reads[i].Toolset = reads[i-1].Surface, reads[i-1].Toolset
			}
			prevOrig = orig
		}
	}
	var prev *surfaceInfo // the surface the previous read counts as
	for i := range reads {
		si, err := cache.get(ctx, reads[i].Surface)
		if err != nil {
			return err
		}
		reads[i].Names = si.names
		reads[i].Surface = si.digest
		if prev == nil || si.digest == prev.digest {
			prev = si
			continue
		}
		c, err := diff.Compare(prev.seed, si.seed, diff.Options{Now: reads[i].At})
		if err != nil {
			return err
		}
		if c.Empty() {
			reads[i].Surface = prev.digest
			continue
		}
		k := c.Kinds()
		reads[i].Change = &stats.Change{ToolsAdded: k.ToolsAdded, ToolsRemoved: k.ToolsRemoved,
			SchemaChangedNamesSame: k.SchemaChangedNamesSame, DescriptionOnly: k.DescriptionOnly, Breaking: k.Breaking,
			Tools: toolCounts(c)}
		prev = si
	}
	return nil
}
