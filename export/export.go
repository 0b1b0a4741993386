// Package export writes stored envelopes with the key document, in the shapes the
// offline verifier accepts: a directory (keys.json and SLUG/ROUND-ID.json per round) or
// a JSONL file (one envelope per line, keys.json beside it).
package export

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/store"
)

// Counts says how many envelopes Write wrote.
type Counts struct {
	Rounds  int // round envelopes (probe/v1)
	Changes int // change envelopes (change/v1), hidden changes included: they stay signed records
	Supply  int // supply-run envelopes (supply/v1), the last ten per entry
}

// Write writes the round, change and supply envelopes f selects and the key document to out (a
// directory, or a .jsonl file with keys.json beside it). In a directory, a round's
// envelope is SLUG/ROUND-ID.json, a change's SLUG/changes/ch-N.json and a supply run's
// SLUG/supply/TIME.json. Progress goes to
// progress every 5 s.
func Write(ctx context.Context, st store.Store, doc *keys.Document, out string, f store.EnvelopeFilter, progress io.Writer) (Counts, error) {
	var c Counts
	docJSON, err := keys.MarshalDocument(doc)
	if err != nil {
		return c, err
	}
	cf := store.ChangeFilter{Since: f.Since, IncludeHidden: true}
	if f.EntrySlug != "" {
		e, err := st.Entry(ctx, f.EntrySlug)
		if err != nil {
			return c, fmt.Errorf("no entry %q: %w", f.EntrySlug, err)
		}
		cf.EntryID = e.ID
	}
	last := time.Now()
	tick := func() {
		if time.Since(last) > 5*time.Second {
			fmt.Fprintf(progress, "exported %d round and %d change envelopes …\n", c.Rounds, c.Changes)
			last = time.Now()
		}
	}
	changes, err := st.Changes(ctx, cf)
	if err != nil {
		return c, fmt.Errorf("couldn't read changes: %w", err)
	}
	supplyRuns, err := supplyEnvelopes(ctx, st, cf.EntryID, f.Since)
	if err != nil {
		return c, fmt.Errorf("couldn't read supply runs: %w", err)
	}

	if strings.HasSuffix(out, ".jsonl") {
		if err := writeFileAtomic(filepath.Join(filepath.Dir(out), keys.DocumentFile), docJSON); err != nil {
			return c, err
		}
		tmp := out + ".tmp"
		file, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return c, err
		}
		defer os.Remove(tmp)
		w := bufio.NewWriterSize(file, 1<<20)
		err = st.Envelopes(ctx, f, func(r store.EnvelopeRecord) error {
			if err := oneLine(r.Envelope, w); err != nil {
				return fmt.Errorf("envelope of round %s: %w", r.RoundID, err)
			}
			c.Rounds++
			tick()
			return nil
		})
		for i := 0; err == nil && i < len(changes); i++ {
			if changes[i].Envelope == nil {
				continue
			}
			if err = oneLine(changes[i].Envelope, w); err != nil {
				err = fmt.Errorf("envelope of change %d of %s: %w", changes[i].Number, changes[i].EntrySlug, err)
			}
			c.Changes++
			tick()
		}
		for i := 0; err == nil && i < len(supplyRuns); i++ {
			if err = oneLine(supplyRuns[i].env, w); err != nil {
				err = fmt.Errorf("envelope of a supply run of %s: %w", supplyRuns[i].slug, err)
			}
			c.Supply++
			tick()
		}
		if err == nil {
			err = w.Flush()
		}
		if err == nil {
			err = file.Sync()
		}
		if cerr := file.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return c, fmt.Errorf("couldn't export to %s: %w", out, err)
		}
		return c, os.Rename(tmp, out)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return c, err
	}
	if err := writeFileAtomic(filepath.Join(out, keys.DocumentFile), docJSON); err != nil {
		return c, err
	}
	err = st.Envelopes(ctx, f, func(r store.EnvelopeRecord) error {
		dir := filepath.Join(out, r.EntrySlug)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := writeFileAtomic(filepath.Join(dir, r.RoundID+".json"), r.Envelope); err != nil {
			return err
		}
		c.Rounds++
		tick()
		return nil
	})
	for i := 0; err == nil && i < len(changes); i++ {
		ch := &changes[i]
		if ch.Envelope == nil {
			continue
		}
		dir := filepath.Join(out, ch.EntrySlug, "changes")
		if err = os.MkdirAll(dir, 0o755); err == nil {
			err = writeFileAtomic(filepath.Join(dir, fmt.Sprintf("ch-%d.json", ch.Number)), ch.Envelope)
		}
		c.Changes++
		tick()
	}
	for i := 0; err == nil && i < len(supplyRuns); i++ {
		r := &supplyRuns[i]
		dir := filepath.Join(out, r.slug, "supply")
		if err = os.MkdirAll(dir, 0o755); err == nil {
			err = writeFileAtomic(filepath.Join(dir, r.ranAt.UTC().Format("20060102T150405.000Z")+".json"), r.env)
		}
		c.Supply++
		tick()
	}
	if err != nil {
		return c, fmt.Errorf("couldn't export to %s: %w", out, err)
	}
	return c, nil
}

type supplyEnvelope struct {
	slug  string
	ranAt time.Time
	env   []byte
}

// supplyEnvelopes returns the signed supply runs of one entry (entryID) or of all,
// run at or after since.
func supplyEnvelopes(ctx context.Context, st store.Store, entryID int64, since time.Time) ([]supplyEnvelope, error) {
	var out []supplyEnvelope
	add := func(e store.Entry) error {
		runs, err := st.SupplyRuns(ctx, e.ID, 0)
		if err != nil {
			return err
		}
		for _, r := range runs {
			if r.Envelope != nil && !r.RanAt.Before(since) {
				out = append(out, supplyEnvelope{e.Slug, r.RanAt, r.Envelope})
			}
		}
		return nil
	}
	if entryID != 0 {
		e, err := st.EntryByID(ctx, entryID)
		if err != nil {
			return nil, err
		}
		return out, add(e)
	}
	var after int64
	for {
		es, err := st.Entries(ctx, after, 1000)
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			if err := add(e); err != nil {
				return nil, err
			}
			after = e.ID
		}
		if len(es) < 1000 {
			return out, nil
		}
	}
}

// oneLine writes a stored envelope as one JSONL line. Stored envelopes are compact
// (attest.EncodeEnvelope); one with a newline would break the JSONL shape and is refused.
func oneLine(env []byte, w *bufio.Writer) error {
	if _, _, err := attest.ParseEnvelope(env); err != nil {
		return err
	}
	if strings.ContainsAny(string(env), "\n\r") {
		return errors.New("the stored envelope spans lines")
	}
	w.Write(env)
	return w.WriteByte('\n')
}

// writeFileAtomic writes data to path through a temporary file and a rename.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
