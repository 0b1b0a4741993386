package verifier_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/note"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/verifier"
)

// logFixture is a log of five probe records observed a minute apart from inWindow, with
// checkpoint A (size 3, cosigned by w1 at T0+3m) and B (size 5, cosigned by w1 at T0+5m
// and w2 at T0+6m), and the bundle of record 3 against B with A as its previous.
type logFixture struct {
	vk       *vectorKeys
	log      *testLog
	w1, w2   *testWitness
	t0       time.Time
	envs     [][]byte
	a, b     string
	bundle3  []byte
	policy   verifier.Policy
	prevA    *prevCheckpoint
	bNoteFor func(cosigners ...note.Signer) string
}

func newLogFixture(t testing.TB) *logFixture {
	f := &logFixture{vk: newVectorKeys(), log: newTestLog(t, testOrigin, "main"), t0: mustTime(inWindow)}
	f.w1, f.w2 = newTestWitness("witness.test/w1", "w1"), newTestWitness("witness.test/w2", "w2")
	for i := range 5 {
		env := sign(fullStatement(attest.FormatTime(f.t0.Add(time.Duration(i)*time.Minute))), f.vk.active)
		f.envs = append(f.envs, env)
		f.log.addRecord(t, "probe", env)
	}
	f.a = f.log.checkpoint(t, 3, f.w1.cosignAt(f.t0.Add(3*time.Minute)))
	f.bNoteFor = func(cosigners ...note.Signer) string { return f.log.checkpoint(t, 5, cosigners...) }
	f.b = f.bNoteFor(f.w1.cosignAt(f.t0.Add(5*time.Minute)), f.w2.cosignAt(f.t0.Add(6*time.Minute)))
	f.prevA = &prevCheckpoint{note: f.a, size: 3}
	f.bundle3 = f.log.bundle(t, 3, 5, f.b, f.prevA)
	f.policy = verifier.Policy{Threshold: 1, LogKey: f.log.vkey, WitnessKeys: []string{f.w1.vkey(), f.w2.vkey()}, MinWitnesses: 2}
	return f
}

