package verifier_test

import (
	"errors"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/verifier"
)

// TestBundleKindMatchesStatement: a bundle's kind (its leaf's) must be its statement's.
// Otherwise a log could file a back-dated probe record under kind keys, which the
// backdating bound exempts, and have it verify.
func TestBundleKindMatchesStatement(t *testing.T) {
	f := newLogFixture(t)
	early := sign(fullStatement(attest.FormatTime(f.t0.Add(-2*time.Hour))), f.vk.active)
	f.log.addRecord(t, "keys", early) // index 5
	c := f.log.checkpoint(t, 6, f.w1.cosignAt(f.t0.Add(10*time.Minute)), f.w2.cosignAt(f.t0.Add(10*time.Minute)))
	prevB := &prevCheckpoint{note: f.b, size: 5}
	_, err := verifier.VerifyBundle(f.log.bundle(t, 5, 6, c, prevB), f.vk.doc, f.policy)
	if reasonOf(err) != verifier.ReasonMalformedBundle {
		t.Errorf("a probe record logged as kind keys: want %s, got %v", verifier.ReasonMalformedBundle, err)
	}
	// Any other kind than the statement's fails too, and the right one verifies.
	g := newLogFixture(t)
	g.log.addRecord(t, "change", g.envs[0])
	g.log.addRecord(t, "probe", g.envs[1])
	c = g.log.checkpoint(t, 7, g.w1.cosignAt(g.t0.Add(10*time.Minute)), g.w2.cosignAt(g.t0.Add(10*time.Minute)))
	if _, err := verifier.VerifyBundle(g.log.bundle(t, 5, 7, c, nil), g.vk.doc, g.policy); reasonOf(err) != verifier.ReasonMalformedBundle {
		t.Errorf("a probe record logged as kind change: want %s, got %v", verifier.ReasonMalformedBundle, err)
	}
	if _, err := verifier.VerifyBundle(g.log.bundle(t, 6, 7, c, nil), g.vk.doc, g.policy); err != nil {
		t.Errorf("a probe record logged as kind probe: %v", err)
	}
}

// TestWitnessKeyListedUnderTwoNames: a cosignature/v1 signature does not cover the
// witness's name, so one key listed under two names would let one witness count twice
// towards MinWitnesses. Such a policy is refused.
func TestWitnessKeyListedUnderTwoNames(t *testing.T) {
	f := newLogFixture(t)
	alias := newTestWitness("witness.test/alias", "w1") // w1's key under another name
	if !alias.pub().Equal(f.w1.pub()) {
		t.Fatal("alias has another key")
	}
	c := f.log.checkpoint(t, 5, f.w1.cosignAt(f.t0.Add(5*time.Minute)), alias.cosignAt(f.t0.Add(5*time.Minute)))
	p := verifier.Policy{Threshold: 1, LogKey: f.log.vkey, WitnessKeys: []string{f.w1.vkey(), alias.vkey()}, MinWitnesses: 2}
	if err := p.Validate(); !errors.Is(err, verifier.ErrPolicy) {
		t.Errorf("one witness key under two names: Validate says %v", err)
	}
	if res, err := verifier.VerifyBundle(f.log.bundle(t, 3, 5, c, f.prevA), f.vk.doc, p); err == nil {
		t.Errorf("one witness counted twice: verified, %d cosignatures", len(res.Log.Cosignatures))
	}
	if _, err := verifier.OpenCheckpoint([]byte(c), f.log.vkey, p.WitnessKeys); !errors.Is(err, verifier.ErrPolicy) {
		t.Errorf("OpenCheckpoint: %v", err)
	}
}

// TestCheckpointResultsAreCopies: what OpenCheckpoint and CheckConsistency return is
// the caller's to change; the memo of verified checkpoints behind them is not.
func TestCheckpointResultsAreCopies(t *testing.T) {
	f := newLogFixture(t)
	p := f.policy
	vc, err := verifier.OpenCheckpoint([]byte(f.b), f.log.vkey, p.WitnessKeys)
	if err != nil || len(vc.Cosignatures) != 2 {
		t.Fatalf("%+v %v", vc, err)
	}
	vc.Cosignatures[0].Time = f.t0.Add(-48 * time.Hour)
	vc.Cosignatures[0].Witness = "forged"
	vc.Size = 1
	again, err := verifier.OpenCheckpoint([]byte(f.b), f.log.vkey, p.WitnessKeys)
	if err != nil || again.Size != 5 || again.Cosignatures[0].Witness != f.w1.name || !again.Cosignatures[0].Time.Equal(f.t0.Add(5*time.Minute)) {
		t.Errorf("a caller's change to one result shows in the next: %+v %v", again, err)
	}
	c, err := verifier.CheckConsistency([]byte(f.a), []byte(f.b), f.log.consistency(t, 5, 3), nil, p)
	if err != nil {
		t.Fatal(err)
	}
	c.Newer.Cosignatures[0].Witness = "forged"
	if again, _ := verifier.OpenCheckpoint([]byte(f.b), f.log.vkey, p.WitnessKeys); again.Cosignatures[0].Witness != f.w1.name {
		t.Errorf("a change to CheckConsistency's result shows in OpenCheckpoint's")
	}
	res, err := verifier.VerifyBundle(f.bundle3, f.vk.doc, p)
	if err != nil {
		t.Fatal(err)
	}
	res.Log.Cosignatures[0].Witness = "forged"
	if again, _ := verifier.OpenCheckpoint([]byte(f.b), f.log.vkey, p.WitnessKeys); again.Cosignatures[0].Witness != f.w1.name {
		t.Errorf("a change to VerifyBundle's result shows in OpenCheckpoint's")
	}
}

// TestCheckpointFailuresAreCopies: a failed checkpoint's Failure, remembered, is copied
// into each result.
func TestCheckpointFailuresAreCopies(t *testing.T) {
	f := newLogFixture(t)
	other := newTestLog(t, testOrigin, "impostor")
	bad := editBundle(t, f.bundle3, func(b *attest.Bundle) { b.Checkpoint = signNote(t, f.log.body(t, 5), other.signer) })
	res, err := verifier.VerifyBundle(bad, f.vk.doc, f.policy)
	if reasonOf(err) != verifier.ReasonCheckpointSignature {
		t.Fatal(err)
	}
	res.Failure.Reason = "ok"
	res.Failure.Detail = "edited"
	if _, err := verifier.VerifyBundle(bad, f.vk.doc, f.policy); reasonOf(err) != verifier.ReasonCheckpointSignature {
		t.Errorf("a caller's change to a failure shows in the next: %v", err)
	}
}
