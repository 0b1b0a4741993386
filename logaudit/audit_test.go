package logaudit_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/internal/ledgertest"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/logaudit"
	"github.com/probity-dev/probity/logaudit/logaudittest"
)

const origin = "probity.test/log"

// records are the leaves the tests share: the key document's version 1 and 599 signed
// records, 600 leaves that make two full entry bundles and a partial one, and a partial
// level-1 tile.
var records = sync.OnceValues(func() ([][]byte, error) {
	s, err := ledgertest.NewSigner("logaudit")
	if err != nil {
		return nil, err
	}
	_, vkey, err := logaudittest.LogKey(origin, "a")
	if err != nil {
		return nil, err
	}
	v1, err := logaudittest.History("logaudit", origin, vkey)
	if err != nil {
		return nil, err
	}
	k, err := logaudittest.KeysLeaf(1, v1)
	if err != nil {
		return nil, err
	}
	recs, err := logaudittest.Records(context.Background(), s, 2, 599)
	if err != nil {
		return nil, err
	}
	version1 = v1
	return append([][]byte{k}, recs...), nil
})

// version1 is the key document version the shared records begin with.
var version1 *keys.Version

// fixture is a data directory: DATA/log (the log) and DATA/keys/keys.json.
type fixture struct {
	t       *testing.T
	data    string
	logDir  string
	keys    string
	signer  note.Signer
	vkey    string
	witness *logaudittest.Witness
	state   string
	leaves  [][]byte
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	leaves, err := records()
	if err != nil {
		t.Fatal(err)
	}
	signer, vkey, err := logaudittest.LogKey(origin, "a")
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	f := &fixture{t: t, data: data, logDir: filepath.Join(data, "log"), keys: filepath.Join(data, "keys", "keys.json"),
		signer: signer, vkey: vkey, state: filepath.Join(data, "state.json"),
		witness: logaudittest.NewWitness("witness.test", "w1", time.Date(2026, 6, 1, 10, 0, 30, 0, time.UTC))}
	doc, err := keys.MarshalDocument(version1.Document)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(f.keys), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.keys, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	f.write(append([][]byte{}, leaves...))
	return f
}

// write replaces the log with leaves, signed by the log key and cosigned.
func (f *fixture) write(leaves [][]byte) {
	f.t.Helper()
	os.RemoveAll(f.logDir)
	f.leaves = leaves
	if _, err := logaudittest.WriteLog(f.logDir, leaves, f.signer, f.witness); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) config() logaudit.Config {
	return logaudit.Config{Source: f.logDir, WitnessKeys: []string{f.witness.VKey}, MinWitnesses: 1, StateFile: f.state}
}

func (f *fixture) audit(cfg logaudit.Config) *logaudit.Report {
	f.t.Helper()
	rep, err := logaudit.Run(context.Background(), cfg)
	if err != nil {
		f.t.Fatalf("Run: %v", err)
	}
	return rep
}

// path is a file of the log.
func (f *fixture) path(p string) string { return filepath.Join(f.logDir, filepath.FromSlash(p)) }

