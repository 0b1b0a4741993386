// Package translog is Probity's transparency log: every number of the ledger (package
// store) becomes, in order and exactly once, the leaf of index seq-1 of a C2SP
// tlog-tiles log, whose checkpoints (C2SP tlog-checkpoint, signed notes) are signed with
// the log's own Ed25519 key and cosigned by witnesses (C2SP tlog-witness,
// tlog-cosignature). It is built on Tessera v1.0.4 and its POSIX driver.
//
// # Layout
//
// Config.Dir (the service uses DATA-DIR/log) IS the tlog-tiles layout, served read-only
// as it is at /log/:
//
//	checkpoint                   the latest published checkpoint, with its cosignatures
//	tile/L/N[.p/W]               hash tiles (N in x001/x234/067 groups; .p/W: partial, W hashes)
//	tile/entries/N[.p/W]         entry bundles: each leaf as a big-endian uint16 length and bytes
//	.state/                      Tessera's private state (treeState: the integrated size and root)
//	.probity-appender.lock       the appender's lock file
//
// Neither .state/ nor the lock file is to be served. A leaf is specified byte for byte
// in attest ("Log leaf"): attest.RecordLeaf, attest.TombstoneLeaf or attest.RemovedLeaf.
//
// # One appender
//
// Exactly one process appends to a log. Open takes an exclusive, non-blocking flock on
// Dir/.probity-appender.lock and then Store.TryLogLock (on PostgreSQL a session advisory
// lock on a connection of its own, so that processes sharing one database but not one
// disk cannot both append); when either is taken, Open fails with an error wrapping
// ErrNotAppender, and the process only reads and serves the log (Bundle works in any
// process). Both locks die with their process, so a crashed appender's successor takes
// over without cleanup.
//
// # Order and exactly once
//
// The appender is the only writer of Dir, and it adds leaves in one goroutine, one
// round at a time: it reads the sources of the numbers after the log's size S
// (Store.LogSources: S+1, S+2, … with no gap, the first number not yet assigned ending
// the list), builds each leaf, hands them to Tessera's Add in number order, and waits
// for all of them to be integrated before it reads the next round. Tessera assigns
// indexes in the order Add is called, from its integrated size on, so the leaf of number
// n gets index n-1; the appender checks every index it is given, and stops (a
// *MismatchError) if one is not. A round is at most Config.BatchSize leaves, Tessera's
// batch size, and its Adds take far less than a batch's maximum age (50 ms), so a round
// is one Tessera batch: integrated whole or not at all. (Were a round ever split and its
// first part to fail, the second would get indexes below its numbers: the index check
// stops the appender before anything more is added, and Open refuses the log.) Then
// Store.SetLogged stores log_index = seq-1 on the rows integrated (the schema allows
// only that value, once).
//
// # Crash safety
//
// Tessera's POSIX driver sequences and integrates synchronously: a batch writes its
// entry bundles and tiles, then the tree state (.state/treeState) last, each file by
// an atomic rename. A crash (kill -9) at any moment leaves the tree state at the end of
// the last integrated batch; what a later, unfinished batch wrote beyond it is
// overwritten when the next batch is integrated from that size. On Open the appender
// reads the integrated size S, checks that the leaf at index S-1 is the one the ledger
// says for number S (refusing to append otherwise: *MismatchError), checks that the
// directory holds the tree of the largest checkpoint the store archived (refusing an
// empty directory, another machine's, or a copy restored from before it: appending
// there would sign a second tree under the same origin, a fork), marks every row up
// to S as logged (a crash between integration and SetLogged leaves them unmarked), and
// goes on from S+1. A record the ledger numbered is never lost (it is in the store
// before it has a number), never added twice (the next index is always the tree's
// size), and never out of order (numbers are read in order, without gaps). A record
// integrated as a record and removed with its entry before the crash is accepted on
// Open as the removed record's leaf.
//
// # Checkpoints
//
// Tessera publishes a checkpoint (origin = the signer's name, e.g. "probity.dev/log",
// keys.LogOrigin) at most every Config.CheckpointInterval, after witnessing it. The appender
// reads Dir/checkpoint after each round and on a ticker and archives every distinct
// note in the store (Store.SaveCheckpoint; Cosigned when it carries a signature besides
// the log's own), so that Bundle can name the earliest checkpoint holding a record and
// the one before it. Sync returns once a checkpoint covering everything it appended is
// published and archived.
//
// # Witnessing
//
// Config.WitnessPolicy is a witness policy file (Sigsum's format with C2SP vkeys, as
// tessera.NewWitnessGroupFromPolicy reads: "witness NAME VKEY URL", "group …",
// "quorum …"). Before publishing, Tessera sends the checkpoint with a consistency proof
// to each witness's add-checkpoint endpoint (C2SP tlog-witness) through
// Config.HTTPClient (the service's egress-guarded client; without one, no request
// leaves the process) and adds the cosignatures it gets back. It fails open, with
// Config.WitnessTimeout: a witness that is down or slow delays nothing but its own
// cosignature, and the checkpoint is published without it.
//
// # Scaling past one machine (not built)
//
// The POSIX driver wants one disk shared by the appender and the servers of /log/. Past
// one machine, the same design runs on Tessera's object-storage drivers (storage/gcp,
// storage/aws: tiles and bundles in a bucket served by a CDN, sequencing state in a
// database with its own locks): the appender would open tessera.NewAppender on that
// driver instead of posix.New, every Probity process would serve or redirect /log/ from
// the bucket, and the single-appender rule would stay (PostgreSQL's advisory lock).
// Leaves, order, checkpoints and bundles are unchanged.
package translog
