package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/probity-dev/probity/export"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/store"
)

const exportUsage = `Usage:

	probity export --out DIR|FILE.jsonl [--since TIME] [--entry SLUG]

Writes the ledger's signed records (rounds, recorded changes with hidden ones
included, supply-check runs and the key document's versions), in sequence order, with
the key document and an index, in the shapes "probity verify" accepts. A record in a
published checkpoint of the transparency log (DATA-DIR/log) goes out as its bundle:
the envelope with its log index, inclusion proof and the checkpoint (with witness
cosignatures) it is proven against; one not logged yet as its bare envelope.

	--out DIR          DIR/keys.json, one file per round in
	                   DIR/SLUG/ROUND-ID.json, one per recorded change in
	                   DIR/SLUG/changes/ch-N.json, one per supply-check run in
	                   DIR/SLUG/supply/TIME.json and one per key document version in
	                   DIR/_/ledger/SEQ.json (a bundle's name ends in .bundle.json);
	                   the index in DIR/ledger.tsv
	--out FILE.jsonl   one record per line in FILE.jsonl, in sequence order, the
	                   key document in keys.json beside it and the index in
	                   FILE.ledger.tsv
	--since TIME       only records stored at or after TIME (RFC 3339, e.g.
	                   2026-11-30T00:00:00Z, or a date 2026-11-30)
	--entry SLUG       only the records of one entry

The index has a line per record: its sequence number, kind, entry, line (or file) and
payload digest; and a line per deleted entry (a tombstone) with the sequence numbers
its deletion removed and why.

Then: probity verify --keys DIR/keys.json DIR   (or FILE.jsonl; add --require-log to
require every record's log proof)

` + envHelp

func runExport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("probity export", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var ef envFlags
	ef.register(fs, false)
	out := fs.String("out", "", "")
	since := fs.String("since", "", "")
	entry := fs.String("entry", "", "")
	if err := parseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(stdout, exportUsage)
			return 0
		}
		fmt.Fprintf(stderr, "error: %v\n%s", err, exportUsage)
		return 2
	}
	if *out == "" || fs.NArg() != 0 {
		fmt.Fprintf(stderr, "error: want --out DIR or --out FILE.jsonl and no arguments\n%s", exportUsage)
		return 2
	}
	var filter store.EnvelopeFilter
	filter.EntrySlug = *entry
	if *since != "" {
		t, err := parseSince(*since)
		if err != nil {
			fmt.Fprintf(stderr, "error: %v\n", err)
			return 2
		}
		filter.Since = t
	}
	doc, err := keys.Load(filepath.Join(ef.keyDirectory(), keys.DocumentFile))
	if err != nil {
		fmt.Fprintf(stderr, "error: couldn't load the key document: %v\nhint: --key-dir names the signing key directory\n", err)
		return 2
	}
	ctx := context.Background()
	st, _, err := ef.openStore(ctx, slog.New(slog.DiscardHandler))
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	defer st.Close()
	if filter.EntrySlug != "" {
		if _, err := st.Entry(ctx, filter.EntrySlug); err != nil {
			fmt.Fprintf(stderr, "error: no entry %q: %v\n", filter.EntrySlug, err)
			return 2
		}
	}
	n, err := export.Write(ctx, st, doc, *out, filter, exportBundles{dir: ef.logDirectory(), st: st}, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	fmt.Fprintf(stdout, "exported %d round, %d change, %d supply and %d key document envelopes and %d others (baselines, disputes, outcomes, withdrawals) to %s (%d as bundles with their log proof; index %s, %d deletions)\n",
		n.Rounds, n.Changes, n.Supply, n.Keys, n.Other, *out, n.Bundled, export.IndexName(*out), n.Tombstones)
	return 0
}

func parseSince(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t.UTC(), nil
	}
	return time.Time{}, fmt.Errorf("--since %q is neither RFC 3339 (2026-11-30T00:00:00Z) nor a date (2026-11-30)", s)
}