func (f *fixture) edit(p string, change func([]byte) []byte) {
	f.t.Helper()
	b, err := os.ReadFile(f.path(p))
	if err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(f.path(p), change(b), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func wantReason(t *testing.T, rep *logaudit.Report, want logaudit.Reason, index int64) {
	t.Helper()
	if rep.OK() {
		t.Fatalf("the audit passed; want %s", want)
	}
	for _, f := range rep.Failures {
		if f.Reason == want && (index == -2 || f.Index == index) {
			return
		}
	}
	b, _ := json.MarshalIndent(rep.Failures, "", "  ")
	t.Fatalf("no %s failure at index %d; failures: %s", want, index, b)
}

func TestAuditGood(t *testing.T) {
	f := newFixture(t)
	rep := f.audit(f.config())
	if !rep.OK() {
		t.Fatalf("failures: %+v", rep.Failures)
	}
	if rep.Size != 600 || rep.Origin != origin || rep.Verified != 600 || rep.KeyVersions != 1 || rep.Counts["keys"] != 1 || rep.Counts["probe"] != 200 || rep.Counts["change"] != 199 || rep.Counts["supply"] != 200 {
		t.Errorf("report: size %d origin %q verified %d counts %v", rep.Size, rep.Origin, rep.Verified, rep.Counts)
	}
	if !strings.Contains(rep.KeysSource, "beside the log directory") {
		t.Errorf("keys source %q does not say where the key document came from", rep.KeysSource)
	}
	if len(rep.Witnesses) != 1 || !rep.Witnesses[0].Time.Equal(f.witness.Time) {
		t.Errorf("witnesses: %+v", rep.Witnesses)
	}
	if rep.ConsistentWithSaved != nil || !rep.StateSaved {
		t.Errorf("first audit: consistentWithSaved %v, stateSaved %v", rep.ConsistentWithSaved, rep.StateSaved)
	}
	// The log grows: consistent with what was saved.
	more, err := logaudittest.Records(context.Background(), mustSigner(t), 601, 300)
	if err != nil {
		t.Fatal(err)
	}
	f.witness.Time = time.Date(2026, 6, 1, 15, 0, 30, 0, time.UTC)
	f.write(append(f.leaves, more...))
	rep = f.audit(f.config())
	if !rep.OK() || rep.ConsistentWithSaved == nil || !*rep.ConsistentWithSaved || rep.SavedSize != 600 || rep.Size != 900 {
		t.Fatalf("grown log: ok %v consistent %v saved %d size %d failures %+v", rep.OK(), rep.ConsistentWithSaved, rep.SavedSize, rep.Size, rep.Failures)
	}
}

// TestEmptyLog: a log as Tessera starts it, size 0 (root SHA-256 of nothing), audits
// clean, and a later log of that origin is consistent with it.
func TestEmptyLog(t *testing.T) {
	f := newFixture(t)
	all := f.leaves
	cosigned := f.witness.Time
	f.witness.Time = time.Date(2026, 5, 31, 0, 0, 0, 0, time.UTC) // before every record
	f.write(nil)
	rep := f.audit(f.config())
	if !rep.OK() || rep.Size != 0 || rep.Root != "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=" || !rep.StateSaved {
		t.Fatalf("ok %v size %d root %s failures %+v", rep.OK(), rep.Size, rep.Root, rep.Failures)
	}
	f.witness.Time = cosigned
	f.write(all)
	if rep := f.audit(f.config()); !rep.OK() || rep.ConsistentWithSaved == nil || !*rep.ConsistentWithSaved {
		t.Fatalf("after the empty log: %+v", rep.Failures)
	}
}

func mustSigner(t *testing.T) *ledgertest.Signer {
	s, err := ledgertest.NewSigner("logaudit")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestTamper: every way of tampering with the log that issue 15 lists is found, with
// its typed reason. "Re-signed" cases are an operator rewriting the log with the log's
// own key (the tree is consistent, the checkpoint valid); the others edit the served
// files.
func TestTamper(t *testing.T) {
	cases := []struct {
		name   string
		tamper func(f *fixture)
		reason logaudit.Reason
		index  int64 // -2: any
	}{
		{"drop an entry, re-signed", func(f *fixture) {
			f.write(append(append([][]byte{}, f.leaves[:100]...), f.leaves[101:]...))
		}, logaudit.ReasonSequence, 100},
		{"drop an entry from its bundle", func(f *fixture) {
			f.edit("tile/entries/000", func(b []byte) []byte {
				n := int(b[0])<<8 | int(b[1])
				return b[2+n:]
			})
		}, logaudit.ReasonEntriesMalformed, 0},
		{"reorder two entries, re-signed", func(f *fixture) {
			l := append([][]byte{}, f.leaves...)
			l[300], l[301] = l[301], l[300]
			f.write(l)
		}, logaudit.ReasonSequence, 300},
		{"duplicate an entry, re-signed", func(f *fixture) {
			l := append(append(append([][]byte{}, f.leaves[:51]...), f.leaves[50]), f.leaves[51:]...)
			f.write(l)
		}, logaudit.ReasonSequence, 51},
		{"alter one byte of an envelope", func(f *fixture) {
			f.edit("tile/entries/001", func(b []byte) []byte {
				i := strings.Index(string(b), `"payload":"`) + len(`"payload":"`) + 40
				b[i] ^= 0x01 // one base64 letter for another
				return b
			})
		}, logaudit.ReasonTileMismatch, 256},
		{"alter one byte of an envelope, re-signed", func(f *fixture) {
			l := append([][]byte{}, f.leaves...)
			leaf := []byte(string(l[7]))
			i := strings.Index(string(leaf), `"payload":"`) + len(`"payload":"`) + 40
			leaf[i] ^= 0x01
			l[7] = leaf
			f.write(l)
		}, logaudit.Reason("bad_signature"), 7},
		{"alter a tile", func(f *fixture) {
			f.edit("tile/0/001", func(b []byte) []byte { b[32*5] ^= 0xff; return b })
		}, logaudit.ReasonTileMismatch, 256 + 5},
		{"alter a level-1 tile", func(f *fixture) {
			f.edit("tile/1/000.p/2", func(b []byte) []byte { b[33] ^= 0xff; return b })
		}, logaudit.ReasonTileMismatch, 256},
		{"alter the checkpoint", func(f *fixture) {
			f.edit("checkpoint", func(b []byte) []byte { return []byte(strings.Replace(string(b), "\n600\n", "\n599\n", 1)) })
		}, logaudit.ReasonCheckpointSignature, -1},
		{"a checkpoint claiming 2^40 leaves, re-signed", func(f *fixture) {
			root, _ := logaudittest.Root(f.leaves)
			cp, err := logaudittest.Checkpoint(f.signer, 1<<40, root, f.witness)
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(f.path("checkpoint"), cp, 0o644)
		}, logaudit.ReasonIncomplete, -2},
		{"remove a tile", func(f *fixture) { os.Remove(f.path("tile/0/002.p/88")) }, logaudit.ReasonTileMissing, 512},
		{"remove an entry bundle", func(f *fixture) { os.Remove(f.path("tile/entries/001")) }, logaudit.ReasonEntriesMissing, 256},
		{"a leaf that is not a leaf, re-signed", func(f *fixture) {
			l := append([][]byte{}, f.leaves...)
			l[9] = []byte("not a leaf")
			f.write(l)
		}, logaudit.ReasonLeafMalformed, 9},
		{"a record under another kind, re-signed", func(f *fixture) {
			l := append([][]byte{}, f.leaves...)
			p, _ := attest.ParseLeaf(l[3])
			l[3], _ = attest.RecordLeaf(4, "supply", p.Data)
			f.write(l)
		}, logaudit.ReasonKindMismatch, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			c.tamper(f)
			rep := f.audit(f.config())
			wantReason(t, rep, c.reason, c.index)
			if rep.StateSaved {
				t.Error("the state was saved after a failed audit")
			}
		})
	}
}

// TestTamperAgainstSaved: the checkpoint saved by the last audit catches a split view,
// a shrunk log and rewritten history, each signed validly by the log.
func TestTamperAgainstSaved(t *testing.T) {
	other := func(f *fixture, n int) [][]byte {
		l := append([][]byte{}, f.leaves[:n]...)
		// Another record with the same seq: a different history of the same size.
		s := mustSigner(t)
		rec, err := s.Probe(context.Background(), "r-other", time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC))
		if err != nil {
			t.Fatal(err)
		}
		l[30], _ = attest.RecordLeaf(31, "probe", rec.Envelope)
		return l
	}
	cases := []struct {
		name   string
		before func(f *fixture)
		after  func(f *fixture)
		reason logaudit.Reason
	}{
		{"two checkpoints of the same size", nil, func(f *fixture) { f.write(other(f, 600)) }, logaudit.ReasonSplitView},
		{"shrink the log", nil, func(f *fixture) { f.write(f.leaves[:500]) }, logaudit.ReasonShrunk},
		{"rewrite history and grow", func(f *fixture) { f.write(f.leaves[:500]) }, func(f *fixture) {
			all, _ := records()
			f.write(other(&fixture{leaves: all}, 600))
		}, logaudit.ReasonRewritten},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			if c.before != nil {
				c.before(f)
			}
			if rep := f.audit(f.config()); !rep.OK() || !rep.StateSaved {
				t.Fatalf("first audit: %+v", rep.Failures)
			}
			saved, _ := os.ReadFile(f.state)
			c.after(f)
			rep := f.audit(f.config())
			wantReason(t, rep, c.reason, -1)
			if rep.ConsistentWithSaved == nil || *rep.ConsistentWithSaved {
				t.Errorf("consistentWithSaved %v", rep.ConsistentWithSaved)
			}
			if now, _ := os.ReadFile(f.state); string(now) != string(saved) {
				t.Error("the state changed after a failed audit")
			}
		})
	}
}

