package verifier

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/keys"
)

// The fast paths (fast.go) must only ever accept what the general parsers accept, with
// the same result. These tests hold them to it on every vector, on every single-byte
// change of some of them, and under the fuzzer.

// probeSchemaSHA256 is the probe schema decodeProbeFast was written against. When the
// schema changes, this test fails: update decodeProbeFast to the new rules (or make it
// decline what changed), then this hash.
const probeSchemaSHA256 = "478c7538af20388dabdf95f8663361cb8eb152197ce4c36e144ac72cb5c811d2"

func TestFastProbeSchemaPinned(t *testing.T) {
	sum := sha256.Sum256(attest.ProbeSchemaJSON())
	if got := hex.EncodeToString(sum[:]); got != probeSchemaSHA256 {
		t.Fatalf("the probe schema changed (sha256 %s): bring decodeProbeFast in line with it, then update probeSchemaSHA256", got)
	}
}

// vectorInputs returns the envelope, payload and bundle vectors of testdata.
func vectorInputs(t testing.TB) (envelopes, payloads, bundles [][]byte) {
	files, _ := filepath.Glob("testdata/*.json")
	logFiles, _ := filepath.Glob("testdata/log/*")
	for _, f := range append(files, logFiles...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(b, []byte("\n")) {
			line = bytes.TrimSpace(line)
			switch {
			case len(line) == 0:
			case bytes.HasPrefix(line, []byte(`{"bundle"`)):
				bundles = append(bundles, line)
				if pb, err := attest.ParseBundle(line); err == nil {
					envelopes = append(envelopes, pb.Envelope)
				}
			case bytes.HasPrefix(line, []byte(`{"payloadType"`)):
				envelopes = append(envelopes, line)
			}
		}
		if strings.HasSuffix(f, ".json") && !bytes.HasPrefix(b, []byte(`{"bundle"`)) && !bytes.HasPrefix(b, []byte(`{"payloadType"`)) {
			envelopes = append(envelopes, b) // pretty-printed and other forms
		}
	}
	for _, e := range envelopes {
		if _, p, err := attest.ParseEnvelope(e); err == nil {
			payloads = append(payloads, p)
		}
	}
	return envelopes, payloads, bundles
}

// agreeStatement fails t when decodeProbeFast accepts what DecodeStatement does not, or
// differs from it.
func agreeStatement(t testing.TB, p []byte) bool {
	fast, ok := decodeProbeFast(p)
	if !ok {
		return false
	}
	slow, err := attest.DecodeStatement(p)
	if err != nil {
		t.Fatalf("the fast path accepts a statement DecodeStatement rejects (%v):\n%s", err, p)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("the fast path decodes\n%s\nas %+v, DecodeStatement as %+v", p, fast, slow)
	}
	return true
}

func agreeEnvelope(t testing.TB, e []byte) bool {
	fast, ok := parseEnvelopeFast(e)
	if !ok {
		return false
	}
	env, payload, err := attest.ParseEnvelope(e)
	if err != nil {
		t.Fatalf("the fast path accepts an envelope ParseEnvelope rejects (%v):\n%s", err, e)
	}
	if fast.payloadType != env.PayloadType || !bytes.Equal(fast.payload, payload) || len(fast.sigs) != len(env.Signatures) ||
		!bytes.Equal(fast.pae, attest.PAE(payload)) {
		t.Fatalf("the fast path reads\n%s\ndifferently", e)
	}
	for i, s := range env.Signatures {
		sig, _ := attest.DecodeBase64(s.Sig)
		if fast.sigs[i].keyID != s.KeyID || !bytes.Equal(fast.sigs[i].sig, sig) {
			t.Fatalf("signature %d of\n%s\nread differently", i, e)
		}
	}
	return true
}

func agreeBundle(t testing.TB, b []byte) bool {
	fast, ok := bundleFast(b)
	if !ok {
		return false
	}
	slow, err := attest.ParseBundle(b)
	if err != nil {
		t.Fatalf("the fast path accepts a bundle ParseBundle rejects (%v):\n%s", err, b)
	}
	same := fast.logIndex == slow.LogIndex && fast.kind == slow.Kind && bytes.Equal(fast.envelope, slow.Envelope) &&
		reflect.DeepEqual(fast.proof, hashes(slow.InclusionProof)) && string(unescapeNote(fast.checkpointRaw)) == slow.Checkpoint &&
		string(unescapeNote(fast.previousRaw)) == slow.PreviousCheckpoint && len(fast.consistency) == len(slow.ConsistencyProof)
	if same && slow.ConsistencyProof != nil {
		same = reflect.DeepEqual(fast.consistency, hashes(slow.ConsistencyProof))
	}
	if !same {
		t.Fatalf("the fast path reads\n%s\ndifferently: %+v", b, fast)
	}
	agreeEnvelope(t, fast.envelope)
	return true
}

