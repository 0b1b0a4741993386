package stats

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"time"
)

const day = 24 * time.Hour

// firstDays are the N of the "changed within the first N days" table.
var firstDays = [...]int{7, 14, 21}

// toolBins are the tool-count bins at the first read (MaxTools 0: no upper bound).
var toolBins = [...][2]int{{0, 5}, {6, 10}, {11, 20}, {21, 50}, {51, 0}}

// driftDays are the drift windows; the last one is also DriftActivity's.
var driftDays = [...]int{7, 30}

// Compute computes every table from the servers' histories. It neither modifies the
// servers nor keeps references to them, and the same input gives the same Report.
func Compute(servers []Server, opt Options) *Report {
	opt = opt.withDefaults()
	now := opt.Now
	c := computer{now: now, opt: opt}
	for i, d := range driftDays {
		c.drift[i].start = now.Add(-time.Duration(d) * day)
	}
	c.versions = map[string]int{}
	c.olderVersions = map[string]int{}
	c.paths = map[[2]string]*PathRow{}
	c.uptime = map[string]*UptimeRow{}
	c.tools.start = c.drift[len(c.drift)-1].start
	c.daily = newDailyTally(now)
	c.series = newSeriesTally(now)

	for i := range servers {
		s := &servers[i]
		reads := readsUntil(s.Reads, now)
		if len(reads) > 0 {
			c.scope.WithReads++
			switch {
			case s.Claimed:
				c.scope.ExcludedClaimed++
			case s.Paginated:
				c.scope.ExcludedPaginated++
			default:
				c.scope.Eligible++
				c.toolsets(reads)
				for j := range c.drift {
					c.drift[j].add(reads)
				}
				c.activity(reads)
				c.tools.add(reads)
				c.daily.add(reads)
			}
		}
		c.latest(s)
		c.series.add(s)
	}
	return c.report()
}

// readsUntil returns the reads at or before now, oldest first, sorting a copy when the
// caller's are out of order.
func readsUntil(reads []Read, now time.Time) []Read {
	byTime := func(a, b Read) int { return a.At.Compare(b.At) }
	if !slices.IsSortedFunc(reads, byTime) {
		reads = slices.Clone(reads)
		slices.SortStableFunc(reads, byTime)
	}
	n := sort.Search(len(reads), func(i int) bool { return reads[i].At.After(now) })
	return reads[:n]
}

// computer accumulates the tables over one pass over the servers.
type computer struct {
	now time.Time
	opt Options

	// Seed 001.
	scope            Scope
	changedServers   int
	changes          int
	namesAdded       int
	namesRemoved     int
	singleName       int
	namesPerChange   []float64
	endedMore        int
	endedFewer       int
	endedSame        int
	returns          int
	observedDays     []float64
	observedTotal    time.Duration
	firstObserved    [len(firstDays)]int
	firstChanged     [len(firstDays)]int
	hist             [6]int
	frequent         int
	frequentChanges  int
	maxChanges       int
	onlyAdded        int
	onlyRemoved      int
	both             int
	duplicatesOnly   int
	binServers       [len(toolBins)]int
	binChanged       [len(toolBins)]int
	intervalServers  int
	intervalHours    []float64
	namesChanged     ServerChanges
	namesNever       ServerChanges
	surfaceOnly      ServerChanges
	changeTimes      []time.Time // scratch, per server
	seenToolsets     map[string]struct{}
	seenSurfaces     map[string]struct{}
	drift            [len(driftDays)]driftTally
	activityServers  int
	activityChanged  int
	activityLists    int
	activityOverTen  int
	activityTenLists int
	activityReturns  int
	tools            toolTally    // tools.go
	daily            dailyTally   // seed001.go
	series           *seriesTally // series.go

	// Seed 003.
	dataset       Dataset
	protocol      ProtocolVersions
	versions      map[string]int
	olderVersions map[string]int
	paths         map[[2]string]*PathRow
	uptime        map[string]*UptimeRow
	tooFewDays    int
	login         loginTally // login.go
}

