// Package rounds is Probity's engine: it probes entries when they are due, runs the
// checks, signs what it may sign, and stores each round durably.
//
// # A round
//
// A round is one probe of one entry for one due time. Runner.RunEntry does it in four
// steps, and only the last touches the database in a transaction:
//
//  1. StartAttempt records, in its own small transaction, that the probe is about to
//     start. If a round for the same entry and due time is already stored, the entry
//     is skipped: nothing is probed or signed twice for one due time.
//  2. The probe (checks/probe, through the egress guard) gathers an Observation. No
//     transaction is open and the signing key is not in use.
//  3. The checks run (checks.EvaluateRound), and a round that may be signed is turned
//     into an in-toto statement, canonicalized, checked once by the verifier's rules
//     (attest.Check, through checks.Evaluation.Statement) and signed with the Ed25519
//     key without a second check (full or auth_required coverage). Rounds the checks do not allow to sign are stored
//     unsigned with the reason: no_handshake, no_tools or blocked. The tool list is put
//     in canonical form once per round: the fingerprints the checks compute are the
//     ones the statement and the store get, with the surface document built in the
//     same pass.
//  4. store.SaveRound writes the round, its tool surface (content-addressed by the
//     surface fingerprint), the envelope, the results, the day's uptime and the
//     entry's next due times in one transaction. The stored round keeps, besides the
//     results, the facts seed 003's tables count: the handshake path (the method that
//     completed the handshake and the version proposed on it) and the login facts
//     (checks.Observation.Login: where the first 401 came and what its challenges
//     held; the auth_metadata check's reason key).
//
// Steps 3 and 4 of a list of tens of MB take a few times its size, so the rounds in
// them hold at most Config.ListBytes (64 MiB) of tool lists at once; the rounds of
// other lists wait after their probe (one list, however large, always proceeds). A
// round of 32 hostile entries, four of them with 9,000 tools (27 MB), so stays far
// under 512 MiB.
//
// A crash before step 4 commits leaves only the attempt record; the restarted worker
// probes again (attempt 2) and stores one round. A crash after it leaves a stored round
// that the restarted worker skips. So a round is stored and published at most once per
// entry and due time, and a round is marked signed exactly when its envelope is
// stored.
//
// # Due times
//
// Each entry has at most one due time per store.DueReason:
//
//   - cadence: every Schedule.Cadence (3 h, seed 000) for unclaimed entries,
//     Schedule.ClaimedCadence (15 min, seed 001's claimed servers) for claimed ones
//     (package claims makes an entry claimed and moves its round with
//     Schedule.ClaimedDue), or the entry's own cadence; the same for every kind. A remote entry gets a round; a
//     package entry a cheap read of its newest version (Runner.Watch, through the
//     Watcher), taken into the history at once under the version rules, its first
//     version being its baseline; a repository entry a cheap read of its MCP bundle
//     manifest, which makes a signed supply run only when the tools are news for the
//     history. The next due time is the last one plus the cadence, jittered by up to
//     ±10 % with a value derived from the entry and the due time (so a retried job
//     computes the same one); a read that ran late is rescheduled from now, so a
//     stopped service does not replay missed rounds.
//   - confirm: when a round's tools, instructions or server-reported version differ
//     from the previous round that had them, or a bundle manifest's tools differ from
//     the recorded ones (history.Processor.RecordManifest schedules it with the
//     state), a confirmation re-fetch at least one minute later (two hours when the
//     tool list became empty; the delays are the history's, history.Rules), so that
//     the history can record a change only when two fetches agree. A remote's
//     confirmation round schedules no further confirmation; a manifest's confirming
//     read that shows yet other tools does (it is a new candidate).
//   - status: once a day for every entry. A remote entry that already had a round on
//     that UTC day only moves on; otherwise it runs a round, so that every remote
//     entry has a counted uptime day even with a cadence longer than a day. A package
//     or repository entry runs its supply checks when its version or README changed.
//   - supply: the supply-chain checks, weekly.
//   - manual: `probity round` runs every entry now, as one Run that an interrupted
//     invocation resumes; it moves the entry's cadence due time on from the run.
//
// An unlisted entry (its registry listing deprecated or deleted, store.Entry.Listed
// false) keeps its due times but is not read: DueBefore leaves it out, and a job
// enqueued before it was unlisted only moves its due time on, as if it had read (a
// confirmation is dropped), so that the entry listed again gets jobs with new
// arguments. Listed again, its due times that have passed come due at once.
//
// An entry whose round was rate limited (429, or 503 with Retry-After) backs off: the
// next cadence round waits for the larger of the server's Retry-After and an
// exponential backoff (1 h, 2 h, 4 h, … after consecutive rate-limited rounds, at most
// Schedule.MaxBackoff), and its confirmation waits as long.
//
// # Uptime
//
// Each round is classified for uptime (see UptimeClass): answered (any HTTP answer,
// a 401 challenge included), no answer (DNS failure, connection failure, no complete
// response within the budget, a TLS failure, or HTTP 5xx on the handshake), or
// inconclusive (rate limited, or refused by Probity's own egress guard). The store
// keeps per UTC day: online when every round connected, offline when any round found
// no answer, not counted when only inconclusive rounds ran; an entry's rate is online
// days over counted days.
//
// # Scheduling
//
// Service runs River on the store's database (riverpgxv5 on PostgreSQL, riversqlite
// on SQLite). A periodic job, enqueued by River's elected leader only, reads the due
// times that have come and enqueues one probe job per (entry, due time), unique by
// those arguments; workers in any number of processes take them. Because the due times live in the store and move only in the
// transaction that stores the round, a lost job is enqueued again on the next tick and
// a duplicate is refused three times over: by River's unique jobs, by StartAttempt,
// and by the store's unique (entry, due time) constraint.
//
// A job whose process is killed (kill -9, a crash, a lost machine) stays marked
// running in River's table, and as a unique job it keeps the tick from enqueueing its
// due time again. River's leader rescues such jobs: ServiceConfig.RescueAfter (River's
// RescueStuckJobsAfter) is set just above the longest a live job runs, JobTimeout (2
// min) plus the Runner's SaveTimeout (30 s) plus 30 s, so 3 min, instead of River's
// default hour. The rescuer looks every 30 s and a killed leader's term lapses within
// 15 s, so the entries of a killed process are probed again (attempt 2, see above)
// within about four minutes of their rounds starting.
package rounds