func TestWitnesses(t *testing.T) {
	f := newFixture(t)
	w2 := logaudittest.NewWitness("witness2.test", "w2", f.witness.Time)
	cfg := f.config()
	cfg.WitnessKeys = append(cfg.WitnessKeys, w2.VKey)
	cfg.MinWitnesses = 2
	wantReason(t, f.audit(cfg), logaudit.ReasonTooFewWitnesses, -1)

	// A cosignature that does not verify: its signature bytes altered, key hash kept.
	f.edit("checkpoint", func(b []byte) []byte {
		lines := strings.Split(string(b), "\n")
		for i, l := range lines {
			if prefix := "\u2014 witness.test "; strings.HasPrefix(l, prefix) {
				raw, err := base64.StdEncoding.DecodeString(l[len(prefix):])
				if err != nil {
					t.Fatal(err)
				}
				raw[20] ^= 0x01 // in the Ed25519 signature, after key hash and timestamp
				lines[i] = prefix + base64.StdEncoding.EncodeToString(raw)
			}
		}
		return []byte(strings.Join(lines, "\n"))
	})
	cfg.MinWitnesses = 0
	wantReason(t, f.audit(cfg), logaudit.ReasonCosignature, -1)

	// Records dated after the witness saw the checkpoint holding them.
	early := logaudittest.NewWitness("witness.test", "w1", time.Date(2026, 6, 1, 3, 0, 0, 0, time.UTC))
	if _, err := logaudittest.WriteLog(f.logDir, f.leaves, f.signer, early); err != nil {
		t.Fatal(err)
	}
	rep := f.audit(f.config())
	// Records are a minute apart from 2026-06-01 00:00 on: seq 181 is 03:01.
	wantReason(t, rep, logaudit.ReasonRecordAfterWitness, 180)
	for _, fl := range rep.Failures {
		if fl.Index < 180 {
			t.Fatalf("record %d flagged: %+v", fl.Index, fl)
		}
	}
}

