package attest

import (
	"errors"
	"strings"
	"testing"
)

const goodBundle = `{"bundle":"probity.dev/log-bundle/v1","logIndex":5,"kind":"probe","envelope":{"payloadType":"x", "payload":"", "signatures":[]},"inclusionProof":["AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="],"checkpoint":"o\n6\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n— o sig\n"}`

func TestParseBundle(t *testing.T) {
	b, err := ParseBundle([]byte(goodBundle))
	if err != nil {
		t.Fatal(err)
	}
	if b.LogIndex != 5 || b.Kind != "probe" || string(b.Envelope) != `{"payloadType":"x","payload":"","signatures":[]}` || len(b.InclusionProof) != 1 {
		t.Fatalf("%+v", b)
	}
	again, err := b.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseBundle(again); err != nil {
		t.Fatalf("Marshal's output does not parse: %v", err)
	}
}

// TestParseBundleStrict: the member names are exactly the format's (encoding/json
// would match "LogIndex" or "KIND" to them), and the envelope is a JSON object.
func TestParseBundleStrict(t *testing.T) {
	for name, change := range map[string][2]string{
		"member name in another case": {`"logIndex"`, `"LogIndex"`},
		"kind in upper case":          {`"kind"`, `"KIND"`},
		"envelope a string":           {`"envelope":{"payloadType":"x", "payload":"", "signatures":[]}`, `"envelope":"{}"`},
		"envelope null":               {`"envelope":{"payloadType":"x", "payload":"", "signatures":[]}`, `"envelope":null`},
		"envelope an array":           {`"envelope":{"payloadType":"x", "payload":"", "signatures":[]}`, `"envelope":[1]`},
		"unknown member":              {`"kind"`, `"kind2":1,"kind"`},
		"duplicate member":            {`"kind":"probe"`, `"kind":"probe","kind":"probe"`},
		"bundle missing":              {`"bundle":"probity.dev/log-bundle/v1",`, ``},
	} {
		t.Run(name, func(t *testing.T) {
			data := strings.Replace(goodBundle, change[0], change[1], 1)
			if data == goodBundle {
				t.Fatal("the change did not apply")
			}
			_, err := ParseBundle([]byte(data))
			var be *BundleError
			if !errors.As(err, &be) {
				t.Fatalf("ParseBundle(%s): %v, want a *BundleError", data, err)
			}
		})
	}
}