// toolsets adds one eligible server's reads (at least one) to the seed 001 tables.
func (c *computer) toolsets(reads []Read) {
	if len(reads) < 2 {
		return
	}
	c.scope.ReadTwice++
	first, last := &reads[0], &reads[len(reads)-1]
	observed := last.At.Sub(first.At)
	c.observedTotal += observed
	c.observedDays = append(c.observedDays, days(observed))

	times := c.changeTimes[:0]
	clear(c.seenToolsets)
	var namesChanges, surfaceChanges int
	for i := 1; i < len(reads); i++ {
		prev, cur := &reads[i-1], &reads[i]
		if cur.Toolset != prev.Toolset {
			times = append(times, cur.At)
			added, removed := diffNames(prev.Names, cur.Names)
			c.namesAdded += added
			c.namesRemoved += removed
			c.namesPerChange = append(c.namesPerChange, float64(added+removed))
			if added+removed == 1 {
				c.singleName++
			}
			switch {
			case added > 0 && removed > 0:
				c.both++
			case added > 0:
				c.onlyAdded++
			case removed > 0:
				c.onlyRemoved++
			default:
				c.duplicatesOnly++
			}
			// Every read before the first change had prev's toolset; after it, every
			// toolset that starts a run is added, so the set holds all earlier ones.
			if len(c.seenToolsets) == 0 {
				if c.seenToolsets == nil {
					c.seenToolsets = map[string]struct{}{}
				}
				c.seenToolsets[prev.Toolset] = struct{}{}
			}
			if _, ok := c.seenToolsets[cur.Toolset]; ok {
				c.returns++
			}
			c.seenToolsets[cur.Toolset] = struct{}{}
		}
		if prev.Surface != "" && cur.Surface != "" {
			switch {
			case cur.Toolset != prev.Toolset:
				namesChanges++
			case cur.Surface != prev.Surface:
				surfaceChanges++
			}
		}
	}
	c.changeTimes = times

	n := len(times)
	if n > 0 {
		c.changedServers++
		c.changes += n
		switch a, b := len(first.Names), len(last.Names); {
		case b > a:
			c.endedMore++
		case b < a:
			c.endedFewer++
		default:
			c.endedSame++
		}
	}
	switch {
	case n <= 2:
		c.hist[n]++
	case n <= 5:
		c.hist[3]++
	case n <= 10:
		c.hist[4]++
	default:
		c.hist[5]++
	}
	if n >= 3 {
		c.frequent++
		c.frequentChanges += n
	}
	c.maxChanges = max(c.maxChanges, n)

	for k, d := range firstDays {
		limit := time.Duration(d) * day
		if observed < limit {
			continue
		}
		c.firstObserved[k]++
		if n > 0 && times[0].Sub(first.At) <= limit {
			c.firstChanged[k]++
		}
	}
	if observed >= 14*day {
		tools := len(first.Names)
		for k, b := range toolBins {
			if tools >= b[0] && (b[1] == 0 || tools <= b[1]) {
				c.binServers[k]++
				if n > 0 && times[0].Sub(first.At) <= 14*day {
					c.binChanged[k]++
				}
				break
			}
		}
	}
	if n >= 2 {
		c.intervalServers++
		for k := 1; k < n; k++ {
			c.intervalHours = append(c.intervalHours, times[k].Sub(times[k-1]).Hours())
		}
	}

	if namesChanges > 0 {
		c.namesChanged.Servers++
		c.namesChanged.Changes += namesChanges
	}
	if surfaceChanges > 0 {
		c.surfaceOnly.Servers++
		c.surfaceOnly.Changes += surfaceChanges
		if namesChanges == 0 {
			c.namesNever.Servers++
			c.namesNever.Changes += surfaceChanges
		}
	}
}

// driftTally counts one drift window.
type driftTally struct {
	start                                      time.Time
	servers, any, addRemove, schema, desc, brk int
}

// add counts an eligible server's reads (at least one, none after Now) in the window.
func (d *driftTally) add(reads []Read) {
	if reads[0].At.After(d.start) || !reads[len(reads)-1].At.After(d.start) {
		return
	}
	d.servers++
	var any, addRemove, schema, desc, brk bool
	for i := firstAfter(reads, d.start); i < len(reads); i++ {
		ch := reads[i].Change
		if ch == nil {
			continue
		}
		any = true
		addRemove = addRemove || ch.ToolsAdded || ch.ToolsRemoved
		schema = schema || ch.SchemaChangedNamesSame
		desc = desc || ch.DescriptionOnly
		brk = brk || ch.Breaking
	}
	if any {
		d.any++
	}
	switch {
	case addRemove:
		d.addRemove++
	case schema:
		d.schema++
	case desc:
		d.desc++
	}
	if brk {
		d.brk++
	}
}

// firstAfter returns the index of the first read after t.
func firstAfter(reads []Read, t time.Time) int {
	return sort.Search(len(reads), func(i int) bool { return reads[i].At.After(t) })
}