// editBundle decodes a bundle, lets fn change it, and encodes it again.
func editBundle(t testing.TB, bundle []byte, fn func(b *attest.Bundle)) []byte {
	b, err := attest.ParseBundle(bundle)
	if err != nil {
		t.Fatal(err)
	}
	fn(b)
	out, err := b.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestVerifyBundle(t *testing.T) {
	f := newLogFixture(t)
	res, err := verifier.VerifyBundle(f.bundle3, f.vk.doc, f.policy)
	if err != nil {
		t.Fatal(err)
	}
	lr := res.Log
	if lr == nil || lr.LogIndex != 3 || lr.CheckpointSize != 5 || lr.Origin != testOrigin || len(lr.Cosignatures) != 2 ||
		lr.Cosignatures[0].Witness != f.w1.name || !lr.WitnessedAt.Equal(f.t0.Add(5*time.Minute)) ||
		lr.PreviousSize == nil || *lr.PreviousSize != 3 || !lr.NotBefore.Equal(f.t0.Add(3*time.Minute)) {
		t.Errorf("log result: %+v", lr)
	}
	if res.PredicateType != attest.ProbePredicateType || !res.ObservedAt.Equal(f.t0.Add(3*time.Minute)) {
		t.Errorf("result: %+v", res)
	}
	if b, err := json.Marshal(res); err != nil || !bytes.Contains(b, []byte(`"logIndex":3`)) || !bytes.Contains(b, []byte(`"witnessedAt"`)) {
		t.Errorf("JSON result: %s %v", b, err)
	}

	// Every record of the log verifies against B, the first without a previous
	// checkpoint, with no witnesses required and with one.
	for i := range int64(5) {
		var prev *prevCheckpoint
		if i >= 3 {
			prev = f.prevA
		}
		for _, p := range []verifier.Policy{{Threshold: 1, LogKey: f.log.vkey}, f.policy} {
			if _, err := verifier.VerifyBundle(f.log.bundle(t, i, 5, f.b, prev), f.vk.doc, p); err != nil {
				t.Errorf("record %d, witnesses %d: %v", i, p.MinWitnesses, err)
			}
		}
	}
	// The log key can come from the key document (format 2) instead of the policy.
	doc2 := *f.vk.doc
	doc2.FormatVersion, doc2.Log = keys.FormatVersion, &keys.Log{Origin: testOrigin, Key: f.log.vkey}
	if err := doc2.Validate(); err != nil {
		t.Fatal(err)
	}
	p := f.policy
	p.LogKey = ""
	if _, err := verifier.VerifyBundle(f.bundle3, &doc2, p); err != nil {
		t.Errorf("log key from the key document: %v", err)
	}
	p.LogKey = newTestLog(t, testOrigin, "impostor").vkey // the policy's key wins
	if _, err := verifier.VerifyBundle(f.bundle3, &doc2, p); reasonOf(err) != verifier.ReasonCheckpointSignature {
		t.Errorf("policy log key over the document's: %v", err)
	}

	// A pretty-printed bundle is the same bundle.
	var pretty bytes.Buffer
	json.Indent(&pretty, f.bundle3, "", "  ")
	if _, err := verifier.VerifyBundle(pretty.Bytes(), f.vk.doc, f.policy); err != nil {
		t.Errorf("pretty-printed: %v", err)
	}
}

// TestVerifyBundleTamper: every way to tamper with a bundle, its log or its witnesses
// fails with its own reason.
func TestVerifyBundleTamper(t *testing.T) {
	f := newLogFixture(t)
	other := newTestLog(t, testOrigin, "impostor") // same name, another key
	w3 := newTestWitness("witness.test/w3", "w3")  // not trusted
	fork := newTestLog(t, testOrigin, "main")      // the log's key, another history
	for i := range 5 {
		fork.addRecord(t, "probe", sign(fullStatement(attest.FormatTime(f.t0.Add(time.Duration(i)*time.Second))), f.vk.active))
	}
	forkA := fork.checkpoint(t, 3, f.w1.cosignAt(f.t0.Add(3*time.Minute)))
	unlogged := sign(fullStatement(attest.FormatTime(f.t0.Add(3*time.Minute+time.Second))), f.vk.active)

	for _, tc := range []struct {
		name   string
		bundle []byte
		policy func(p *verifier.Policy)
		want   verifier.FailureReason
	}{
		{"not JSON", []byte("not json"), nil, verifier.ReasonMalformedBundle},
		{"wrong format", bytes.Replace(f.bundle3, []byte(attest.BundleFormat), []byte("probity.dev/log-bundle/v9"), 1), nil, verifier.ReasonMalformedBundle},
		{"unknown member", bytes.Replace(f.bundle3, []byte(`{"bundle"`), []byte(`{"extra":1,"bundle"`), 1), nil, verifier.ReasonMalformedBundle},
		{"previous without proof", editBundle(t, f.bundle3, func(b *attest.Bundle) { b.ConsistencyProof = nil }), nil, verifier.ReasonMalformedBundle},
		{"previous holds the record", editBundle(t, f.log.bundle(t, 2, 5, f.b, nil), func(b *attest.Bundle) {
			b.PreviousCheckpoint, b.ConsistencyProof = f.a, f.log.consistency(t, 5, 3)
		}), nil, verifier.ReasonMalformedBundle},
		{"envelope tampered", editBundle(t, f.bundle3, func(b *attest.Bundle) {
			b.Envelope = bytes.Replace(b.Envelope, []byte(`"sig":"`), []byte(`"sig":"AA`), 1)
		}), nil, verifier.ReasonMalformedEnvelope},

		{"another index", editBundle(t, f.bundle3, func(b *attest.Bundle) { b.LogIndex = 2 }), nil, verifier.ReasonInclusion},
		{"index past the checkpoint", editBundle(t, f.bundle3, func(b *attest.Bundle) { b.LogIndex = 7 }), nil, verifier.ReasonInclusion},
		{"another kind", editBundle(t, f.bundle3, func(b *attest.Bundle) { b.Kind = "change" }), nil, verifier.ReasonInclusion},
		{"proof hash altered", editBundle(t, f.bundle3, func(b *attest.Bundle) { b.InclusionProof[0][5] ^= 1 }), nil, verifier.ReasonInclusion},
		{"proof hash dropped", editBundle(t, f.bundle3, func(b *attest.Bundle) { b.InclusionProof = b.InclusionProof[1:] }), nil, verifier.ReasonInclusion},
		{"proof hash added", editBundle(t, f.bundle3, func(b *attest.Bundle) { b.InclusionProof = append(b.InclusionProof, b.InclusionProof[0]) }), nil, verifier.ReasonInclusion},
		{"an envelope never logged", editBundle(t, f.bundle3, func(b *attest.Bundle) { b.Envelope = unlogged }), nil, verifier.ReasonInclusion},
		{"another logged envelope", editBundle(t, f.bundle3, func(b *attest.Bundle) { b.Envelope = f.envs[4] }), nil, verifier.ReasonInclusion},

		{"checkpoint size altered", editBundle(t, f.bundle3, func(b *attest.Bundle) { b.Checkpoint = strings.Replace(b.Checkpoint, "\n5\n", "\n6\n", 1) }), nil, verifier.ReasonCheckpointSignature},
		{"checkpoint by another key", editBundle(t, f.bundle3, func(b *attest.Bundle) { b.Checkpoint = signNote(t, f.log.body(t, 5), other.signer) }), nil, verifier.ReasonCheckpointSignature},
		{"checkpoint unsigned by the log", editBundle(t, f.bundle3, func(b *attest.Bundle) { b.Checkpoint = signNote(t, f.log.body(t, 5), f.w1.cosignAt(f.t0)) }), nil, verifier.ReasonCheckpointSignature},
		{"previous checkpoint by another key", editBundle(t, f.bundle3, func(b *attest.Bundle) { b.PreviousCheckpoint = signNote(t, f.log.body(t, 3), other.signer) }), nil, verifier.ReasonCheckpointSignature},
		{"wrong origin", editBundle(t, f.bundle3, func(b *attest.Bundle) {
			b.Checkpoint = signNote(t, strings.Replace(f.log.body(t, 5), testOrigin, "evil.test/log", 1), f.log.signer)
		}), nil, verifier.ReasonWrongOrigin},
		{"log key of another origin", f.bundle3, func(p *verifier.Policy) {
			p.LogKey = newTestLog(t, "elsewhere.test/log", "main").vkey
		}, verifier.ReasonCheckpointSignature},

		{"one witness of two", editBundle(t, f.bundle3, func(b *attest.Bundle) { b.Checkpoint = f.bNoteFor(f.w1.cosignAt(f.t0.Add(5 * time.Minute))) }), nil, verifier.ReasonTooFewWitnesses},
		{"an untrusted witness does not count", editBundle(t, f.bundle3, func(b *attest.Bundle) {
			b.Checkpoint = f.bNoteFor(f.w1.cosignAt(f.t0.Add(5*time.Minute)), w3.cosignAt(f.t0.Add(5*time.Minute)))
		}), nil, verifier.ReasonTooFewWitnesses},
		{"no witness", editBundle(t, f.bundle3, func(b *attest.Bundle) { b.Checkpoint = f.bNoteFor() }), func(p *verifier.Policy) { p.MinWitnesses = 1 }, verifier.ReasonTooFewWitnesses},
		{"cosignature timestamp altered", editBundle(t, f.bundle3, func(b *attest.Bundle) {
			b.Checkpoint = f.bNoteFor(f.w1.cosignAt(f.t0.Add(5*time.Minute)), &lyingWitness{f.w2.cosignAt(f.t0.Add(6 * time.Minute)).(*testWitness), f.t0.Add(-time.Hour)})
		}), nil, verifier.ReasonBadCosignature},
		{"cosignature of another checkpoint", editBundle(t, f.bundle3, func(b *attest.Bundle) {
			cosig := lastLine(f.log.checkpoint(t, 4, f.w2.cosignAt(f.t0)))
			b.Checkpoint = f.bNoteFor(f.w1.cosignAt(f.t0.Add(5*time.Minute))) + cosig
		}), nil, verifier.ReasonBadCosignature},

		{"previous checkpoint of a fork", editBundle(t, f.bundle3, func(b *attest.Bundle) { b.PreviousCheckpoint = forkA }), nil, verifier.ReasonInconsistent},
		{"consistency proof altered", editBundle(t, f.bundle3, func(b *attest.Bundle) { b.ConsistencyProof[0][0] ^= 1 }), nil, verifier.ReasonInconsistent},
		{"consistency proof truncated", editBundle(t, f.bundle3, func(b *attest.Bundle) { b.ConsistencyProof = b.ConsistencyProof[1:] }), nil, verifier.ReasonInconsistent},
		{"consistency proof dropped", editBundle(t, f.bundle3, func(b *attest.Bundle) { b.ConsistencyProof = [][]byte{} }), nil, verifier.ReasonMalformedBundle},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := f.policy
			p.WitnessKeys = append([]string(nil), p.WitnessKeys...)
			if tc.policy != nil {
				tc.policy(&p)
			}
			res, err := verifier.VerifyBundle(tc.bundle, f.vk.doc, p)
			if reasonOf(err) != tc.want || res == nil || res.OK() {
				t.Errorf("want %s, got %v (result %+v)", tc.want, err, res)
			}
		})
	}
}