func TestWrongLogKey(t *testing.T) {
	f := newFixture(t)
	_, other, err := logaudittest.LogKey(origin, "b")
	if err != nil {
		t.Fatal(err)
	}
	cfg := f.config()
	cfg.LogKey = other
	wantReason(t, f.audit(cfg), logaudit.ReasonCheckpointSignature, -1)
}

func TestConfigErrors(t *testing.T) {
	f := newFixture(t)
	for name, cfg := range map[string]logaudit.Config{
		"no source":       {},
		"bad witness key": {Source: f.logDir, WitnessKeys: []string{"nope"}},
		"too many needed": {Source: f.logDir, MinWitnesses: 1},
	} {
		if _, err := logaudit.Run(context.Background(), cfg); !errors.Is(err, logaudit.ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
	if _, err := logaudit.Run(context.Background(), logaudit.Config{Source: filepath.Join(f.data, "nothing")}); err == nil {
		t.Error("a missing directory audited")
	}
	if _, err := logaudit.Run(context.Background(), logaudit.Config{Source: f.logDir, KeysFile: filepath.Join(f.data, "none.json")}); err == nil {
		t.Error("a missing key document audited")
	}
}

// TestHTTP audits the same log from a site: /log/ and the served key document.
func TestHTTP(t *testing.T) {
	f := newFixture(t)
	mux := http.NewServeMux()
	mux.Handle("/log/", http.StripPrefix("/log/", http.FileServer(http.Dir(f.logDir))))
	mux.HandleFunc("/.well-known/probity-keys.json", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, f.keys) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	cfg := f.config()
	cfg.Source = srv.URL
	rep := f.audit(cfg)
	if !rep.OK() || rep.Verified != 600 || rep.KeysSource != srv.URL+"/.well-known/probity-keys.json" {
		t.Fatalf("ok %v verified %d keys %q failures %+v", rep.OK(), rep.Verified, rep.KeysSource, rep.Failures)
	}
	// The log's own URL works too, and a tampered tile is found over HTTP.
	f.edit("tile/0/000", func(b []byte) []byte { b[0] ^= 1; return b })
	cfg.Source = srv.URL + "/log/"
	wantReason(t, f.audit(cfg), logaudit.ReasonTileMismatch, 0)
}

// TestAnotherLogAtSavedSource: the source audited last time now serves another log
// (another origin and log key, a history of its own): nothing links it to the saved
// checkpoint, so the audit must not pass it as a first audit.
func TestAnotherLogAtSavedSource(t *testing.T) {
	f := newFixture(t)
	if rep := f.audit(f.config()); !rep.OK() || !rep.StateSaved {
		t.Fatalf("first audit: %+v", rep.Failures)
	}
	signer, vkey, err := logaudittest.LogKey("other.test/log", "b")
	if err != nil {
		t.Fatal(err)
	}
	f.signer = signer
	f.write(f.leaves)
	if err := os.Remove(f.keys); err != nil {
		t.Fatal(err)
	}
	cfg := f.config()
	cfg.LogKey = vkey
	saved, _ := os.ReadFile(f.state)
	wantReason(t, f.audit(cfg), logaudit.ReasonLogKeyChanged, -1)
	if now, _ := os.ReadFile(f.state); string(now) != string(saved) {
		t.Error("the state changed after a failed audit")
	}
}

// TestLogKeyNotInHistory: the log's own key history names the log key its checkpoints
// are signed with; a log signed with another key (given by --log-key) fails, as does a
// --log-key that is not the served key document's.
func TestLogKeyNotInHistory(t *testing.T) {
	f := newFixture(t)
	signer, vkey, err := logaudittest.LogKey(origin, "b")
	if err != nil {
		t.Fatal(err)
	}
	f.signer = signer
	f.write(f.leaves)
	cfg := f.config()
	cfg.LogKey, cfg.StateFile = vkey, ""
	wantReason(t, f.audit(cfg), logaudit.ReasonLogKeyMismatch, -1)
	if err := os.Remove(f.keys); err != nil {
		t.Fatal(err)
	}
	wantReason(t, f.audit(cfg), logaudit.ReasonLogKeyMismatch, -1)
}

// TestWitnessesSameName: two trusted witness keys may share a name (a witness that
// changed its key, two instances of one operator); each verified cosignature counts,
// as the verifier counts them.
func TestWitnessesSameName(t *testing.T) {
	f := newFixture(t)
	w2 := logaudittest.NewWitness("witness.test", "w2", f.witness.Time)
	if _, err := logaudittest.WriteLog(f.logDir, f.leaves, f.signer, f.witness, w2); err != nil {
		t.Fatal(err)
	}
	cfg := f.config()
	cfg.WitnessKeys = append(cfg.WitnessKeys, w2.VKey)
	cfg.MinWitnesses = 2
	if rep := f.audit(cfg); !rep.OK() || len(rep.Witnesses) != 2 {
		t.Fatalf("witnesses %+v failures %+v", rep.Witnesses, rep.Failures)
	}
}

// TestBaselineRecords: a log with approved baselines (kind baseline) passes the audit,
// which verifies their envelopes as baseline/v1 statements; a baseline altered by one
// byte, or logged under another kind, fails it.
func TestBaselineRecords(t *testing.T) {
	s, err := ledgertest.NewSigner("logaudit")
	if err != nil {
		t.Fatal(err)
	}
	withBaseline := func(f *fixture, idx int) [][]byte {
		t.Helper()
		seq := int64(idx + 1)
		at := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(seq) * time.Minute)
		rec, err := s.Baseline(context.Background(), "entry-b", 1, at)
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := attest.RecordLeaf(seq, "baseline", rec.Envelope)
		if err != nil {
			t.Fatal(err)
		}
		l := append([][]byte{}, f.leaves...)
		l[idx] = leaf
		return l
	}
	f := newFixture(t)
	f.write(withBaseline(f, 10))
	rep := f.audit(f.config())
	if !rep.OK() || rep.Counts["baseline"] != 1 {
		b, _ := json.MarshalIndent(rep, "", "  ")
		t.Fatalf("audit of a log with a baseline: %s", b)
	}

	f = newFixture(t)
	l := withBaseline(f, 10)
	leaf := []byte(string(l[10]))
	i := strings.Index(string(leaf), `"payload":"`) + len(`"payload":"`) + 40
	leaf[i] ^= 0x01
	l[10] = leaf
	f.write(l)
	wantReason(t, f.audit(f.config()), logaudit.Reason("bad_signature"), 10)

	f = newFixture(t)
	l = withBaseline(f, 10)
	p, _ := attest.ParseLeaf(l[10])
	l[10], _ = attest.RecordLeaf(11, "change", p.Data)
	f.write(l)
	wantReason(t, f.audit(f.config()), logaudit.ReasonKindMismatch, 10)
}