// activity counts an eligible server's changed lists in the last drift window.
func (c *computer) activity(reads []Read) {
	start := c.drift[len(c.drift)-1].start
	k := firstAfter(reads, start)
	if k == len(reads) {
		return
	}
	c.activityServers++
	clear(c.seenSurfaces)
	lists := 0
	for i := 1; i < len(reads); i++ {
		prev, cur := &reads[i-1], &reads[i]
		if cur.Surface == prev.Surface {
			if i >= k && cur.Change != nil {
				lists++ // inconsistent input: counted, but never a return
			}
			continue
		}
		// As in toolsets: every read before the first surface change had prev's
		// surface, so the set holds the surfaces of all reads before i.
		if len(c.seenSurfaces) == 0 {
			if c.seenSurfaces == nil {
				c.seenSurfaces = map[string]struct{}{}
			}
			c.seenSurfaces[prev.Surface] = struct{}{}
		}
		if i >= k && cur.Change != nil {
			lists++
			if _, ok := c.seenSurfaces[cur.Surface]; ok && cur.Surface != "" {
				c.activityReturns++
			}
		}
		c.seenSurfaces[cur.Surface] = struct{}{}
	}
	if lists > 0 {
		c.activityChanged++
		c.activityLists += lists
	}
	if lists > 10 {
		c.activityOverTen++
		c.activityTenLists += lists
	}
}

// latest adds a server's latest round and uptime days to the seed 003 tables.
func (c *computer) latest(s *Server) {
	c.dataset.Endpoints++
	l := s.Latest
	if l == nil || l.At.After(c.now) || l.At.Before(c.now.Add(-7*day)) {
		return
	}
	c.dataset.WithRecentRound++
	c.login.add(l)
	group := l.Category
	switch l.Category {
	case SignedFull:
		c.dataset.SignedFull.Count++
	case SignedAuthRequired:
		c.dataset.SignedAuthRequired.Count++
	case Unsigned:
		c.dataset.Unsigned.Count++
		switch l.UnsignedReason {
		case NoHandshake:
			c.dataset.NoHandshake++
		case NoTools:
			c.dataset.NoTools++
		case Blocked:
			c.dataset.Blocked++
		default:
			c.dataset.OtherReason++
		}
	default:
		c.dataset.OtherCategory.Count++
		group = GroupOther
	}

	if v := l.ProtocolVersion; v != "" {
		c.protocol.Servers++
		if slices.Contains(c.opt.KnownVersions, v) {
			c.versions[v]++
		} else {
			c.versions[OtherVersion]++
		}
		key := [2]string{l.HandshakeMethod, l.ProposedVersion}
		row := c.paths[key]
		if row == nil {
			row = &PathRow{Method: l.HandshakeMethod, Proposed: l.ProposedVersion}
			c.paths[key] = row
		}
		row.Answered++
		switch {
		case l.ProposedVersion == "":
			// Stored before the path was recorded: nothing to compare the answer with.
		case v == l.ProposedVersion:
			row.Same++
		case !isDate(v):
			row.Unrecognized++
		case v < l.ProposedVersion:
			row.Older++
			c.olderVersions[v]++
		default:
			row.Newer++
		}
	} else {
		c.protocol.NoVersion++
		switch {
		case l.Category == Unsigned && l.UnsignedReason == Blocked:
			c.protocol.Blocked++
		case l.AuthRequired:
			c.protocol.AuthRequired++
		case l.Category == Unsigned && l.UnsignedReason == NoHandshake:
			c.protocol.NoHandshake++
		default:
			c.protocol.Other++
		}
	}

	online, counted := 0, 0
	prevDay := ""
	for _, d := range s.Days {
		if d.Day < c.opt.UptimeFrom || d.Day > c.opt.UptimeTo || d.Day == prevDay || !isDate(d.Day) {
			continue
		}
		prevDay = d.Day
		switch d.Status {
		case Online:
			online++
			counted++
		case Offline:
			counted++
		}
	}
	if counted < c.opt.MinUptimeDays || counted == 0 {
		c.tooFewDays++
		return
	}
	pct := roundPercent(online, counted, 0)
	for _, g := range []string{group, GroupAll} {
		row := c.uptime[g]
		if row == nil {
			row = &UptimeRow{Group: g}
			c.uptime[g] = row
		}
		row.Servers++
		switch uptimeBin(pct) {
		case 0:
			row.Pct100.Count++
		case 1:
			row.Pct95To99++
		case 2:
			row.Pct80To94++
		case 3:
			row.Pct50To79++
		default:
			row.Below50++
		}
	}
}

