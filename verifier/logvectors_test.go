package verifier_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/verifier"
)

// The log vectors, in testdata/log: bundles of one test log, named as the envelope
// vectors are (good_<case>.bundle.json verifies, bad_<reason>__<case>.bundle.json fails
// with that reason) under logVectorPolicy, plus the files an auditor uses from the
// command line: the log's and witnesses' verifier keys, a key document (format 2) that
// names the log, checkpoints and a consistency proof. TestLogVectorsUpToDate regenerates
// them (-update rewrites them); everything is deterministic, from fixed seeds and times.
//
// The log:
//
//	index 0      a record by the key revoked on 2026-10-01, observed 2026-09-15
//	checkpoint 1 cosigned by both witnesses on 2026-09-15 at 00:10
//	index 1-5    probe records observed at T0 = 2026-11-30 12:00 plus 0 to 4 minutes
//	checkpoint 4 cosigned at T0+3m by both
//	checkpoint 6 cosigned at T0+5m and T0+6m
//	index 6, 7   records claiming T0-2h (back-dated) and T0+70m (post-dated)
//	checkpoint 8 cosigned at T0+10m by both
//	index 8      a record by the revoked key, observed 2026-09-20, logged late
//	checkpoint 9 cosigned at T0+20m by both
const logVectorDir = "testdata/log"

func logVectorPolicy(files map[string][]byte) verifier.Policy {
	return verifier.Policy{Threshold: 1, LogKey: strings.TrimSpace(string(files["log.vkey"])),
		WitnessKeys:  []string{strings.TrimSpace(string(files["witness-1.vkey"])), strings.TrimSpace(string(files["witness-2.vkey"]))},
		MinWitnesses: 2}
}

