package export_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/export"
	"github.com/probity-dev/probity/internal/ledgertest"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/verifier"
	"github.com/probity-dev/probity/verifier/cli"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// fixture is a store holding real signed records of every kind and a deleted entry,
// and what it holds, in sequence order.
type fixture struct {
	st      store.Store
	signer  *ledgertest.Signer
	records []want // the records still in the ledger
	removed []int64
}

type want struct {
	seq  int64
	kind store.RecordKind
	slug string
	env  []byte
	path string // in a directory export
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := t.Context()
	st, err := store.Open(ctx, store.Config{SQLitePath: filepath.Join(t.TempDir(), "probity.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	signer, err := ledgertest.NewSigner("export")
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{st: st, signer: signer}
	entries := map[string]store.Entry{}
	for _, slug := range []string{"alpha", "beta", "gone"} {
		e, _, err := st.AddEntry(ctx, store.NewEntry{SlugBase: slug, Kind: store.KindRemote,
			Locator: "https://" + slug + ".example.com/mcp", Name: slug, Source: "import"})
		if err != nil {
			t.Fatal(err)
		}
		entries[slug] = e
	}
	seq := int64(0)
	round := func(slug string, at time.Time) int64 {
		t.Helper()
		roundID := fmt.Sprintf("r-%s-%d", slug, at.Unix())
		rec, err := signer.Probe(ctx, roundID, at)
		if err != nil {
			t.Fatal(err)
		}
		id, err := st.SaveRound(ctx, &store.Round{
			EntryID: entries[slug].ID, DueAt: at, Reason: store.ReasonCadence, RoundID: roundID,
			StartedAt: at, FinishedAt: at.Add(time.Second), Coverage: "auth_required", HTTPStatus: 401,
			Stop: "auth_required", Uptime: store.UptimeAnswered, ProtocolVersion: "2025-11-25",
			Login:   store.Login{Unauthorized: store.LoginAtToolsList, Challenge: store.ChallengeWithMetadata, Metadata: "metadata_consistent"},
			Results: []byte(`[]`), Timings: []byte(`{}`),
			Envelope: rec.Envelope, KeyID: signer.KeyID, PayloadDigest: rec.PayloadDigest,
		})
		if err != nil {
			t.Fatal(err)
		}
		seq++
		f.records = append(f.records, want{seq, store.RecordProbe, slug, rec.Envelope, slug + "/" + roundID + ".json"})
		return id
	}
	change := func(slug string, number int64, at time.Time) {
		t.Helper()
		rec, err := signer.Change(ctx, slug, number, at)
		if err != nil {
			t.Fatal(err)
		}
		err = st.SaveHistory(ctx, store.HistoryUpdate{EntryID: entries[slug].ID, ExpectProcessed: 0, Processed: 0,
			State: []byte(`{}`), Changes: []store.ChangeRecord{{EntryID: entries[slug].ID, Number: number, RecordedAt: at,
				Origin: "automatic", Kind: "tools", Summary: "1 tool added", Details: []byte(`{}`),
				Envelope: rec.Envelope, KeyID: signer.KeyID}}})
		if err != nil {
			t.Fatal(err)
		}
		seq++
		f.records = append(f.records, want{seq, store.RecordChange, slug, rec.Envelope, fmt.Sprintf("%s/changes/ch-%d.json", slug, number)})
	}
	supply := func(slug string, at time.Time) {
		t.Helper()
		rec, err := signer.Supply(ctx, slug, at)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.SaveSupply(ctx, store.SupplyRecord{EntryID: entries[slug].ID, RanAt: at, Score: 100, Verified: true,
			Facts: []byte(`{}`), Verdict: []byte(`{}`), Envelope: rec.Envelope, KeyID: signer.KeyID}, nil); err != nil {
			t.Fatal(err)
		}
		seq++
		f.records = append(f.records, want{seq, store.RecordSupply, slug, rec.Envelope, slug + "/supply/" + at.Format("20060102T150405.000Z") + ".json"})
	}
	round("alpha", t0)                    // 1
	change("alpha", 1, t0.Add(time.Hour)) // 2
	supply("alpha", t0.Add(2*time.Hour))  // 3
	round("beta", t0.Add(3*time.Hour))    // 4
	round("gone", t0.Add(4*time.Hour))    // 5
	supply("gone", t0.Add(5*time.Hour))   // 6
	round("alpha", t0.Add(6*time.Hour))   // 7
	if err := st.DeleteEntry(ctx, "gone", "removed at the operator's request"); err != nil {
		t.Fatal(err)
	}
	seq++ // 8, the tombstone
	var kept []want
	for _, w := range f.records {
		if w.slug == "gone" {
			f.removed = append(f.removed, w.seq)
		} else {
			kept = append(kept, w)
		}
	}
	f.records = kept
	supply("beta", t0.Add(7*time.Hour)) // 9
	return f
}

// readIndex returns the index's lines but its header, which it checks.
func readIndex(t *testing.T, path string) [][]string {
	t.Helper()
	file, err := os.Open(path)
	if err != nil {
		t.Fatalf("index: %v", err)
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	if !sc.Scan() || sc.Text() != export.IndexColumns {
		t.Fatalf("index header %q, want %q", sc.Text(), export.IndexColumns)
	}
	var lines [][]string
	for sc.Scan() {
		lines = append(lines, strings.Split(sc.Text(), "\t"))
	}
	return lines
}

// verify verifies every envelope under path and returns the summary.
func verify(t *testing.T, f *fixture, path string) cli.Summary {
	t.Helper()
	sum, err := cli.VerifyPaths(context.Background(), []string{path}, cli.StreamConfig{
		Keys: f.signer.Doc, Policy: verifier.DefaultPolicy(),
		Emit: func(it cli.Item) {
			if it.Err != nil {
				t.Errorf("%s: %v", it.Source, it.Err)
			}
		},
	})
	if err != nil {
		t.Fatalf("VerifyPaths(%s): %v", path, err)
	}
	return sum
}

// TestWriteJSONL: the JSONL export is the ledger in sequence order, every kind in one
// stream, each line byte for byte the stored envelope; the index gives each line's
// sequence number and kind, and the tombstone of the deleted entry; `probity verify`
// verifies every line.
func TestWriteJSONL(t *testing.T) {
	f := newFixture(t)
	out := filepath.Join(t.TempDir(), "export.jsonl")
	c, err := export.Write(t.Context(), f.st, f.signer.Doc, out, store.EnvelopeFilter{}, nil, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if c != (export.Counts{Rounds: 3, Changes: 1, Supply: 2, Tombstones: 1}) {
		t.Errorf("counts %+v", c)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != len(f.records) {
		t.Fatalf("%d lines, want %d", len(lines), len(f.records))
	}
	index := readIndex(t, export.IndexName(out))
	if export.IndexName(out) != filepath.Join(filepath.Dir(out), "export.ledger.tsv") {
		t.Errorf("index name %s", export.IndexName(out))
	}
	if len(index) != len(f.records)+1 {
		t.Fatalf("index has %d lines, want %d", len(index), len(f.records)+1)
	}
	i := 0
	for _, row := range index {
		seq, _ := strconv.ParseInt(row[0], 10, 64)
		if row[1] == "tombstone" {
			if seq != 8 || row[2] != "gone" || row[3] != "-" || row[4] != "removed 5,6 because removed at the operator's request" {
				t.Errorf("tombstone line %q", row)
			}
			continue
		}
		w := f.records[i]
		n, _ := strconv.Atoi(row[3])
		if seq != w.seq || row[1] != string(w.kind) || row[2] != w.slug || n != i+1 || lines[i] != string(w.env) || len(row[4]) != 64 {
			t.Errorf("index line %q, want record %d (%s of %s) on line %d", row, w.seq, w.kind, w.slug, i+1)
		}
		i++
	}
	if sum := verify(t, f, out); sum.Total != len(f.records) || sum.Verified != sum.Total {
		t.Errorf("verify: %+v", sum)
	}

	// One entry's records, and no tombstone of another.
	out = filepath.Join(t.TempDir(), "alpha.jsonl")
	c, err = export.Write(t.Context(), f.st, f.signer.Doc, out, store.EnvelopeFilter{EntrySlug: "alpha"}, nil, os.Stderr)
	if err != nil || c != (export.Counts{Rounds: 2, Changes: 1, Supply: 1}) {
		t.Errorf("alpha's export: %+v, %v", c, err)
	}
	for _, row := range readIndex(t, export.IndexName(out)) {
		if row[2] != "alpha" {
			t.Errorf("alpha's index: %q", row)
		}
	}
	if sum := verify(t, f, out); sum.Total != 4 || sum.Verified != 4 {
		t.Errorf("verify alpha's export: %+v", sum)
	}
}

// TestWriteDirectory: the directory export keeps the file layout of before the ledger,
// with the index at its root naming each record's file; `probity verify` of the
// directory verifies every record and reads neither keys.json nor the index.
func TestWriteDirectory(t *testing.T) {
	f := newFixture(t)
	out := filepath.Join(t.TempDir(), "export")
	c, err := export.Write(t.Context(), f.st, f.signer.Doc, out, store.EnvelopeFilter{}, nil, os.Stderr)
	if err != nil || c != (export.Counts{Rounds: 3, Changes: 1, Supply: 2, Tombstones: 1}) {
		t.Fatalf("Write = %+v, %v", c, err)
	}
	index := readIndex(t, filepath.Join(out, "ledger.tsv"))
	i := 0
	for _, row := range index {
		if row[1] == "tombstone" {
			continue
		}
		w := f.records[i]
		i++
		if row[3] != w.path {
			t.Errorf("record %d at %q, want %q", w.seq, row[3], w.path)
			continue
		}
		got, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(w.path)))
		if err != nil || string(got) != string(w.env) {
			t.Errorf("%s: %v", w.path, err)
		}
	}
	if i != len(f.records) {
		t.Errorf("index names %d records, want %d", i, len(f.records))
	}
	if sum := verify(t, f, out); sum.Total != len(f.records) || sum.Verified != sum.Total {
		t.Errorf("verify: %+v", sum)
	}
}

// fakeBundles gives the records with an odd sequence number a bundle, the others none
// yet, and fails for the number in fail.
type fakeBundles struct{ fail int64 }

func (b fakeBundles) Bundle(_ context.Context, r store.LedgerRecord) ([]byte, error) {
	switch {
	case r.Seq == b.fail:
		return nil, errors.New("the tiles are unreadable")
	case r.Seq%2 == 1:
		return []byte(fmt.Sprintf(`{"bundle":"probity.dev/log-bundle/v1","logIndex":%d}`, r.Seq-1)), nil
	}
	return nil, fmt.Errorf("record %d: %w", r.Seq, export.ErrNotLogged)
}

// TestWriteBundles: with Bundles, a logged record goes out as its bundle (in the JSONL
// line, or in a file whose name ends in .bundle.json), one not logged yet as its bare
// envelope, and a record whose bundle cannot be built stops the export, which leaves no
// partial file behind.
func TestWriteBundles(t *testing.T) {
	f := newFixture(t)
	out := filepath.Join(t.TempDir(), "export.jsonl")
	c, err := export.Write(t.Context(), f.st, f.signer.Doc, out, store.EnvelopeFilter{}, fakeBundles{}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	odd := 0
	for _, r := range f.records {
		odd += int(r.seq % 2)
	}
	if c.Bundled != odd || c.Rounds+c.Changes+c.Supply != len(f.records) {
		t.Errorf("counts %+v, want %d bundled", c, odd)
	}
	data, _ := os.ReadFile(out)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for i, r := range f.records {
		want := string(r.env)
		if r.seq%2 == 1 {
			want = fmt.Sprintf(`{"bundle":"probity.dev/log-bundle/v1","logIndex":%d}`, r.seq-1)
		}
		if lines[i] != want {
			t.Errorf("line %d: %.80s, want %.80s", i+1, lines[i], want)
		}
	}

	dir := filepath.Join(t.TempDir(), "export")
	if _, err := export.Write(t.Context(), f.st, f.signer.Doc, dir, store.EnvelopeFilter{}, fakeBundles{}, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, row := range readIndex(t, filepath.Join(dir, "ledger.tsv")) {
		seq, _ := strconv.ParseInt(row[0], 10, 64)
		if row[1] == "tombstone" {
			continue
		}
		if bundle := strings.HasSuffix(row[3], ".bundle.json"); bundle != (seq%2 == 1) {
			t.Errorf("record %d at %s", seq, row[3])
		}
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(row[3]))); err != nil {
			t.Error(err)
		}
	}

	failed := filepath.Join(t.TempDir(), "failed.jsonl")
	if _, err := export.Write(t.Context(), f.st, f.signer.Doc, failed, store.EnvelopeFilter{}, fakeBundles{fail: f.records[1].seq}, io.Discard); err == nil || !strings.Contains(err.Error(), "the tiles are unreadable") {
		t.Fatalf("a bundle that cannot be built: %v", err)
	}
	if _, err := os.Stat(failed); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the failed export left %s: %v", failed, err)
	}
}