// TestFastPathsAgree runs every vector through the fast paths, and requires them to take
// the forms Probity writes (else the verifier is slow for nothing).
func TestFastPathsAgree(t *testing.T) {
	envelopes, payloads, bundles := vectorInputs(t)
	var fe, fp, fb int
	for _, e := range envelopes {
		if agreeEnvelope(t, e) {
			fe++
		}
	}
	for _, p := range payloads {
		if agreeStatement(t, p) {
			fp++
		}
	}
	for _, b := range bundles {
		if agreeBundle(t, b) {
			fb++
		}
	}
	t.Logf("fast paths took %d of %d envelopes, %d of %d statements, %d of %d bundles", fe, len(envelopes), fp, len(payloads), fb, len(bundles))
	if fe < len(envelopes)/2 || fp < len(payloads)/2 || fb < len(bundles)*3/4 {
		t.Errorf("the fast paths take too few of the vectors")
	}
	for _, name := range []string{"good_full.json", "good_auth_required.json", "good_two_keys.json"} {
		b, _ := os.ReadFile("testdata/" + name)
		_, p, _ := attest.ParseEnvelope(b)
		if _, ok := parseEnvelopeFast(b); !ok {
			t.Errorf("%s: the fast path declines the envelope", name)
		}
		if _, ok := decodeProbeFast(p); !ok {
			t.Errorf("%s: the fast path declines the statement", name)
		}
	}
}

// TestFastPathsAgreeOnEveryByteChange changes each byte of some vectors in turn (to a
// set of bytes that matter to JSON and to the schema's patterns), deletes it and doubles
// it, and checks that the fast paths still accept only what the general parsers accept.
func TestFastPathsAgreeOnEveryByteChange(t *testing.T) {
	envelopes, payloads, bundles := vectorInputs(t)
	pick := func(list [][]byte, n int) [][]byte {
		var out [][]byte
		for i := 0; i < len(list) && len(out) < n; i += max(1, len(list)/n) {
			out = append(out, list[i])
		}
		return out
	}
	if testing.Short() {
		envelopes, payloads, bundles = pick(envelopes, 1), pick(payloads, 1), pick(bundles, 1)
	} else {
		envelopes, payloads, bundles = pick(envelopes, 1), pick(payloads, 2), pick(bundles, 1)
	}
	repl := []byte{'"', '\\', ' ', '\n', '0', '9', 'a', 'Z', '-', '.', ':', '/', '=', '}', ']', ',', 0x00, 0x7f, 0xe2}
	// Inside an envelope's base64 payload, only its first and last bytes are changed:
	// the statement mutations cover what the payload decodes to.
	skip := func(in []byte, i int) bool {
		start := bytes.Index(in, []byte(`"payload":"`))
		if start < 0 {
			return false
		}
		start += len(`"payload":"`)
		end := start + bytes.IndexByte(in[start:], '"')
		return i > start+8 && i < end-8
	}
	mutate := func(in []byte, check func(testing.TB, []byte) bool) int {
		n := 0
		for i := range in {
			if skip(in, i) {
				continue
			}
			for _, c := range append(repl, in[i]^0x01, in[i]^0x20) {
				if c == in[i] {
					continue
				}
				m := bytes.Clone(in)
				m[i] = c
				if check(t, m) {
					n++
				}
			}
			if check(t, append(bytes.Clone(in[:i]), in[i+1:]...)) {
				n++
			}
			if check(t, append(append(bytes.Clone(in[:i+1]), in[i]), in[i+1:]...)) {
				n++
			}
		}
		return n
	}
	var accepted int
	for _, p := range payloads {
		accepted += mutate(p, agreeStatement)
	}
	for _, e := range envelopes {
		accepted += mutate(e, agreeEnvelope)
	}
	for _, b := range bundles {
		accepted += mutate(b, agreeBundle)
	}
	t.Logf("%d changed inputs accepted by a fast path, each agreeing with the general parser", accepted)
}

