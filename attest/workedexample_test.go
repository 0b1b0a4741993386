package attest

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

// The worked example of doc.go. TestWorkedExample rebuilds every value from the key seed
// and the tools/list document and checks both the values and that doc.go shows them
// verbatim, so the specification cannot drift from the code.

const exampleToolsList = `{"tools":[{"name":"echo","description":"Echoes the input.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}]}`

func exampleStatement(fp Fingerprints) *Statement {
	url := "https://mcp.example.com/mcp"
	return &Statement{
		Type:          StatementType,
		Subject:       []Subject{{Name: url, Digest: DigestSet{"sha256": strings.TrimPrefix(fp.Surface, "sha256:")}}},
		PredicateType: ProbePredicateType,
		Predicate: &ProbePredicate{
			Probe:           ProbeInfo{ToolVersion: "0.1.0", SuiteVersion: "2026.11", SuiteDigest: Digest([]byte("example suite"))},
			Target:          Target{Kind: "remote", URL: url},
			ObservedAt:      "2026-11-30T12:00:00.000Z",
			RoundID:         "r-example-1",
			Coverage:        CoverageFull,
			ProtocolVersion: "2025-11-25",
			ServerInfo:      &ServerInfo{Name: "example", Version: "1.0.0"},
			Fingerprints:    &fp,
			ToolCount:       1,
			Pages:           1,
			Checks: []CheckResult{
				{ID: "reachability", Status: StatusVerified},
				{ID: "auth_metadata", Status: StatusUnverified, Reason: &CheckReason{Key: "no_challenge"}},
			},
			Timings: Timings{HandshakeMs: 120, ToolsListMs: 80, TotalMs: 260},
		},
	}
}

type workedExample struct {
	spki, keyID       string
	fp                Fingerprints
	payload, pae, sig string
	envelope          string
}

func buildWorkedExample(t *testing.T) workedExample {
	t.Helper()
	signer := newTestSigner(exampleSeed())
	der, err := x509.MarshalPKIXPublicKey(signer.priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	tools, ins, err := ParseToolsDocument([]byte(exampleToolsList))
	if err != nil {
		t.Fatal(err)
	}
	fp, err := ComputeFingerprints(tools, ins)
	if err != nil {
		t.Fatal(err)
	}
	env, payload, err := Sign(context.Background(), exampleStatement(fp), signer)
	if err != nil {
		t.Fatal(err)
	}
	encoded, err := EncodeEnvelope(env)
	if err != nil {
		t.Fatal(err)
	}
	sig, _ := base64.StdEncoding.DecodeString(env.Signatures[0].Sig)
	if !ed25519.Verify(signer.priv.Public().(ed25519.PublicKey), PAE(payload), sig) {
		t.Fatal("example signature does not verify")
	}
	pae := PAE(payload)
	return workedExample{
		spki:     base64.StdEncoding.EncodeToString(der),
		keyID:    signer.id,
		fp:       fp,
		payload:  string(payload),
		pae:      string(pae[:len(pae)-len(payload)]),
		sig:      env.Signatures[0].Sig,
		envelope: string(encoded),
	}
}

func TestWorkedExample(t *testing.T) {
	ex := buildWorkedExample(t)
	if os.Getenv("PROBITY_PRINT_EXAMPLE") != "" {
		t.Logf("spki %s\nkeyid %s\nfp %+v\npayload %s\npae %q\nsig %s\nenvelope %s", ex.spki, ex.keyID, ex.fp, ex.payload, ex.pae, ex.sig, ex.envelope)
	}
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	// doc.go wraps long values over comment lines; join them back.
	text := strings.ReplaceAll(string(doc), "\n//\t", "")
	for name, want := range map[string]string{
		"seed":                "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
		"SPKI":                ex.spki,
		"key id":              ex.keyID,
		"toolset fingerprint": ex.fp.Toolset,
		"schema fingerprint":  ex.fp.Schema,
		"surface fingerprint": ex.fp.Surface,
		"instructions":        ex.fp.Instructions,
		"payload":             ex.payload,
		"PAE prefix":          strings.TrimSuffix(ex.pae, " "),
		"signature":           ex.sig,
		"envelope":            ex.envelope,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("doc.go does not show the worked example's %s %s", name, want)
		}
	}
	if hex.EncodeToString(exampleSeed()) != "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f" {
		t.Error("example seed changed")
	}
}
