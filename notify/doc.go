// Package notify is following entries and the change e-mails of seed 000 ("Einem
// Eintrag folgen"): follow and unfollow (at most MaxFollows entries per account), the
// Followed page, the e-mail settings, planning e-mails into the store's outbox,
// composing each one, delivering them exactly once in effect, and unsubscribing
// without signing in.
//
// # The e-mail rules
//
// They are pure functions (rules.go), tested with a fake clock:
//
//   - One e-mail covers every followed entry that changed since the last e-mail
//     (store.NotifySettings.CoveredSeq, in commit order), names each entry and sums
//     up what changed in counts and fixed words ("2 tools added, 1 removed"; Summary).
//     It never holds a tool's name, description or any other text of the server;
//     entry names are the listing's, as plain text.
//   - About one entry it links that entry's newest change in its history
//     (BASE/s/SLUG/history#ch-N); about several, or about a deleted entry, the Followed
//     page (BASE/followed).
//   - Only changes recorded after the follow began, none older than MaxAge (7 days)
//     when planned and when sent, no hidden change and no baseline.
//   - A version change alone only when the number increases by semantic-version
//     precedence: 1.2.0 → 1.3.0 is told; 1.2.0 → 1.2.0+build2 (a build suffix) and a
//     step back are not.
//   - Changes that cancel out before the e-mail goes are not sent: the net effect of
//     an entry's changes is computed from the state before the first and after the
//     last (the surface and instructions fingerprints of the rounds they compare, the
//     version the history follows now, an operator edit's text before and after).
//     When the tool list did not come back as a whole, each tool's parts are netted
//     the same way: a title or description back to its first text, a parameter added
//     and removed again, a hint flipped back are not told beside what else changed
//     (a parameter removed and added back counts as an input schema change; parts a
//     change records without their states, such as parameter descriptions, count once
//     they changed).
//   - Modes: hourly (as soon as something changes, at most one e-mail an hour; the
//     default), daily (one summary a day, at Config.DailyHour UTC, covering the time
//     since the last one), off. Deleted followed entries are told once, in the next
//     e-mail, and listed on the Followed page.
//
// # Planning
//
// Every minute a River job (PlanArgs) walks the changes in commit order. Its cursor is
// the ledger's sequence number, which follows commit order without gaps: a step covers
// the changes numbered up to the highest number given when it starts, and each account
// keeps the number its last e-mail covered (store.NotifySettings.CoveredSeq), so a
// change committed late, whatever its recorded time, is in the account's next e-mail.
// From the changes of the last 7 days (by recorded time), read a page at a time, the
// step works out per entry the windows of starts — (covered number, the later of the
// follow's start and 7 days ago) — for which its pending changes are worth telling
// (Windows), and the store writes in one statement an outbox row for each due account
// with a follow in a window (store.PlanEmails): the row keeps its numbers, not the
// text. Planning is one step at a time (PostgreSQL: an advisory lock), and an account
// with an e-mail pending or sending gets no new one until it is finished (its changes
// wait, nothing is lost). The daily summaries are planned Config.Settle after their
// time, covering the changes committed until the first one recorded after it. The
// e-mail is composed from the store when it is sent (Compose), by the same rules and
// the 7-day rule at that time, so a change hidden, or grown too old, meanwhile is left
// out. Undoing "turn off" on the unsubscribe page keeps the window, so the changes of
// the gap are told as if e-mails had never been off.
//
// # Delivery
//
// A River job (DeliverArgs) claims, composes, sends and marks rows; see deliver.go for
// why that is exactly once in effect, and for the retries.
//
// # Unsubscribing
//
// Every e-mail links BASE/unsubscribe/TOKEN, a page of buttons (opening it changes
// nothing), with a signed token bound to the account, the action and the entry
// (token.go has the format); after a button the page offers its undo. The e-mail's
// List-Unsubscribe header names the same page with a token that turns change e-mails
// off, and List-Unsubscribe-Post makes it RFC 8058's one click (OneClick): e-mails off,
// follows kept.
package notify