func TestParseTimeFast(t *testing.T) {
	cases := []string{
		"2026-11-30T12:00:00.000Z", "2024-02-29T23:59:59.999Z", "2023-02-29T00:00:00.000Z", "2026-04-31T00:00:00.000Z",
		"2026-00-10T00:00:00.000Z", "2026-13-10T00:00:00.000Z", "2026-01-00T00:00:00.000Z", "2026-01-32T00:00:00.000Z",
		"2026-01-01T24:00:00.000Z", "2026-01-01T23:60:00.000Z", "2026-01-01T23:59:60.000Z", "0999-01-01T00:00:00.000Z",
		"1000-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z", "2100-02-29T00:00:00.000Z", "2000-02-29T00:00:00.000Z",
	}
	for d := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() < 2025; d = d.Add(7*time.Hour + 13*time.Minute + 17*time.Second + 123*time.Millisecond) {
		cases = append(cases, attest.FormatTime(d))
	}
	for _, c := range cases {
		if !isTimestamp(c) {
			t.Fatalf("%s is not a timestamp", c)
		}
		fast, ok := parseTimeFast(c)
		slow, err := attest.ParseTime(c)
		if ok && (err != nil || !fast.Equal(slow) || fast.Location() != slow.Location()) {
			t.Errorf("%s: fast %v, ParseTime %v %v", c, fast, slow, err)
		}
		if !ok && err == nil && c[0] != '0' {
			t.Errorf("%s: the fast path declines a valid time", c)
		}
	}
}

func fuzzSeeds(f *testing.F, kind int) {
	envelopes, payloads, bundles := vectorInputs(f)
	for _, in := range [][][]byte{envelopes, payloads, bundles}[kind] {
		f.Add(in)
	}
}

// FuzzFastStatement: decodeProbeFast accepts only what attest.DecodeStatement accepts,
// with the same result.
func FuzzFastStatement(f *testing.F) {
	fuzzSeeds(f, 1)
	f.Fuzz(func(t *testing.T, p []byte) { agreeStatement(t, p) })
}

// FuzzFastEnvelope: parseEnvelopeFast accepts only what attest.ParseEnvelope accepts,
// with the same result.
func FuzzFastEnvelope(f *testing.F) {
	fuzzSeeds(f, 0)
	f.Fuzz(func(t *testing.T, e []byte) { agreeEnvelope(t, e) })
}

// FuzzFastBundle: bundleFast accepts only what attest.ParseBundle accepts, with the same
// result.
func FuzzFastBundle(f *testing.F) {
	fuzzSeeds(f, 2)
	f.Fuzz(func(t *testing.T, b []byte) { agreeBundle(t, b) })
}

// TestRecordLeafHash: the leaf hash VerifyBundle computes is RFC 6962's hash of
// attest.RecordLeaf, inline and in digest form, at the boundary between them.
func TestRecordLeafHash(t *testing.T) {
	for _, n := range []int{1, 2, 1795, 1796, attest.MaxLeafSize - 60, attest.MaxLeafSize - 40, attest.MaxLeafSize - 39, attest.MaxLeafSize - 38, attest.MaxLeafSize, attest.MaxLeafSize + 1, 200000} {
		for _, seq := range []int64{1, 9, 10, 99999, 100000, 1 << 40} {
			for _, kind := range []string{"probe", "keys", "a_long_kind_name_of_thirty_two_c"} {
				env := bytes.Repeat([]byte{'x'}, n)
				leaf, err := attest.RecordLeaf(seq, kind, env)
				if err != nil {
					t.Fatal(err)
				}
				got, err := recordLeafHash(seq, kind, env)
				if err != nil || got != tlog.RecordHash(leaf) {
					t.Errorf("envelope of %d bytes, seq %d, kind %s: %x %v, want %x", n, seq, kind, got, err, tlog.RecordHash(leaf))
				}
			}
		}
	}
	for _, bad := range []struct {
		seq        int64
		kind, body string
	}{{0, "probe", "x"}, {1, "tombstone", "x"}, {1, "Probe", "x"}, {1, "probe", ""}} {
		if _, err := recordLeafHash(bad.seq, bad.kind, []byte(bad.body)); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

func logVectorPolicy(files map[string][]byte) Policy {
	return Policy{Threshold: 1, WitnessKeys: []string{strings.TrimSpace(string(files["witness-1.vkey"])), strings.TrimSpace(string(files["witness-2.vkey"]))}, MinWitnesses: 2}
}

// bundleOutcome returns what VerifyBundle says of a bundle, with the fast paths or with
// the general parsers alone: "ok", a failure's reason, or an error.
func bundleOutcome(doc *keys.Document, policy Policy) func(b []byte, general bool) string {
	return func(b []byte, general bool) string {
		generalOnly = general
		defer func() { generalOnly = false }()
		res, err := VerifyBundle(b, doc, policy)
		switch {
		case err == nil:
			return "ok"
		case res == nil:
			return "error " + err.Error()
		default:
			return string(res.Failure.Reason)
		}
	}
}

func readLogVectors(t testing.TB) map[string][]byte {
	files := map[string][]byte{}
	paths, _ := filepath.Glob("testdata/log/*")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(p)] = b
	}
	return files
}