// lyingWitness cosigns at one time and claims another.
type lyingWitness struct {
	*testWitness
	claim time.Time
}

func (w *lyingWitness) Sign(msg []byte) ([]byte, error) {
	sig, err := w.testWitness.Sign(msg)
	c := *w.testWitness
	c.at = w.claim
	claimed, _ := c.Sign(msg)
	copy(sig[:8], claimed[:8])
	return sig, err
}

func lastLine(noteText string) string {
	lines := strings.SplitAfter(strings.TrimSuffix(noteText, "\n"), "\n")
	return lines[len(lines)-1] + "\n"
}

// TestVerifyBundleTime holds a record's own time to its witnessed checkpoints.
func TestVerifyBundleTime(t *testing.T) {
	f := newLogFixture(t)
	// Record 5 claims a time two hours before B was witnessed, record 6 an hour after C.
	early := sign(fullStatement(attest.FormatTime(f.t0.Add(-2*time.Hour))), f.vk.active)
	late := sign(fullStatement(attest.FormatTime(f.t0.Add(70*time.Minute))), f.vk.active)
	f.log.addRecord(t, "probe", early)
	f.log.addRecord(t, "probe", late)
	c := f.log.checkpoint(t, 7, f.w1.cosignAt(f.t0.Add(10*time.Minute)), f.w2.cosignAt(f.t0.Add(10*time.Minute)))
	prevB := &prevCheckpoint{note: f.b, size: 5}

	_, err := verifier.VerifyBundle(f.log.bundle(t, 5, 7, c, prevB), f.vk.doc, f.policy)
	if reasonOf(err) != verifier.ReasonBackdated {
		t.Errorf("two hours before the previous checkpoint: want %s, got %v", verifier.ReasonBackdated, err)
	}
	wide := f.policy
	wide.MaxBackdate = 3 * time.Hour
	if _, err := verifier.VerifyBundle(f.log.bundle(t, 5, 7, c, prevB), f.vk.doc, wide); err != nil {
		t.Errorf("with a tolerance of 3 h: %v", err)
	}
	// Without the previous checkpoint there is no lower bound.
	if _, err := verifier.VerifyBundle(f.log.bundle(t, 5, 7, c, nil), f.vk.doc, f.policy); err != nil {
		t.Errorf("no previous checkpoint: %v", err)
	}
	// Without trusted witnesses there is no time to hold it to.
	if _, err := verifier.VerifyBundle(f.log.bundle(t, 5, 7, c, prevB), f.vk.doc, verifier.Policy{Threshold: 1, LogKey: f.log.vkey}); err != nil {
		t.Errorf("no witnesses: %v", err)
	}
	_, err = verifier.VerifyBundle(f.log.bundle(t, 6, 7, c, prevB), f.vk.doc, f.policy)
	if reasonOf(err) != verifier.ReasonPostdated {
		t.Errorf("after its checkpoint was witnessed: want %s, got %v", verifier.ReasonPostdated, err)
	}
	// Cosignature timestamps are whole seconds: a record in the witnessed second passes.
	d := newTestLog(t, testOrigin, "main")
	env := sign(fullStatement("2026-11-30T12:00:00.900Z"), f.vk.active)
	d.addRecord(t, "probe", env)
	cp := d.checkpoint(t, 1, f.w1.cosignAt(f.t0), f.w2.cosignAt(f.t0))
	if _, err := verifier.VerifyBundle(d.bundle(t, 0, 1, cp, nil), f.vk.doc, f.policy); err != nil {
		t.Errorf("record in the witnessed second: %v", err)
	}
}

