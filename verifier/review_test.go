package verifier

import (
	"bytes"
	"encoding/base64"
	"testing"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/keys"
)

// TestFastBundleEnvelopeSizeBound: an envelope inside a bundle is held to
// attest.ParseEnvelope's size bound by the fast path too, so an envelope of more than
// 2·MaxPayloadSize (which a bundle of MaxBundleSize has room for) fails the same way
// with the fast paths as without.
func TestFastBundleEnvelopeSizeBound(t *testing.T) {
	files := readLogVectors(t)
	doc, err := keys.Parse(files["keys.json"])
	if err != nil {
		t.Fatal(err)
	}
	b, err := attest.ParseBundle(files["good_record_with_previous.bundle.json"])
	if err != nil {
		t.Fatal(err)
	}
	payload := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{'x'}, 2*attest.MaxPayloadSize/4*3+3000))
	sig := base64.StdEncoding.EncodeToString(make([]byte, 64))
	b.Envelope = []byte(`{"payloadType":"` + attest.PayloadType + `","payload":"` + payload + `","signatures":[{"keyid":"nokey","sig":"` + sig + `"}]}`)
	if len(b.Envelope) <= 2*attest.MaxPayloadSize {
		t.Fatalf("envelope of %d bytes is not over the bound", len(b.Envelope))
	}
	data, err := b.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > attest.MaxBundleSize {
		t.Fatalf("bundle of %d bytes is over MaxBundleSize", len(data))
	}
	outcome := bundleOutcome(doc, logVectorPolicy(files))
	fast, general := outcome(data, false), outcome(data, true)
	if fast != general {
		t.Errorf("with the fast paths %s, with the general parsers %s", fast, general)
	}
	if general != string(ReasonMalformedEnvelope) {
		t.Errorf("general parsers: %s, want %s", general, ReasonMalformedEnvelope)
	}
}

// TestOversizeCheckpointsNotRemembered: a checkpoint longer than any a log writes fails
// without being remembered, by either path, so that a stream of bundles with distinct
// megabyte-long checkpoint strings does not pin gigabytes in the memos (1,024 entries
// each, of up to MaxBundleSize bytes).
func TestOversizeCheckpointsNotRemembered(t *testing.T) {
	files := readLogVectors(t)
	doc, err := keys.Parse(files["keys.json"])
	if err != nil {
		t.Fatal(err)
	}
	policy := logVectorPolicy(files)
	b, err := attest.ParseBundle(files["good_record_with_previous.bundle.json"])
	if err != nil {
		t.Fatal(err)
	}
	b.Checkpoint = string(bytes.Repeat([]byte{'a'}, 4*maxCheckpointSize)) + "\n"
	data, err := b.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	outcome := bundleOutcome(doc, policy)
	for _, general := range []bool{false, true} {
		if got := outcome(data, general); got != string(ReasonMalformedBundle) {
			t.Errorf("general %v: %s, want %s", general, got, ReasonMalformedBundle)
		}
	}
	tk, err := parseTrusted(documentLogKey(doc), policy.WitnessKeys)
	if err != nil {
		t.Fatal(err)
	}
	long := func(name string, m map[string]bool) {
		for k := range m {
			if len(k) > maxCheckpointSize {
				t.Errorf("%s remembers a checkpoint of %d bytes", name, len(k))
			}
		}
	}
	long("validNotes", keysOf(validNotes))
	long("raw", keysOf(&tk.raw))
	long("notes", keysOf(&tk.notes))
}

func keysOf[V any](c *memo[string, V]) map[string]bool {
	out := map[string]bool{}
	if m := c.m.Load(); m != nil {
		for k := range *m {
			out[k] = true
		}
	}
	return out
}