// FuzzVerifyBundle: VerifyBundle never panics, and says the same of every input with
// its fast paths as with attest's general parsers alone.
func FuzzVerifyBundle(f *testing.F) {
	files := readLogVectors(f)
	doc, err := keys.Parse(files["keys.json"])
	if err != nil {
		f.Fatal(err)
	}
	outcome := bundleOutcome(doc, logVectorPolicy(files))
	for name, b := range files {
		if strings.HasSuffix(name, ".bundle.json") {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if fast, general := outcome(b, false), outcome(b, true); fast != general {
			t.Fatalf("with the fast paths %s, with the general parsers %s", fast, general)
		}
	})
}

// TestVerifyWithAndWithoutFastPaths verifies the log vectors, and single-byte changes of
// one of them, with the fast paths and with attest's general parsers alone: every
// outcome (verified, or the failure's reason) is the same.
func TestVerifyWithAndWithoutFastPaths(t *testing.T) {
	files := readLogVectors(t)
	doc, err := keys.Parse(files["keys.json"])
	if err != nil {
		t.Fatal(err)
	}
	outcome := bundleOutcome(doc, logVectorPolicy(files))
	var inputs [][]byte
	for name, b := range files {
		if strings.HasSuffix(name, ".bundle.json") {
			inputs = append(inputs, b)
		}
	}
	good := files["good_record_with_previous.bundle.json"]
	step := 1
	if testing.Short() {
		step = 7
	}
	for i := 0; i < len(good); i += step {
		for _, c := range []byte{'0', '"', 'A'} {
			if good[i] != c {
				m := bytes.Clone(good)
				m[i] = c
				inputs = append(inputs, m)
			}
		}
	}
	differ := 0
	for _, in := range inputs {
		fast, general := outcome(in, false), outcome(in, true)
		if fast != general {
			differ++
			if differ < 5 {
				t.Errorf("with the fast paths %s, with the general parsers %s:\n%s", fast, general, in)
			}
		}
	}
	if differ > 0 {
		t.Errorf("%d of %d inputs verify differently with the fast paths", differ, len(inputs))
	}
}

// TestCheckpointsVerifiedOnce: bundles naming the same checkpoints cost one verification
// per distinct checkpoint note and key set, not one per bundle.
func TestCheckpointsVerifiedOnce(t *testing.T) {
	files := readLogVectors(t)
	doc, err := keys.Parse(files["keys.json"])
	if err != nil {
		t.Fatal(err)
	}
	policy := logVectorPolicy(files)
	// The witness keys in another order are a key set of their own, with memos of its
	// own (empty on a first run).
	policy.WitnessKeys[0], policy.WitnessKeys[1] = policy.WitnessKeys[1], policy.WitnessKeys[0]
	good := [][]byte{files["good_record_with_previous.bundle.json"], files["good_first_after_previous.bundle.json"]}
	before := checkpointOpens.Load()
	for range 500 {
		for _, b := range good {
			if _, err := VerifyBundle(b, doc, policy); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The two bundles name three checkpoints (sizes 1, 4 and 6) between them.
	n := checkpointOpens.Load() - before
	t.Logf("1,000 bundles, %d checkpoint notes verified", n)
	if n > 3 {
		t.Errorf("1,000 bundles naming 3 checkpoints verified %d checkpoint notes", n)
	}
}