// TestVerifyBundleRevocation: a key revoked at R vouches for a record witnessed before
// R, and for no other.
func TestVerifyBundleRevocation(t *testing.T) {
	vk := newVectorKeys()
	revokedAt := mustTime("2026-10-01T00:00:00.000Z")
	w := newTestWitness("witness.test/w1", "w1")
	l := newTestLog(t, testOrigin, "main")
	env := sign(fullStatement("2026-09-15T00:00:00.000Z"), vk.revoked)
	l.addRecord(t, "probe", env)
	policy := verifier.Policy{Threshold: 1, LogKey: l.vkey, WitnessKeys: []string{w.vkey()}}
	for _, tc := range []struct {
		name       string
		witnessed  time.Time
		policy     verifier.Policy
		want       verifier.FailureReason
		sigOutcome verifier.SignatureOutcome
	}{
		{"witnessed before revocation", mustTime("2026-09-15T00:10:00.000Z"), policy, "", verifier.OutcomeValid},
		{"witnessed a second before", revokedAt.Add(-time.Second), policy, "", verifier.OutcomeValid},
		{"witnessed at revocation", revokedAt, policy, verifier.ReasonLoggedAfterRevocation, verifier.SignatureOutcome(verifier.ReasonLoggedAfterRevocation)},
		{"witnessed after revocation", mustTime("2026-10-02T00:00:00.000Z"), policy, verifier.ReasonLoggedAfterRevocation, verifier.SignatureOutcome(verifier.ReasonLoggedAfterRevocation)},
		{"no trusted witness", mustTime("2026-09-15T00:10:00.000Z"), verifier.Policy{Threshold: 1, LogKey: l.vkey}, verifier.ReasonRevokedKey, verifier.SignatureOutcome(verifier.ReasonRevokedKey)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := l.bundle(t, 0, 1, l.checkpoint(t, 1, w.cosignAt(tc.witnessed)), nil)
			res, err := verifier.VerifyBundle(b, vk.doc, tc.policy)
			if reasonOf(err) != tc.want || res == nil || len(res.Signatures) != 1 || res.Signatures[0].Outcome != tc.sigOutcome {
				t.Errorf("want %q, got %v (%+v)", tc.want, err, res)
			}
		})
	}
	// The bare envelope stays invalid, as before the log.
	if _, err := verifier.Verify(env, vk.doc, verifier.DefaultPolicy()); reasonOf(err) != verifier.ReasonRevokedKey {
		t.Errorf("bare envelope: %v", err)
	}
}