// report turns the tallies into the Report.
func (c *computer) report() *Report {
	r := &Report{Now: c.now, Scope: c.scope}

	r.Summary = Summary{
		ReadTwice:            c.scope.ReadTwice,
		Changed:              part(c.changedServers, c.scope.ReadTwice),
		Changes:              c.changes,
		NamesAdded:           c.namesAdded,
		NamesRemoved:         c.namesRemoved,
		SingleNameChanges:    c.singleName,
		MedianNamesPerChange: quantile(c.namesPerChange, 0.5),
		EndedMore:            c.endedMore,
		EndedFewer:           c.endedFewer,
		EndedSame:            c.endedSame,
		ReturnsToEarlier:     c.returns,
		MedianObservedDays:   quantile(c.observedDays, 0.5),
		MaxObservedDays:      quantile(c.observedDays, 1),
	}
	r.FirstDays = make([]FirstDays, len(firstDays))
	for k, d := range firstDays {
		r.FirstDays[k] = FirstDays{Days: d, Servers: c.firstObserved[k], Changed: part(c.firstChanged[k], c.firstObserved[k])}
	}
	observed := days(c.observedTotal)
	r.ChangesPerServer = ChangesPerServer{
		Servers: c.scope.ReadTwice,
		Zero:    c.hist[0], One: c.hist[1], Two: c.hist[2],
		ThreeToFive: c.hist[3], SixToTen: c.hist[4], OverTen: c.hist[5],
		Frequent:        part(c.frequent, c.scope.ReadTwice),
		FrequentChanges: part(c.frequentChanges, c.changes),
		MaxChanges:      c.maxChanges,
		ObservedDays:    observed,
	}
	if c.changes > 0 {
		r.ChangesPerServer.DaysPerChange = observed / float64(c.changes)
	}
	r.ChangeTypes = ChangeTypes{
		Changes:        c.changes,
		OnlyAdded:      part(c.onlyAdded, c.changes),
		OnlyRemoved:    part(c.onlyRemoved, c.changes),
		Both:           part(c.both, c.changes),
		DuplicatesOnly: part(c.duplicatesOnly, c.changes),
		WithRemoved:    part(c.onlyRemoved+c.both, c.changes),
	}
	r.ByToolCount = make([]ToolCountRow, len(toolBins))
	for k, b := range toolBins {
		r.ByToolCount[k] = ToolCountRow{MinTools: b[0], MaxTools: b[1], Servers: c.binServers[k], Changed: part(c.binChanged[k], c.binServers[k])}
	}
	within := 0
	for _, h := range c.intervalHours {
		if h <= 12 {
			within++
		}
	}
	r.Intervals = Intervals{
		Servers:            c.intervalServers,
		Intervals:          len(c.intervalHours),
		MedianHours:        quantile(c.intervalHours, 0.5),
		LowerQuartileHours: quantile(c.intervalHours, 0.25),
		UpperQuartileHours: quantile(c.intervalHours, 0.75),
		Within12h:          part(within, len(c.intervalHours)),
	}
	r.NamesVsSurface = NamesVsSurface{NamesChanged: c.namesChanged, NamesNeverChanged: c.namesNever, SurfaceOnly: c.surfaceOnly}

	ds := c.dataset
	for _, p := range []*Part{&ds.SignedFull, &ds.SignedAuthRequired, &ds.Unsigned, &ds.OtherCategory} {
		*p = part(p.Count, ds.WithRecentRound)
	}
	r.Dataset = ds

	r.Drift = make([]DriftWindow, len(driftDays))
	for k, d := range c.drift {
		r.Drift[k] = DriftWindow{
			Days: driftDays[k], From: d.start, To: c.now, Servers: d.servers,
			AnyChange:              part(d.any, d.servers),
			ToolsAddedOrRemoved:    part(d.addRemove, d.servers),
			SchemaChangedNamesSame: part(d.schema, d.servers),
			DescriptionOnly:        part(d.desc, d.servers),
			Breaking:               part(d.brk, d.servers),
		}
	}
	r.DriftActivity = DriftActivity{
		Days: driftDays[len(driftDays)-1], From: c.drift[len(c.drift)-1].start, To: c.now,
		ServersRead:      c.activityServers,
		ServersChanged:   c.activityChanged,
		ChangedLists:     c.activityLists,
		ServersOverTen:   c.activityOverTen,
		OverTenLists:     part(c.activityTenLists, c.activityLists),
		ReturnsToEarlier: c.activityReturns,
	}

	r.ToolChanges = c.tools.report(driftDays[len(driftDays)-1], c.now)
	r.DailyChanges = c.daily.report()

	pv := c.protocol
	pv.Known = slices.Clone(c.opt.KnownVersions)
	pv.Versions = make([]VersionCount, 0, len(c.versions))
	for v, n := range c.versions {
		pv.Versions = append(pv.Versions, VersionCount{Version: v, Part: part(n, pv.Servers)})
	}
	slices.SortFunc(pv.Versions, func(a, b VersionCount) int {
		if (a.Version == OtherVersion) != (b.Version == OtherVersion) {
			if a.Version == OtherVersion {
				return 1
			}
			return -1
		}
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(b.Version, a.Version))
	})
	r.ProtocolVersions = pv

	hp := HandshakePaths{Paths: make([]PathRow, 0, len(c.paths))}
	for _, row := range c.paths {
		hp.Paths = append(hp.Paths, *row)
		hp.Total.Answered += row.Answered
		hp.Total.Same += row.Same
		hp.Total.Older += row.Older
		hp.Total.Newer += row.Newer
		hp.Total.Unrecognized += row.Unrecognized
	}
	slices.SortFunc(hp.Paths, func(a, b PathRow) int {
		return cmp.Or(cmp.Compare(methodRank(a.Method), methodRank(b.Method)),
			cmp.Compare(a.Method, b.Method), cmp.Compare(b.Proposed, a.Proposed))
	})
	for v, n := range c.olderVersions {
		if n > hp.MostCommonOlderCount || n == hp.MostCommonOlderCount && v > hp.MostCommonOlder {
			hp.MostCommonOlder, hp.MostCommonOlderCount = v, n
		}
	}
	r.HandshakePaths = hp
	r.Login = c.login.report()
	r.Series = c.series.report()

	r.Uptime = Uptime{From: c.opt.UptimeFrom, To: c.opt.UptimeTo, MinDays: c.opt.MinUptimeDays, TooFewDays: c.tooFewDays}
	r.Uptime.Groups = make([]UptimeRow, 0, 5)
	for _, g := range []string{SignedFull, SignedAuthRequired, Unsigned, GroupOther, GroupAll} {
		row := c.uptime[g]
		if row == nil {
			if g == GroupOther {
				continue
			}
			row = &UptimeRow{Group: g}
		}
		row.Pct100 = part(row.Pct100.Count, row.Servers)
		r.Uptime.Groups = append(r.Uptime.Groups, *row)
	}
	return r
}