func generateLogVectors(t testing.TB) map[string][]byte {
	vk := newVectorKeys()
	l := newTestLog(t, testOrigin, "vectors")
	w1, w2 := newTestWitness("witness.test/w1", "w1"), newTestWitness("witness.test/w2", "w2")
	t0 := mustTime(inWindow)
	both := func(at time.Time) []note.Signer { return []note.Signer{w1.cosignAt(at), w2.cosignAt(at)} }

	l.addRecord(t, "probe", sign(fullStatement("2026-09-15T00:00:00.000Z"), vk.revoked))
	c1 := l.checkpoint(t, 1, both(mustTime("2026-09-15T00:10:00.000Z"))...)
	for i := range 5 {
		l.addRecord(t, "probe", sign(fullStatement(attest.FormatTime(t0.Add(time.Duration(i)*time.Minute))), vk.active))
	}
	c4 := l.checkpoint(t, 4, both(t0.Add(3*time.Minute))...)
	c6 := l.checkpoint(t, 6, w1.cosignAt(t0.Add(5*time.Minute)), w2.cosignAt(t0.Add(6*time.Minute)))
	l.addRecord(t, "probe", sign(fullStatement(attest.FormatTime(t0.Add(-2*time.Hour))), vk.active))
	l.addRecord(t, "probe", sign(fullStatement(attest.FormatTime(t0.Add(70*time.Minute))), vk.active))
	c8 := l.checkpoint(t, 8, both(t0.Add(10*time.Minute))...)
	l.addRecord(t, "probe", sign(fullStatement("2026-09-20T00:00:00.000Z"), vk.revoked))
	c9 := l.checkpoint(t, 9, both(t0.Add(20*time.Minute))...)

	fork := newTestLog(t, testOrigin, "vectors")
	for i := range 6 {
		fork.addRecord(t, "probe", sign(fullStatement(attest.FormatTime(t0.Add(time.Duration(i)*time.Second))), vk.active))
	}
	fork4 := fork.checkpoint(t, 4, both(t0.Add(3*time.Minute))...)
	fork6 := fork.checkpoint(t, 6, both(t0.Add(6*time.Minute))...)

	p1, p4, p6 := &prevCheckpoint{c1, 1}, &prevCheckpoint{c4, 4}, &prevCheckpoint{c6, 6}
	good4 := l.bundle(t, 4, 6, c6, p4)
	files := map[string][]byte{
		"good_record_with_previous.bundle.json":                    good4,
		"good_first_after_previous.bundle.json":                    l.bundle(t, 1, 4, c4, p1),
		"good_revoked_key_witnessed_before_revocation.bundle.json": l.bundle(t, 0, 1, c1, nil),

		"bad_malformed_bundle__previous_holds_the_record.bundle.json": editBundle(t, l.bundle(t, 2, 6, c6, nil), func(b *attest.Bundle) {
			b.PreviousCheckpoint, b.ConsistencyProof = c4, l.consistency(t, 6, 4)
		}),
		"bad_inclusion_mismatch__another_index.bundle.json": editBundle(t, good4, func(b *attest.Bundle) { b.LogIndex = 3 }),
		"bad_inclusion_mismatch__unlogged_envelope.bundle.json": editBundle(t, good4, func(b *attest.Bundle) {
			b.Envelope = sign(fullStatement(attest.FormatTime(t0.Add(3*time.Minute+time.Second))), vk.active)
		}),
		"bad_unknown_key__unlisted_signer.bundle.json": editBundle(t, good4, func(b *attest.Bundle) {
			b.Envelope = sign(fullStatement(attest.FormatTime(t0.Add(3*time.Minute))), vk.unlisted)
		}),
		"bad_bad_checkpoint_signature__altered_size.bundle.json": editBundle(t, good4, func(b *attest.Bundle) {
			b.Checkpoint = strings.Replace(b.Checkpoint, "\n6\n", "\n7\n", 1)
		}),
		"bad_wrong_origin__origin_line.bundle.json": editBundle(t, good4, func(b *attest.Bundle) {
			b.Checkpoint = signNote(t, strings.Replace(l.body(t, 6), testOrigin, "evil.test/log", 1), l.signer)
		}),
		"bad_too_few_witnesses__one_of_two.bundle.json": editBundle(t, good4, func(b *attest.Bundle) {
			b.Checkpoint = l.checkpoint(t, 6, w1.cosignAt(t0.Add(5*time.Minute)))
		}),
		"bad_bad_cosignature__altered_timestamp.bundle.json": editBundle(t, good4, func(b *attest.Bundle) {
			b.Checkpoint = l.checkpoint(t, 6, w1.cosignAt(t0.Add(5*time.Minute)), &lyingWitness{w2.cosignAt(t0.Add(6 * time.Minute)).(*testWitness), t0.Add(-time.Hour)})
		}),
		"bad_inconsistent_checkpoints__forked_previous.bundle.json": editBundle(t, good4, func(b *attest.Bundle) { b.PreviousCheckpoint = fork4 }),
		"bad_backdated__two_hours_before_previous.bundle.json":      l.bundle(t, 6, 8, c8, p6),
		"bad_postdated__after_witnessed.bundle.json":                l.bundle(t, 7, 8, c8, p6),
		"bad_logged_after_revocation__witnessed_after.bundle.json":  l.bundle(t, 8, 9, c9, nil),

		"log.vkey":              []byte(l.vkey + "\n"),
		"witness-1.vkey":        []byte(w1.vkey() + "\n"),
		"witness-2.vkey":        []byte(w2.vkey() + "\n"),
		"checkpoint-4.txt":      []byte(c4),
		"checkpoint-6.txt":      []byte(c6),
		"checkpoint-6-fork.txt": []byte(fork6),
	}
	var proof bytes.Buffer
	for _, h := range l.consistency(t, 6, 4) {
		proof.WriteString(base64.StdEncoding.EncodeToString(h) + "\n")
	}
	files["proof-4-6.txt"] = proof.Bytes()

	doc := *vk.doc
	doc.FormatVersion, doc.Log = keys.FormatVersion, &keys.Log{Origin: testOrigin, Key: l.vkey}
	docJSON, err := keys.MarshalDocument(&doc)
	if err != nil {
		t.Fatal(err)
	}
	files["keys.json"] = docJSON

	// A JSONL export: the good bundles, one per line, and a bare envelope.
	var names []string
	for name := range files {
		if strings.HasPrefix(name, "good_") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var export bytes.Buffer
	for _, name := range names {
		export.Write(files[name])
		export.WriteByte('\n')
	}
	export.Write(sign(fullStatement(inWindow), vk.active))
	export.WriteByte('\n')
	files["export.jsonl"] = export.Bytes()
	for name, b := range files {
		if strings.HasSuffix(name, ".bundle.json") {
			files[name] = append(b, '\n')
		}
	}
	return files
}

func TestLogVectorsUpToDate(t *testing.T) {
	want := generateLogVectors(t)
	if *update {
		old, _ := filepath.Glob(filepath.Join(logVectorDir, "*"))
		for _, f := range old {
			os.Remove(f)
		}
		os.MkdirAll(logVectorDir, 0o755)
		for name, b := range want {
			if err := os.WriteFile(filepath.Join(logVectorDir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	have, _ := filepath.Glob(filepath.Join(logVectorDir, "*"))
	if len(have) != len(want) {
		t.Errorf("%s has %d files, the generator makes %d; run go test ./verifier -run TestLogVectorsUpToDate -update", logVectorDir, len(have), len(want))
	}
	for name, b := range want {
		got, err := os.ReadFile(filepath.Join(logVectorDir, name))
		if err != nil || !bytes.Equal(got, b) {
			t.Errorf("%s/%s differs from the generator's output; run go test ./verifier -run TestLogVectorsUpToDate -update", logVectorDir, name)
		}
	}
}

func TestLogVectors(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join(logVectorDir, "*"))
	files := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(p)] = b
	}
	policy := logVectorPolicy(files)
	doc, err := keys.Parse(files["keys.json"])
	if err != nil {
		t.Fatal(err)
	}
	var good, bad int
	reasons := map[verifier.FailureReason]bool{}
	for name, data := range files {
		if !strings.HasSuffix(name, ".bundle.json") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			res, err := verifier.VerifyBundle(data, doc, policy)
			if strings.HasPrefix(name, "good_") {
				good++
				if err != nil || res.Log == nil || len(res.Log.Cosignatures) != 2 {
					t.Fatalf("want verified with two witnesses, got %v (%+v)", err, res)
				}
				return
			}
			bad++
			reason, _, ok := strings.Cut(strings.TrimPrefix(name, "bad_"), "__")
			var f *verifier.Failure
			if !ok || !errors.As(err, &f) || string(f.Reason) != reason || res == nil || res.Failure != f {
				t.Fatalf("want failure %s, got %v", reason, err)
			}
			reasons[f.Reason] = true
		})
	}
	for _, r := range []verifier.FailureReason{verifier.ReasonMalformedBundle, verifier.ReasonInclusion, verifier.ReasonCheckpointSignature,
		verifier.ReasonWrongOrigin, verifier.ReasonTooFewWitnesses, verifier.ReasonBadCosignature, verifier.ReasonInconsistent,
		verifier.ReasonBackdated, verifier.ReasonPostdated, verifier.ReasonLoggedAfterRevocation} {
		if !reasons[r] {
			t.Errorf("no log vector fails with %s", r)
		}
	}
	if good < 3 {
		t.Errorf("only %d good log vectors", good)
	}
}