func TestRequireLog(t *testing.T) {
	f := newLogFixture(t)
	p := f.policy
	p.RequireLog = true
	if _, err := verifier.Verify(f.envs[3], f.vk.doc, p); reasonOf(err) != verifier.ReasonPolicy {
		t.Errorf("bare envelope under RequireLog: %v", err)
	}
	if _, err := verifier.VerifyBundle(f.bundle3, f.vk.doc, p); err != nil {
		t.Errorf("bundle under RequireLog: %v", err)
	}
}

func TestBundlePolicy(t *testing.T) {
	f := newLogFixture(t)
	w := f.w1.vkey()
	for _, p := range []verifier.Policy{
		{Threshold: 1},                    // no log key anywhere
		{Threshold: 1, LogKey: "garbage"}, // log key does not parse
		{Threshold: 1, LogKey: f.log.vkey, WitnessKeys: []string{w}, MinWitnesses: 2},
		{Threshold: 1, LogKey: f.log.vkey, WitnessKeys: []string{w, w}, MinWitnesses: 1},
		{Threshold: 1, LogKey: f.log.vkey, WitnessKeys: []string{f.log.vkey}}, // a log key (type 0x01) as witness
		{Threshold: 1, LogKey: f.log.vkey, MinWitnesses: -1},
		{Threshold: 1, LogKey: f.log.vkey, MaxBackdate: -time.Second},
	} {
		if _, err := verifier.VerifyBundle(f.bundle3, f.vk.doc, p); !errors.Is(err, verifier.ErrPolicy) {
			t.Errorf("policy %+v: want ErrPolicy, got %v", p, err)
		}
	}
}