// methodRank orders the handshake paths as the probe tries them.
func methodRank(m string) int {
	switch m {
	case MethodDiscover:
		return 0
	case MethodInitialize:
		return 1
	}
	return 2
}

// part returns n and its share of total.
func part(n, total int) Part {
	if total == 0 {
		return Part{Count: n}
	}
	return Part{Count: n, Share: float64(n) / float64(total)}
}

// days converts a duration to days.
func days(d time.Duration) float64 { return d.Hours() / 24 }

// quantile returns the p-quantile of xs by linear interpolation between closest ranks
// (R's type 7: the median of an even count is the mean of the middle two); 0 for no
// values. It sorts xs.
func quantile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	h := float64(len(xs)-1) * p
	lo := int(math.Floor(h))
	if lo >= len(xs)-1 {
		return xs[len(xs)-1]
	}
	return xs[lo] + (h-float64(lo))*(xs[lo+1]-xs[lo])
}

// roundPercent returns n/total as a percentage rounded half up to decimals places,
// scaled by 10^decimals (total > 0).
func roundPercent(n, total, decimals int) int {
	scale := 100
	for range decimals {
		scale *= 10
	}
	return (2*scale*n + total) / (2 * total)
}

// diffNames counts the distinct names only in cur (added) and only in prev (removed).
func diffNames(prev, cur []string) (added, removed int) {
	prev, cur = sortedNames(prev), sortedNames(cur)
	i, j := 0, 0
	for i < len(prev) || j < len(cur) {
		switch {
		case j == len(cur) || i < len(prev) && prev[i] < cur[j]:
			removed++
			i = skip(prev, i)
		case i == len(prev) || cur[j] < prev[i]:
			added++
			j = skip(cur, j)
		default:
			i, j = skip(prev, i), skip(cur, j)
		}
	}
	return added, removed
}

// skip returns the index after the run of names equal to names[i].
func skip(names []string, i int) int {
	v := names[i]
	for i < len(names) && names[i] == v {
		i++
	}
	return i
}

// sortedNames returns names sorted, copying them only when they are not.
func sortedNames(names []string) []string {
	if slices.IsSorted(names) {
		return names
	}
	names = slices.Clone(names)
	slices.Sort(names)
	return names
}
