// Package logaudit is the monitor of a Probity transparency log: it reads the whole log
// from the outside, as anyone can, and checks everything the log promises. Run audits
// one log and returns a Report; `probity log audit SOURCE` is its command, and
// service-level tests end by calling Run on the log the service wrote, as Sunlight's
// harness re-verifies its log after every step.
//
// # What it reads
//
// The log is C2SP tlog-tiles as Tessera's POSIX driver writes it (package translog):
// checkpoint, hash tiles tile/L/N[.p/W] and entry bundles tile/entries/N[.p/W], read
// from a directory or from a Probity site's /log/. The key document is the site's
// /.well-known/probity-keys.json, or for a directory Config.KeysFile or
// DATA-DIR/keys/keys.json beside DATA-DIR/log. Every read is bounded (a checkpoint
// 1 MiB, a tile 8 KiB, a bundle 256 entries of at most 65,535 bytes); HTTP requests have
// a timeout. A partial tile the log has since completed is read from the full one.
//
// # What it checks
//
//  1. The checkpoint: signed by the log key (Config.LogKey, else the key document's
//     log.key), its origin the key's name and the key document's log.origin; the
//     trusted witnesses' tlog-cosignature/v1 cosignatures verify, at least
//     Config.MinWitnesses of them (verifier.OpenCheckpoint's rules).
//  2. The tree: every entry bundle and hash tile the checkpoint covers is served and
//     well formed; every hash in every tile, at every level, equals the one
//     recomputed from the entries (RFC 6962); the root equals the checkpoint's. A
//     bundle read a second time (the envelopes before the first keys record, those a
//     tombstone names) must hold the same entries (entries_changed).
//  3. The leaves: each is a probity.dev/log-leaf/v1 leaf (attest.ParseLeaf), and leaf
//     i carries sequence number i+1, so a record dropped, reordered or duplicated shows
//     even in a log the operator re-signed.
//  4. The key history: the keys records, in log order, form a valid history
//     (verifier.KeyHistory); the served key document is its latest version, and the
//     log key the checkpoint verified with is the one both list (log_key_mismatch). A
//     version's issuedAt is not after the earliest trusted cosignature on the
//     checkpoint (postdated); it is not held to the backdate bound, since a version
//     made while the service runs is logged when the service next starts.
//  5. Every envelope verifies (verifier.Verify) under the key document in force at its
//     index (the latest version logged before it; version 1 for records logged before
//     the history began), its predicate type is its leaf's kind, and its time is not
//     after the earliest trusted cosignature on the checkpoint (postdated) nor more
//     than Config.MaxBackdate before the latest on the saved checkpoint that did not
//     hold it (backdated). A key the latest document (the served one; without one,
//     the latest logged version) revokes at R vouches for a record
//     only if a trusted witness saw the record before R: the audit places each record
//     with the checkpoints it knows, fails those it shows witnessed only after R
//     (logged_after_revocation), and counts those it cannot place (RevokedUnproven).
//  6. Tombstones: each is canonical and names earlier records of the kind and payload
//     digest the log holds for them (a logged envelope, or a removed leaf).
//  7. Withdrawals: each withdrawal record (an operator's withdrawal or restoration of
//     an entry's Verified) names an earlier supply record by its sequence number and
//     the SHA-256 of its payload (withdrawal_supply_mismatch), unless that record was
//     removed with its entry.
//  8. The saved checkpoint (Config.StateFile, keyed by origin): the log is not smaller
//     (log_shrunk), not another tree of the same size (split_view), and its first
//     saved-size leaves have the saved root (history_rewritten); the log key is the
//     one saved, and a source that served a log of another origin last time fails
//     (log_key_changed) rather than pass as a first audit. The new checkpoint is saved only when nothing failed.
//
// Every finding is a Failure with a typed Reason and the log index concerned (-1 for
// the log as a whole). The error Run returns is for what kept the audit from running.
//
// # Performance
//
// Bundles are fetched and hashed ahead in parallel, leaves are checked in order, and
// envelopes are verified on Config.Workers cores; memory grows with the leaves read
// (a byte per leaf) and the bundles in flight, not with the size a checkpoint claims.
// A 200,000-record log from a local directory is audited in well under a minute on two
// cores (BenchmarkAudit200k); signature verification is nearly all of the time.
package logaudit