func TestCheckConsistency(t *testing.T) {
	f := newLogFixture(t)
	fork := newTestLog(t, testOrigin, "main")
	for i := range 5 {
		fork.addRecord(t, "probe", sign(fullStatement(attest.FormatTime(f.t0.Add(time.Duration(i)*time.Second))), f.vk.active))
	}
	forkB := fork.checkpoint(t, 5)
	proof := f.log.consistency(t, 5, 3)
	altered := f.log.consistency(t, 5, 3)
	altered[len(altered)-1][0] ^= 1
	c, err := verifier.CheckConsistency([]byte(f.a), []byte(f.b), proof, nil, f.policy)
	if err != nil || c.Saved.Size != 3 || c.Newer.Size != 5 || len(c.Newer.Cosignatures) != 2 {
		t.Fatalf("A to B: %+v %v", c, err)
	}
	if _, err := verifier.CheckConsistency([]byte(f.b), []byte(f.b), nil, nil, f.policy); err != nil {
		t.Errorf("B to B: %v", err)
	}
	for _, tc := range []struct {
		name         string
		saved, newer string
		proof        [][]byte
		want         verifier.FailureReason
		minWitnesses int
	}{
		{"fork of the same size", f.b, forkB, nil, verifier.ReasonInconsistent, 0},
		{"fork extends nothing saved", f.a, forkB, fork.consistency(t, 5, 3), verifier.ReasonInconsistent, 0},
		{"shrunk", f.b, f.a, proof, verifier.ReasonInconsistent, 0},
		{"proof altered", f.a, f.b, altered, verifier.ReasonInconsistent, 0},
		{"proof truncated", f.a, f.b, proof[1:], verifier.ReasonInconsistent, 0},
		{"newer by another key", f.a, signNote(t, f.log.body(t, 5), newTestLog(t, testOrigin, "x").signer), proof, verifier.ReasonCheckpointSignature, 0},
		{"newer not witnessed", f.a, f.log.checkpoint(t, 5), proof, verifier.ReasonTooFewWitnesses, 1},
	} {
		p := f.policy
		p.MinWitnesses = tc.minWitnesses
		if _, err := verifier.CheckConsistency([]byte(tc.saved), []byte(tc.newer), tc.proof, nil, p); reasonOf(err) != tc.want {
			t.Errorf("%s: want %s, got %v", tc.name, tc.want, err)
		}
	}
}

