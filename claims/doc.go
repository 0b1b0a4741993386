// Package claims lets a signed-in account claim an entry by proving that it controls
// one of the entry's parts, re-proves every claim on a schedule, and lapses a claim
// whose proof is gone (issue 18; seed 000's "Server-Betreiber": an entry may have
// several maintainers, and the site never shows who they are).
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
// # Methods
//
// Every fetch goes through the egress guard (checks/probe/egress), reads at most
// Config.MaxBody (64 KiB) and takes at most Config.Timeout (10 s):
//
//   - MethodWellKnown, for a remote endpoint: the token in the body of
//     https://ORIGIN/.well-known/probity-claim (WellKnownPath) on the endpoint's origin
//     (scheme, host and port), answered 200; at most 3 redirects, never from https to
//     http.
//   - MethodDNS, for a remote endpoint: the token as a TXT record of
//     _probity-claim.HOST (DNSPrefix), HOST the endpoint's host name (an IP address has
//     none). The query goes to Config.DNSServer (host:port) when set, else to the
//     system's resolver; the resolver is the operator's, so the guard does not apply
//     to it, only to names: an IP literal or a malformed name is refused.
//   - MethodNPM and MethodPyPI, for a package: the token in the newest published
//     version's README (npm: the packument's readme, which is the dist-tags.latest
//     version's; PyPI: the project description of info.version), as a line such as
//     "probity-claim: TOKEN" or anywhere in the text, read by the supply sources
//     (checks/supply) with a client that always revalidates, so a version published a
//     minute ago counts.
//   - MethodRepoFile, for a GitHub repository: the token in the file
//     .well-known/probity-claim (RepoFilePath) on the repository's default branch,
//     read through GitHub's contents API.
//   - MethodGitHubPermission, for a GitHub repository: the account signed in with
//     GitHub, and GitHub's collaborator permission API says that user (by numeric id,
//     which a rename does not change) has the admin or maintain role on the
//     repository. It needs Config.GitHubToken, a token that may read the
//     repository's collaborators. Its token is not published; it only binds the check
//     to the account, entry and part, and is used once like the others.
//
// A token is found when one of the first 64 substrings of the fetched text that look
// like a token hashes to the claim's token: the other text, and other tokens (another
// maintainer's), are ignored.
//
// # Re-checks and the schedule
//
// Recheck, a River periodic job (RecheckArgs, every Config.RecheckInterval, a day by
// default), proves every live claim not checked for RecheckInterval again, with the
// token the claim was made with, and lapses it when the proof is gone (an answer that
// says so: a 404, a record or file without the token, a permission lost); a fetch that
// fails (a timeout, a 5xx, a refused connection) is no answer, and the claim stays
// live until a check answers. The entry is claimed while it has a live claim (the
// store's trigger owns entries.claimed). Whenever a claim is made or lapses, the
// entry's cadence due time is moved by Config.Schedule (rounds.Schedule.ClaimedDue): a
// newly claimed entry is read on the claimed cadence from now on, an unclaimed one
// returns to its cadence after its next read.
package claims
