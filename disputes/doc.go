// Package disputes lets an entry's maintainers contest a finding in public and
// Probity's operators decide, each step a signed record of the ledger and so of the
// transparency log (attest's dispute/v1 and outcome/v1).
//
// A maintainer (Maintainers, the claims service) contests one check result of one of
// the entry's signed rounds with a statement (plain text, at most 2,000 characters) and
// an optional https evidence URL: Contest checks the round's own signed statement for
// the check and its status, signs a dispute naming the round's ledger record, and
// stores it with its record in one transaction. The round, the finding, is never
// altered. At most one dispute per entry, round and check is open; an account opens at
// most Config.DailyLimit disputes a day. The dispute never names the maintainer: the
// account is kept privately for the rate limit and abuse only.
//
// An operator decides a dispute (Decide): upheld, rejected, or corrected in a check
// suite version, with a reason; the outcome is signed, names the dispute's record, and
// closes it. A dispute has one outcome. The caller checks the operator role (the
// console, package web); the outcome never names the operator.
//
// OfEntry lists an entry's disputes with their outcomes, newest first (public); Queue
// the open ones, oldest first (the operator's console).
package disputes