// TestCosignatureInterop checks the cosignature/v1 verifier against torchwood's signer
// (the one litewitness uses), and torchwood's verifier against the tests' signer.
func TestCosignatureInterop(t *testing.T) {
	seed := sha256.Sum256([]byte("interop witness"))
	priv := ed25519.NewKeyFromSeed(seed[:])
	ts, err := torchwood.NewCosignatureSigner("witness.test/tw", priv)
	if err != nil {
		t.Fatal(err)
	}
	l := newTestLog(t, testOrigin, "main")
	l.addLeaf(t, []byte("leaf"))
	cp := l.checkpoint(t, 1, ts)
	vkey := ts.Verifier().String()
	v, err := verifier.NewCosignatureVerifier(vkey)
	if err != nil {
		t.Fatalf("torchwood's vkey %q: %v", vkey, err)
	}
	before := time.Now().Add(-time.Minute)
	vc, err := verifier.OpenCheckpoint([]byte(cp), l.vkey, []string{vkey})
	if err != nil || len(vc.Cosignatures) != 1 || vc.Cosignatures[0].Witness != v.Name() || vc.Cosignatures[0].Time.Before(before) {
		t.Fatalf("torchwood cosignature: %+v %v", vc, err)
	}

	w := newTestWitness("witness.test/w1", "w1")
	at := time.Unix(1700000000, 0)
	tw, err := torchwood.NewCosignatureSigner(w.name, w.priv)
	if err != nil {
		t.Fatal(err)
	}
	if tw.Verifier().String() != w.vkey() {
		t.Errorf("vkeys differ: torchwood %s, tests %s", tw.Verifier().String(), w.vkey())
	}
	n, err := note.Open([]byte(l.checkpoint(t, 1, w.cosignAt(at))), note.VerifierList(tw.Verifier()))
	if err != nil || len(n.Sigs) != 1 {
		t.Fatalf("torchwood does not verify the tests' cosignature: %v", err)
	}
	if tt, err := torchwood.CosignatureTimestamp(n.Sigs[0]); err != nil || tt != at.Unix() {
		t.Errorf("timestamp %d %v", tt, err)
	}
	if got, err := verifier.CosignatureTime(n.Sigs[0]); err != nil || !got.Equal(at) {
		t.Errorf("CosignatureTime %v %v", got, err)
	}
}

// TestParseCheckpoint holds the parser to C2SP tlog-checkpoint's note text rules.
func TestParseCheckpoint(t *testing.T) {
	const h = "CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I="
	good := []string{"example.com/behind-the-sofa\n20852163\n" + h + "\n", "o\n0\n" + h + "\next one\next two\n"}
	for _, s := range good {
		if _, err := verifier.ParseCheckpoint(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	bad := []string{
		"", "o\n1\n" + h, "o\n1\n", "\n1\n" + h + "\n", "o\n01\n" + h + "\n", "o\n-1\n" + h + "\n", "o\n1\n" + h[:40] + "\n",
		"o\n1\n" + strings.TrimSuffix(h, "=") + "\n", "o\n1\n" + h + "\n\n", "o\n+1\n" + h + "\n",
	}
	for _, s := range bad {
		if _, err := verifier.ParseCheckpoint(s); err == nil {
			t.Errorf("%q parsed", s)
		}
	}
}

// TestCheckTimeBounds: the one rule for a logged record's time, at a cosignature's
// precision, with key document versions exempt from the backdating bound.
func TestCheckTimeBounds(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	witnessed, before := at("2026-12-01T12:00:00Z"), at("2026-12-01T11:00:00Z")
	for _, c := range []struct {
		kind, recorded string
		want           verifier.FailureReason
	}{
		{"probe", "2026-12-01T12:00:00.999Z", ""}, // the cosignature's second
		{"probe", "2026-12-01T12:00:01Z", verifier.ReasonPostdated},
		{"probe", "2026-12-01T10:00:00Z", ""}, // exactly the hour before
		{"probe", "2026-12-01T09:59:59.999Z", verifier.ReasonBackdated},
		{"keys", "2026-11-01T00:00:00Z", ""}, // a version logged late
		{"keys", "2026-12-01T12:00:01Z", verifier.ReasonPostdated},
	} {
		f := verifier.CheckTimeBounds(c.kind, at(c.recorded), witnessed, before, time.Hour)
		var got verifier.FailureReason
		if f != nil {
			got = f.Reason
		}
		if got != c.want {
			t.Errorf("%s at %s: %q, want %q", c.kind, c.recorded, got, c.want)
		}
	}
	if f := verifier.CheckTimeBounds("probe", at("2020-01-01T00:00:00Z"), time.Time{}, time.Time{}, time.Hour); f != nil {
		t.Errorf("no witnessed time: %v", f)
	}
}
