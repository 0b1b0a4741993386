// Package claims lets a signed-in account claim an entry by proving that it controls
// one of the entry's parts, re-proves every claim on a schedule, and lapses a claim
// whose proof is gone (issue 18; seed 000's "Server-Betreiber": an entry may have
// several maintainers, and the site never shows who they are). It owns the rule of who
// maintains an entry: Service.IsMaintainer.
//
// # Tokens
//
// A claim starts with a token: "probity-claim-" and 43 characters of base64url (32
// random bytes), made by Start for one account, one entry, one method and one part of
// the entry (its locator), valid for Config.TokenLifetime (24 h) and used once. The
// store keeps its SHA-256 only; the person sees it once, with the instructions. Check
// looks for the token where the method says, and when it is there the token is used
// and the claim made (store.ProveClaim, one transaction); when it is not, the token
// stays unused and Check says why, so the person can fix the record and check again.
// A token of another account is as unknown as a token never made.
//
// Check is throttled, because every check makes Probity fetch from a server it does
// not run, and GitHub's quota is the site's: one check of a token per CheckEvery (10
// s) and ChecksPerHour (30) checks of an account in any hour; past that it fetches
// nothing and returns a *TooSoon with the time to wait (the site answers 429 with
// Retry-After). The throttle is in memory: a restart forgets it.
//
// # Which parts count
//
// A claim is made, and keeps counting, only on a part that identifies the entry's
// server reliably:
//
//   - the entry's own locator (its primary part, the one its rounds read), by the
//     methods of its kind;
//   - a remote, npm package or PyPI project that the entry's listing names now
//     (store.EntryListing's parts): the official registry verifies package ownership
//     (npm's mcpName, PyPI's mcp-name line), and a remote is proven on its own origin
//     or host, the very endpoint Probity reads.
//
// A repository is a part that counts only as the entry's own locator: the registry
// does not verify a listing's repository field (any listing can name any
// repository), and one repository often holds many servers (a monorepo), so it does
// not say which server is whose. OCI images, NuGet packages and MCP bundles have no
// method. When a sync removes a part from the entry, a claim on it stops counting at
// once (IsMaintainer) and lapses at its next re-check ("part removed"); a token
// started on it is refused by Check (ErrMethod).
//
// IsMaintainer(account, entry) is true while the account holds a live claim on the
// entry on a part that counts now; store.MaintainsEntry keeps this rule in one SQL
// query, and every maintainer route of the site (web.Maintainers) asks it.
//
// # Methods
//
// Every fetch goes through the egress guard (checks/probe/egress), reads at most
// Config.MaxBody (64 KiB) and takes at most Config.Timeout (10 s):
//
//   - MethodWellKnown, for an https remote endpoint: the token in the body of
//     https://ORIGIN/.well-known/probity-claim (WellKnownPath) on the endpoint's origin
//     (scheme, host and port), answered 200. An http endpoint is never proven this way
//     (anyone on the path could serve the token over plain text): it takes DNS TXT.
//     At most 3 redirects, each on the same origin (scheme, host and port): a
//     redirect to another origin is refused, since it would let that origin's owner
//     prove this one.
//   - MethodDNS, for a remote endpoint: the token as a TXT record of
//     _probity-claim.HOST (DNSPrefix), HOST the endpoint's host name (an IP address has
//     none), asked fully qualified (with the final dot) so that no search domain is
//     appended. The query goes to Config.DNSServer (host:port) when set, else to the
//     system's resolver; the resolver is the operator's, so the guard does not apply
//     to it, only to names: an IP literal or a malformed name is refused.
//   - MethodNPM and MethodPyPI, for a package: the token in the newest published
//     version's README, as a line such as "probity-claim: TOKEN" or anywhere in the
//     text, read by the supply sources (checks/supply) with a client that always
//     revalidates, so a version published a minute ago counts. npm: the packument's
//     readme, which the registry fills from the most recently published version
//     (normally the dist-tags.latest one; a prerelease published later replaces it
//     until the next release); PyPI: the project description of info.version.
//   - MethodRepoFile, for a GitHub repository that is the entry's locator: the token
//     in the file .well-known/probity-claim (RepoFilePath) on the repository's default
//     branch, read through GitHub's contents API (with Config.GitHubToken when set).
//
// MethodGitHubPermission (the admin or maintain role on the repository) is withdrawn.
// It asked GitHub's collaborator permission API with the site's token, which GitHub
// answers only to callers with push access to the repository; asking with the
// person's own OAuth token would need a GitHub round-trip at every check, and a role
// claim could then never be re-checked without the person. No claim is made by it;
// a claim made by it earlier does not count (IsMaintainer) and lapses at its next
// re-check.
//
// A token is found when one of the first 64 substrings of the fetched text that look
// like a token hashes to the claim's token: the other text, and other tokens (another
// maintainer's), are ignored.
//
// # Answers
//
// Every check ends in one of four outcomes (*NotProven says which):
//
//   - proven: the token is there;
//   - gone (NotProven.Gone), a definite answer that the proof is not there: a 404 or
//     410 of the file, a 200 whose body lacks the token, NXDOMAIN or a TXT record set
//     without the token, a package whose README lacks it or that is gone;
//   - throttled (NotProven.Throttled): the source asked Probity to wait (a 429, a
//     Retry-After, a 401 or 403 with X-RateLimit-Remaining: 0);
//   - no answer (NotProven.Unanswered, or any other NotProven): a timeout, a refused
//     connection, a 5xx, a 408, a 401 or 403, a SERVFAIL, a redirect elsewhere, an
//     address the guard refuses. None of these says whether the proof is there.
//
// # Re-checks and the schedule
//
// Every claim has its own next check (store.Claim.NextCheckAt): RecheckInterval (a
// day) ± a twelfth of it after it was proven, so claims made together spread out.
// Recheck, a River periodic job (RecheckArgs) every Config.RecheckEvery (5 min), reads
// at most RecheckBatch (32) due claims, the most overdue first, and proves them again
// RecheckConcurrency (4) at once, each within its own Config.Timeout, with the token
// the claim was made with. The job's timeout fits a whole batch; a claim cut off by
// the job's own end (its deadline, a shutdown) records nothing and stays due. Outcomes:
//
//   - proven: next check in a day or so; the runs of no answer and of gone end;
//   - throttled: tried again in an eighth of RecheckInterval (3 h); nothing else
//     changes, so the site's spent quota never counts against a claim;
//   - no answer: tried again in 3 h, so that a source that never answers does not sort
//     first again and starve the others; the claim lapses only when its source has not
//     answered for Config.MaxUnanswered (7 days), counted from the first check of an
//     unbroken run without an answer (store.Claim.UnansweredSince);
//   - gone: the first such answer is remembered (store.Claim.GoneSince) and the claim
//     checked again GoneFor (a day) later; it lapses only when the proof is gone again
//     on a check a day or more after the first, with no check between finding it. A
//     file missing for an hour (a deploy) does not lapse a claim.
//   - part removed, or a withdrawn method: the claim lapses at once.
//
// The entry is claimed while it has a live claim (the store's trigger owns
// entries.claimed; nothing else sets it). Whenever a claim is made or lapses, the
// entry's cadence due time is moved by Config.Schedule (rounds.Schedule.ClaimedDue): a
// newly claimed entry is read on the claimed cadence from now on, an unclaimed one
// returns to its cadence after its next read. The move is best effort: when it fails
// after the claim was stored, it is logged and the claim stands (the entry's next
// read moves it).
//
// # What is kept
//
// For a token: its SHA-256, account, entry, method, part and times; deleted a day
// after it expired or was used. For a claim: the account, entry, method, part, the
// token's SHA-256, a one-line proof (what was found where, never the token), when it
// was proven, checked and is next checked, and when and why it lapsed; kept until the
// account or the entry is deleted (a lapsed claim is made live again by a new proof of
// the same account, method and part). The site's privacy page says so.
package claims
