// Package stats computes Probity's published statistics from plain data: how often
// toolsets change (seed 001) and the dataset, drift, protocol-version, handshake-path,
// login and uptime tables of the monthly report (seed 003). It does no I/O: the caller
// loads each entry's history into a [Server], calls [Compute] once, and renders the
// [Report] as Markdown ([Report.Markdown]) or encodes it as JSON (every field has a
// camelCase tag).
//
// # Common rules
//
// Options.Now is the cut-off. Reads after it are ignored everywhere, and a Latest round
// after it counts as no round. Windows of D days end at Now and start at Now − D×24 h;
// a time equal to the start is outside the window ("at or before the start"), a time
// equal to Now is inside. Shares are fractions of the row's or table's total, 0 when
// the total is 0; Markdown rounds them half up, to an integer percent in the toolset
// tables (as seed 001 prints them) and to one decimal in the seed 003 tables.
//
// # What drift compares
//
// Seeds 001 and 003 digest each tool's name, description and input schema; the drift
// tables (NamesVsSurface, Drift, DriftActivity, ToolChanges) compare that digest, not
// the whole surface Probity fingerprints and keeps: a change only in a tool's title,
// annotations or output schema, or in the instructions, is no change there. Read.Surface
// carries the digest and Read.Change the diff of the two reduced surfaces
// (history.LoadStats computes both, once per distinct stored surface). Toolsets (names
// with repeats) are compared as they are. Servers with a paginated list are left out as
// in the seeds, whose probe read only the first page; Probity reads every page.
//
// # How often toolsets change (seed 001)
//
// A read is a successful credential-free tools/list answer (a Read). A server's toolset
// is its sorted list of tool names; a change is two adjacent reads of the same server
// with different toolsets, and the first read is not a change. A server's observation
// window runs from its first read to its last. Claimed servers (read more often than
// every 12 h) and servers that ever returned a paginated list are excluded; a server
// both claimed and paginated is counted as claimed. "Read at least twice" means two
// reads or more.
//
//   - Summary: servers read at least twice, those with at least one change (share of
//     them), changes, new and disappeared names (names present on only one side of a
//     change, each distinct name once), changes touching exactly one name, the median
//     number of names a change touches, changed servers whose last read has more,
//     fewer or as many tools as their first, and changes back to a toolset the server
//     had before (other than the one immediately before, which a change never equals).
//   - FirstDays (N = 7, 14, 21): servers whose observation window is at least N days,
//     and those with a change read no later than first read + N days.
//   - ChangesPerServer: servers read at least twice by number of changes (0, 1, 2, 3–5,
//     6–10, more than 10); servers with three or more changes and their share of the
//     servers and of the changes; the largest number of changes; the sum of all
//     observation windows in days divided by the number of changes.
//   - ChangeTypes: changes that only added names, only removed names, did both, or
//     neither (the lists differ only in repeated names).
//   - ByToolCount: servers observed at least 14 days, by tool count at their first read
//     (0–5, 6–10, 11–20, 21–50, 51+), and those changed within their first 14 days.
//   - Intervals: for servers with at least two changes, the times between their
//     adjacent changes; median and quartiles by linear interpolation between closest
//     ranks (R's type 7), and the share of intervals of at most 12 hours.
//   - DailyChanges: per UTC day of the 21 full days before Now's day (as seed 001's
//     17 September to 7 October), the reads of the eligible servers and those whose
//     toolset differs from the previous read (which may lie before the day), per 1,000
//     reads; the lowest and highest rate over the days with reads (the first day
//     reaching each), and per day the most changed reads in one UTC hour. The check that
//     no change came from repeated names alone is ChangeTypes.DuplicatesOnly, stated by
//     ChangeTypes.DuplicateCheck.
//   - NamesVsSurface: only adjacent reads that both carry a surface digest are
//     compared. Servers whose names changed in such a pair, and those changes; servers
//     whose names never changed in such a pair but whose surface did (descriptions or
//     schemas), and those changes; and, over every server, pairs with the same names
//     and a different surface.
//
// # Monthly report (seed 003)
//
//   - Dataset: every entry's Latest round if it lies within the 7 days before Now (both
//     ends included): signed with full coverage, signed auth_required, unsigned (by
//     reason: no_handshake, no_tools, blocked, other), or another category.
//   - Drift (7 and 30 days): servers neither claimed nor paginated that had a read at or
//     before the window start and at least one read inside the window. A server counts
//     as changed when a read inside the window carries a Change (the comparison with
//     the previous read, even one before the window). The three middle columns are
//     exclusive: a server goes to the first that matches over all its changes in the
//     window — tools added or removed, then schema changed with the same names, then
//     description only. Potentially breaking: any change in the window marked Breaking.
//   - DriftActivity (30 days): every server neither claimed nor paginated with a read
//     inside the window, its changed lists there (reads carrying a Change), servers
//     with more than 10 of them, and changed lists whose surface equals one the server
//     had at any earlier read.
//   - ToolChanges (seed 003's per-tool tallies): over DriftActivity's servers and
//     window, the sums of the changed lists' ToolCounts, each with the servers it came
//     from: tools added and removed, tool descriptions changed other than in dates (of
//     them, those differing only in white space, then only in numbers: ClassifyText),
//     tools whose parameter descriptions changed, input schemas changed, and parameters
//     whose declared type changed in a way that may reject a value it used to accept
//     (the diff's param_type_changed), number → integer apart; and the changed lists
//     that changed only descriptions.
//   - ProtocolVersions: Dataset entries whose Latest round completed the handshake,
//     by version (versions outside Options.KnownVersions are "other", listed last),
//     sorted by count descending and then version descending; entries without a
//     version by cause (blocked, authentication required, no handshake, other).
//   - HandshakePaths: the same entries per handshake method and the version Probity
//     proposed on it: answered with the proposed version, an older one, a newer one, or
//     one that is not a YYYY-MM-DD date (dates compare as strings). A round stored
//     before the method was recorded (migration 0005) is counted on a path of its own,
//     NotRecordedPath, as answered only: there is no proposed version to compare with.
//   - Login: Dataset entries whose latest round answered a request with HTTP 401, by
//     where the first 401 came (Latest.Login): at the handshake or tools/list (by the
//     round's category: signed auth_required, unsigned for want of a tool list,
//     blocked, another), only to the call of the nonexistent tool (and of those, signed
//     with full coverage), or only to another request; and by what the 401s'
//     WWW-Authenticate headers held: a challenge naming an RFC 9728 resource_metadata
//     URL (with the auth_metadata check's verdict: consistent, scope contradiction,
//     HTTP error, or another reason key), a challenge without one, a header that did
//     not parse, or none. Rounds without login facts (stored before migration 0005)
//     are counted as not recorded only.
//   - Uptime: Dataset entries with at least Options.MinUptimeDays counted days (online
//     or offline) between Options.UptimeFrom and UptimeTo (UTC days, both included;
//     by default the 29 full days before Now's day). The rate online/counted is rounded
//     half up to an integer percent first, then binned: 100, 95–99, 80–94, 50–79,
//     below 50. Rows by the category of the Latest round, and all.
//
// # Series (the statistics page's charts)
//
// Series cover the SeriesDays UTC days up to and including the cut-off's day (today,
// on a site: a new install's first round shows at once), over every server given,
// claimed and paginated ones too (the seed rules are the tables'). Per day, from the
// first with a probe or a change to the cut-off's day: the changes recorded that day
// (Server.Changes: the history's confirmed changes, visible and not baselines), the
// servers probed (a round that day, Server.Probes) and of them those with such a
// change that day, and the probed servers by the protocol version of their newest
// round that day that completed the handshake (the MaxSeriesVersions versions of the
// most server-days by name, the rest as other). Uptime: the servers with at least
// one counted day in the window by their rate of online to counted days, rounded and
// binned as in the uptime table, with no minimum of days. Nothing after the cut-off
// counts. Series.Tables gives each chart's numbers as the page and Markdown show them.
package stats
